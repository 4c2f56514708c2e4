/* FMA throughput loops (see cpu_peak.h).
 *
 * Ten independent accumulators cover FMA latency (4-5 cycles) times two FMA
 * ports, so the loop runs at the core's FMA throughput, which is the peak
 * that BLAS kernels are measured against (REFERENCE.md: AVX2 = 32 FLOP per
 * cycle per core). The widest instruction set the CPU has is used. */
#include "cpu_peak.h"

#include <stdint.h>

#include "trace.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define ZB_FMA_ACCUMULATORS 10

__attribute__((target("avx2,fma"))) static float fma_loop_avx2(int64_t iters) {
    __m256 acc[ZB_FMA_ACCUMULATORS];
    const __m256 mul = _mm256_set1_ps(0.9999999f), add = _mm256_set1_ps(1e-7f);
    for (int j = 0; j < ZB_FMA_ACCUMULATORS; j++) acc[j] = _mm256_set1_ps((float)j);
    for (int64_t i = 0; i < iters; i++) {
        for (int j = 0; j < ZB_FMA_ACCUMULATORS; j++) acc[j] = _mm256_fmadd_ps(acc[j], mul, add);
    }
    __m256 sum = acc[0];
    for (int j = 1; j < ZB_FMA_ACCUMULATORS; j++) sum = _mm256_add_ps(sum, acc[j]);
    float out[8];
    _mm256_storeu_ps(out, sum);
    return out[0] + out[7];
}

__attribute__((target("avx512f"))) static float fma_loop_avx512(int64_t iters) {
    __m512 acc[ZB_FMA_ACCUMULATORS];
    const __m512 mul = _mm512_set1_ps(0.9999999f), add = _mm512_set1_ps(1e-7f);
    for (int j = 0; j < ZB_FMA_ACCUMULATORS; j++) acc[j] = _mm512_set1_ps((float)j);
    for (int64_t i = 0; i < iters; i++) {
        for (int j = 0; j < ZB_FMA_ACCUMULATORS; j++) acc[j] = _mm512_fmadd_ps(acc[j], mul, add);
    }
    __m512 sum = acc[0];
    for (int j = 1; j < ZB_FMA_ACCUMULATORS; j++) sum = _mm512_add_ps(sum, acc[j]);
    return _mm512_reduce_add_ps(sum);
}
#endif

static float fma_loop_scalar(int64_t iters) {
    float a0 = 0, a1 = 1, a2 = 2, a3 = 3, a4 = 4, a5 = 5, a6 = 6, a7 = 7;
    for (int64_t i = 0; i < iters; i++) {
        a0 = a0 * 0.9999999f + 1e-7f;
        a1 = a1 * 0.9999999f + 1e-7f;
        a2 = a2 * 0.9999999f + 1e-7f;
        a3 = a3 * 0.9999999f + 1e-7f;
        a4 = a4 * 0.9999999f + 1e-7f;
        a5 = a5 * 0.9999999f + 1e-7f;
        a6 = a6 * 0.9999999f + 1e-7f;
        a7 = a7 * 0.9999999f + 1e-7f;
    }
    return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

volatile float zb_cpu_peak_sink; /* keeps the loops from being optimized away */

double zb_cpu_peak_gflops_per_core(double seconds, const char **isa) {
    float (*loop)(int64_t) = fma_loop_scalar;
    double flops_per_iter = 8 * 2;
    *isa = "scalar";
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        loop = fma_loop_avx512;
        flops_per_iter = ZB_FMA_ACCUMULATORS * 16 * 2;
        *isa = "avx512f";
    } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        loop = fma_loop_avx2;
        flops_per_iter = ZB_FMA_ACCUMULATORS * 8 * 2;
        *isa = "avx2+fma";
    }
#endif
    /* Grow the iteration count until one run lasts a third of `seconds`,
     * then keep the best rate of three runs (another process can only slow
     * a run down, never speed it up). */
    int64_t iters = 1 << 12;
    for (;;) {
        int64_t t0 = zb_now_ns();
        zb_cpu_peak_sink = loop(iters);
        double dt = (double)(zb_now_ns() - t0) / 1e9;
        if (dt >= seconds / 3 || iters > ((int64_t)1 << 40)) break;
        iters *= 2;
    }
    double best = 0.0;
    for (int run = 0; run < 3; run++) {
        int64_t t0 = zb_now_ns();
        zb_cpu_peak_sink = loop(iters);
        double dt = (double)(zb_now_ns() - t0) / 1e9;
        double rate = (double)iters * flops_per_iter / dt / 1e9;
        if (rate > best) best = rate;
    }
    return best;
}
