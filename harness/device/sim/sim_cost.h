/* The sim's cost model (docs/design.md §6): the seconds an op takes on the
 * hardware a profile describes, from its FLOPs and its bytes (collectives:
 * harness/comm/sim/sim_coll.h). Pure functions over a
 * hardware profile whose sim parameters were checked (zb_hw_sim_require). */
#ifndef ZB_SIM_COST_H
#define ZB_SIM_COST_H

#include <stdint.h>

#include "dtype.h"
#include "profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The dense peak FLOP/s of a dtype: bf16_flops for bf16, else fp32_flops. */
double zb_sim_peak_flops(const zb_hw_profile *hw, zb_dtype dtype);

/* 2 m n k / (peak(dtype) * gemm_efficiency(min(m, n, k))). */
double zb_sim_gemm_s(const zb_hw_profile *hw, int64_t m, int64_t n, int64_t k, zb_dtype dtype);

/* bytes / (hbm_bytes_per_s * mem_efficiency): element-wise ops, norms,
 * copies (bytes read plus bytes written). */
double zb_sim_mem_s(const zb_hw_profile *hw, double bytes);

/* Attention: the slower of its math and its memory traffic,
 * max(flops / (peak(dtype) * attention_efficiency), zb_sim_mem_s(bytes)). */
double zb_sim_attention_s(const zb_hw_profile *hw, double flops, double bytes, zb_dtype dtype);

#ifdef __cplusplus
}
#endif
#endif
