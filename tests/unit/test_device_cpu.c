/* The CPU device: stream FIFO order, concurrency between streams, event
 * semantics (record / wait / query / synchronize / elapsed), sticky errors,
 * timeouts, trace records, GEMM (fp32 and bf16 storage, refused shapes and
 * dtypes), and the allocator's per-tag accounting.
 * Ordering is checked from recorded sequence numbers and trace timestamps
 * (dependencies), never from how long anything took. */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "bf16.h"
#include "device.h"
#include "device_cpu.h"
#include "zb_test.h"

static zb_device *make_device(zb_trace *trace, double timeout_s) {
    zb_device_config cfg = {0, 0, 1, timeout_s, trace};
    zb_device *dev = NULL;
    ZB_CHECK_OK(zb_device_cpu_create(&cfg, &dev));
    return dev;
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- FIFO order ------------------------------------------------------------- */

typedef struct seq_log {
    atomic_int next;
    int order[256];
} seq_log;

typedef struct seq_arg {
    seq_log *log;
    int id;
} seq_arg;

static zb_status log_op(void *p) {
    seq_arg *a = (seq_arg *)p;
    int slot = atomic_fetch_add(&a->log->next, 1);
    a->log->order[slot] = a->id;
    return ZB_OK;
}

static void test_fifo(void) {
    zb_device *dev = make_device(NULL, 10);
    zb_stream *s = NULL;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "s", &s));
    seq_log log;
    memset(&log, 0, sizeof log);
    seq_arg args[200];
    for (int i = 0; i < 200; i++) {
        args[i].log = &log;
        args[i].id = i;
        ZB_CHECK_OK(dev->ops->launch_host(s, log_op, &args[i], NULL, NULL));
    }
    ZB_CHECK_OK(dev->ops->stream_sync(s));
    ZB_CHECK(atomic_load(&log.next) == 200);
    int in_order = 1;
    for (int i = 0; i < 200; i++) in_order &= log.order[i] == i;
    ZB_CHECK_MSG(in_order, "ops on one stream ran out of issue order");
    dev->ops->stream_destroy(s);
    zb_dev_destroy(dev);
}

/* ---- two streams really run at once ----------------------------------------- */

typedef struct rendezvous {
    atomic_int a_started, b_started;
    int a_saw_b, b_saw_a;
} rendezvous;

/* Each side waits (bounded) for the other to have started: this can only
 * succeed for both when the two streams run concurrently. */
static zb_status side_a(void *p) {
    rendezvous *r = (rendezvous *)p;
    atomic_store(&r->a_started, 1);
    for (int i = 0; i < 5000 && !atomic_load(&r->b_started); i++) sleep_ms(1);
    r->a_saw_b = atomic_load(&r->b_started);
    return ZB_OK;
}
static zb_status side_b(void *p) {
    rendezvous *r = (rendezvous *)p;
    atomic_store(&r->b_started, 1);
    for (int i = 0; i < 5000 && !atomic_load(&r->a_started); i++) sleep_ms(1);
    r->b_saw_a = atomic_load(&r->a_started);
    return ZB_OK;
}

static void test_concurrent_streams(void) {
    zb_device *dev = make_device(NULL, 10);
    zb_stream *s1 = NULL, *s2 = NULL;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "one", &s1));
    ZB_CHECK_OK(dev->ops->stream_create(dev, "two", &s2));
    ZB_CHECK(s1->id != s2->id);
    rendezvous r;
    memset(&r, 0, sizeof r);
    ZB_CHECK_OK(dev->ops->launch_host(s1, side_a, &r, NULL, NULL));
    ZB_CHECK_OK(dev->ops->launch_host(s2, side_b, &r, NULL, NULL));
    ZB_CHECK_OK(dev->ops->stream_sync(s1));
    ZB_CHECK_OK(dev->ops->stream_sync(s2));
    ZB_CHECK_MSG(r.a_saw_b && r.b_saw_a, "ops on two streams did not run concurrently");
    dev->ops->stream_destroy(s1);
    dev->ops->stream_destroy(s2);
    zb_dev_destroy(dev);
}

