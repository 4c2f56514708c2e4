/* Shared machinery of the CUDA kernel checks (test_cuda_kernels.c,
 * test_cuda_attention.c): each checks CUDA kernels of kernels/cuda/ against
 * their CPU reference kernels (kernels/cpu/) on fresh random inputs (the
 * seed is printed; pass it as the first argument to rerun the same inputs).
 * One line per check: name, max relative error, bound, pass/FAIL. Each
 * exits 77 (CTest: skipped) when no CUDA device is usable. Both also run on
 * the CPU emulator of tests/emu (test_*_emu, label unit).
 *
 * Header-only (static functions and state, one copy per test executable),
 * on top of gpu_check.h (device buffers, launch-and-synchronize, the
 * comparison). Here: the stream S and the rng, host buffers freed together
 * with the device buffers after each op (done), the storage dtype DT of the
 * current pass with its rounding, upload and check helpers, and the
 * kernels' error word.
 *
 * Storage: every op with activations or weights runs twice, with fp32
 * storage and with bf16 storage (the launchers' dtype). In the bf16 pass
 * the random inputs are rounded to bf16 first, so the CPU's fp32 reference
 * sees exactly the values the GPU widens; a bf16 output is compared with
 * the reference rounded to bf16 under the BF16 bound (fp32 outputs of the
 * pass, such as inv_rms, lse, loss, dweight and dtable, keep their fp32
 * bounds).
 *
 * err_i = |gpu_i - cpu_i| / mag_i (gpu_check.h), with mag_i the magnitude
 * of the terms that make element i (|cpu_i| where no cancellation can
 * occur). Bounds:
 *   EXACT   1e-5: the same fp32 operations in the same order (the CUDA
 *     kernels are built with --fmad=false and share the ZB_HD math), so
 *     only libm differs: CUDA's expf/sinf/cosf are within 2 ulp, powf 4 ulp
 *     (CUDA Programming Guide), glibc's within 1 ulp. RoPE's angle
 *     pos * inv_freq carries the powf difference times pos: with T = 12
 *     that is <= 11 * 6 ulp * 2^-23 = 8e-6 of the pair's norm.
 *   REORDER 1e-4: sums that the GPU adds in fp32 in another order than the
 *     CPU (which sums in double, or in fp32 row by row): two orders of a
 *     k-term fp32 sum differ by at most 2 k 2^-24 sum|terms| (Higham); the
 *     chains checked stay below 6e-5 of mag_i, except attention's long
 *     sequences, whose bound is derived from their length
 *     (test_cuda_attention.c, reorder_for).
 *   BF16    1e-2: bf16 outputs (8 significant bits). The rounding is the
 *     same bf16.h code on both sides, so a cast's error is 0; an op's two
 *     fp32 results, a few ulp apart, may round to neighbouring bf16 values,
 *     one bf16 ulp = at most 2^-7 = 7.8e-3 of the value.
 * Every output a kernel writes starts as NaN (0xff bytes), so an element
 * left unwritten fails; accumulated outputs start from random values.
 * Shapes: as kernels.h (N = B*T rows, q [B,T,H,D], k, v [B,T,KVH,D],
 * lse [B,H,T]); sizes are small, odd and not multiples of a block (the
 * attention check adds long sequences). */
#ifndef ZB_CUDA_KERNEL_CHECK_H
#define ZB_CUDA_KERNEL_CHECK_H

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "zb_cpu_kernels.h"
#include "zb_cuda_kernels.h"
#include "gpu_check.h"
#include "unit/kernel_test_util.h"

#define EXACT 1e-5
#define REORDER 1e-4
#define BF16 1e-2

static cudaStream_t S;
static uint64_t rng;

/* Host buffers, freed together after each op (done). */
#define CKC_MAX_HOST_BUFS 128
static void *host_bufs[CKC_MAX_HOST_BUFS];
static int n_host_bufs;

static inline void *h_alloc(size_t bytes) {
    if (n_host_bufs == CKC_MAX_HOST_BUFS) {
        fprintf(stderr, "cuda_kernel_check: more than %d host buffers in one op\n",
                CKC_MAX_HOST_BUFS);
        exit(1);
    }
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) exit(1);
    return host_bufs[n_host_bufs++] = p;
}
static inline float *h_f(size_t n) { return (float *)h_alloc(n * sizeof(float)); }
static inline double *h_d(size_t n) { return (double *)h_alloc(n * sizeof(double)); }
/* The storage dtype of the current pass (main runs the checks of ops with
 * activations and weights once per dtype: ckc_pass). */
static zb_dtype DT = ZB_DTYPE_F32;

/* Rounds p [n] to values DT stores exactly (bf16: nearest even; fp32:
 * unchanged), so the CPU reference and the GPU see the same inputs. */
static inline void h_round(float *p, size_t n) {
    if (DT != ZB_DTYPE_BF16) return;
    for (size_t i = 0; i < n; i++) p[i] = zb_bf16_to_f32(zb_f32_to_bf16(p[i]));
}
static inline float *h_rand(size_t n, float scale) {
    float *p = h_f(n);
    for (size_t i = 0; i < n; i++) p[i] = scale * kt_uniform(&rng);
    h_round(p, n);
    return p;
}
static inline float *h_copy(const float *src, size_t n) {
    float *p = h_f(n);
    memcpy(p, src, n * sizeof(float));
    return p;
}
static inline void done(void) {
    for (int i = 0; i < n_host_bufs; i++) free(host_bufs[i]);
    n_host_bufs = 0;
    gc_free_all();
}

