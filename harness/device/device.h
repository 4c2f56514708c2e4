/* The device interface: memory with tags, streams, events, copies, GEMM.
 *
 * Every backend (cpu, cuda, sim) fills a zb_device_ops table; the engine and
 * the benchmarks call only the zb_dev_* wrappers below and never know which
 * backend runs them. Semantics follow CUDA's:
 *   - ops issued to one stream run in issue order (FIFO);
 *   - ops on different streams may run concurrently;
 *   - zb_event_record captures the work issued to the stream so far; the
 *     event completes when that work has finished;
 *   - zb_stream_wait_event makes later work on a stream wait for the event's
 *     most recent record (a never-recorded event is already complete);
 *   - errors inside a stream are sticky and reported by the next
 *     synchronization on that stream.
 * Every executed op may produce one trace record (trace.h). */
#ifndef ZB_DEVICE_H
#define ZB_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "status.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a buffer holds; peak memory is reported per tag (docs/design.md, "Metrics").
 * Every tag but ZB_MEM_HOST_STAGING is device memory. */
typedef enum zb_mem_tag {
    ZB_MEM_PARAM_SHARD = 0,
    ZB_MEM_GRAD_SHARD,
    ZB_MEM_OPTIM_STATE,
    ZB_MEM_GATHERED_PARAM,
    ZB_MEM_GATHERED_GRAD,
    ZB_MEM_ACTIVATION,
    ZB_MEM_WORKSPACE,
    ZB_MEM_COMM_BUFFER,
    ZB_MEM_BENCH_BUFFER, /* microbenchmark send/recv buffers */
    ZB_MEM_HOST_STAGING, /* pinned host copies of device data (alloc_host): host memory */
    ZB_MEM_TAG_COUNT
} zb_mem_tag;

const char *zb_mem_tag_name(zb_mem_tag tag);

/* A trace memory sample (trace.h) holds every tag. */
typedef char zb_mem_tags_fit_trace[(int)ZB_MEM_TAG_COUNT <= ZB_TRACE_MEM_TAGS ? 1 : -1];

/* Host memory, kept per tag but out of the device's live and peak totals
 * (peak memory is device memory: docs/design.md §6). */
static inline bool zb_mem_tag_is_host(zb_mem_tag tag) { return tag == ZB_MEM_HOST_STAGING; }

/* Live bytes are what the harness asked for and has not freed; peak is the
 * high-water mark of live bytes (per tag, and of the total, which is not the
 * sum of the per-tag peaks). The totals count device memory only: a host tag
 * (zb_mem_tag_is_host) has its per-tag live and peak bytes and nothing else.
 * reserved is what the backend holds from the OS or driver (a caching pool
 * keeps freed blocks). */
typedef struct zb_mem_stats {
    size_t live_bytes[ZB_MEM_TAG_COUNT];
    size_t peak_bytes[ZB_MEM_TAG_COUNT];
    size_t live_total_bytes;
    size_t peak_total_bytes;
    size_t reserved_bytes;
    size_t peak_reserved_bytes;
} zb_mem_stats;

typedef struct zb_device zb_device;
typedef struct zb_stream zb_stream;
typedef struct zb_event zb_event;
struct zb_kernels; /* kernels.h */
struct zb_hw_profile; /* profile.h */

/* Row-major C[M,N] = alpha * op(A) op(B) + beta * C, where op(A) is [M,K]
 * and op(B) is [K,N]. lda/ldb/ldc are row strides in elements. A and B have
 * dtype `dtype`; C has it too unless c_f32, which keeps C in fp32 behind
 * bf16 inputs (mixed-precision weight gradients, accumulated in fp32).
 * Products are accumulated in fp32 on every device; a bf16 C is rounded
 * once, to nearest even, when it is stored. */
typedef struct zb_gemm_desc {
    bool trans_a, trans_b;
    int64_t m, n, k;
    float alpha, beta;
    const void *a;
    int64_t lda;
    const void *b;
    int64_t ldb;
    void *c;
    int64_t ldc;
    zb_dtype dtype; /* of A and B (and of C unless c_f32) */
    bool c_f32;     /* C in fp32 whatever dtype is */
} zb_gemm_desc;

