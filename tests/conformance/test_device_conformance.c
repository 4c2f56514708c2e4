/* The device interface's contract (device.h), on every device backend the
 * registry lists that is built and usable here (conformance.h): what the
 * engine relies on whichever device runs it.
 *   - FIFO: host ops on one stream run in issue order; a chain of copies
 *     through one buffer on one stream delivers each copy's data;
 *   - cross-stream events: work after stream_wait_event does not start
 *     before the recorded work ended (a gate holds the producer, so an early
 *     consumer would read stale data), a wait captures the record current
 *     when it is issued, a never-recorded event is complete;
 *   - event query / sync / elapsed, NOT_READY while the gate holds;
 *   - sticky errors: a failing host op fails every later sync of its
 *     stream, later ops are skipped, every cleanup runs, an event recorded
 *     after it still completes;
 *   - the configured timeout: a sync on a stuck stream gives up naming the
 *     stream, and succeeds once the stream drains;
 *   - per-tag memory accounting (live, peak, total peak not the sum of tag
 *     peaks, reset), refusals of a bad tag and an impossible size;
 *   - memcpy host -> device -> device -> host of an odd size;
 *   - GEMM against a double-precision reference: fp32, bf16 inputs with a
 *     bf16 C and with an fp32 C, all four transposes, odd shapes, padded
 *     strides (padding untouched), beta 0 and beta != 0; refused shapes.
 * Every ordering check is causal (a gate released by the test, data that
 * could only be right in the promised order), never a duration.
 * Backend-specific checks stay in test_device_cpu.c and
 * tests/gpu/test_device_cuda.c. Argument: one backend name to check alone
 * (exit 77 when it cannot run here). */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "conformance.h"
#include "dtype_access.h"
#include "unit/kernel_test_util.h"

#define SUITE "test_device_conformance"

static const char *backend; /* the one being checked, for messages */
static const zb_device_backend *entry; /* its registry entry */
static uint64_t rng = 0xdec0de;

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- host ops used as probes ----------------------------------------------------- */

/* Holds its stream until the test opens the gate (bounded: a broken device
 * fails after 20 s instead of hanging). */
static zb_status gate_op(void *p) {
    atomic_int *gate = (atomic_int *)p;
    for (int i = 0; i < 20000 && !atomic_load(gate); i++) sleep_ms(1);
    return atomic_load(gate) ? ZB_OK : ZB_FAIL(ZB_ERR_TIMEOUT, "test gate never opened");
}

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
    if (slot < 256) a->log->order[slot] = a->id;
    return ZB_OK;
}

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

static bool has_host_ops(zb_device *dev, const char *what) {
    if (dev->ops->launch_host) return true;
    printf("%s: %s: %s skipped: the device runs no host ops\n", SUITE, backend, what);
    return false;
}

/* ---- FIFO ------------------------------------------------------------------------ */

