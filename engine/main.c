/* main.c - matrix-engine: one benchmark point per process.
 *
 * flags -> point -> backend -> model graph -> passes -> memory plan ->
 * measure -> result file (key=value lines, written atomically at the end).
 * Exit 0: measured; 2: bad flag or level; 3: unsupported combination
 * (status=unsupported); 1: failure (status=oom for out of memory). */
#include "config.h"
#include "backend.h"
#include "check.h"
#include "engine.h"
#include "graph.h"
#include "measure.h"
#include "mem.h"
#include "passes.h"
#include "rng.h"
#include "weights.h"
#include "models/models.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef HAVE_CBLAS
#include <cblas.h>
/* OpenBLAS extensions: absent from other CBLAS libraries */
#pragma weak openblas_get_config
#endif

/* ---- options, declared as data ------------------------------------------ */

static const char *const lv_task[] = {"infer", "train", NULL};
static const char *const lv_prec[] = {"fp32", "tf32", "fp16", "bf16", NULL};
static const char *const lv_onoff[] = {"off", "on", NULL};
static const char *const lv_compile[] = {"none", "default", "reduce-overhead", "max-autotune", NULL};
static const char *const lv_device[] = {"auto", "cpu", "cuda", NULL};

enum flag_kind { F_INT, F_LEVEL, F_STR, F_SECONDS, F_WARMUP, F_DOUBLE, F_BOOL };

struct opts {
    point pt;
    const char *result, *weights, *save_weights, *dump;
    measure_cfg m;
    int steps;
    int list_models, help;
    long seed;
    double lr;
};

struct flag {
    const char *name;
    int kind;
    size_t off;
    const char *const *levels;
    const char *arg, *help;
};

#define O(f) offsetof(struct opts, f)
static const struct flag flags[] = {
    {"model", F_STR, O(pt.model), NULL, "NAME", "model (--list-models); default mnist_cnn"},
    {"task", F_LEVEL, O(pt.train), lv_task, "infer|train", "forward only, or forward + backward + optimizer step; default infer"},
    {"batch", F_INT, O(pt.batch), NULL, "N", "samples per step; default 64"},
    {"seq-len", F_INT, O(pt.seq_len), NULL, "N", "tokens per sample (BERT); default 128"},
    {"image-size", F_INT, O(pt.image_size), NULL, "N", "image side in pixels (ResNet); default 224"},
    {"precision", F_LEVEL, O(pt.precision), lv_prec, "fp32|tf32|fp16|bf16", "arithmetic; default fp32 (tf32 is fp32 on cpu, listed in ignored)"},
    {"channels-last", F_LEVEL, O(pt.channels_last), lv_onoff, "off|on", "NHWC activations for convolutional models; default off"},
    {"cudnn-benchmark", F_LEVEL, O(pt.cudnn_benchmark), lv_onoff, "off|on", "timed algorithm search (CUDA only); default off"},
    {"eval", F_LEVEL, O(pt.eval), lv_onoff, "off|on", "BatchNorm running statistics, dropout off; default off"},
    {"inference-mode", F_LEVEL, O(pt.inference_mode), lv_onoff, "off|on", "infer: on: every buffer reused once dead; off: what a backward would read kept (autograd on); default off"},
    {"compile", F_LEVEL, O(pt.compile), lv_compile, "none|default|reduce-overhead|max-autotune", "graph passes: BN folding, epilogue fusion; default none"},
    {"syncbn", F_LEVEL, O(pt.syncbn), lv_onoff, "off|on", "BatchNorm statistics across GPUs; default off"},
    {"ema", F_LEVEL, O(pt.ema), lv_onoff, "off|on", "exponential moving average of the weights (train); default off"},
    {"gpus", F_INT, O(pt.gpus), NULL, "N", "data-parallel GPUs; default 1"},
    {"threads", F_INT, O(pt.threads), NULL, "N", "CPU threads; default: the online CPUs"},
    {"device", F_LEVEL, O(pt.device), lv_device, "auto|cpu|cuda", "backend; default auto (cuda when built with it and a GPU is present)"},
    {"seed", F_INT, O(seed), NULL, "N", "seed of weights, inputs and dropout; default 1"},
    {"warmup", F_WARMUP, O(m), NULL, "DUR|N", "warm-up: a duration (0.2s, 150ms) or a number of steps; default 0.2s"},
    {"min-time", F_SECONDS, O(m.min_time), NULL, "DUR", "time steps at least this long; default 0.5s"},
    {"max-time", F_SECONDS, O(m.max_time), NULL, "DUR", "stop timing after this long; default 5s"},
    {"rel-ci", F_DOUBLE, O(m.rel_ci), NULL, "X", "stop when the 95% CI half-width of the median is within X of it; default 0.02"},
    {"lr", F_DOUBLE, O(lr), NULL, "X", "learning rate of the optimizer; default the model's (SGD 0.01, AdamW 1e-4)"},
    {"steps", F_INT, O(steps), NULL, "N", "exactly N timed steps, no CI rule"},
    {"result", F_STR, O(result), NULL, "FILE", "write the result record (key=value lines) to FILE"},
    {"weights", F_STR, O(weights), NULL, "FILE", "load parameters from a weights file (engine/weights.h)"},
    {"save-weights", F_STR, O(save_weights), NULL, "FILE", "save parameters and buffers after the run"},
    {"dump", F_STR, O(dump), NULL, "FILE", "reference checks: run --steps steps (default 1), dump input, output, gradients, losses, masks"},
    {"list-models", F_BOOL, O(list_models), NULL, NULL, "print the models and exit"},
    {"help", F_BOOL, O(help), NULL, NULL, "print this help and exit"},
};
#define NFLAGS ((int)(sizeof flags / sizeof flags[0]))

