/* RMSNorm on CUDA, forward and backward (LLaMA: no mean, no bias).
 * Shapes: x, out, dout, dx [N, C] (N = B*T rows); weight, dweight [C];
 * inv_rms [N]. x, out, dout, dx and weight are stored as S (float or
 * zb_bf16, widened on load, rounded on store); inv_rms and dweight are
 * fp32. Per-element math from math_rmsnorm.h (shared with the CPU
 * kernels); the row reductions are fp32 tree sums in shared memory, one
 * block of ZB_CUDA_ROW_THREADS per row. dweight sums rows in chunks of
 * RMS_DW_ROWS (sequential per column) and adds each chunk with atomicAdd,
 * so its order differs from the CPU's row-by-row sum. */
#include "math_rmsnorm.h"
#include "zb_cuda_common.cuh"

#define RMS_DW_ROWS 32

/* One block per row i: inv_rms[i] = 1/sqrt(mean(x^2) + eps), out = x r w.
 * out may equal x: every x of the row is read before the reduction's
 * barriers, and each thread writes only elements it read itself. */
template <typename S>
static __global__ void rmsnorm_fwd_kernel(S *out, float *inv_rms, const S *x, const S *weight,
                                          int C, float eps) {
    __shared__ float red[ZB_CUDA_ROW_THREADS];
    size_t row = (size_t)blockIdx.x * (size_t)C;
    const S *xr = x + row;
    S *yr = out + row;
    float ss = 0.0f;
    for (int c = (int)threadIdx.x; c < C; c += (int)blockDim.x) {
        float xv = zb_ld(xr, (size_t)c);
        ss += xv * xv;
    }
    ss = zb_block_sum(ss, red);
    float r = zb_rmsnorm_inv_rms(ss / (float)C, eps);
    if (threadIdx.x == 0) inv_rms[blockIdx.x] = r;
    for (int c = (int)threadIdx.x; c < C; c += (int)blockDim.x) {
        zb_st(yr, (size_t)c, zb_rmsnorm_scale(zb_ld(xr, (size_t)c), r, zb_ld(weight, (size_t)c)));
    }
}

/* One block per row: dx = r (w dy - xhat mean_k(dy_k w_k xhat_k)).
 * dx may equal dout (same argument as the forward). */
template <typename S>
static __global__ void rmsnorm_bwd_dx_kernel(S *dx, const S *dout, const S *x, const S *weight,
                                             const float *inv_rms, int C) {
    __shared__ float red[ZB_CUDA_ROW_THREADS];
    size_t row = (size_t)blockIdx.x * (size_t)C;
    const S *xr = x + row, *dyr = dout + row;
    S *dxr = dx + row;
    float r = inv_rms[blockIdx.x];
    float dot = 0.0f;
    for (int c = (int)threadIdx.x; c < C; c += (int)blockDim.x) {
        size_t cc = (size_t)c;
        dot += zb_ld(dyr, cc) * zb_ld(weight, cc) * zb_ld(xr, cc) * r;
    }
    dot = zb_block_sum(dot, red);
    float mean_dot = dot / (float)C;
    for (int c = (int)threadIdx.x; c < C; c += (int)blockDim.x) {
        size_t cc = (size_t)c;
        zb_st(dxr, cc,
              zb_rmsnorm_dx(zb_ld(xr, cc), zb_ld(dyr, cc), zb_ld(weight, cc), r, mean_dot));
    }
}

/* dweight [C] += sum over rows of dy x r. Thread = column c, blockIdx.y =
 * a chunk of RMS_DW_ROWS rows summed in row order, then one atomicAdd. */
template <typename S>
static __global__ void rmsnorm_bwd_dw_kernel(float *dweight, const S *dout, const S *x,
                                             const float *inv_rms, int N, int C) {
    int c = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (c >= C) return;
    int n_chunks = (N + RMS_DW_ROWS - 1) / RMS_DW_ROWS;
    for (int chunk = (int)blockIdx.y; chunk < n_chunks; chunk += (int)gridDim.y) {
        int i0 = chunk * RMS_DW_ROWS;
        int i1 = N - i0 < RMS_DW_ROWS ? N : i0 + RMS_DW_ROWS;
        float acc = 0.0f;
        for (int i = i0; i < i1; i++) {
            size_t off = (size_t)i * (size_t)C + (size_t)c;
            acc += zb_rmsnorm_dw(zb_ld(x, off), zb_ld(dout, off), inv_rms[i]);
        }
        atomicAdd(&dweight[c], acc);
    }
}

template <typename S>
static cudaError_t rmsnorm_fwd(cudaStream_t stream, void *out, float *inv_rms, const void *x,
                               const void *weight, int N, int C, float eps) {
    if (N < 0 || C <= 0) return cudaErrorInvalidValue;
    if (N == 0) return cudaSuccess;
    rmsnorm_fwd_kernel<S><<<(unsigned)N, ZB_CUDA_ROW_THREADS, 0, stream>>>(
        (S *)out, inv_rms, (const S *)x, (const S *)weight, C, eps);
    return cudaGetLastError();
}

template <typename S>
static cudaError_t rmsnorm_bwd(cudaStream_t stream, void *dx, float *dweight, const void *dout,
                               const void *x, const void *weight, const float *inv_rms, int N,
                               int C) {
    if (N < 0 || C <= 0) return cudaErrorInvalidValue;
    if (N == 0) return cudaSuccess;
    /* dweight first: it reads dout, which dx may overwrite. */
    int n_chunks = (N + RMS_DW_ROWS - 1) / RMS_DW_ROWS;
    dim3 grid((unsigned)((C + ZB_CUDA_THREADS - 1) / ZB_CUDA_THREADS),
              (unsigned)(n_chunks < 65535 ? n_chunks : 65535));
    rmsnorm_bwd_dw_kernel<S><<<grid, ZB_CUDA_THREADS, 0, stream>>>(
        dweight, (const S *)dout, (const S *)x, inv_rms, N, C);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    rmsnorm_bwd_dx_kernel<S><<<(unsigned)N, ZB_CUDA_ROW_THREADS, 0, stream>>>(
        (S *)dx, (const S *)dout, (const S *)x, (const S *)weight, inv_rms, C);
    return cudaGetLastError();
}

cudaError_t zb_cuda_rmsnorm_fwd(cudaStream_t stream, zb_dtype dtype, void *out, float *inv_rms,
                                const void *x, const void *weight, int N, int C, float eps) {
    return ZB_CUDA_DISPATCH(dtype, rmsnorm_fwd, stream, out, inv_rms, x, weight, N, C, eps);
}

cudaError_t zb_cuda_rmsnorm_bwd(cudaStream_t stream, zb_dtype dtype, void *dx, float *dweight,
                                const void *dout, const void *x, const void *weight,
                                const float *inv_rms, int N, int C) {
    return ZB_CUDA_DISPATCH(dtype, rmsnorm_bwd, stream, dx, dweight, dout, x, weight, inv_rms, N,
                            C);
}