static void test_fifo(zb_device *dev) {
    zb_stream *s = NULL;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "fifo", &s));
    if (!s) return;
    if (has_host_ops(dev, "host-op FIFO")) {
        seq_log log;
        memset(&log, 0, sizeof log);
        seq_arg args[200];
        for (int i = 0; i < 200; i++) {
            args[i] = (seq_arg){&log, i};
            ZB_CHECK_OK(dev->ops->launch_host(s, log_op, &args[i], NULL, NULL));
        }
        ZB_CHECK_OK(dev->ops->stream_sync(s));
        int in_order = atomic_load(&log.next) == 200;
        for (int i = 0; i < 200 && in_order; i++) in_order = log.order[i] == i;
        ZB_CHECK_MSG(in_order, "%s: host ops on one stream ran out of issue order", backend);
    }
    if (!zc_holds_data(SUITE, entry, "copy-chain FIFO")) {
        dev->ops->stream_destroy(s);
        return;
    }
    /* Copies through one buffer X: src_r -> X -> dst_r, round after round;
     * dst_r holds src_r only if every copy ran after the one before it. */
    enum { ROUNDS = 6 };
    const size_t n = 65539;
    const size_t bytes = n * sizeof(float);
    float *h = (float *)malloc(bytes);
    void *src[ROUNDS], *dst[ROUNDS], *x = zc_dev_poisoned(s, bytes, ZB_MEM_WORKSPACE);
    for (int r = 0; r < ROUNDS; r++) {
        for (size_t i = 0; i < n; i++) h[i] = (float)(r * 1000003 + (int)i);
        src[r] = zc_dev_copy_of(s, h, bytes, ZB_MEM_WORKSPACE);
        dst[r] = zc_dev_poisoned(s, bytes, ZB_MEM_WORKSPACE);
    }
    for (int r = 0; r < ROUNDS; r++) {
        ZB_CHECK_OK(dev->ops->memcpy_async(s, x, src[r], bytes, NULL));
        ZB_CHECK_OK(dev->ops->memcpy_async(s, dst[r], x, bytes, NULL));
    }
    ZB_CHECK_OK(dev->ops->stream_sync(s));
    for (int r = 0; r < ROUNDS; r++) {
        zc_download(s, h, dst[r], bytes);
        size_t wrong = 0;
        for (size_t i = 0; i < n; i++) wrong += h[i] != (float)(r * 1000003 + (int)i);
        ZB_CHECK_MSG(wrong == 0, "%s: copy chain round %d: %zu of %zu elements wrong", backend, r,
                     wrong, n);
        zb_dev_free(dev, src[r]);
        zb_dev_free(dev, dst[r]);
    }
    zb_dev_free(dev, x);
    free(h);
    dev->ops->stream_destroy(s);
}

/* ---- events ---------------------------------------------------------------------- */

/* producer: gate, copy A -> X, record; consumer: wait, copy X -> Y. X starts
 * as zeros: a consumer that did not wait would copy zeros. */
static void test_cross_stream_wait(zb_device *dev) {
    if (!has_host_ops(dev, "cross-stream wait")) return;
    zb_stream *prod = NULL, *cons = NULL;
    zb_event *ev = NULL;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "producer", &prod));
    ZB_CHECK_OK(dev->ops->stream_create(dev, "consumer", &cons));
    ZB_CHECK_OK(dev->ops->event_create(dev, &ev));
    if (!prod || !cons || !ev) return;
    const size_t n = 4099, bytes = n * sizeof(float);
    float *h = (float *)calloc(n, sizeof(float));
    void *x = zc_dev_copy_of(prod, h, bytes, ZB_MEM_WORKSPACE);
    for (size_t i = 0; i < n; i++) h[i] = 1.0f + (float)i;
    void *a = zc_dev_copy_of(prod, h, bytes, ZB_MEM_WORKSPACE);
    void *y = zc_dev_poisoned(prod, bytes, ZB_MEM_WORKSPACE);
    for (int round = 0; round < 3; round++) {
        atomic_int gate = 0;
        ZB_CHECK_OK(dev->ops->launch_host(prod, gate_op, &gate, NULL, NULL));
        ZB_CHECK_OK(dev->ops->memcpy_async(prod, x, a, bytes, NULL));
        ZB_CHECK_OK(dev->ops->event_record(ev, prod));
        ZB_CHECK_OK(dev->ops->stream_wait_event(cons, ev));
        ZB_CHECK_OK(dev->ops->memcpy_async(cons, y, x, bytes, NULL));
        ZB_CHECK_MSG(dev->ops->event_query(ev) == ZB_ERR_NOT_READY,
                     "%s: an event behind a closed gate reads complete", backend);
        atomic_store(&gate, 1);
        ZB_CHECK_OK(dev->ops->stream_sync(cons));
        ZB_CHECK_OK(dev->ops->stream_sync(prod));
        float *got = (float *)malloc(bytes);
        zc_download(cons, got, y, bytes);
        size_t wrong = 0;
        for (size_t i = 0; i < n; i++) wrong += got[i] != h[i];
        ZB_CHECK_MSG(wrong == 0, "%s: round %d: the consumer read %zu of %zu elements before the "
                     "producer wrote them", backend, round, wrong, n);
        free(got);
        /* next round: X and Y zero again */
        got = (float *)calloc(n, sizeof(float));
        zc_upload(prod, x, got, bytes);
        zc_upload(prod, y, got, bytes);
        free(got);
    }
    zb_dev_free(dev, x);
    zb_dev_free(dev, a);
    zb_dev_free(dev, y);
    free(h);
    dev->ops->event_destroy(ev);
    dev->ops->stream_destroy(prod);
    dev->ops->stream_destroy(cons);
}

