/* The sim's cost formulas (sim_cost.h, docs/design.md §6). */
#include "sim_cost.h"

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

double zb_sim_attention_s(const zb_hw_profile *hw, double flops, double bytes, zb_dtype dtype) {
    double math = flops / (zb_sim_peak_flops(hw, dtype) * hw->sim.attention_efficiency);
    double mem = zb_sim_mem_s(hw, bytes);
    return math > mem ? math : mem;
}

