/* simlib.h - what the simulated libraries (cublaslt.cc, cudnn.cc) share:
 * elements of f32 / f16 / bf16 read and written as f32, TF32 rounding, and
 * the check that a library call's operand lies inside one cudaMalloc
 * allocation and is aligned as the call needs (else the run stops, as a
 * GPU's would on an illegal or misaligned address). */
#ifndef MATRIX_CUDASIM_SIMLIB_H
#define MATRIX_CUDASIM_SIMLIB_H

#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <vector>

namespace simlib {

enum { F32, F16, BF16 };

inline float load(const void *p, int k, size_t i)
{
    if (k == F32)
        return ((const float *)p)[i];
    if (k == F16)
        return __half2float(((const __half *)p)[i]);
    return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
}

inline void store(void *p, int k, size_t i, float v)
{
    if (k == F32)
        ((float *)p)[i] = v;
    else if (k == F16)
        ((__half *)p)[i] = __float2half_rn(v);
    else
        ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v);
}

/* x rounded to TF32 (10-bit mantissa, nearest even), as tensor cores read f32 */
inline float tf32(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) {
        u += 0x0fffu + ((u >> 13) & 1u);
        u &= ~0x1fffu;
    }
    memcpy(&x, &u, 4);
    return x;
}

/* largest power of two up to 256 dividing the address */
inline uint32_t align_of(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    uint32_t al = 256;
    while (al > 1 && (a & (al - 1)))
        al >>= 1;
    return al;
}

/* operand what of call: n bytes at p inside one allocation, aligned to need */
inline void operand(const char *call, const char *what, const void *p, size_t n, uint32_t need)
{
    if (!p || !cudasim::inside_alloc(p, n)) {
        fprintf(stderr, "cudasim: %s: %s (%zu bytes at %p) is not inside one cudaMalloc allocation\n", call,
                what, n, p);
        abort();
    }
    if (align_of(p) < need) {
        fprintf(stderr, "cudasim: %s: %s at %p is %u-byte aligned; its algorithm was chosen for %u\n", call,
                what, p, align_of(p), need);
        abort();
    }
}

/* 1 when the fault list w ("all", or "ID,ID,...": CUDASIM_LT_WRONG,
 * CUDASIM_DNNG_WRONG) names id; an empty or absent list names none, and
 * parsing stops at the first entry that is not a number. */
