/* data.c - MNIST's IDX files and the input pipeline (data.h). */
#include "config.h"
#include "data.h"
#include "check.h"
#include "measure.h"
#include "mem.h"
#include "rng.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifdef HAVE_ZLIB
#include <zlib.h>
#endif

/* Most bytes of data an IDX file may announce: MNIST's images are 47 MB. */
#define IDX_MAX_BYTES ((uint64_t)1 << 34)

const char *data_formats(void)
{
#ifdef HAVE_ZLIB
    return "idx, idx.gz (zlib)";
#else
    return "idx (built without zlib: .gz files unsupported)";
#endif
}

/* An open IDX file, plain or gzip-compressed. */
struct src {
    FILE *f;
#ifdef HAVE_ZLIB
    gzFile z;
#endif
    int gz;
    uint64_t size; /* plain files: bytes on disk */
};

/* Up to n bytes; the count read, or -1 on a read error (message in err). */
static int64_t src_read(struct src *s, void *buf, size_t n, const char *path, char *err, size_t en)
{
#ifdef HAVE_ZLIB
    if (s->gz) {
        size_t got = 0;
        while (got < n) {
            unsigned chunk = n - got > (1u << 30) ? 1u << 30 : (unsigned)(n - got);
            int k = gzread(s->z, (char *)buf + got, chunk);
            if (k < 0) {
                int zerr;
                snprintf(err, en, "'%s': not a readable gzip file (%s)", path, gzerror(s->z, &zerr));
                return -1;
            }
            if (k == 0)
                break;
            got += (size_t)k;
        }
        return (int64_t)got;
    }
#endif
    size_t got = fread(buf, 1, n, s->f);
    if (got < n && ferror(s->f)) {
        snprintf(err, en, "'%s': %s", path, strerror(errno));
        return -1;
    }
    return (int64_t)got;
}

static void src_close(struct src *s)
{
    if (s->f)
        fclose(s->f);
#ifdef HAVE_ZLIB
    if (s->gz && s->z)
        gzclose(s->z);
#endif
}

/* Open DIR/BASE, else DIR/BASE.gz; *path is the one opened (malloc'd). */
static int src_open(struct src *s, const char *dir, const char *base, char **path, char *err, size_t en)
{
    struct stat st;
    memset(s, 0, sizeof *s);
    *path = NULL;
    size_t len = strlen(dir) + strlen(base) + 8;
    char *plain = malloc(len), *gz = malloc(len);
    mallocCheck(plain);
    mallocCheck(gz);
    snprintf(plain, len, "%s/%s", dir, base);
    snprintf(gz, len, "%s/%s.gz", dir, base);
    if (stat(plain, &st) == 0) {
        free(gz);
        *path = plain;
        if (!S_ISREG(st.st_mode)) {
            snprintf(err, en, "'%s': not a regular file", plain);
            return -1;
        }
        if (!(s->f = fopen(plain, "rb"))) {
            snprintf(err, en, "'%s': %s", plain, strerror(errno));
            return -1;
        }
        s->size = (uint64_t)st.st_size;
        return 0;
    }
    if (stat(gz, &st) != 0) {
        snprintf(err, en, "'%s' not found (nor '%s.gz'): MNIST's training %s are expected there", plain, base,
                 strcmp(base, DATA_IMAGES) == 0 ? "images" : "labels");
        free(plain);
        free(gz);
        return -1;
    }
    free(plain);
    *path = gz;
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, en, "'%s': not a regular file", gz);
        return -1;
    }
#ifdef HAVE_ZLIB
    s->gz = 1;
    if (!(s->z = gzopen(gz, "rb"))) {
        snprintf(err, en, "'%s': %s", gz, strerror(errno));
        return -1;
    }
    return 0;
#else
    snprintf(err, en, "'%s': this matrix-engine was built without zlib: gunzip it (gzip -dk) next to it", gz);
    return -1;
#endif
}

/* The header of an IDX file of unsigned bytes with ndim dimensions, open
 * as s: dims, and the bytes of data it announces (*total, checked against
 * the file's size when it is not compressed). 0, or -1 with the reason in
 * err. */
