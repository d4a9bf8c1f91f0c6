/* data.h - real input data (--data DIR): MNIST's IDX files and the input
 * pipeline.
 *
 * The files (train-images-idx3-ubyte and train-labels-idx1-ubyte, or the
 * same names with .gz when the engine is built with zlib) are read whole and
 * checked at set-up, as torchvision's MNIST dataset reads them when it is
 * built. The pipeline runs inside every timed step, in the step's thread,
 * as a DataLoader with num_workers=0 does: the next batch of the epoch's
 * shuffled order, pixels converted to float and normalised
 * ((x / 255 - 0.1307) / 0.3081, the seed's transforms.Normalize), labels to
 * int32, written into the model's input tensors (and copied to the device by
 * the caller; on a device with the pinned upload the caller makes the next
 * batch during the current step instead, through the ring below). An epoch
 * is the dataset in whole global batches (the last partial batch is
 * dropped); each epoch has its own order (from --seed). */
#ifndef MATRIX_ENGINE_DATA_H
#define MATRIX_ENGINE_DATA_H

#include "graph.h"

#include <stddef.h>
#include <stdint.h>

#define DATA_IMAGES "train-images-idx3-ubyte"
#define DATA_LABELS "train-labels-idx1-ubyte"
#define DATA_MEAN 0.1307f /* of x / 255 over MNIST's training images */
#define DATA_STD 0.3081f

typedef struct data_set {
    char *images_path, *labels_path; /* the files read (ending .gz when compressed) */
    int64_t n;                       /* images, = labels */
    int rows, cols;                  /* pixels per image */
    uint8_t *pix;                    /* (n, rows, cols) */
    uint8_t *lab;                    /* (n) */
    double load_s;                   /* reading and checking the files, seconds */
    /* the pipeline (data_bind) */
    int x, y;                        /* the graph's input (B, 1, rows, cols) f32 and target (B) i32 */
    int batch, rank, ranks;          /* this rank takes rows [rank * batch, (rank + 1) * batch) of a global batch */
    int64_t epoch_steps;             /* global batches per epoch */
    int64_t dropped;                 /* images of each epoch left out (the last partial batch) */
    uint64_t seed;
    uint32_t *order;                 /* (n) the epoch's order */
    int64_t epoch;                   /* epochs started */
    int64_t next;                    /* global batch of the epoch to take next */
    int64_t batches;                 /* batches taken */
    int32_t *index;                  /* (batch) the images of the last batch */
} data_set;

/* The size of the grey images model's graph g takes (its "input" and
 * "target" tensors): 0, or -2 when it takes none (err says what it takes:
 * takes), before any file is read. */
int data_model_input(const graph *g, const char *model, const char *takes, int *rows, int *cols, char *err,
                     size_t n);
/* Read and check DIR's images and labels: 0, or -1 with what is wrong in err
 * (the file named, and what was expected). rows, cols > 0: the images must
 * be of that size (model names the model in the message), checked from the
 * header before the pixels are read, as is the memory the data needs. */
int data_open(data_set *d, const char *dir, int rows, int cols, const char *model, char *err, size_t n);
/* Attach the data to the model's inputs (tensors "input" and "target") for a
 * rank of ranks with batch images per rank. 0; -1 when the files do not fit
 * the model (wrong image size, a label out of its classes: err says which);
 * -2 when the model takes no such input or one epoch is less than one global
 * batch (unsupported: err says why). */
int data_bind(data_set *d, const graph *g, const char *model, const char *takes, int batch, int rank,
              int ranks, uint64_t seed, char *err, size_t n);
/* The next batch: x (batch, 1, rows, cols) floats, y (batch) labels (NULL:
 * not wanted). With one channel NCHW and NHWC are the same bytes. */
void data_next(data_set *d, float *x, int32_t *y);
void data_free(data_set *d);
/* "idx, gz (zlib)" or "idx (no zlib: .gz files unsupported)". */
const char *data_formats(void);

/* How a device backend gets each batch (MATRIX_ENGINE_DATA_UPLOAD):
 * pinned (the default) makes batch k+1 into pinned host memory and copies
 * it to the device on a second stream while step k runs (the step itself
 * only copies it device to device into the input tensors); pageable is
 * the old path: the batch made in the step, copied from pageable memory
 * and waited for before the step's kernels. */
enum { DATA_UPLOAD_PINNED, DATA_UPLOAD_PAGEABLE }; /* knob_get(KNOB_DATA_UPLOAD)'s (knobs.h) */

/* The staging ring of the pinned upload: batch b (from 0) is made into
 * slot b % DATA_SLOTS (host buffers, then device buffers), and a step takes
 * the oldest batch made. A slot is written again only once its batch was
 * taken, so at most DATA_SLOTS batches wait. */
#define DATA_SLOTS 2
typedef struct data_ring {
    int64_t made;  /* batches made (written and their copy queued) */
    int64_t taken; /* batches taken by steps */
} data_ring;
/* The slot to make the next batch into (counted as made), or -1 when every
 * slot holds a batch no step took yet. */
int data_ring_make(data_ring *q);
/* The slot of the oldest batch not taken (counted as taken), or -1 when
 * none waits (the caller makes one first). */
int data_ring_take(data_ring *q);
/* The host side of making and taking a staged batch: data_next into slot's
 * buffers host[2 * slot] (input) and host[2 * slot + 1] (labels), the
 * batch's images into index[slot] (d->index keeps those of the batch the
 * last step took); taking slot copies them into d->index. */
void data_fill_slot(data_set *d, int slot, void *const *host, int32_t *const *index);
void data_took_slot(data_set *d, int slot, int32_t *const *index);
/* Epochs started by the batches taken (data_set.epoch counts the batches
 * made, one ahead with the pinned upload). */
int64_t data_ring_epochs(const data_ring *q, int64_t epoch_steps);

#endif