inline int listed(const char *w, long id)
{
    if (!w || !*w)
        return 0;
    if (strcmp(w, "all") == 0)
        return 1;
    for (const char *p = w; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p)
            break;
        if (v == id)
            return 1;
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

/* The milliseconds that environment variable env ("ID=MS,ID=MS,...") gives
 * id, 0 when none (CUDASIM_DNN_DELAY: cudnn.cc's algorithms,
 * CUDASIM_DNNG_DELAY: cudnngraph.cc's engines); parsing stops at the first
 * entry that is not ID=MS. */
inline double delay_ms(const char *env, long id)
{
    const char *d = getenv(env);
    for (const char *p = d ? d : ""; *p;) {
        char *end;
        long a = strtol(p, &end, 10);
        if (end == p || *end != '=')
            break;
        double ms = strtod(end + 1, &end);
        if (a == id)
            return ms;
        if (*end != ',')
            break;
        p = end + 1;
    }
    return 0.0;
}

/* Convolution sums on canonical f32 copies: x (n, c, h, w), w (k, c, r, s),
 * y (n, k, oh, ow), stride u x v, padding ph x pw. Each output element's
 * terms are added in the order its algorithm (cudnn.cc) or engine
 * (cudnngraph.cc) gives it, as a loop over one element at a time would, but
 * the loops run over a whole output row (forward, backward data) or every
 * channel (backward filter) at once: no division or bounds test per term,
 * and independent sums side by side that the compiler vectorises. The
 * results are those of the element-at-a-time loops bit for bit: the order
 * of each sum is the same (-ffp-contract=off), and a term outside the
 * input, which those added as 0.0f, is skipped (a sum that starts at +0.0f
 * is never -0.0f, so adding +0.0f changed nothing). */
struct conv_dims {
    int n, c, h, w; /* x */
    int k, r, s;    /* w: k x c x r x s */
    int oh, ow;     /* y: n x k x oh x ow */
    int u, v, ph, pw;
};

/* the order of a forward sum's terms */
enum {
    CONV_C_OUTER,   /* c outer, then r, s; each channel's part added to the sum */
    CONV_RS_OUTER,  /* r, s outer, c inner */
    CONV_C_BLOCK8,  /* as CONV_C_OUTER, the parts of 8 channels added at once */
    CONV_C_HALVES   /* two sums, channels below c / 2 and the rest, c, r, s; then added */
};

/* the outputs j in [*lo, *hi] of a row whose input index j * st - pad + o
 * lies in [0, in); *hi < *lo when none, capped at out - 1 */
inline void conv_span(int in, int out, int st, int pad, int o, int *lo, int *hi)
{
    int a = pad - o, b = in - 1 + pad - o;
    *lo = a <= 0 ? 0 : (a + st - 1) / st;
    *hi = b < 0 ? -1 : b / st;
    if (*hi > out - 1)
        *hi = out - 1;
}

/* each s's span of outputs (conv_span) along a row, computed once */
struct conv_spans {
    std::vector<int> lo, hi;
    conv_spans(const conv_dims &d) : lo((size_t)d.s), hi((size_t)d.s)
    {
        for (int s = 0; s < d.s; s++)
            conv_span(d.w, d.ow, d.v, d.pw, s, &lo[(size_t)s], &hi[(size_t)s]);
    }
};

/* dst[j] += xr[j v - pw + s] wv over the outputs j in [lo, hi] */
inline void conv_row(float *dst, const float *xr, float wv, const conv_dims &d, int s, int lo, int hi)
{
    if (d.v == 1) {
        const float *xo = xr - d.pw + s;
        for (int j = lo; j <= hi; j++)
            dst[j] += xo[j] * wv;
    } else {
        for (int j = lo; j <= hi; j++)
            dst[j] += xr[j * d.v - d.pw + s] * wv;
    }
}

/* y (dense n, k, oh, ow) = the forward sums */
inline void conv_fwd(const conv_dims &d, const float *X, const float *W, int order, float *y)
{
    const conv_spans sp(d);
    std::vector<float> part((size_t)d.ow), other((size_t)d.ow);
    for (int n = 0; n < d.n; n++)
        for (int k = 0; k < d.k; k++)
            for (int oh = 0; oh < d.oh; oh++) {
                float *acc = y + (((size_t)n * d.k + k) * d.oh + oh) * d.ow;
                std::fill(acc, acc + d.ow, 0.0f);
                /* the terms of channel c, filter row r (none where the input row is outside) */
                auto terms = [&](float *dst, int c, int r, int s) __attribute__((always_inline)) {
                    int ih = oh * d.u - d.ph + r;
                    if (ih >= 0 && ih < d.h)
                        conv_row(dst, X + (((size_t)n * d.c + c) * d.h + ih) * d.w,
                                 W[(((size_t)k * d.c + c) * d.r + r) * d.s + s], d, s, sp.lo[(size_t)s],
                                 sp.hi[(size_t)s]);
                };
                if (order == CONV_RS_OUTER) {
                    for (int r = 0; r < d.r; r++)
                        for (int s = 0; s < d.s; s++)
                            for (int c = 0; c < d.c; c++)
                                terms(acc, c, r, s);
                } else if (order == CONV_C_HALVES) {
                    std::fill(part.begin(), part.end(), 0.0f);
                    std::fill(other.begin(), other.end(), 0.0f);
                    for (int c = 0; c < d.c; c++)
                        for (int r = 0; r < d.r; r++)
                            for (int s = 0; s < d.s; s++)
                                terms(c >= d.c / 2 ? other.data() : part.data(), c, r, s);
                    for (int j = 0; j < d.ow; j++)
                        acc[j] = part[j] + other[j];
                } else {
                    std::fill(part.begin(), part.end(), 0.0f);
                    for (int c = 0; c < d.c; c++) {
                        for (int r = 0; r < d.r; r++)
                            for (int s = 0; s < d.s; s++)
                                terms(part.data(), c, r, s);
                        if (order != CONV_C_BLOCK8 || c % 8 == 7 || c == d.c - 1)
                            for (int j = 0; j < d.ow; j++) {
                                acc[j] += part[j];
                                part[j] = 0.0f;
                            }
                    }
                }
            }
}

/* dx (dense n, c, h, w) = the backward-data sums: k (descending when
 * k_down), then r, s */
inline void conv_dgrad(const conv_dims &d, const float *DY, const float *W, int k_down, float *dx)
{
    const conv_spans sp(d);
    /* the output row of input row ih and filter row r, -1 where none */
    std::vector<int> orow((size_t)d.h * d.r);
    for (int ih = 0; ih < d.h; ih++)
        for (int r = 0; r < d.r; r++) {
            int t = ih + d.ph - r;
            orow[(size_t)ih * d.r + r] = t < 0 || t % d.u || t / d.u >= d.oh ? -1 : t / d.u;
        }
    for (int n = 0; n < d.n; n++)
        for (int c = 0; c < d.c; c++)
            for (int ih = 0; ih < d.h; ih++) {
                float *acc = dx + (((size_t)n * d.c + c) * d.h + ih) * d.w;
                std::fill(acc, acc + d.w, 0.0f);
                for (int kk = 0; kk < d.k; kk++) {
                    int k = k_down ? d.k - 1 - kk : kk;
                    for (int r = 0; r < d.r; r++) {
                        int oh = orow[(size_t)ih * d.r + r];
                        if (oh < 0)
                            continue;
                        const float *dyr = DY + (((size_t)n * d.k + k) * d.oh + oh) * d.ow;
                        const float *wr = W + (((size_t)k * d.c + c) * d.r + r) * d.s;
                        for (int s = 0; s < d.s; s++) {
                            /* the outputs j whose column j v - pw + s is an input column */
                            const int lo = sp.lo[(size_t)s], hi = sp.hi[(size_t)s];
                            const float wv = wr[s];
                            if (d.v == 1) {
                                float *ao = acc - d.pw + s;
                                for (int j = lo; j <= hi; j++)
                                    ao[j] += dyr[j] * wv;
                            } else {
                                for (int j = lo; j <= hi; j++)
                                    acc[j * d.v - d.pw + s] += dyr[j] * wv;
                            }
                        }
                    }
                }
            }
}

/* dw (dense k, c, r, s) = the backward-filter sums: per image n (descending
 * when n_down) a part over oh, ow, the parts added */
inline void conv_wgrad(const conv_dims &d, const float *X, const float *DY, int n_down, float *dw)
{
    /* x with its channels innermost (n, h, w, c): one output per channel side by side */
    std::vector<float> xt((size_t)d.n * d.h * d.w * d.c);
    for (int n = 0; n < d.n; n++)
        for (int c = 0; c < d.c; c++)
            for (int h = 0; h < d.h; h++)
                for (int w = 0; w < d.w; w++)
                    xt[(((size_t)n * d.h + h) * d.w + w) * d.c + c] = X[(((size_t)n * d.c + c) * d.h + h) * d.w + w];
    const conv_spans sp(d);
    std::vector<float> acc((size_t)d.c), part((size_t)d.c);
    for (int k = 0; k < d.k; k++)
        for (int r = 0; r < d.r; r++)
            for (int s = 0; s < d.s; s++) {
                const int lo = sp.lo[(size_t)s], hi = sp.hi[(size_t)s];
                std::fill(acc.begin(), acc.end(), 0.0f);
                for (int nn = 0; nn < d.n; nn++) {
                    int n = n_down ? d.n - 1 - nn : nn;
                    std::fill(part.begin(), part.end(), 0.0f);
                    float *p = part.data();
                    for (int oh = 0; oh < d.oh; oh++) {
                        int ih = oh * d.u - d.ph + r;
                        if (ih < 0 || ih >= d.h)
                            continue;
                        const float *dyr = DY + (((size_t)n * d.k + k) * d.oh + oh) * d.ow;
                        for (int ow = lo; ow <= hi; ow++) {
                            const float g = dyr[ow];
                            const float *xp = xt.data() + (((size_t)n * d.h + ih) * d.w + ow * d.v - d.pw + s) * d.c;
                            for (int c = 0; c < d.c; c++)
                                p[c] += g * xp[c];
                        }
                    }
                    for (int c = 0; c < d.c; c++)
                        acc[c] += part[c];
                }
                for (int c = 0; c < d.c; c++)
                    dw[(((size_t)k * d.c + c) * d.r + r) * d.s + s] = acc[c];
            }
}

} // namespace simlib

#endif
