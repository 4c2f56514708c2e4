/* The CUDA backend's plain-C surface: probing for a GPU, describing it, the
 * CUDA device's extra queries, and the hooks the CUPTI tracer and the CUDA
 * kernels use. Usable without CUDA headers (handles are void *), but
 * implemented in CUDA builds only: the rest of the program reaches this
 * backend through its registry entry (backend_cuda.c), which a build
 * without CUDA replaces by a "not built" entry (device_backend.h). Callers
 * of this header are this folder, the nccl comm and tests. The functions
 * below "CUDA builds only" are the hooks the backend's own files share.
 *
 * The CUDA device (harness/device/cuda/device_cuda.c) implements device.h with CUDA
 * semantics: one non-blocking cudaStream_t per zb_stream, a cudaEvent_t per
 * zb_event, memory from a dedicated CUDA memory pool, GEMM through cuBLASLt.
 * It leaves no trace records of its own for GPU work: on this backend
 * cfg->trace is filled by the CUPTI tracer (cupti_tracer.h), which maps GPU
 * activity back to harness ops through zb_cuda_op_begin/end below; streams
 * are registered with the tracer as they are created. The one exception is
 * launch_host: host functions run on the host, are invisible to CUPTI, and
 * are timed and recorded by the device itself on the harness clock.
 *
 * The ops table has launch_host (a proxy thread per stream; the stream waits
 * for it on the GPU) and pinned host memory (alloc_host/free_host;
 * mem_is_host is false), so the mpi comm runs here, staging every collective
 * through pinned host buffers (comm_mpi.c): this is how several ranks share
 * one GPU (NCCL refuses two ranks on one GPU). */
#ifndef ZB_CUDA_BACKEND_H
#define ZB_CUDA_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ZB_OK with the number of visible GPUs (>= 1), or ZB_ERR_UNSUPPORTED with a
 * one-line reason in `why` (also the thread's error message), e.g.
 * "no usable GPU or driver was found (cudaGetDeviceCount: CUDA driver version
 * is insufficient for CUDA runtime version)". Initializes the driver,
 * creates no context. */
zb_status zb_cuda_probe(int *n_devices, char *why, size_t n);

/* GPU `device`'s name, the driver's and the runtime's CUDA versions
 * (1000 * major + 10 * minor, as cudaDriverGetVersion reports them) and its
 * memory in bytes, for the report's meta. Any output pointer may be NULL. */
zb_status zb_cuda_describe(int device, char *name, size_t n, int *driver_version,
                           int *runtime_version, double *mem_bytes);

/* Creates the CUDA device on GPU cfg->local_rank % (visible GPUs).
 * ZB_ERR_UNSUPPORTED (one line, naming the rank) when no GPU is usable. */
zb_status zb_device_cuda_create(const zb_device_config *cfg, zb_device **out);

/* The device's view of GPU memory, so reports separate harness memory (the
 * pool) from library memory (CUDA context, NCCL, cuBLASLt, CUPTI). */
typedef struct zb_cuda_meminfo {
    size_t free_bytes;           /* cudaMemGetInfo now */
    size_t total_bytes;
    size_t used_at_create_bytes; /* total - free when the device was created
                                    (context + cuBLASLt), before any harness
                                    allocation */
    size_t used_high_bytes;      /* highest total - free sampled: at creation,
                                    at every allocation, at every meminfo call
                                    (the step makes one after every step): a
                                    lower bound, blind inside a step */
    size_t pool_reserved_bytes;  /* the harness pool now */
    size_t pool_used_bytes;
    size_t pool_reserved_high_bytes; /* since creation or mem_reset_peak */
    size_t pool_used_high_bytes;
    size_t other_bytes; /* (total - free) - pool reserved, now: everything
                           outside the pool (context, NCCL, libraries) */
    char uuid[48];      /* the GPU's UUID as nvidia-smi prints it ("GPU-..."):
                           what tells ranks sharing the GPU apart */
} zb_cuda_meminfo;

/* Fills `out`; ZB_ERR_INVALID when `dev` is not a CUDA device. */
zb_status zb_device_cuda_meminfo(zb_device *dev, zb_cuda_meminfo *out);

/* The baseline of `gemm --compare-direct` on cuda (harness/device/cuda/
 * gemm_direct.c): times g through a direct cuBLASLt call on the device's
 * GPU, bypassing the harness (its own cublasLt handle, non-blocking stream
 * and 32 MiB workspace, the heuristic's first algorithm, no algorithm
 * cache, op hooks or CUPTI correlation; same mapping and types as the
 * device's gemm). `warmup` GEMMs, then `iters` back-to-back ones timed with
 * cudaEvents: *seconds = elapsed / iters (per rank; reduce it across ranks
 * like any time). Waits poll with dev->cfg.timeout_s. g's buffers are device
 * memory of `dev` with no harness work pending on them; C is g->c, so it
 * holds the last GEMM's result afterwards (beta != 0 compounds). Errors name
 * the rank, the call and the shape: ZB_ERR_INVALID for bad counts or shape,
 * or a device that is not CUDA; ZB_ERR_TIMEOUT when a wait ran out (the workspace and
 * handle are then left allocated, as the message says). *seconds is 0 on
 * failure. */
