/* The CUDA device's host code in stream order: launch_host (host ops) and
 * pinned host memory (alloc_host/free_host; mem_is_host is false), which
 * together let the mpi comm run on this device (comm_mpi.c stages every
 * collective through pinned host buffers).
 *
 * Design: one proxy thread per stream (created at the stream's first host
 * op). launch_host(s, fn, ...) issues, on s:
 *     cuStreamWriteValue32(reached = ticket)    the stream got to the op
 *     cuStreamWaitValue32(done >= ticket)       later work waits for fn
 * and queues {fn, ticket} to s's proxy. `reached` and `done` are words of
 * mapped pinned host memory. The proxy takes its ops in FIFO order: it polls
 * `reached` (plain loads with a back-off, until cfg.timeout_s), runs fn on
 * its own thread, records the trace record, runs the cleanup, then stores
 * `ticket` into `done` and the stream goes on. Whatever happens (the wait
 * timed out, the stream already failed, fn failed) the proxy still stores
 * the ticket, so the stream is never left waiting on the GPU: every wait is
 * bounded by a timeout, on the host (proxy, stream_sync) and so on the GPU.
 * A failure becomes the stream's sticky error, reported by the next
 * stream_sync, as on the cpu device. `ticket` grows by one per op; both
 * compares are cyclic, so it may wrap.
 *
 * The proxy makes no CUDA call between taking an op and releasing it. The
 * first GPU run (2026-12-04, H200, driver 580) showed why: the proxy then
 * polled a `reached` event (cudaEventQuery) and destroyed it afterwards
 * (cudaEventDestroy), while the issuing thread's next kernel launch was
 * the kernel's first, which loads its module (CUDA's lazy loading) under a
 * context-wide lock and waits for the device; the device waited for `done`,
 * the proxy for the lock: the step hung in cuLaunchKernel and
 * cuEventDestroy_v2 (ci/gpu-stacks.sh showed both), with one rank as with
 * two. Any CUDA call that takes that lock and waits for the GPU (module
 * loads, cudaFree, cuBLASLt's own first launches) closes the same cycle, so
 * the proxy's whole path is plain memory and MPI.
 *
 * Why not cudaLaunchHostFunc (the first implementation): CUDA runs the host
 * functions of all streams of a process on one driver thread, in an order
 * it does not promise across streams. An MPI collective polled inside such
 * a function holds that thread until every rank has joined it, and the
 * ranks may reach their host functions in different orders. Take two ranks,
 * each with a collective X queued on the comm stream and Y on the compute
 * stream (each on its own MPI communicator, issued in the same order on
 * both ranks). If rank 0's driver thread starts X first and rank 1's starts
 * Y first, rank 0 polls X (waiting for rank 1's X, queued behind rank 1's
 * Y) and rank 1 polls Y (waiting for rank 0's Y, queued behind rank 0's X):
 * a cycle across ranks that only the timeout ends. The same holds for any
 * other host function queued behind a blocked collective. Here MPI runs on
 * the stream's own thread, as on the cpu device (a worker per stream): a
 * collective waits only for its own stream's earlier GPU work and for its
 * peers, never for another stream's host op; since every rank issues the
 * collectives of one communicator in the same order, there is no cycle.
 *
 * cuStreamWaitValue32 makes later GPU work wait without any host thread and
 * without occupying an SM (the GPU's front end polls the word). It is a driver API call, fetched at run time
 * through cudaGetDriverEntryPointByVersion, so nothing links libcuda (the
 * test binaries still run on machines without a driver). Its ordering is
 * invisible to CUDA's scheduler, which CUDA asks callers to back with CUDA
 * dependencies: here everything the wait depends on (the stream's earlier
 * work, seen through `reached`; other streams' work through the events the
 * harness records) was issued before the wait, so a stream sharing a
 * hardware queue with it is never held behind it by work it needs.
 * Fallback, where either entry point is missing, the driver answers
 * CUDA_ERROR_NOT_SUPPORTED, or ZB_CUDA_HOST_WAIT=callback is set: the stream
 * waits in a cudaLaunchHostFunc function that stores `reached` and polls
 * `done` (bounded; no CUDA calls). That
 * function blocks the shared driver thread until its own fn finishes. With
 * one such wait queued per device that is safe: fn needs only its peers'
 * fns, and theirs need only GPU work. With two, it is not: rank 0's driver
 * thread can sit in stream X's wait while the op its peer needs on stream Y
 * is queued behind it, and rank 1's the other way round, a cycle only the
 * timeout ends. So in this mode launch_host first waits (bounded) until
 * every earlier host function of the device has returned: host ops run one
 * at a time, in issue order, and the issuing thread is held meanwhile, so
 * communication through host ops does not overlap compute here (the note
 * printed when the fallback is chosen says so).
 *
 * Rules for fn: it runs on the proxy thread while its stream waits, so it
 * must not wait for later work of its own stream; it should not call CUDA
 * (it may; the mpi comm's fns do not: staging copies are issued around it).
 * fns of different streams run concurrently and may wait for each other. */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_check.h"
