/* Helpers shared by the CUDA kernel files (the .cu files of kernels/cuda/ only; CUDA C++).
 *
 * - Elementwise kernels use one thread per element in a grid-stride loop:
 *   ZB_CUDA_THREADS threads per block, zb_cuda_blocks(n) blocks.
 * - Row kernels use one block of ZB_CUDA_ROW_THREADS (a power of two) per
 *   row and the shared-memory tree reductions below, in fp32. The tree is
 *   fixed by blockDim, so a reduction is deterministic run to run.
 * - Every launcher checks its launch with cudaGetLastError (docs/design.md §8).
 * - Storage (harness/device/kernels.h, "Storage dtype"): a kernel that reads or
 *   writes activations or weights is a template over their storage type S,
 *   float or zb_bf16, and touches them only through zb_ld / zb_st: zb_ld
 *   widens to fp32 (exact), zb_st rounds once to nearest even (bf16.h, the
 *   code the CPU uses, so both round bit for bit). All math is fp32; with
 *   S = float zb_ld / zb_st are plain loads and stores, so the fp32 kernels
 *   compute exactly what they did before the template. ZB_CUDA_DISPATCH
 *   picks the instantiation from a zb_dtype. */
#ifndef ZB_CUDA_COMMON_CUH
#define ZB_CUDA_COMMON_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "zb_cuda_kernels.h"

#define ZB_CUDA_THREADS 256
#define ZB_CUDA_ROW_THREADS 256
#define ZB_CUDA_WARP 32
/* Dynamic shared memory a kernel gets without opting in. */
#define ZB_CUDA_SMEM_DEFAULT_BYTES (48u * 1024u)

/* Element i of activation/weight storage, widened to fp32 (exact). */
static __device__ inline float zb_ld(const float *p, size_t i) { return p[i]; }
static __device__ inline float zb_ld(const zb_bf16 *p, size_t i) { return zb_bf16_to_f32(p[i]); }

/* Stores v as element i: fp32 as is, bf16 rounded to nearest even. */
static __device__ inline void zb_st(float *p, size_t i, float v) { p[i] = v; }
static __device__ inline void zb_st(zb_bf16 *p, size_t i, float v) { p[i] = zb_f32_to_bf16(v); }

/* fn<float>(...) for ZB_DTYPE_F32, fn<zb_bf16>(...) for ZB_DTYPE_BF16,
 * cudaErrorInvalidValue (nothing queued) for any other value. fn is a
 * typed launch template taking the launcher's (void) pointers. */
#define ZB_CUDA_DISPATCH(dtype, fn, ...)                                                      \
    ((dtype) == ZB_DTYPE_F32    ? fn<float>(__VA_ARGS__)                                      \
     : (dtype) == ZB_DTYPE_BF16 ? fn<zb_bf16>(__VA_ARGS__)                                    \
                                : cudaErrorInvalidValue)

/* Blocks for an n-element grid-stride loop (n > 0). Capped: the loop
 * covers the rest, so any size_t n is handled. */
static inline unsigned zb_cuda_blocks(size_t n) {
    size_t b = (n + (size_t)ZB_CUDA_THREADS - 1) / (size_t)ZB_CUDA_THREADS;
    const size_t cap = (size_t)1 << 20;
    return (unsigned)(b < cap ? b : cap);
}

/* Raises a kernel's dynamic shared memory limit when `bytes` exceeds the
 * default 48 KiB (attention rows of long sequences); the launch itself
 * fails if the device cannot give that much. */
static inline cudaError_t zb_cuda_smem_opt_in(const void *kernel, size_t bytes) {
    if (bytes <= ZB_CUDA_SMEM_DEFAULT_BYTES) return cudaSuccess;
    if (bytes > (size_t)0x7fffffff) return cudaErrorInvalidValue;
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
}

/* First index and stride of a grid-stride loop. */
static __device__ inline size_t zb_gs_first(void) {
    return (size_t)blockIdx.x * (size_t)blockDim.x + (size_t)threadIdx.x;
}
static __device__ inline size_t zb_gs_stride(void) {
    return (size_t)gridDim.x * (size_t)blockDim.x;
}

/* Reports a bad id through the optional error word (zb_cuda_kernels.h). */
static __device__ inline void zb_report_bad_id(int32_t *err_word, int32_t id) {
    if (!err_word) return;
    volatile int32_t *w = err_word;
    w[1] = id;
    w[0] = (int32_t)ZB_ERR_INVALID;
}

/* Sum over the 32 lanes of a warp; every lane gets the result. All lanes
 * of the warp must call it (warp-uniform control flow). */
static __device__ inline float zb_warp_sum(float v) {
    for (int o = ZB_CUDA_WARP / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* Sum of v over the block; every thread gets the result. red has
 * blockDim.x floats (blockDim.x a power of two); every thread must call it.
 * Ends with a barrier, so red can be reused at once. */
static __device__ inline float zb_block_sum(float v, float *red) {
    unsigned tid = threadIdx.x;
    red[tid] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2u; s > 0u; s >>= 1) {
        if (tid < s) red[tid] += red[tid + s];
        __syncthreads();
    }
    float r = red[0];
    __syncthreads();
    return r;
}

/* Maximum of v over the block (NaN ignored, as fmaxf does); as above. */
static __device__ inline float zb_block_max(float v, float *red) {
    unsigned tid = threadIdx.x;
    red[tid] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2u; s > 0u; s >>= 1) {
        if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
        __syncthreads();
    }
    float r = red[0];
    __syncthreads();
    return r;
}

#endif