zb_status zb_cuda_gemm_direct_time(zb_device *dev, const zb_gemm_desc *g, int64_t warmup,
                                   int64_t iters, double *seconds);

/* ---- CUDA builds only -------------------------------------------------------- */

/* The CUDA backend's table (kernels_cuda.c): every op launches the CUDA
 * kernels of kernels/cuda/ on the CUDA stream behind the zb_stream. */
const struct zb_kernels *zb_kernels_cuda(void);

/* True when `dev` is a CUDA device (its ops table is the CUDA one). */
int zb_device_is_cuda(const zb_device *dev);
/* The CUDA device ordinal the device runs on. */
int zb_device_cuda_ordinal(const zb_device *dev);
/* The stream's cudaStream_t (cast it back), for kernels, NCCL and CUPTI. */
void *zb_cuda_stream_handle(const zb_stream *s);

/* Two device-side int32 words (in mapped pinned host memory) through which a
 * CUDA kernel reports a data error (a token outside the vocabulary, say):
 * word[0] = a zb_status code, word[1] = a detail (the bad value), written
 * with plain volatile stores (racing writers: one of them wins; no atomics,
 * which are not guaranteed on host memory). The next stream_sync on the
 * stream reports it as the stream's sticky error, as the CPU device reports
 * a failed op. Returns a DEVICE pointer. */
int32_t *zb_cuda_stream_error_word(const zb_stream *s);

/* Op hooks: optional observers called on the issuing thread around the CUDA
 * calls that issue one harness op (a GEMM, a copy, a kernel, a collective).
 * `seq` numbers ops in issue order on the device (trace records' seq).
 * The CUPTI tracer needs no hook: zb_cuda_op_begin/end call it directly.
 * Install before issuing work (read without a lock); NULL members and a NULL
 * table mean no hooks. The table is copied. */
typedef struct zb_cuda_op_hooks {
    void (*begin)(void *arg, const zb_stream *s, const zb_op_info *info, uint64_t seq);
    void (*end)(void *arg, const zb_stream *s);
    void *arg;
} zb_cuda_op_hooks;
void zb_device_cuda_set_op_hooks(zb_device *dev, const zb_cuda_op_hooks *hooks);

/* What a CUDA kernel launcher (or NCCL call) does around its launch:
 *   uint64_t seq = zb_cuda_op_begin(s, &info);  launch; check;  zb_cuda_op_end(s);
 * Begin pushes the CUPTI tracer's external correlation id for the op
 * (zb_cupti_op_begin_info; a no-op when the tracer is off), end pops it.
 * info may be NULL (a compute op labelled "kernel"). Returns the op's seq. */
uint64_t zb_cuda_op_begin(zb_stream *s, const zb_op_info *info);
void zb_cuda_op_end(zb_stream *s);

/* device.h's launch_host on a CUDA stream (the ops table's launch_host):
 * fn(arg) runs in stream order on the stream's own host-op thread (one per
 * stream, so fns of different streams never wait for each other's turn) and
 * later work on the stream waits for it on the GPU; then cleanup(arg) (also
 * when fn is skipped because the stream already failed). A failing fn
 * becomes the stream's sticky error, reported by the next stream_sync. The
 * device records the op's trace record itself, timed on the host (CUPTI
 * cannot see host functions). fn must not wait for later work of its own
 * stream. Every wait is bounded by cfg.timeout_s. Design and the deadlock
 * that cudaLaunchHostFunc would allow: harness/device/cuda/device_cuda_host.c.
 * ZB_CUDA_HOST_WAIT=callback makes the stream wait in a CUDA host function
 * instead of cuStreamWaitValue32 (the fallback, for checking it on a GPU);
 * in that mode host ops run one at a time per device (no overlap).
 * On failure to queue, neither fn nor cleanup runs. */
zb_status zb_device_cuda_launch_host(zb_stream *s, zb_host_fn fn, void *arg,
                                     zb_host_cleanup cleanup, const zb_op_info *info);

/* The GEMM algorithm cache's counters (entries, lookups that hit, misses). */
void zb_device_cuda_gemm_cache_stats(zb_device *dev, size_t *entries, uint64_t *hits,
                                     uint64_t *misses);

#ifdef __cplusplus
}
#endif
#endif