#include "device_cuda_internal.h"

typedef struct host_op {
    struct host_op *next;
    zb_host_fn fn;
    void *arg;
    zb_host_cleanup cleanup;
    zb_op_info info;
    char label[ZB_LABEL_MAX];
    uint64_t seq;
    uint32_t ticket; /* the stream wrote reached = ticket before the op; goes on once done >= ticket */
} host_op;

struct cuda_host_proxy {
    cuda_stream *s;
    pthread_t thread;
    pthread_mutex_t lock; /* the queue, `issued`, `stop` */
    pthread_cond_t cond;
    host_op *head, *tail;
    bool stop;
    uint32_t issued;        /* the last ticket a stream wait was issued for */
    volatile uint32_t *done;    /* mapped pinned host word: the last released ticket */
    volatile uint32_t *reached; /* mapped pinned host word: the last ticket the stream got to */
    CUdeviceptr done_dev, reached_dev;
    bool use_callback; /* the stream waits in a host function, not cuStreamWaitValue32 */
};

static int rank_of(const cuda_stream *s) { return s->base.dev->cfg.rank; }

/* ---- the stream-side wait ------------------------------------------------------- */

static PFN_cuStreamWaitValue32_v11070 wait_value32;
static PFN_cuStreamWriteValue32_v11070 write_value32;
static pthread_once_t stream_memops_once = PTHREAD_ONCE_INIT;

static void *driver_entry(const char *name) {
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    cudaError_t e = cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found);
#else
    cudaError_t e = cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &found);
#endif
    if (e == cudaSuccess && found == cudaDriverEntryPointSuccess && fn) return fn;
    (void)cudaGetLastError();
    return NULL;
}

/* Both stream memory operations, or neither (then the callback fallback). */
static void find_stream_memops(void) {
    const char *mode = getenv("ZB_CUDA_HOST_WAIT");
    if (mode && !strcmp(mode, "callback")) return;
    void *w = driver_entry("cuStreamWaitValue32"), *v = driver_entry("cuStreamWriteValue32");
    if (w && v) {
        wait_value32 = (PFN_cuStreamWaitValue32_v11070)w;
        write_value32 = (PFN_cuStreamWriteValue32_v11070)v;
    }
}

typedef struct callback_wait {
    cuda_host_proxy *x;
    uint32_t ticket;
} callback_wait;

static bool released(const cuda_host_proxy *x, uint32_t ticket) {
    return (int32_t)(*x->done - ticket) >= 0;
}

static bool got_to(const cuda_host_proxy *x, uint32_t ticket) {
    return (int32_t)(*x->reached - ticket) >= 0;
}

/* The fallback wait, on CUDA's host-function thread: no CUDA calls. Bounded:
 * fn started when the stream got here and ends within its own timeout; the
 * margin covers the proxy's wake-up and the cleanup. */
