/* models.c - the model registry. */
#include "config.h"
#include "models.h"

#include <string.h>

int mnist_cnn_build(graph *g, const point *pt, model_info *info, char *err, int errlen);
int resnet18_build(graph *g, const point *pt, model_info *info, char *err, int errlen);
int resnet50_build(graph *g, const point *pt, model_info *info, char *err, int errlen);
int resnet_tiny_build(graph *g, const point *pt, model_info *info, char *err, int errlen);
int bert_tiny_build(graph *g, const point *pt, model_info *info, char *err, int errlen);
int bert_base_build(graph *g, const point *pt, model_info *info, char *err, int errlen);
int bert_large_build(graph *g, const point *pt, model_info *info, char *err, int errlen);

const model_desc models[] = {
    {"mnist_cnn", "MNIST CNN of the CPU-vs-GPU study: 2 conv, 2 linear, dropout, NLL", mnist_cnn_build},
    {"resnet18", "ResNet-18, torchvision layout, 1000 classes, 224x224 (--image-size)", resnet18_build},
    {"resnet50", "ResNet-50 v1.5, torchvision layout, 1000 classes, 224x224 (--image-size)", resnet50_build},
    {"resnet_tiny", "CIFAR-style ResNet: 3x3 stem, BasicBlock x [1,1,1,1], widths 16-128, 10 classes, 32x32", resnet_tiny_build},
    {"bert_tiny", "post-LN BERT, 2 layers, hidden 128, 2 heads, FFN 512, MLM head (tied decoder) at 15% of positions (--seq-len)", bert_tiny_build},
    {"bert_base", "post-LN BERT, 12 layers, hidden 768, 12 heads, FFN 3072, MLM head (tied decoder) at 15% of positions", bert_base_build},
    {"bert_large", "post-LN BERT, 24 layers, hidden 1024, 16 heads, FFN 4096, MLM head (tied decoder) at 15% of positions", bert_large_build},
    {NULL, NULL, NULL},
};

const model_desc *model_find(const char *name)
{
    for (const model_desc *m = models; m->name; m++)
        if (strcmp(m->name, name) == 0)
            return m;
    return NULL;
}
