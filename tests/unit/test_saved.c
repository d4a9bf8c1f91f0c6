/* test_saved.c - pass_saved and pass_plan's keep (engine/passes.c): an
 * inference graph run with autograd on (--inference-mode off) keeps exactly
 * what its backward would read, as PyTorch keeps saved tensors outside
 * no_grad. Checked on the CPU: the graph is left as it was, the saved set is
 * the activations the backward ops of a training build of the same model
 * read, and the plan sits between full reuse and keeping everything. */
#include "config.h"
#include "t.h"
#include "model_build.h"
#include "../../engine/graph.h"
#include "../../engine/passes.h"
#include "../../engine/models/models.h"

#include <stdlib.h>
#include <string.h>


static int reads_in_backward(const graph *g, int t)
{
    for (int i = g->nfwd; i < g->nops; i++)
        for (int k = 0; k < GRAPH_MAX_IN; k++)
            if (g->ops[i].in[k] == t)
                return 1;
    return 0;
}

static void check_model(const char *model, int strict)
{
    graph inf, tr, all;
    if (build_model(&inf, model, 0, 0) || build_model(&tr, model, 1, 0) || build_model(&all, model, 0, 0)) {
        CHECK(0);
        return;
    }
    int nt = inf.nt, nops = inf.nops;
    char *saved = calloc(nt + 1, 1);
    int n = pass_saved(&inf, saved);
    /* the graph is as it was */
    CHECK_INT(inf.nt, nt);
    CHECK_INT(inf.nops, nops);
    CHECK_INT(inf.nfwd, nops);
    for (int i = 0; i < nt; i++)
        CHECK(inf.t[i].grad == -1);
    CHECK(n > 0);
    /* the same activations as the training build's backward reads, by name
     * (the loss path differs: inference ends at the logits) */
    int agree = 0, compared = 0;
    for (int i = 0; i < nt; i++) {
        if (inf.t[i].kind != TK_ACT)
            continue;
        int j = graph_find(&tr, inf.t[i].name);
        if (j < 0 || j >= tr.nt || i == inf.output)
            continue;
        compared++;
        int want = reads_in_backward(&tr, j);
        if (want == saved[i])
            agree++;
        else
            fprintf(stderr, "%s: '%s' saved %d, the training backward reads it: %d\n", model,
                    inf.t[i].name, saved[i], want);
    }
    CHECK(compared > 5);
    CHECK_INT(agree, compared);
    /* reuse everything <= keep the saved set <= keep everything */
    size_t reuse = pass_plan(&all, 1, NULL);
    size_t keep = pass_plan(&inf, 1, saved);
    size_t none = pass_plan(&all, 0, NULL);
    printf("%s: %d saved activations; arena %zu bytes (reuse) <= %zu (saved kept) <= %zu (no reuse)\n",
           model, n, reuse, keep, none);
    CHECK(strict ? reuse < keep : reuse <= keep);
    CHECK(keep < none);
    /* a saved tensor lives to the end of the step */
    for (int i = 0; i < nt; i++)
        if (saved[i])
            CHECK_INT(inf.t[i].last, inf.nops);
    free(saved);
    graph_free(&inf);
    graph_free(&tr);
    graph_free(&all);
}

int main(void)
{
    check_model("mnist_cnn", 0); /* at batch 4 one early buffer sets the arena */
    check_model("resnet_tiny", 1);
    check_model("bert_tiny", 1);
    return T_DONE();
}
