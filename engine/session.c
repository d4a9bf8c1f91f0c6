/* session.c - one point from its options to its result (session.h): the
 * steps main() calls, and what they share (running a step, filling tensors,
 * host views of device tensors, the CUDA module, the reference dump). */
#include "config.h"
#include "session.h"
#include "check.h"
#include "comm.h"
#include "cpu/pool.h"
#include "engine.h"
#include "knobs.h"
#include "mem.h"
#include "outfile.h"
#include "passes.h"
#include "profile.h"
#include "record.h"
#include "rng.h"
#include "weights.h"
#include "flags.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef HAVE_CBLAS
#include <cblas.h>
/* OpenBLAS extensions: absent from other CBLAS libraries */
#pragma weak openblas_get_config
#endif

/* ---- running ---------------------------------------------------------------- */

/* per op index, seconds: --profile (the steps after the timed ones) or
 * MATRIX_ENGINE_PROFILE (the timed steps, a table on stderr); [nrun] is
 * the input pipeline (--data) */
static double *prof_s;
static int prof_timed; /* MATRIX_ENGINE_PROFILE=1: prof_s over the timed steps */

/* MATRIX_ENGINE_DIE_RANK=K[:exit|:skew], a test knob: rank K kills itself
 * with SIGKILL at its third step, or with :exit ends there with exit
 * status 7 (the data-parallel tests of a rank that dies or fails: the
 * launcher must take the others down; tests/engine/ddp_cpu.sh,
 * tests/engine/launch.sh), or with :skew adds 1 to the first element of its
 * first parameter there (the check that every rank ends with the same
 * weights must then fail the point). The rank says so on stderr first. */
static void maybe_die(struct run *r)
{
    static int die = -2, mode;
    const graph *g = &r->g;
    char err[256];
    if (die == -2 && knob_die_rank(&die, &mode, err, sizeof err)) /* checked at the start */
        BUG("%s", err);
    if (die < 0 || !engine_comm || engine_comm->rank != die || g->step != 3)
        return;
    static const char *const what[] = {"kills itself with SIGKILL", "exits 7", "changes a weight"};
    fprintf(stderr, "matrix-engine: MATRIX_ENGINE_DIE_RANK=%d%s: rank %d %s at step 3 (test knob)\n", die,
            mode == 1 ? ":exit" : mode == 2 ? ":skew" : "", die, what[mode]);
    if (mode == 1)
        _exit(7);
    if (mode == 0)
        raise(SIGKILL);
    for (int i = 0; i < g->nt; i++) /* the first f32 parameter (master weights are f32) */
        if (g->t[i].kind == TK_PARAM && g->t[i].dtype == DT_F32 && g->t[i].data) {
            float v;
            r->be.download(&v, g->t[i].data, sizeof v);
            v += 1.0f;
            r->be.upload(g->t[i].data, &v, sizeof v);
            return;
        }
    BUG("MATRIX_ENGINE_DIE_RANK=%d:skew: no f32 parameter", die);
}

/* The pinned upload: the next batch made into the ring's next slot and its
 * copy to the device queued (stage_send); a step takes it (data_feed). */
static void data_make(struct run *r)
{
    int slot = data_ring_make(&r->ring);
    if (slot < 0)
        BUG("--data: both staging slots hold batches no step took");
    r->be.stage_reuse(slot); /* the copy out of the slot's last batch is done */
    data_fill_slot(r->data, slot, r->stage_host, r->stage_index);
    r->be.stage_send(slot);
}

/* The input pipeline (--data): the next batch into the input tensors,
 * directly on the cpu, through the host staging buffers and a copy on a
 * device (pageable), or from the staging ring (pinned: data_make). */
static void data_feed(struct run *r)
{
    data_set *d = r->data;
    tensor *x = &r->g.t[d->x], *y = &r->g.t[d->y];
    if (r->staged) { /* the batch made during the last step (or now) */
        if (r->ring.made == r->ring.taken)
            data_make(r);
        int slot = data_ring_take(&r->ring);
        if (slot < 0)
            BUG("--data: no batch made before the step");
        void *dst[2] = {x->data, y->data};
        r->be.stage_take(slot, dst);
        data_took_slot(d, slot, r->stage_index);
        if (!y->data && y->host) /* used by no op (infer): the dump reads the host copy */
            memcpy(y->host, r->stage_host[2 * slot + 1], y->bytes);
        return;
    }
    int32_t *labels = r->data_direct && y->data ? y->data : r->stage_y;
    data_next(d, r->data_direct ? x->data : r->stage_x, labels);
    if (!r->data_direct)
        r->be.upload(x->data, r->stage_x, x->bytes);
    if (labels != r->stage_y)
        return;
    if (y->data)
        r->be.upload(y->data, r->stage_y, y->bytes);
    else if (y->host) /* used by no op (infer): the dump reads the host copy */
        memcpy(y->host, r->stage_y, y->bytes);
}

/* be.step's during: the next batch made while the step runs. */
static void data_ahead(void *ctx) { data_make(ctx); }

static int run_step(void *ctx)
{
    struct run *r = ctx;
    graph *g = &r->g;
    g->step++;
    maybe_die(r);
    if (r->data) {
        double t0 = prof_s ? measure_now() : 0;
        data_feed(r);
        if (prof_s)
            prof_s[r->nrun] += measure_now() - t0;
    }
    if (r->be.step && !r->hook && !prof_s) /* pinned --data: the next batch while this step runs */
        return r->be.step(g, r->nrun, r->staged ? data_ahead : NULL, r);
    if (r->be.begin_step)
        r->be.begin_step();
    for (int i = 0; i < r->nrun; i++) {
        op *o = &g->ops[i];
        double t0 = 0;
        if (prof_s && r->be.prof_mark) /* device events around the op */
            r->be.prof_mark(i, 0);
        else if (prof_s) {
            r->be.sync(); /* what came before is not the op's */
            t0 = measure_now();
        }
        r->be.ops[o->type](g, o);
        if (prof_s && r->be.prof_mark)
            r->be.prof_mark(i, 1);
        else if (prof_s) {
            r->be.sync();
            prof_s[i] += measure_now() - t0;
        }
        if (r->hook)
            r->hook(r, i);
    }
    r->be.sync();
    if (prof_s && r->be.prof_read)
        r->be.prof_read(prof_s, r->nrun);
    return 0;
}

/* INIT_POSITIONS: row r of t (B, M) holds M distinct positions in [0, T)
 * (T = init_a), ascending: the first M of a Fisher-Yates shuffle of 0..T-1
 * drawn from the row's own part of the stream (global row (base / M + r),
 * draws at row T + j), so a rank's rows are those of the global batch. */
static void fill_positions(tensor *t, uint64_t key, int64_t base)
{
    int64_t M = t->shape[1], T = (int64_t)t->init_a, rows = M ? graph_numel(t) / M : 0;
    int32_t *q = t->data, *perm = malloc((size_t)(T > 0 ? T : 1) * sizeof *perm);
    mallocCheck(perm);
    for (int64_t r = 0; r < rows; r++) {
        int64_t row = (M ? base / M : 0) + r;
        for (int64_t j = 0; j < T; j++)
            perm[j] = (int32_t)j;
        for (int64_t j = 0; j < M && j < T; j++) {
            int64_t k = j + (int64_t)(rng_uniform(key, row * T + j) * (double)(T - j));
            k = k >= T ? T - 1 : k;
            int32_t v = perm[j];
            perm[j] = perm[k];
            perm[k] = v;
        }
        for (int64_t a = 1; a < M; a++) /* insertion sort: M is small */
            for (int64_t b = a; b > 0 && perm[b] < perm[b - 1]; b--) {
                int32_t v = perm[b];
                perm[b] = perm[b - 1];
                perm[b - 1] = v;
            }
        memcpy(q + r * M, perm, (size_t)M * sizeof *q);
    }
    free(perm);
}

/* base: the index of the first element in the stream of key (a rank's
 * inputs are its slice of the global batch's) */
static void fill_values(tensor *t, uint64_t key, int64_t base)
{
    int64_t n = graph_numel(t);
    float *f = t->data;
    int32_t *q = t->data;
    switch (t->init) {
    case INIT_UNIFORM:
        for (int64_t i = 0; i < n; i++)
            f[i] = (2.0f * rng_uniform(key, base + i) - 1.0f) * t->init_a;
        break;
    case INIT_NORMAL: /* Box-Muller, both values of each pair */
        for (int64_t i = 0; i < n; i += 2) {
            float u1 = rng_uniform(key, base + i) + 0x1p-25f, u2 = rng_uniform(key, base + i + 1);
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
            int v = (int)(rng_uniform(key, base + i) * t->init_a);
            q[i] = v >= (int)t->init_a ? (int)t->init_a - 1 : v;
        }
        break;
    case INIT_POSITIONS:
        fill_positions(t, key, base);
        break;
    default:
        break;
    }
}

/* Fill t as its init rule says, in logical (N, C, H, W) order whatever the
 * layout, so that NCHW and NHWC runs of a model see the same input. */