/* A host function run in order on a stream (CPU kernels, MPI collectives).
 * It returns a status; a failure becomes the stream's sticky error. The
 * cleanup (may be NULL) runs after it, or instead of it when the stream is
 * already failed, so an argument the issuer allocated is always freed. */
typedef zb_status (*zb_host_fn)(void *arg);
typedef void (*zb_host_cleanup)(void *arg);

typedef struct zb_device_ops {
    const char *name;
    void (*destroy)(zb_device *dev);

    zb_status (*alloc)(zb_device *dev, size_t n_bytes, zb_mem_tag tag, void **out);
    void (*free)(zb_device *dev, void *ptr);
    void (*mem_stats)(zb_device *dev, zb_mem_stats *out);
    void (*mem_reset_peak)(zb_device *dev);

    zb_status (*stream_create)(zb_device *dev, const char *name, zb_stream **out);
    void (*stream_destroy)(zb_stream *s);
    zb_status (*stream_sync)(zb_stream *s);

    zb_status (*event_create)(zb_device *dev, zb_event **out);
    void (*event_destroy)(zb_event *e);
    zb_status (*event_record)(zb_event *e, zb_stream *s);
    zb_status (*stream_wait_event)(zb_stream *s, zb_event *e);
    zb_status (*event_sync)(zb_event *e);
    /* ZB_OK when complete, ZB_ERR_NOT_READY when not yet. */
    zb_status (*event_query)(zb_event *e);
    zb_status (*event_elapsed_ms)(zb_event *start, zb_event *end, double *ms);

    zb_status (*memcpy_async)(zb_stream *s, void *dst, const void *src, size_t n_bytes,
                              const zb_op_info *info);
    zb_status (*gemm)(zb_stream *s, const zb_gemm_desc *g, const zb_op_info *info);
    /* Optional (NULL where the device cannot run host code in stream order). */
    zb_status (*launch_host)(zb_stream *s, zb_host_fn fn, void *arg, zb_host_cleanup cleanup,
                             const zb_op_info *info);

    /* Optional, for host code that works on device data (the mpi comm).
     * mem_is_host: whether memory from alloc is host memory that a
     * launch_host fn may read and write directly; NULL means it is (the cpu
     * device). Where it is not (cuda), host code works on copies in pinned
     * host memory from alloc_host, moved by memcpy_async in stream order.
     * alloc_host takes a host tag only (ZB_MEM_HOST_STAGING; another tag is
     * ZB_ERR_INVALID), counted per tag and out of the device totals; alloc
     * refuses a host tag where its memory is not host memory. free_host frees at once: the
     * caller first synchronizes every stream that may still use the buffer.
     * Use the zb_dev_* wrappers below. */
    bool (*mem_is_host)(const zb_device *dev);
    zb_status (*alloc_host)(zb_device *dev, size_t n_bytes, zb_mem_tag tag, void **out);
    void (*free_host)(zb_device *dev, void *ptr);

    /* The backend's kernel table (kernels.h), kept in the backend's folder;
     * optional: NULL for a device without one. Use zb_kernels_for. */
    const struct zb_kernels *(*kernels)(void);

    /* Optional: stream_sync bounded by `timeout_s` instead of the device's
     * own timeout. The stream's sticky error comes first, as in stream_sync;
     * work not done within timeout_s returns ZB_ERR_NOT_READY and records no
     * message, so the caller words the timeout after what it waited for (the
     * comm names its collective: harness/comm/comm.c). NULL: stream_sync.
     * Use zb_dev_stream_sync_within. */
    zb_status (*stream_sync_within)(zb_stream *s, double timeout_s);

    /* Optional: the device's clock as the host sees it, in ns: the time up
     * to which the host has waited for the device. NULL: the harness clock
     * (zb_now_ns). The sim keeps virtual time (harness/device/sim): its
     * trace records, events and this clock are on it. Use zb_dev_now_ns. */
    int64_t (*now_ns)(zb_device *dev);

    /* True for a device that keeps no data (the sim): buffers are address
     * ranges only, ops are costed, not computed, and a copy into host memory
     * leaves 0xff bytes (NaN) there. Callers skip work whose only purpose is
     * data (initial values). */
    bool no_data;

    /* Device memory (tag ZB_MEM_WORKSPACE) that each stream running a GEMM
     * holds from its first GEMM until the stream is destroyed (cuda: the
     * cuBLASLt workspace); 0: none. The engine's memory ledger predicts it
     * from here, so the ledger stays backend-blind. */
    size_t gemm_stream_workspace_bytes;

    /* Optional: how many of the device's streams are running an op on a
     * host thread of this process right now (the cpu device's stream
     * threads; a wait for an event does not count). A host op that polls
     * (the mpi comm) yields the core only when another stream is working,
     * so a poll neither starves this rank's compute nor, on a loaded
     * machine, hands its core to other processes at every test. NULL: no
     * host work (the GPU does it). Use zb_dev_host_busy_streams. */
    int (*host_busy_streams)(zb_device *dev);
} zb_device_ops;

