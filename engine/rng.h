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

/* Uniform in [0, 1) with 24 random bits: SplitMix64's i-th output of the
 * stream seeded with key. */
static inline float rng_uniform(uint64_t key, uint64_t i)
{
    return (float)(rng_mix(key + i * 0x9e3779b97f4a7c15ULL) >> 40) * (1.0f / 16777216.0f);
}


#endif
