/* test_bnstats.c - the host-side decisions of BatchNorm statistics from the
 * convolution (engine/cuda/bnstats.h, MATRIX_ENGINE_BNSTATS=conv): the knob,
 * which convolution pairs with which BatchNorm (hand-made graphs for every
 * refusal, and resnet_tiny / resnet18 as the engine builds them for CUDA
 * training: NHWC, fused, with their backward), and the check of a plan's f32
 * sums against double ones with its tolerance. Runs on the host, no GPU. */
#include "../../engine/cuda/bnstats.h"
#include "../../engine/knobs.h"
#include "../../engine/passes.h"
#include "../../engine/models/models.h"
#include "t.h"

#include <stdio.h>

#include <stdlib.h>

/* x -> conv -> y -> [op reading y]; returns the conv's index. */
static int conv_into(graph *g, int layout, int *y)
{
    int64_t sx[4] = {2, 4, 6, 6}, sw[4] = {8, 4, 3, 3};
    int x = graph_tensor(g, "x", TK_ACT, DT_F32, layout, 4, sx);
    int w = graph_tensor(g, "w", TK_PARAM, DT_F32, LAYOUT_ROW, 4, sw);
    int64_t sy[4] = {2, 8, 6, 6};
    *y = graph_tensor(g, "y", TK_ACT, DT_F32, layout, 4, sy);
    op *o;
    int c = graph_op(g, OP_CONV, "conv", &o);
    o->in[0] = x; o->in[1] = w; o->out[0] = *y;
    o->kh = o->kw = 3; o->stride = 1; o->pad = 1;
    return c;
}

static int bn_of(graph *g, int x, int train)
{
    int64_t sc[1] = {8}, sy[4] = {2, 8, 6, 6};
    op *o;
    int b = graph_op(g, OP_BN, "bn", &o);
    o->in[0] = x;
    for (int k = 1; k <= 4; k++)
        o->in[k] = graph_tensor(g, "p", TK_PARAM, DT_F32, LAYOUT_ROW, 1, sc);
    o->out[0] = graph_tensor(g, "bny", TK_ACT, DT_F32, g->t[x].layout, 4, sy);
    o->train = train;
    return b;
}

/* Pairing of a conv -> BN graph after edit() changed it: the BN index or -1 with why. */
static int pair_after(void (*edit)(graph *, int, int, int), const char **why)
{
    graph g;
    int y;
    graph_init(&g);
    int c = conv_into(&g, LAYOUT_NHWC, &y);
    if (edit)
        edit(&g, c, y, -1);
    int b = bn_of(&g, y, 1);
    if (edit)
        edit(&g, c, y, b);
    int r = bns_pair(&g, g.nops, c, why);
    graph_free(&g);
    return r;
}

static void e_bias(graph *g, int c, int y, int b)
{
    (void)y;
    if (b < 0) {
        int64_t s[1] = {8};
        g->ops[c].in[2] = graph_tensor(g, "bias", TK_PARAM, DT_F32, LAYOUT_ROW, 1, s);
    }
}
static void e_relu(graph *g, int c, int y, int b) { (void)y; if (b < 0) g->ops[c].act = ACT_RELU; }
static void e_eval(graph *g, int c, int y, int b) { (void)c; (void)y; if (b >= 0) g->ops[b].train = 0; }
static void e_sync(graph *g, int c, int y, int b) { (void)c; (void)y; if (b >= 0) g->ops[b].sync = 1; }
static void e_res(graph *g, int c, int y, int b) { (void)c; if (b >= 0) g->ops[b].in[5] = y; }
/* an activation reads y before the BN */
static void e_reader(graph *g, int c, int y, int b)
{
    (void)c;
    if (b < 0) {
        op *o;
        graph_op(g, OP_ACT, "relu", &o);
        o->in[0] = y;
        o->out[0] = graph_tensor(g, "r", TK_ACT, DT_F32, LAYOUT_NHWC, 4, g->t[y].shape);
    }
}
/* an op writes y again before the BN */
static void e_writer(graph *g, int c, int y, int b)
{
    (void)c;
    if (b < 0) {
        op *o;
        graph_op(g, OP_COPY, "copy", &o);
        o->in[0] = graph_tensor(g, "z", TK_ACT, DT_F32, LAYOUT_NHWC, 4, g->t[y].shape);
        o->out[0] = y;
    }
}
/* a dead op reading y before the BN does not count */
static void e_dead(graph *g, int c, int y, int b)
{
    e_reader(g, c, y, b);
    if (b < 0)
        g->ops[g->nops - 1].dead = 1;
}

/* Pairs over a model as the CUDA backend gets it for training (NHWC,
 * fused, backward): *nconv forward convolutions, the count paired (each
 * with a training BN whose x is the conv's y, every BN at most once). */
static int model_pairs(const char *model, int *nconv)
{
    graph g;
    point pt = {0};
    model_info info = {0};
    char err[256];
    pt.model = model;
    pt.train = 1;
    pt.batch = 4;
    pt.gpus = 1;
    pt.threads = 1;
    pt.channels_last = 1;
    graph_init(&g);
    if (model_find(model)->build(&g, &pt, &info, err, sizeof err)) {
        fprintf(stderr, "build %s: %s\n", model, err);
        return -1;
    }
    pass_fuse(&g, 1);
    pass_autodiff(&g, &info.optim);
    int paired = 0;
    char *used = calloc((size_t)g.nops + 1, 1);
    *nconv = 0;
    for (int i = 0; i < g.nops; i++) {
        const char *why;
        if (g.ops[i].type != OP_CONV)
            continue;
        ++*nconv;
        int b = bns_pair(&g, g.nops, i, &why);
        if (b < 0) {
            fprintf(stderr, "%s: conv '%s' not paired: %s\n", model, g.ops[i].name, why);
            continue;
        }
        if (g.ops[b].type == OP_BN && g.ops[b].train && g.ops[b].in[0] == g.ops[i].out[0] &&
            !used[b] && b > i)
            paired++;
        used[b] = 1;
    }
    free(used);
    graph_free(&g);
    return paired;
}

