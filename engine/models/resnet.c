/* resnet.c - ResNet-18 / ResNet-50 (v1.5: stride on the 3x3 of the
 * bottleneck) in torchvision's layout and names, and resnet_tiny, the PyTorch
 * engine's CIFAR-style test model (3x3/1 stem, no max-pool, widths 16-128).
 *
 *   conv1 7x7/2 (64) - bn1 - relu - maxpool 3x3/2
 *   layer1..4: BasicBlock (18: [2,2,2,2]) or Bottleneck (50: [3,4,6,3]),
 *              widths 64, 128, 256, 512 (x4 out for Bottleneck), stride 2
 *              from layer2 on; downsample = conv1x1/stride + bn
 *   avgpool - fc (num_classes); loss: cross-entropy (log-softmax + NLL)
 *
 * Weights as torchvision initialises them: convolutions kaiming-normal
 * (fan_out, relu), BatchNorm weight 1 bias 0, fc PyTorch's Linear default.
 * Training: SGD, lr 0.01, momentum 0.9, weight decay 1e-4 (torchvision's
 * reference recipe uses lr 0.1; the cost of a step is the same). */
#include "config.h"
#include "models.h"

#include <stdio.h>
#include <string.h>

typedef struct resnet_config {
    int bottleneck;   /* 0: BasicBlock, 1: Bottleneck (expansion 4) */
    int blocks[4];    /* blocks per stage */
    int width[4];     /* planes per stage */
    int stem;         /* channels of conv1 */
    int classes;
    int image;        /* default input side, pixels */
    int cifar;        /* stem: 3x3/1 conv, no max-pool (resnet_tiny) */
} resnet_config;

static const resnet_config resnet18_cfg = {0, {2, 2, 2, 2}, {64, 128, 256, 512}, 64, 1000, 224, 0};
static const resnet_config resnet50_cfg = {1, {3, 4, 6, 3}, {64, 128, 256, 512}, 64, 1000, 224, 0};
/* the PyTorch engine's resnet_tiny (engine/pytorch/matrix_torch_models.py) */
static const resnet_config resnet_tiny_cfg = {0, {1, 1, 1, 1}, {16, 32, 64, 128}, 16, 10, 32, 1};

/* conv (no bias) + BN, named as torchvision: <p>.conv<i> / <p>.bn<i>. */
static int conv_bn(graph *g, const char *conv, const char *bn, int x, int cout, int k,
                   int stride, int pad, int train)
{
    x = layer_conv(g, conv, x, cout, k, stride, pad, 0, 1);
    return layer_bn(g, bn, x, train);
}

static int resnet_block(graph *g, const resnet_config *c, const char *p, int x, int planes,
                        int stride, int train)
{
    char n1[64], n2[64];
    int64_t cin = g->t[x].shape[1];
    int out = c->bottleneck ? planes * 4 : planes;
    int id = x, y;
    /* the shortcut first, so that fusion can merge the add into the last BN */
    if (stride != 1 || cin != out) {
        snprintf(n1, sizeof n1, "%s.downsample.0", p);
        snprintf(n2, sizeof n2, "%s.downsample.1", p);
        id = conv_bn(g, n1, n2, x, out, 1, stride, 0, train);
    }
    if (!c->bottleneck) {
        snprintf(n1, sizeof n1, "%s.conv1", p);
        snprintf(n2, sizeof n2, "%s.bn1", p);
        y = conv_bn(g, n1, n2, x, planes, 3, stride, 1, train);
        snprintf(n1, sizeof n1, "%s.relu1", p);
        y = layer_act(g, n1, y, ACT_RELU);
        snprintf(n1, sizeof n1, "%s.conv2", p);
        snprintf(n2, sizeof n2, "%s.bn2", p);
        y = conv_bn(g, n1, n2, y, planes, 3, 1, 1, train);
    } else {
        snprintf(n1, sizeof n1, "%s.conv1", p);
        snprintf(n2, sizeof n2, "%s.bn1", p);
        y = conv_bn(g, n1, n2, x, planes, 1, 1, 0, train);
        snprintf(n1, sizeof n1, "%s.relu1", p);
        y = layer_act(g, n1, y, ACT_RELU);
        snprintf(n1, sizeof n1, "%s.conv2", p);
        snprintf(n2, sizeof n2, "%s.bn2", p);
        y = conv_bn(g, n1, n2, y, planes, 3, stride, 1, train);
        snprintf(n1, sizeof n1, "%s.relu2", p);
        y = layer_act(g, n1, y, ACT_RELU);
        snprintf(n1, sizeof n1, "%s.conv3", p);
        snprintf(n2, sizeof n2, "%s.bn3", p);
        y = conv_bn(g, n1, n2, y, out, 1, 1, 0, train);
    }
    snprintf(n1, sizeof n1, "%s.add", p);
    y = layer_add(g, n1, y, id);
    snprintf(n1, sizeof n1, "%s.relu", p);
    return layer_act(g, n1, y, ACT_RELU);
}