static void CUDART_CB callback_wait_run(void *p) {
    callback_wait *w = (callback_wait *)p;
    cuda_host_proxy *x = w->x;
    /* the stream got here: the op may run (the proxy polls this word) */
    atomic_thread_fence(memory_order_seq_cst);
    *x->reached = w->ticket;
    atomic_thread_fence(memory_order_seq_cst);
    double timeout_s = x->s->base.dev->cfg.timeout_s;
    int64_t deadline = zb_now_ns() + (int64_t)((2.0 * timeout_s + 5.0) * 1e9);
    long sleep_ns = 1000;
    while (!released(x, w->ticket)) {
        if (zb_now_ns() > deadline) {
            char msg[ZB_ERROR_MAX];
            snprintf(msg, sizeof msg, "rank %d: stream '%s' waited more than %g s for host op %u to "
                     "finish", rank_of(x->s), x->s->base.name, 2.0 * timeout_s + 5.0,
                     (unsigned)w->ticket);
            zb_cuda_stream_set_error(x->s, ZB_ERR_TIMEOUT, msg);
            break;
        }
        struct timespec ts = {0, sleep_ns};
        nanosleep(&ts, NULL);
        if (sleep_ns < 50000) sleep_ns *= 2;
    }
    atomic_fetch_sub(&cuda_dev(x->s->base.dev)->host_callbacks_pending, 1);
    free(w);
}

/* Says once per device that host ops wait in host functions, one at a time. */
static void note_callback_mode(cuda_host_proxy *x, const char *why) {
    cuda_device *d = cuda_dev(x->s->base.dev);
    if (atomic_exchange(&d->host_wait_callback, true)) return;
    fprintf(stderr, "zerobench: note: rank %d: %s; host ops wait in a CUDA host function, one at a time "
            "on this device, so communication through host ops (--comm mpi) does not overlap compute\n",
            rank_of(x->s), why);
}

/* In the fallback, before a host op is issued: every earlier host function
 * of the device has returned (see the top comment). Bounded like the
 * functions themselves. Called without the proxy's lock (the proxy takes it
 * to run the op that a pending function waits for). */
static zb_status wait_callbacks_idle(cuda_stream *s) {
    cuda_device *d = cuda_dev(s->base.dev);
    if (!atomic_load(&d->host_wait_callback)) return ZB_OK;
    double limit_s = 2.0 * d->base.cfg.timeout_s + 5.0;
    int64_t deadline = zb_now_ns() + (int64_t)(limit_s * 1e9);
    long sleep_ns = 1000;
    while (atomic_load(&d->host_callbacks_pending) > 0) {
        if (zb_now_ns() > deadline) {
            return ZB_FAIL(ZB_ERR_TIMEOUT, "rank %d: a host op on stream '%s' waited more than %g s for "
                           "the device's earlier host ops to finish (callback fallback)", rank_of(s),
                           s->base.name, limit_s);
        }
        struct timespec ts = {0, sleep_ns};
        nanosleep(&ts, NULL);
        if (sleep_ns < 50000) sleep_ns *= 2;
    }
    return ZB_OK;
}

/* Marks the op's place (reached = ticket, once the stream's earlier work is
 * done and visible: the write's default flags fence it) and makes later work
 * on the stream wait until done >= ticket (x->lock held). */
