/* Measures one core's peak fp32 FLOP/s with a register-only FMA loop, for
 * "% of peak" and MFU on the CPU backend when no --peak-gflops is given. */
#ifndef ZB_CPU_PEAK_H
#define ZB_CPU_PEAK_H

#ifdef __cplusplus
extern "C" {
#endif

/* Runs n_runs timed runs of about seconds / n_runs each (after sizing the
 * loop) and returns the best GFLOP/s of one thread; runs_gflops (NULL:
 * not kept) gets each run's rate, n_runs of them; `*isa` names the
 * instruction set used ("avx512f", "avx2+fma" or "scalar"). */
double zb_cpu_peak_gflops_per_core(double seconds, int n_runs, double *runs_gflops, const char **isa);

/* The instruction set zb_cpu_peak_gflops_per_core would use here, without
 * timing anything (a cached peak is valid only for the same one). */
const char *zb_cpu_peak_isa(void);

#ifdef __cplusplus
}
#endif
#endif
