/* The CPU device: each stream is a worker thread running a FIFO of ops.
 *
 * Ops on one stream run in issue order on that stream's thread; ops on two
 * streams run concurrently on two threads. Events carry a generation count:
 * a record bumps `gen_recorded` at issue time and the stream's thread sets
 * `gen_done` when it reaches the record, so a wait issued later waits for
 * exactly the record that was current when it was issued (CUDA's rule).
 * Errors raised by an op are sticky on its stream: later host ops on the
 * stream are skipped, but records still complete so other streams waiting on
 * them never hang; the next synchronization reports the error. Every wait,
 * host-side or on a stream's thread, gives up after cfg.timeout_s. */
#include <cblas.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bf16.h"
#include "cpu_mempool.h"
#include "mem_account.h"
#include "device_cpu.h"

typedef enum { CPU_OP_HOST, CPU_OP_GEMM, CPU_OP_COPY, CPU_OP_RECORD, CPU_OP_WAIT } cpu_op_type;

typedef struct cpu_event {
    zb_event base;
    uint64_t gen_recorded; /* guarded by the device's event lock */
    uint64_t gen_done;
    int64_t done_ns;
} cpu_event;

typedef struct cpu_op {
    cpu_op_type type;
    struct cpu_op *next;
    zb_op_info info;
    char label[ZB_LABEL_MAX];
    zb_host_fn fn;
    zb_host_cleanup cleanup;
    void *arg;
    zb_gemm_desc gemm;
    void *dst;
    const void *src;
    size_t n_bytes;
    cpu_event *event;
    uint64_t gen;
    uint64_t seq; /* issue order on the device */
} cpu_op;

typedef struct cpu_stream {
    zb_stream base;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cv;      /* the thread's: work arrived, or stop */
    pthread_cond_t done_cv; /* a waiter's: n_done reached wake_at */
    cpu_op *head, *tail;
    uint64_t n_issued, n_done;
    /* The smallest n_done a waiter waits for (UINT64_MAX: none). Waking a
     * waiter only then, not after every op, keeps a host thread that syncs
     * from being switched in once per op: on a 2-core machine that switch
     * took the core from the stream's own thread or the peer rank. */
    uint64_t wake_at;
    bool stop;
    zb_status error;
    char error_msg[ZB_ERROR_MAX];
} cpu_stream;

typedef struct cpu_device {
    zb_device base;
    zb_mempool pool;
    pthread_mutex_t ev_lock;
    pthread_cond_t ev_cv;
    int n_streams;
    atomic_uint_fast64_t n_issued; /* numbers every op in issue order */
    atomic_int busy;               /* streams running an op now (host_busy_streams) */
} cpu_device;

static cpu_device *cpu_dev(zb_device *d) { return (cpu_device *)d; }

/* ---- timed waits on CLOCK_MONOTONIC --------------------------------------- */

static zb_status cond_init_monotonic(pthread_cond_t *cv) {
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(cv, &attr);
    pthread_condattr_destroy(&attr);
    return rc == 0 ? ZB_OK : ZB_FAIL(ZB_ERR_INTERNAL, "pthread_cond_init: %s", strerror(rc));
}

static struct timespec deadline_after(double timeout_s) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double whole = (double)(long long)timeout_s;
    ts.tv_sec += (time_t)whole;
    ts.tv_nsec += (long)((timeout_s - whole) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec += 1;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* ---- GEMM (run on the stream's thread) -------------------------------------- */

/* C = alpha op(A) op(B) + beta C in fp32, g's shape and flags, the given
 * matrices and row strides. */
static void sgemm(const zb_gemm_desc *g, const float *a, int64_t lda, const float *b,
                  int64_t ldb, float *c, int64_t ldc) {
    cblas_sgemm(CblasRowMajor, g->trans_a ? CblasTrans : CblasNoTrans,
                g->trans_b ? CblasTrans : CblasNoTrans, (blasint)g->m, (blasint)g->n,
                (blasint)g->k, g->alpha, a, (blasint)lda, b, (blasint)ldb, g->beta, c,
                (blasint)ldc);
}

/* dst [rows, cols] (packed) = src [rows, cols] (row stride ld) widened, exact. */
static void widen_rows(float *dst, const zb_bf16 *src, int64_t rows, int64_t cols, int64_t ld) {
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t j = 0; j < cols; j++) dst[r * cols + j] = zb_bf16_to_f32(src[r * ld + j]);
    }
}

