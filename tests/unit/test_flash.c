/* test_flash.c - the flash form of attention (pass_flash_attention,
 * engine/passes.c) and the CPU backend's two forms of OP_ATTENTION(_BWD)
 * (engine/cpu/ops.c), the reference the CUDA backend's flash attention
 * (cuDNN's fused SDPA, or its kernels) is checked against by ops_check:
 *
 *   - the pass turns every attention op without a dropout mask of bert_tiny
 *     (eval on) into the flash form, (B, H, T) lse, and none with a mask
 *     (eval off); the backward autodiff then makes reads the lse and the
 *     forward's y;
 *   - on the CPU, the flash form gives the same y, dq, dk and dv as the
 *     probabilities form (1e-5), and its lse is the log-sum-exp of the
 *     scaled scores computed here in double (1e-5), for sizes 1, odd and
 *     prime, with accumulating gradients too. */
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
        nb++;
    }
    CHECK_INT(nb, natt);
    graph_free(&g);
    /* with attention dropout nothing changes */
    if (build_model(&g, "bert_tiny", 0, 0)) {
        CHECK(0);
        return;
    }
    CHECK_INT(pass_flash_attention(&g), 0);
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

/* One attention forward + backward in both forms on the CPU backend. */
static void check_cpu(backend *be, int B, int T, int H, int C, int acc)
{
    graph g;
    graph_init(&g);
    int q = graph_t2(&g, "q", TK_ACT, (int64_t)B * T, C);
    int k = graph_t2(&g, "k", TK_ACT, (int64_t)B * T, C);
    int v = graph_t2(&g, "v", TK_ACT, (int64_t)B * T, C);
    int dy = graph_t2(&g, "dy", TK_GRAD, (int64_t)B * T, C);
    int64_t ps[4] = {B, H, T, T}, ls[3] = {B, H, T};
    int y[2], st[2], d[2][3];
    for (int f = 0; f < 2; f++) {
        y[f] = graph_t2(&g, f ? "y.flash" : "y", TK_ACT, (int64_t)B * T, C);
        st[f] = graph_tensor(&g, f ? "lse" : "probs", TK_ACT, DT_F32, LAYOUT_ROW, f ? 3 : 4,
                             f ? ls : ps);
        for (int j = 0; j < 3; j++)
            d[f][j] = graph_t2(&g, "d", TK_GRAD, (int64_t)B * T, C);
    }
    for (int f = 0; f < 2; f++) {
        op *o;
        int fi = graph_op(&g, OP_ATTENTION, "attention", &o);
        o->in[0] = q; o->in[1] = k; o->in[2] = v; o->out[0] = y[f]; o->out[1] = st[f];
        o->heads = H;
        graph_op(&g, OP_ATTENTION_BWD, "attention_bwd", &o);
        o->in[0] = dy; o->in[1] = q; o->in[2] = k; o->in[3] = v; o->in[4] = st[f];
        o->in[5] = f ? y[f] : -1;
        for (int j = 0; j < 3; j++)
            o->out[j] = d[f][j];
        o->fwd = fi;
        o->heads = H;
        o->acc = acc ? 7 : 0;
    }
    fill(&g, q, 1);
    fill(&g, k, 2);
    fill(&g, v, 3);
    fill(&g, dy, 4);
    for (int f = 0; f < 2; f++) {
        fill(&g, y[f], 0);
        fill(&g, st[f], 0);
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
    printf("B=%d T=%d H=%d C=%d acc=%d: flash vs probs form: y %.2g, gradients %.2g; lse %.2g\n",
           B, T, H, C, acc, ey, ed, el);
    CHECK(ey <= 1e-5);
    CHECK(ed <= 1e-5);
    CHECK(el <= 1e-5);
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
    check_cpu(&be, 1, 1, 1, 8, 0);
    check_cpu(&be, 2, 7, 2, 16, 0);
    check_cpu(&be, 3, 33, 4, 64, 1);
    check_cpu(&be, 1, 128, 12, 768, 0);
    be.fini();
    free(backend_ws);
    return T_DONE();
}
