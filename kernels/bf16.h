/* bf16 <-> fp32 conversion, shared by CPU and CUDA code.
 *
 * bf16 is the top 16 bits of an IEEE fp32. Rounding from fp32 is
 * round-to-nearest-even, NaN stays NaN (quiet), as CUDA's __float2bfloat16
 * does. Stored as a plain uint16_t so C and CUDA agree on the layout. */
#ifndef ZB_BF16_H
#define ZB_BF16_H

#include <stdint.h>
#include <string.h>

#include "zb_hd.h"

typedef uint16_t zb_bf16;

static inline ZB_HD float zb_bf16_to_f32(zb_bf16 h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline ZB_HD zb_bf16 zb_f32_to_bf16(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0u) {
        return (zb_bf16)((bits >> 16) | 0x0040u); /* quiet NaN */
    }
    uint32_t lsb = (bits >> 16) & 1u;
    bits += 0x7fffu + lsb;
    return (zb_bf16)(bits >> 16);
}

#endif
