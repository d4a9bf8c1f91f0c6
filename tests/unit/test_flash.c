/* test_flash.c - the flash form of attention (pass_flash_attention,
 * engine/passes.c) and the CPU backend's two forms of OP_ATTENTION(_BWD)
 * (engine/cpu/ops.c), the reference the CUDA backend's flash attention
 * (cuDNN's fused SDPA, or its kernels) is checked against by ops_check:
 *
 *   - the pass turns every attention op of bert_tiny into the flash form,
 *     (B, H, T) lse, without dropout (eval on) and with it (eval off); the
 *     backward autodiff then makes reads the lse and the forward's y, and
 *     with dropout gets a keep-flag tensor of its own (out[3], the
 *     forward's p and seed); pass_precision gives the keep flags the io
 *     type and keeps the lse f32;
 *   - on the CPU, the flash form gives the same y, dq, dk and dv as the
 *     probabilities form (1e-5), and its lse is the log-sum-exp of the
 *     scaled scores computed here in double (1e-5), for sizes 1, odd and
 *     prime, with accumulating gradients too; with attention dropout too,
 *     where the flash form's keep flags are exactly where the probabilities
 *     form's mask is non-zero (which is 1 / (1 - p) there), the backward's
 *     flags are the forward's, and the dropped fraction is p (statistically);
 *   - graph_draws_masks: none without dropout (a dump on a device then runs
 *     whole steps, through the CUDA Graph), some with it. */
#include "config.h"
#include "t.h"
#include "model_build.h"
#include "../../engine/backend.h"
#include "../../engine/graph.h"
#include "../../engine/passes.h"
#include "../../engine/rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void check_pass(void)
{
    graph g;
    if (build_model(&g, "bert_tiny", 0, 1)) { /* eval on: no dropout */
        CHECK(0);
        return;
    }
    int natt = 0;
    for (int i = 0; i < g.nfwd; i++)
        natt += g.ops[i].type == OP_ATTENTION;
    CHECK_INT(pass_flash_attention(&g), natt);
    CHECK(natt == 2);
    optim_cfg opt;
    memset(&opt, 0, sizeof opt);
    pass_autodiff(&g, &opt);
    int nb = 0;
    for (int i = g.nfwd; i < g.nops; i++) {
        const op *o = &g.ops[i];
        if (o->type != OP_ATTENTION_BWD)
            continue;
        const op *f = &g.ops[o->fwd];
        const tensor *l = &g.t[f->out[1]];
        CHECK_INT(l->ndim, 3);
        CHECK_INT(l->shape[0], 4);  /* B */
        CHECK_INT(l->shape[1], 2);  /* H */
        CHECK_INT(l->shape[2], 16); /* T */
        CHECK_INT(l->bytes, 4 * 2 * 16 * 4);
        CHECK(strstr(l->name, ".lse") != NULL);
        CHECK_INT(o->in[4], f->out[1]);
        CHECK_INT(o->in[5], f->out[0]);
        CHECK_INT(o->out[3], -1); /* no dropout */
        nb++;
    }
    CHECK_INT(nb, natt);
    /* no mask to record: a dump on a device runs whole steps (the CUDA Graph
     * of reduce-overhead), as the measured steps do */
    CHECK_INT(graph_draws_masks(&g, g.nops), 0);
    graph_free(&g);
    /* with attention dropout: the flash form too, keep flags drawn again */
    if (build_model(&g, "bert_tiny", 0, 0)) {
        CHECK(0);
        return;
    }
    CHECK_INT(pass_flash_attention(&g), natt);
    pass_autodiff(&g, &opt);
    pass_precision(&g, DT_BF16);
    CHECK_INT(graph_draws_masks(&g, g.nops), 1); /* a dump records them op by op */
    CHECK_INT(graph_draws_masks(&g, 0), 0);
    nb = 0;
    for (int i = g.nfwd; i < g.nops; i++) {
        const op *o = &g.ops[i];
        if (o->type != OP_ATTENTION_BWD)
            continue;
        const op *f = &g.ops[o->fwd];
        CHECK_INT(g.t[f->out[1]].ndim, 3);
        CHECK_INT(g.t[f->out[1]].dtype, DT_F32); /* the lse stays f32 */
        CHECK(f->out[2] >= 0 && o->out[3] >= 0 && o->out[3] != f->out[2]);
        if (f->out[2] < 0 || o->out[3] < 0)
            continue;
        const tensor *m = &g.t[f->out[2]], *m2 = &g.t[o->out[3]];
        CHECK_INT(m->ndim, 4);
        CHECK_INT(m->shape[3], 16);
        CHECK_INT(m->dtype, DT_BF16); /* keep flags: the io type */
        CHECK_INT(m->bytes, 4 * 2 * 16 * 16 * 2);
        CHECK_INT(m2->dtype, DT_BF16);
        CHECK_INT(m2->bytes, m->bytes);
        CHECK_INT(o->in[4], f->out[1]);
        CHECK_INT(o->in[5], f->out[0]); /* y, not the mask: the mask is not kept */
        CHECK(o->p == f->p && o->p > 0.0f);
        CHECK(o->seed == f->seed);
        nb++;
    }
    CHECK_INT(nb, natt);
    graph_free(&g);
}

