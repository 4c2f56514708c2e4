/* Reading and writing element i of a host buffer of either dtype as a
 * float (bf16 rounds to nearest even on store). Used wherever benchmarks and
 * tests fill or check buffers element by element. */
#ifndef ZB_DTYPE_ACCESS_H
#define ZB_DTYPE_ACCESS_H

#include <stddef.h>

#include "bf16.h"
#include "dtype.h"

static inline void zb_dtype_store(void *buf, size_t i, zb_dtype t, float v) {
    if (t == ZB_DTYPE_BF16) ((zb_bf16 *)buf)[i] = zb_f32_to_bf16(v);
    else ((float *)buf)[i] = v;
}

static inline float zb_dtype_load(const void *buf, size_t i, zb_dtype t) {
    return t == ZB_DTYPE_BF16 ? zb_bf16_to_f32(((const zb_bf16 *)buf)[i]) : ((const float *)buf)[i];
}

#endif
