/* The CUDA device's stream-ordered work: copies and GEMM dispatch (device.h's
 * memcpy_async, gemm). The device itself, streams and events:
 * device_cuda.c; host ops (launch_host) and pinned host memory:
 * device_cuda_host.c.
 *
 * Each op is announced between zb_cuda_op_begin/end (CUPTI correlation). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "device_cuda_internal.h"

static int rank_of(zb_device *d) { return d->cfg.rank; }

/* ---- copies and GEMM -------------------------------------------------------- */

/* Pageable (unregistered) host memory, or a pointer CUDA cannot classify. */
static bool is_pageable(const void *p) {
    struct cudaPointerAttributes attr;
    cudaError_t e = cudaPointerGetAttributes(&attr, p);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return true;
    }
    return attr.type == cudaMemoryTypeUnregistered;
}

/* cudaMemcpyDefault. A copy to or from pageable host memory would make the
 * CUDA runtime wait for the stream inside the call, with no timeout; so this
 * drains the stream first (polled, timed out), and the copy then runs at
 * once. Copies between device or pinned buffers are fully asynchronous. */
zb_status zb_cuda_memcpy_async(zb_stream *zs, void *dst, const void *src, size_t n_bytes,
                               const zb_op_info *info) {
    cuda_stream *s = (cuda_stream *)zs;
    int rank = rank_of(zs->dev);
    if (n_bytes == 0 || dst == src) return ZB_OK;
    if (!dst || !src) {
        return ZB_FAIL(ZB_ERR_INVALID, "rank %d: copy of %zu bytes with a NULL pointer on '%s'", rank,
                       n_bytes, zs->name);
    }
    const char *d8 = (const char *)dst, *s8 = (const char *)src;
    if (d8 < s8 + n_bytes && s8 < d8 + n_bytes) {
        return ZB_FAIL(ZB_ERR_UNSUPPORTED, "rank %d: overlapping copy of %zu bytes (%p -> %p) on "
                       "'%s': the cuda device copies only disjoint ranges", rank, n_bytes, src,
                       dst, zs->name);
    }
    if (is_pageable(dst) || is_pageable(src)) {
        ZB_TRY(zb_cuda_stream_drain(s, "to reach a copy to or from pageable host memory"));
    }
    zb_op_info r = zb_cuda_resolve_info(info, ZB_OP_COPY, "memcpy");
    r.kind = ZB_OP_COPY;
    r.bytes = n_bytes;
    zb_cuda_op_begin(zs, &r);
    cudaError_t e = cudaMemcpyAsync(dst, src, n_bytes, cudaMemcpyDefault, s->stream);
    zb_cuda_op_end(zs);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return ZB_FAIL(zb_cuda_status_of(e), "rank %d: cudaMemcpyAsync of %zu bytes (%p -> %p) on "
                       "stream '%s' failed: %s (%s)", rank, n_bytes, src, dst, zs->name,
                       cudaGetErrorString(e), cudaGetErrorName(e));
    }
    return ZB_OK;
}

zb_status zb_cuda_gemm(zb_stream *zs, const zb_gemm_desc *g, const zb_op_info *info) {
    cuda_stream *s = (cuda_stream *)zs;
    cuda_device *d = cuda_dev(zs->dev);
    if (!s->gemm_ws) { /* one workspace per stream: GEMMs on two streams may overlap */
        ZB_TRY(zb_cuda_alloc(zs->dev, ZB_CUBLASLT_WORKSPACE_BYTES, ZB_MEM_WORKSPACE, &s->gemm_ws));
        s->gemm_ws_bytes = ZB_CUBLASLT_WORKSPACE_BYTES;
    }
    zb_op_info r = zb_cuda_resolve_info(info, ZB_OP_COMPUTE, "gemm");
    if (!info) r.flops = 2.0 * (double)g->m * (double)g->n * (double)g->k;
    zb_cuda_op_begin(zs, &r);
    zb_status st = zb_cublaslt_gemm(d->lt, rank_of(zs->dev), s->stream, s->gemm_ws,
                                    s->gemm_ws_bytes, g);
    zb_cuda_op_end(zs);
    return st;
}