static int idx_header(struct src *s, int ndim, uint32_t *dims, uint64_t *total, const char *path, char *err,
                      size_t en)
{
    unsigned char head[4 + 4 * 3];
    int64_t hn = 4 + 4 * (int64_t)ndim, got;
    *total = 1;
    if ((got = src_read(s, head, 4, path, err, en)) < 0)
        return -1;
    if (got < 4 || head[0] || head[1] || head[2] != 0x08 || head[3] != ndim) {
        snprintf(err, en, "'%s': not an IDX file of unsigned bytes with %d dimension%s (magic %02x %02x %02x %02x,"
                 " expected 00 00 08 %02x)", path, ndim, ndim > 1 ? "s" : "",
                 got > 0 ? head[0] : 0, got > 1 ? head[1] : 0, got > 2 ? head[2] : 0, got > 3 ? head[3] : 0, ndim);
        return -1;
    }
    if ((got = src_read(s, head + 4, (size_t)(hn - 4), path, err, en)) < 0)
        return -1;
    if (got < hn - 4) {
        snprintf(err, en, "'%s': truncated: the header ends after %" PRId64 " bytes, %" PRId64 " expected",
                 path, 4 + got, hn);
        return -1;
    }
    for (int i = 0; i < ndim; i++) {
        const unsigned char *p = head + 4 + 4 * i;
        dims[i] = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        *total *= dims[i] ? dims[i] : 1;
        if (*total > IDX_MAX_BYTES) {
            snprintf(err, en, "'%s': the header announces more than %" PRIu64 " bytes of data (dimension %d is %" PRIu32
                     "): not an MNIST file", path, IDX_MAX_BYTES, i + 1, dims[i]);
            return -1;
        }
    }
    for (int i = 0; i < ndim; i++)
        if (dims[i] == 0) {
            snprintf(err, en, "'%s': dimension %d is 0: the file holds no %s", path, i + 1,
                     ndim == 1 ? "labels" : i == 0 ? "images" : "pixels");
            return -1;
        }
    if (!s->gz && s->size != (uint64_t)hn + *total) {
        if (s->size < (uint64_t)hn + *total)
            snprintf(err, en, "'%s': truncated: the header announces %" PRIu64 " bytes of data, the file has %" PRIu64,
                     path, *total, s->size - (uint64_t)hn);
        else
            snprintf(err, en, "'%s': %" PRIu64 " bytes after the %" PRIu64 " bytes of data its header announces",
                     path, s->size - (uint64_t)hn - *total, *total);
        return -1;
    }
    return 0;
}

/* The total bytes of data after the header of s into *buf (malloc'd, grown
 * as the data arrives: a compressed file's header may lie), and nothing
 * after them. 0, or -1 with the reason in err (*buf may hold a part). */
static int idx_data(struct src *s, uint64_t total, uint8_t **buf, const char *path, char *err, size_t en)
{
    unsigned char extra;
    size_t cap = 0, have = 0;
    int64_t got;
    while (have < total) {
        size_t want = total - have, room;
        if (have == cap) {
            cap = cap ? cap * 2 : (size_t)1 << 20;
            cap = cap > total ? total : cap;
            *buf = realloc(*buf, cap);
            mallocCheck(*buf);
        }
        room = cap - have;
        want = want < room ? want : room;
        if ((got = src_read(s, *buf + have, want, path, err, en)) < 0)
            return -1;
        have += (size_t)got;
        if ((size_t)got < want)
            break;
    }
    if (have < total) {
        snprintf(err, en, "'%s': truncated: the header announces %" PRIu64 " bytes of data, the file has %zu",
                 path, total, have);
        return -1;
    }
    if ((got = src_read(s, &extra, 1, path, err, en)) < 0)
        return -1;
    if (got > 0) {
        snprintf(err, en, "'%s': more bytes after the %" PRIu64 " bytes of data its header announces", path, total);
        return -1;
    }
    return 0;
}

/* What the header of the file at path announces, checked before its data
 * is read: images of the model's size (want: rows, cols; NULL: any), and no
 * more bytes than the memory the engine may still take (a sparse file or a
 * gzip bomb of 16 GiB was read whole, to be refused after). 0, or -1 with
 * the reason in err. */