/* Never-recorded events; a wait captures the record current when issued;
 * query and sync around a gate; elapsed between two records in order. */
static void test_events(zb_device *dev) {
    zb_stream *a = NULL, *b = NULL;
    zb_event *ev = NULL, *e0 = NULL, *e1 = NULL;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "a", &a));
    ZB_CHECK_OK(dev->ops->stream_create(dev, "b", &b));
    ZB_CHECK_OK(dev->ops->event_create(dev, &ev));
    ZB_CHECK_OK(dev->ops->event_create(dev, &e0));
    ZB_CHECK_OK(dev->ops->event_create(dev, &e1));
    if (!a || !b || !ev || !e0 || !e1) return;
    /* Never recorded: complete, and waiting on it does not block. */
    ZB_CHECK_MSG(dev->ops->event_query(ev) == ZB_OK, "%s: a never-recorded event is not complete",
                 backend);
    ZB_CHECK_OK(dev->ops->event_sync(ev));
    ZB_CHECK_OK(dev->ops->stream_wait_event(b, ev));
    ZB_CHECK_OK(dev->ops->stream_sync(b));
    double ms = -1;
    ZB_CHECK(dev->ops->event_elapsed_ms(e0, e1, &ms) == ZB_ERR_NOT_READY);
    zb_error_clear();
    if (!has_host_ops(dev, "event query behind a gate")) goto out;

    atomic_int gate = 0;
    ZB_CHECK_OK(dev->ops->event_record(ev, a)); /* record 1: nothing before it */
    ZB_CHECK_OK(dev->ops->event_sync(ev));
    ZB_CHECK_OK(dev->ops->stream_wait_event(b, ev)); /* waits on record 1 only */
    ZB_CHECK_OK(dev->ops->event_record(e0, a));
    ZB_CHECK_OK(dev->ops->launch_host(a, gate_op, &gate, NULL, NULL));
    ZB_CHECK_OK(dev->ops->event_record(ev, a)); /* record 2: behind the gate */
    ZB_CHECK_OK(dev->ops->event_record(e1, a));
    ZB_CHECK(dev->ops->event_query(ev) == ZB_ERR_NOT_READY);
    ZB_CHECK_MSG(dev->ops->stream_sync(b) == ZB_OK, "%s: a wait issued before a re-record "
                 "waited for the new record", backend);
    ZB_CHECK(dev->ops->event_query(ev) == ZB_ERR_NOT_READY);
    ZB_CHECK(dev->ops->event_elapsed_ms(e0, e1, &ms) == ZB_ERR_NOT_READY);
    zb_error_clear();
    atomic_store(&gate, 1);
    ZB_CHECK_OK(dev->ops->event_sync(ev));
    ZB_CHECK(dev->ops->event_query(ev) == ZB_OK);
    ZB_CHECK_OK(dev->ops->event_sync(e1));
    ZB_CHECK_OK(dev->ops->event_elapsed_ms(e0, e1, &ms));
    ZB_CHECK_MSG(ms >= 0.0 && isfinite(ms), "%s: elapsed from an earlier record to a later one is "
                 "%g ms", backend, ms);
    ZB_CHECK_OK(dev->ops->stream_sync(a));
out:
    dev->ops->event_destroy(ev);
    dev->ops->event_destroy(e0);
    dev->ops->event_destroy(e1);
    dev->ops->stream_destroy(a);
    dev->ops->stream_destroy(b);
}

/* ---- sticky errors and the timeout ------------------------------------------------ */

