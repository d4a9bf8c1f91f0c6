/* conv.c - 2-D convolution on the CPU: im2col + GEMM, NCHW and NHWC.
 *
 * NCHW: a group of nb samples at a time, col[K, nb*P] (K = C*kh*kw, P output
 * pixels) and y[Co, nb*P] = W[Co, K] x col, scattered back to (n, co, p) with
 * the epilogue. Small images (MNIST) take many samples per GEMM; large ones
 * (ResNet) one sample split into pixel chunks, so that col stays in cache
 * and a batch smaller than the thread count still uses every thread.
 * NHWC: y[N*P, Co] = col[N*P, K] x W^T in row blocks. In both layouts the
 * column index k is (c, i, j) as in PyTorch's weight (Co, C, kh, kw), so one
 * weight tensor serves both. 1x1 stride-1 convolutions skip im2col.
 * Backward goes by the same groups (col2im of different samples never
 * overlap), with a weight-gradient partial per thread, summed at the end. */

#include "config.h"
#include "cpu.h"
#include "pool.h"
#include "../backend.h"

#include <string.h>
#ifdef __AVX512F__
#include <immintrin.h>
#endif

#define TF(g, i) ((float *)(g)->t[(i)].data)
#define ACC(o, k) (((o)->acc >> (k)) & 1)

typedef struct conv_geo {
    int N, C, H, W;   /* input */
    int Co, OH, OW;   /* output */
    int kh, kw, s, p; /* kernel, stride, padding */
    int K;            /* C * kh * kw */
    int P;            /* OH * OW */
    int nhwc;
    int pointwise;    /* 1x1, stride 1, no padding */
} conv_geo;

static conv_geo conv_geometry(const graph *g, const op *o)
{
    const tensor *x = &g->t[o->in[0]], *y = &g->t[o->type == OP_CONV ? o->out[0] : o->in[0]];
    conv_geo c;
    c.N = x->shape[0]; c.C = x->shape[1]; c.H = x->shape[2]; c.W = x->shape[3];
    if (o->type == OP_CONV_BWD) {
        x = &g->t[o->in[1]];
        c.N = x->shape[0]; c.C = x->shape[1]; c.H = x->shape[2]; c.W = x->shape[3];
    }
    c.Co = y->shape[1]; c.OH = y->shape[2]; c.OW = y->shape[3];
    c.kh = o->kh; c.kw = o->kw; c.s = o->stride; c.p = o->pad;
    c.K = c.C * c.kh * c.kw;
    c.P = c.OH * c.OW;
    c.nhwc = x->layout == LAYOUT_NHWC;
    c.pointwise = c.kh == 1 && c.kw == 1 && c.s == 1 && c.p == 0;
    return c;
}

/* How the work is cut: NCHW groups of nb samples (nb > 1: whole images) or
 * single samples in pixel chunks of len; NHWC row blocks of len rows. */
typedef struct conv_split_t {
    long items; /* work items */
    long nb;    /* NCHW: samples per item */
    long len;   /* NCHW: pixels per item (nb == 1); NHWC: rows per item */
} conv_split_t;

#define COL_TARGET (1L << 18)   /* floats of col per sample group: 1 MiB */
#define CHUNK_TARGET (1L << 18) /* floats of col per pixel chunk: 1 MiB
                                   (256 KiB and 2 MiB measured the same) */

static conv_split_t conv_split(const conv_geo *c, int nt)
{
    conv_split_t s;
    long kp = (long)c->K * c->P;
    if (!c->nhwc) {
        /* samples per GEMM: fill ~1 MiB of col for small images, and give
         * late layers (few pixels, large weights) at least 512 columns, so
         * that the weights and their gradient are streamed once per group */
        long want = 2 * kp <= COL_TARGET ? COL_TARGET / kp : c->P < 512 ? (511 + c->P) / c->P : 1;
        if (want * kp > 4 * COL_TARGET)
            want = 4 * COL_TARGET / kp;
        if (want > 1 && c->N > 1) {
            long per_thread = (c->N + (long)nt * want - 1) / ((long)nt * want);
            s.nb = (c->N + (long)nt * per_thread - 1) / ((long)nt * per_thread);
            if (s.nb < 1)
                s.nb = 1;
            if (s.nb > 1) {
                s.len = c->P;
                s.items = (c->N + s.nb - 1) / s.nb;
                return s;
            }
        }
        long target = CHUNK_TARGET / (c->K > 0 ? c->K : 1);
        if (target < 256)
            target = 256;
        long chunk = c->P <= target ? c->P : target;
        long per = (c->P + chunk - 1) / chunk;
        if ((long)c->N * per < nt) {
            per = (nt + c->N - 1) / c->N;
            if (per > c->P)
                per = c->P;
            chunk = (c->P + per - 1) / per;
            per = (c->P + chunk - 1) / chunk;
        }
        s.nb = 1;
        s.len = chunk;
        s.items = (long)c->N * per;
    } else {
        long rows = (long)c->N * c->P;
        long blk = COL_TARGET / (c->K > 0 ? c->K : 1);
        if (blk < 64)
            blk = 64;
        if (blk > rows)
            blk = rows;
        if ((rows + blk - 1) / blk < nt)
            blk = (rows + nt - 1) / nt;
        if (blk < 1)
            blk = 1;
        s.nb = 1;
        s.len = blk;
        s.items = (rows + blk - 1) / blk;
    }
    return s;
}