static int idx_fits(const uint32_t *dims, uint64_t total, const int *want, const char *model, const char *path,
                    char *err, size_t en)
{
    if (want && (dims[1] != (uint32_t)want[0] || dims[2] != (uint32_t)want[1])) {
        snprintf(err, en, "'%s': images of %" PRIu32 "x%" PRIu32 " pixels; model %s takes %dx%d", path, dims[1],
                 dims[2], model, want[0], want[1]);
        return -1;
    }
    size_t avail = mem_available();
    if (avail && total > avail) {
        snprintf(err, en, "'%s': the header announces %" PRIu64 " bytes of data, more than the %zu bytes of memory "
                 "the engine may still take", path, total, avail);
        return -1;
    }
    return 0;
}

/* Read the IDX file DIR/BASE[.gz] of unsigned bytes with ndim dimensions:
 * its dims and its data (malloc'd), checked by idx_fits first. 0, or -1
 * with the reason in err. */
static int idx_read(const char *dir, const char *base, int ndim, const int *want, const char *model, uint32_t *dims,
                    uint8_t **data, char **path, char *err, size_t en)
{
    struct src s;
    uint8_t *buf = NULL;
    uint64_t total;
    *data = NULL;
    if (src_open(&s, dir, base, path, err, en) || idx_header(&s, ndim, dims, &total, *path, err, en) ||
        idx_fits(dims, total, want, model, *path, err, en) || idx_data(&s, total, &buf, *path, err, en)) {
        src_close(&s);
        free(buf);
        return -1;
    }
    src_close(&s);
    *data = buf;
    return 0;
}

int data_model_input(const graph *g, const char *model, const char *takes, int *rows, int *cols, char *err,
                     size_t n)
{
    int x = graph_find(g, "input"), y = graph_find(g, "target");
    const tensor *tx = x >= 0 ? &g->t[x] : NULL, *ty = y >= 0 ? &g->t[y] : NULL;
    if (!tx || !ty || tx->ndim != 4 || tx->dtype != DT_F32 || tx->shape[1] != 1 || ty->ndim != 1 ||
        ty->dtype != DT_I32 || ty->init != INIT_LABELS) {
        snprintf(err, n, "--data gives grey images with class labels (MNIST); model %s takes %s", model, takes);
        return -2;
    }
    *rows = (int)tx->shape[2];
    *cols = (int)tx->shape[3];
    return 0;
}

int data_open(data_set *d, const char *dir, int rows, int cols, const char *model, char *err, size_t n)
{
    struct stat st;
    uint32_t idims[3], ldims[1];
    int want[2] = {rows, cols};
    double t0 = measure_now();
    memset(d, 0, sizeof *d);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, n, "'%s': %s (a directory with MNIST's %s and %s is expected)", dir,
                 stat(dir, &st) != 0 ? strerror(errno) : "not a directory", DATA_IMAGES, DATA_LABELS);
        return -1;
    }
    if (idx_read(dir, DATA_IMAGES, 3, rows > 0 ? want : NULL, model, idims, &d->pix, &d->images_path, err, n) ||
        idx_read(dir, DATA_LABELS, 1, NULL, model, ldims, &d->lab, &d->labels_path, err, n)) {
        data_free(d);
        return -1;
    }
    if (ldims[0] != idims[0]) {
        snprintf(err, n, "'%s': %" PRIu32 " labels for the %" PRIu32 " images of '%s'", d->labels_path, ldims[0],
                 idims[0], d->images_path);
        data_free(d);
        return -1;
    }
    d->n = idims[0];
    d->rows = (int)idims[1];
    d->cols = (int)idims[2];
    d->load_s = measure_now() - t0;
    return 0;
}