/* ---- events ------------------------------------------------------------------ */

static zb_status slow_op(void *p) {
    (void)p;
    sleep_ms(30);
    return ZB_OK;
}

static zb_status gate_op(void *p) {
    atomic_int *gate = (atomic_int *)p;
    for (int i = 0; i < 10000 && !atomic_load(gate); i++) sleep_ms(1);
    return ZB_OK;
}

static const zb_trace_record *find_label(const zb_trace *t, const char *label) {
    for (size_t i = 0; i < t->n_records; i++) {
        if (!strcmp(t->records[i].label, label)) return &t->records[i];
    }
    return NULL;
}

/* After stream_wait_event, the next op on the waiting stream starts only
 * after the op recorded before the event has ended (trace timestamps). */
static void test_cross_stream_wait(void) {
    zb_trace trace;
    ZB_CHECK_OK(zb_trace_init(&trace, 0, true));
    zb_device *dev = make_device(&trace, 10);
    zb_stream *producer = NULL, *consumer = NULL;
    zb_event *ev = NULL;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "producer", &producer));
    ZB_CHECK_OK(dev->ops->stream_create(dev, "consumer", &consumer));
    ZB_CHECK_OK(dev->ops->event_create(dev, &ev));
    for (int round = 0; round < 5; round++) {
        zb_trace_clear(&trace);
        zb_op_info before = {ZB_OP_COMPUTE, "before", round, 0, 0};
        zb_op_info after = {ZB_OP_COMPUTE, "after", round, 0, 0};
        ZB_CHECK_OK(dev->ops->launch_host(producer, slow_op, NULL, NULL, &before));
        ZB_CHECK_OK(dev->ops->event_record(ev, producer));
        ZB_CHECK_OK(dev->ops->stream_wait_event(consumer, ev));
        ZB_CHECK_OK(dev->ops->launch_host(consumer, slow_op, NULL, NULL, &after));
        ZB_CHECK_OK(dev->ops->stream_sync(consumer));
        ZB_CHECK_OK(dev->ops->stream_sync(producer));
        const zb_trace_record *b = find_label(&trace, "before");
        const zb_trace_record *a = find_label(&trace, "after");
        ZB_CHECK(b != NULL && a != NULL);
        if (a && b) {
            ZB_CHECK_MSG(a->start_ns >= b->end_ns, "round %d: op after a wait started %lld ns before "
                         "the recorded op ended", round, (long long)(b->end_ns - a->start_ns));
            ZB_CHECK(a->stream == consumer->id && b->stream == producer->id);
            ZB_CHECK(a->unit == round && a->kind == ZB_OP_COMPUTE);
        }
    }
    dev->ops->event_destroy(ev);
    dev->ops->stream_destroy(producer);
    dev->ops->stream_destroy(consumer);
    zb_dev_destroy(dev);
    zb_trace_destroy(&trace);
}

