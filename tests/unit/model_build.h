/* model_build.h - for the engine's unit tests: build a model's graph on the
 * CPU at batch 4 (sequence 16), with its backward and optimizer when train. */
#ifndef MATRIX_TEST_MODEL_BUILD_H
#define MATRIX_TEST_MODEL_BUILD_H

#include <stdio.h>

#include "../../engine/graph.h"
#include "../../engine/passes.h"
#include "../../engine/models/models.h"

static int build_model(graph *g, const char *model, int train, int eval)
{
    point pt = {0};
    model_info info = {0};
    char err[256];
    pt.model = model;
    pt.train = train;
    pt.eval = eval;
    pt.batch = 4;
    pt.seq_len = 16;
    pt.gpus = 1;
    pt.threads = 1;
    graph_init(g);
    if (model_find(model)->build(g, &pt, &info, err, sizeof err)) {
        fprintf(stderr, "build %s: %s\n", model, err);
        return -1;
    }
    if (train)
        pass_autodiff(g, &info.optim);
    return 0;
}

#endif