int main(void)
{
    const char *why;

    /* the knob's values (knobs.h) are this enum's names in order */
    CHECK_STR(knob_value(KNOB_BNSTATS, BNS_CONV), "conv");
    CHECK_STR(knob_value(KNOB_BNSTATS, BNS_SEPARATE), "separate");

    /* pairing */
    CHECK_INT(pair_after(NULL, &why), 1);
    CHECK(why == NULL);
    CHECK_INT(pair_after(e_bias, &why), -1);
    CHECK(why && strstr(why, "epilogue"));
    CHECK_INT(pair_after(e_relu, &why), -1);
    CHECK(why && strstr(why, "epilogue"));
    CHECK_INT(pair_after(e_eval, &why), -1);
    CHECK(why && strstr(why, "eval"));
    CHECK_INT(pair_after(e_sync, &why), -1);
    CHECK(why && strstr(why, "SyncBN"));
    CHECK_INT(pair_after(e_res, &why), -1);
    CHECK(why && strstr(why, "residual"));
    CHECK_INT(pair_after(e_reader, &why), -1);
    CHECK(why && strstr(why, "not a BatchNorm"));
    CHECK_INT(pair_after(e_writer, &why), -1);
    CHECK(why && strstr(why, "written again"));
    CHECK_INT(pair_after(e_dead, &why), 2);
    {
        graph g;
        int y;
        graph_init(&g);
        int c = conv_into(&g, LAYOUT_NCHW, &y);
        bn_of(&g, y, 1);
        CHECK_INT(bns_pair(&g, g.nops, c, &why), -1);
        CHECK(why && strstr(why, "NHWC"));
        CHECK_INT(bns_pair(&g, g.nops, 1, &why), -1); /* the BN is no convolution */
        graph_free(&g);
        graph_init(&g);
        c = conv_into(&g, LAYOUT_NHWC, &y);
        int b = bn_of(&g, y, 1);
        CHECK_INT(bns_pair(&g, b, c, &why), -1); /* the BN is beyond nrun */
        CHECK(why && strstr(why, "no op reads y"));
        graph_free(&g);
    }

    /* whole models for CUDA training: every forward convolution of a
     * ResNet feeds a training BatchNorm first */
    int n = 0;
    CHECK_INT(model_pairs("resnet_tiny", &n), n);
    CHECK(n > 0);
    CHECK_INT(model_pairs("resnet18", &n), 20);
    CHECK_INT(n, 20);
    /* mnist_cnn: convolutions with a bias and ReLU, no BatchNorm */
    CHECK_INT(model_pairs("mnist_cnn", &n), 0);
    CHECK(n > 0);

    /* the sums' check and tolerance */
    double rs, rq;
    bns_tol(0x1p-11, &rs, &rq);
    CHECK(rs > 0x1p-11 && rs < 1e-3 && rq > 2 * 0x1p-11 && rq < 2e-3);
    {
        enum { K = 3 };
        double ref[3 * K] = {10.0, -5.0, 0.0, 100.0, 50.0, 20.0, 80.0, 40.0, 16.0};
        float sum[K] = {10.0f, -5.0f, 0.0f}, sq[K] = {80.0f, 40.0f, 16.0f};
        bns_verdict v;
        CHECK_INT(bns_check(sum, sq, ref, K, 0x1p-11, &v), 0);
        CHECK(v.worst <= 1.0);
        /* within rs * sum|y|: the rounding of y to f16 of every term */
        sum[0] = (float)(10.0 + 0.9 * rs * 100.0);
        sq[2] = (float)(16.0 - 0.9 * rq * 16.0);
        CHECK_INT(bns_check(sum, sq, ref, K, 0x1p-11, &v), 0);
        /* beyond it: one channel bad, named */
        sum[1] = (float)(-5.0 + 1.5 * rs * 50.0);
        CHECK_INT(bns_check(sum, sq, ref, K, 0x1p-11, &v), 1);
        CHECK_INT(v.worst_c, 1);
        CHECK(v.worst > 1.4 && v.worst < 1.6);
        /* the same error is fine for f16 and not for f32 */
        sum[0] = 10.0f;
        sum[1] = -5.0f;
        sq[2] = 16.0f;
        sq[0] = (float)(80.0 + 0.5 * rq * 80.0);
        CHECK_INT(bns_check(sum, sq, ref, K, 0x1p-11, &v), 0);
        CHECK_INT(bns_check(sum, sq, ref, K, 0x1p-24, &v), 1);
        CHECK_INT(v.worst_c, 0);
        /* a NaN (an element never written) fails */
        sq[0] = 80.0f;
        sum[2] = NAN;
        CHECK_INT(bns_check(sum, sq, ref, K, 0x1p-11, &v), 1);
        CHECK_INT(v.worst_c, 2);
        CHECK(isinf(v.worst));
    }
    return T_DONE();
}