/* Output columns [lo, hi) of an output row whose input column
 * iw = ow * s - p + j falls inside [0, W). */
static void valid_cols(const conv_geo *c, int j, int *lo, int *hi)
{
    int a = c->p - j, b = c->W - 1 + c->p - j;
    *lo = a > 0 ? (a + c->s - 1) / c->s : 0;
    *hi = b < 0 ? 0 : b / c->s + 1;
    if (*hi > c->OW)
        *hi = c->OW;
    if (*lo > *hi)
        *lo = *hi;
}

/* col[k * ld + (p - p0)] for output pixels [p0, p1) of one NCHW sample x,
 * one output row segment at a time: zeros outside the image, a copy (stride
 * 1) or a strided gather inside. */
static void im2col_nchw(const float *x, const conv_geo *c, int p0, int p1, float *col, long ld)
{
    if (c->s == 1 && c->p == 0 && p0 == 0 && p1 == c->P) {
        /* whole image, stride 1, no padding: plain row copies */
        for (int ci = 0; ci < c->C; ci++)
            for (int i = 0; i < c->kh; i++)
                for (int j = 0; j < c->kw; j++) {
                    float *d = col + (long)((ci * c->kh + i) * c->kw + j) * ld;
                    const float *s = x + ((long)ci * c->H + i) * c->W + j;
                    for (int oh = 0; oh < c->OH; oh++, d += c->OW, s += c->W)
                        for (int ow = 0; ow < c->OW; ow++)
                            d[ow] = s[ow];
                }
        return;
    }
    for (int ci = 0; ci < c->C; ci++) {
        const float *xc = x + (long)ci * c->H * c->W;
        for (int i = 0; i < c->kh; i++)
            for (int j = 0; j < c->kw; j++) {
                float *dst = col + (long)((ci * c->kh + i) * c->kw + j) * ld - p0;
                int lo, hi;
                valid_cols(c, j, &lo, &hi);
                for (int p = p0; p < p1;) {
                    int oh = p / c->OW, ow0 = p % c->OW;
                    int ow1 = ow0 + (p1 - p) < c->OW ? ow0 + (p1 - p) : c->OW;
                    int ih = oh * c->s - c->p + i;
                    float *d = dst + (long)oh * c->OW;
                    if ((unsigned)ih >= (unsigned)c->H) {
                        for (int ow = ow0; ow < ow1; ow++)
                            d[ow] = 0.0f;
                    } else {
                        const float *src = xc + (long)ih * c->W - c->p + j;
                        int a = lo > ow0 ? lo : ow0, b = hi < ow1 ? hi : ow1;
                        if (b < a)
                            b = a;
                        for (int ow = ow0; ow < a; ow++)
                            d[ow] = 0.0f;
                        if (c->s == 1)
                            for (int ow = a; ow < b; ow++)
                                d[ow] = src[ow];
                        else
                            for (int ow = a; ow < b; ow++)
                                d[ow] = src[ow * c->s];
                        for (int ow = b; ow < ow1; ow++)
                            d[ow] = 0.0f;
                    }
                    p += ow1 - ow0;
                }
            }
    }
}

/* dx += col2im of dcol[k * ld + (p - p0)] for output pixels [p0, p1) of one
 * NCHW sample (the scatter-add twin of im2col_nchw's general path). */
static void col2im_nchw_range(const float *dcol, const conv_geo *c, int p0, int p1, float *dx,
                              long ld)
{
    for (int ci = 0; ci < c->C; ci++) {
        float *dxc = dx + (long)ci * c->H * c->W;
        for (int i = 0; i < c->kh; i++)
            for (int j = 0; j < c->kw; j++) {
                const float *src = dcol + (long)((ci * c->kh + i) * c->kw + j) * ld - p0;
                int lo, hi;
                valid_cols(c, j, &lo, &hi);
                for (int p = p0; p < p1;) {
                    int oh = p / c->OW, ow0 = p % c->OW;
                    int ow1 = ow0 + (p1 - p) < c->OW ? ow0 + (p1 - p) : c->OW;
                    int ih = oh * c->s - c->p + i;
                    p += ow1 - ow0;
                    if ((unsigned)ih >= (unsigned)c->H)
                        continue;
                    const float *sr = src + (long)oh * c->OW;
                    float *d = dxc + (long)ih * c->W - c->p + j;
                    int a = lo > ow0 ? lo : ow0, b = hi < ow1 ? hi : ow1;
                    if (c->s == 1)
                        for (int ow = a; ow < b; ow++)
                            d[ow] += sr[ow];
                    else
                        for (int ow = a; ow < b; ow++)
                            d[ow * c->s] += sr[ow];
                }
            }
    }
}

