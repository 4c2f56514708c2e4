/* The CUDA device (device.h on a GPU): creation, streams, events, op hooks.
 * Copies and GEMM dispatch: device_cuda_ops.c; host ops and pinned host
 * memory: device_cuda_host.c; memory: device_cuda_mem.c; cuBLASLt:
 * gemm_cublaslt.c.
 *
 * Streams are non-blocking cudaStream_t; events are cudaEvent_t (timing on),
 * whose semantics already match device.h (a never-recorded event is
 * complete; a wait takes the most recent record). No host-side wait blocks
 * inside CUDA: stream_sync and event_sync record/poll an event with a short
 * back-off until cfg.timeout_s, then report the rank and what was waited for
 * (stream_sync_within: until the caller's timeout, and the caller reports).
 *
 * Trace records: on this backend cfg->trace is filled by the CUPTI tracer
 * (harness/device/cuda/cupti_tracer.h), not here (the host cannot see when a kernel
 * starts). Every op is numbered (seq) and announced between
 * zb_cuda_op_begin/end, which push and pop the tracer's external correlation
 * id (and call any op hooks, cuda_backend.h), so the tracer maps its records
 * to the op's label and unit; streams are registered with the tracer when
 * created (one named "comm..." as the comm stream). Host ops (launch_host)
 * are the exception: they run on the host, CUPTI does not see them, and the
 * device times and records them on the harness clock.
 *
 * Host ops (launch_host) run fn on a proxy thread per stream while the
 * stream waits on a pinned host word (cuStreamWaitValue32), with pinned host
 * memory (alloc_host) for the mpi comm's staging; design, and why not
 * cudaLaunchHostFunc: device_cuda_host.c. A failing fn becomes the stream's
 * sticky error, reported by the next stream_sync; later host ops on
 * a failed stream are skipped but their cleanups still run. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_check.h"
#include "cudnn_sdpa.h"
#include "cupti_tracer.h"
#include "device_cuda_internal.h"

static int rank_of(zb_device *d) { return d->cfg.rank; }

/* ---- waiting ----------------------------------------------------------------- */

/* Polls `ev` until complete or timeout_s: ZB_OK, the CUDA error an earlier
 * async op left, or ZB_ERR_NOT_READY (no message) past the deadline. */
static zb_status wait_event_within(cuda_device *d, cudaEvent_t ev, const char *what,
                                   double timeout_s) {
    int rank = d->base.cfg.rank;
    int64_t deadline = zb_now_ns() + (int64_t)(timeout_s * 1e9);
    long sleep_ns = 2000;
    for (int polls = 0;; polls++) {
        cudaError_t e = cudaEventQuery(ev);
        if (e == cudaSuccess) return ZB_OK;
        if (e != cudaErrorNotReady) {
            (void)cudaGetLastError();
            return ZB_FAIL(zb_cuda_status_of(e), "rank %d: cudaEventQuery, waiting for %s, failed: "
                           "%s (%s; an earlier asynchronous op on this GPU failed)", rank, what,
                           cudaGetErrorString(e), cudaGetErrorName(e));
        }
        (void)cudaGetLastError(); /* "not ready" must not reach a later launch check */
        if (zb_now_ns() > deadline) return ZB_ERR_NOT_READY;
        if (polls < 64) { /* short waits: stay responsive */
            sched_yield();
        } else {
            struct timespec ts = {0, sleep_ns};
            nanosleep(&ts, NULL);
            if (sleep_ns < 100000) sleep_ns *= 2;
        }
    }
}

zb_status zb_cuda_wait_event(cuda_device *d, cudaEvent_t ev, const char *what) {
    double timeout_s = d->base.cfg.timeout_s;
    zb_status st = wait_event_within(d, ev, what, timeout_s);
    if (st == ZB_ERR_NOT_READY) {
        return ZB_FAIL(ZB_ERR_TIMEOUT, "rank %d: waited more than %g s for %s", d->base.cfg.rank,
                       timeout_s, what);
    }
    return st;
}

/* ---- sticky errors ------------------------------------------------------------ */

void zb_cuda_stream_set_error(cuda_stream *s, zb_status st, const char *msg) {
    pthread_mutex_lock(&s->lock);
    if (s->error == ZB_OK) {
        s->error = st;
        snprintf(s->error_msg, sizeof s->error_msg, "%s", msg);
    }
    pthread_mutex_unlock(&s->lock);
}