/* dst [rows, cols] (row stride ld) = src [rows, cols] (packed) rounded to
 * nearest even; dst's padding between rows is left alone. */
static void round_rows(zb_bf16 *dst, int64_t ld, const float *src, int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; r++) {
        for (int64_t j = 0; j < cols; j++) dst[r * ld + j] = zb_f32_to_bf16(src[r * cols + j]);
    }
}

/* bf16 A and B (and C unless c_f32): the matrices are widened as stored
 * into packed fp32 scratch, BLAS runs the fp32 GEMM, and a bf16 C is
 * rounded once when it is stored (device.h). A bf16 C is read only when
 * beta != 0, as BLAS reads C. */
static zb_status run_gemm_bf16(const zb_gemm_desc *g) {
    int64_t a_rows = g->trans_a ? g->k : g->m, a_cols = g->trans_a ? g->m : g->k;
    int64_t b_rows = g->trans_b ? g->n : g->k, b_cols = g->trans_b ? g->k : g->n;
    size_t na = (size_t)(a_rows * a_cols), nb = (size_t)(b_rows * b_cols);
    size_t nc = g->c_f32 ? 0 : (size_t)(g->m * g->n);
    size_t total = na + nb + nc; /* each term < 2^62: m, n, k <= INT_MAX */
    float *scratch = total <= SIZE_MAX / sizeof(float) ? malloc(total * sizeof(float)) : NULL;
    if (!scratch) {
        return ZB_FAIL(ZB_ERR_NOMEM, "bf16 GEMM %lldx%lldx%lld: out of memory for %zu floats of "
                       "fp32 scratch", (long long)g->m, (long long)g->n, (long long)g->k, total);
    }
    float *a = scratch, *b = a + na, *c = b + nb;
    widen_rows(a, (const zb_bf16 *)g->a, a_rows, a_cols, g->lda);
    widen_rows(b, (const zb_bf16 *)g->b, b_rows, b_cols, g->ldb);
    if (g->c_f32) {
        sgemm(g, a, a_cols, b, b_cols, (float *)g->c, g->ldc);
    } else {
        if (g->beta != 0.0f) {
            widen_rows(c, (const zb_bf16 *)g->c, g->m, g->n, g->ldc);
        } else {
            memset(c, 0, nc * sizeof(float)); /* not read, but never garbage */
        }
        sgemm(g, a, a_cols, b, b_cols, c, g->n);
        round_rows((zb_bf16 *)g->c, g->ldc, c, g->m, g->n);
    }
    free(scratch);
    return ZB_OK;
}

static zb_status run_gemm(const zb_gemm_desc *g) {
    if (g->dtype == ZB_DTYPE_BF16) return run_gemm_bf16(g);
    sgemm(g, (const float *)g->a, g->lda, (const float *)g->b, g->ldb, (float *)g->c, g->ldc);
    return ZB_OK;
}

/* ---- the stream's thread ---------------------------------------------------- */

static void stream_set_error(cpu_stream *s, zb_status st, const char *msg) {
    pthread_mutex_lock(&s->lock);
    if (s->error == ZB_OK) {
        s->error = st;
        strncpy(s->error_msg, msg, sizeof s->error_msg - 1);
    }
    pthread_mutex_unlock(&s->lock);
}

static void run_event_record(cpu_stream *s, cpu_op *op) {
    cpu_device *d = cpu_dev(s->base.dev);
    int64_t now = zb_now_ns();
    pthread_mutex_lock(&d->ev_lock);
    if (op->gen > op->event->gen_done) {
        op->event->gen_done = op->gen;
        op->event->done_ns = now;
    }
    pthread_cond_broadcast(&d->ev_cv);
    pthread_mutex_unlock(&d->ev_lock);
}