static void test_sticky_error(zb_device *dev) {
    if (!has_host_ops(dev, "sticky errors")) return;
    zb_stream *s = NULL, *other = NULL;
    zb_event *ev = NULL;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "s", &s));
    ZB_CHECK_OK(dev->ops->stream_create(dev, "other", &other));
    ZB_CHECK_OK(dev->ops->event_create(dev, &ev));
    if (!s || !other || !ev) return;
    atomic_int ran = 0;
    atomic_store(&cleanups, 0);
    ZB_CHECK_OK(dev->ops->launch_host(s, failing_op, NULL, count_cleanup, NULL));
    ZB_CHECK_OK(dev->ops->launch_host(s, count_op, &ran, count_cleanup, NULL));
    ZB_CHECK_OK(dev->ops->event_record(ev, s));
    ZB_CHECK_OK(dev->ops->stream_wait_event(other, ev));
    ZB_CHECK_OK(dev->ops->stream_sync(other)); /* the record still completed */
    zb_status st = dev->ops->stream_sync(s);
    ZB_CHECK_MSG(st == ZB_ERR_WRONG, "%s: sync after a failed op: %s", backend, zb_status_name(st));
    ZB_CHECK(strstr(zb_error_message(), "deliberate failure") != NULL);
    ZB_CHECK_MSG(dev->ops->stream_sync(s) == ZB_ERR_WRONG, "%s: the error is not sticky", backend);
    ZB_CHECK_MSG(atomic_load(&ran) == 0, "%s: an op after a failed op still ran", backend);
    ZB_CHECK_MSG(atomic_load(&cleanups) == 2, "%s: cleanups ran %d times, expected 2", backend,
                 atomic_load(&cleanups));
    zb_error_clear();
    dev->ops->event_destroy(ev);
    dev->ops->stream_destroy(s);
    dev->ops->stream_destroy(other);
}

static void test_sync_timeout(const zb_device_backend *b) {
    zb_device *dev = zc_device_create(b, 0, 0.2);
    if (!dev) return;
    if (has_host_ops(dev, "sync timeout")) {
        zb_stream *s = NULL;
        ZB_CHECK_OK(dev->ops->stream_create(dev, "stuck", &s));
        atomic_int gate = 0;
        ZB_CHECK_OK(dev->ops->launch_host(s, gate_op, &gate, NULL, NULL));
        zb_status st = dev->ops->stream_sync(s);
        ZB_CHECK_MSG(st == ZB_ERR_TIMEOUT, "%s: sync of a stuck stream: %s", backend,
                     zb_status_name(st));
        ZB_CHECK_MSG(strstr(zb_error_message(), "stuck") != NULL, "%s: '%s' does not name the "
                     "stream", backend, zb_error_message());
        atomic_store(&gate, 1);
        st = ZB_ERR_TIMEOUT; /* each try gives up after 0.2 s until the gate op has returned */
        for (int i = 0; i < 100 && st == ZB_ERR_TIMEOUT; i++) st = dev->ops->stream_sync(s);
        ZB_CHECK_OK(st);
        dev->ops->stream_destroy(s);
    }
    zb_dev_destroy(dev);
}

/* ---- memory ---------------------------------------------------------------------- */

/* Host staging memory (device.h): where the device's memory is host memory
 * (cpu) alloc takes the host tag; elsewhere alloc_host takes it and only it,
 * and alloc refuses it. Either way the bytes are counted under the tag and
 * stay out of the live and peak totals, which are device memory. */
