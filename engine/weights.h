/* weights.h - the tensor file both this engine and the PyTorch checks read
 * and write (weights, and the dumps of the reference tests).
 *
 * Little-endian throughout:
 *   magic   4 bytes  "MXWT"
 *   version u32      1
 *   count   u32      number of tensors
 *   count times:
 *     name_len u32, name (UTF-8, no terminator)
 *     dtype    u32   0: float32, 1: int32
 *     ndim     u32, shape u64 x ndim
 *     data     numel x 4 bytes, in logical (PyTorch, row-major NCHW) order
 * Names are the PyTorch state_dict names (conv1.weight, bn1.running_var...). */
#ifndef MATRIX_ENGINE_WEIGHTS_H
#define MATRIX_ENGINE_WEIGHTS_H

#include <stdio.h>
#include "graph.h"
#include "outfile.h"

typedef struct wfile {
    FILE *f;      /* out.f */
    unsigned count;
    outfile out;
} wfile;

/* Start writing path (outfile.h: through a temporary file renamed by
 * weights_close, or in place when seekable); 0, or -1 with the reason in err. */
int weights_open(wfile *w, const char *path, char *err, size_t n);
/* Append tensor t of g under name (NULL: t's own name), logical order. */
void weights_put(wfile *w, const graph *g, int t, const char *name);
/* Append raw f32 data. */
void weights_put_raw(wfile *w, const char *name, int ndim, const int64_t *shape, const float *data);
/* Complete the file (its count) and put it in place; 0, or -1 with the
 * reason in err. */
int weights_close(wfile *w, char *err, size_t n);
/* Save every TK_PARAM and TK_BUFFER tensor of g; 0, or -1 with the reason
 * in err. */
int weights_save(const graph *g, const char *path, char *err, size_t n);
/* Load every tensor of the file into the PARAM / BUFFER tensor of the same
 * name; an unknown name, a shape mismatch or a parameter the file lacks is an
 * error written to err. 0 on success. */
int weights_load(graph *g, const char *path, char *err, int errlen);

#endif