static zb_status issue_wait(cuda_host_proxy *x, uint32_t ticket) {
    cuda_stream *s = x->s;
    int rank = rank_of(s);
    if (!x->use_callback) {
        const char *call = "cuStreamWriteValue32";
        CUresult r = write_value32((CUstream)s->stream, x->reached_dev, ticket, CU_STREAM_WRITE_VALUE_DEFAULT);
        if (r == CUDA_SUCCESS) {
            call = "cuStreamWaitValue32";
            r = wait_value32((CUstream)s->stream, x->done_dev, ticket, CU_STREAM_WAIT_VALUE_GEQ);
            if (r == CUDA_SUCCESS) return ZB_OK;
            /* not supported: the mark is already queued; the callback below stores it again */
        }
        if (r != CUDA_ERROR_NOT_SUPPORTED) {
            return ZB_FAIL(ZB_ERR_INTERNAL, "rank %d: %s on stream '%s' failed (CUresult %d)", rank, call,
                           s->base.name, (int)r);
        }
        char why[96];
        snprintf(why, sizeof why, "%s is not supported by this driver", call);
        note_callback_mode(x, why);
        x->use_callback = true;
    }
    callback_wait *w = (callback_wait *)malloc(sizeof *w);
    if (!w) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory queueing a host op on '%s'", s->base.name);
    w->x = x;
    w->ticket = ticket;
    cuda_device *d = cuda_dev(s->base.dev);
    atomic_fetch_add(&d->host_callbacks_pending, 1);
    zb_status st = ZB_CUDA_CHECK(rank, cudaLaunchHostFunc(s->stream, callback_wait_run, w));
    if (st != ZB_OK) {
        atomic_fetch_sub(&d->host_callbacks_pending, 1);
        free(w);
    }
    return st;
}

/* ---- the proxy thread ------------------------------------------------------------ */

/* Waits, bounded by the timeout and without any CUDA call (see the top
 * comment), until the stream got to the op. */
static zb_status wait_reached(cuda_host_proxy *x, const host_op *op) {
    cuda_stream *s = x->s;
    double timeout_s = s->base.dev->cfg.timeout_s;
    int64_t deadline = zb_now_ns() + (int64_t)(timeout_s * 1e9);
    long sleep_ns = 500;
    while (!got_to(x, op->ticket)) {
        if (zb_now_ns() > deadline) {
            return ZB_FAIL(ZB_ERR_TIMEOUT, "rank %d: waited more than %g s for stream '%s' to reach host op "
                           "'%s' (unit %d)", rank_of(s), timeout_s, s->base.name, op->label, op->info.unit);
        }
        struct timespec ts = {0, sleep_ns};
        nanosleep(&ts, NULL);
        if (sleep_ns < 20000) sleep_ns *= 2;
    }
    atomic_thread_fence(memory_order_seq_cst); /* the stream's writes before the mark, then fn's reads */
    return ZB_OK;
}

static void run_op(cuda_host_proxy *x, host_op *op) {
    cuda_stream *s = x->s;
    cuda_device *d = cuda_dev(s->base.dev);
    zb_status st = wait_reached(x, op);
    if (st != ZB_OK) {
        zb_cuda_stream_set_error(s, st, zb_error_message());
    } else {
        pthread_mutex_lock(&s->lock);
        bool failed = s->error != ZB_OK;
        pthread_mutex_unlock(&s->lock);
        if (!failed) {
            int64_t t0 = zb_now_ns();
            st = op->fn(op->arg);
            int64_t t1 = zb_now_ns();
            zb_trace_add(d->base.cfg.trace, s->base.id, &op->info, op->seq, t0, t1);
            if (st != ZB_OK) zb_cuda_stream_set_error(s, st, zb_error_message());
        }
    }
    if (op->cleanup) op->cleanup(op->arg);
    /* fn's writes (e.g. MPI into a staging buffer) before the release. */
    atomic_thread_fence(memory_order_seq_cst);
    *x->done = op->ticket;
    atomic_thread_fence(memory_order_seq_cst);
    free(op);
}

static void *proxy_main(void *p) { /* no CUDA calls here: see the top comment */
    cuda_host_proxy *x = (cuda_host_proxy *)p;
    for (;;) {
        pthread_mutex_lock(&x->lock);
        while (!x->head && !x->stop) pthread_cond_wait(&x->cond, &x->lock);
        host_op *op = x->head;
        if (op) {
            x->head = op->next;
            if (!x->head) x->tail = NULL;
        }
        pthread_mutex_unlock(&x->lock);
        if (!op) return NULL; /* stopped, queue empty */
        run_op(x, op);
    }
}