static float *fill(graph *g, int t, uint64_t seed)
{
    size_t n = (size_t)graph_numel(&g->t[t]);
    float *p = calloc(n ? n : 1, sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = seed ? 2.0f * rng_uniform(seed, i) - 1.0f : 0.0f;
    g->t[t].data = p;
    return p;
}

static double max_rel(const float *a, const float *b, size_t n)
{
    double m = 0, r = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        m = d > m ? d : m;
        r = fabs(b[i]) > r ? fabs(b[i]) : r;
    }
    return m / (r > 0 ? r : 1);
}

/* The largest relative error of L, the lse of every row of scaled
 * scores, against its definition computed in double. */
static double lse_error(const float *Q, const float *K, const float *L, int B, int T, int H, int C)
{
    double el = 0, *s = calloc((size_t)T, sizeof *s);
    int dh = C / H;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < T; i++) {
                double m = -1e300, sum = 0;
                for (int j = 0; j < T; j++) {
                    double a = 0;
                    for (int c = 0; c < dh; c++)
                        a += (double)Q[((size_t)b * T + i) * C + h * dh + c] *
                             K[((size_t)b * T + j) * C + h * dh + c];
                    s[j] = a / sqrt((double)dh);
                    m = s[j] > m ? s[j] : m;
                }
                for (int j = 0; j < T; j++)
                    sum += exp(s[j] - m);
                double ref = m + log(sum), e = fabs(L[((size_t)b * H + h) * T + i] - ref) /
                                               (fabs(ref) > 1 ? fabs(ref) : 1);
                el = e > el ? e : el;
            }
    free(s);
    return el;
}

/* The keep flags kf (flash form) against the probabilities form's mask pm
 * and the backward's flags kb, n each: 1 when kf is 0 / 1 exactly where pm
 * is 0 / scale, kb == kf, and the dropped fraction is p within 5 standard
 * deviations (printed). */
static int check_masks(const float *pm, const float *kf, const float *kb, size_t n, float p)
{
    float scale = 1.0f / (1.0f - p);
    size_t bad = 0, drop = 0;
    for (size_t i = 0; i < n; i++) {
        bad += !((kf[i] == 0.0f && pm[i] == 0.0f) || (kf[i] == 1.0f && pm[i] == scale));
        bad += kb[i] != kf[i];
        drop += kf[i] == 0.0f;
    }
    double frac = n ? (double)drop / n : p, sd = n ? sqrt(p * (1.0 - p) / n) : 0;
    printf("  dropout masks: %zu mismatches; dropped %.4f (p %.2f, sd %.4f)\n", bad, frac, p, sd);
    return bad == 0 && fabs(frac - p) <= 5 * sd + 1e-12;
}

/* One attention forward + backward in both forms on the CPU backend;
 * p > 0: with attention dropout. */