/* A wait captures the record current when it is issued, not a later one. */
static void test_wait_captures_current_record(void) {
    zb_device *dev = make_device(NULL, 10);
    zb_stream *a = NULL, *b = NULL;
    zb_event *ev = NULL;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "a", &a));
    ZB_CHECK_OK(dev->ops->stream_create(dev, "b", &b));
    ZB_CHECK_OK(dev->ops->event_create(dev, &ev));
    /* Never recorded: complete, and waiting on it does not block. */
    ZB_CHECK(dev->ops->event_query(ev) == ZB_OK);
    ZB_CHECK_OK(dev->ops->stream_wait_event(b, ev));
    ZB_CHECK_OK(dev->ops->stream_sync(b));

    atomic_int gate = 0;
    ZB_CHECK_OK(dev->ops->event_record(ev, a)); /* record 1: completes at once */
    ZB_CHECK_OK(dev->ops->event_sync(ev));
    ZB_CHECK_OK(dev->ops->stream_wait_event(b, ev)); /* waits on record 1 only */
    ZB_CHECK_OK(dev->ops->launch_host(a, gate_op, &gate, NULL, NULL));
    ZB_CHECK_OK(dev->ops->event_record(ev, a)); /* record 2: blocked behind the gate */
    ZB_CHECK(dev->ops->event_query(ev) == ZB_ERR_NOT_READY);
    ZB_CHECK_OK(dev->ops->stream_sync(b)); /* must not wait for record 2 */
    ZB_CHECK(dev->ops->event_query(ev) == ZB_ERR_NOT_READY);
    atomic_store(&gate, 1);
    ZB_CHECK_OK(dev->ops->event_sync(ev));
    ZB_CHECK(dev->ops->event_query(ev) == ZB_OK);

    zb_event *e0 = NULL, *e1 = NULL;
    ZB_CHECK_OK(dev->ops->event_create(dev, &e0));
    ZB_CHECK_OK(dev->ops->event_create(dev, &e1));
    double ms = -1;
    ZB_CHECK(dev->ops->event_elapsed_ms(e0, e1, &ms) == ZB_ERR_NOT_READY);
    ZB_CHECK_OK(dev->ops->event_record(e0, a));
    ZB_CHECK_OK(dev->ops->launch_host(a, slow_op, NULL, NULL, NULL));
    ZB_CHECK_OK(dev->ops->event_record(e1, a));
    ZB_CHECK_OK(dev->ops->event_sync(e1));
    ZB_CHECK_OK(dev->ops->event_elapsed_ms(e0, e1, &ms));
    ZB_CHECK_MSG(ms > 0.0, "elapsed %g ms across an op is not positive", ms);
    dev->ops->event_destroy(e0);
    dev->ops->event_destroy(e1);
    dev->ops->event_destroy(ev);
    dev->ops->stream_destroy(a);
    dev->ops->stream_destroy(b);
    zb_dev_destroy(dev);
}

/* ---- sticky errors and timeouts --------------------------------------------- */

static zb_status failing_op(void *p) {
    (void)p;
    return ZB_FAIL(ZB_ERR_WRONG, "deliberate failure in a test op");
}

static atomic_int cleanups;
static zb_status count_op(void *p) {
    atomic_fetch_add((atomic_int *)p, 1);
    return ZB_OK;
}
static void count_cleanup(void *p) {
    (void)p;
    atomic_fetch_add(&cleanups, 1);
}

static void test_sticky_error(void) {
    zb_device *dev = make_device(NULL, 10);
    zb_stream *s = NULL, *other = NULL;
    zb_event *ev = NULL;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "s", &s));
    ZB_CHECK_OK(dev->ops->stream_create(dev, "other", &other));
    ZB_CHECK_OK(dev->ops->event_create(dev, &ev));
    atomic_int ran = 0;
    atomic_store(&cleanups, 0);
    ZB_CHECK_OK(dev->ops->launch_host(s, failing_op, NULL, count_cleanup, NULL));
    ZB_CHECK_OK(dev->ops->launch_host(s, count_op, &ran, count_cleanup, NULL));
    ZB_CHECK_OK(dev->ops->event_record(ev, s));
    ZB_CHECK_OK(dev->ops->stream_wait_event(other, ev));
    ZB_CHECK_OK(dev->ops->stream_sync(other)); /* the record still completed */
    zb_status st = dev->ops->stream_sync(s);
    ZB_CHECK(st == ZB_ERR_WRONG);
    ZB_CHECK(strstr(zb_error_message(), "deliberate failure") != NULL);
    ZB_CHECK_MSG(atomic_load(&ran) == 0, "an op after a failed op still ran");
    ZB_CHECK_MSG(atomic_load(&cleanups) == 2, "cleanups ran %d times, expected 2", atomic_load(&cleanups));
    dev->ops->event_destroy(ev);
    dev->ops->stream_destroy(s);
    dev->ops->stream_destroy(other);
    zb_dev_destroy(dev);
}