static void proxy_free(cuda_host_proxy *x) {
    if (x->done) cudaFreeHost((void *)x->done);
    (void)cudaGetLastError();
    pthread_cond_destroy(&x->cond);
    pthread_mutex_destroy(&x->lock);
    free(x);
}

static zb_status proxy_create(cuda_stream *s, cuda_host_proxy **out) {
    int rank = rank_of(s);
    cuda_host_proxy *x = (cuda_host_proxy *)calloc(1, sizeof *x);
    if (!x) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory creating the host-op thread of '%s'", s->base.name);
    x->s = s;
    pthread_mutex_init(&x->lock, NULL);
    pthread_cond_init(&x->cond, NULL);
    void *word = NULL, *word_dev = NULL;
    zb_status st = ZB_CUDA_CHECK(rank, cudaHostAlloc(&word, 64, cudaHostAllocMapped | cudaHostAllocPortable));
    if (st == ZB_OK) { /* done at byte 0, reached at byte 32 of one 64-byte block */
        memset(word, 0, 64);
        x->done = (volatile uint32_t *)word;
        x->reached = (volatile uint32_t *)((char *)word + 32);
        st = ZB_CUDA_CHECK(rank, cudaHostGetDevicePointer(&word_dev, word, 0));
    }
    if (st != ZB_OK) {
        proxy_free(x);
        return st;
    }
    x->done_dev = (CUdeviceptr)(uintptr_t)word_dev;
    x->reached_dev = x->done_dev + 32;
    pthread_once(&stream_memops_once, find_stream_memops);
    x->use_callback = wait_value32 == NULL;
    if (x->use_callback) {
        const char *mode = getenv("ZB_CUDA_HOST_WAIT");
        note_callback_mode(x, mode && !strcmp(mode, "callback")
                                  ? "ZB_CUDA_HOST_WAIT=callback is set"
                                  : "cuStreamWaitValue32 or cuStreamWriteValue32 was not found");
    }
    if (pthread_create(&x->thread, NULL, proxy_main, x) != 0) {
        proxy_free(x);
        return ZB_FAIL(ZB_ERR_INTERNAL, "rank %d: could not start the host-op thread of stream '%s'",
                       rank, s->base.name);
    }
    *out = x;
    return ZB_OK;
}

/* The proxy finishes what is queued (each op bounded by the timeout), then
 * ends. */
static void proxy_stop(cuda_host_proxy *x) {
    pthread_mutex_lock(&x->lock);
    x->stop = true;
    pthread_cond_signal(&x->cond);
    pthread_mutex_unlock(&x->lock);
    pthread_join(x->thread, NULL);
    proxy_free(x);
}

/* The stream's proxy, made at its first host op (outside the stream's lock:
 * creation allocates pinned memory, and the proxies take that lock). */
static zb_status proxy_get(cuda_stream *s, cuda_host_proxy **out) {
    pthread_mutex_lock(&s->lock);
    cuda_host_proxy *have = s->proxy;
    pthread_mutex_unlock(&s->lock);
    if (!have) {
        cuda_host_proxy *made = NULL;
        ZB_TRY(proxy_create(s, &made));
        pthread_mutex_lock(&s->lock);
        if (!s->proxy) {
            s->proxy = made;
            made = NULL;
        }
        have = s->proxy;
        pthread_mutex_unlock(&s->lock);
        if (made) proxy_stop(made); /* another thread made one first */
    }
    *out = have;
    return ZB_OK;
}

/* Called with the stream drained (or broken), before it is freed. */
void zb_cuda_host_proxy_stop(cuda_stream *s) {
    if (!s->proxy) return;
    proxy_stop(s->proxy);
    s->proxy = NULL;
}

/* ---- launch_host --------------------------------------------------------------- */