static void run_event_wait(cpu_stream *s, cpu_op *op) {
    cpu_device *d = cpu_dev(s->base.dev);
    struct timespec until = deadline_after(d->base.cfg.timeout_s);
    int rc = 0;
    pthread_mutex_lock(&d->ev_lock);
    while (op->event->gen_done < op->gen && rc != ETIMEDOUT) {
        rc = pthread_cond_timedwait(&d->ev_cv, &d->ev_lock, &until);
    }
    bool done = op->event->gen_done >= op->gen;
    pthread_mutex_unlock(&d->ev_lock);
    if (!done) {
        ZB_FAIL(ZB_ERR_TIMEOUT, "rank %d: stream '%s' waited more than %g s for an event",
                d->base.cfg.rank, s->base.name, d->base.cfg.timeout_s);
        stream_set_error(s, ZB_ERR_TIMEOUT, zb_error_message());
    }
}

static void run_work(cpu_stream *s, cpu_op *op) {
    pthread_mutex_lock(&s->lock);
    bool failed = s->error != ZB_OK;
    pthread_mutex_unlock(&s->lock);
    if (failed) { /* sticky error: skip work, keep ordering ops */
        if (op->cleanup) op->cleanup(op->arg);
        return;
    }
    int64_t t0 = zb_now_ns();
    zb_status st = ZB_OK;
    switch (op->type) {
    case CPU_OP_HOST: st = op->fn(op->arg); break;
    case CPU_OP_GEMM: st = run_gemm(&op->gemm); break;
    case CPU_OP_COPY: memmove(op->dst, op->src, op->n_bytes); break;
    default: break;
    }
    int64_t t1 = zb_now_ns();
    zb_trace_add(s->base.dev->cfg.trace, s->base.id, &op->info, op->seq, t0, t1);
    if (st != ZB_OK) stream_set_error(s, st, zb_error_message());
    if (op->cleanup) op->cleanup(op->arg);
}

static void *stream_main(void *arg) {
    cpu_stream *s = (cpu_stream *)arg;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        while (!s->head && !s->stop) pthread_cond_wait(&s->cv, &s->lock);
        if (!s->head) { /* stop requested and the queue is drained */
            pthread_mutex_unlock(&s->lock);
            return NULL;
        }
        cpu_op *op = s->head;
        s->head = op->next;
        if (!s->head) s->tail = NULL;
        pthread_mutex_unlock(&s->lock);

        if (op->type == CPU_OP_RECORD) {
            run_event_record(s, op);
        } else if (op->type == CPU_OP_WAIT) {
            run_event_wait(s, op);
        } else {
            atomic_fetch_add(&cpu_dev(s->base.dev)->busy, 1);
            run_work(s, op);
            atomic_fetch_sub(&cpu_dev(s->base.dev)->busy, 1);
        }
        free(op);

        pthread_mutex_lock(&s->lock);
        s->n_done++;
        if (s->n_done >= s->wake_at) {
            s->wake_at = UINT64_MAX; /* each woken waiter that still waits sets it again */
            pthread_cond_broadcast(&s->done_cv);
        }
        pthread_mutex_unlock(&s->lock);
    }
}

/* ---- issuing ---------------------------------------------------------------- */

static zb_status stream_push(cpu_stream *s, cpu_op *op) {
    op->next = NULL;
    op->seq = atomic_fetch_add(&cpu_dev(s->base.dev)->n_issued, 1);
    pthread_mutex_lock(&s->lock);
    if (s->tail) {
        s->tail->next = op;
    } else {
        s->head = op;
    }
    s->tail = op;
    s->n_issued++;
    pthread_cond_signal(&s->cv); /* only the stream's thread waits on it */
    pthread_mutex_unlock(&s->lock);
    return ZB_OK;
}

static cpu_op *op_new(cpu_op_type type, const zb_op_info *info, const char *default_label) {
    cpu_op *op = (cpu_op *)calloc(1, sizeof *op);
    if (!op) return NULL;
    op->type = type;
    if (info) op->info = *info;
    else {
        op->info.kind = ZB_OP_COMPUTE;
        op->info.unit = -1;
    }
    const char *label = (info && info->label) ? info->label : default_label;
    strncpy(op->label, label, sizeof op->label - 1);
    op->info.label = op->label;
    return op;
}

static zb_status cpu_launch_host(zb_stream *zs, zb_host_fn fn, void *arg,
                                 zb_host_cleanup cleanup, const zb_op_info *info) {
    cpu_op *op = op_new(CPU_OP_HOST, info, "host");
    if (!op) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory queueing an op on '%s'", zs->name);
    op->fn = fn;
    op->cleanup = cleanup;
    op->arg = arg;
    return stream_push((cpu_stream *)zs, op);
}

