/* The sim's cost formulas (sim_cost.h, docs/design.md §6). */
#include "sim_cost.h"

#include "kernels.h"

double zb_sim_peak_flops(const zb_hw_profile *hw, zb_dtype dtype) {
    return dtype == ZB_DTYPE_BF16 ? hw->bf16_flops : hw->fp32_flops;
}

double zb_sim_gemm_s(const zb_hw_profile *hw, int64_t m, int64_t n, int64_t k, zb_dtype dtype) {
    int64_t dmin = m < n ? m : n;
    if (k < dmin) dmin = k;
    double eff = zb_hw_sim_gemm_eff(&hw->sim, (double)dmin);
    return 2.0 * (double)m * (double)n * (double)k / (zb_sim_peak_flops(hw, dtype) * eff);
}

double zb_sim_mem_s(const zb_hw_profile *hw, double bytes) {
    return bytes / (hw->hbm_bytes_per_s * hw->sim.mem_efficiency);
}

double zb_sim_kernel_s(const zb_hw_profile *hw, const char *name, double bytes) {
    return bytes / (hw->hbm_bytes_per_s * zb_hw_sim_kernel_eff(&hw->sim, name));
}

static double slower(double math, double mem) { return math > mem ? math : mem; }

double zb_sim_attention_fwd_s(const zb_hw_profile *hw, int B, int T, int H, int D, double bytes,
                              zb_dtype dtype) {
    double f = zb_attention_fwd_causal_flops(B, T, H, D);
    double math = f / (zb_sim_peak_flops(hw, dtype) * hw->sim.attention_fwd_efficiency);
    return slower(math, zb_sim_mem_s(hw, bytes));
}

double zb_sim_attention_bwd_s(const zb_hw_profile *hw, int B, int T, int H, int D, double bytes,
                              zb_dtype dtype) {
    double f = 2.5 * zb_attention_fwd_causal_flops(B, T, H, D);
    double math = f / (zb_sim_peak_flops(hw, dtype) * hw->sim.attention_bwd_efficiency);
    return slower(math, zb_sim_mem_s(hw, bytes));
}

