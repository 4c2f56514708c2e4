/* What only the CPU device promises, next to the device contract that
 * tests/conformance/test_device_conformance.c checks on every device (FIFO,
 * events, sticky errors, timeouts, accounting, copies, GEMM numerics):
 * ops on two streams really run at once (each stream has its own thread);
 * the device records its own trace records (stream, unit, kind, flops,
 * bytes, rank; an op after a wait starts after the recorded op ended);
 * GEMM refusals are ZB_ERR_INVALID naming the dtype; the pool hands out
 * 64-byte aligned blocks and reuses a freed block without reserving more.
 * Ordering is checked from trace timestamps (dependencies), never from how
 * long anything took. */
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

/* ---- trace records across a wait ----------------------------------------------- */

static zb_status slow_op(void *p) {
    (void)p;
    sleep_ms(30);
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

/* ---- trace records of copies and GEMMs, refusals ------------------------------ */

static void test_copy_and_gemm_records(void) {
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
    zb_bf16 ah[6], bh[6], ch[4] = {0};
    for (int i = 0; i < 6; i++) ah[i] = zb_f32_to_bf16(a[i]), bh[i] = zb_f32_to_bf16(b[i]);
    zb_gemm_desc gh = g;
    gh.a = ah, gh.b = bh, gh.c = ch, gh.dtype = ZB_DTYPE_BF16;
    ZB_CHECK_OK(dev->ops->gemm(s, &gh, NULL));
    ZB_CHECK_OK(dev->ops->stream_sync(s));
    ZB_CHECK(trace.n_records == 3);
    if (trace.n_records == 3) {
        ZB_CHECK(trace.records[0].kind == ZB_OP_COMPUTE && trace.records[0].flops == 24.0);
        ZB_CHECK(trace.records[1].kind == ZB_OP_COPY && trace.records[1].bytes == sizeof a);
        ZB_CHECK(trace.records[2].kind == ZB_OP_COMPUTE && trace.records[2].flops == 24.0);
        ZB_CHECK(trace.records[0].rank == 3 && trace.records[0].stream == s->id);
    }
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
    ZB_CHECK(trace.n_records == 3); /* refused: nothing ran */
    dev->ops->stream_destroy(s);
    zb_dev_destroy(dev);
    zb_trace_destroy(&trace);
}

/* ---- the pool ------------------------------------------------------------------- */

static void test_pool(void) {
    zb_device *dev = make_device(NULL, 10);
    zb_mem_stats st;
    void *p1 = NULL, *p2 = NULL, *p3 = NULL;
    ZB_CHECK_OK(zb_dev_alloc(dev, 1000, ZB_MEM_PARAM_SHARD, &p1));
    ZB_CHECK_OK(zb_dev_alloc(dev, 3000, ZB_MEM_GATHERED_PARAM, &p2));
    ZB_CHECK(((uintptr_t)p1 % 64) == 0 && ((uintptr_t)p2 % 64) == 0);
    dev->ops->mem_stats(dev, &st);
    size_t reserved = st.reserved_bytes;
    /* The pool reuses a freed block of the same rounded size. */
    zb_dev_free(dev, p2);
    ZB_CHECK_OK(zb_dev_alloc(dev, 3000, ZB_MEM_GATHERED_PARAM, &p3));
    ZB_CHECK(p3 == p2);
    dev->ops->mem_stats(dev, &st);
    ZB_CHECK(st.reserved_bytes == reserved);
    zb_dev_free(dev, p3);
    zb_dev_free(dev, p1);
    void *bad = NULL;
    ZB_CHECK(zb_dev_alloc(dev, (size_t)-1, ZB_MEM_WORKSPACE, &bad) == ZB_ERR_NOMEM);
    zb_dev_destroy(dev);
}

int main(void) {
    test_concurrent_streams();
    test_cross_stream_wait();
    test_copy_and_gemm_records();
    test_pool();
    return zb_test_finish("test_device_cpu");
}