/* Checked here, at issue, so the stream's thread can trust the shape: the
 * dtype, the dimensions BLAS takes, and row strides no shorter than the rows
 * (the bf16 path reads the matrices itself). */
static zb_status cpu_gemm(zb_stream *zs, const zb_gemm_desc *g, const zb_op_info *info) {
    if (g->dtype != ZB_DTYPE_F32 && g->dtype != ZB_DTYPE_BF16) {
        return ZB_FAIL(ZB_ERR_INVALID, "GEMM dtype %d (%s) is neither float nor bf16",
                       (int)g->dtype, zb_dtype_name(g->dtype));
    }
    if (g->m <= 0 || g->n <= 0 || g->k <= 0 || g->m > INT_MAX || g->n > INT_MAX ||
        g->k > INT_MAX || g->lda > INT_MAX || g->ldb > INT_MAX || g->ldc > INT_MAX) {
        return ZB_FAIL(ZB_ERR_INVALID, "GEMM shape %lldx%lldx%lld is outside what BLAS takes",
                       (long long)g->m, (long long)g->n, (long long)g->k);
    }
    int64_t a_cols = g->trans_a ? g->m : g->k, b_cols = g->trans_b ? g->k : g->n;
    if (g->lda < a_cols || g->ldb < b_cols || g->ldc < g->n) {
        return ZB_FAIL(ZB_ERR_INVALID, "GEMM %lldx%lldx%lld: a row stride is shorter than its row "
                       "(need lda >= %lld, ldb >= %lld, ldc >= %lld)", (long long)g->m,
                       (long long)g->n, (long long)g->k, (long long)a_cols, (long long)b_cols,
                       (long long)g->n);
    }
    cpu_op *op = op_new(CPU_OP_GEMM, info, "gemm");
    if (!op) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory queueing a GEMM");
    op->gemm = *g;
    if (!info) op->info.flops = 2.0 * (double)g->m * (double)g->n * (double)g->k;
    return stream_push((cpu_stream *)zs, op);
}

static zb_status cpu_memcpy_async(zb_stream *zs, void *dst, const void *src, size_t n_bytes,
                                  const zb_op_info *info) {
    cpu_op *op = op_new(CPU_OP_COPY, info, "memcpy");
    if (!op) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory queueing a copy");
    op->info.kind = ZB_OP_COPY;
    op->info.bytes = n_bytes;
    op->dst = dst;
    op->src = src;
    op->n_bytes = n_bytes;
    return stream_push((cpu_stream *)zs, op);
}

/* ---- streams ---------------------------------------------------------------- */

/* Waits until the work issued so far is done or timeout_s passes: the
 * sticky error first; ZB_ERR_NOT_READY (no message) when not drained. */
static zb_status stream_drain_within(zb_stream *zs, double timeout_s) {
    cpu_stream *s = (cpu_stream *)zs;
    struct timespec until = deadline_after(timeout_s);
    int rc = 0;
    pthread_mutex_lock(&s->lock);
    uint64_t target = s->n_issued;
    while (s->n_done < target && rc != ETIMEDOUT) {
        if (target < s->wake_at) s->wake_at = target;
        rc = pthread_cond_timedwait(&s->done_cv, &s->lock, &until);
    }
    bool drained = s->n_done >= target;
    zb_status err = s->error;
    char msg[ZB_ERROR_MAX];
    memcpy(msg, s->error_msg, sizeof msg);
    pthread_mutex_unlock(&s->lock);
    if (err != ZB_OK) {
        zb_error_adopt(err, msg);
        return err;
    }
    return drained ? ZB_OK : ZB_ERR_NOT_READY;
}

static zb_status cpu_stream_sync(zb_stream *zs) {
    double timeout_s = zs->dev->cfg.timeout_s;
    zb_status st = stream_drain_within(zs, timeout_s);
    if (st == ZB_ERR_NOT_READY) {
        return ZB_FAIL(ZB_ERR_TIMEOUT, "rank %d: stream '%s' did not finish its work within %g s",
                       zs->dev->cfg.rank, zs->name, timeout_s);
    }
    return st;
}