/* Options every backend understands. */
typedef struct zb_device_config {
    int rank;              /* for trace records and messages */
    int local_rank;        /* picks the GPU on cuda */
    int blas_threads;      /* cpu: OpenBLAS threads per rank (0 = leave as is) */
    double timeout_s;      /* every host-side wait gives up after this */
    zb_trace *trace;       /* NULL: no tracing */
    /* The hardware profile in use (the sim takes its costs from it; NULL:
     * none). Read at create; the device keeps a copy. */
    const struct zb_hw_profile *hw;
} zb_device_config;

/* Every backend's device struct starts with this header. */
struct zb_device {
    const zb_device_ops *ops;
    zb_device_config cfg;
};


/* Thin wrappers so call sites read like CUDA. */
static inline zb_status zb_dev_alloc(zb_device *d, size_t n, zb_mem_tag t, void **out) {
    return d->ops->alloc(d, n, t, out);
}
static inline void zb_dev_free(zb_device *d, void *p) { d->ops->free(d, p); }
/* True when host code may use the device's memory directly (no staging). */
static inline bool zb_dev_mem_is_host(const zb_device *d) {
    return !d->ops->mem_is_host || d->ops->mem_is_host(d);
}
/* True when host code can reach the device's data in stream order: it runs
 * host ops, and its memory is host memory or it has pinned staging memory. */
static inline bool zb_dev_runs_host_code(const zb_device *d) {
    return d->ops->launch_host &&
           (zb_dev_mem_is_host(d) || (d->ops->alloc_host && d->ops->free_host));
}
static inline int zb_dev_host_busy_streams(zb_device *d) {
    return d->ops->host_busy_streams ? d->ops->host_busy_streams(d) : 0;
}
static inline void zb_dev_destroy(zb_device *d) {
    if (d) d->ops->destroy(d);
}

/* Every backend's stream and event structs start with these headers, so the
 * stream's id and name (used in trace records) read the same everywhere. */
struct zb_stream {
    zb_device *dev;
    int id;
    char name[32];
};
struct zb_event {
    zb_device *dev;
};

/* The device's clock (now_ns), or the harness clock. */
static inline int64_t zb_dev_now_ns(zb_device *d) {
    return d->ops->now_ns ? d->ops->now_ns(d) : zb_now_ns();
}
static inline bool zb_dev_holds_data(const zb_device *d) { return !d->ops->no_data; }

/* stream_sync_within where the device has it, else stream_sync (whose
 * timeout is the device's and whose message is its own). */
static inline zb_status zb_dev_stream_sync_within(zb_stream *s, double timeout_s) {
    const zb_device_ops *o = s->dev->ops;
    return o->stream_sync_within ? o->stream_sync_within(s, timeout_s) : o->stream_sync(s);
}

#ifdef __cplusplus
}
#endif
#endif