static void usage(FILE *f)
{
    fprintf(f, "usage: matrix-engine [--model NAME] [--task infer|train] [--batch N] ... --result FILE\n\n"
               "Runs one benchmark point of the native engine and writes its result record.\n"
               "Every flag takes its value as the next argument.\n\n");
    for (int i = 0; i < NFLAGS; i++) {
        char left[80];
        snprintf(left, sizeof left, "--%s%s%s", flags[i].name, flags[i].arg ? " " : "",
                 flags[i].arg ? flags[i].arg : "");
        fprintf(f, "  %-34s %s\n", left, flags[i].help);
    }
    fprintf(f, "\nExit status: 0 measured, 1 failed (status=oom when out of memory), 2 bad flag,\n"
               "3 unsupported combination (status=unsupported with a reason).\n");
}

/* Seconds in v ("0.5s", "150ms", "2", "1m"); -1 when malformed. */
static double parse_seconds(const char *v, int *bare)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || errno || x < 0)
        return -1;
    *bare = *end == 0;
    if (*end == 0 || strcmp(end, "s") == 0)
        return x;
    if (strcmp(end, "ms") == 0)
        return x / 1e3;
    if (strcmp(end, "us") == 0)
        return x / 1e6;
    if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
        return x * 60;
    return -1;
}

static int parse_flags(int argc, char **argv, struct opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const struct flag *f = NULL;
        if (strncmp(a, "--", 2) == 0)
            for (int k = 0; k < NFLAGS; k++)
                if (strcmp(a + 2, flags[k].name) == 0)
                    f = &flags[k];
        if (!f) {
            fprintf(stderr, "matrix-engine: unknown flag '%s'\n", a);
            return -1;
        }
        char *dst = (char *)o + f->off;
        if (f->kind == F_BOOL) {
            *(int *)dst = 1;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "matrix-engine: flag '--%s' needs a value\n", f->name);
            return -1;
        }
        const char *v = argv[++i];
        char *end;
        int bare;
        switch (f->kind) {
        case F_INT: {
            errno = 0;
            long x = strtol(v, &end, 10);
            if (*v == 0 || *end || errno || x < (strcmp(f->name, "seed") ? 1 : 0) || x > 1 << 30) {
                fprintf(stderr, "matrix-engine: --%s: '%s' is not a positive integer\n", f->name, v);
                return -1;
            }
            if (strcmp(f->name, "seed") == 0)
                *(long *)dst = x;
            else
                *(int *)dst = x;
            break;
        }
        case F_LEVEL: {
            int k;
            for (k = 0; f->levels[k]; k++)
                if (strcmp(v, f->levels[k]) == 0)
                    break;
            if (!f->levels[k]) {
                fprintf(stderr, "matrix-engine: --%s: unknown level '%s' (levels:", f->name, v);
                for (k = 0; f->levels[k]; k++)
                    fprintf(stderr, " %s", f->levels[k]);
                fprintf(stderr, ")\n");
                return -1;
            }
            *(int *)dst = k;
            break;
        }
        case F_STR:
            *(const char **)dst = v;
            break;
        case F_SECONDS: {
            double s = parse_seconds(v, &bare);
            if (s < 0) {
                fprintf(stderr, "matrix-engine: --%s: '%s' is not a duration (e.g. 0.5s, 200ms)\n", f->name, v);
                return -1;
            }
            *(double *)dst = s;
            break;
        }
        case F_WARMUP: {
            double s = parse_seconds(v, &bare);
            if (s < 0) {
                fprintf(stderr, "matrix-engine: --warmup: '%s' is neither a duration (0.2s) nor a step count (10)\n", v);
                return -1;
            }
            if (bare) {
                if (s != floor(s)) {
                    fprintf(stderr, "matrix-engine: --warmup: '%s' is not a whole number of steps\n", v);
                    return -1;
                }
                o->m.warmup_steps = (int)s;
            } else {
                o->m.warmup_steps = -1;
                o->m.warmup_s = s;
            }
            break;
        }
        case F_DOUBLE: {
            errno = 0;
            double x = strtod(v, &end);
            if (*v == 0 || *end || errno || x < 0) {
                fprintf(stderr, "matrix-engine: --%s: '%s' is not a non-negative number\n", f->name, v);
                return -1;
            }
            *(double *)dst = x;
            break;
        }
        }
    }
    return 0;
}

/* ---- the result record ---------------------------------------------------- */

struct record {
    char *buf;
    size_t len, cap;
};

