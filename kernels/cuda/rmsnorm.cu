/* RMSNorm on CUDA, forward and backward (LLaMA: no mean, no bias).
 * Shapes: x, out, dout, dx [N, C] (N = B*T rows); weight, dweight [C];
 * inv_rms [N]. Per-element math from math_rmsnorm.h (shared with the CPU
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
static __global__ void rmsnorm_fwd_kernel(float *out, float *inv_rms, const float *x,
                                          const float *weight, int C, float eps) {
    __shared__ float red[ZB_CUDA_ROW_THREADS];
    size_t row = (size_t)blockIdx.x * (size_t)C;
    const float *xr = x + row;
    float *yr = out + row;
    float ss = 0.0f;
    for (int c = (int)threadIdx.x; c < C; c += (int)blockDim.x) ss += xr[c] * xr[c];
    ss = zb_block_sum(ss, red);
    float r = zb_rmsnorm_inv_rms(ss / (float)C, eps);
    if (threadIdx.x == 0) inv_rms[blockIdx.x] = r;
    for (int c = (int)threadIdx.x; c < C; c += (int)blockDim.x) {
        yr[c] = zb_rmsnorm_scale(xr[c], r, weight[c]);
    }
}

/* One block per row: dx = r (w dy - xhat mean_k(dy_k w_k xhat_k)).
 * dx may equal dout (same argument as the forward). */
static __global__ void rmsnorm_bwd_dx_kernel(float *dx, const float *dout, const float *x,
                                             const float *weight, const float *inv_rms, int C) {
    __shared__ float red[ZB_CUDA_ROW_THREADS];
    size_t row = (size_t)blockIdx.x * (size_t)C;
    const float *xr = x + row, *dyr = dout + row;
    float *dxr = dx + row;
    float r = inv_rms[blockIdx.x];
    float dot = 0.0f;
    for (int c = (int)threadIdx.x; c < C; c += (int)blockDim.x) {
        dot += dyr[c] * weight[c] * xr[c] * r;
    }
    dot = zb_block_sum(dot, red);
    float mean_dot = dot / (float)C;
    for (int c = (int)threadIdx.x; c < C; c += (int)blockDim.x) {
        dxr[c] = zb_rmsnorm_dx(xr[c], dyr[c], weight[c], r, mean_dot);
    }
}

/* dweight [C] += sum over rows of dy x r. Thread = column c, blockIdx.y =
 * a chunk of RMS_DW_ROWS rows summed in row order, then one atomicAdd. */
static __global__ void rmsnorm_bwd_dw_kernel(float *dweight, const float *dout, const float *x,
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
            acc += zb_rmsnorm_dw(x[off], dout[off], inv_rms[i]);
        }
        atomicAdd(&dweight[c], acc);
    }
}

cudaError_t zb_cuda_rmsnorm_fwd(cudaStream_t stream, float *out, float *inv_rms, const float *x,
                                const float *weight, int N, int C, float eps) {
    if (N < 0 || C <= 0) return cudaErrorInvalidValue;
    if (N == 0) return cudaSuccess;
    rmsnorm_fwd_kernel<<<(unsigned)N, ZB_CUDA_ROW_THREADS, 0, stream>>>(out, inv_rms, x, weight,
                                                                         C, eps);
    return cudaGetLastError();
}

cudaError_t zb_cuda_rmsnorm_bwd(cudaStream_t stream, float *dx, float *dweight,
                                const float *dout, const float *x, const float *weight,
                                const float *inv_rms, int N, int C) {
    if (N < 0 || C <= 0) return cudaErrorInvalidValue;
    if (N == 0) return cudaSuccess;
    /* dweight first: it reads dout, which dx may overwrite. */
    int n_chunks = (N + RMS_DW_ROWS - 1) / RMS_DW_ROWS;
    dim3 grid((unsigned)((C + ZB_CUDA_THREADS - 1) / ZB_CUDA_THREADS),
              (unsigned)(n_chunks < 65535 ? n_chunks : 65535));
    rmsnorm_bwd_dw_kernel<<<grid, ZB_CUDA_THREADS, 0, stream>>>(dweight, dout, x, inv_rms, N, C);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
    rmsnorm_bwd_dx_kernel<<<(unsigned)N, ZB_CUDA_ROW_THREADS, 0, stream>>>(dx, dout, x, weight,
                                                                            inv_rms, C);
    return cudaGetLastError();
}