static void test_host_staging_memory(zb_device *dev) {
    const size_t H = 12345;
    bool host = zb_dev_mem_is_host(dev);
    if (!host && !dev->ops->alloc_host) {
        printf("# %s: no host staging memory, host_staging not checked\n", backend);
        return;
    }
    zb_mem_stats s0, st;
    dev->ops->mem_reset_peak(dev);
    dev->ops->mem_stats(dev, &s0);
    void *h = NULL, *bad = NULL;
    if (host) {
        ZB_CHECK_OK(zb_dev_alloc(dev, H, ZB_MEM_HOST_STAGING, &h));
    } else {
        ZB_CHECK(zb_dev_alloc(dev, H, ZB_MEM_HOST_STAGING, &bad) == ZB_ERR_INVALID && !bad);
        ZB_CHECK(dev->ops->alloc_host(dev, H, ZB_MEM_COMM_BUFFER, &bad) == ZB_ERR_INVALID && !bad);
        zb_error_clear();
        ZB_CHECK_OK(dev->ops->alloc_host(dev, H, ZB_MEM_HOST_STAGING, &h));
    }
    dev->ops->mem_stats(dev, &st);
    ZB_CHECK(st.live_bytes[ZB_MEM_HOST_STAGING] - s0.live_bytes[ZB_MEM_HOST_STAGING] == H);
    ZB_CHECK(st.peak_bytes[ZB_MEM_HOST_STAGING] - s0.live_bytes[ZB_MEM_HOST_STAGING] == H);
    ZB_CHECK_MSG(st.live_total_bytes == s0.live_total_bytes && st.peak_total_bytes == s0.peak_total_bytes,
                 "%s: %zu bytes of host staging moved the device totals (live %zu -> %zu, peak %zu -> %zu)",
                 backend, H, s0.live_total_bytes, st.live_total_bytes, s0.peak_total_bytes, st.peak_total_bytes);
    if (host) zb_dev_free(dev, h);
    else dev->ops->free_host(dev, h);
    dev->ops->mem_stats(dev, &st);
    ZB_CHECK(st.live_bytes[ZB_MEM_HOST_STAGING] == s0.live_bytes[ZB_MEM_HOST_STAGING]);
    ZB_CHECK(st.live_total_bytes == s0.live_total_bytes && st.peak_total_bytes == s0.peak_total_bytes);
}

static void test_memory(zb_device *dev) {
    zb_mem_stats s0, st;
    dev->ops->mem_stats(dev, &s0);
    const size_t P = 1000, A = 5000, G = 3000;
    void *p = NULL, *a = NULL, *g = NULL;
    ZB_CHECK_OK(zb_dev_alloc(dev, P, ZB_MEM_PARAM_SHARD, &p));
    ZB_CHECK_OK(zb_dev_alloc(dev, A, ZB_MEM_ACTIVATION, &a));
    dev->ops->mem_stats(dev, &st);
    ZB_CHECK(st.live_bytes[ZB_MEM_PARAM_SHARD] - s0.live_bytes[ZB_MEM_PARAM_SHARD] == P);
    ZB_CHECK(st.live_bytes[ZB_MEM_ACTIVATION] - s0.live_bytes[ZB_MEM_ACTIVATION] == A);
    ZB_CHECK(st.live_total_bytes - s0.live_total_bytes == P + A);
    ZB_CHECK(st.peak_total_bytes >= st.live_total_bytes);
    ZB_CHECK(st.reserved_bytes >= st.live_total_bytes && st.peak_reserved_bytes >= st.reserved_bytes);
    dev->ops->mem_reset_peak(dev);
    dev->ops->mem_stats(dev, &st);
    size_t peak_before = st.peak_total_bytes; /* = live: P + A above s0 */
    ZB_CHECK(peak_before == st.live_total_bytes);
    zb_dev_free(dev, a);
    ZB_CHECK_OK(zb_dev_alloc(dev, G, ZB_MEM_GATHERED_PARAM, &g));
    dev->ops->mem_stats(dev, &st);
    ZB_CHECK(st.live_bytes[ZB_MEM_ACTIVATION] == s0.live_bytes[ZB_MEM_ACTIVATION]);
    ZB_CHECK(st.peak_bytes[ZB_MEM_ACTIVATION] - s0.live_bytes[ZB_MEM_ACTIVATION] == A);
    ZB_CHECK(st.peak_bytes[ZB_MEM_GATHERED_PARAM] - s0.live_bytes[ZB_MEM_GATHERED_PARAM] == G);
    ZB_CHECK(st.live_total_bytes - s0.live_total_bytes == P + G);
    ZB_CHECK_MSG(st.peak_total_bytes == peak_before, "%s: total peak %zu, expected %zu (the highest "
                 "live total, not the sum of the tags' peaks)", backend, st.peak_total_bytes,
                 peak_before);
    dev->ops->mem_reset_peak(dev);
    dev->ops->mem_stats(dev, &st);
    ZB_CHECK(st.peak_total_bytes == st.live_total_bytes);
    ZB_CHECK(st.peak_bytes[ZB_MEM_ACTIVATION] == st.live_bytes[ZB_MEM_ACTIVATION]);
    zb_dev_free(dev, g);
    zb_dev_free(dev, p);
    dev->ops->mem_stats(dev, &st);
    ZB_CHECK(st.live_total_bytes == s0.live_total_bytes);
    for (int t = 0; t < ZB_MEM_TAG_COUNT; t++) ZB_CHECK(st.live_bytes[t] == s0.live_bytes[t]);
    test_host_staging_memory(dev);
    void *bad = NULL;
    ZB_CHECK(zb_dev_alloc(dev, 16, ZB_MEM_TAG_COUNT, &bad) == ZB_ERR_INVALID);
    zb_status big = zb_dev_alloc(dev, (size_t)-1, ZB_MEM_WORKSPACE, &bad); /* no machine has it */
    ZB_CHECK_MSG(big != ZB_OK && bad == NULL, "%s: an allocation of SIZE_MAX bytes: %s", backend,
                 zb_status_name(big));
    zb_error_clear();
    void *ok = NULL; /* and the device still allocates */
    ZB_CHECK_OK(zb_dev_alloc(dev, 4096, ZB_MEM_WORKSPACE, &ok));
    if (ok) zb_dev_free(dev, ok);
}

