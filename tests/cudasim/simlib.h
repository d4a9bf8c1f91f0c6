/* simlib.h - what the simulated libraries (cublaslt.cc, cudnn.cc) share:
 * elements of f32 / f16 / bf16 read and written as f32, TF32 rounding, and
 * the check that a library call's operand lies inside one cudaMalloc
 * allocation and is aligned as the call needs (else the run stops, as a
 * GPU's would on an illegal or misaligned address). */
#ifndef MATRIX_CUDASIM_SIMLIB_H
#define MATRIX_CUDASIM_SIMLIB_H

#include <stdio.h>
#include <stdlib.h>

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

} // namespace simlib

#endif
