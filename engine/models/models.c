/* models.c - the model registry. */
#include "config.h"
#include "models.h"

#include <string.h>

int mnist_cnn_build(graph *g, const point *pt, model_info *info, char *err, int errlen);

const model_desc models[] = {
    {"mnist_cnn", "MNIST CNN of the CPU-vs-GPU study: 2 conv, 2 linear, dropout, NLL", mnist_cnn_build},
    {NULL, NULL, NULL},
};

const model_desc *model_find(const char *name)
{
    for (const model_desc *m = models; m->name; m++)
        if (strcmp(m->name, name) == 0)
            return m;
    return NULL;
}