static int resnet_build(const resnet_config *c, graph *g, const point *pt, model_info *info,
                        char *err, int errlen)
{
    int layout = pt->channels_last ? LAYOUT_NHWC : LAYOUT_NCHW;
    int train = !pt->eval; /* BatchNorm on batch statistics unless eval */
    int side = pt->image_size ? pt->image_size : c->image;
    if (side < (c->cifar ? 8 : 32)) {
        snprintf(err, errlen, "--image-size %d is too small for a ResNet (32 pixels at least)", side);
        return -1;
    }
    int x = graph_t4(g, "input", TK_INPUT, layout, pt->batch, 3, side, side);
    g->t[x].init = INIT_NORMAL;
    g->t[x].init_a = 1.0f;
    int64_t b = pt->batch;
    int target = graph_tensor(g, "target", TK_INPUT, DT_I32, LAYOUT_ROW, 1, &b);
    g->t[target].init = INIT_LABELS;
    g->t[target].init_a = c->classes;

    if (c->cifar) {
        x = conv_bn(g, "conv1", "bn1", x, c->stem, 3, 1, 1, train);
        x = layer_act(g, "relu", x, ACT_RELU);
    } else {
        x = conv_bn(g, "conv1", "bn1", x, c->stem, 7, 2, 3, train);
        x = layer_act(g, "relu", x, ACT_RELU);
        x = layer_maxpool(g, "maxpool", x, 3, 2, 1);
    }
    for (int s = 0; s < 4; s++)
        for (int i = 0; i < c->blocks[s]; i++) {
            char p[32];
            snprintf(p, sizeof p, "layer%d.%d", s + 1, i);
            x = resnet_block(g, c, p, x, c->width[s], i == 0 && s > 0 ? 2 : 1, train);
        }
    x = layer_avgpool(g, "avgpool", x);
    x = layer_linear(g, "fc", x, c->classes, 1, 0, 0);
    g->output = x;
    if (pt->train)
        g->loss = layer_nll(g, "loss", x, target, NULL);

    info->input_desc = "3-channel images";
    info->uses_channels_last = 1;
    info->uses_image_size = 1;
    info->optim = (optim_cfg){.adamw = 0, .lr = 0.01f, .momentum = 0.9f, .wd = 1e-4f};
    return 0;
}

int resnet18_build(graph *g, const point *pt, model_info *info, char *err, int errlen)
{
    return resnet_build(&resnet18_cfg, g, pt, info, err, errlen);
}

int resnet50_build(graph *g, const point *pt, model_info *info, char *err, int errlen)
{
    return resnet_build(&resnet50_cfg, g, pt, info, err, errlen);
}

int resnet_tiny_build(graph *g, const point *pt, model_info *info, char *err, int errlen)
{
    return resnet_build(&resnet_tiny_cfg, g, pt, info, err, errlen);
}