static void rec(struct record *r, const char *key, const char *fmt, ...)
{
    char val[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(val, sizeof val, fmt, ap);
    va_end(ap);
    for (char *p = val; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    size_t need = strlen(key) + strlen(val) + 3;
    if (r->len + need >= r->cap) {
        r->cap = (r->cap + need) * 2;
        r->buf = realloc(r->buf, r->cap);
        mallocCheck(r->buf);
    }
    r->len += sprintf(r->buf + r->len, "%s=%s\n", key, val);
}

/* Write the record to path through path.tmp and rename; 0 on success. */
static int rec_write(const struct record *r, const char *path)
{
    if (!path)
        return 0;
    char *tmp = malloc(strlen(path) + 16);
    mallocCheck(tmp);
    sprintf(tmp, "%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    int ok = f && fwrite(r->buf, 1, r->len, f) == r->len;
    if (f)
        ok = fclose(f) == 0 && ok;
    ok = ok && rename(tmp, path) == 0;
    if (!ok) {
        fprintf(stderr, "matrix-engine: unable to write the result file '%s': %s\n", path, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    return ok ? 0 : -1;
}

/* The contents of the first line of /proc/cpuinfo starting with key. */
static void cpuinfo(const char *key, char *out, size_t n)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    snprintf(out, n, "unknown");
    if (!f)
        return;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, strlen(key)) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t')
                    c++;
                c[strcspn(c, "\n")] = 0;
                snprintf(out, n, "%s", c);
            }
            break;
        }
    fclose(f);
}

static int cpu_has(const char *flag)
{
    char fl[8192], pat[64];
    cpuinfo("flags", fl, sizeof fl);
    snprintf(pat, sizeof pat, " %s ", flag);
    strcat(fl, " ");
    memmove(fl + 1, fl, strlen(fl) + 1);
    fl[0] = ' ';
    return strstr(fl, pat) != NULL;
}

static void rec_point(struct record *r, const struct opts *o)
{
    const point *p = &o->pt;
    char cpu[256];
    rec(r, "model", "%s", p->model);
    rec(r, "task", "%s", lv_task[p->train]);
    rec(r, "batch", "%d", p->batch);
    rec(r, "seq_len", "%d", p->seq_len);
    rec(r, "precision", "%s", lv_prec[p->precision]);
    rec(r, "channels_last", "%s", lv_onoff[p->channels_last]);
    rec(r, "cudnn_benchmark", "%s", lv_onoff[p->cudnn_benchmark]);
    rec(r, "eval", "%s", lv_onoff[p->eval]);
    rec(r, "inference_mode", "%s", lv_onoff[p->inference_mode]);
    rec(r, "compile", "%s", lv_compile[p->compile]);
    rec(r, "syncbn", "%s", lv_onoff[p->syncbn]);
    rec(r, "ema", "%s", lv_onoff[p->ema]);
    rec(r, "gpus", "%d", p->gpus);
    rec(r, "threads", "%d", p->threads);
    rec(r, "engine", "native");
    rec(r, "engine_version", "%s", PACKAGE_VERSION);
    cpuinfo("model name", cpu, sizeof cpu);
    rec(r, "cpu", "%s", cpu);
}

static int finish_unsupported(const struct opts *o, const char *ignored, const char *reason)
{
    struct record r = {0};
    rec(&r, "status", "unsupported");
    rec(&r, "reason", "%s", reason);
    rec_point(&r, o);
    rec(&r, "device", "%s", o->pt.device == DEV_CUDA ? "cuda" : "cpu");
    rec(&r, "ignored", "%s", ignored);
    fprintf(stderr, "matrix-engine: unsupported: %s\n", reason);
    rec_write(&r, o->result);
    free(r.buf);
    return 3;
}

static const backend *active_be; /* for the records written on the way out */

static int finish_oom(const struct opts *o, size_t bytes, const char *what)
{
    struct record r = {0};
    char reason[256];
    snprintf(reason, sizeof reason, "out of memory: failed to allocate %zu bytes (%.2f GiB) for %s",
             bytes, bytes / 1073741824.0, what);
    rec(&r, "status", "oom");
    rec(&r, "reason", "%s", reason);
    rec_point(&r, o);
    rec(&r, "device", "%s", o->pt.device == DEV_CUDA ? "cuda" : "cpu");
    rec(&r, "peak_mem_bytes", "%zu", active_be && active_be->peak ? active_be->peak() : mem_peak());
    fprintf(stderr, "matrix-engine: %s\n", reason);
    rec_write(&r, o->result);
    free(r.buf);
    return 1;
}

/* ---- running ---------------------------------------------------------------- */

struct run {
    graph g;
    backend be;
    int nrun;        /* ops per step */
    /* dump mode: called after each op */
    void (*hook)(struct run *r, int opi);
    void *hook_ctx;
};

static double *prof_s; /* MATRIX_ENGINE_PROFILE: seconds per op index */

static int run_step(void *ctx)
{
    struct run *r = ctx;
    graph *g = &r->g;
    g->step++;
    if (r->be.step && !r->hook && !prof_s)
        return r->be.step(g, r->nrun);
    if (r->be.begin_step)
        r->be.begin_step();
    for (int i = 0; i < r->nrun; i++) {
        op *o = &g->ops[i];
        double t0 = prof_s ? measure_now() : 0;
        r->be.ops[o->type](g, o);
        if (prof_s) {
            r->be.sync();
            prof_s[i] += measure_now() - t0;
        }
        if (r->hook)
            r->hook(r, i);
    }
    r->be.sync();
    return 0;
}

static void fill_values(tensor *t, uint64_t key)
{
    int64_t n = graph_numel(t);
    float *f = t->data;
    int32_t *q = t->data;
    switch (t->init) {
    case INIT_UNIFORM:
        for (int64_t i = 0; i < n; i++)
            f[i] = (2.0f * rng_uniform(key, i) - 1.0f) * t->init_a;
        break;
    case INIT_NORMAL: /* Box-Muller, both values of each pair */
        for (int64_t i = 0; i < n; i += 2) {
            float u1 = rng_uniform(key, i) + 0x1p-25f, u2 = rng_uniform(key, i + 1);
            float r = sqrtf(-2.0f * logf(u1)) * t->init_a, sn, cs;
            sincosf(6.28318530718f * u2, &sn, &cs);
            f[i] = r * cs;
            if (i + 1 < n)
                f[i + 1] = r * sn;
        }
        break;
    case INIT_CONST:
        for (int64_t i = 0; i < n; i++)
            f[i] = t->init_a;
        break;
    case INIT_LABELS:
        for (int64_t i = 0; i < n; i++) {
            int v = (int)(rng_uniform(key, i) * t->init_a);
            q[i] = v >= (int)t->init_a ? (int)t->init_a - 1 : v;
        }
        break;
    default:
        break;
    }
}

/* Fill t as its init rule says, in logical (N, C, H, W) order whatever the
 * layout, so that NCHW and NHWC runs of a model see the same input. */
static void fill_tensor(tensor *t, uint64_t key)
{
    if (t->layout != LAYOUT_NHWC || t->ndim != 4 || t->init == INIT_NONE) {
        fill_values(t, key);
        return;
    }
    int64_t N = t->shape[0], C = t->shape[1], HW = t->shape[2] * t->shape[3];
    float *mem = t->data, *logical = malloc(t->bytes);
    mallocCheck(logical);
    t->data = logical;
    fill_values(t, key);
    t->data = mem;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t p = 0; p < HW; p++)
                mem[(n * HW + p) * C + c] = logical[(n * C + c) * HW + p];
    free(logical);
}