/* ---- copies ------------------------------------------------------------------------ */

static void test_memcpy(zb_device *dev) {
    if (!zc_holds_data(SUITE, entry, "memcpy round trip")) return;
    zb_stream *s = NULL;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "copies", &s));
    if (!s) return;
    const size_t n = ((size_t)1 << 18) + 3, bytes = n * sizeof(float);
    float *in = (float *)malloc(bytes), *out = (float *)malloc(bytes);
    for (size_t i = 0; i < n; i++) in[i] = kt_uniform(&rng);
    memset(out, 0, bytes);
    void *d1 = NULL, *d2 = NULL;
    ZB_CHECK_OK(zb_dev_alloc(dev, bytes, ZB_MEM_ACTIVATION, &d1));
    ZB_CHECK_OK(zb_dev_alloc(dev, bytes, ZB_MEM_ACTIVATION, &d2));
    ZB_CHECK_OK(dev->ops->memcpy_async(s, d1, in, bytes, NULL));
    ZB_CHECK_OK(dev->ops->memcpy_async(s, d2, d1, bytes, NULL));
    ZB_CHECK_OK(dev->ops->memcpy_async(s, out, d2, bytes, NULL));
    ZB_CHECK_OK(dev->ops->stream_sync(s));
    ZB_CHECK_MSG(memcmp(in, out, bytes) == 0, "%s: host -> device -> device -> host changed the "
                 "data", backend);
    /* a copy into the middle of a buffer leaves its neighbours alone */
    float mid[3] = {-1.0f, -2.0f, -3.0f};
    ZB_CHECK_OK(dev->ops->memcpy_async(s, (float *)d2 + 5, mid, sizeof mid, NULL));
    ZB_CHECK_OK(dev->ops->memcpy_async(s, out, d2, 16 * sizeof(float), NULL));
    ZB_CHECK_OK(dev->ops->stream_sync(s));
    int ok = out[4] == in[4] && out[5] == -1.0f && out[7] == -3.0f && out[8] == in[8];
    ZB_CHECK_MSG(ok, "%s: a 12-byte copy at offset 20 wrote outside its range", backend);
    zb_dev_free(dev, d1);
    zb_dev_free(dev, d2);
    free(in);
    free(out);
    dev->ops->stream_destroy(s);
}

/* ---- GEMM ---------------------------------------------------------------------------- */

#define SENTINEL 12345.0f /* C's row padding, and C before a beta = 0 GEMM */

typedef struct gemm_case {
    zb_dtype in, out; /* A, B storage; C storage (c_f32: out = fp32 behind bf16) */
    bool ta, tb;
    float beta;
    double bound; /* max |C - ref| / max |ref| */
} gemm_case;

