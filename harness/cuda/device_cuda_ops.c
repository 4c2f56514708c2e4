/* The CUDA device's stream-ordered work: copies, GEMM dispatch and host ops
 * (device.h's memcpy_async, gemm, launch_host). The device itself, streams
 * and events: device_cuda.c; why launch_host uses cudaLaunchHostFunc and
 * what fn may do: there.
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

/* ---- host ops --------------------------------------------------------------- */

typedef struct cuda_host_op {
    cuda_stream *s;
    zb_host_fn fn;
    void *arg;
    zb_host_cleanup cleanup;
    zb_op_info info;
    char label[ZB_LABEL_MAX];
    uint64_t seq;
} cuda_host_op;

/* Runs on a CUDA driver thread: no CUDA calls here. */
static void CUDART_CB host_op_run(void *p) {
    cuda_host_op *op = (cuda_host_op *)p;
    cuda_stream *s = op->s;
    pthread_mutex_lock(&s->lock);
    bool failed = s->error != ZB_OK;
    pthread_mutex_unlock(&s->lock);
    if (!failed) {
        int64_t t0 = zb_now_ns();
        zb_status st = op->fn(op->arg);
        int64_t t1 = zb_now_ns();
        zb_trace_add(s->base.dev->cfg.trace, s->base.id, &op->info, op->seq, t0, t1);
        if (st != ZB_OK) zb_cuda_stream_set_error(s, st, zb_error_message());
    }
    if (op->cleanup) op->cleanup(op->arg);
    free(op);
}

zb_status zb_cuda_launch_host(zb_stream *zs, zb_host_fn fn, void *arg, zb_host_cleanup cleanup,
                              const zb_op_info *info) {
    cuda_stream *s = (cuda_stream *)zs;
    cuda_host_op *op = (cuda_host_op *)calloc(1, sizeof *op);
    if (!op) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory queueing a host op on '%s'", zs->name);
    op->s = s;
    op->fn = fn;
    op->arg = arg;
    op->cleanup = cleanup;
    op->info = zb_cuda_resolve_info(info, ZB_OP_COMPUTE, "host");
    snprintf(op->label, sizeof op->label, "%s", op->info.label);
    op->info.label = op->label;
    op->seq = (uint64_t)atomic_fetch_add(&cuda_dev(zs->dev)->n_issued, 1);
    zb_status st = ZB_CUDA_CHECK(rank_of(zs->dev), cudaLaunchHostFunc(s->stream, host_op_run, op));
    if (st != ZB_OK) free(op); /* not queued: the issuer still owns arg */
    return st;
}
