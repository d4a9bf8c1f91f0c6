/* rng.h - counter-based random numbers (splitmix64): the value at index i of
 * stream key depends on nothing else, so draws are reproducible and can be
 * made in parallel in any order. */
#ifndef MATRIX_ENGINE_RNG_H
#define MATRIX_ENGINE_RNG_H

#include <math.h>
#include <stdint.h>

static inline uint64_t rng_mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 24 random bits. */
static inline float rng_uniform(uint64_t key, uint64_t i)
{
    return (float)(rng_mix(key ^ rng_mix(i)) >> 40) * (1.0f / 16777216.0f);
}

/* Standard normal (Box-Muller on two draws). */
static inline float rng_normal(uint64_t key, uint64_t i)
{
    double u1 = ((rng_mix(key ^ rng_mix(2 * i)) >> 11) + 1.0) * (1.0 / 9007199254740993.0);
    double u2 = (rng_mix(key ^ rng_mix(2 * i + 1)) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

#endif