int data_bind(data_set *d, const graph *g, const char *model, const char *takes, int batch, int rank,
              int ranks, uint64_t seed, char *err, size_t n)
{
    int x = graph_find(g, "input"), y = graph_find(g, "target"), rows, cols;
    if (data_model_input(g, model, takes, &rows, &cols, err, n))
        return -2;
    const tensor *tx = &g->t[x], *ty = &g->t[y];
    if (tx->shape[2] != d->rows || tx->shape[3] != d->cols) {
        snprintf(err, n, "'%s': images of %dx%d pixels; model %s takes %" PRId64 "x%" PRId64, d->images_path,
                 d->rows, d->cols, model, tx->shape[2], tx->shape[3]);
        return -1;
    }
    int classes = (int)ty->init_a;
    for (int64_t i = 0; i < d->n; i++)
        if (d->lab[i] >= classes) {
            snprintf(err, n, "'%s': label %d of image %" PRId64 " is not a class of model %s (0 to %d)",
                     d->labels_path, d->lab[i], i, model, classes - 1);
            return -1;
        }
    int64_t global = (int64_t)batch * ranks;
    if (d->n < global) {
        snprintf(err, n, "'%s' holds %" PRId64 " images, less than one batch of %" PRId64 "%s", d->images_path,
                 d->n, global, ranks > 1 ? " (all ranks)" : "");
        return -2;
    }
    d->x = x;
    d->y = y;
    d->batch = batch;
    d->rank = rank;
    d->ranks = ranks;
    d->seed = seed;
    d->epoch_steps = d->n / global;
    d->dropped = d->n - d->epoch_steps * global;
    d->next = d->epoch_steps; /* the first data_next starts epoch 1 */
    d->order = malloc((size_t)d->n * sizeof *d->order);
    d->index = malloc((size_t)batch * sizeof *d->index);
    mallocCheck(d->order);
    mallocCheck(d->index);
    return 0;
}

/* A new epoch's order: Fisher-Yates with the epoch's stream (equal on every
 * rank, so the ranks' slices of a global batch are disjoint). */
static void data_shuffle(data_set *d)
{
    uint64_t key = rng_mix(d->seed * 0x9e3779b97f4a7c15ULL ^ 0x6d6e697374ULL ^ (uint64_t)d->epoch);
    for (int64_t i = 0; i < d->n; i++)
        d->order[i] = (uint32_t)i;
    for (int64_t i = d->n - 1; i > 0; i--) {
        int64_t j = (int64_t)(rng_mix(key + (uint64_t)i * 0x9e3779b97f4a7c15ULL) % (uint64_t)(i + 1));
        uint32_t t = d->order[i];
        d->order[i] = d->order[j];
        d->order[j] = t;
    }
}

void data_next(data_set *d, float *x, int32_t *y)
{
    if (d->next == d->epoch_steps) {
        d->epoch++;
        d->next = 0;
        data_shuffle(d);
    }
    const uint32_t *ord = d->order + (d->next * d->ranks + d->rank) * d->batch;
    size_t px = (size_t)d->rows * d->cols;
    const float scale = 1.0f / (255.0f * DATA_STD), shift = DATA_MEAN / DATA_STD;
    for (int b = 0; b < d->batch; b++) {
        const uint8_t *src = d->pix + ord[b] * px;
        float *dst = x + b * px;
        for (size_t k = 0; k < px; k++)
            dst[k] = src[k] * scale - shift;
        if (y)
            y[b] = d->lab[ord[b]];
        d->index[b] = (int32_t)ord[b];
    }
    d->next++;
    d->batches++;
}

void data_free(data_set *d)
{
    free(d->images_path);
    free(d->labels_path);
    free(d->pix);
    free(d->lab);
    free(d->order);
    free(d->index);
    memset(d, 0, sizeof *d);
}

int data_ring_make(data_ring *q)
{
    if (q->made - q->taken >= DATA_SLOTS)
        return -1;
    return (int)(q->made++ % DATA_SLOTS);
}

int data_ring_take(data_ring *q)
{
    if (q->taken == q->made)
        return -1;
    return (int)(q->taken++ % DATA_SLOTS);
}

int64_t data_ring_epochs(const data_ring *q, int64_t epoch_steps)
{
    return q->taken ? (q->taken - 1) / epoch_steps + 1 : 0;
}

void data_fill_slot(data_set *d, int slot, void *const *host, int32_t *const *index)
{
    int32_t *taken = d->index; /* still the batch the last step took */
    d->index = index[slot];
    data_next(d, host[2 * slot], host[2 * slot + 1]);
    d->index = taken;
}

void data_took_slot(data_set *d, int slot, int32_t *const *index)
{
    memcpy(d->index, index[slot], (size_t)d->batch * sizeof *d->index);
}