/* dx += col2im(dcol) for one NCHW sample; dcol is [K] rows of stride ld. */
static void col2im_nchw(const float *dcol, const conv_geo *c, float *dx, long ld)
{
    if (c->s == 1 && c->p == 0) {
        for (int ci = 0; ci < c->C; ci++)
            for (int i = 0; i < c->kh; i++)
                for (int j = 0; j < c->kw; j++) {
                    const float *s = dcol + (long)((ci * c->kh + i) * c->kw + j) * ld;
                    float *d = dx + ((long)ci * c->H + i) * c->W + j;
                    for (int oh = 0; oh < c->OH; oh++, s += c->OW, d += c->W)
                        for (int ow = 0; ow < c->OW; ow++)
                            d[ow] += s[ow];
                }
        return;
    }
    for (int ci = 0; ci < c->C; ci++) {
        float *dxc = dx + (long)ci * c->H * c->W;
        for (int i = 0; i < c->kh; i++)
            for (int j = 0; j < c->kw; j++) {
                const float *src = dcol + (long)((ci * c->kh + i) * c->kw + j) * ld;
                int lo, hi;
                valid_cols(c, j, &lo, &hi);
                for (int oh = 0; oh < c->OH; oh++) {
                    int ih = oh * c->s - c->p + i;
                    if ((unsigned)ih >= (unsigned)c->H)
                        continue;
                    float *d = dxc + (long)ih * c->W - c->p + j;
                    const float *s = src + (long)oh * c->OW;
                    if (c->s == 1)
                        for (int ow = lo; ow < hi; ow++)
                            d[ow] += s[ow];
                    else
                        for (int ow = lo; ow < hi; ow++)
                            d[ow * c->s] += s[ow];
                }
            }
    }
}

/* col[r - r0][k] for global output rows [r0, r1) of an NHWC batch x. */
static void im2col_nhwc(const float *x, const conv_geo *c, long r0, long r1, float *col)
{
    int khw = c->kh * c->kw;
    for (long r = r0; r < r1; r++) {
        int n = r / c->P, q = r % c->P, oh = q / c->OW, ow = q % c->OW;
        float *dst = col + (r - r0) * c->K;
        for (int i = 0; i < c->kh; i++)
            for (int j = 0; j < c->kw; j++) {
                int ih = oh * c->s - c->p + i, iw = ow * c->s - c->p + j;
                float *d = dst + i * c->kw + j;
                if ((unsigned)ih < (unsigned)c->H && (unsigned)iw < (unsigned)c->W) {
                    const float *src = x + (((long)n * c->H + ih) * c->W + iw) * c->C;
                    for (int ci = 0; ci < c->C; ci++)
                        d[ci * khw] = src[ci];
                } else
                    for (int ci = 0; ci < c->C; ci++)
                        d[ci * khw] = 0.0f;
            }
    }
}

/* dx_n += col2im(dcol) for one NHWC sample; dcol is [P][K]. */
static void col2im_nhwc(const float *dcol, const conv_geo *c, float *dx)
{
    int khw = c->kh * c->kw;
    for (int q = 0; q < c->P; q++) {
        int oh = q / c->OW, ow = q % c->OW;
        const float *src = dcol + (long)q * c->K;
        for (int i = 0; i < c->kh; i++)
            for (int j = 0; j < c->kw; j++) {
                int ih = oh * c->s - c->p + i, iw = ow * c->s - c->p + j;
                if ((unsigned)ih >= (unsigned)c->H || (unsigned)iw >= (unsigned)c->W)
                    continue;
                float *d = dx + ((long)ih * c->W + iw) * c->C;
                const float *s = src + i * c->kw + j;
                for (int ci = 0; ci < c->C; ci++)
                    d[ci] += s[ci * khw];
            }
    }
}

/* Direct path for convolutions with a tiny reduction (NCHW, stride 1, no
 * padding, K = C*kh*kw <= 32, rows of at most 64 outputs: MNIST's conv1),
 * where a GEMM would be all overhead: output rows are sums of shifted
 * input rows, and the weight gradient dot products of them. */
static int conv_direct(const conv_geo *c)
{
    return !c->nhwc && c->s == 1 && c->p == 0 && c->K <= 32 && c->OW <= 64;
}

/* y_n = W * x_n (+ bias) for one sample. With AVX-512 and rows of at most
 * 32 outputs the row lives in two registers across all taps. */
static void conv_direct_fwd(const conv_geo *c, const float *x, const float *w,
                            const float *bias, float *y)
{
#ifdef __AVX512F__
    if (c->OW <= 32) {
        __mmask16 m0 = c->OW >= 16 ? 0xffff : (__mmask16)((1u << c->OW) - 1);
        __mmask16 m1 = c->OW > 16 ? (__mmask16)((1u << (c->OW - 16)) - 1) : 0;
        for (int co = 0; co < c->Co; co++)
            for (int oh = 0; oh < c->OH; oh++) {
                float *yr = y + ((long)co * c->OH + oh) * c->OW;
                __m512 a0 = _mm512_set1_ps(bias ? bias[co] : 0.0f), a1 = a0;
                for (int ci = 0; ci < c->C; ci++)
                    for (int i = 0; i < c->kh; i++) {
                        const float *xr = x + ((long)ci * c->H + oh + i) * c->W;
                        const float *wr = w + (((long)co * c->C + ci) * c->kh + i) * c->kw;
                        for (int j = 0; j < c->kw; j++) {
                            __m512 wv = _mm512_set1_ps(wr[j]);
                            a0 = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(m0, xr + j), a0);
                            a1 = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(m1, xr + j + 16), a1);
                        }
                    }
                _mm512_mask_storeu_ps(yr, m0, a0);
                _mm512_mask_storeu_ps(yr + 16, m1, a1);
            }
        return;
    }
