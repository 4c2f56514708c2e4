/* The CUDA device's structs, shared by its files:
 *   device_cuda.c      create/destroy, streams, events, op hooks
 *   device_cuda_ops.c  copies, GEMM dispatch
 *   device_cuda_host.c host ops (launch_host, one proxy thread per stream),
 *                      pinned host memory (alloc_host/free_host)
 *   device_cuda_mem.c  the memory pool, per-tag accounting, meminfo
 *   gemm_cublaslt.c    cuBLASLt GEMM and its algorithm cache
 * Host-side waits never block in the CUDA runtime: they poll an event with a
 * short back-off until cfg.timeout_s (zb_cuda_wait_event). */
#ifndef ZB_DEVICE_CUDA_INTERNAL_H
#define ZB_DEVICE_CUDA_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <cuda_runtime_api.h>
#include <library_types.h>

#include "cuda_backend.h"
#include "device.h"
#include "mem_account.h"

typedef struct zb_cublaslt zb_cublaslt;
typedef struct cuda_host_proxy cuda_host_proxy; /* device_cuda_host.c */

typedef struct cuda_stream {
    zb_stream base;
    cudaStream_t stream;
    cudaEvent_t sync_ev;  /* stream_sync's marker */
    cudaEvent_t fence_ev; /* orders frees after this stream's issued work */
    void *gemm_ws;        /* cuBLASLt workspace, allocated at the first GEMM */
    size_t gemm_ws_bytes;
    volatile int32_t *err_word; /* mapped pinned: kernels report data errors */
    int32_t *err_word_dev;
    cuda_host_proxy *proxy; /* runs host ops; made at the first (guarded by lock) */
    pthread_mutex_t lock;   /* guards the sticky error and `proxy` */
    zb_status error;
    char error_msg[ZB_ERROR_MAX];
    struct cuda_stream *next; /* the device's list of live streams */
} cuda_stream;

typedef struct cuda_event {
    zb_event base;
    cudaEvent_t ev;
    bool recorded;
} cuda_event;

typedef struct cuda_device {
    zb_device base;
    int ordinal;
    pthread_mutex_t lock; /* streams list, frees, meminfo sampling */
    cuda_stream *streams;
    int n_streams;
    atomic_uint_fast64_t n_issued; /* op seq numbers, in issue order */
    /* the callback fallback of host ops (device_cuda_host.c): set once any
     * stream waits in a CUDA host function; how many such waits are queued */
    atomic_bool host_wait_callback;
    atomic_int host_callbacks_pending;
    zb_cuda_op_hooks hooks;

    /* memory (device_cuda_mem.c) */
    cudaMemPool_t pool;
    bool pool_created;
    cudaStream_t alloc_stream; /* every cudaMallocFromPoolAsync / cudaFreeAsync */
    cudaEvent_t alloc_ev;
    zb_mem_account acct;
    bool acct_ready;
    size_t total_bytes;
    size_t used_at_create_bytes;
    size_t used_high_bytes;
    int n_free_failures;
    char first_free_failure[ZB_ERROR_MAX];

    zb_cublaslt *lt; /* gemm_cublaslt.c */
} cuda_device;

static inline cuda_device *cuda_dev(zb_device *d) { return (cuda_device *)d; }

/* ---- device_cuda.c ---- */
/* Polls `ev` until complete or cfg.timeout_s: ZB_OK, ZB_ERR_TIMEOUT (naming
 * the rank and `what`) or the CUDA error an earlier async op left. */
zb_status zb_cuda_wait_event(cuda_device *d, cudaEvent_t ev, const char *what);
/* Records the stream's marker and polls it (everything issued so far done);
 * `why` completes "stream 'NAME' ..." in a timeout message. */
zb_status zb_cuda_stream_drain(cuda_stream *s, const char *why);
/* Sets the stream's sticky error unless one is set. */
void zb_cuda_stream_set_error(cuda_stream *s, zb_status st, const char *msg);
/* info, or a default of this kind and label; the label is never NULL. */
zb_op_info zb_cuda_resolve_info(const zb_op_info *info, zb_op_kind kind, const char *label);

/* ---- device_cuda_ops.c ---- */
zb_status zb_cuda_memcpy_async(zb_stream *s, void *dst, const void *src, size_t n_bytes,
                               const zb_op_info *info);
zb_status zb_cuda_gemm(zb_stream *s, const zb_gemm_desc *g, const zb_op_info *info);

/* ---- device_cuda_host.c ---- */
zb_status zb_cuda_launch_host(zb_stream *s, zb_host_fn fn, void *arg, zb_host_cleanup cleanup,
                              const zb_op_info *info);
/* Ends the stream's host-op thread (after its queue); call once the stream
 * is drained, before freeing it. No-op when it never ran a host op. */
void zb_cuda_host_proxy_stop(cuda_stream *s);
bool zb_cuda_mem_is_host(const zb_device *dev);
zb_status zb_cuda_alloc_host(zb_device *dev, size_t n_bytes, zb_mem_tag tag, void **out);
void zb_cuda_free_host(zb_device *dev, void *ptr);

/* ---- device_cuda_mem.c ---- */
zb_status zb_cuda_mem_init(cuda_device *d);
void zb_cuda_mem_destroy(cuda_device *d);
zb_status zb_cuda_alloc(zb_device *dev, size_t n_bytes, zb_mem_tag tag, void **out);
void zb_cuda_free(zb_device *dev, void *ptr);
void zb_cuda_mem_stats(zb_device *dev, zb_mem_stats *out);
void zb_cuda_mem_reset_peak(zb_device *dev);

/* ---- gemm_cublaslt.c ---- */
#define ZB_CUBLASLT_WORKSPACE_BYTES ((size_t)32 << 20)
zb_status zb_cublaslt_create(int rank, zb_cublaslt **out);
void zb_cublaslt_destroy(zb_cublaslt *lt);
/* Enqueues g on `stream` with the given workspace (>= 32 MiB expected). */
zb_status zb_cublaslt_gemm(zb_cublaslt *lt, int rank, cudaStream_t stream, void *workspace,
                           size_t workspace_bytes, const zb_gemm_desc *g);
void zb_cublaslt_cache_stats(zb_cublaslt *lt, size_t *entries, uint64_t *hits, uint64_t *misses);

/* The cuBLASLt layout type of a (validated) zb_dtype, for the cached and
 * the direct GEMM alike: bf16 -> CUDA_R_16BF, fp32 -> CUDA_R_32F. */
static inline cudaDataType_t zb_lt_cuda_type(zb_dtype t) {
    return t == ZB_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

#endif
