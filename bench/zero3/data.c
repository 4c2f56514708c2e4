/* Synthetic token stream (data.h): tokens, targets [T] per sample. */
#include "rng.h"
#include <stdbool.h>
#include <stddef.h>

#include "data.h"


#define ZB_SUCC_DOMAIN 0x5a42737563636573ull /* "ZBsucces" */
#define ZB_DATA_DOMAIN 0x5a42646174612e2eull /* "ZBdata.." */

/* A value in [0, V) from 32 random bits (multiply-shift: no modulo bias
 * worth the name for V far below 2^32). */
static int32_t pick(uint32_t bits, int V) {
    return (int32_t)(((uint64_t)bits * (uint64_t)V) >> 32);
}

int32_t zb_data_successor(uint64_t seed, int32_t cur, int V) {
    uint64_t h = zb_mix64(zb_mix64(seed ^ ZB_SUCC_DOMAIN) + ((uint64_t)cur + 1u) * ZB_GOLDEN_GAMMA);
    return pick((uint32_t)(h >> 32), V);
}

void zb_data_sample(uint64_t seed, uint64_t sample_index, int T, int V, int32_t *tokens,
                    int32_t *targets) {
    uint64_t key = zb_mix64(zb_mix64(seed ^ ZB_DATA_DOMAIN) + sample_index * ZB_GOLDEN_GAMMA);
    int32_t cur = 0;
    for (int t = 0; t <= T; t++) {
        uint64_t h = zb_mix64(key + ((uint64_t)t + 1u) * ZB_GOLDEN_GAMMA);
        uint32_t coin = (uint32_t)(h >> 32), uni = (uint32_t)h;
        /* position 0 is uniform; later ones follow succ 90% of the time */
        bool follow = t > 0 && (double)coin < 0.9 * 4294967296.0;
        int32_t next = follow ? zb_data_successor(seed, cur, V) : pick(uni, V);
        if (t < T) tokens[t] = next;
        if (t > 0) targets[t - 1] = next;
        cur = next;
    }
}

void zb_data_batch(uint64_t seed, uint64_t first_sample, int n, int T, int V, int32_t *tokens,
                   int32_t *targets) {
    for (int i = 0; i < n; i++) {
        size_t off = (size_t)i * (size_t)T;
        zb_data_sample(seed, first_sample + (uint64_t)i, T, V, tokens + off, targets + off);
    }
}

uint64_t zb_data_sample_index(int step, int n_ranks, int rank, int B, int b) {
    return (uint64_t)step * (uint64_t)n_ranks * (uint64_t)B + (uint64_t)rank * (uint64_t)B +
           (uint64_t)b;
}
