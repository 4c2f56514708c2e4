/* The values the collective tests put in rank r's element j: small integers
 * (|v| <= 8), exact in bf16, so sums over up to 16 ranks are exact whatever
 * the order the library adds in; and the expected sum over n ranks. */
#ifndef ZB_COLL_VALUES_H
#define ZB_COLL_VALUES_H

#include <stddef.h>

#include "dtype_access.h"

static inline float zb_test_value(int rank, size_t j) {
    return (float)((int)((j * 7 + (size_t)rank * 3) % 17) - 8);
}

static inline float zb_test_sum_over_ranks(int n, size_t j) {
    float s = 0;
    for (int r = 0; r < n; r++) s += zb_test_value(r, j);
    return s;
}

#endif
