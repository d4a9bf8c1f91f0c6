/* mnist_cnn.c - the MNIST CNN of 004_9e9952a87295c093.txt (Koehler's
 * "MNIST Handwritten Digit Recognition in PyTorch"):
 *
 *   x = relu(max_pool2d(conv1(x), 2))              conv1: 1 -> 10, 5x5
 *   x = relu(max_pool2d(dropout2d(conv2(x)), 2))   conv2: 10 -> 20, 5x5
 *   x = relu(fc1(x.view(-1, 320)))                 fc1: 320 -> 50
 *   x = fc2(dropout(x))                            fc2: 50 -> 10
 *   loss = nll_loss(log_softmax(x), target)
 *
 * trained with SGD (lr 0.01, momentum 0.5). Dropout is active unless --eval on
 * (as with model.train() / model.eval()), whatever the task. */
#include "config.h"
#include "models.h"

typedef struct mnist_cnn_params {
    int conv1_w; /* (10, 1, 5, 5) */
    int conv1_b; /* (10) */
    int conv2_w; /* (20, 10, 5, 5) */
    int conv2_b; /* (20) */
    int fc1_w;   /* (50, 320) */
    int fc1_b;   /* (50) */
    int fc2_w;   /* (10, 50) */
    int fc2_b;   /* (10) */
} mnist_cnn_params;

int mnist_cnn_build(graph *g, const point *pt, model_info *info, char *err, int errlen)
{
    int layout = pt->channels_last ? LAYOUT_NHWC : LAYOUT_NCHW;
    int drop = !pt->eval;
    int x = graph_t4(g, "input", TK_INPUT, layout, pt->batch, 1, 28, 28);
    g->t[x].init = INIT_NORMAL;
    g->t[x].init_a = 1.0f;
    int64_t b = pt->batch;
    int target = graph_tensor(g, "target", TK_INPUT, DT_I32, LAYOUT_ROW, 1, &b);
    g->t[target].init = INIT_LABELS;
    g->t[target].init_a = 10;

    x = layer_conv(g, "conv1", x, 10, 5, 1, 0, 1, 0);
    x = layer_maxpool(g, "pool1", x, 2, 2, 0);
    x = layer_act(g, "relu1", x, ACT_RELU);
    x = layer_conv(g, "conv2", x, 20, 5, 1, 0, 1, 0);
    if (drop)
        x = layer_dropout(g, "conv2_drop", x, 0.5f, 1);
    x = layer_maxpool(g, "pool2", x, 2, 2, 0);
    x = layer_act(g, "relu2", x, ACT_RELU);
    x = layer_flatten(g, "flatten", x);
    x = layer_linear(g, "fc1", x, 50, 1, 0, 0);
    x = layer_act(g, "relu3", x, ACT_RELU);
    if (drop)
        x = layer_dropout(g, "fc1_drop", x, 0.5f, 0);
    x = layer_linear(g, "fc2", x, 10, 1, 0, 0);
    if (pt->train)
        g->loss = layer_nll(g, "loss", x, target, &g->output);
    else
        g->output = layer_logsoftmax(g, "log_softmax", x);

    info->input_desc = "1x28x28 images, 10 classes";
    info->uses_channels_last = 1;
    info->optim = (optim_cfg){.adamw = 0, .lr = 0.01f, .momentum = 0.5f, .wd = 0.0f};
    (void)err;
    (void)errlen;
    return 0;
}