/* The stream's sticky error (a failed host op, or a kernel's error word),
 * adopted as this thread's message; ZB_OK when none. Call after the stream
 * reached the point of interest. */
static zb_status stream_sticky(cuda_stream *s) {
    atomic_thread_fence(memory_order_acquire);
    int32_t code = s->err_word[0];
    if (code != 0) {
        zb_status st = (code > 0 && code <= (int32_t)ZB_ERR_INTERNAL) ? (zb_status)code
                                                                       : ZB_ERR_INTERNAL;
        char msg[ZB_ERROR_MAX];
        snprintf(msg, sizeof msg, "rank %d: a kernel on stream '%s' reported %s (code %d, "
                 "detail %d)", s->base.dev->cfg.rank, s->base.name, zb_status_name(st), (int)code,
                 (int)s->err_word[1]);
        zb_cuda_stream_set_error(s, st, msg);
    }
    pthread_mutex_lock(&s->lock);
    zb_status err = s->error;
    char msg[ZB_ERROR_MAX];
    memcpy(msg, s->error_msg, sizeof msg);
    pthread_mutex_unlock(&s->lock);
    if (err != ZB_OK) zb_error_adopt(err, msg);
    return err;
}

zb_status zb_cuda_stream_drain(cuda_stream *s, const char *why) {
    cuda_device *d = cuda_dev(s->base.dev);
    char what[160];
    snprintf(what, sizeof what, "stream '%s' %s", s->base.name, why);
    ZB_CUDA_TRY(rank_of(&d->base), cudaEventRecord(s->sync_ev, s->stream));
    return zb_cuda_wait_event(d, s->sync_ev, what);
}

/* ---- op hooks ------------------------------------------------------------------- */

uint64_t zb_cuda_op_begin(zb_stream *zs, const zb_op_info *info) {
    cuda_device *d = cuda_dev(zs->dev);
    uint64_t seq = (uint64_t)atomic_fetch_add(&d->n_issued, 1);
    zb_op_info local = {ZB_OP_COMPUTE, "kernel", -1, 0, 0.0};
    if (!info) info = &local;
    zb_cupti_op_begin_info(info, zs->id); /* a no-op unless the tracer runs */
    if (d->hooks.begin) d->hooks.begin(d->hooks.arg, zs, info, seq);
    return seq;
}

void zb_cuda_op_end(zb_stream *zs) {
    cuda_device *d = cuda_dev(zs->dev);
    if (d->hooks.end) d->hooks.end(d->hooks.arg, zs);
    zb_cupti_op_end();
}

zb_op_info zb_cuda_resolve_info(const zb_op_info *info, zb_op_kind kind, const char *label) {
    zb_op_info r = {kind, label, -1, 0, 0.0};
    if (info) {
        r = *info;
        if (!r.label) r.label = label;
    }
    return r;
}

/* ---- streams ---------------------------------------------------------------- */

static void stream_free_parts(cuda_stream *s) {
    zb_cuda_host_proxy_stop(s); /* before the stream: its ops name the stream */
    if (s->err_word) cudaFreeHost((void *)s->err_word);
    if (s->fence_ev) cudaEventDestroy(s->fence_ev);
    if (s->sync_ev) cudaEventDestroy(s->sync_ev);
    if (s->stream) cudaStreamDestroy(s->stream);
    (void)cudaGetLastError();
    pthread_mutex_destroy(&s->lock);
    free(s);
}