static void test_sync_timeout(void) {
    zb_device *dev = make_device(NULL, 0.2);
    zb_stream *s = NULL;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "stuck", &s));
    atomic_int gate = 0;
    ZB_CHECK_OK(dev->ops->launch_host(s, gate_op, &gate, NULL, NULL));
    zb_status st = dev->ops->stream_sync(s);
    ZB_CHECK(st == ZB_ERR_TIMEOUT);
    ZB_CHECK(strstr(zb_error_message(), "stuck") != NULL);
    atomic_store(&gate, 1);
    ZB_CHECK_OK(dev->ops->stream_sync(s));
    dev->ops->stream_destroy(s);
    zb_dev_destroy(dev);
}

/* ---- copies and GEMM ---------------------------------------------------------- */

static void test_copy_and_gemm(void) {
    zb_trace trace;
    ZB_CHECK_OK(zb_trace_init(&trace, 3, true));
    zb_device *dev = make_device(&trace, 10);
    zb_stream *s = NULL;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "compute", &s));
    float a[6] = {1, 2, 3, 4, 5, 6};       /* [2,3] */
    float b[6] = {1, 0, 0, 1, 1, 1};       /* [3,2] */
    float c[4] = {0}, copy[6] = {0};
    zb_gemm_desc g = {false, false, 2, 2, 3, 1.0f, 0.0f, a, 3, b, 2, c, 2, ZB_DTYPE_F32};
    ZB_CHECK_OK(dev->ops->gemm(s, &g, NULL));
    ZB_CHECK_OK(dev->ops->memcpy_async(s, copy, a, sizeof a, NULL));
    ZB_CHECK_OK(dev->ops->stream_sync(s));
    ZB_CHECK(c[0] == 4 && c[1] == 5 && c[2] == 10 && c[3] == 11);
    ZB_CHECK(memcmp(copy, a, sizeof a) == 0);
    ZB_CHECK(trace.n_records == 2);
    if (trace.n_records == 2) {
        ZB_CHECK(trace.records[0].kind == ZB_OP_COMPUTE && trace.records[0].flops == 24.0);
        ZB_CHECK(trace.records[1].kind == ZB_OP_COPY && trace.records[1].bytes == sizeof a);
        ZB_CHECK(trace.records[0].rank == 3);
    }
    /* The same GEMM on bf16 storage (every value here is exact in bf16),
     * with a bf16 C and with an fp32 C; test_kernels_bf16.c checks the
     * bf16 path in depth. */
    zb_bf16 ah[6], bh[6], ch[4] = {0};
    for (int i = 0; i < 6; i++) ah[i] = zb_f32_to_bf16(a[i]), bh[i] = zb_f32_to_bf16(b[i]);
    float cf[4] = {0};
    zb_gemm_desc gh = g;
    gh.a = ah, gh.b = bh, gh.c = ch, gh.dtype = ZB_DTYPE_BF16;
    ZB_CHECK_OK(dev->ops->gemm(s, &gh, NULL));
    gh.c = cf, gh.c_f32 = true;
    ZB_CHECK_OK(dev->ops->gemm(s, &gh, NULL));
    ZB_CHECK_OK(dev->ops->stream_sync(s));
    for (int i = 0; i < 4; i++) {
        ZB_CHECK_MSG(zb_bf16_to_f32(ch[i]) == c[i] && cf[i] == c[i],
                     "bf16 GEMM element %d: %g (bf16 C), %g (fp32 C), want %g", i,
                     (double)zb_bf16_to_f32(ch[i]), (double)cf[i], (double)c[i]);
    }
    ZB_CHECK(trace.n_records == 4);
    if (trace.n_records == 4) ZB_CHECK(trace.records[2].flops == 24.0);
    zb_gemm_desc bad = g;
    bad.dtype = ZB_DTYPE_COUNT;
    ZB_CHECK(dev->ops->gemm(s, &bad, NULL) == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "dtype") != NULL);
    bad = g;
    bad.k = 0;
    ZB_CHECK(dev->ops->gemm(s, &bad, NULL) == ZB_ERR_INVALID);
    bad = g;
    bad.lda = 2; /* A's rows hold k = 3 elements */
    ZB_CHECK(dev->ops->gemm(s, &bad, NULL) == ZB_ERR_INVALID);
    dev->ops->stream_destroy(s);
    zb_dev_destroy(dev);
    zb_trace_destroy(&trace);
}