static void check_cpu(backend *be, int B, int T, int H, int C, int acc, float p)
{
    graph g;
    graph_init(&g);
    g.step = 3;
    int q = graph_t2(&g, "q", TK_ACT, (int64_t)B * T, C);
    int k = graph_t2(&g, "k", TK_ACT, (int64_t)B * T, C);
    int v = graph_t2(&g, "v", TK_ACT, (int64_t)B * T, C);
    int dy = graph_t2(&g, "dy", TK_GRAD, (int64_t)B * T, C);
    int64_t ps[4] = {B, H, T, T}, ls[3] = {B, H, T};
    int y[2], st[2], d[2][3], mk[2] = {-1, -1}, kb = -1;
    for (int f = 0; f < 2; f++) {
        y[f] = graph_t2(&g, f ? "y.flash" : "y", TK_ACT, (int64_t)B * T, C);
        st[f] = graph_tensor(&g, f ? "lse" : "probs", TK_ACT, DT_F32, LAYOUT_ROW, f ? 3 : 4,
                             f ? ls : ps);
        for (int j = 0; j < 3; j++)
            d[f][j] = graph_t2(&g, "d", TK_GRAD, (int64_t)B * T, C);
        if (p > 0)
            mk[f] = graph_tensor(&g, f ? "keep" : "mask", TK_ACT, DT_F32, LAYOUT_ROW, 4, ps);
    }
    int y0 = -1, l0 = -1; /* with dropout: the flash forward without it, which must differ */
    if (p > 0) {
        kb = graph_tensor(&g, "keep.bwd", TK_ACT, DT_F32, LAYOUT_ROW, 4, ps);
        y0 = graph_t2(&g, "y.nodrop", TK_ACT, (int64_t)B * T, C);
        l0 = graph_tensor(&g, "lse.nodrop", TK_ACT, DT_F32, LAYOUT_ROW, 3, ls);
        op *o;
        graph_op(&g, OP_ATTENTION, "attention.nodrop", &o);
        o->in[0] = q; o->in[1] = k; o->in[2] = v; o->out[0] = y0; o->out[1] = l0;
        o->heads = H;
    }
    for (int f = 0; f < 2; f++) {
        op *o;
        int fi = graph_op(&g, OP_ATTENTION, "attention", &o);
        o->in[0] = q; o->in[1] = k; o->in[2] = v; o->out[0] = y[f]; o->out[1] = st[f];
        o->out[2] = mk[f];
        o->heads = H;
        o->p = p;
        o->seed = 977; /* one stream for both forms: the same draws */
        graph_op(&g, OP_ATTENTION_BWD, "attention_bwd", &o);
        o->in[0] = dy; o->in[1] = q; o->in[2] = k; o->in[3] = v; o->in[4] = st[f];
        o->in[5] = f ? y[f] : mk[0];
        for (int j = 0; j < 3; j++)
            o->out[j] = d[f][j];
        if (f) { /* as pass_autodiff makes it */
            o->out[3] = kb;
            o->p = p;
            o->seed = 977;
        }
        o->fwd = fi;
        o->heads = H;
        o->acc = acc ? 7 : 0;
    }
    fill(&g, q, 1);
    fill(&g, k, 2);
    fill(&g, v, 3);
    fill(&g, dy, 4);
    if (kb >= 0) {
        fill(&g, kb, 0);
        fill(&g, y0, 0);
        fill(&g, l0, 0);
    }
    for (int f = 0; f < 2; f++) {
        fill(&g, y[f], 0);
        fill(&g, st[f], 0);
        if (mk[f] >= 0)
            fill(&g, mk[f], 0);
        for (int j = 0; j < 3; j++)
            fill(&g, d[f][j], acc ? 5 + j : 0); /* the same old gradients in both forms */
    }
    for (int i = 0; i < g.nops; i++) {
        size_t ws = be->workspace(&g, &g.ops[i]);
        if (ws > backend_ws_bytes) {
            free(backend_ws);
            backend_ws = calloc(1, ws);
            backend_ws_bytes = ws;
        }
        be->ops[g.ops[i].type](&g, &g.ops[i]);
    }
    size_t n = (size_t)B * T * C;
    double ey = max_rel(g.t[y[1]].data, g.t[y[0]].data, n), ed = 0;
    for (int j = 0; j < 3; j++) {
        double e = max_rel(g.t[d[1][j]].data, g.t[d[0][j]].data, n);
        ed = e > ed ? e : ed;
    }
    double el = lse_error(g.t[q].data, g.t[k].data, g.t[st[1]].data, B, T, H, C);
    printf("B=%d T=%d H=%d C=%d acc=%d p=%.2f: flash vs probs form: y %.2g, gradients %.2g; "
           "lse %.2g\n", B, T, H, C, acc, p, ey, ed, el);
    CHECK(ey <= 1e-5);
    CHECK(ed <= 1e-5);
    CHECK(el <= 1e-5);
    if (p > 0 && T > 1) /* the mask was applied: 1 - p of a row's weight is not 1 */
        CHECK(max_rel(g.t[y[1]].data, g.t[y0].data, n) > 1e-3);
    if (p > 0)
        CHECK(check_masks(g.t[mk[0]].data, g.t[mk[1]].data, g.t[kb].data,
                          (size_t)B * H * T * T, p));
    for (int i = 0; i < g.nt; i++) {
        free(g.t[i].data);
        g.t[i].data = NULL;
    }
    graph_free(&g);
}

int main(void)
{
    check_pass();
    backend be;
    backend_cpu_setup(&be);
    if (be.init(1)) {
        CHECK(0);
        return T_DONE();
    }
    for (int dr = 0; dr < 2; dr++) { /* without, then with attention dropout */
        float p = dr ? 0.1f : 0.0f;
        check_cpu(&be, 1, 1, 1, 8, 0, dr ? 0.5f : 0.0f);
        check_cpu(&be, 2, 7, 2, 16, 0, p);
        check_cpu(&be, 3, 33, 4, 64, 1, p);
        check_cpu(&be, 1, 128, 12, 768, 0, p);
    }
    be.fini();
    free(backend_ws);
    return T_DONE();
}
