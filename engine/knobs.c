/* knobs.c - the MATRIX_ENGINE_* settings (knobs.h). */
#include "config.h"
#include "knobs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    const char *values[5]; /* the default first; NULL-terminated (4 at most) */
} knobs[KNOB_COUNT] = {
    [KNOB_CONV] = {"MATRIX_ENGINE_CONV", {"auto", "graph", "legacy", "kernel"}},
    [KNOB_BNSTATS] = {"MATRIX_ENGINE_BNSTATS", {"separate", "conv"}},
    [KNOB_OPTIM] = {"MATRIX_ENGINE_OPTIM", {"fused", "per-tensor"}},
    [KNOB_SDPA] = {"MATRIX_ENGINE_SDPA", {"auto", "kernel"}},
    [KNOB_GEMM] = {"MATRIX_ENGINE_GEMM", {"auto", "kernel"}},
    [KNOB_POISON] = {"MATRIX_ENGINE_POISON", {"0", "1"}},
    [KNOB_BN_BWD] = {"MATRIX_ENGINE_BN_BWD", {"fused", "separate"}},
    [KNOB_DATA_UPLOAD] = {"MATRIX_ENGINE_DATA_UPLOAD", {"pinned", "pageable"}},
    [KNOB_LAUNCH] = {"MATRIX_ENGINE_LAUNCH", {"auto", "local", "mpirun"}},
    [KNOB_DP] = {"MATRIX_ENGINE_DP", {"0", "1"}},
    [KNOB_PROFILE] = {"MATRIX_ENGINE_PROFILE", {"0", "1"}},
};

#define DIE_RANK "MATRIX_ENGINE_DIE_RANK"
#define BUCKET_KB "MATRIX_ENGINE_BUCKET_KB"
#define BUCKET_KB_MAX (4 << 20) /* 4 GiB */

const char *knob_name(enum knob k) { return knobs[k].name; }

const char *knob_value(enum knob k, int v) { return knobs[k].values[v]; }

int knob_parse(enum knob k, const char *s, char *err, size_t n)
{
    if (!s || !*s)
        return 0;
    for (int v = 0; knobs[k].values[v]; v++)
        if (strcmp(s, knobs[k].values[v]) == 0)
            return v;
    size_t len = (size_t)snprintf(err, n, "%s='%s' is not one of", knobs[k].name, s);
    for (int v = 0; knobs[k].values[v] && len < n; v++)
        len += (size_t)snprintf(err + len, n - len, "%s %s", v ? "," : "", knobs[k].values[v]);
    if (len < n)
        snprintf(err + len, n - len, " (default %s)", knobs[k].values[0]);
    return -1;
}

int knob_get(enum knob k, char *err, size_t n) { return knob_parse(k, getenv(knobs[k].name), err, n); }

int knob_is_set(enum knob k)
{
    const char *s = getenv(knobs[k].name);
    return s && *s;
}

/* The decimal number that s starts with (a digit first: no sign, no space),
 * *end after it; -1 when there is none or it is past max. */
static long leading_number(const char *s, long max, char **end)
{
    *end = (char *)s;
    if (s[0] < '0' || s[0] > '9')
        return -1;
    errno = 0;
    long k = strtol(s, end, 10);
    return errno || k > max ? -1 : k;
}

int knob_die_rank(int *rank, int *by_exit, char *err, size_t n)
{
    const char *s = getenv(DIE_RANK);
    char *end;
    *rank = -1;
    *by_exit = 0;
    if (!s || !*s)
        return 0;
    long k = leading_number(s, 1 << 20, &end);
    if (k < 0 || (*end && strcmp(end, ":exit") != 0 && strcmp(end, ":skew") != 0)) {
        snprintf(err, n, "%s='%s' is not K, K:exit or K:skew (a test knob: rank K, a number from 0, is killed at "
                 "its third step, ends it with exit status 7, or changes one of its weights there)", DIE_RANK, s);
        return -1;
    }
    *rank = (int)k;
    *by_exit = !*end ? 0 : strcmp(end, ":exit") == 0 ? 1 : 2;
    return 0;
}

int knob_bucket_bytes(size_t *bytes, char *err, size_t n)
{
    const char *s = getenv(BUCKET_KB);
    char *end;
    *bytes = (size_t)25 << 20; /* PyTorch DDP's default */
    if (!s || !*s)
        return 0;
    long k = leading_number(s, BUCKET_KB_MAX, &end);
    if (k < 1 || *end) {
        snprintf(err, n, "%s='%s' is not a number of KiB from 1 to %d (the data-parallel gradient buckets' "
                 "size; default 25600, PyTorch DDP's 25 MiB)", BUCKET_KB, s, BUCKET_KB_MAX);
        return -1;
    }
    *bytes = (size_t)k << 10;
    return 0;
}

int knob_bucket_is_set(void)
{
    const char *s = getenv(BUCKET_KB);
    return s && *s;
}

int knobs_check(char *err, size_t n)
{
    int rank, by_exit;
    size_t bucket;
    for (int k = 0; k < KNOB_COUNT; k++)
        if (knob_get((enum knob)k, err, n) < 0)
            return -1;
    int conv = knob_get(KNOB_CONV, err, n);
    if (knob_get(KNOB_BNSTATS, err, n) == 1 /* conv */ && conv >= 2 /* legacy, kernel */) {
        snprintf(err, n, "MATRIX_ENGINE_BNSTATS=conv needs the cuDNN graph API, which MATRIX_ENGINE_CONV=%s "
                 "turns off", knob_value(KNOB_CONV, conv));
        return -1;
    }
    if (knob_bucket_bytes(&bucket, err, n))
        return -1;
    return knob_die_rank(&rank, &by_exit, err, n);
}

void knobs_list(char *out, size_t n)
{
    char err[8];
    size_t len = 0;
    int die, by_exit;
    size_t bucket;
    out[0] = 0;
    for (int k = 0; k < KNOB_COUNT && len < n; k++) {
        int v = knob_get((enum knob)k, err, sizeof err);
        if (knob_is_set((enum knob)k)) /* a value refused (not checked yet) as '?': never raw text */
            len += (size_t)snprintf(out + len, n - len, "%s%s=%s", len ? " " : "", knobs[k].name,
                                    v < 0 ? "?" : knobs[k].values[v]);
    }
    if (knob_bucket_is_set() && len < n) {
        if (knob_bucket_bytes(&bucket, err, sizeof err))
            len += (size_t)snprintf(out + len, n - len, "%s%s=?", len ? " " : "", BUCKET_KB);
        else
            len += (size_t)snprintf(out + len, n - len, "%s%s=%zu", len ? " " : "", BUCKET_KB, bucket >> 10);
    }
    if (knob_die_rank(&die, &by_exit, err, sizeof err) && len < n)
        len += (size_t)snprintf(out + len, n - len, "%s%s=?", len ? " " : "", DIE_RANK);
    else if (die >= 0 && len < n)
        len += (size_t)snprintf(out + len, n - len, "%s%s=%d%s", len ? " " : "", DIE_RANK, die,
                                by_exit == 1 ? ":exit" : by_exit == 2 ? ":skew" : "");
    if (!len)
        snprintf(out, n, "none");
}
