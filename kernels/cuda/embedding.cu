/* Token embedding on CUDA, forward (gather rows) and backward (atomic
 * scatter-add). Shapes: tokens [N] (N = B*T), table and dtable [V, C],
 * out and dout [N, C]. One thread per element of out / dout. table, out
 * and dout are stored as S (float or zb_bf16: a bf16 row is widened and
 * rounded again, which gives back every value but a signaling NaN, as on
 * the CPU); dtable is fp32 and the widened dout is added to it.
 * A token outside [0, V) gives a zero row (forward) or is skipped
 * (backward), as the CPU kernel does, and is reported through err_word
 * (when not NULL) by the thread of the row's first element. */
#include "zb_cuda_common.cuh"

/* out [N, C] = table [tokens[i], :] */
template <typename S>
static __global__ void embedding_fwd_kernel(S *out, const int32_t *tokens, const S *table, int N,
                                            int C, int V, int32_t *err_word) {
    size_t n = (size_t)N * (size_t)C;
    for (size_t idx = zb_gs_first(); idx < n; idx += zb_gs_stride()) {
        size_t i = idx / (size_t)C, c = idx % (size_t)C;
        int32_t tok = tokens[i];
        bool ok = tok >= 0 && tok < V;
        zb_st(out, idx, ok ? zb_ld(table, (size_t)tok * (size_t)C + c) : 0.0f);
        if (!ok && c == 0) zb_report_bad_id(err_word, tok);
    }
}

/* dtable [tokens[i], :] += dout [i, :] for every i (atomicAdd: tokens repeat). */
template <typename S>
static __global__ void embedding_bwd_kernel(float *dtable, const int32_t *tokens, const S *dout,
                                            int N, int C, int V, int32_t *err_word) {
    size_t n = (size_t)N * (size_t)C;
    for (size_t idx = zb_gs_first(); idx < n; idx += zb_gs_stride()) {
        size_t i = idx / (size_t)C, c = idx % (size_t)C;
        int32_t tok = tokens[i];
        if (tok < 0 || tok >= V) {
            if (c == 0) zb_report_bad_id(err_word, tok);
            continue;
        }
        atomicAdd(&dtable[(size_t)tok * (size_t)C + c], zb_ld(dout, idx));
    }
}

template <typename S>
static cudaError_t embedding_fwd(cudaStream_t stream, void *out, const int32_t *tokens,
                                 const void *table, int N, int C, int V, int32_t *err_word) {
    if (N < 0 || C < 0 || V < 0) return cudaErrorInvalidValue;
    size_t n = (size_t)N * (size_t)C;
    if (n == 0) return cudaSuccess;
    embedding_fwd_kernel<S><<<zb_cuda_blocks(n), ZB_CUDA_THREADS, 0, stream>>>(
        (S *)out, tokens, (const S *)table, N, C, V, err_word);
    return cudaGetLastError();
}

template <typename S>
static cudaError_t embedding_bwd(cudaStream_t stream, float *dtable, const int32_t *tokens,
                                 const void *dout, int N, int C, int V, int32_t *err_word) {
    if (N < 0 || C < 0 || V < 0) return cudaErrorInvalidValue;
    size_t n = (size_t)N * (size_t)C;
    if (n == 0) return cudaSuccess;
    embedding_bwd_kernel<S><<<zb_cuda_blocks(n), ZB_CUDA_THREADS, 0, stream>>>(
        dtable, tokens, (const S *)dout, N, C, V, err_word);
    return cudaGetLastError();
}

cudaError_t zb_cuda_embedding_fwd(cudaStream_t stream, zb_dtype dtype, void *out,
                                  const int32_t *tokens, const void *table, int N, int C, int V,
                                  int32_t *err_word) {
    return ZB_CUDA_DISPATCH(dtype, embedding_fwd, stream, out, tokens, table, N, C, V, err_word);
}

cudaError_t zb_cuda_embedding_bwd(cudaStream_t stream, zb_dtype dtype, float *dtable,
                                  const int32_t *tokens, const void *dout, int N, int C, int V,
                                  int32_t *err_word) {
    return ZB_CUDA_DISPATCH(dtype, embedding_bwd, stream, dtable, tokens, dout, N, C, V,
                            err_word);
}