#endif
    for (int co = 0; co < c->Co; co++)
        for (int oh = 0; oh < c->OH; oh++) {
            float *yr = y + ((long)co * c->OH + oh) * c->OW;
            float b = bias ? bias[co] : 0.0f;
            for (int ow = 0; ow < c->OW; ow++)
                yr[ow] = b;
            for (int ci = 0; ci < c->C; ci++)
                for (int i = 0; i < c->kh; i++) {
                    const float *xr = x + ((long)ci * c->H + oh + i) * c->W;
                    const float *wr = w + (((long)co * c->C + ci) * c->kh + i) * c->kw;
                    for (int j = 0; j < c->kw; j++) {
                        float wv = wr[j];
                        for (int ow = 0; ow < c->OW; ow++)
                            yr[ow] += wv * xr[ow + j];
                    }
                }
        }
}

/* dw += dy_n (x) x_n and db += sum dy_n for one sample. */
static void conv_direct_dw(const conv_geo *c, const float *x, const float *dy, float *dw,
                           float *db)
{
    float acc[64];
    for (int co = 0; co < c->Co; co++) {
        const float *dyc = dy + (long)co * c->P;
        if (db) {
            float part[16] = {0}, s = 0.0f;
            int q = 0;
            for (; q + 16 <= c->P; q += 16)
                for (int k = 0; k < 16; k++)
                    part[k] += dyc[q + k];
            for (; q < c->P; q++)
                s += dyc[q];
            for (int k = 0; k < 16; k++)
                s += part[k];
            db[co] += s;
        }
#ifdef __AVX512F__
        if (c->OW <= 32 && c->kw == 5) {
            /* one kernel row at a time: the dy row is loaded once for the 5
             * taps, the 10 accumulators stay in registers */
            __mmask16 m0 = c->OW >= 16 ? 0xffff : (__mmask16)((1u << c->OW) - 1);
            __mmask16 m1 = c->OW > 16 ? (__mmask16)((1u << (c->OW - 16)) - 1) : 0;
            for (int ci = 0; ci < c->C; ci++)
                for (int i = 0; i < c->kh; i++) {
                    __m512 z = _mm512_setzero_ps();
                    __m512 a00 = z, a01 = z, a02 = z, a03 = z, a04 = z;
                    __m512 a10 = z, a11 = z, a12 = z, a13 = z, a14 = z;
                    for (int oh = 0; oh < c->OH; oh++) {
                        const float *xr = x + ((long)ci * c->H + oh + i) * c->W;
                        const float *dr = dyc + (long)oh * c->OW;
                        __m512 d0 = _mm512_maskz_loadu_ps(m0, dr);
                        __m512 d1 = _mm512_maskz_loadu_ps(m1, dr + 16);
#define TAP(j, A0, A1)                                                              \
    A0 = _mm512_fmadd_ps(d0, _mm512_maskz_loadu_ps(m0, xr + j), A0);                \
    A1 = _mm512_fmadd_ps(d1, _mm512_maskz_loadu_ps(m1, xr + j + 16), A1);
                        TAP(0, a00, a10) TAP(1, a01, a11) TAP(2, a02, a12)
                        TAP(3, a03, a13) TAP(4, a04, a14)
#undef TAP
                    }
                    float *dwr = dw + (((long)co * c->C + ci) * c->kh + i) * c->kw;
                    dwr[0] += _mm512_reduce_add_ps(_mm512_add_ps(a00, a10));
                    dwr[1] += _mm512_reduce_add_ps(_mm512_add_ps(a01, a11));
                    dwr[2] += _mm512_reduce_add_ps(_mm512_add_ps(a02, a12));
                    dwr[3] += _mm512_reduce_add_ps(_mm512_add_ps(a03, a13));
                    dwr[4] += _mm512_reduce_add_ps(_mm512_add_ps(a04, a14));
                }
            continue;
        }
#endif
        for (int ci = 0; ci < c->C; ci++)
            for (int i = 0; i < c->kh; i++)
                for (int j = 0; j < c->kw; j++) {
                    for (int ow = 0; ow < c->OW; ow++)
                        acc[ow] = 0.0f;
                    for (int oh = 0; oh < c->OH; oh++) {
                        const float *xr = x + ((long)ci * c->H + oh + i) * c->W + j;
                        const float *dr = dyc + (long)oh * c->OW;
                        for (int ow = 0; ow < c->OW; ow++)
                            acc[ow] += dr[ow] * xr[ow];
                    }
                    float s = 0.0f;
                    for (int ow = 0; ow < c->OW; ow++)
                        s += acc[ow];
                    dw[(((long)co * c->C + ci) * c->kh + i) * c->kw + j] += s;
                }
    }
}