/* ---- memory accounting -------------------------------------------------------- */

static void test_alloc_accounting(void) {
    zb_device *dev = make_device(NULL, 10);
    zb_mem_stats st;
    void *p1 = NULL, *p2 = NULL, *p3 = NULL;
    ZB_CHECK_OK(zb_dev_alloc(dev, 1000, ZB_MEM_PARAM_SHARD, &p1));
    ZB_CHECK_OK(zb_dev_alloc(dev, 5000, ZB_MEM_ACTIVATION, &p2));
    ZB_CHECK(((uintptr_t)p1 % 64) == 0 && ((uintptr_t)p2 % 64) == 0);
    dev->ops->mem_stats(dev, &st);
    ZB_CHECK(st.live_bytes[ZB_MEM_PARAM_SHARD] == 1000);
    ZB_CHECK(st.live_bytes[ZB_MEM_ACTIVATION] == 5000);
    ZB_CHECK(st.live_total_bytes == 6000 && st.peak_total_bytes == 6000);
    zb_dev_free(dev, p2);
    ZB_CHECK_OK(zb_dev_alloc(dev, 3000, ZB_MEM_GATHERED_PARAM, &p3));
    dev->ops->mem_stats(dev, &st);
    ZB_CHECK(st.live_bytes[ZB_MEM_ACTIVATION] == 0);
    ZB_CHECK(st.peak_bytes[ZB_MEM_ACTIVATION] == 5000);
    ZB_CHECK(st.peak_bytes[ZB_MEM_GATHERED_PARAM] == 3000);
    ZB_CHECK(st.live_total_bytes == 4000);
    ZB_CHECK_MSG(st.peak_total_bytes == 6000, "total peak %zu, expected 6000 (not the sum of tag peaks)",
                 st.peak_total_bytes);
    size_t reserved = st.reserved_bytes;
    /* The pool reuses a freed block of the same rounded size. */
    void *p4 = NULL;
    zb_dev_free(dev, p3);
    ZB_CHECK_OK(zb_dev_alloc(dev, 3000, ZB_MEM_GATHERED_PARAM, &p4));
    ZB_CHECK(p4 == p3);
    dev->ops->mem_stats(dev, &st);
    ZB_CHECK(st.reserved_bytes == reserved);
    dev->ops->mem_reset_peak(dev);
    dev->ops->mem_stats(dev, &st);
    ZB_CHECK(st.peak_total_bytes == st.live_total_bytes && st.peak_bytes[ZB_MEM_ACTIVATION] == 0);
    zb_dev_free(dev, p4);
    zb_dev_free(dev, p1);
    dev->ops->mem_stats(dev, &st);
    ZB_CHECK(st.live_total_bytes == 0);
    void *bad = NULL;
    ZB_CHECK(zb_dev_alloc(dev, 16, ZB_MEM_TAG_COUNT, &bad) == ZB_ERR_INVALID);
    ZB_CHECK(zb_dev_alloc(dev, (size_t)-1, ZB_MEM_WORKSPACE, &bad) == ZB_ERR_NOMEM);
    zb_dev_destroy(dev);
}

int main(void) {
    test_fifo();
    test_concurrent_streams();
    test_cross_stream_wait();
    test_wait_captures_current_record();
    test_sticky_error();
    test_sync_timeout();
    test_copy_and_gemm();
    test_alloc_accounting();
    return zb_test_finish("test_device_cpu");
}