zb_status zb_cuda_launch_host(zb_stream *zs, zb_host_fn fn, void *arg, zb_host_cleanup cleanup,
                              const zb_op_info *info) {
    cuda_stream *s = (cuda_stream *)zs;
    int rank = rank_of(s);
    if (!fn) return ZB_FAIL(ZB_ERR_INVALID, "rank %d: a host op without a function on '%s'", rank, zs->name);
    cuda_host_proxy *x = NULL;
    ZB_TRY(proxy_get(s, &x));
    ZB_TRY(wait_callbacks_idle(s));
    host_op *op = (host_op *)calloc(1, sizeof *op);
    if (!op) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory queueing a host op on '%s'", zs->name);
    op->fn = fn;
    op->arg = arg;
    op->cleanup = cleanup;
    op->info = zb_cuda_resolve_info(info, ZB_OP_COMPUTE, "host");
    snprintf(op->label, sizeof op->label, "%s", op->info.label);
    op->info.label = op->label;
    /* Mark, wait and queue as one step, so tickets follow stream order. */
    pthread_mutex_lock(&x->lock);
    op->seq = (uint64_t)atomic_fetch_add(&cuda_dev(zs->dev)->n_issued, 1);
    op->ticket = x->issued + 1;
    zb_status st = issue_wait(x, op->ticket);
    if (st == ZB_OK) {
        x->issued = op->ticket;
        if (x->tail) x->tail->next = op;
        else x->head = op;
        x->tail = op;
        pthread_cond_signal(&x->cond);
    }
    pthread_mutex_unlock(&x->lock);
    if (st != ZB_OK) free(op); /* not queued: the issuer still owns arg */
    return st;
}

/* ---- pinned host memory --------------------------------------------------------- */

bool zb_cuda_mem_is_host(const zb_device *dev) {
    (void)dev;
    return false;
}

/* Counted in the device's ledger under a host tag: per tag, out of the
 * device totals (device.h). */
zb_status zb_cuda_alloc_host(zb_device *zd, size_t n_bytes, zb_mem_tag tag, void **out) {
    cuda_device *d = cuda_dev(zd);
    int rank = zd->cfg.rank;
    *out = NULL;
    if ((int)tag < 0 || tag >= ZB_MEM_TAG_COUNT || !zb_mem_tag_is_host(tag)) {
        return ZB_FAIL(ZB_ERR_INVALID, "rank %d: pinned host memory asked under tag %s: only a host tag "
                       "(host_staging) is accepted", rank, zb_mem_tag_name(tag));
    }
    ZB_CUDA_TRY(rank, cudaSetDevice(d->ordinal));
    void *p = NULL;
    cudaError_t e = cudaHostAlloc(&p, n_bytes ? n_bytes : 1, cudaHostAllocPortable);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return ZB_FAIL(zb_cuda_status_of(e), "rank %d: allocating %zu bytes of pinned host memory "
                       "(%s): cudaHostAlloc failed: %s (%s)", rank, n_bytes, zb_mem_tag_name(tag),
                       cudaGetErrorString(e), cudaGetErrorName(e));
    }
    zb_status st = zb_mem_account_add(&d->acct, p, n_bytes, tag);
    if (st != ZB_OK) {
        cudaFreeHost(p);
        (void)cudaGetLastError();
        return st;
    }
    *out = p;
    return ZB_OK;
}

/* cudaFreeHost may wait for the device's work (CUDA frees pinned memory
 * only when no copy can still use it); every such wait is bounded here by
 * the proxies' timeouts, which always release their streams. */
void zb_cuda_free_host(zb_device *zd, void *ptr) {
    if (!ptr) return;
    cuda_device *d = cuda_dev(zd);
    int rank = zd->cfg.rank;
    if (zb_mem_account_remove(&d->acct, ptr, NULL, NULL) != ZB_OK) {
        fprintf(stderr, "zerobench: internal error: rank %d: %s\n", rank, zb_error_message());
        abort(); /* a double free or a foreign pointer: a bug in the caller */
    }
    if (ZB_CUDA_CHECK(rank, cudaFreeHost(ptr)) != ZB_OK) {
        fprintf(stderr, "zerobench: warning: %s\n", zb_error_message());
    }
}