static zb_status cuda_stream_create(zb_device *zd, const char *name, zb_stream **out) {
    cuda_device *d = cuda_dev(zd);
    int rank = rank_of(zd);
    *out = NULL;
    cuda_stream *s = (cuda_stream *)calloc(1, sizeof *s);
    if (!s) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory creating stream '%s'", name);
    s->base.dev = zd;
    snprintf(s->base.name, sizeof s->base.name, "%s", name ? name : "stream");
    pthread_mutex_init(&s->lock, NULL);
    void *word = NULL;
    zb_status st = ZB_CUDA_CHECK(rank, cudaSetDevice(d->ordinal));
    if (st == ZB_OK) {
        st = ZB_CUDA_CHECK(rank, cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    }
    if (st == ZB_OK) {
        st = ZB_CUDA_CHECK(rank, cudaEventCreateWithFlags(&s->sync_ev, cudaEventDisableTiming));
    }
    if (st == ZB_OK) {
        st = ZB_CUDA_CHECK(rank, cudaEventCreateWithFlags(&s->fence_ev, cudaEventDisableTiming));
    }
    if (st == ZB_OK) {
        st = ZB_CUDA_CHECK(rank, cudaHostAlloc(&word, 64, cudaHostAllocMapped | cudaHostAllocPortable));
    }
    if (st == ZB_OK) {
        memset(word, 0, 64);
        s->err_word = (volatile int32_t *)word;
        st = ZB_CUDA_CHECK(rank, cudaHostGetDevicePointer((void **)&s->err_word_dev, word, 0));
    }
    if (st != ZB_OK) {
        stream_free_parts(s);
        return st;
    }
    pthread_mutex_lock(&d->lock);
    s->base.id = d->n_streams++;
    s->next = d->streams;
    d->streams = s;
    pthread_mutex_unlock(&d->lock);
    zb_trace_name_stream(zd->cfg.trace, s->base.id, s->base.name);
    if (zb_cupti_active()) { /* a stream named "comm..." is the comm stream */
        st = zb_cupti_register_stream((const void *)s->stream, s->base.id,
                                      strncmp(s->base.name, "comm", 4) == 0);
        if (st != ZB_OK) {
            fprintf(stderr, "zerobench: warning: rank %d: the CUPTI tracer did not take stream "
                    "'%s': %s\n", rank, s->base.name, zb_error_message());
        }
    }
    *out = &s->base;
    return ZB_OK;
}

static void cuda_stream_destroy(zb_stream *zs) {
    if (!zs) return;
    cuda_stream *s = (cuda_stream *)zs;
    cuda_device *d = cuda_dev(zs->dev);
    /* Drain first: pending host ops point at this struct. */
    zb_status st = zb_cuda_stream_drain(s, "to finish its work before it is destroyed");
    if (s->gemm_ws) zb_cuda_free(zs->dev, s->gemm_ws); /* fenced after this stream's work */
    s->gemm_ws = NULL;
    pthread_mutex_lock(&d->lock);
    for (cuda_stream **link = &d->streams; *link; link = &(*link)->next) {
        if (*link == s) {
            *link = s->next;
            break;
        }
    }
    pthread_mutex_unlock(&d->lock);
    if (st == ZB_ERR_TIMEOUT) { /* host ops may still run: leave the struct alive */
        fprintf(stderr, "zerobench: warning: %s; stream '%s' is left undestroyed\n",
                zb_error_message(), zs->name);
        return;
    }
    stream_free_parts(s);
}

/* stream_sync under the caller's timeout; ZB_ERR_NOT_READY past it. */
static zb_status cuda_stream_sync_within(zb_stream *zs, double timeout_s) {
    cuda_stream *s = (cuda_stream *)zs;
    cuda_device *d = cuda_dev(zs->dev);
    zb_status st = ZB_CUDA_CHECK(rank_of(zs->dev), cudaEventRecord(s->sync_ev, s->stream));
    char what[160];
    snprintf(what, sizeof what, "stream '%s' to finish its work", zs->name);
    if (st == ZB_OK) st = wait_event_within(d, s->sync_ev, what, timeout_s);
    char msg[ZB_ERROR_MAX];
    snprintf(msg, sizeof msg, "%s", zb_error_message());
    zb_status sticky = stream_sticky(s); /* an op's own error comes first, as on cpu */
    if (sticky != ZB_OK) return sticky;
    if (st != ZB_OK && st != ZB_ERR_NOT_READY) zb_error_adopt(st, msg);
    return st;
}

static zb_status cuda_stream_sync(zb_stream *zs) {
    cuda_stream *s = (cuda_stream *)zs;
    zb_status st = zb_cuda_stream_drain(s, "to finish its work");
    char msg[ZB_ERROR_MAX];
    snprintf(msg, sizeof msg, "%s", zb_error_message());
    zb_status sticky = stream_sticky(s); /* an op's own error comes first, as on cpu */
    if (sticky != ZB_OK) return sticky;
    if (st != ZB_OK) zb_error_adopt(st, msg);
    return st;
}

/* ---- events ----------------------------------------------------------------- */

static zb_status cuda_event_create(zb_device *zd, zb_event **out) {
    cuda_device *d = cuda_dev(zd);
    *out = NULL;
    cuda_event *e = (cuda_event *)calloc(1, sizeof *e);
    if (!e) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory creating an event");
    e->base.dev = zd;
    zb_status st = ZB_CUDA_CHECK(rank_of(zd), cudaSetDevice(d->ordinal));
    if (st == ZB_OK) st = ZB_CUDA_CHECK(rank_of(zd), cudaEventCreateWithFlags(&e->ev, cudaEventDefault));
    if (st != ZB_OK) {
        free(e);
        return st;
    }
    *out = &e->base;
    return ZB_OK;
}

static void cuda_event_destroy(zb_event *ze) {
    if (!ze) return;
    cuda_event *e = (cuda_event *)ze;
    cudaEventDestroy(e->ev); /* CUDA defers the release while a record is pending */
    (void)cudaGetLastError();
    free(e);
}

static zb_status cuda_event_record(zb_event *ze, zb_stream *zs) {
    cuda_event *e = (cuda_event *)ze;
    ZB_CUDA_TRY(rank_of(ze->dev), cudaEventRecord(e->ev, ((cuda_stream *)zs)->stream));
    e->recorded = true;
    return ZB_OK;
}

static zb_status cuda_stream_wait_event(zb_stream *zs, zb_event *ze) {
    cuda_event *e = (cuda_event *)ze;
    if (!e->recorded) return ZB_OK; /* never recorded: already complete */
    ZB_CUDA_TRY(rank_of(zs->dev), cudaStreamWaitEvent(((cuda_stream *)zs)->stream, e->ev, 0));
    return ZB_OK;
}

static zb_status cuda_event_sync(zb_event *ze) {
    cuda_event *e = (cuda_event *)ze;
    if (!e->recorded) return ZB_OK;
    return zb_cuda_wait_event(cuda_dev(ze->dev), e->ev, "an event");
}

static zb_status cuda_event_query(zb_event *ze) {
    cuda_event *e = (cuda_event *)ze;
    if (!e->recorded) return ZB_OK;
    cudaError_t r = cudaEventQuery(e->ev);
    if (r == cudaErrorNotReady) {
        (void)cudaGetLastError();
        return ZB_ERR_NOT_READY;
    }
    return zb_cuda_fail_at(r, rank_of(ze->dev), __FILE__, __LINE__, "cudaEventQuery(e->ev)");
}

static zb_status cuda_event_elapsed_ms(zb_event *zstart, zb_event *zend, double *ms) {
    cuda_event *a = (cuda_event *)zstart, *b = (cuda_event *)zend;
    int rank = rank_of(zstart->dev);
    if (!a->recorded || !b->recorded) {
        return ZB_FAIL(ZB_ERR_NOT_READY, "elapsed time asked of events not recorded or not done");
    }
    for (int i = 0; i < 2; i++) {
        cudaError_t r = cudaEventQuery(i ? b->ev : a->ev);
        if (r == cudaErrorNotReady) {
            (void)cudaGetLastError();
            return ZB_FAIL(ZB_ERR_NOT_READY, "elapsed time asked of events not recorded or not done");
        }
        if (r != cudaSuccess) {
            return zb_cuda_fail_at(r, rank, __FILE__, __LINE__, "cudaEventQuery (elapsed time)");
        }
    }
    float f = 0.0f;
    ZB_CUDA_TRY(rank, cudaEventElapsedTime(&f, a->ev, b->ev));
    *ms = (double)f;
    return ZB_OK;
}

/* ---- the device ------------------------------------------------------------- */

static void cuda_destroy(zb_device *zd) {
    if (!zd) return;
    cuda_device *d = cuda_dev(zd);
    zb_cudnn_sdpa_release(); /* cuDNN's plans, workspaces and handles (rebuilt at the next call) */
    if (d->lt) zb_cublaslt_destroy(d->lt);
    zb_cuda_mem_destroy(d);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

static const zb_device_ops cuda_ops = {
    .name = "cuda",
    .destroy = cuda_destroy,
    .alloc = zb_cuda_alloc,
    .free = zb_cuda_free,
    .mem_stats = zb_cuda_mem_stats,
    .mem_reset_peak = zb_cuda_mem_reset_peak,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .stream_sync = cuda_stream_sync,
    .stream_sync_within = cuda_stream_sync_within,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .stream_wait_event = cuda_stream_wait_event,
    .event_sync = cuda_event_sync,
    .event_query = cuda_event_query,
    .event_elapsed_ms = cuda_event_elapsed_ms,
    .memcpy_async = zb_cuda_memcpy_async,
    .gemm = zb_cuda_gemm,
    .gemm_stream_workspace_bytes = ZB_CUBLASLT_WORKSPACE_BYTES, /* device_cuda_ops.c */
    .launch_host = zb_cuda_launch_host, /* device_cuda_host.c */
    .mem_is_host = zb_cuda_mem_is_host,
    .alloc_host = zb_cuda_alloc_host,
    .free_host = zb_cuda_free_host,
    .kernels = zb_kernels_cuda, /* kernels_cuda.c */
};

zb_status zb_device_cuda_create(const zb_device_config *cfg, zb_device **out) {
    *out = NULL;
    int count = 0;
    char why[ZB_ERROR_MAX];
    if (zb_cuda_probe(&count, why, sizeof why) != ZB_OK) {
        return ZB_FAIL(ZB_ERR_UNSUPPORTED, "rank %d: --backend cuda: %s", cfg->rank, why);
    }
    cuda_device *d = (cuda_device *)calloc(1, sizeof *d);
    if (!d) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory creating the cuda device");
    d->base.ops = &cuda_ops;
    d->base.cfg = *cfg;
    if (d->base.cfg.timeout_s <= 0) d->base.cfg.timeout_s = 300.0;
    d->ordinal = (cfg->local_rank > 0 ? cfg->local_rank : 0) % count;
    atomic_init(&d->n_issued, 0);
    atomic_init(&d->host_wait_callback, false);
    atomic_init(&d->host_callbacks_pending, 0);
    pthread_mutex_init(&d->lock, NULL);
    int rank = cfg->rank;
    zb_status st = ZB_CUDA_CHECK(rank, cudaSetDevice(d->ordinal));
    if (st == ZB_OK) st = ZB_CUDA_CHECK(rank, cudaFree(NULL)); /* create the context now */
    if (st == ZB_OK) st = zb_cublaslt_create(rank, &d->lt);
    if (st == ZB_OK) st = zb_cuda_mem_init(d); /* samples "used at creation" last */
    if (st != ZB_OK) {
        char msg[ZB_ERROR_MAX];
        snprintf(msg, sizeof msg, "%s", zb_error_message());
        cuda_destroy(&d->base);
        zb_error_adopt(st, msg);
        return st;
    }
    *out = &d->base;
    return ZB_OK;
}

int zb_device_is_cuda(const zb_device *dev) { return dev && dev->ops == &cuda_ops; }

zb_status zb_device_cuda_launch_host(zb_stream *s, zb_host_fn fn, void *arg,
                                     zb_host_cleanup cleanup, const zb_op_info *info) {
    if (!s || !zb_device_is_cuda(s->dev)) {
        return ZB_FAIL(ZB_ERR_INVALID, "a CUDA host op issued on a stream of another device");
    }
    return zb_cuda_launch_host(s, fn, arg, cleanup, info);
}

int zb_device_cuda_ordinal(const zb_device *dev) {
    return zb_device_is_cuda(dev) ? ((const cuda_device *)dev)->ordinal : -1;
}

void *zb_cuda_stream_handle(const zb_stream *s) {
    return (s && zb_device_is_cuda(s->dev)) ? (void *)((const cuda_stream *)s)->stream : NULL;
}

int32_t *zb_cuda_stream_error_word(const zb_stream *s) {
    return (s && zb_device_is_cuda(s->dev)) ? ((const cuda_stream *)s)->err_word_dev : NULL;
}

void zb_device_cuda_set_op_hooks(zb_device *dev, const zb_cuda_op_hooks *hooks) {
    if (!zb_device_is_cuda(dev)) return;
    cuda_device *d = cuda_dev(dev);
    if (hooks) {
        d->hooks = *hooks;
    } else {
        memset(&d->hooks, 0, sizeof d->hooks);
    }
}

void zb_device_cuda_gemm_cache_stats(zb_device *dev, size_t *entries, uint64_t *hits,
                                     uint64_t *misses) {
    if (entries) *entries = 0;
    if (hits) *hits = 0;
    if (misses) *misses = 0;
    if (zb_device_is_cuda(dev) && cuda_dev(dev)->lt) {
        zb_cublaslt_cache_stats(cuda_dev(dev)->lt, entries, hits, misses);
    }
}