static zb_status cpu_stream_create(zb_device *zd, const char *name, zb_stream **out) {
    cpu_device *d = cpu_dev(zd);
    cpu_stream *s = (cpu_stream *)calloc(1, sizeof *s);
    if (!s) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory creating stream '%s'", name);
    s->base.dev = zd;
    s->base.id = d->n_streams++;
    strncpy(s->base.name, name ? name : "stream", sizeof s->base.name - 1);
    pthread_mutex_init(&s->lock, NULL);
    s->wake_at = UINT64_MAX;
    zb_status st = cond_init_monotonic(&s->cv);
    if (st == ZB_OK) {
        st = cond_init_monotonic(&s->done_cv);
        if (st != ZB_OK) pthread_cond_destroy(&s->cv);
    }
    int rc = st == ZB_OK ? pthread_create(&s->thread, NULL, stream_main, s) : -1;
    if (rc != 0) {
        if (st == ZB_OK) {
            pthread_cond_destroy(&s->done_cv);
            pthread_cond_destroy(&s->cv);
        }
        pthread_mutex_destroy(&s->lock);
        free(s);
        return st != ZB_OK ? st
                           : ZB_FAIL(ZB_ERR_INTERNAL, "pthread_create for stream '%s': %s", name,
                                     strerror(rc));
    }
    zb_trace_name_stream(zd->cfg.trace, s->base.id, s->base.name);
    *out = &s->base;
    return ZB_OK;
}