/* Backward of a large-image (pixel-chunked) stride-1 NCHW convolution
 * computes dx as the forward convolution of dy with the flipped, transposed
 * weights (pad kh-1-p): an im2col gather and one GEMM that writes dx, instead
 * of a K x P dcol and a col2im scatter-add into a zeroed dx. */
static int conv_flip_dx(const conv_geo *c, const conv_split_t *s)
{
    return !c->nhwc && s->nb == 1 && s->len < c->P && c->s == 1 && !c->pointwise &&
           c->kh == c->kw && c->p <= c->kh - 1;
}

/* wt[ci][(co, i, j)] = w[co][ci][kh-1-i][kw-1-j] */
static void conv_flip_weights(const conv_geo *c, const float *w, float *wt)
{
    long Kt = (long)c->Co * c->kh * c->kw;
    for (int co = 0; co < c->Co; co++)
        for (int ci = 0; ci < c->C; ci++)
            for (int i = 0; i < c->kh; i++)
                for (int j = 0; j < c->kw; j++)
                    wt[(long)ci * Kt + ((long)co * c->kh + i) * c->kw + j] =
                        w[(((long)co * c->C + ci) * c->kh + (c->kh - 1 - i)) * c->kw + (c->kw - 1 - j)];
}

/* Grouped NCHW convolutions of a training graph keep their im2col columns
 * for the backward when the whole batch's columns take at most 64 MiB (small
 * images: MNIST), as PyTorch's slow_conv2d keeps its "finput": group g's
 * block [K, nb*P] at offset n0 * K * P. */
size_t cpu_conv_saved(const graph *g, const op *o)
{
    conv_geo c = conv_geometry(g, o);
    conv_split_t s = conv_split(&c, pool_threads());
    size_t bytes = (size_t)c.N * c.K * c.P * sizeof(float);
    if (c.nhwc || s.nb < 2 || conv_direct(&c) || bytes > (64u << 20))
        return 0;
    return bytes;
}

size_t cpu_conv_workspace(const graph *g, const op *o)
{
    conv_geo c = conv_geometry(g, o);
    int nt = pool_threads();
    conv_split_t s = conv_split(&c, nt);
    long cols = s.nb * s.len; /* columns (NCHW) or rows (NHWC) per item */
    if (o->type == OP_CONV) {
        /* col, and for grouped NCHW the GEMM result before the scatter */
        long per = (c.pointwise && s.nb == 1 ? 0 : cols * c.K) + (s.nb > 1 ? cols * c.Co : 0);
        return (size_t)nt * per * sizeof(float);
    }
    /* backward: NHWC by whole samples, NCHW by the forward's groups or chunks */
    cols = c.nhwc ? c.P : s.nb > 1 ? s.nb * c.P : s.len;
    return (size_t)nt * (2L * c.K * cols + (long)c.Co * cols + (long)c.Co * c.K + c.Co) *
               sizeof(float) +
           (conv_flip_dx(&c, &s) ? (size_t)c.Co * c.K * sizeof(float) : 0);
}

struct conv_ctx {
    graph *g;
    op *o;
    conv_geo c;
    conv_split_t s;
    float *ws;
    size_t ws_per; /* floats per thread */
    float *wt;     /* flipped, transposed weights (conv_flip_dx), or NULL */
};

