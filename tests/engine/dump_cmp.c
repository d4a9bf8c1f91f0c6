/* dump_cmp.c - compare two matrix-engine --dump files (engine/weights.h
 * format) tensor by tensor, for the data-parallel checks:
 *
 *   dump_cmp REF GOT RTOL PREFIX...
 *
 * Every tensor of REF whose name starts with one of the prefixes must be in
 * GOT with the same shape, or, for "output", GOT may hold the leading rows
 * of REF's (rank 0's slice of the global batch). Relative error: max |got -
 * ref| / max(max |ref| of the tensor, 1e-3 x the largest |ref| of all the
 * compared tensors). One line per tensor; "dump_cmp: N ok, N failed" last;
 * exit 0 when all are within RTOL, 1 otherwise, 2 on bad input. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct t {
    char name[256];
    int ndim;
    uint64_t shape[8];
    size_t n;
    float *v; /* int32 tensors converted */
};

static int rd(FILE *f, void *p, size_t n) { return fread(p, 1, n, f) == n ? 0 : -1; }

static struct t *load(const char *path, int *count)
{
    FILE *f = fopen(path, "rb");
    char magic[4];
    uint32_t ver, cnt;
    if (!f || rd(f, magic, 4) || memcmp(magic, "MXWT", 4) || rd(f, &ver, 4) || rd(f, &cnt, 4)) {
        fprintf(stderr, "dump_cmp: '%s' is not a tensor file\n", path);
        exit(2);
    }
    struct t *ts = calloc(cnt + 1, sizeof *ts);
    for (uint32_t i = 0; i < cnt; i++) {
        uint32_t len, dt, nd;
        struct t *t = &ts[i];
        if (rd(f, &len, 4) || len >= sizeof t->name || rd(f, t->name, len) || rd(f, &dt, 4) ||
            rd(f, &nd, 4) || nd > 8 || rd(f, t->shape, 8 * nd)) {
            fprintf(stderr, "dump_cmp: '%s': truncated or malformed\n", path);
            exit(2);
        }
        t->ndim = (int)nd;
        t->n = 1;
        for (uint32_t k = 0; k < nd; k++)
            t->n *= t->shape[k];
        t->v = malloc(t->n * 4 + 4);
        if (rd(f, t->v, t->n * 4)) {
            fprintf(stderr, "dump_cmp: '%s': truncated data of '%s'\n", path, t->name);
            exit(2);
        }
        if (dt == 1)
            for (size_t k = 0; k < t->n; k++)
                t->v[k] = (float)((int32_t *)t->v)[k];
    }
    fclose(f);
    *count = (int)cnt;
    return ts;
}

static int wanted(const char *name, char **pre, int np)
{
    for (int i = 0; i < np; i++)
        if (strncmp(name, pre[i], strlen(pre[i])) == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: dump_cmp REF GOT RTOL PREFIX...\n");
        return 2;
    }
    int nr, ng, ok = 0, bad = 0;
    struct t *ref = load(argv[1], &nr), *got = load(argv[2], &ng);
    double rtol = atof(argv[3]), big = 0;
    for (int i = 0; i < nr; i++)
        if (wanted(ref[i].name, argv + 4, argc - 4))
            for (size_t k = 0; k < ref[i].n; k++)
                big = fmax(big, fabs(ref[i].v[k]));
    for (int i = 0; i < nr; i++) {
        struct t *a = &ref[i], *b = NULL;
        if (!wanted(a->name, argv + 4, argc - 4))
            continue;
        for (int j = 0; j < ng && !b; j++)
            if (strcmp(got[j].name, a->name) == 0)
                b = &got[j];
        int same = b && b->ndim == a->ndim;
        for (int k = 0; same && k < a->ndim; k++)
            same = b->shape[k] == a->shape[k] ||
                   (k == 0 && strcmp(a->name, "output") == 0 && b->shape[0] < a->shape[0]);
        if (!same) {
            printf("FAIL %-32s %s\n", a->name, b ? "shape differs" : "missing");
            bad++;
            continue;
        }
        double m = 0, d = 0;
        for (size_t k = 0; k < b->n; k++) { /* b->n <= a->n: the leading rows */
            m = fmax(m, fabs(a->v[k]));
            d = fmax(d, fabs((double)a->v[k] - b->v[k]));
        }
        double rel = d / fmax(m, 1e-3 * big);
        int pass = rel <= rtol;
        printf("%s %-32s rel %.3e (max |diff| %.3e)\n", pass ? "ok  " : "FAIL", a->name, rel, d);
        pass ? ok++ : bad++;
    }
    printf("dump_cmp: %d ok, %d failed\n", ok, bad);
    for (int i = 0; i < nr; i++)
        free(ref[i].v);
    for (int i = 0; i < ng; i++)
        free(got[i].v);
    free(ref);
    free(got);
    return bad || !ok ? 1 : 0;
}