static void cpu_stream_destroy(zb_stream *zs) {
    if (!zs) return;
    cpu_stream *s = (cpu_stream *)zs;
    pthread_mutex_lock(&s->lock);
    s->stop = true; /* the thread drains what is queued, then exits */
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    pthread_cond_destroy(&s->done_cv);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* ---- events ----------------------------------------------------------------- */

static zb_status cpu_event_create(zb_device *zd, zb_event **out) {
    cpu_event *e = (cpu_event *)calloc(1, sizeof *e);
    if (!e) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory creating an event");
    e->base.dev = zd;
    *out = &e->base;
    return ZB_OK;
}

static void cpu_event_destroy(zb_event *ze) { free(ze); }

static zb_status cpu_event_record(zb_event *ze, zb_stream *zs) {
    cpu_device *d = cpu_dev(ze->dev);
    cpu_event *e = (cpu_event *)ze;
    cpu_op *op = op_new(CPU_OP_RECORD, NULL, "record");
    if (!op) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory recording an event");
    op->event = e;
    pthread_mutex_lock(&d->ev_lock);
    op->gen = ++e->gen_recorded;
    pthread_mutex_unlock(&d->ev_lock);
    return stream_push((cpu_stream *)zs, op);
}

static zb_status cpu_stream_wait_event(zb_stream *zs, zb_event *ze) {
    cpu_device *d = cpu_dev(ze->dev);
    cpu_event *e = (cpu_event *)ze;
    pthread_mutex_lock(&d->ev_lock);
    uint64_t gen = e->gen_recorded;
    bool done = e->gen_done >= gen;
    pthread_mutex_unlock(&d->ev_lock);
    if (done) return ZB_OK; /* never recorded, or already complete */
    cpu_op *op = op_new(CPU_OP_WAIT, NULL, "wait");
    if (!op) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory queueing an event wait");
    op->event = e;
    op->gen = gen;
    return stream_push((cpu_stream *)zs, op);
}

static zb_status cpu_event_query(zb_event *ze) {
    cpu_device *d = cpu_dev(ze->dev);
    cpu_event *e = (cpu_event *)ze;
    pthread_mutex_lock(&d->ev_lock);
    bool done = e->gen_done >= e->gen_recorded;
    pthread_mutex_unlock(&d->ev_lock);
    return done ? ZB_OK : ZB_ERR_NOT_READY;
}

static zb_status cpu_event_sync(zb_event *ze) {
    cpu_device *d = cpu_dev(ze->dev);
    cpu_event *e = (cpu_event *)ze;
    struct timespec until = deadline_after(d->base.cfg.timeout_s);
    int rc = 0;
    pthread_mutex_lock(&d->ev_lock);
    uint64_t target = e->gen_recorded;
    while (e->gen_done < target && rc != ETIMEDOUT) {
        rc = pthread_cond_timedwait(&d->ev_cv, &d->ev_lock, &until);
    }
    bool done = e->gen_done >= target;
    pthread_mutex_unlock(&d->ev_lock);
    if (!done) {
        return ZB_FAIL(ZB_ERR_TIMEOUT, "rank %d: event not reached within %g s", d->base.cfg.rank,
                       d->base.cfg.timeout_s);
    }
    return ZB_OK;
}

static zb_status cpu_event_elapsed_ms(zb_event *zstart, zb_event *zend, double *ms) {
    cpu_device *d = cpu_dev(zstart->dev);
    cpu_event *a = (cpu_event *)zstart, *b = (cpu_event *)zend;
    pthread_mutex_lock(&d->ev_lock);
    bool ready = a->gen_recorded > 0 && b->gen_recorded > 0 && a->gen_done >= a->gen_recorded &&
                 b->gen_done >= b->gen_recorded;
    int64_t dt = b->done_ns - a->done_ns;
    pthread_mutex_unlock(&d->ev_lock);
    if (!ready) {
        return ZB_FAIL(ZB_ERR_NOT_READY, "elapsed time asked of events not recorded or not done");
    }
    *ms = (double)dt / 1e6;
    return ZB_OK;
}

/* ---- memory and the device -------------------------------------------------- */

static zb_status cpu_alloc(zb_device *zd, size_t n, zb_mem_tag tag, void **out) {
    return zb_mempool_alloc(&cpu_dev(zd)->pool, n, tag, out);
}
static void cpu_free(zb_device *zd, void *p) { zb_mempool_free(&cpu_dev(zd)->pool, p); }
static void cpu_mem_stats(zb_device *zd, zb_mem_stats *out) {
    zb_mempool_stats(&cpu_dev(zd)->pool, out);
}
static void cpu_mem_reset_peak(zb_device *zd) { zb_mempool_reset_peak(&cpu_dev(zd)->pool); }
static int cpu_host_busy_streams(zb_device *zd) { return atomic_load(&cpu_dev(zd)->busy); }

static void cpu_destroy(zb_device *zd) {
    cpu_device *d = cpu_dev(zd);
    zb_mempool_destroy(&d->pool);
    pthread_cond_destroy(&d->ev_cv);
    pthread_mutex_destroy(&d->ev_lock);
    free(d);
}

static const zb_device_ops cpu_ops = {
    .name = "cpu",
    .destroy = cpu_destroy,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .mem_stats = cpu_mem_stats,
    .mem_reset_peak = cpu_mem_reset_peak,
    .stream_create = cpu_stream_create,
    .stream_destroy = cpu_stream_destroy,
    .stream_sync = cpu_stream_sync,
    .stream_sync_within = stream_drain_within,
    .event_create = cpu_event_create,
    .event_destroy = cpu_event_destroy,
    .event_record = cpu_event_record,
    .stream_wait_event = cpu_stream_wait_event,
    .event_sync = cpu_event_sync,
    .event_query = cpu_event_query,
    .event_elapsed_ms = cpu_event_elapsed_ms,
    .memcpy_async = cpu_memcpy_async,
    .gemm = cpu_gemm,
    .launch_host = cpu_launch_host,
    .kernels = zb_kernels_cpu,
    .host_busy_streams = cpu_host_busy_streams,
};

zb_status zb_device_cpu_create(const zb_device_config *cfg, zb_device **out) {
    cpu_device *d = (cpu_device *)calloc(1, sizeof *d);
    if (!d) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory creating the cpu device");
    d->base.ops = &cpu_ops;
    d->base.cfg = *cfg;
    if (d->base.cfg.timeout_s <= 0) d->base.cfg.timeout_s = 300.0;
    pthread_mutex_init(&d->ev_lock, NULL);
    zb_status st = cond_init_monotonic(&d->ev_cv);
    if (st == ZB_OK) st = zb_mempool_init(&d->pool);
    d->pool.trace = cfg->trace; /* the trace's live-memory counter */
    zb_mem_trace_names(cfg->trace);
    if (st != ZB_OK) {
        free(d);
        return st;
    }
    if (cfg->blas_threads > 0) openblas_set_num_threads(cfg->blas_threads);
    *out = &d->base;
    return ZB_OK;
}