static void fill_tensor(tensor *t, uint64_t key, int64_t base)
{
    if (t->layout != LAYOUT_NHWC || t->ndim != 4 || t->init == INIT_NONE) {
        fill_values(t, key, base);
        return;
    }
    int64_t N = t->shape[0], C = t->shape[1], HW = t->shape[2] * t->shape[3];
    float *mem = t->data, *logical = malloc(t->bytes);
    mallocCheck(logical);
    t->data = logical;
    fill_values(t, key, base);
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

/* grad.flat and its buckets: storage of the data-parallel gradients, not
 * gradients of their own */
static int dp_buffer(const tensor *t)
{
    return strcmp(t->name, "grad.flat") == 0 || strncmp(t->name, "grad.bucket.", 12) == 0;
}

/* The loss of the step: with ranks, the mean of the ranks' losses (each the
 * mean over its slice), which is the loss of the global batch. */
static float session_loss(struct run *r)
{
    float v = read_scalar(r, r->g.loss);
    if (engine_comm && engine_comm->size > 1) {
        double x = v;
        if (engine_comm->allreduce(&x, 1, COMM_F64, COMM_SUM) == 0)
            v = (float)(x / engine_comm->size);
    }
    return v;
}

/* ---- the CUDA backend module ------------------------------------------------------- */

#ifndef MATRIX_PKGLIBDIR
#define MATRIX_PKGLIBDIR "/usr/local/lib/matrix"
#endif

/* The path of module name as the engine loads it: $env when set, else next
 * to this executable when there, else in MATRIX_PKGLIBDIR. 1 when set from
 * $env. */
static int module_path(const char *env_name, const char *name, char *path, size_t n)
{
    char self[4096];
    const char *env = getenv(env_name);
    if (env && *env) {
        snprintf(path, n, "%s", env);
        return 1;
    }
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    char *slash;
    path[0] = 0;
    if (k > 0) {
        self[k] = 0;
        if ((slash = strrchr(self, '/'))) {
            *slash = 0;
            snprintf(path, n, "%s/%s", self, name);
        }
    }
    if (!path[0] || access(path, F_OK) != 0)
        snprintf(path, n, "%s/%s", MATRIX_PKGLIBDIR, name);
    return 0;
}

/* Load matrix-engine-cuda.so ($MATRIX_ENGINE_CUDA, else next to this
 * executable, else the installed one) and let it fill b. 0 on success; else
 * -1 with the reason in err. Only --device cuda gets here, so a CPU point
 * never maps the CUDA libraries. */
static int load_cuda(backend *b, const point *p, char *err, size_t n)
{
    char path[4200], why[1024] = "";
    void *h = NULL;
    if (module_path("MATRIX_ENGINE_CUDA", "matrix-engine-cuda.so", path, sizeof path)) {
        if (!(h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
            snprintf(why, sizeof why, "%s", dlerror());
    } else if (access(path, F_OK) == 0 && !(h = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
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
        /* the path cut to what err holds next to the rest of the message */
        snprintf(err, n, "unable to load the CUDA backend: %.*s has no %s", (int)(n > 80 ? n - 80 : 1), path,
                 BACKEND_CUDA_SETUP);
        return -1;
    }
    return setup(b, p, err, n);
}

/* Free every tensor's storage, the arena, the workspace and the graph. */
static void run_free(struct run *r, void *arena, size_t arena_bytes)
{
    graph *g = &r->g;
    for (int i = 0; i < g->nt; i++) {
        if (g->t[i].alias >= 0) /* a view: its storage is the aliased tensor's */
            continue;
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
    float *skipped; /* 1 where loss scaling skipped the step's update */
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
        float *m = NULL;
        if (o->type == OP_ATTENTION && g->t[o->out[1]].ndim == 3) {
            /* flash form: keep flags; written as the probabilities form's
             * mask (0 or 1 / (1 - p), the CPU's), so the masks compare bit for bit */
            size_t n = (size_t)graph_numel(t);
            const float *k = t->data;
            float sc = 1.0f / (1.0f - o->p);
            m = malloc((n ? n : 1) * sizeof *m);
            mallocCheck(m);
            for (size_t i = 0; i < n; i++)
                m[i] = k[i] != 0.0f ? sc : 0.0f;
        }
        weights_put_raw(&d->w, name, t->ndim, t->shape, m ? m : t->data);
        free(m);
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

/* --data: step's batch: input.STEP, target.STEP and data_index.STEP (the
 * images' indices in the file, as floats) */
static void dump_batch(struct run *r, wfile *w, int step)
{
    data_set *d = r->data;
    char name[64];
    snprintf(name, sizeof name, "input.%d", step);
    put_tensor(r, w, d->x, name);
    snprintf(name, sizeof name, "target.%d", step);
    put_tensor(r, w, d->y, name);
    float *idx = malloc((size_t)d->batch * sizeof *idx);
    mallocCheck(idx);
    for (int b = 0; b < d->batch; b++)
        idx[b] = (float)d->index[b];
    int64_t n = d->batch;
    snprintf(name, sizeof name, "data_index.%d", step);
    weights_put_raw(w, name, 1, &n, idx);
    free(idx);
}

/* Every parameter and buffer of the model into the dump, named PREFIX.NAME
 * (init.conv1.weight before the first step, final.conv1.weight after the
 * last); after the last, the EMA of each (--ema) too: final.ema.NAME. */
static void put_params(struct run *r, wfile *w, const char *prefix)
{
    graph *g = &r->g;
    int last = strcmp(prefix, "final") == 0;
    for (int i = 0; i < g->nt; i++)
        if (g->t[i].kind == TK_PARAM || g->t[i].kind == TK_BUFFER ||
            (last && g->t[i].kind == TK_STATE && strncmp(g->t[i].name, "ema.", 4) == 0)) {
            char name[GRAPH_NAME + 8];
            snprintf(name, sizeof name, "%s.%s", prefix, g->t[i].name);
            put_tensor(r, w, i, name);
        }
}

static int dump_run(struct run *r, const struct opts *o)
{
    struct dump d;
    graph *g = &r->g;
    int steps = o->steps > 0 ? o->steps : 1;
    char path[4200];
    int rank = engine_comm ? engine_comm->rank : 0;
    /* ranks other than 0 run the same steps and write a private file,
     * removed at the end: rank 0's dump is the run's */
    if (rank)
        snprintf(path, sizeof path, "%s.rank%d", o->dump, rank);
    else
        snprintf(path, sizeof path, "%s", o->dump);
    char err[512];
    if (weights_open(&d.w, path, err, sizeof err)) {
        fprintf(stderr, "matrix-engine: unable to write the dump: %s\n", err);
        return 1;
    }
    for (int i = 0; i < g->nt; i++) /* --data: the inputs of every step, below */
        if (g->t[i].kind == TK_INPUT && !r->data)
            put_tensor(r, &d.w, i, NULL);
    put_params(r, &d.w, "init");
    d.losses = calloc(steps, sizeof(float));
    mallocCheck(d.losses);
    d.skipped = calloc(steps, sizeof(float));
    mallocCheck(d.skipped);
    /* the updates loss scaling skipped (fp16 on the GPU): a trajectory
     * compared with one that never skips pairs the steps by the updates
     * applied before them (tests/gpu/compare_dumps.py) */
    double skips = r->be.steps_skipped ? r->be.steps_skipped() : -1.0;
    /* the per-op hook records dropout masks; without masks a device backend
     * runs whole steps (so a dump also checks the CUDA Graph path). An
     * attention op has a mask only with dropout (out[2]): BERT with --eval
     * on has none, and its dumps must go through the graph too */
    int masks = graph_draws_masks(g, r->nrun);
    r->hook = masks || r->be.host_visible ? dump_hook : NULL;
    r->hook_ctx = &d;
    for (int s = 0; s < steps; s++) {
        run_step(r);
        if (r->data)
            dump_batch(r, &d.w, s + 1);
        if (g->loss >= 0)
            d.losses[s] = session_loss(r);
        if (skips >= 0.0) {
            double now = r->be.steps_skipped();
            d.skipped[s] = (float)(now - skips);
            skips = now;
        }
        if (s == 0) {
            put_tensor(r, &d.w, g->output, "output");
            for (int i = 0; i < g->nt; i++)
                if (g->t[i].kind == TK_PGRAD && !dp_buffer(&g->t[i]))
                    put_tensor(r, &d.w, i, NULL);
        }
    }
    int64_t n = steps;
    if (g->loss >= 0)
        weights_put_raw(&d.w, "losses", 1, &n, d.losses);
    if (skips >= 0.0)
        weights_put_raw(&d.w, "skipped", 1, &n, d.skipped);
    put_params(r, &d.w, "final");
    free(d.losses);
    free(d.skipped);
    r->hook = NULL;
    if (weights_close(&d.w, err, sizeof err)) {
        fprintf(stderr, "matrix-engine: unable to write the dump: %s\n", err);
        return 1;
    }
    if (rank)
        unlink(path);
    return 0;
}


/* ---- the steps ------------------------------------------------------------------ */

/* The model an unknown name most likely meant: the one within two edits
 * (one for names of four characters or fewer) when only one is that near,
 * else the one the name begins ("mnist": mnist_cnn) when only one does;
 * NULL when none stands out ("resnet": resnet18 and resnet50). */
static const char *model_near(const char *name)
{
    const char *best = NULL, *prefix = NULL;
    size_t best_d = (size_t)-1, len = strlen(name), max_d = len <= 4 ? 1 : 2;
    int ties = 0, prefixes = 0;
    if (!len)
        return NULL;
    for (const model_desc *m = models; m->name; m++) {
        size_t d = flags_edit_distance(name, m->name);
        if (d < best_d)
            best_d = d, best = m->name, ties = 0;
        else if (d == best_d)
            ties++;
        if (strncmp(m->name, name, len) == 0)
            prefix = m->name, prefixes++;
    }
    if (best && best_d <= max_d && !ties)
        return best;
    return prefixes == 1 ? prefix : NULL;
}

/* --version: the version, then the build configuration (configure's
 * summary) and where the modules would be loaded from. */
static void print_version(FILE *f)
{
    char path[4200];
    fprintf(f, "matrix-engine %s\nbuild configuration:\n", PACKAGE_VERSION);
    fprintf(f, "  CUDA backend  %s", MATRIX_BUILD_CUDA);
#ifdef HAVE_CUDA
    module_path("MATRIX_ENGINE_CUDA", "matrix-engine-cuda.so", path, sizeof path);
    fprintf(f, ", loaded for --device cuda from %s%s", path, access(path, F_OK) ? " (missing)" : "");
#endif
    fprintf(f, "\n  cuDNN         %s\n  NCCL          %s\n", MATRIX_BUILD_CUDNN, MATRIX_BUILD_NCCL);
    fprintf(f, "  BLAS          %s\n  MPI           %s", MATRIX_BUILD_BLAS, MATRIX_BUILD_MPI);
#ifdef HAVE_MPI
    module_path("MATRIX_ENGINE_MPI", "matrix-engine-mpi.so", path, sizeof path);
    fprintf(f, ", loaded for ranks of MATRIX_ENGINE_LAUNCH=mpirun from %s%s", path,
            access(path, F_OK) ? " (missing)" : "");
#endif
    fprintf(f, "\n  ranks         --gpus N > 1: started by the local launcher over shared memory "
            "(MATRIX_ENGINE_LAUNCH=auto|local), or by mpirun (=mpirun)");
    fprintf(f, "\n  CPU kernels   %s\n", MATRIX_BUILD_ARCH);
    fprintf(f, "  --data files  %s\n", data_formats());
    fprintf(f, "  compiler      %s\n  CFLAGS        %s\n", MATRIX_BUILD_CC, MATRIX_BUILD_CFLAGS);
}

int session_flags(struct session *s, int argc, char **argv)
{
    struct opts *o = &s->o;
    s->online = sysconf(_SC_NPROCESSORS_ONLN);
    flags_defaults(o);
    if (flags_parse(argc, argv, o)) {
        fprintf(stderr, "usage: matrix-engine [flags] --result FILE (see --help)\n");
        if (o->result) /* read before the bad flag: no earlier run's record is left to be taken for this one's */
            out_forget(o->result);
        return 2;
    }
    if (o->help) {
        flags_usage(stdout);
        return 0;
    }
    if (o->version) {
        print_version(stdout);
        return 0;
    }
    if (o->list_models) {
        for (const model_desc *m = models; m->name; m++)
            printf("%-12s %s\n", m->name, m->about);
        return 0;
    }
    /* the files the point writes, before anything runs: a point that cannot
     * write its result must not run for minutes to find out */
    const struct { const char *flag, *path; int parent_made; } outs[] = {
        {"result", o->result, 0}, {"save-weights", o->save_weights, 0}, {"dump", o->dump, 0},
        {"profile", o->profile, 1}};
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++)
        if (outs[i].path && out_check(outs[i].path, outs[i].parent_made, s->err, sizeof s->err)) {
            fprintf(stderr, "matrix-engine: --%s: %s\n", outs[i].flag, s->err);
            return 2;
        }
    /* two outputs at one path: the later write replaced the earlier, silently */
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++)
        for (size_t j = i + 1; outs[i].path && j < sizeof outs / sizeof outs[0]; j++)
            if (outs[j].path && out_same(outs[i].path, outs[j].path)) {
                fprintf(stderr, "matrix-engine: --%s and --%s name the same file '%s': one would replace the "
                        "other\n", outs[i].flag, outs[j].flag, outs[j].path);
                return 2;
            }
    /* an earlier run's record at --result goes now: a point that fails
     * (a refused knob, a crash, a kill) leaves no status=ok of another run */
    if (o->result && !comm_is_rank())
        out_forget(o->result);
    if (!(s->md = model_find(o->pt.model))) {
        const char *near = model_near(o->pt.model);
        if (near)
            fprintf(stderr, "matrix-engine: unknown model '%s' (did you mean '%s'? see --list-models)\n",
                    o->pt.model, near);
        else
            fprintf(stderr, "matrix-engine: unknown model '%s' (see --list-models)\n", o->pt.model);
        return 2;
    }
    /* the MATRIX_ENGINE_* knobs, the CUDA backend's too, before anything runs */
    if (knobs_check(s->err, sizeof s->err)) {
        fprintf(stderr, "matrix-engine: %s\n", s->err);
        return 2;
    }
    return SESSION_GO;
}

int session_device(struct session *s)
{
    struct opts *o = &s->o;
    struct run *r = &s->r;
    if (o->pt.device == DEV_CUDA || (o->pt.device == DEV_AUTO && access("/dev/nvidia0", F_OK) == 0)) {
        int asked = o->pt.device == DEV_CUDA;
        o->pt.device = DEV_CUDA;
        if (load_cuda(&r->be, &o->pt, s->err, sizeof s->err)) {
            if (asked)
                return finish_unsupported(o, s->ignored, s->err);
            o->pt.device = DEV_CPU; /* auto: run on the cpu, and say why (it was silent) */
            snprintf(s->device_fallback, sizeof s->device_fallback, "a GPU is present (/dev/nvidia0) but %s",
                     s->err);
            fprintf(stderr, "matrix-engine: --device auto: %s: the point runs on the cpu\n", s->device_fallback);
            s->err[0] = 0;
        }
    } else
        o->pt.device = DEV_CPU;
    if (o->pt.device == DEV_CPU)
        backend_cpu_setup(&r->be);
    record_backend(&r->be);
    return SESSION_GO;
}

int session_ranks(struct session *s, int argc, char **argv)
{
    struct opts *o = &s->o;
    /* MATRIX_ENGINE_DP=1: the data-parallel path even for one rank (the
     * checks compare it with the plain path) */
    int dp = o->pt.gpus > 1 || knob_get(KNOB_DP, s->err, sizeof s->err) == 1, die, by_exit;
    if (knob_die_rank(&die, &by_exit, s->err, sizeof s->err))
        BUG("%s", s->err); /* checked by session_flags */
    if (die >= 0 && (!dp || die >= o->pt.gpus)) { /* a test that wants a rank to die gets one, or stops */
        fprintf(stderr, "matrix-engine: MATRIX_ENGINE_DIE_RANK=%d: %s\n", die,
                dp ? "no such rank (ranks are numbered from 0 to --gpus - 1)"
                   : "no ranks to end (--gpus 1 without MATRIX_ENGINE_DP=1 runs one process)");
        return 2;
    }
    if (!dp)
        return SESSION_GO;
    if (!comm_is_rank()) { /* the launcher (local or mpirun) runs the ranks, rank 0 writes */
        int rc = comm_launch(argc, argv, o->pt.gpus, s->err, sizeof s->err);
        if (rc == -2) {
            fprintf(stderr, "matrix-engine: %s\n", s->err);
            return 2;
        }
        return rc < 0 ? finish_unsupported(o, s->ignored, s->err) : rc;
    }
    int jrc = comm_join(s->err, sizeof s->err);
    if (jrc == -2) {
        fprintf(stderr, "matrix-engine: %s\n", s->err);
        return 2;
    }
    if (jrc)
        return finish_unsupported(o, s->ignored, s->err);
    atexit(comm_leave); /* every way out of a rank leaves (unmaps, or finalizes MPI) */
    if (engine_comm->size != o->pt.gpus) {
        fprintf(stderr, "matrix-engine: %d ranks started for --gpus %d\n", engine_comm->size,
                o->pt.gpus);
        return 1;
    }
    if (engine_comm->rank != 0) { /* rank 0 alone writes the result and the dump */
        o->result = NULL;
        s->quiet = 1;
    }
    return SESSION_GO;
}

int session_check(struct session *s)
{
    const struct opts *o = &s->o;
    char *ign = s->ignored;
    size_t n = sizeof s->ignored;
    if (o->pt.runtime != RUNTIME_EAGER)
        return finish_unsupported(o, ign, o->pt.runtime == RUNTIME_INDUCTOR
                                              ? "runtime inductor is torch.compile: the native engine's graph passes are --compile"
                                              : "the native engine runs its own kernels: runtimes onnxruntime and tensorrt are the PyTorch engine's");
    if (o->pt.precision == PREC_INT8)
        return finish_unsupported(o, ign, "int8 is not implemented in the native engine");
    if (o->pt.quant >= 0) /* given: the native engine has no int8 to quantize */
        add_ignored(ign, n, "quant");
    /* a rank of MATRIX_ENGINE_DP=1 (one rank through the data-parallel path)
     * may: the checks compare its 1-rank all-reduces with the plain path */
    if (o->pt.syncbn && o->pt.gpus < 2 && !engine_comm)
        return finish_unsupported(o, ign, "SyncBN needs more than one GPU (gpus: 1 has nothing to synchronise with)");
    if (o->pt.syncbn && !o->pt.train)
        add_ignored(ign, n, "syncbn");
    if (o->pt.device == DEV_CPU && o->pt.precision == PREC_FP16)
        return finish_unsupported(o, ign, "fp16 is not implemented in the CPU backend");
    else if (o->pt.device == DEV_CPU && o->pt.precision == PREC_BF16)
        return finish_unsupported(o, ign,
                                  cpu_has("avx512_bf16") || cpu_has("amx_bf16")
                                      ? "bf16 is not implemented in the CPU backend (the CPU has avx512_bf16/amx_bf16)"
                                      : "bf16 needs avx512_bf16 or amx_bf16, which this CPU lacks");
    if (o->pt.device == DEV_CPU) {
        if (o->pt.threads > POOL_MAX) { /* the pool ran 256 and the record said 100000 */
            fprintf(stderr, "matrix-engine: --threads: %d is more than the CPU backend runs (1 to %d; this machine "
                    "has %ld online CPUs)\n", o->pt.threads, POOL_MAX, s->online);
            return 2;
        }
        if (o->pt.precision == PREC_TF32)
            add_ignored(ign, n, "precision");
        if (o->pt.cudnn_benchmark)
            add_ignored(ign, n, "cudnn_benchmark");
        if (o->pt.compile >= COMPILE_REDUCE_OVERHEAD)
            add_ignored(ign, n, "compile:cuda_graphs");
        if (o->pt.compile == COMPILE_MAX_AUTOTUNE)
            add_ignored(ign, n, "compile:autotune");
        if (o->pt.plan_cache)
            add_ignored(ign, n, "plan_cache");
    } else if (o->pt.threads != (s->online > 0 ? (int)s->online : 1))
        add_ignored(ign, n, "threads");
    if (o->pt.train && o->pt.inference_mode)
        add_ignored(ign, n, "inference_mode");
    if (!o->pt.train && o->pt.ema)
        add_ignored(ign, n, "ema");
    if (!o->pt.train && flags_given(o, "lr"))
        add_ignored(ign, n, "lr");
    /* --steps: exactly that many timed steps, no stopping rule */
    static const char *const rule[] = {"min-time", "max-time", "rel-ci"};
    for (size_t i = 0; o->steps > 0 && !s->quiet && i < sizeof rule / sizeof rule[0]; i++)
        if (flags_given(o, rule[i]))
            fprintf(stderr, "matrix-engine: --%s changes nothing here: --steps %d times exactly that many steps\n",
                    rule[i], o->steps);
    return SESSION_GO;
}

/* --data: read and check the files, attach them to the model's inputs; a
 * bad file is exit 2, a model that takes no such input unsupported (3). */
static int session_data(struct session *s)
{
    const struct opts *o = &s->o;
    struct run *r = &s->r;
    data_set *d = &s->data;
    int rank = engine_comm ? engine_comm->rank : 0, ranks = engine_comm ? engine_comm->size : 1;
    int rows, cols;
    const char *takes = s->info.input_desc ? s->info.input_desc : "other inputs";
    /* a model that takes no such input: said before the files are read */
    if (data_model_input(&r->g, o->pt.model, takes, &rows, &cols, s->err, sizeof s->err))
        return finish_unsupported(o, s->ignored, s->err);
    if (data_open(d, o->data, rows, cols, o->pt.model, s->err, sizeof s->err)) {
        fprintf(stderr, "matrix-engine: --data: %s\n", s->err);
        return 2;
    }
    int rc = data_bind(d, &r->g, o->pt.model, s->info.input_desc ? s->info.input_desc : "other inputs",
                       o->pt.batch, rank, ranks, o->pt.seed, s->err, sizeof s->err);
    if (rc == -2)
        return finish_unsupported(o, s->ignored, s->err);
    if (rc) {
        fprintf(stderr, "matrix-engine: --data: %s\n", s->err);
        return 2;
    }
    int mode = knob_get(KNOB_DATA_UPLOAD, s->err, sizeof s->err); /* checked by session_flags */
    r->data = d;
    r->data_direct = o->pt.device == DEV_CPU;
    r->staged = !r->data_direct && mode == DATA_UPLOAD_PINNED && r->be.stage_open;
    if (r->staged) {
        size_t bytes[2] = {r->g.t[d->x].bytes, r->g.t[d->y].bytes};
        if (r->be.stage_open(2, bytes, r->stage_host))
            return finish_oom(o, r->be.oom_bytes(), "--data's pinned staging buffers");
        for (int k = 0; k < DATA_SLOTS; k++) {
            r->stage_index[k] = malloc((size_t)d->batch * sizeof *r->stage_index[k]);
            mallocCheck(r->stage_index[k]);
        }
    } else {
        r->stage_x = malloc(r->g.t[d->x].bytes);
        r->stage_y = malloc(r->g.t[d->y].bytes);
        mallocCheck(r->stage_x);
        mallocCheck(r->stage_y);
    }
    const char *how = r->data_direct ? "writes it into the input tensors (cpu: no copy)"
                      : r->staged ? "copies it to the device (MATRIX_ENGINE_DATA_UPLOAD=pinned: the next batch is"
                                    " made into pinned memory and copied on a second stream while a step runs; the"
                                    " step copies it device to device into its inputs)"
                                  : "copies it to the device (MATRIX_ENGINE_DATA_UPLOAD=pageable: from pageable"
                                    " memory, waited for before the step's kernels)";
    if (!s->quiet && r->data_direct && knob_is_set(KNOB_DATA_UPLOAD))
        fprintf(stderr, "matrix-engine: data: MATRIX_ENGINE_DATA_UPLOAD=%s changes nothing on the cpu (no copy)\n",
                knob_value(KNOB_DATA_UPLOAD, mode));
    if (!s->quiet)
        fprintf(stderr, "matrix-engine: data: %" PRId64 " images of %dx%d from '%s', labels from '%s' (read in %.3f s); "
                "each timed step takes the next batch of %d of a shuffled epoch of %" PRId64 " steps (%" PRId64
                " images dropped), normalises it ((x/255-%.4f)/%.4f) and %s\n",
                d->n, d->rows, d->cols, d->images_path, d->labels_path, d->load_s, o->pt.batch, d->epoch_steps,
                d->dropped, DATA_MEAN, DATA_STD, how);
    return SESSION_GO;
}

/* 1 when one of the first nrun ops has type a or b */
static int has_op(const graph *g, int nrun, int a, int b)
{
    for (int i = 0; i < nrun; i++)
        if ((int)g->ops[i].type == a || (int)g->ops[i].type == b)
            return 1;
    return 0;
}

int session_build(struct session *s)
{
    const struct opts *o = &s->o;
    struct run *r = &s->r;
    graph *g = &r->g;
    if (r->be.init(o->pt.threads)) {
        fprintf(stderr, "matrix-engine: unable to start the %s backend\n", r->be.name);
        return 1;
    }
    graph_init(g);
    memset(&s->info, 0, sizeof s->info);
    if (s->md->build(g, &o->pt, &s->info, s->err, sizeof s->err))
        return finish_unsupported(o, s->ignored, s->err);
    if (g->too_big[0]) /* before any size is summed or allocated */
        return finish_too_big(o, g->too_big);
    if (o->pt.channels_last && !s->info.uses_channels_last)
        add_ignored(s->ignored, sizeof s->ignored, "channels_last");
    /* it times convolutions only (the cpu: above) */
    if (o->pt.cudnn_benchmark && o->pt.device != DEV_CPU && !has_op(g, g->nops, OP_CONV, -1))
        add_ignored(s->ignored, sizeof s->ignored, "cudnn_benchmark");
    if (flags_given(o, "seq-len") && !s->info.uses_seq_len)
        add_ignored(s->ignored, sizeof s->ignored, "seq_len");
    if (flags_given(o, "image-size") && !s->info.uses_image_size)
        add_ignored(s->ignored, sizeof s->ignored, "image_size");
    int rank = engine_comm ? engine_comm->rank : 0;
    for (int i = 0; i < g->nops; i++) /* dropout streams follow --seed (and the rank) */
        g->ops[i].seed = rng_mix(g->ops[i].seed ^ (o->pt.seed * 0x9e3779b97f4a7c15ULL)) ^
                         (uint64_t)rank * 0xd1b54a32d192ed03ULL;
    for (int i = 0; i < g->nt; i++) {
        tensor *t = &g->t[i];
        if (!persistent(t->kind))
            continue;
        t->data = mem_alloc(t->bytes); /* host; moved to a device after the passes */
        if (!t->data)
            return finish_oom(o, t->bytes, t->name);
        /* inputs: rank r holds rows [r B, (r + 1) B) of the global batch */
        fill_tensor(t, name_key(o->pt.seed, t->name), t->kind == TK_INPUT ? rank * graph_numel(t) : 0);
    }
    if (o->weights && weights_load(g, o->weights, s->err, sizeof s->err)) { /* bad input, as a bad --data */
        fprintf(stderr, "matrix-engine: --weights: %s\n", s->err);
        return 2;
    }
    return o->data ? session_data(s) : SESSION_GO;
}

/* Training: the state the backend keeps from a forward op for its backward,
 * as a planned tensor between the two. */
static void session_backend_saved(struct run *r)
{
    graph *g = &r->g;
    for (int i = g->nfwd; i < g->nops; i++) {
        op *bo = &g->ops[i];
        size_t sb = bo->fwd >= 0 && r->be.saved ? r->be.saved(g, &g->ops[bo->fwd]) : 0;
        if (sb == 0 || g->ops[bo->fwd].out[3] >= 0)
            continue;
        char name[GRAPH_NAME + 8];
        snprintf(name, sizeof name, "%s.saved", g->ops[bo->fwd].name);
        int t = graph_t1(g, name, TK_ACT, (int64_t)(sb / sizeof(float)));
        g->ops[bo->fwd].out[3] = t;
        g->ops[i].in[3] = t;
    }
}

/* --syncbn on: which BatchNorm ops all-reduce their sums (rank 0 says);
 * none (BERT, BN on running statistics with --eval on) is syncbn ignored. */
static void log_sync_bn(struct session *s)
{
    const graph *g = &s->r.g;
    int n = 0;
    for (int i = 0; i < g->nfwd; i++)
        n += g->ops[i].type == OP_BN && g->ops[i].sync;
    if (!n)
        add_ignored(s->ignored, sizeof s->ignored, "syncbn");
    if (s->quiet)
        return;
    fprintf(stderr, "matrix-engine: syncbn: %d BatchNorm ops take their per-channel sums over %d rank%s (%s; forward "
            "statistics, backward sums for dx)%s", n, engine_comm->size, engine_comm->size == 1 ? "" : "s",
            s->o.pt.device == DEV_CUDA ? "nccl" : engine_comm->name, n ? ":" : "; nothing to synchronise");
    for (int i = 0; i < g->nfwd; i++)
        if (g->ops[i].type == OP_BN && g->ops[i].sync)
            fprintf(stderr, " %s", g->ops[i].name);
    fputc('\n', stderr);
}

/* MATRIX_ENGINE_BN_BWD: fused (the default: pass_bn_relu_bwd folds a
 * BatchNorm's ReLU backward into its backward) or separate (the two ops).
 * 1 fused, 0 separate (session_flags refused any other value). */
static int bn_bwd_env(void)
{
    char err[256];
    int v = knob_get(KNOB_BN_BWD, err, sizeof err);
    if (v < 0)
        BUG("%s", err); /* checked by session_flags */
    return v == 0;
}

/* Training: pass_bn_relu_bwd as MATRIX_ENGINE_BN_BWD says, and a line
 * saying what it changed (rank 0). */
static void bn_relu_bwd(struct session *s, int fold)
{
    const graph *g = &s->r.g;
    int m = 0, res = 0;
    s->bnrelu = pass_bn_relu_bwd(&s->r.g, fold, &m);
    if (s->quiet || !m)
        return;
    for (int i = g->nfwd; i < g->nops; i++)
        res += g->ops[i].type == OP_BN_BWD && g->ops[i].act == ACT_RELU &&
               g->ops[i].in[5] == g->ops[g->ops[i].fwd].out[0];
    fprintf(stderr, "matrix-engine: bn backward: %d of %d ReLU backwards folded into BatchNorm backward "
            "(MATRIX_ENGINE_BN_BWD=%s", s->bnrelu, m, fold ? "fused" : "separate");
    if (fold)
        fprintf(stderr, "; %d recompute the mask, %d with a residual input read it from y and write the "
                "residual's gradient", s->bnrelu - res, res);
    fputs(")\n", stderr);
}

/* Whether an op of type a or b (-1: none) is among ops [0, nrun). */

/* A knob set (knobs.h) that has nothing to act on in this point says so on
 * stderr (rank 0), as a flag that does not apply is listed in ignored: the
 * device, the task, the ranks or --data leave it nothing to do, or the ops
 * it acts on are not in the graph. The knobs that act say what they did
 * where they act. */
static void knobs_note_unused(const struct session *s)
{
    static const struct {
        enum knob k;
        int cuda;   /* a setting of the CUDA backend */
        int op[2];  /* the op types it acts on (-1: none; both -1: any graph) */
        const char *none;
    } acts[] = {
        {KNOB_CONV, 1, {OP_CONV, OP_CONV_BWD}, "no convolution"},
        {KNOB_BNSTATS, 1, {OP_CONV, -1}, "no convolution"},
        {KNOB_OPTIM, 1, {OP_SGD, OP_ADAMW}, "no optimizer step"},
        {KNOB_SDPA, 1, {OP_ATTENTION, OP_ATTENTION_BWD}, "no attention"},
        {KNOB_GEMM, 1, {OP_LINEAR, OP_LINEAR_BWD}, "no linear layer"},
        {KNOB_POISON, 1, {-1, -1}, ""},
        {KNOB_BN_BWD, 0, {OP_BN_BWD, -1}, "no BatchNorm backward"},
    };
    const struct opts *o = &s->o;
    const graph *g = &s->r.g;
    char why[160];
    if (s->quiet)
        return;
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
        if (!knob_is_set(acts[i].k))
            continue;
        why[0] = 0;
        if (acts[i].cuda && o->pt.device != DEV_CUDA)
            snprintf(why, sizeof why, "a setting of the CUDA backend, and the point runs on the cpu");
        else if (acts[i].k == KNOB_BNSTATS && (!o->pt.train || !has_op(g, s->r.nrun, OP_BN, -1)))
            snprintf(why, sizeof why, "no training BatchNorm");
        else if (acts[i].op[0] >= 0 && !has_op(g, s->r.nrun, acts[i].op[0], acts[i].op[1]))
            snprintf(why, sizeof why, "%s in %s %s", acts[i].none, o->pt.model, lv_task[o->pt.train]);
        if (why[0])
            fprintf(stderr, "matrix-engine: %s=%s changes nothing here: %s\n", knob_name(acts[i].k),
                    getenv(knob_name(acts[i].k)), why);
    }
    if (knob_is_set(KNOB_DATA_UPLOAD) && !s->r.data)
        fprintf(stderr, "matrix-engine: MATRIX_ENGINE_DATA_UPLOAD=%s changes nothing here: no --data (the synthetic "
                "inputs are made once, before the steps)\n", getenv("MATRIX_ENGINE_DATA_UPLOAD"));
    if (knob_is_set(KNOB_LAUNCH) && !engine_comm)
        fprintf(stderr, "matrix-engine: MATRIX_ENGINE_LAUNCH=%s changes nothing here: one process, no ranks to "
                "start (--gpus 1)\n", getenv("MATRIX_ENGINE_LAUNCH"));
    if (knob_bucket_is_set() && (!engine_comm || !o->pt.train))
        fprintf(stderr, "matrix-engine: MATRIX_ENGINE_BUCKET_KB=%s changes nothing here: %s\n",
                getenv("MATRIX_ENGINE_BUCKET_KB"), engine_comm ? "no training, no gradients to all-reduce"
                                                              : "one process, no gradients to all-reduce (--gpus 1)");
    /* the modules' paths: read only where they act (not MATRIX_PLAN_CACHE:
     * the runner sets it for every container point, cpu ones too) */
    const char *env;
    if ((env = getenv("MATRIX_ENGINE_CUDA")) && *env && o->pt.device != DEV_CUDA)
        fprintf(stderr, "matrix-engine: MATRIX_ENGINE_CUDA=%s changes nothing here: the point runs on the cpu (the "
                "CUDA module is loaded for --device cuda, or auto with a GPU)\n", env);
    if ((env = getenv("MATRIX_ENGINE_MPI")) && *env && (!engine_comm || strcmp(comm_launcher(), "mpirun") != 0))
        fprintf(stderr, "matrix-engine: MATRIX_ENGINE_MPI=%s changes nothing here: no ranks started by mpirun "
                "(--gpus N > 1 with MATRIX_ENGINE_LAUNCH=mpirun)\n", env);
    if (knob_get(KNOB_DP, why, sizeof why) == 1 && o->pt.gpus > 1)
        fprintf(stderr, "matrix-engine: MATRIX_ENGINE_DP=1 changes nothing here: --gpus %d runs the data-parallel "
                "path anyway\n", o->pt.gpus);
}

int session_passes(struct session *s)
{
    const struct opts *o = &s->o;
    struct run *r = &s->r;
    graph *g = &r->g;
    int bn_fold = bn_bwd_env();
    /* fp16 / bf16 on a device: attention keeps the rows' log-sum-exp, not
     * the probabilities (cuDNN's fused SDPA, or the kernels' flash form) */
    if (!r->be.host_visible && (o->pt.precision == PREC_FP16 || o->pt.precision == PREC_BF16))
        s->flash = pass_flash_attention(g);
    if (!o->pt.train && o->pt.eval && o->pt.compile != COMPILE_NONE)
        s->folded = pass_fold_bn(g);
    if (o->pt.compile != COMPILE_NONE)
        s->fused = pass_fuse(g, o->pt.train || !o->pt.inference_mode); /* autograd on: keep pre-activations */
    if (o->pt.train) {
        s->info.optim.ema = o->pt.ema;
        if (o->lr > 0)
            s->info.optim.lr = o->lr;
        s->info.optim.ema_decay = 0.9998f;
        pass_autodiff(g, &s->info.optim);
        bn_relu_bwd(s, bn_fold);
        session_backend_saved(r);
        if (engine_comm) { /* 25 MiB buckets (PyTorch DDP's default), or MATRIX_ENGINE_BUCKET_KB */
            size_t bucket;
            char kerr[160];
            if (knob_bucket_bytes(&bucket, kerr, sizeof kerr)) /* checked at the start */
                bucket = (size_t)25 << 20;
            s->buckets = pass_data_parallel(g, engine_comm->size, bucket, o->pt.syncbn);
            if (engine_comm->rank == 0)
                fprintf(stderr, "matrix-engine: data-parallel: %d gradient bucket(s) of about %zu KiB%s, each "
                        "all-reduced after the backward op that completes it\n", s->buckets, bucket >> 10,
                        knob_bucket_is_set() ? " (MATRIX_ENGINE_BUCKET_KB)" : " (PyTorch DDP's 25 MiB)");
            if (o->pt.syncbn)
                log_sync_bn(s);
        }
    }
    /* inference with inference_mode off runs as with autograd on: what a
     * backward would read stays alive to the end of the step (PyTorch's
     * saved tensors), the rest is reused as soon as it is dead */
    char *saved = NULL;
    if (!o->pt.train && !o->pt.inference_mode) {
        saved = calloc(g->nt + 1, 1);
        mallocCheck(saved);
        s->nsaved = pass_saved(g, saved);
    }
    r->nrun = o->pt.train ? g->nops : g->nfwd;
    for (int i = 0; i < r->nrun; i++)
        if (!r->be.ops[g->ops[i].type]) {
            snprintf(s->err, sizeof s->err, "the %s backend has no kernel for %s (op '%s' of %s)",
                     r->be.name, graph_op_name(g->ops[i].type), g->ops[i].name, o->pt.model);
            free(saved);
            return finish_unsupported(o, s->ignored, s->err);
        }
    knobs_note_unused(s);
    if (!r->be.host_visible && (o->pt.precision == PREC_FP16 || o->pt.precision == PREC_BF16))
        pass_precision(g, o->pt.precision == PREC_FP16 ? DT_F16 : DT_BF16);
    s->arena_bytes = pass_plan(g, 1, saved);
    free(saved);
    return SESSION_GO;
}

/* Views (t->alias >= 0: the parameter gradients and buckets in grad.flat)
 * point into their base tensor's storage, host and device alike. */
static void session_views(graph *g)
{
    for (int i = 0; i < g->nt; i++) {
        tensor *t = &g->t[i], *b;
        if (t->alias < 0)
            continue;
        b = &g->t[t->alias];
        t->data = b->data ? (char *)b->data + t->offset : NULL;
        t->host = b->host ? (char *)b->host + t->offset : NULL;
    }
}

/* Persistent tensors the run uses: to the device (a host copy stays in
 * t->host); the others stay on the host only. */
static int session_upload(struct session *s)
{
    struct run *r = &s->r;
    graph *g = &r->g;
    char *used = calloc(g->nt + 1, 1);
    mallocCheck(used);
    for (int i = 0; i < r->nrun; i++) {
        for (int k = 0; k < GRAPH_MAX_IN; k++)
            if (g->ops[i].in[k] >= 0)
                used[g->ops[i].in[k]] = 1;
        for (int k = 0; k < GRAPH_MAX_OUT; k++)
            if (g->ops[i].out[k] >= 0)
                used[g->ops[i].out[k]] = 1;
    }
    if (g->loss >= 0)
        used[g->loss] = 1;
    for (int i = 0; i < g->nt; i++) /* a used view uses its base's storage */
        if (g->t[i].alias >= 0 && used[i])
            used[g->t[i].alias] = 1;
    for (int i = 0; i < g->nt; i++) {
        tensor *t = &g->t[i];
        if (!persistent(t->kind) || !t->data || t->alias >= 0)
            continue;
        t->host = t->data;
        t->data = NULL;
        if (!used[i])
            continue; /* e.g. weights folded into others: read on the host only */
        t->data = r->be.alloc(t->bytes);
        if (!t->data) {
            free(used);
            return finish_oom(&s->o, t->bytes, t->name);
        }
        r->be.upload(t->data, t->host, t->bytes);
    }
    session_views(g);
    free(used);
    return SESSION_GO;
}

int session_place(struct session *s)
{
    const struct opts *o = &s->o;
    struct run *r = &s->r;
    graph *g = &r->g;
    int rc;
    for (int i = 0; i < g->nt; i++) { /* state made by the passes */
        tensor *t = &g->t[i];
        if (persistent(t->kind) && !t->data && t->alias < 0) {
            t->data = mem_alloc(t->bytes);
            if (!t->data)
                return finish_oom(o, t->bytes, t->name);
            if (strncmp(t->name, "ema.", 4) == 0) {
                int src = graph_find(g, t->name + 4);
                memcpy(t->data, g->t[src].data, t->bytes);
            }
        }
    }
    session_views(g);
    if (!r->be.host_visible && (rc = session_upload(s)) != SESSION_GO)
        return rc;
    s->arena = r->be.alloc(s->arena_bytes);
    if (!s->arena)
        return finish_oom(o, s->arena_bytes, "the activation arena");
    for (int i = 0; i < g->nt; i++)
        if (!persistent(g->t[i].kind) && !g->t[i].dead)
            g->t[i].data = s->arena + g->t[i].offset;
    for (int i = 0; i < r->nrun; i++) {
        size_t w = r->be.workspace(g, &g->ops[i]);
        s->ws = w > s->ws ? w : s->ws;
        s->flops += g->ops[i].flops;
    }
    backend_ws_bytes = s->ws;
    backend_ws = r->be.alloc(s->ws);
    if (!backend_ws)
        return finish_oom(o, s->ws, "the kernel workspace");
    s->t_plan0 = s->t_plan1 = measure_now();
    if (r->be.prepare) {
        int prc = r->be.prepare(g, r->nrun);
        s->t_plan1 = measure_now();
        if (prc == -1)
            return finish_oom(o, r->be.oom_bytes(), "the backend's buffers (weight copies, library workspace)");
        if (prc == -3) /* a MATRIX_ENGINE_* setting refused, said: a usage error */
            return 2;
        if (prc) {
            fprintf(stderr, "matrix-engine: the %s backend failed to prepare the plan\n", r->be.name);
            return 1;
        }
    }
    return SESSION_GO;
}

int session_dump(struct session *s)
{
    int rc = dump_run(&s->r, &s->o);
    run_free(&s->r, s->arena, s->arena_bytes);
    return rc;
}

/* --save-weights: parameters and buffers through host views. */
static int session_save_weights(struct session *s)
{
    struct run *r = &s->r;
    graph *g = &r->g;
    struct hview *hv = calloc(g->nt + 1, sizeof *hv);
    mallocCheck(hv);
    for (int i = 0; i < g->nt; i++)
        if (g->t[i].kind == TK_PARAM || g->t[i].kind == TK_BUFFER)
            host_begin(r, i, &hv[i]);
    int wrc = weights_save(g, s->o.save_weights, s->err, sizeof s->err);
    for (int i = 0; i < g->nt; i++)
        if (g->t[i].kind == TK_PARAM || g->t[i].kind == TK_BUFFER)
            host_end(r, i, &hv[i]);
    free(hv);
    if (wrc) {
        fprintf(stderr, "matrix-engine: unable to write the weights: %s\n", s->err);
        return 1;
    }
    return SESSION_GO;
}

static int ranks_agree(int stop)
{
    int v = stop;
    if (engine_comm->bcast(&v, sizeof v, 0))
        BUG("the broadcast of the stopping decision failed");
    return v;
}

static void ranks_timed_start(void) { engine_comm->wait_s = 0; }

/* --profile: PROFILE_STEPS more steps op by op, each op timed, written as
 * CSV (profile.h). A failure to write is the point's failure (exit 1). */
static int session_profile(struct session *s)
{
    struct run *r = &s->r;
    graph *g = &r->g;
    int n = r->nrun + (r->data ? 1 : 0);
    prof_s = calloc(r->nrun + 1, sizeof *prof_s);
    profile_row *rows = calloc(n, sizeof *rows);
    mallocCheck(prof_s);
    mallocCheck(rows);
    double t0 = measure_now();
    for (int k = 0; k < PROFILE_STEPS; k++)
        if (run_step(r)) {
            fprintf(stderr, "matrix-engine: a profiled step failed\n");
            free(rows);
            return 1;
        }
    s->prof_wall_s = measure_now() - t0;
    for (int i = 0; i < r->nrun; i++) {
        const op *o = &g->ops[i];
        rows[i] = (profile_row){.op = o->name, .kind = graph_op_name(o->type), .calls = PROFILE_STEPS,
                                .total_s = prof_s[i],
                                .mem_bytes = profile_op_bytes(g, o) + r->be.workspace(g, o)};
        s->prof_sum_s += prof_s[i];
    }
    if (r->data) {
        rows[r->nrun] = (profile_row){.op = "input_pipeline", .kind = "data", .calls = PROFILE_STEPS,
                                      .total_s = prof_s[r->nrun],
                                      .mem_bytes = r->g.t[r->data->x].bytes + r->g.t[r->data->y].bytes};
        s->prof_sum_s += prof_s[r->nrun];
    }
    int rc = s->quiet ? 0 : profile_write(s->o.profile, rows, n, s->err, sizeof s->err); /* rank 0 writes */
    free(rows);
    if (rc) {
        fprintf(stderr, "matrix-engine: --profile: %s\n", s->err);
        return 1;
    }
    return SESSION_GO;
}

int session_measure(struct session *s)
{
    struct run *r = &s->r;
    graph *g = &r->g;
    if ((prof_timed = knob_get(KNOB_PROFILE, s->err, sizeof s->err) == 1)) {
        prof_s = calloc(r->nrun + 1, sizeof *prof_s);
        mallocCheck(prof_s);
        if (!s->quiet)
            fprintf(stderr, "matrix-engine: MATRIX_ENGINE_PROFILE=1: the timed steps run op by op, each op timed (%s), "
                    "the steps on the host clock; ms per op on stderr after them\n",
                    r->be.prof_mark ? "device events, no CUDA Graph" : "synchronised, host clock");
    }
    /* --data: the host clock, so that the input pipeline is in the time */
    if (r->be.step_seconds && !prof_s && !r->data)
        s->o.m.step_seconds = r->be.step_seconds;
    if (engine_comm) { /* ranks run the same steps: rank 0 decides */
        s->o.m.agree = ranks_agree;
        s->o.m.timed_start = ranks_timed_start;
    }
    s->t_setup = measure_now() - s->t_start;
    if (measure_run(&s->o.m, run_step, r, &s->mr)) {
        fprintf(stderr, "matrix-engine: a step failed\n");
        return 1;
    }
    if (s->o.save_weights && !s->quiet) { /* rank 0 writes, as the result: every rank replaced the file in turn */
        int rc = session_save_weights(s);
        if (rc != SESSION_GO)
            return rc;
    }
    if (prof_s) {
        int steps = g->step;
        fprintf(stderr, "%-4s %-16s %-28s %12s\n", "op", "type", "name", "ms/step");
        for (int i = 0; i < r->nrun; i++)
            fprintf(stderr, "%-4d %-16s %-28s %12.4f\n", i, graph_op_name(g->ops[i].type),
                    g->ops[i].name, prof_s[i] * 1e3 / steps);
        if (!s->o.profile)
            return SESSION_GO;
        /* --profile too: its own steps after (it was skipped, and the
         * record named a profile file that was never written) */
        free(prof_s);
        prof_s = NULL;
    }
    if (s->o.profile)
        return session_profile(s);
    return SESSION_GO;
}

/* The backend's own "key=value" lines (gpu, driver, libraries, choices). */
static void rec_backend_info(struct record *rr, const backend *be)
{
    const char *inf = be->info ? be->info() : "";
    while (*inf) {
        const char *nl = strchr(inf, '\n'), *eq = strchr(inf, '=');
        size_t len = nl ? (size_t)(nl - inf) : strlen(inf);
        if (eq && eq < inf + len) {
            char key[128];
            snprintf(key, sizeof key, "%.*s", (int)(eq - inf), inf);
            rec(rr, key, "%.*s", (int)(len - (eq - inf) - 1), eq + 1);
        }
        inf += len + (nl ? 1 : 0);
    }
}

/* FNV-1a over the bytes of every parameter and of the EMA of every
 * parameter (--ema: optimizer state, per rank, from the same updates):
 * equal on every rank when the ranks trained the same model. (Not the
 * BatchNorm running statistics, nor their EMA: without SyncBN each rank's
 * come from its own slice of the batch.) */
static uint64_t params_hash(struct run *r)
{
    graph *g = &r->g;
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < g->nt; i++) {
        int src = g->t[i].kind == TK_STATE && strncmp(g->t[i].name, "ema.", 4) == 0
                      ? graph_find(g, g->t[i].name + 4) : -1;
        if (g->t[i].kind != TK_PARAM && !(src >= 0 && g->t[src].kind == TK_PARAM))
            continue;
        struct hview hv;
        host_begin(r, i, &hv);
        const unsigned char *p = g->t[i].data;
        for (size_t k = 0; p && k < g->t[i].bytes; k++)
            h = (h ^ p[k]) * 1099511628211ULL;
        host_end(r, i, &hv);
    }
    return h;
}

static int ranks_sync_bn(const graph *g)
{
    int n = 0;
    for (int i = 0; i < g->nops; i++)
        n += g->ops[i].type == OP_BN && g->ops[i].sync;
    return n;
}

/* Data parallel: what the ranks agree on, before rank 0 writes it. */
struct ranks_result {
    double med, lo, hi;  /* the slowest rank's median step and interval, ms */
    double min_med;      /* the fastest rank's median, ms */
    double wait_share;   /* largest share of the timed steps blocked in communication */
    int same_weights;    /* every rank ends with the same parameters (bytes) */
};

static void ranks_reduce(struct session *s, struct ranks_result *q)
{
    comm *c = engine_comm;
    double mx[4] = {s->mr.median_ms, s->mr.lo_ms, s->mr.hi_ms,
                    s->mr.total_s > 0 ? c->wait_s / s->mr.total_s : 0};
    double mn = s->mr.median_ms;
    uint64_t h[2], hmin;
    h[0] = hmin = params_hash(&s->r);
    if (c->allreduce(mx, 4, COMM_F64, COMM_MAX) || c->allreduce(&mn, 1, COMM_F64, COMM_MIN) ||
        c->allreduce(&h[0], 1, COMM_U64, COMM_MAX) || c->allreduce(&hmin, 1, COMM_U64, COMM_MIN))
        BUG("the ranks' final all-reduces failed");
    h[1] = hmin;
    q->med = mx[0];
    q->lo = mx[1];
    q->hi = mx[2];
    q->wait_share = mx[3];
    q->min_med = mn;
    q->same_weights = h[0] == h[1];
}

/* --data: where the inputs came from, how they reached the device
 * (data_upload), the epoch and its time. With the pinned upload the
 * batches and epochs are those the steps took (one more batch may have
 * been made, for a step that did not run). */
static void rec_data(struct record *rr, const struct run *r, const measure_result *mr)
{
    const data_set *d = r->data;
    rec(rr, "data_images_file", "%s", d->images_path);
    rec(rr, "data_labels_file", "%s", d->labels_path);
    rec(rr, "data_images", "%" PRId64, d->n);
    rec(rr, "data_image_size", "%dx%d", d->rows, d->cols);
    rec(rr, "data_load_s", "%.6g", d->load_s);
    rec(rr, "data_upload", "%s", r->data_direct ? "none" : r->staged ? "pinned" : "pageable");
    if (r->staged)
        rec(rr, "data_pipeline", "during the previous timed step (overlapping it): shuffled order, uint8 to f32, "
            "(x/255-%g)/%g, batch into pinned memory, copy to device on a second stream; in the step: device copy "
            "into the inputs", DATA_MEAN, DATA_STD);
    else
        rec(rr, "data_pipeline", "in the timed step: shuffled order, uint8 to f32, (x/255-%g)/%g, batch, copy to device",
            DATA_MEAN, DATA_STD);
    rec(rr, "data_batches", "%" PRId64, r->staged ? r->ring.taken : d->batches);
    rec(rr, "data_epochs_started", "%" PRId64, r->staged ? data_ring_epochs(&r->ring, d->epoch_steps) : d->epoch);
    rec(rr, "epoch_steps", "%" PRId64, d->epoch_steps);
    rec(rr, "epoch_dropped_images", "%" PRId64, d->dropped);
    /* an epoch is epoch_steps steps: its time from the median step and its interval */
    rec(rr, "epoch_s", "%.6g", d->epoch_steps * mr->median_ms / 1e3);
    rec(rr, "epoch_s_lo", "%.6g", d->epoch_steps * mr->lo_ms / 1e3);
    rec(rr, "epoch_s_hi", "%.6g", d->epoch_steps * mr->hi_ms / 1e3);
}

/* Data parallelism: ranks, batches, the communication library, and for
 * training the buckets, the wait share and whether the ranks agree. */
static void rec_ranks(struct record *rr, const struct session *s, const struct ranks_result *q, int ranks,
                      int on_gpu)
{
    const struct opts *o = &s->o;
    /* batch is per rank (per GPU), as in the seeds; throughput is global */
    rec(rr, "ranks", "%d", ranks);
    rec(rr, "batch_per_rank", "%d", o->pt.batch);
    rec(rr, "global_batch", "%d", ranks * o->pt.batch);
    rec(rr, "rank_step_ms_max", "%.6g", q->med);
    rec(rr, "rank_step_ms_min", "%.6g", q->min_med);
    rec(rr, "comm", "%s", on_gpu ? "nccl" : engine_comm->name);
    /* who started the ranks, and the host communicator (on GPUs: NCCL's
     * bootstrap, the stopping rule, the final checks) */
    rec(rr, "launcher", "%s", comm_launcher());
    rec(rr, "comm_host", "%s", engine_comm->name);
    rec(rr, "comm_host_version", "%s", engine_comm->version);
    if (o->pt.train) {
        rec(rr, "grad_buckets", "%d", s->buckets);
        if (!on_gpu) /* host time blocked in the host communicator; NCCL runs on its own stream */
            rec(rr, "comm_wait_share", "%.4g", q->wait_share);
        rec(rr, "ranks_same_weights", "%d", q->same_weights);
    }
    rec(rr, "syncbn_ops", "%d", ranks_sync_bn(&s->r.g));
}

/* How it was timed and stored on the GPU and the backend's libraries, or
 * the BLAS on the CPU. */
static void rec_platform(struct record *rr, struct session *s, int on_gpu)
{
    const struct opts *o = &s->o;
    /* provenance: what this engine was built with */
    rec(rr, "compiler", "%s", MATRIX_BUILD_CC);
    rec(rr, "cflags", "%s", MATRIX_BUILD_CFLAGS);
    if (prof_timed) /* MATRIX_ENGINE_PROFILE=1: not the steps' usual timing */
        rec(rr, "timing", "host_clock, op by op (MATRIX_ENGINE_PROFILE=1: each op timed%s)",
            s->r.be.prof_mark ? " with device events, no CUDA Graph" : " after a sync");
    else if (on_gpu)
        rec(rr, "timing", "%s", s->r.data ? "host_clock (the input pipeline included)" : "cuda_events");
    if (on_gpu) {
        rec(rr, "precision_storage", "%s", o->pt.precision == PREC_FP16 ? "f16 activations, f32 master weights"
                                           : o->pt.precision == PREC_BF16 ? "bf16 activations, f32 master weights"
                                                                          : "f32");
        rec_backend_info(rr, &s->r.be);
    } else {
        rec(rr, "plan_cache", "none"); /* the cpu backend searches nothing */
#ifdef HAVE_CBLAS
        rec(rr, "blas", "%s", openblas_get_config ? openblas_get_config() : "cblas");
#else
        rec(rr, "blas", "none");
#endif
    }
}

/* The ranks of a data-parallel training ended with different parameters:
 * not a measurement of one model, a failed row. */
static void rec_ranks_disagree(const struct session *s, int ranks, int on_gpu)
{
    const struct opts *o = &s->o;
    struct record fr = {0};
    rec(&fr, "status", "failed");
    rec(&fr, "reason", "the %d ranks ended with different parameters", ranks);
    rec_point(&fr, o);
    rec(&fr, "device", "%s", on_gpu ? "cuda" : "cpu");
    rec_write(&fr, o->result);
    free(fr.buf);
}

/* The peak FLOP rate: the backend's on the GPU, else an estimate from the
 * threads, the clock (*mhz) and the widest FMA the CPU has. */
static double peak_flops(struct session *s, int on_gpu, double *mhz)
{
    char buf[256];
    cpuinfo("cpu MHz", buf, sizeof buf);
    *mhz = atof(buf);
    double per_cycle = cpu_has("avx512f") ? 64 : cpu_has("fma") ? 32 : 8;
    /* threads beyond the online CPUs share them: no more peak */
    double cores = s->online > 0 && s->online < s->o.pt.threads ? s->online : s->o.pt.threads;
    double peak = cores * *mhz * 1e6 * per_cycle;
    if (on_gpu)
        peak = s->r.be.peak_flops ? s->r.be.peak_flops(s->o.pt.precision) : 0;
    return peak;
}

/* --profile: where the per-op profile is and how its ops were timed. */
static void rec_profile(struct record *rr, const struct session *s)
{
    rec(rr, "profile", "%s", s->o.profile);
    rec(rr, "profile_steps", "%d", PROFILE_STEPS);
    /* the ops' times summed: the step op by op (synchronised after
     * each op on the cpu), against step_ms */
    rec(rr, "profile_step_ms", "%.6g", s->prof_sum_s * 1e3 / PROFILE_STEPS);
    rec(rr, "profile_timing", "%s", s->r.be.prof_mark ? "cuda_events per op (op by op, no CUDA Graph)"
                                                      : "host clock per op, synchronised");
}

/* The step's times (median, interval, the stopping rule), start-up in
 * phases and the memory of the point. */
static void rec_timing(struct record *rr, const struct session *s, int on_gpu)
{
    const struct opts *o = &s->o;
    const struct run *r = &s->r;
    const measure_result *mr = &s->mr;
    rec(rr, "step_ms", "%.6g", mr->median_ms);
    rec(rr, "step_ms_lo", "%.6g", mr->lo_ms);
    rec(rr, "step_ms_hi", "%.6g", mr->hi_ms);
    rec(rr, "step_ms_mean", "%.6g", mr->mean_ms);
    rec(rr, "samples", "%d", mr->samples);
    rec(rr, "ci_met", "%d", mr->ci_met);
    rec(rr, "timed_s", "%.6g", mr->total_s);
    rec(rr, "startup_s", "%.6g", mr->first_step_t - s->t_start);
    rec(rr, "setup_s", "%.6g", s->t_setup);
    /* start-up in phases: to the plan, the plan, the first step; with the
     * rest of the warm-up they make startup_s */
    rec(rr, "startup_ms", "%.6g", (s->t_plan0 - s->t_start) * 1e3);
    rec(rr, "plan_ms", "%.6g", (s->t_plan1 - s->t_plan0) * 1e3);
    rec(rr, "first_step_ms", "%.6g", mr->first_step_ms);
    rec(rr, "peak_mem_bytes", "%zu", on_gpu ? r->be.peak() : mem_peak());
    if (on_gpu)
        rec(rr, "host_peak_mem_bytes", "%zu", mem_peak());
    rec(rr, "arena_bytes", "%zu", s->arena_bytes);
    if (!o->pt.train)
        rec(rr, "saved_activations", "%d", s->nsaved);
    rec(rr, "workspace_bytes", "%zu", s->ws);
}

int session_result(struct session *s)
{
    const struct opts *o = &s->o;
    struct run *r = &s->r;
    graph *g = &r->g;
    measure_result *mr = &s->mr;
    struct record rr = {0};
    struct ranks_result q;
    int ranks = engine_comm ? engine_comm->size : 1;
    memset(&q, 0, sizeof q);
    float loss = g->loss >= 0 ? session_loss(r) : 0.0f;
    if (engine_comm) {
        ranks_reduce(s, &q);
        mr->median_ms = q.med;
        mr->lo_ms = q.lo;
        mr->hi_ms = q.hi;
        if (!q.same_weights && !s->quiet)
            fprintf(stderr, "matrix-engine: the ranks ended with different parameters\n");
    }
    if (s->quiet)
        return 0;
    double step_s = mr->median_ms / 1e3;
    int on_gpu = o->pt.device == DEV_CUDA;
    double mhz;
    double peak = peak_flops(s, on_gpu, &mhz);
    rec(&rr, "status", "ok");
    rec_point(&rr, o);
    rec(&rr, "device", "%s", on_gpu ? "cuda" : "cpu");
    rec(&rr, "ignored", "%s", s->ignored);
    if (s->device_fallback[0])
        rec(&rr, "device_fallback", "%s", s->device_fallback);
    rec(&rr, "throughput", "%.6g", (double)ranks * o->pt.batch / step_s);
    rec(&rr, "unit", "samples/s");
    rec_timing(&rr, s, on_gpu);
    rec(&rr, "flops_per_step", "%.6g", s->flops);
    rec(&rr, "tflops", "%.6g", s->flops / step_s / 1e12);
    if (!on_gpu)
        rec(&rr, "cpu_mhz", "%.0f", mhz);
    rec(&rr, "online_cpus", "%ld", s->online);
    rec(&rr, on_gpu ? "peak_tflops" : "peak_tflops_est", "%.6g", peak / 1e12);
    rec(&rr, "pct_peak", "%.4g", peak > 0 ? 100.0 * s->flops / step_s / peak : 0.0);
    rec(&rr, "ops_per_step", "%d", r->nrun);
    rec(&rr, "bn_folded", "%d", s->folded);
    rec(&rr, "ops_fused", "%d", s->fused);
    rec(&rr, "attention_flash_form", "%d", s->flash);
    rec(&rr, "bn_relu_bwd_folded", "%d", s->bnrelu);
    int fdrop = 0; /* of which with dropout: keep flags in the io type, drawn again in the backward */
    for (int i = 0; i < g->nfwd; i++)
        fdrop += g->ops[i].type == OP_ATTENTION && g->ops[i].out[2] >= 0 &&
                 g->t[g->ops[i].out[1]].ndim == 3;
    rec(&rr, "attention_flash_dropout", "%d", fdrop);
    /* training: lifetimes of the step; infer: reuse (inference_mode on) or
     * autograd-saved (off: what a backward would read kept to the end) */
    rec(&rr, "memory_plan", "%s",
        o->pt.train ? "training" : o->pt.inference_mode ? "reuse" : "autograd-saved");
    if (g->loss >= 0)
        rec(&rr, "loss", "%.6g", loss);
    if (r->data)
        rec_data(&rr, r, mr);
    if (o->profile)
        rec_profile(&rr, s);
    if (engine_comm)
        rec_ranks(&rr, s, &q, ranks, on_gpu);
    rec_platform(&rr, s, on_gpu);
    if (engine_comm && o->pt.train && !q.same_weights) { /* not a measurement of one model */
        rec_ranks_disagree(s, ranks, on_gpu);
        free(rr.buf);
        return 1;
    }
    int rc = rec_write(&rr, o->result) ? 1 : 0;
    if (!o->result)
        fwrite(rr.buf, 1, rr.len, stdout);
    free(rr.buf);
    return rc;
}

void session_free(struct session *s)
{
    free(prof_s);
    prof_s = NULL;
    free(s->r.stage_x);
    free(s->r.stage_y);
    for (int k = 0; k < DATA_SLOTS; k++)
        free(s->r.stage_index[k]);
    data_free(&s->data);
    run_free(&s->r, s->arena, s->arena_bytes);
}