static void conv_fwd_run(void *p, int tid, int nt)
{
    struct conv_ctx *x = p;
    const conv_geo *c = &x->c;
    graph *g = x->g;
    op *o = x->o;
    const float *in = TF(g, o->in[0]), *w = TF(g, o->in[1]);
    const float *bias = o->in[2] >= 0 ? TF(g, o->in[2]) : NULL;
    const float *res = o->in[3] >= 0 ? TF(g, o->in[3]) : NULL;
    float *y = TF(g, o->out[0]);
    float *pre = o->out[1] >= 0 ? TF(g, o->out[1]) : NULL;
    float *col = x->ws + (size_t)tid * x->ws_per;
    long lo, hi, xs = (long)c->C * c->H * c->W, ys = (long)c->Co * c->P;
    pool_range(x->s.items, tid, nt, &lo, &hi);
    for (long it = lo; it < hi; it++) {
        if (conv_direct(c) && (x->s.nb > 1 || x->s.len == c->P)) {
            long n0 = it * x->s.nb, n1 = n0 + x->s.nb < c->N ? n0 + x->s.nb : c->N;
            for (long n = n0; n < n1; n++) {
                conv_direct_fwd(c, in + n * xs, w, bias, y + n * ys);
                cpu_epi e = {NULL, 0, res ? res + n * ys : NULL, c->P, o->act,
                             pre ? pre + n * ys : NULL, c->P};
                cpu_epilogue(&e, y + n * ys, c->P, 0, c->Co, 0, c->P);
            }
        } else if (!c->nhwc && x->s.nb > 1) {
            long n0 = it * x->s.nb, n1 = n0 + x->s.nb < c->N ? n0 + x->s.nb : c->N;
            long ld = (n1 - n0) * c->P;
            float *tmp = col + (size_t)x->s.nb * c->P * c->K;
            float *cl = o->out[3] >= 0 ? TF(g, o->out[3]) + n0 * c->K * c->P : col;
            for (long n = n0; n < n1; n++)
                im2col_nchw(in + n * xs, c, 0, c->P, cl + (n - n0) * c->P, ld);
            cpu_gemm(0, 0, c->Co, ld, c->K, 1.0f, w, c->K, cl, ld, 0.0f, tmp, ld);
            for (long n = n0; n < n1; n++)
                for (int co = 0; co < c->Co; co++) {
                    const float *t = tmp + (long)co * ld + (n - n0) * c->P;
                    const float *r = res ? res + n * ys + (long)co * c->P : NULL;
                    float *yy = y + n * ys + (long)co * c->P;
                    float *pp = pre ? pre + n * ys + (long)co * c->P : NULL;
                    float b = bias ? bias[co] : 0.0f;
                    for (int q = 0; q < c->P; q++)
                        yy[q] = t[q] + b;
                    if (r)
                        for (int q = 0; q < c->P; q++)
                            yy[q] += r[q];
                    if (pp)
                        memcpy(pp, yy, c->P * sizeof(float));
                    cpu_act_row(o->act, yy, c->P);
                }
        } else if (!c->nhwc) {
            long per = (c->P + x->s.len - 1) / x->s.len;
            int n = it / per, p0 = (it % per) * x->s.len;
            int p1 = p0 + x->s.len < c->P ? p0 + x->s.len : c->P;
            const float *xn = in + (long)n * xs;
            float *yn = y + (long)n * ys;
            const float *B = xn + p0;
            int ldb = c->P;
            if (!c->pointwise) {
                im2col_nchw(xn, c, p0, p1, col, p1 - p0);
                B = col;
                ldb = p1 - p0;
            }
            cpu_gemm(0, 0, c->Co, p1 - p0, c->K, 1.0f, w, c->K, B, ldb, 0.0f,
                     yn + p0, c->P);
            cpu_epi e = {bias, 0, res ? res + (long)n * ys : NULL, c->P,
                         o->act, pre ? pre + (long)n * ys : NULL, c->P};
            cpu_epilogue(&e, yn, c->P, 0, c->Co, p0, p1);
        } else {
            long rows = (long)c->N * c->P;
            long r0 = it * x->s.len, r1 = r0 + x->s.len < rows ? r0 + x->s.len : rows;
            const float *A = in + r0 * c->C;
            if (!c->pointwise) {
                im2col_nhwc(in, c, r0, r1, col);
                A = col;
            }
            cpu_gemm(0, 1, r1 - r0, c->Co, c->K, 1.0f, A, c->K, w, c->K, 0.0f,
                     y + r0 * c->Co, c->Co);
            cpu_epi e = {bias, 1, res, c->Co, o->act, pre, c->Co};
            cpu_epilogue(&e, y, c->Co, r0, r1, 0, c->Co);
        }
    }
}

void cpu_conv(graph *g, op *o)
{
    struct conv_ctx x = {g, o, conv_geometry(g, o), {0, 0, 0}, backend_ws, 0, NULL};
    int nt = pool_threads();
    x.s = conv_split(&x.c, nt);
    x.ws_per = cpu_conv_workspace(g, o) / sizeof(float) / nt;
    if (x.s.items < 2 || nt == 1) {
        conv_fwd_run(&x, 0, 1);
        return;
    }
    pool_run(conv_fwd_run, &x);
}

/* dx of one image n0 as the convolution of dy with the flipped weights
 * x->wt (C' = Co, out = C), in pixel chunks of the col buffer's size. */
static void conv_bwd_dx_flip(struct conv_ctx *x, const float *dyn, float *dxn, float *dcol)
{
    const conv_geo *c = &x->c;
    op *o = x->o;
    /* dy as the input of a convolution with C' = Co, out = C */
    conv_geo t = *c;
    t.C = c->Co; t.H = c->OH; t.W = c->OW;
    t.Co = c->C; t.OH = c->H; t.OW = c->W;
    t.p = c->kh - 1 - c->p;
    t.K = c->Co * c->kh * c->kw;
    t.P = c->H * c->W;
    long Lt = (long)c->K * x->s.len / t.K;
    if (Lt < 1)
        Lt = 1;
    for (long q0 = 0; q0 < t.P; q0 += Lt) {
        long q1 = q0 + Lt < t.P ? q0 + Lt : t.P;
        im2col_nchw(dyn, &t, q0, q1, dcol, q1 - q0);
        cpu_gemm(0, 0, c->C, q1 - q0, t.K, 1.0f, x->wt, t.K, dcol, q1 - q0,
                 ACC(o, 0) ? 1.0f : 0.0f, dxn + q0, t.P);
    }
}

/* Backward of one large image n0 (NCHW): pixel chunks, so that col and dcol
 * stay in cache. */
