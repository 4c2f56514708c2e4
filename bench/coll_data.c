/* Seeded inputs and exact checks for the collective benchmarks.
 *
 * Element j of rank r's input is a small integer in [-2, 2] drawn from a hash
 * of (seed, r, j). Sums of up to 128 such values stay within bf16's exact
 * integers (|x| <= 256), so float and bf16 results are checked for exact
 * equality whatever order the library adds in; past 128 ranks bf16 sums are
 * compared with a relative tolerance of 2^-7 instead. */
#include <math.h>

#include "coll_bench.h"
#include "rng.h"
#include "dtype_access.h"

static float seeded_value(uint64_t seed, int rank, size_t j) {
    uint64_t h = zb_mix64(seed ^ ((uint64_t)(rank + 1) * 0xC2B2AE3D27D4EB4FULL) ^
                          ((uint64_t)(j + 1) * ZB_GOLDEN_GAMMA));
    return (float)((int)(h % 5u) - 2);
}

/* Elements of this rank's input buffer. */
static size_t input_elems(const zb_coll_def *def, const zb_coll_args *a) {
    return def->kind == ZB_COLL_REDUCESCATTER ? a->count * (size_t)a->n_ranks : a->count;
}

void zb_coll_init_input(const zb_coll_def *def, const zb_coll_args *a) {
    size_t n = input_elems(def, a);
    for (size_t j = 0; j < n; j++) zb_dtype_store(a->send, j, a->dtype, seeded_value(a->seed, a->rank, j));
}

static float expected_sum(const zb_coll_args *a, size_t j) {
    float sum = 0.0f;
    for (int r = 0; r < a->n_ranks; r++) sum += seeded_value(a->seed, r, j);
    return sum;
}

static bool matches(float got, float want, const zb_coll_args *a) {
    if (a->dtype == ZB_DTYPE_BF16 && a->n_ranks > 128) {
        return fabsf(got - want) <= fabsf(want) * (1.0f / 128.0f);
    }
    return got == want;
}

int64_t zb_coll_count_wrong(const zb_coll_def *def, const zb_coll_args *a) {
    int64_t wrong = 0;
    switch (def->kind) {
    case ZB_COLL_ALLGATHER:
        for (int r = 0; r < a->n_ranks; r++) {
            for (size_t j = 0; j < a->count; j++) {
                float got = zb_dtype_load(a->recv, (size_t)r * a->count + j, a->dtype);
                wrong += !matches(got, seeded_value(a->seed, r, j), a);
            }
        }
        break;
    case ZB_COLL_REDUCESCATTER:
        for (size_t j = 0; j < a->count; j++) {
            float want = expected_sum(a, (size_t)a->rank * a->count + j);
            wrong += !matches(zb_dtype_load(a->recv, j, a->dtype), want, a);
        }
        break;
    case ZB_COLL_ALLREDUCE:
        for (size_t j = 0; j < a->count; j++) {
            wrong += !matches(zb_dtype_load(a->recv, j, a->dtype), expected_sum(a, j), a);
        }
        break;
    case ZB_COLL_BARRIER:
    case ZB_COLL_COUNT: break;
    }
    return wrong;
}
