/* profile.c - the per-op profile file (profile.h). */
#include "config.h"
#include "profile.h"
#include "check.h"
#include "outfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

size_t profile_op_bytes(const graph *g, const op *o)
{
    size_t b = 0;
    for (int k = 0; k < GRAPH_MAX_OUT; k++) {
        int t = o->out[k];
        int seen = 0;
        if (t < 0 || g->t[t].alias >= 0)
            continue;
        for (int j = 0; j < k; j++)
            seen |= o->out[j] == t;
        if (!seen)
            b += g->t[t].bytes;
    }
    return b;
}

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* The directory of path, made when missing (one level: the run directory's
 * profiles/). */
static int make_parent(const char *path, char *err, size_t en)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return 0;
    char *dir = strndup(path, (size_t)(slash - path));
    mallocCheck(dir);
    struct stat st;
    int rc = 0;
    if (stat(dir, &st) != 0 && (mkdir(dir, 0777) != 0 && errno != EEXIST)) {
        snprintf(err, en, "unable to make the directory '%s': %s", dir, strerror(errno));
        rc = -1;
    }
    free(dir);
    return rc;
}

int profile_write(const char *path, const profile_row *rows, int n, char *err, size_t en)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += rows[i].total_s;
    if (make_parent(path, err, en))
        return -1;
    outfile of;
    if (out_open(&of, path, err, en))
        return -1;
    FILE *f = of.f;
    fprintf(f, "%s\n", PROFILE_HEADER);
    for (int i = 0; i < n; i++) {
        const profile_row *r = &rows[i];
        csv_field(f, r->op);
        fputc(',', f);
        csv_field(f, r->kind);
        fprintf(f, ",%ld,%.6g,%.6g,%.4g,%zu\n", r->calls, r->total_s * 1e3,
                r->calls ? r->total_s * 1e3 / r->calls : 0.0, sum > 0 ? 100.0 * r->total_s / sum : 0.0,
                r->mem_bytes);
    }
    return out_close(&of, err, en);
}
