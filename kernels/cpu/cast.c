/* fp32 <-> bf16 casts over arrays (bf16.h: round-to-nearest-even, NaN stays
 * a quiet NaN). Shapes: src, dst [n], any tensor flattened. */
#include "zb_cpu_kernels.h"

/* dst [n] = bf16(src [n]) */
void zb_cpu_f32_to_bf16(zb_bf16 *dst, const float *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = zb_f32_to_bf16(src[i]);
}

/* dst [n] = fp32(src [n]), exact */
void zb_cpu_bf16_to_f32(float *dst, const zb_bf16 *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = zb_bf16_to_f32(src[i]);
}
