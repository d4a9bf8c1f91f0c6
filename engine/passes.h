/* passes.h - graph rewrites chosen by the knobs of a point.
 *
 *   pass_fold_bn     --eval on, --task infer, --compile != none: a conv
 *                    followed by an eval BatchNorm becomes one conv with
 *                    folded weights and bias (the BN op disappears).
 *   pass_fuse        --compile != none: a residual add and an activation that
 *                    follow a conv / linear / BN (or a ReLU after a max-pool)
 *                    become that op's epilogue (the add / act ops disappear,
 *                    and with them their output tensors).
 *   pass_autodiff    --task train: backward ops in reverse order, gradient
 *                    accumulation where a tensor feeds several ops, then one
 *                    optimizer op per parameter (+ EMA ops with --ema on).
 *   pass_bn_relu_bwd --task train, after pass_autodiff: the ReLU backward
 *                    of a BatchNorm's fused ReLU folds into the BatchNorm's
 *                    backward (MATRIX_ENGINE_BN_BWD=separate keeps both).
 *   pass_plan        every run: lifetimes of activations and gradients, then
 *                    arena offsets: reuse (a buffer is reused once its tensor
 *                    is dead) or keep (every tensor its own bytes, as autograd
 *                    keeps every activation outside inference_mode). */
#ifndef MATRIX_ENGINE_PASSES_H
#define MATRIX_ENGINE_PASSES_H

#include "graph.h"

typedef struct optim_cfg {
    int adamw;        /* 0: SGD with momentum, 1: AdamW */
    float lr, momentum, wd, beta1, beta2, eps;
    int ema;          /* append EMA ops */
    float ema_decay;
} optim_cfg;

/* Number of BN ops folded. Needs the parameter values (run after init). */
int pass_fold_bn(graph *g);
/* Number of ops merged into an epilogue. train: keep what backward needs. */
int pass_fuse(graph *g, int train);
/* Append backward, optimizer and EMA ops; returns the number of ops added. */
int pass_autodiff(graph *g, const optim_cfg *opt);
/* Lifetimes and arena offsets of TK_ACT / TK_GRAD tensors; returns the
 * arena size in bytes. reuse: 1 to share storage between dead and new
 * tensors; keep (g->nt entries, or NULL): tensors kept alive to the end of
 * the step (pass_saved's). */
size_t pass_plan(graph *g, int reuse, const char *keep);
/* Of a forward-only graph: saved[i] = 1 (g->nt entries) for each activation
 * a backward pass would read, as autograd keeps them when gradients are
 * enabled (PyTorch outside no_grad / inference_mode), the gradient flowing
 * from the loss or else from the output. The graph is left as it was.
 * Returns how many. */
int pass_saved(graph *g, char *saved);
/* Data parallelism over `ranks` processes, after pass_autodiff: every
 * parameter gradient becomes a view of one flat f32 tensor "grad.flat"
 * (alias / offset), laid out in the order the backward completes them;
 * consecutive gradients form buckets of about bucket_bytes, each summed over
 * the ranks by an OP_ALLREDUCE inserted right after the op that completes
 * it (overlapping the rest of the backward), and an OP_ALLREDUCE_WAIT per
 * bucket before the first optimizer op divides by the ranks. sync_bn: BN
 * ops with batch statistics reduce them over the ranks. Returns the number
 * of buckets. */
int pass_data_parallel(graph *g, int ranks, size_t bucket_bytes, int sync_bn);
/* Mixed precision on a device backend: activations and their gradients
 * (TK_ACT / TK_GRAD f32 tensors) get storage type dt (DT_F16 or DT_BF16),
 * except what autocast keeps in f32: normalisation statistics, dropout
 * masks (not the keep flags of flash-form attention: pass_flash_attention),
 * the log-softmax output, the loss, and the gradients of those.
 * Parameters, their gradients and optimizer state stay f32 (master
 * weights). Run after autodiff, before pass_plan; returns the number of
 * tensors changed. */
int pass_precision(graph *g, int dt);
/* Flash attention on a device backend with fp16 / bf16: every attention
 * op keeps the log-sum-exp of its rows, out[1] (B, H, T) f32, instead of
 * the probabilities (B, H, T, T); its backward (pass_autodiff, run after
 * this pass) recomputes them from q, k and the lse and reads the forward's
 * output y (in[5]). What cuDNN's fused SDPA keeps; the CPU and the CUDA
 * kernels run both forms. With attention dropout (out[2], the mask) the
 * mask of the flash form holds keep flags, 0 or 1 (the scale 1 / (1 - p)
 * is applied with them), drawn as every dropout mask is (same seed, step
 * and index, so the flags are where the probabilities form's mask is
 * non-zero), in the io type (pass_precision: 0 and 1 are exact in f16 and
 * bf16); it is not kept for the backward: the backward draws it again into
 * a tensor of its own, out[3] (pass_autodiff), so only the lse lives from
 * the forward to the backward. Run before pass_autodiff; returns the number
 * of ops changed. */
int pass_flash_attention(graph *g);
/* Training with a BatchNorm whose ReLU pass_fuse made its epilogue, after
 * pass_autodiff: the OP_ACT_BWD in front of its OP_BN_BWD (dy, y -> dy
 * masked by y > 0) goes, and the OP_BN_BWD gets act = ACT_RELU and in[0] =
 * dy; both its passes mask dy themselves. Without a residual input, in[5] =
 * beta: the backends recompute the mask from x, gamma, beta and the saved
 * mean / invstd as the forward computed y, rounded as y is stored (5
 * activation-sized memory passes instead of 8). With one (relu(BN(x) + r)),
 * in[5] = the forward's y, the mask read, and the OP_COPY of the masked dy
 * into r's gradient goes too: out[3] = that gradient (acc bit 3 from the
 * copy's), written by the dx pass (8 passes instead of 10). The gradients
 * are the same bits. Other activations keep their ops. fold 0 changes
 * nothing and only counts. Returns the number folded; *candidates (may be
 * NULL) gets the number of ReLU backwards of BatchNorms there were. */
int pass_bn_relu_bwd(graph *g, int fold, int *candidates);
/* Drop dead ops from the list (keeps indices of live ops in order). */
void pass_compact(graph *g);

#endif
