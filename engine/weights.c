/* weights.c - see weights.h. */
#include "config.h"
#include "weights.h"
#include "check.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void put_u32(FILE *f, uint32_t v) { fwrite(&v, 4, 1, f); }
static void put_u64(FILE *f, uint64_t v) { fwrite(&v, 8, 1, f); }

int weights_open(wfile *w, const char *path, char *err, size_t n)
{
    memset(w, 0, sizeof *w);
    if (out_open(&w->out, path, err, n))
        return -1;
    w->f = w->out.f;
    /* the count is patched at the end: in place (a device, a FIFO) the
     * file must be seekable */
    if (!w->out.tmp && fseek(w->f, 0, SEEK_SET) != 0) {
        snprintf(err, n, "'%s' is not seekable (a pipe?): a weights file is completed at its start when it ends", path);
        out_abandon(&w->out);
        w->f = NULL;
        return -1;
    }
    fwrite("MXWT", 1, 4, w->f);
    put_u32(w->f, 1);
    put_u32(w->f, 0); /* count, patched at close */
    return 0;
}

static void put_header(wfile *w, const char *name, int dtype, int ndim, const int64_t *shape)
{
    put_u32(w->f, strlen(name));
    fwrite(name, 1, strlen(name), w->f);
    put_u32(w->f, dtype);
    put_u32(w->f, ndim);
    for (int i = 0; i < ndim; i++)
        put_u64(w->f, shape[i]);
    w->count++;
}

void weights_put_raw(wfile *w, const char *name, int ndim, const int64_t *shape, const float *data)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    put_header(w, name, 0, ndim, shape);
    fwrite(data, 4, n, w->f);
}

void weights_put(wfile *w, const graph *g, int ti, const char *name)
{
    const tensor *t = &g->t[ti];
    int64_t n = graph_numel(t);
    put_header(w, name ? name : t->name, t->dtype == DT_I32, t->ndim, t->shape);
    if (t->ndim == 4 && t->layout == LAYOUT_NHWC) {
        const uint32_t *d = t->data;
        int64_t N = t->shape[0], C = t->shape[1], P = t->shape[2] * t->shape[3];
        for (int64_t a = 0; a < N; a++)
            for (int64_t c = 0; c < C; c++)
                for (int64_t q = 0; q < P; q++)
                    fwrite(&d[(a * P + q) * C + c], 4, 1, w->f);
    } else
        fwrite(t->data, 4, n, w->f);
}

int weights_close(wfile *w, char *err, size_t n)
{
    if (!w->f) {
        snprintf(err, n, "no weights file open");
        return -1;
    }
    if (fseek(w->f, 8, SEEK_SET) != 0) { /* a file without its count is no weights file */
        snprintf(err, n, "'%s': %s", w->out.path, strerror(errno));
        out_abandon(&w->out);
        w->f = NULL;
        return -1;
    }
    put_u32(w->f, w->count);
    int rc = out_close(&w->out, err, n);
    w->f = NULL;
    return rc;
}

int weights_save(const graph *g, const char *path, char *err, size_t n)
{
    wfile w;
    if (weights_open(&w, path, err, n))
        return -1;
    for (int i = 0; i < g->nt; i++)
        if (g->t[i].kind == TK_PARAM || g->t[i].kind == TK_BUFFER)
            weights_put(&w, g, i, NULL);
    return weights_close(&w, err, n);
}

/* "f32 3x1x5x5" (dtype 0 f32, 1 i32, else its number) */
static void shape_text(char *out, size_t n, uint32_t dtype, int ndim, const int64_t *shape)
{
    int len = dtype == 0 ? snprintf(out, n, "f32 ") : dtype == 1 ? snprintf(out, n, "i32 ")
                                                                 : snprintf(out, n, "dtype %u ", dtype);
    for (int i = 0; i < ndim && len < (int)n; i++)
        len += snprintf(out + len, n - len, "%s%" PRId64, i ? "x" : "", shape[i]);
    if (ndim == 0 && len < (int)n)
        snprintf(out + len, n - len, "scalar");
}

