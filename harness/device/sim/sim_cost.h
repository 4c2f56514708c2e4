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

/* The element-wise kernel `name` (kernel_bytes.h counts its bytes): bytes /
 * (hbm_bytes_per_s * its sim.kernel_efficiency), mem_efficiency for a
 * kernel the profile gives none. */
double zb_sim_kernel_s(const zb_hw_profile *hw, const char *name, double bytes);

/* Fused causal attention (what the cuda backend runs: cuDNN's SDPA), the
 * slower of its math and its memory traffic. The math is the FLOPs the
 * kernel performs, F = zb_attention_fwd_causal_flops (key pairs j <= i)
 * forward and 2.5 F backward (five tile products to the forward's two:
 * the scores are recomputed), at attention_fwd_efficiency /
 * attention_bwd_efficiency of peak(dtype), as fused-attention benchmarks
 * count them; bytes grow with T (q, k, v, out, lse and gradients), never
 * T x T. */
double zb_sim_attention_fwd_s(const zb_hw_profile *hw, int B, int T, int H, int D, double bytes,
                              zb_dtype dtype);
double zb_sim_attention_bwd_s(const zb_hw_profile *hw, int B, int T, int H, int D, double bytes,
                              zb_dtype dtype);

#ifdef __cplusplus
}
#endif
#endif