/* One GEMM M x N x K on the device against the double reference on the same
 * (rounded) inputs. Rows of A, B, C are padded; C's padding must stay. */
static void gemm_one(zb_stream *s, const gemm_case *gc, int64_t M, int64_t N, int64_t K) {
    zb_device *dev = s->dev;
    int64_t ar = gc->ta ? K : M, ac = gc->ta ? M : K; /* A as stored */
    int64_t br = gc->tb ? N : K, bc = gc->tb ? K : N;
    int64_t lda = ac + 3, ldb = bc + 1, ldc = N + 2;
    size_t na = (size_t)(ar * lda), nb = (size_t)(br * ldb), nc = (size_t)(M * ldc);
    size_t ei = zb_dtype_size(gc->in), eo = zb_dtype_size(gc->out);
    char *ha = (char *)malloc(na * ei), *hb = (char *)malloc(nb * ei);
    char *hc = (char *)malloc(nc * eo), *got = (char *)malloc(nc * eo);
    for (size_t i = 0; i < na; i++) zb_dtype_store(ha, i, gc->in, kt_uniform(&rng));
    for (size_t i = 0; i < nb; i++) zb_dtype_store(hb, i, gc->in, kt_uniform(&rng));
    for (size_t i = 0; i < nc; i++) {
        bool pad = (int64_t)(i % (size_t)ldc) >= N;
        zb_dtype_store(hc, i, gc->out, pad || gc->beta == 0.0f ? SENTINEL : kt_uniform(&rng));
    }
    const float alpha = 0.75f;
    void *da = zc_dev_copy_of(s, ha, na * ei, ZB_MEM_WORKSPACE);
    void *db = zc_dev_copy_of(s, hb, nb * ei, ZB_MEM_WORKSPACE);
    void *dc = zc_dev_copy_of(s, hc, nc * eo, ZB_MEM_WORKSPACE);
    zb_gemm_desc g = {gc->ta, gc->tb, M, N, K, alpha, gc->beta, da, lda, db, ldb, dc, ldc, gc->in,
                      gc->in == ZB_DTYPE_BF16 && gc->out == ZB_DTYPE_F32};
    ZB_CHECK_OK(dev->ops->gemm(s, &g, NULL));
    ZB_CHECK_OK(dev->ops->stream_sync(s));
    zc_download(s, got, dc, nc * eo);
    double scale = 0.0, worst = 0.0;
    size_t pad_changed = 0;
    double *ref = (double *)malloc((size_t)(M * N) * sizeof *ref);
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) {
            double acc = 0.0;
            for (int64_t p = 0; p < K; p++) {
                double x = zb_dtype_load(ha, (size_t)(gc->ta ? p * lda + i : i * lda + p), gc->in);
                double y = zb_dtype_load(hb, (size_t)(gc->tb ? j * ldb + p : p * ldb + j), gc->in);
                acc += x * y;
            }
            double c0 = gc->beta == 0.0f ? 0.0 : zb_dtype_load(hc, (size_t)(i * ldc + j), gc->out);
            ref[i * N + j] = alpha * acc + gc->beta * c0;
            scale = fmax(scale, fabs(ref[i * N + j]));
        }
    }
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < ldc; j++) {
            float v = zb_dtype_load(got, (size_t)(i * ldc + j), gc->out);
            if (j >= N) {
                pad_changed += v != zb_dtype_load(hc, (size_t)(i * ldc + j), gc->out);
                continue;
            }
            double e = fabs((double)v - ref[i * N + j]);
            if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
        }
    }
    double rel = worst / (scale > 0.0 ? scale : 1.0);
    ZB_CHECK_MSG(rel <= gc->bound, "%s: GEMM %lldx%lldx%lld %s%s -> %s%s trans %d%d beta %g: max err "
                 "%.3e of max |ref|, bound %.0e", backend, (long long)M, (long long)N,
                 (long long)K, zb_dtype_name(gc->in), "", zb_dtype_name(gc->out),
                 g.c_f32 ? " (c_f32)" : "", gc->ta, gc->tb, (double)gc->beta, rel, gc->bound);
    ZB_CHECK_MSG(pad_changed == 0, "%s: GEMM wrote %zu padding elements of C", backend,
                 pad_changed);
    free(ref);
    zb_dev_free(dev, da);
    zb_dev_free(dev, db);
    zb_dev_free(dev, dc);
    free(ha), free(hb), free(hc), free(got);
}