static void conv_bwd_nchw_image(struct conv_ctx *x, long n0, float *col, float *dcol, float *dw, float *db)
{
    const conv_geo *c = &x->c;
    graph *g = x->g;
    op *o = x->o;
    const float *dy = TF(g, o->in[0]), *in = TF(g, o->in[1]), *w = TF(g, o->in[2]);
    float *dx = o->out[0] >= 0 ? TF(g, o->out[0]) : NULL;
    long xs = (long)c->C * c->H * c->W, ys = (long)c->Co * c->P;
    const float *xn = in + n0 * xs, *dyn = dy + n0 * ys;
    float *dxn = dx ? dx + n0 * xs : NULL;
    int flip = dxn && conv_flip_dx(c, &x->s);
    if (dxn && !flip && !ACC(o, 0) && !c->pointwise)
        memset(dxn, 0, xs * sizeof(float));
    for (long p0 = 0; p0 < c->P; p0 += x->s.len) {
        long p1 = p0 + x->s.len < c->P ? p0 + x->s.len : c->P, L = p1 - p0;
        const float *B = xn + p0;
        long ldb = c->P;
        if (!c->pointwise) {
            im2col_nchw(xn, c, p0, p1, col, L);
            B = col;
            ldb = L;
        }
        cpu_gemm(0, 1, c->Co, c->K, L, 1.0f, dyn + p0, c->P, B, ldb, 1.0f, dw, c->K);
        for (int co = 0; co < c->Co && o->out[2] >= 0; co++) {
            float sum = 0.0f;
            for (long q = p0; q < p1; q++)
                sum += dyn[(long)co * c->P + q];
            db[co] += sum;
        }
        if (!dxn || flip)
            continue;
        if (c->pointwise)
            cpu_gemm(1, 0, c->K, L, c->Co, 1.0f, w, c->K, dyn + p0, c->P,
                     ACC(o, 0) ? 1.0f : 0.0f, dxn + p0, c->P);
        else {
            cpu_gemm(1, 0, c->K, L, c->Co, 1.0f, w, c->K, dyn + p0, c->P, 0.0f, dcol, L);
            col2im_nchw_range(dcol, c, p0, p1, dxn, L);
        }
    }
    if (flip)
        conv_bwd_dx_flip(x, dyn, dxn, dcol);
}

/* Backward of one group of samples [n0, n1) (NCHW). */
static void conv_bwd_nchw(struct conv_ctx *x, long n0, long n1, float *col, float *dcol,
                          float *dyg, float *dw, float *db)
{
    const conv_geo *c = &x->c;
    graph *g = x->g;
    op *o = x->o;
    const float *dy = TF(g, o->in[0]), *in = TF(g, o->in[1]), *w = TF(g, o->in[2]);
    float *dx = o->out[0] >= 0 ? TF(g, o->out[0]) : NULL;
    long xs = (long)c->C * c->H * c->W, ys = (long)c->Co * c->P;
    long ld = (n1 - n0) * c->P;
    const float *cl, *dyv;
    if (conv_direct(c) && !dx) {
        for (long n = n0; n < n1; n++)
            conv_direct_dw(c, in + n * xs, dy + n * ys, dw, o->out[2] >= 0 ? db : NULL);
        return;
    }
    if (n1 - n0 == 1 && x->s.len < c->P) {
        conv_bwd_nchw_image(x, n0, col, dcol, dw, db);
        return;
    }
    if (n1 - n0 == 1) {
        dyv = dy + n0 * ys;
        cl = in + n0 * xs;
        if (!c->pointwise) {
            im2col_nchw(in + n0 * xs, c, 0, c->P, col, ld);
            cl = col;
        }
    } else {
        const float *saved = o->in[3] >= 0 ? TF(g, o->in[3]) + n0 * c->K * c->P : NULL;
        for (long n = n0; n < n1; n++) {
            if (!saved)
                im2col_nchw(in + n * xs, c, 0, c->P, col + (n - n0) * c->P, ld);
            for (int co = 0; co < c->Co; co++)
                memcpy(dyg + (long)co * ld + (n - n0) * c->P, dy + n * ys + (long)co * c->P,
                       c->P * sizeof(float));
        }
        cl = saved ? saved : col;
        dyv = dyg;
    }
    cpu_gemm(0, 1, c->Co, c->K, ld, 1.0f, dyv, ld, cl, ld, 1.0f, dw, c->K);
    for (int co = 0; co < c->Co && o->out[2] >= 0; co++) {
        float s = 0.0f;
        for (long q = 0; q < ld; q++)
            s += dyv[(long)co * ld + q];
        db[co] += s;
    }
    if (!dx)
        return;
    if (c->pointwise && n1 - n0 == 1) {
        cpu_gemm(1, 0, c->K, c->P, c->Co, 1.0f, w, c->K, dyv, c->P,
                 ACC(o, 0) ? 1.0f : 0.0f, dx + n0 * xs, c->P);
        return;
    }
    cpu_gemm(1, 0, c->K, ld, c->Co, 1.0f, w, c->K, dyv, ld, 0.0f, dcol, ld);
    for (long n = n0; n < n1; n++) {
        if (!ACC(o, 0))
            memset(dx + n * xs, 0, xs * sizeof(float));
        col2im_nchw(dcol + (n - n0) * c->P, c, dx + n * xs, ld);
    }
}