static uint64_t name_key(uint64_t seed, const char *name)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    return rng_mix(seed * 0x9e3779b97f4a7c15ULL ^ h);
}

static int persistent(int kind)
{
    return kind != TK_ACT && kind != TK_GRAD;
}

/* ---- host views of device tensors ---------------------------------------------
 * The dump, --save-weights and the loss read tensors on the host as f32 /
 * i32. On a device backend host_begin points t->data at a host copy
 * (f16 / bf16 widened to f32) until host_end puts the device pointer back. */

struct hview { void *data, *buf; int dtype; size_t bytes; };

static float f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
    if (e == 0x1f)
        u = sign | 0x7f800000u | (m << 13); /* inf, nan */
    else if (e)
        u = sign | ((e + 112) << 23) | (m << 13);
    else if (!m)
        u = sign;
    else { /* subnormal: normalise */
        e = 113;
        while (!(m & 0x400)) {
            m <<= 1;
            e--;
        }
        u = sign | (e << 23) | ((m & 0x3ff) << 13);
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void host_begin(struct run *r, int i, struct hview *h)
{
    tensor *t = &r->g.t[i];
    memset(h, 0, sizeof *h);
    if (r->be.host_visible)
        return;
    size_t n = (size_t)graph_numel(t), wide = n * 4;
    h->data = t->data;
    h->dtype = t->dtype;
    h->bytes = t->bytes;
    h->buf = malloc(wide ? wide : 4);
    mallocCheck(h->buf);
    if (t->data)
        r->be.download(h->buf, t->data, t->bytes);
    else if (t->host) /* persistent, not used on the device */
        memcpy(h->buf, t->host, t->bytes);
    else
        memset(h->buf, 0, wide);
    if (t->dtype == DT_F16 || t->dtype == DT_BF16) { /* widen in place, from the end */
        const uint16_t *s = h->buf;
        float *d = h->buf;
        for (size_t k = n; k-- > 0;) {
            uint16_t v = s[k];
            if (t->dtype == DT_F16)
                d[k] = f16_to_f32(v);
            else {
                uint32_t u = (uint32_t)v << 16;
                memcpy(&d[k], &u, 4);
            }
        }
        t->dtype = DT_F32;
    }
    t->data = h->buf;
    t->bytes = wide;
}

static void host_end(struct run *r, int i, struct hview *h)
{
    tensor *t = &r->g.t[i];
    if (r->be.host_visible)
        return;
    t->data = h->data;
    t->dtype = h->dtype;
    t->bytes = h->bytes;
    free(h->buf);
}

/* First float of tensor i (the loss). */
static float read_scalar(struct run *r, int i)
{
    struct hview h;
    host_begin(r, i, &h);
    float v = ((float *)r->g.t[i].data)[0];
    host_end(r, i, &h);
    return v;
}

/* ---- the CUDA backend module ------------------------------------------------------- */

#ifndef MATRIX_PKGLIBDIR
#define MATRIX_PKGLIBDIR "/usr/local/lib/matrix"
#endif

/* Load matrix-engine-cuda.so ($MATRIX_ENGINE_CUDA, else next to this
 * executable, else the installed one) and let it fill b. 0 on success; else
 * -1 with the reason in err. Only --device cuda gets here, so a CPU point
 * never maps the CUDA libraries. */
static int load_cuda(backend *b, const point *p, char *err, size_t n)
{
    char self[4096], path[4200], why[1024] = "";
    const char *env = getenv("MATRIX_ENGINE_CUDA");
    void *h = NULL;
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
        if (!(h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
            snprintf(why, sizeof why, "%s", dlerror());
    } else {
        ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
        char *slash;
        path[0] = 0;
        if (k > 0) {
            self[k] = 0;
            if ((slash = strrchr(self, '/'))) {
                *slash = 0;
                snprintf(path, sizeof path, "%s/matrix-engine-cuda.so", self);
            }
        }
        if (!path[0] || access(path, F_OK) != 0)
            snprintf(path, sizeof path, "%s/matrix-engine-cuda.so", MATRIX_PKGLIBDIR);
        if (access(path, F_OK) == 0 && !(h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
            snprintf(why, sizeof why, "%s", dlerror());
    }
    if (!h) {
        if (*why)
            snprintf(err, n, "unable to load the CUDA backend: %s", why);
        else
            snprintf(err, n, "built without the CUDA backend (no matrix-engine-cuda.so next to the engine or in %s)",
                     MATRIX_PKGLIBDIR);
        return -1;
    }
    backend_cuda_setup_fn setup = (backend_cuda_setup_fn)dlsym(h, BACKEND_CUDA_SETUP);
    if (!setup) {
        snprintf(err, n, "unable to load the CUDA backend: %s has no %s", path, BACKEND_CUDA_SETUP);
        return -1;
    }
    return setup(b, p, err, n);
}

/* Free every tensor's storage, the arena, the workspace and the graph. */
static void run_free(struct run *r, void *arena, size_t arena_bytes)
{
    graph *g = &r->g;
    for (int i = 0; i < g->nt; i++) {
        if (persistent(g->t[i].kind) && g->t[i].data)
            r->be.free(g->t[i].data, g->t[i].bytes);
        if (g->t[i].host)
            mem_free(g->t[i].host, g->t[i].bytes);
    }
    r->be.free(arena, arena_bytes);
    r->be.free(backend_ws, backend_ws_bytes);
    backend_ws = NULL;
    graph_free(g);
    r->be.fini();
}

/* ---- dump for the reference checks ------------------------------------------ */

struct dump {
    wfile w;
    int steps;
    float *losses;
};

static void dump_hook(struct run *r, int opi)
{
    struct dump *d = r->hook_ctx;
    graph *g = &r->g;
    op *o = &g->ops[opi];
    char name[GRAPH_NAME + 32];
    int mask = o->type == OP_DROPOUT ? o->out[1] : o->type == OP_ATTENTION ? o->out[2] : -1;
    if (mask >= 0) {
        snprintf(name, sizeof name, "mask.%s.%d", o->name, g->step);
        struct hview h;
        host_begin(r, mask, &h);
        tensor *t = &g->t[mask];
        weights_put_raw(&d->w, name, t->ndim, t->shape, t->data);
        host_end(r, mask, &h);
    }
}

/* weights_put through a host view */
static void put_tensor(struct run *r, wfile *w, int i, const char *name)
{
    struct hview h;
    host_begin(r, i, &h);
    weights_put(w, &r->g, i, name);
    host_end(r, i, &h);
}

static int dump_run(struct run *r, const struct opts *o)
{
    struct dump d;
    graph *g = &r->g;
    int steps = o->steps > 0 ? o->steps : 1;
    if (weights_open(&d.w, o->dump)) {
        fprintf(stderr, "matrix-engine: unable to open '%s'\n", o->dump);
        return 1;
    }
    for (int i = 0; i < g->nt; i++)
        if (g->t[i].kind == TK_INPUT)
            put_tensor(r, &d.w, i, NULL);
    for (int i = 0; i < g->nt; i++)
        if (g->t[i].kind == TK_PARAM || g->t[i].kind == TK_BUFFER) {
            char name[GRAPH_NAME + 8];
            snprintf(name, sizeof name, "init.%s", g->t[i].name);
            put_tensor(r, &d.w, i, name);
        }
    d.losses = calloc(steps, sizeof(float));
    mallocCheck(d.losses);
    /* the per-op hook records dropout masks; without masks a device backend
     * runs whole steps (so a dump also checks the CUDA Graph path) */
    int masks = 0;
    for (int i = 0; i < r->nrun; i++)
        masks |= g->ops[i].type == OP_DROPOUT || g->ops[i].type == OP_ATTENTION;
    r->hook = masks || r->be.host_visible ? dump_hook : NULL;
    r->hook_ctx = &d;
    for (int s = 0; s < steps; s++) {
        run_step(r);
        if (g->loss >= 0)
            d.losses[s] = read_scalar(r, g->loss);
        if (s == 0) {
            put_tensor(r, &d.w, g->output, "output");
            for (int i = 0; i < g->nt; i++)
                if (g->t[i].kind == TK_PGRAD)
                    put_tensor(r, &d.w, i, NULL);
        }
    }
    int64_t n = steps;
    if (g->loss >= 0)
        weights_put_raw(&d.w, "losses", 1, &n, d.losses);
    for (int i = 0; i < g->nt; i++)
        if (g->t[i].kind == TK_PARAM || g->t[i].kind == TK_BUFFER) {
            char name[GRAPH_NAME + 8];
            snprintf(name, sizeof name, "final.%s", g->t[i].name);
            put_tensor(r, &d.w, i, name);
        }
    free(d.losses);
    r->hook = NULL;
    if (weights_close(&d.w)) {
        fprintf(stderr, "matrix-engine: unable to write '%s'\n", o->dump);
        return 1;
    }
    return 0;
}

/* ---- main ------------------------------------------------------------------- */

static void add_ignored(char *buf, size_t n, const char *what)
{
    if (*buf)
        strncat(buf, ",", n - strlen(buf) - 1);
    strncat(buf, what, n - strlen(buf) - 1);
}

int main(int argc, char **argv)
{
    double t_start = measure_now();
    struct opts o;
    char ignored[512] = "", err[512] = "";
    long online = sysconf(_SC_NPROCESSORS_ONLN);

    memset(&o, 0, sizeof o);
    o.pt.model = "mnist_cnn";
    o.pt.batch = 64;
    o.pt.seq_len = 128;
    o.pt.gpus = 1;
    o.pt.threads = online > 0 ? (int)online : 1;
    o.seed = 1;
    o.m = (measure_cfg){.warmup_s = 0.2, .warmup_steps = -1, .min_time = 0.5,
                        .max_time = 5.0, .rel_ci = 0.02, .min_samples = 10};
    if (parse_flags(argc, argv, &o)) {
        fprintf(stderr, "usage: matrix-engine [flags] --result FILE (see --help)\n");
        return 2;
    }
    if (o.help) {
        usage(stdout);
        return 0;
    }
    if (o.list_models) {
        for (const model_desc *m = models; m->name; m++)
            printf("%-12s %s\n", m->name, m->about);
        return 0;
    }
    const model_desc *md = model_find(o.pt.model);
    if (!md) {
        fprintf(stderr, "matrix-engine: unknown model '%s' (see --list-models)\n", o.pt.model);
        return 2;
    }
    if (o.m.max_time < o.m.min_time)
        o.m.max_time = o.m.min_time;
    o.m.steps = o.steps;
    o.pt.seed = o.seed;

    /* the device: cuda when asked for, or auto with a GPU and the module */
    struct run r;
    memset(&r, 0, sizeof r);
    if (o.pt.device == DEV_CUDA || (o.pt.device == DEV_AUTO && access("/dev/nvidia0", F_OK) == 0)) {
        int asked = o.pt.device == DEV_CUDA;
        o.pt.device = DEV_CUDA;
        if (load_cuda(&r.be, &o.pt, err, sizeof err)) {
            if (asked)
                return finish_unsupported(&o, ignored, err);
            o.pt.device = DEV_CPU; /* auto: run on the cpu */
            err[0] = 0;
        }
    } else
        o.pt.device = DEV_CPU;
    if (o.pt.device == DEV_CPU)
        backend_cpu_setup(&r.be);
    active_be = &r.be;

    /* what cannot run here, what does not apply */
    if (o.pt.device == DEV_CUDA) {
        if (o.pt.gpus > 1)
            return finish_unsupported(&o, ignored, "--gpus > 1: data-parallel training over several GPUs is not implemented in the native engine");
        if (o.pt.syncbn)
            return finish_unsupported(&o, ignored, "SyncBN needs more than one GPU");
    } else if (o.pt.gpus > 1)
        return finish_unsupported(&o, ignored, "--gpus > 1 needs CUDA devices; the cpu device runs one process");
    if (o.pt.syncbn)
        return finish_unsupported(&o, ignored, "SyncBN needs more than one GPU");
    else if (o.pt.device == DEV_CPU && o.pt.precision == PREC_FP16)
        return finish_unsupported(&o, ignored, "fp16 is not implemented in the CPU backend");
    else if (o.pt.device == DEV_CPU && o.pt.precision == PREC_BF16)
        return finish_unsupported(&o, ignored,
                                  cpu_has("avx512_bf16") || cpu_has("amx_bf16")
                                      ? "bf16 is not implemented in the CPU backend (the CPU has avx512_bf16/amx_bf16)"
                                      : "bf16 needs avx512_bf16 or amx_bf16, which this CPU lacks");
    if (o.pt.device == DEV_CPU) {
        if (o.pt.precision == PREC_TF32)
            add_ignored(ignored, sizeof ignored, "precision");
        if (o.pt.cudnn_benchmark)
            add_ignored(ignored, sizeof ignored, "cudnn_benchmark");
        if (o.pt.compile >= COMPILE_REDUCE_OVERHEAD)
            add_ignored(ignored, sizeof ignored, "compile:cuda_graphs");
        if (o.pt.compile == COMPILE_MAX_AUTOTUNE)
            add_ignored(ignored, sizeof ignored, "compile:autotune");
    } else if (o.pt.threads != (online > 0 ? (int)online : 1))
        add_ignored(ignored, sizeof ignored, "threads");
    if (o.pt.train && o.pt.inference_mode)
        add_ignored(ignored, sizeof ignored, "inference_mode");
    if (!o.pt.train && o.pt.ema)
        add_ignored(ignored, sizeof ignored, "ema");

    /* build */
    if (r.be.init(o.pt.threads)) {
        fprintf(stderr, "matrix-engine: unable to start the %s backend\n", r.be.name);
        return 1;
    }
    graph *g = &r.g;
    graph_init(g);
    model_info info;
    memset(&info, 0, sizeof info);
    if (md->build(g, &o.pt, &info, err, sizeof err))
        return finish_unsupported(&o, ignored, err);
    if (o.pt.channels_last && !info.uses_channels_last)
        add_ignored(ignored, sizeof ignored, "channels_last");
    for (int i = 0; i < g->nops; i++) /* dropout streams follow --seed */
        g->ops[i].seed = rng_mix(g->ops[i].seed ^ (o.pt.seed * 0x9e3779b97f4a7c15ULL));
    for (int i = 0; i < g->nt; i++) {
        tensor *t = &g->t[i];
        if (!persistent(t->kind))
            continue;
        t->data = mem_alloc(t->bytes); /* host; moved to a device after the passes */
        if (!t->data)
            return finish_oom(&o, t->bytes, t->name);
        fill_tensor(t, name_key(o.pt.seed, t->name));
    }
    if (o.weights && weights_load(g, o.weights, err, sizeof err)) {
        fprintf(stderr, "matrix-engine: %s\n", err);
        return 1;
    }

    /* passes */
    int folded = 0, fused = 0;
    if (!o.pt.train && o.pt.eval && o.pt.compile != COMPILE_NONE)
        folded = pass_fold_bn(g);
    if (o.pt.compile != COMPILE_NONE)
        fused = pass_fuse(g, o.pt.train || !o.pt.inference_mode); /* autograd on: keep pre-activations */
    if (o.pt.train) {
        info.optim.ema = o.pt.ema;
        if (o.lr > 0)
            info.optim.lr = o.lr;
        info.optim.ema_decay = 0.9998f;
        pass_autodiff(g, &info.optim);
        /* state the backend keeps from a forward op for its backward */
        for (int i = g->nfwd; i < g->nops; i++) {
            op *bo = &g->ops[i];
            size_t sb = bo->fwd >= 0 && r.be.saved ? r.be.saved(g, &g->ops[bo->fwd]) : 0;
            if (sb == 0 || g->ops[bo->fwd].out[3] >= 0)
                continue;
            char name[GRAPH_NAME + 8];
            snprintf(name, sizeof name, "%s.saved", g->ops[bo->fwd].name);
            int t = graph_t1(g, name, TK_ACT, (int64_t)(sb / sizeof(float)));
            g->ops[bo->fwd].out[3] = t;
            g->ops[i].in[3] = t;
        }
    }
    /* inference with inference_mode off runs as with autograd on: what a
     * backward would read stays alive to the end of the step (PyTorch's
     * saved tensors), the rest is reused as soon as it is dead */
    char *saved = NULL;
    int nsaved = 0;
    if (!o.pt.train && !o.pt.inference_mode) {
        saved = calloc(g->nt + 1, 1);
        mallocCheck(saved);
        nsaved = pass_saved(g, saved);
    }
    r.nrun = o.pt.train ? g->nops : g->nfwd;
    for (int i = 0; i < r.nrun; i++)
        if (!r.be.ops[g->ops[i].type]) {
            snprintf(err, sizeof err, "the %s backend has no kernel for %s (op '%s' of %s)", r.be.name,
                     graph_op_name(g->ops[i].type), g->ops[i].name, o.pt.model);
            free(saved);
            return finish_unsupported(&o, ignored, err);
        }
    if (!r.be.host_visible && (o.pt.precision == PREC_FP16 || o.pt.precision == PREC_BF16))
        pass_precision(g, o.pt.precision == PREC_FP16 ? DT_F16 : DT_BF16);
    size_t arena_bytes = pass_plan(g, 1, saved);
    free(saved);
    for (int i = 0; i < g->nt; i++) { /* state made by the passes */
        tensor *t = &g->t[i];
        if (persistent(t->kind) && !t->data) {
            t->data = mem_alloc(t->bytes);
            if (!t->data)
                return finish_oom(&o, t->bytes, t->name);
            if (strncmp(t->name, "ema.", 4) == 0) {
                int src = graph_find(g, t->name + 4);
                memcpy(t->data, g->t[src].data, t->bytes);
            }
        }
    }
    if (!r.be.host_visible) { /* persistent tensors the run uses go to the device */
        char *used = calloc(g->nt + 1, 1);
        mallocCheck(used);
        for (int i = 0; i < r.nrun; i++) {
            for (int k = 0; k < GRAPH_MAX_IN; k++)
                if (g->ops[i].in[k] >= 0)
                    used[g->ops[i].in[k]] = 1;
            for (int k = 0; k < GRAPH_MAX_OUT; k++)
                if (g->ops[i].out[k] >= 0)
                    used[g->ops[i].out[k]] = 1;
        }
        if (g->loss >= 0)
            used[g->loss] = 1;
        for (int i = 0; i < g->nt; i++) {
            tensor *t = &g->t[i];
            if (!persistent(t->kind) || !t->data)
                continue;
            t->host = t->data;
            t->data = NULL;
            if (!used[i])
                continue; /* e.g. weights folded into others: read on the host only */
            t->data = r.be.alloc(t->bytes);
            if (!t->data)
                return finish_oom(&o, t->bytes, t->name);
            r.be.upload(t->data, t->host, t->bytes);
        }
        free(used);
    }
    char *arena = r.be.alloc(arena_bytes);
    if (!arena)
        return finish_oom(&o, arena_bytes, "the activation arena");
    for (int i = 0; i < g->nt; i++)
        if (!persistent(g->t[i].kind) && !g->t[i].dead)
            g->t[i].data = arena + g->t[i].offset;
    size_t ws = 0;
    double flops = 0;
    for (int i = 0; i < r.nrun; i++) {
        size_t w = r.be.workspace(g, &g->ops[i]);
        ws = w > ws ? w : ws;
        flops += g->ops[i].flops;
    }
    backend_ws_bytes = ws;
    backend_ws = r.be.alloc(ws);
    if (!backend_ws)
        return finish_oom(&o, ws, "the kernel workspace");
    if (r.be.prepare) {
        int prc = r.be.prepare(g, r.nrun);
        if (prc == -1)
            return finish_oom(&o, r.be.oom_bytes(), "the backend's buffers (weight copies, library workspace)");
        if (prc) {
            fprintf(stderr, "matrix-engine: the %s backend failed to prepare the plan\n", r.be.name);
            return 1;
        }
    }

    if (o.dump) {
        int drc = dump_run(&r, &o);
        run_free(&r, arena, arena_bytes);
        return drc;
    }

    if (getenv("MATRIX_ENGINE_PROFILE")) {
        prof_s = calloc(r.nrun, sizeof *prof_s);
        mallocCheck(prof_s);
    }

    /* measure */
    measure_result mr;
    if (r.be.step_seconds && !prof_s)
        o.m.step_seconds = r.be.step_seconds;
    double t_setup = measure_now() - t_start;
    if (measure_run(&o.m, run_step, &r, &mr)) {
        fprintf(stderr, "matrix-engine: a step failed\n");
        return 1;
    }
    if (o.save_weights) {
        struct hview *hv = calloc(g->nt + 1, sizeof *hv);
        mallocCheck(hv);
        for (int i = 0; i < g->nt; i++)
            if (g->t[i].kind == TK_PARAM || g->t[i].kind == TK_BUFFER)
                host_begin(&r, i, &hv[i]);
        int wrc = weights_save(g, o.save_weights);
        for (int i = 0; i < g->nt; i++)
            if (g->t[i].kind == TK_PARAM || g->t[i].kind == TK_BUFFER)
                host_end(&r, i, &hv[i]);
        free(hv);
        if (wrc) {
            fprintf(stderr, "matrix-engine: unable to write '%s'\n", o.save_weights);
            return 1;
        }
    }

    if (prof_s) {
        int steps = g->step;
        fprintf(stderr, "%-4s %-16s %-28s %12s\n", "op", "type", "name", "ms/step");
        for (int i = 0; i < r.nrun; i++)
            fprintf(stderr, "%-4d %-16s %-28s %12.4f\n", i, graph_op_name(g->ops[i].type),
                    g->ops[i].name, prof_s[i] * 1e3 / steps);
    }

    /* result */
    struct record rr = {0};
    double step_s = mr.median_ms / 1e3;
    double mhz = 0;
    char buf[256];
    cpuinfo("cpu MHz", buf, sizeof buf);
    mhz = atof(buf);
    double per_cycle = cpu_has("avx512f") ? 64 : cpu_has("fma") ? 32 : 8;
    double peak = o.pt.threads * mhz * 1e6 * per_cycle;
    int on_gpu = o.pt.device == DEV_CUDA;
    if (on_gpu)
        peak = r.be.peak_flops ? r.be.peak_flops(o.pt.precision) : 0;
    rec(&rr, "status", "ok");
    rec_point(&rr, &o);
    rec(&rr, "device", "%s", on_gpu ? "cuda" : "cpu");
    rec(&rr, "ignored", "%s", ignored);
    rec(&rr, "throughput", "%.6g", o.pt.batch / step_s);
    rec(&rr, "unit", "samples/s");
    rec(&rr, "step_ms", "%.6g", mr.median_ms);
    rec(&rr, "step_ms_lo", "%.6g", mr.lo_ms);
    rec(&rr, "step_ms_hi", "%.6g", mr.hi_ms);
    rec(&rr, "step_ms_mean", "%.6g", mr.mean_ms);
    rec(&rr, "samples", "%d", mr.samples);
    rec(&rr, "ci_met", "%d", mr.ci_met);
    rec(&rr, "timed_s", "%.6g", mr.total_s);
    rec(&rr, "startup_s", "%.6g", mr.first_step_t - t_start);
    rec(&rr, "setup_s", "%.6g", t_setup);
    rec(&rr, "peak_mem_bytes", "%zu", on_gpu ? r.be.peak() : mem_peak());
    if (on_gpu)
        rec(&rr, "host_peak_mem_bytes", "%zu", mem_peak());
    rec(&rr, "arena_bytes", "%zu", arena_bytes);
    if (!o.pt.train)
        rec(&rr, "saved_activations", "%d", nsaved);
    rec(&rr, "workspace_bytes", "%zu", ws);
    rec(&rr, "flops_per_step", "%.6g", flops);
    rec(&rr, "tflops", "%.6g", flops / step_s / 1e12);
    if (!on_gpu)
        rec(&rr, "cpu_mhz", "%.0f", mhz);
    rec(&rr, "online_cpus", "%ld", online);
    rec(&rr, on_gpu ? "peak_tflops" : "peak_tflops_est", "%.6g", peak / 1e12);
    rec(&rr, "pct_peak", "%.4g", peak > 0 ? 100.0 * flops / step_s / peak : 0.0);
    rec(&rr, "ops_per_step", "%d", r.nrun);
    rec(&rr, "bn_folded", "%d", folded);
    rec(&rr, "ops_fused", "%d", fused);
    /* training: lifetimes of the step; infer: reuse (inference_mode on) or
     * autograd-saved (off: what a backward would read kept to the end) */
    rec(&rr, "memory_plan", "%s",
        o.pt.train ? "training" : o.pt.inference_mode ? "reuse" : "autograd-saved");
    if (g->loss >= 0)
        rec(&rr, "loss", "%.6g", read_scalar(&r, g->loss));
    if (on_gpu) {
        rec(&rr, "timing", "cuda_events");
        rec(&rr, "precision_storage", "%s", o.pt.precision == PREC_FP16 ? "f16 activations, f32 master weights"
                                            : o.pt.precision == PREC_BF16 ? "bf16 activations, f32 master weights"
                                                                          : "f32");
        /* the backend's own lines: gpu, driver, library versions, choices */
        const char *inf = r.be.info ? r.be.info() : "";
        while (*inf) {
            const char *nl = strchr(inf, '\n'), *eq = strchr(inf, '=');
            size_t len = nl ? (size_t)(nl - inf) : strlen(inf);
            if (eq && eq < inf + len) {
                char key[128];
                snprintf(key, sizeof key, "%.*s", (int)(eq - inf), inf);
                rec(&rr, key, "%.*s", (int)(len - (eq - inf) - 1), eq + 1);
            }
            inf += len + (nl ? 1 : 0);
        }
    } else {
#ifdef HAVE_CBLAS
        rec(&rr, "blas", "%s", openblas_get_config ? openblas_get_config() : "cblas");
#else
        rec(&rr, "blas", "none");
#endif
    }
    int rc = rec_write(&rr, o.result) ? 1 : 0;
    if (!o.result)
        fwrite(rr.buf, 1, rr.len, stdout);
    free(rr.buf);
    free(prof_s);
    run_free(&r, arena, arena_bytes);
    return rc;
}
