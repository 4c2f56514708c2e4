/* FMA throughput loops (see cpu_peak.h).
 *
 * Ten independent accumulators cover FMA latency (4-5 cycles) times two FMA
 * ports, so the loop runs at the core's FMA throughput, which is the peak
 * that BLAS kernels are measured against (docs/design.md §10: AVX2 = 32 FLOP per
 * cycle per core). The widest instruction set the CPU has is used. */
#include "cpu_peak.h"

#include <stdint.h>

#include "trace.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define ZB_FMA_ACCUMULATORS 10

/* Ten named accumulators: an array indexed in a loop may live in memory at
 * -O2, and then the loop measures loads and stores, not FMAs. */
#define ZB_FMA_BODY(fmadd, a, m, c)                                                                \
    a##0 = fmadd(a##0, m, c); a##1 = fmadd(a##1, m, c); a##2 = fmadd(a##2, m, c);                  \
    a##3 = fmadd(a##3, m, c); a##4 = fmadd(a##4, m, c); a##5 = fmadd(a##5, m, c);                  \
    a##6 = fmadd(a##6, m, c); a##7 = fmadd(a##7, m, c); a##8 = fmadd(a##8, m, c);                  \
    a##9 = fmadd(a##9, m, c)

__attribute__((target("avx2,fma"))) static float fma_loop_avx2(int64_t iters) {
    const __m256 mul = _mm256_set1_ps(0.9999999f), add = _mm256_set1_ps(1e-7f);
    __m256 a0 = _mm256_set1_ps(0.f), a1 = _mm256_set1_ps(1.f), a2 = _mm256_set1_ps(2.f),
           a3 = _mm256_set1_ps(3.f), a4 = _mm256_set1_ps(4.f), a5 = _mm256_set1_ps(5.f),
           a6 = _mm256_set1_ps(6.f), a7 = _mm256_set1_ps(7.f), a8 = _mm256_set1_ps(8.f),
           a9 = _mm256_set1_ps(9.f);
    for (int64_t i = 0; i < iters; i++) {
        ZB_FMA_BODY(_mm256_fmadd_ps, a, mul, add);
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                             _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    s = _mm256_add_ps(s, _mm256_add_ps(a8, a9));
    float out[8];
    _mm256_storeu_ps(out, s);
    return out[0] + out[7];
}

__attribute__((target("avx512f"))) static float fma_loop_avx512(int64_t iters) {
    const __m512 mul = _mm512_set1_ps(0.9999999f), add = _mm512_set1_ps(1e-7f);
    __m512 a0 = _mm512_set1_ps(0.f), a1 = _mm512_set1_ps(1.f), a2 = _mm512_set1_ps(2.f),
           a3 = _mm512_set1_ps(3.f), a4 = _mm512_set1_ps(4.f), a5 = _mm512_set1_ps(5.f),
           a6 = _mm512_set1_ps(6.f), a7 = _mm512_set1_ps(7.f), a8 = _mm512_set1_ps(8.f),
           a9 = _mm512_set1_ps(9.f);
    for (int64_t i = 0; i < iters; i++) {
        ZB_FMA_BODY(_mm512_fmadd_ps, a, mul, add);
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    s = _mm512_add_ps(s, _mm512_add_ps(a8, a9));
    return _mm512_reduce_add_ps(s);
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

/* The widest FMA the CPU has, from its own flags: never the BLAS core
 * zerobench or OPENBLAS_CORETYPE chose, so the peak is the machine's
 * whichever kernels run (a slower core must not lower the denominator). */
static const char *choose_loop(float (**loop)(int64_t), double *flops_per_iter) {
    *loop = fma_loop_scalar;
    *flops_per_iter = 8 * 2;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
        *loop = fma_loop_avx512;
        *flops_per_iter = ZB_FMA_ACCUMULATORS * 16 * 2;
        return "avx512f";
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        *loop = fma_loop_avx2;
        *flops_per_iter = ZB_FMA_ACCUMULATORS * 8 * 2;
        return "avx2+fma";
    }
#endif
    return "scalar";
}

const char *zb_cpu_peak_isa(void) {
    float (*loop)(int64_t);
    double flops_per_iter;
    return choose_loop(&loop, &flops_per_iter);
}

double zb_cpu_peak_gflops_per_core(double seconds, int n_runs, double *runs_gflops, const char **isa) {
    float (*loop)(int64_t);
    double flops_per_iter;
    *isa = choose_loop(&loop, &flops_per_iter);
    if (n_runs < 1) n_runs = 1;
    /* Grow the iteration count until one run lasts seconds / n_runs, then
     * time n_runs runs and keep the best rate (another process can only
     * slow a run down, never speed it up). */
    double run_s = seconds / n_runs;
    int64_t iters = 1 << 12;
    for (;;) {
        int64_t t0 = zb_now_ns();
        zb_cpu_peak_sink = loop(iters);
        double dt = (double)(zb_now_ns() - t0) / 1e9;
        if (dt >= run_s || iters > ((int64_t)1 << 40)) break;
        iters *= 2;
    }
    double best = 0.0;
    for (int run = 0; run < n_runs; run++) {
        int64_t t0 = zb_now_ns();
        zb_cpu_peak_sink = loop(iters);
        double dt = (double)(zb_now_ns() - t0) / 1e9;
        double rate = dt > 0 ? (double)iters * flops_per_iter / dt / 1e9 : 0.0;
        if (runs_gflops) runs_gflops[run] = rate;
        if (rate > best) best = rate;
    }
    return best;
}
