/* test_precision.c - pass_precision (engine/passes.c): which tensors of a
 * training graph become f16 / bf16 under mixed precision, what stays f32,
 * and that the memory plan shrinks with them. Runs on the CPU: the pass is
 * plain graph rewriting, used by the CUDA backend. */
#include "config.h"
#include "t.h"
#include "model_build.h"
#include "../../engine/graph.h"
#include "../../engine/passes.h"
#include "../../engine/models/models.h"

#include <stdlib.h>


/* 1 when tensor t is an output slot k of some op of type ty */
static int is_out(const graph *g, int t, int ty, int k)
{
    for (int i = 0; i < g->nops; i++)
        if (g->ops[i].type == ty && g->ops[i].out[k] == t)
            return 1;
    return 0;
}

static void check_model(const char *model, int dt)
{
    graph a, b;
    if (build_model(&a, model, 1, 0) || build_model(&b, model, 1, 0)) {
        CHECK(0);
        return;
    }
    size_t plan32 = pass_plan(&a, 1, NULL);
    int changed = pass_precision(&b, dt);
    size_t plan16 = pass_plan(&b, 1, NULL);
    CHECK(changed > 0);
    CHECK(plan16 < plan32);
    CHECK(plan16 * 10 < plan32 * 6); /* activations dominate: close to half */
    int n16 = 0;
    for (int i = 0; i < b.nt; i++) {
        const tensor *t = &b.t[i], *u = &a.t[i];
        int stats = is_out(&b, i, OP_BN, 1) || is_out(&b, i, OP_BN, 2);
        int losspath = is_out(&b, i, OP_LOGSOFTMAX, 0) || is_out(&b, i, OP_NLL, 0) ||
                       is_out(&b, i, OP_NLL_BWD, 0);
        int mask = is_out(&b, i, OP_DROPOUT, 1);
        if (t->kind == TK_PARAM || t->kind == TK_PGRAD || t->kind == TK_STATE ||
            t->kind == TK_BUFFER || t->kind == TK_INPUT || stats || losspath || mask) {
            CHECK_INT(t->dtype, u->dtype); /* master weights, statistics, loss: as built */
            CHECK_INT(t->bytes, u->bytes);
            continue;
        }
        if (u->dtype == DT_F32 && (t->kind == TK_ACT || t->kind == TK_GRAD)) {
            CHECK_INT(t->dtype, dt);
            CHECK_INT(t->bytes, graph_numel(t) * 2);
            n16++;
        } else
            CHECK_INT(t->dtype, u->dtype); /* i32 indices and labels */
    }
    CHECK_INT(n16, changed);
    CHECK(b.t[b.loss].dtype == DT_F32);
    graph_free(&a);
    graph_free(&b);
}

int main(void)
{
    CHECK_INT(graph_dtype_size(DT_F32), 4);
    CHECK_INT(graph_dtype_size(DT_I32), 4);
    CHECK_INT(graph_dtype_size(DT_F16), 2);
    CHECK_INT(graph_dtype_size(DT_BF16), 2);
    check_model("mnist_cnn", DT_F16);
    check_model("resnet_tiny", DT_BF16);
    return T_DONE();
}