static void conv_bwd_run(void *p, int tid, int nt)
{
    struct conv_ctx *x = p;
    const conv_geo *c = &x->c;
    graph *g = x->g;
    op *o = x->o;
    const float *dy = TF(g, o->in[0]), *in = TF(g, o->in[1]), *w = TF(g, o->in[2]);
    float *dx = o->out[0] >= 0 ? TF(g, o->out[0]) : NULL;
    long cols = c->nhwc ? c->P : x->s.nb > 1 ? x->s.nb * c->P : x->s.len;
    float *col = x->ws + (size_t)tid * x->ws_per;
    float *dcol = col + (size_t)c->K * cols;
    float *dyg = dcol + (size_t)c->K * cols;
    float *dw = dyg + (size_t)c->Co * cols;
    float *db = dw + (size_t)c->Co * c->K;
    long lo, hi;
    long xs = (long)c->C * c->H * c->W, ys = (long)c->Co * c->P;
    if (tid == 0) {
        /* part 0 accumulates straight into the gradients; the other parts'
         * partials are added by conv_reduce_run */
        dw = TF(g, o->out[1]);
        if (!ACC(o, 1))
            memset(dw, 0, (size_t)c->Co * c->K * sizeof(float));
        if (o->out[2] >= 0) {
            db = TF(g, o->out[2]);
            if (!ACC(o, 2))
                memset(db, 0, c->Co * sizeof(float));
        }
    } else
        memset(dw, 0, ((size_t)c->Co * c->K + c->Co) * sizeof(float));
    if (!c->nhwc) {
        long groups = (c->N + x->s.nb - 1) / x->s.nb;
        pool_range(groups, tid, nt, &lo, &hi);
        for (long gi = lo; gi < hi; gi++) {
            long n0 = gi * x->s.nb, n1 = n0 + x->s.nb < c->N ? n0 + x->s.nb : c->N;
            conv_bwd_nchw(x, n0, n1, col, dcol, dyg, dw, db);
        }
        return;
    }
    pool_range(c->N, tid, nt, &lo, &hi);
    for (long n = lo; n < hi; n++) {
        const float *xn = in + n * xs, *dyn = dy + n * ys;
        float *dxn = dx ? dx + n * xs : NULL;
        const float *cl = xn;
        if (!c->pointwise) {
            im2col_nhwc(in, c, n * c->P, (n + 1) * c->P, col);
            cl = col;
        }
        cpu_gemm(1, 0, c->Co, c->K, c->P, 1.0f, dyn, c->Co, cl, c->K, 1.0f, dw, c->K);
        for (int q = 0; q < c->P && o->out[2] >= 0; q++)
            for (int co = 0; co < c->Co; co++)
                db[co] += dyn[(long)q * c->Co + co];
        if (dxn) {
            if (c->pointwise)
                cpu_gemm(0, 0, c->P, c->K, c->Co, 1.0f, dyn, c->Co, w, c->K,
                         ACC(o, 0) ? 1.0f : 0.0f, dxn, c->K);
            else {
                cpu_gemm(0, 0, c->P, c->K, c->Co, 1.0f, dyn, c->Co, w, c->K, 0.0f, dcol, c->K);
                if (!ACC(o, 0))
                    memset(dxn, 0, xs * sizeof(float));
                col2im_nhwc(dcol, c, dxn);
            }
        }
    }
}

static void conv_reduce_run(void *p, int tid, int nt)
{
    struct conv_ctx *x = p;
    const conv_geo *c = &x->c;
    graph *g = x->g;
    op *o = x->o;
    long n = (long)c->Co * c->K + c->Co, lo, hi;
    long cols = c->nhwc ? c->P : x->s.nb > 1 ? x->s.nb * c->P : x->s.len;
    long off = 2L * c->K * cols + (long)c->Co * cols;
    float *dw = TF(g, o->out[1]);
    float *db = o->out[2] >= 0 ? TF(g, o->out[2]) : NULL;
    pool_range(n, tid, nt, &lo, &hi);
    for (long i = lo; i < hi; i++) {
        int isb = i >= (long)c->Co * c->K;
        float *dst = isb ? (db ? db + (i - (long)c->Co * c->K) : NULL) : dw + i;
        if (!dst)
            continue;
        float s = *dst; /* part 0's sum, see conv_bwd_run */
        for (int t = 1; t < pool_threads(); t++)
            s += x->ws[(size_t)t * x->ws_per + off + i];
        *dst = s;
    }
}

void cpu_conv_bwd(graph *g, op *o)
{
    struct conv_ctx x = {g, o, conv_geometry(g, o), {0, 0, 0}, backend_ws, 0, NULL};
    int nt = pool_threads();
    x.s = conv_split(&x.c, nt);
    long cols = x.c.nhwc ? x.c.P : x.s.nb > 1 ? x.s.nb * x.c.P : x.s.len;
    x.ws_per = 2L * x.c.K * cols + (long)x.c.Co * cols + (long)x.c.Co * x.c.K + x.c.Co;
    if (o->out[0] >= 0 && conv_flip_dx(&x.c, &x.s)) {
        x.wt = x.ws + (size_t)nt * x.ws_per;
        conv_flip_weights(&x.c, TF(g, o->in[2]), x.wt);
    }
    pool_run(conv_bwd_run, &x);
    if (nt > 1)
        pool_run(conv_reduce_run, &x);
}