static void test_gemm(zb_device *dev) {
    zb_stream *s = NULL;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "gemm", &s));
    if (!s) return;
    /* Bounds: fp32 sums of 53 terms in any order stay far below 1e-5 of the
     * largest result; a bf16 C is rounded once (2^-8 of the value); an fp32 C
     * behind bf16 inputs may be accumulated by truncating hardware (1e-4). */
    static const struct {
        zb_dtype in, out;
        double bound;
    } types[] = {{ZB_DTYPE_F32, ZB_DTYPE_F32, 1e-5},
                 {ZB_DTYPE_BF16, ZB_DTYPE_BF16, 1e-2},
                 {ZB_DTYPE_BF16, ZB_DTYPE_F32, 1e-4}};
    bool data = zc_holds_data(SUITE, entry, "GEMM results");
    for (size_t t = 0; data && t < sizeof types / sizeof types[0]; t++) {
        for (int tr = 0; tr < 4; tr++) {
            for (int bi = 0; bi < 2; bi++) {
                gemm_case gc = {types[t].in, types[t].out, tr & 1, (tr >> 1) & 1,
                                bi ? 0.5f : 0.0f, types[t].bound};
                gemm_one(s, &gc, 37, 29, 53);
            }
        }
    }
    gemm_case one = {ZB_DTYPE_F32, ZB_DTYPE_F32, false, false, 0.0f, 1e-5};
    if (data) gemm_one(s, &one, 1, 1, 1);
    /* Refused at issue, and the stream still works afterwards. */
    float *x = zc_dev_poisoned(s, 64 * sizeof(float), ZB_MEM_WORKSPACE);
    zb_gemm_desc g = {false, false, 2, 2, 3, 1.0f, 0.0f, x, 3, x + 8, 2, x + 16, 2, ZB_DTYPE_F32,
                      false};
    zb_gemm_desc bad = g;
    bad.dtype = ZB_DTYPE_COUNT;
    ZB_CHECK_MSG(dev->ops->gemm(s, &bad, NULL) != ZB_OK, "%s: GEMM of an unknown dtype accepted",
                 backend);
    bad = g;
    bad.k = 0;
    ZB_CHECK_MSG(dev->ops->gemm(s, &bad, NULL) != ZB_OK, "%s: GEMM with k = 0 accepted", backend);
    bad = g;
    bad.lda = 2; /* A's rows hold k = 3 elements */
    ZB_CHECK_MSG(dev->ops->gemm(s, &bad, NULL) != ZB_OK, "%s: GEMM with lda < k accepted", backend);
    zb_error_clear();
    ZB_CHECK_OK(dev->ops->stream_sync(s));
    zb_dev_free(dev, x);
    if (data) gemm_one(s, &one, 3, 5, 7);
    dev->ops->stream_destroy(s);
}

int main(int argc, char **argv) {
    const char *only = zc_only(argc, argv);
    size_t n = 0;
    const zb_device_backend *const *all = zb_device_backends(&n);
    int checked = 0;
    for (size_t i = 0; i < n; i++) {
        if (!zc_device_usable(SUITE, all[i], only)) continue;
        backend = all[i]->name;
        entry = all[i];
        int failures_before = zb_test_failures;
        zb_device *dev = zc_device_create(all[i], 0, 60.0);
        if (!dev) continue;
        checked++;
        test_fifo(dev);
        test_cross_stream_wait(dev);
        test_events(dev);
        test_sticky_error(dev);
        test_memory(dev);
        test_memcpy(dev);
        test_gemm(dev);
        zb_dev_destroy(dev);
        test_sync_timeout(all[i]);
        printf("%s: %s: %s\n", SUITE, backend,
               zb_test_failures == failures_before ? "conforms" : "FAILED");
    }
    return zc_finish(SUITE, only, checked);
}
