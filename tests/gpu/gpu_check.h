/* Helpers of the GPU kernel checks (tests/gpu/test_*.c): device buffers
 * that are freed together, NaN-filled outputs, launch-and-synchronize with
 * the error named, and the comparison that prints one line per check.
 *
 * Comparison: err_i = |gpu_i - cpu_i| / mag_i, where mag_i is the magnitude
 * the caller states for element i (the size of the terms that produced it;
 * |cpu_i| when NULL), and a check passes when max_i err_i <= bound and no
 * output element is NaN. Outputs that a kernel writes are filled with NaN
 * bytes (0xff) before the launch, so an element the kernel never wrote
 * fails the check. */
#ifndef ZB_GPU_CHECK_H
#define ZB_GPU_CHECK_H

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zb_test.h"

#define GC_MAX_BUFFERS 64

static void *gc_buffers[GC_MAX_BUFFERS];
static int gc_n_buffers;

/* A CUDA runtime call outside a checked launch: on failure the program
 * cannot go on (the device is gone or broken), so it ends with exit 1. */
#define GC_CUDA(call)                                                          \
    do {                                                                       \
        cudaError_t gc_e_ = (call);                                            \
        if (gc_e_ != cudaSuccess) {                                            \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,      \
                    cudaGetErrorString(gc_e_));                                \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static inline void *gc_alloc(size_t bytes) {
    if (gc_n_buffers == GC_MAX_BUFFERS) {
        fprintf(stderr, "gpu_check: more than %d device buffers\n", GC_MAX_BUFFERS);
        exit(1);
    }
    void *p = NULL;
    GC_CUDA(cudaMalloc(&p, bytes ? bytes : 1));
    gc_buffers[gc_n_buffers++] = p;
    return p;
}

/* A device copy of host memory. */
static inline void *gc_upload(const void *host, size_t bytes) {
    void *p = gc_alloc(bytes);
    GC_CUDA(cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice));
    return p;
}

/* A device buffer of NaN (every byte 0xff: a NaN in fp32 and in bf16). */
static inline void *gc_nan(size_t bytes) {
    void *p = gc_alloc(bytes);
    GC_CUDA(cudaMemset(p, 0xff, bytes ? bytes : 1));
    return p;
}

static inline void gc_download(void *host, const void *dev, size_t bytes) {
    GC_CUDA(cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost));
}

static inline void gc_free_all(void) {
    for (int i = 0; i < gc_n_buffers; i++) cudaFree(gc_buffers[i]);
    gc_n_buffers = 0;
}

/* Checks a launcher's result and waits for the kernels; false (a failure
 * recorded and printed) when either failed. */
static inline int gc_ran(const char *op, cudaError_t launch, cudaStream_t s) {
    zb_test_checks++;
    cudaError_t e = launch != cudaSuccess ? launch : cudaStreamSynchronize(s);
    if (e == cudaSuccess) return 1;
    char msg[256];
    snprintf(msg, sizeof msg, "%s: %s while %s", op, cudaGetErrorString(e),
             launch != cudaSuccess ? "launching" : "running");
    zb_test_fail(__FILE__, __LINE__, msg);
    printf("%-30s launch/run FAILED: %s\n", op, cudaGetErrorString(e));
    return 0;
}

/* Worst err_i (see the top comment) and the count of NaN outputs. */
static inline double gc_worst(const float *got, const float *want, const double *mag, size_t n,
                              size_t *n_nan, size_t *where) {
    double worst = 0.0;
    *n_nan = 0;
    *where = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(got[i])) {
            if ((*n_nan)++ == 0) *where = i; /* the first NaN wins */
            continue;
        }
        double m = mag ? mag[i] : fabs((double)want[i]);
        if (!(m >= 1e-30)) m = 1e-30;
        double e = fabs((double)got[i] - (double)want[i]) / m;
        if (!(e <= worst)) {
            worst = isnan(e) ? INFINITY : e;
            if (*n_nan == 0) *where = i;
        }
    }
    return worst;
}

/* Prints "name  max rel err  bound  pass/FAIL" and records the result. */
static inline int gc_check(const char *name, const float *got, const float *want,
                           const double *mag, size_t n, double bound) {
    size_t n_nan = 0, at = 0;
    double worst = gc_worst(got, want, mag, n, &n_nan, &at);
    int pass = n_nan == 0 && worst <= bound;
    printf("%-30s max_rel_err %10.3e  bound %.0e  %s", name, worst, bound, pass ? "pass" : "FAIL");
    if (n_nan) printf("  (%zu of %zu elements unwritten/NaN)", n_nan, n);
    if (!pass && n) printf("  at %zu: gpu %.9g cpu %.9g", at, (double)got[at], (double)want[at]);
    printf("\n");
    zb_test_checks++;
    if (!pass) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s: max rel err %.3e > %.0e or NaN left", name, worst, bound);
        zb_test_fail(__FILE__, __LINE__, msg);
    }
    return pass;
}

/* The comparison can fail: one element off by 10x the bound, or one NaN,
 * is rejected. Run once before the real checks. */
static inline void gc_self_test(void) {
    float want[4] = {1.0f, -2.0f, 0.5f, 3.0f}, got[4];
    size_t n_nan, at;
    memcpy(got, want, sizeof got);
    ZB_CHECK(gc_worst(got, want, NULL, 4, &n_nan, &at) == 0.0 && n_nan == 0);
    got[2] = 0.5f * (1.0f + 1e-4f);
    ZB_CHECK(gc_worst(got, want, NULL, 4, &n_nan, &at) > 1e-5 && at == 2);
    got[2] = NAN;
    (void)gc_worst(got, want, NULL, 4, &n_nan, &at);
    ZB_CHECK(n_nan == 1);
}

#endif
