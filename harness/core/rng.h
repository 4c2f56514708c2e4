/* Counter-based random numbers shared by every seeded generator (model
 * init, synthetic data, benchmark inputs): splitmix64's output function
 * and its sequential form. Stateless hashing of (seed, index) lets each
 * rank generate exactly its slice, identical for any number of ranks. */
#ifndef ZB_RNG_H
#define ZB_RNG_H

#include <stdint.h>

#include "zb_hd.h"

#define ZB_GOLDEN_GAMMA 0x9e3779b97f4a7c15ull

/* splitmix64's finalizer: a bijective 64-bit mix. */
static inline ZB_HD uint64_t zb_mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The next value of the splitmix64 sequence whose state is *s. */
static inline ZB_HD uint64_t zb_splitmix_next(uint64_t *s) {
    *s += ZB_GOLDEN_GAMMA;
    return zb_mix64(*s);
}

/* A uniform double in [-1, 1) from 64 random bits (53 of them used). */
static inline ZB_HD double zb_uniform_pm1(uint64_t bits) {
    return (double)(bits >> 11) * 0x1.0p-52 - 1.0;
}

#endif