/* The weights file at path opened for reading, or NULL after writing why into
 * err: opened non-blocking so that a FIFO is refused, not waited on, and
 * anything but a regular file named for what it is. */
static FILE *weights_open_read(const char *path, char *err, int errlen)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    FILE *f;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, errlen, "unable to open '%s': %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "'%s' is %s, not a weights file", path,
                 S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO"
                 : S_ISCHR(st.st_mode) ? "a character device" : "not a regular file");
        close(fd);
        return NULL;
    }
    if (!(f = fdopen(fd, "rb"))) {
        snprintf(err, errlen, "unable to open '%s': %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

int weights_load(graph *g, const char *path, char *err, int errlen)
{
    char magic[4], have[160], want[160];
    uint32_t ver, count;
    int *seen = calloc(g->nt, sizeof *seen);
    mallocCheck(seen);
    FILE *f = weights_open_read(path, err, errlen);
    if (!f)
        goto fail;
    if (fread(magic, 1, 4, f) != 4 || memcmp(magic, "MXWT", 4) != 0 ||
        fread(&ver, 4, 1, f) != 1 || fread(&count, 4, 1, f) != 1) {
        snprintf(err, errlen, "'%s' is not a weights file (magic MXWT)", path);
        goto fail;
    }
    if (ver != 1) {
        snprintf(err, errlen, "'%s': weights file version %u, this engine reads 1", path, ver);
        goto fail;
    }
    uint32_t k;
    for (k = 0; k < count; k++) {
        uint32_t len, dtype, ndim;
        char name[GRAPH_NAME];
        uint64_t shape[8];
        if (fread(&len, 4, 1, f) != 1)
            goto trunc;
        if (len >= sizeof name) {
            snprintf(err, errlen, "'%s': tensor %u has a name of %u bytes (at most %d): not a weights file of this engine",
                     path, k + 1, len, (int)sizeof name - 1);
            goto fail;
        }
        if (fread(name, 1, len, f) != len)
            goto trunc;
        name[len] = 0;
        if (fread(&dtype, 4, 1, f) != 1 || fread(&ndim, 4, 1, f) != 1)
            goto trunc;
        if (ndim > 8) {
            snprintf(err, errlen, "'%s': tensor '%s' has %u dimensions (at most 8)", path, name, ndim);
            goto fail;
        }
        if (fread(shape, 8, ndim, f) != ndim)
            goto trunc;
        int ti = graph_find(g, name);
        if (ti < 0 || (g->t[ti].kind != TK_PARAM && g->t[ti].kind != TK_BUFFER)) {
            snprintf(err, errlen, "'%s': tensor '%s' is not a parameter of this model", path, name);
            goto fail;
        }
        tensor *t = &g->t[ti];
        int same = (int)ndim == t->ndim && dtype == 0;
        for (uint32_t i = 0; same && i < ndim; i++)
            same = (int64_t)shape[i] == t->shape[i];
        if (!same) {
            shape_text(have, sizeof have, dtype, (int)ndim, (const int64_t *)shape);
            shape_text(want, sizeof want, 0, t->ndim, t->shape);
            snprintf(err, errlen, "'%s': tensor '%s' is %s in the file, %s in the model", path, name, have, want);
            goto fail;
        }
        if (fread(t->data, 4, graph_numel(t), f) != (size_t)graph_numel(t))
            goto trunc;
        seen[ti] = 1;
    }
    for (int i = 0; i < g->nt; i++)
        if (g->t[i].kind == TK_PARAM && !seen[i]) {
            snprintf(err, errlen, "'%s' lacks parameter '%s'", path, g->t[i].name);
            goto fail;
        }
    fclose(f);
    free(seen);
    return 0;
trunc:
    if (ferror(f))
        snprintf(err, errlen, "'%s': %s", path, strerror(errno));
    else
        snprintf(err, errlen, "'%s' is truncated: it ends in tensor %u of the %u its header announces", path, k + 1,
                 count);
fail:
    if (f)
        fclose(f);
    free(seen);
    return -1;
}