#define FB(n) ((size_t)(n) * sizeof(float))
#define UP(p, n) ((float *)gc_upload((p), FB(n)))
#define NANS(n) ((float *)gc_nan(FB(n)))
/* Storage (DT) buffers: activations and weights. */
#define SB(n) ((size_t)(n) * zb_dtype_size(DT))
#define NANSS(n) gc_nan(SB(n))

/* A device copy of p [n] stored as DT (p holds DT-exact values). */
static inline void *UPS(const float *p, size_t n) {
    if (DT == ZB_DTYPE_F32) return gc_upload(p, FB(n));
    zb_bf16 *bits = (zb_bf16 *)h_alloc(n * sizeof(zb_bf16));
    for (size_t i = 0; i < n; i++) bits[i] = zb_f32_to_bf16(p[i]);
    return gc_upload(bits, n * sizeof(zb_bf16));
}

/* "name [bf16]" in the bf16 pass, name as is in the fp32 pass. */
static inline const char *tagged(const char *name) {
    static char buf[128];
    if (DT == ZB_DTYPE_F32) return name;
    snprintf(buf, sizeof buf, "%s [%s]", name, zb_dtype_name(DT));
    return buf;
}

/* A zeroed device error word (zb_cuda_kernels.h: {code, bad id}). */
static inline int32_t *err_word_new(void) {
    int32_t zero[2] = {0, 0};
    return (int32_t *)gc_upload(zero, sizeof zero);
}

/* Checks that a kernel reported a bad id through its error word as
 * {ZB_ERR_INVALID, one of the bad ids a, b} (or, with expect_bad 0, that
 * it left the word zero). */
static inline void check_err_word(const char *name, const int32_t *d_word, int expect_bad,
                                  int32_t a, int32_t b) {
    int32_t w[2];
    gc_download(w, d_word, sizeof w);
    int pass = expect_bad ? (w[0] == (int32_t)ZB_ERR_INVALID && (w[1] == a || w[1] == b))
                          : (w[0] == 0 && w[1] == 0);
    name = tagged(name);
    printf("%-30s error word {%d, %d}  want %s  %s\n", name, (int)w[0], (int)w[1],
           expect_bad ? "{ZB_ERR_INVALID, bad id}" : "{0, 0}", pass ? "pass" : "FAIL");
    ZB_CHECK_MSG(pass, "%s: error word {%d, %d}", name, (int)w[0], (int)w[1]);
}

/* Downloads n floats from d and checks them against want. */
static inline void check_dev(const char *name, const float *d, const float *want,
                             const double *mag, size_t n, double bound) {
    float *got = h_f(n);
    gc_download(got, d, FB(n));
    gc_check(tagged(name), got, want, mag, n, bound);
}

/* Downloads n elements stored as DT and checks them against the fp32
 * reference want: fp32 as check_dev; bf16 against want rounded to bf16,
 * within the BF16 bound (two fp32 results a few ulp apart may round one
 * bf16 ulp apart, at most 2^-7 of the value). */
static inline void check_dev_s(const char *name, const void *d, const float *want,
                               const double *mag, size_t n, double bound) {
    if (DT == ZB_DTYPE_F32) {
        check_dev(name, (const float *)d, want, mag, n, bound);
        return;
    }
    zb_bf16 *bits = (zb_bf16 *)h_alloc(n * sizeof(zb_bf16));
    float *got = h_f(n), *want_r = h_copy(want, n);
    gc_download(bits, d, n * sizeof(zb_bf16));
    for (size_t i = 0; i < n; i++) got[i] = zb_bf16_to_f32(bits[i]);
    h_round(want_r, n);
    gc_check(tagged(name), got, want_r, mag, n, bound > BF16 ? bound : BF16);
}

/* Sets the storage dtype of the checks that follow and says so. */
static inline void ckc_pass(zb_dtype dt) {
    DT = dt;
    printf("-- activations and weights stored as %s --\n", zb_dtype_name(DT));
}

/* The start of a test's main: 77 (skipped) when no CUDA device is usable;
 * otherwise seeds rng (argv[1], or time and pid), prints the device and
 * the seed, creates S and returns 0. */
static inline int ckc_begin(const char *prog, int argc, char **argv) {
    int n_dev = 0;
    cudaError_t e = cudaGetDeviceCount(&n_dev);
    if (e != cudaSuccess || n_dev == 0) {
        printf("%s: no usable CUDA device (%s): skipped\n", prog,
               e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 77;
    }
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0)
                             : ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
    rng = seed;
    struct cudaDeviceProp prop;
    GC_CUDA(cudaSetDevice(0));
    GC_CUDA(cudaGetDeviceProperties(&prop, 0));
    printf("%s: %s (sm_%d%d), seed %llu (rerun: %s %llu)\n", prog, prop.name, prop.major,
           prop.minor, (unsigned long long)seed, prog, (unsigned long long)seed);
    GC_CUDA(cudaStreamCreate(&S));
    return 0;
}

/* The end of a test's main: the summary line and the exit code. */
static inline int ckc_end(const char *prog) {
    GC_CUDA(cudaStreamDestroy(S));
    return zb_test_finish(prog);
}

#endif
