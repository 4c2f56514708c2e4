/* The real CUPTI tracer (harness/device/cuda/cupti_tracer.c) driven end to
 * end against a fake libcupti (tests/unit/fake_cupti.c, loaded through
 * ZB_CUPTI_LIBRARY), so the path from CUPTI's entry points to harness trace
 * records runs without a GPU (label unit; CUDA builds with CUPTI's headers
 * only). tests/unit/test_cupti_map.c checks the record mapping alone; this
 * test checks what only the tracer does: which CUPTI calls it makes (kinds
 * enabled, polling calls switched off, the timestamp callback, external ids
 * pushed and popped around each op, a forced flush, finalize), that the
 * records CUPTI delivers in its buffers reach the zb_trace with their kinds,
 * labels, units, streams and bytes on the harness clock (a copy correlated
 * to a comm op is comm: the one-rank NCCL case), that its counters and the
 * cuda registry entry's tracer_stats count what CUPTI dropped, and the clock
 * decision at start (cupti_tracer.h, docs/design.md §9): CUPTI on
 * CLOCK_MONOTONIC (as read, or through the registered callback) starts with
 * no note; a CLOCK_REALTIME-like clock starts with a note and its records
 * converted onto the harness clock; a clock that does not advance, a
 * libcupti of another major version and a CUPTI held by another profiler
 * refuse to start with a one-line reason, leaving nothing enabled. The
 * tracer is started and stopped once per case in this one process.
 *
 * Fake CUDA streams: handle 3 = compute (zerobench stream 0), handle 7 =
 * comm (zerobench stream 1); the fake names them CUPTI ids 31 and 71
 * (FAKE_CUPTI_STREAM_ID). CUPTI ids 55 (a library's own stream, as NCCL's)
 * and 42 are never registered. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_tracer.h"
#include "device_backend.h"
#include "fake_cupti.h"
#include "registry.h"
#include "zb_test.h"

#define H_COMPUTE ((const void *)(uintptr_t)3)
#define H_COMM ((const void *)(uintptr_t)7)
#define CS_COMPUTE FAKE_CUPTI_STREAM_ID(H_COMPUTE)
#define CS_COMM FAKE_CUPTI_STREAM_ID(H_COMM)
#define CS_LIBRARY 55u
#define CS_STRAY 42u
#define ZS_COMPUTE 0
#define ZS_COMM 1
#define REALTIME_OFFSET 1700000000000000000LL /* about CLOCK_REALTIME - CLOCK_MONOTONIC */
#define TOL_NS 50000 /* conversion error allowed beyond the bracket of a stamp */

static const fake_cupti_ctl *F;

static bool load_fake(void) {
    const char *path = getenv("ZB_CUPTI_LIBRARY");
    void *h = path ? dlopen(path, RTLD_NOW) : NULL;
    fake_cupti_control_fn fn = h ? (fake_cupti_control_fn)dlsym(h, FAKE_CUPTI_CONTROL_SYMBOL) : NULL;
    if (!fn) {
        fprintf(stderr, "test_cupti_fake: cannot load the fake libcupti from ZB_CUPTI_LIBRARY=%s%s%s\n",
                path ? path : "(unset)", path ? ": " : "", path ? dlerror() : "");
        return false;
    }
    F = fn();
    return true;
}

static int n_enabled(void) {
    int n = 0;
    for (int k = 0; k < FAKE_CUPTI_MAX_KIND; k++) n += F->log()->enabled[k];
    return n;
}

/* The fake's clock read between two harness clock readings: a record the
 * fake stamps at fake + d must land within [lo + d, hi + d] on the harness
 * clock, give or take TOL_NS of conversion error (however slow the machine). */
typedef struct stamp {
    int64_t lo, hi;
    uint64_t fake;
} stamp;

static stamp take_stamp(void) {
    stamp s;
    s.lo = zb_now_ns();
    s.fake = F->now();
    s.hi = zb_now_ns();
    return s;
}

static bool lands(int64_t got, stamp s, int64_t d) {
    return got >= s.lo + d - TOL_NS && got <= s.hi + d + TOL_NS;
}

static const zb_trace_record *find(const zb_trace *t, const char *label, zb_op_kind kind) {
    for (size_t i = 0; i < t->n_records; i++) {
        if (strcmp(t->records[i].label, label) == 0 && t->records[i].kind == kind) return &t->records[i];
    }
    return NULL;
}

static const fake_cupti_corr_event *corr_event(int i) {
    const fake_cupti_log *l = F->log();
    return i < l->n_corr ? &l->corr[i] : NULL;
}

/* Checks a refused start: the status, a one-line reason containing `why`,
 * nothing left enabled, not running. */
static void check_refused(zb_status s, const char *why) {
    const char *reason = zb_cupti_unavailable_reason();
    ZB_CHECK_MSG(s == ZB_ERR_UNSUPPORTED, "zb_cupti_start returned %d, want ZB_ERR_UNSUPPORTED", (int)s);
    ZB_CHECK_MSG(strstr(reason, why) != NULL, "reason \"%s\" lacks \"%s\"", reason, why);
    ZB_CHECK_MSG(strchr(reason, '\n') == NULL, "reason is not one line: \"%s\"", reason);
    ZB_CHECK(strstr(zb_error_message(), why) != NULL);
    ZB_CHECK_MSG(n_enabled() == 0, "%d activity kinds left enabled after a refused start", n_enabled());
    ZB_CHECK(!zb_cupti_active());
    ZB_CHECK(zb_cupti_clock_note()[0] == '\0');
}

/* First in the process: the library's version is checked when it loads. */
static void test_version_refused(void) {
    F->reset();
    F->set_version(120000);
    zb_trace t;
    ZB_CHECK_OK(zb_trace_init(&t, 0, true));
    check_refused(zb_cupti_start(&t, -1), "API version 120000");
    ZB_CHECK(F->log()->n_enable_calls == 0);
    zb_trace_destroy(&t);
}

static void test_other_profiler_refused(void) {
    F->reset();
    F->fail_enable(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    zb_trace t;
    ZB_CHECK_OK(zb_trace_init(&t, 0, true));
    check_refused(zb_cupti_start(&t, -1), "Nsight Systems");
    ZB_CHECK(F->log()->n_enable_calls > 1); /* it got as far as DRIVER, then undid the rest */
    zb_trace_destroy(&t);
}

static void test_frozen_clock_refused(void) {
    F->reset();
    F->set_clock(0, false, true);
    zb_trace t;
    ZB_CHECK_OK(zb_trace_init(&t, 0, true));
    check_refused(zb_cupti_start(&t, -1), "does not advance");
    ZB_CHECK(zb_cupti_flush() == ZB_ERR_UNSUPPORTED);
    zb_trace_destroy(&t);
}

/* What start must have asked of CUPTI. */
static void check_started(bool want_timestamp_cb) {
    const fake_cupti_log *l = F->log();
    ZB_CHECK(zb_cupti_active());
    ZB_CHECK(l->n_register_callbacks == 1 && l->buffer_requested && l->buffer_completed);
    const CUpti_ActivityKind want[] = {
        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
        CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_RUNTIME,
        CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,   CUPTI_ACTIVITY_KIND_OVERHEAD};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        ZB_CHECK_MSG(l->enabled[want[i]], "activity kind %d not enabled", (int)want[i]);
    }
    ZB_CHECK(n_enabled() == (int)(sizeof want / sizeof want[0]));
    ZB_CHECK(!l->enabled[CUPTI_ACTIVITY_KIND_KERNEL]); /* would serialize kernels */
    bool stream_query_off = false, cu_stream_query_off = false;
    for (int i = 0; i < l->n_runtime_off; i++) {
        stream_query_off |= l->runtime_off[i] == CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020;
    }
    for (int i = 0; i < l->n_driver_off; i++) {
        cu_stream_query_off |= l->driver_off[i] == CUPTI_DRIVER_TRACE_CBID_cuStreamQuery;
    }
    ZB_CHECK(stream_query_off && cu_stream_query_off);
    if (want_timestamp_cb) {
        ZB_CHECK(l->timestamp_cb != NULL);
        /* The registered source is the harness clock. */
        int64_t lo = zb_now_ns();
        int64_t v = l->timestamp_cb ? (int64_t)l->timestamp_cb() : -1;
        int64_t hi = zb_now_ns();
        ZB_CHECK_MSG(v >= lo && v <= hi, "timestamp callback %lld not within [%lld, %lld]",
                     (long long)v, (long long)lo, (long long)hi);
    } else {
        ZB_CHECK(l->timestamp_cb == NULL);
    }
}

/* Checks the stop: a final forced flush, kinds disabled, CUPTI finalized. */
static void check_stopped(int flushes_before) {
    const fake_cupti_log *l = F->log();
    ZB_CHECK(!zb_cupti_active());
    ZB_CHECK(l->n_flushes == flushes_before + 1);
    ZB_CHECK(l->n_flushes >= 1 && l->flush_flags[l->n_flushes - 1] == CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    ZB_CHECK_MSG(n_enabled() == 0, "%d activity kinds left enabled after stop", n_enabled());
    ZB_CHECK(l->n_finalize == 1);
}

/* Pushes an op around nothing (the CUDA calls would go here) and returns
 * the external id the tracer pushed for it, checking push then pop. */
static uint64_t run_op(zb_op_kind kind, const char *label, int unit, uint64_t bytes, double flops,
                       int stream) {
    int i = F->log()->n_corr;
    zb_op_info info = {kind, label, unit, bytes, flops};
    zb_cupti_op_begin_info(&info, stream);
    const fake_cupti_corr_event *push = corr_event(i);
    ZB_CHECK_MSG(push && push->push && push->kind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 &&
                     push->id != 0,
                 "op \"%s\": no external id pushed (kind CUSTOM0)", label);
    ZB_CHECK(F->log()->corr_depth == 1);
    zb_cupti_op_end();
    const fake_cupti_corr_event *pop = corr_event(i + 1);
    ZB_CHECK_MSG(pop && !pop->push && pop->kind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 &&
                     pop->result == CUPTI_SUCCESS && push && pop->id == push->id,
                 "op \"%s\": its external id not popped", label);
    ZB_CHECK(F->log()->corr_depth == 0);
    return push ? push->id : 0;
}

/* One window on a CUPTI clock of CLOCK_MONOTONIC as read (offset 0), then
 * a second delivered by the stop. */
static void test_window(void) {
    F->reset();
    zb_trace t;
    ZB_CHECK_OK(zb_trace_init(&t, 0, true));
    ZB_CHECK_OK(zb_cupti_start(&t, -1));
    check_started(true);
    ZB_CHECK_MSG(zb_cupti_clock_note()[0] == '\0', "clock note on CLOCK_MONOTONIC: %s", zb_cupti_clock_note());
    ZB_CHECK(zb_cupti_start(&t, -1) == ZB_ERR_INVALID); /* one tracer at a time */
    ZB_CHECK_OK(zb_cupti_register_stream(H_COMPUTE, ZS_COMPUTE, false));
    ZB_CHECK_OK(zb_cupti_register_stream(H_COMM, ZS_COMM, true));

    uint64_t id_comm = run_op(ZB_OP_COMM, "unit 0 all-gather", 0, 4096, 0, ZS_COMM);
    uint64_t id_fwd = run_op(ZB_OP_COMPUTE, "unit 0 forward", 0, 0, 2e9, ZS_COMPUTE);
    ZB_CHECK(id_comm != id_fwd);

    stamp h0 = take_stamp();
    uint64_t c0 = h0.fake;
    F->queue_kernel(CS_COMPUTE, 200, c0 + 1000, c0 + 5000, "_Z11gemm_kernelPKfPf");
    F->queue_external(200, id_fwd, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0); /* after its kernel */
    F->queue_runtime(200, c0 + 500, c0 + 900);
    /* The one-rank NCCL collective: a device-to-device copy on NCCL's own stream. */
    F->queue_external(201, id_comm, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    F->queue_memcpy(CS_LIBRARY, 201, 0, c0 + 2000, c0 + 3000, 4096, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD);
    F->queue_memcpy(CS_COMPUTE, 300, 0, c0 + 6000, c0 + 6500, 64, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
    F->queue_memset(CS_COMM, 301, c0 + 7000, c0 + 7200, 128);
    F->queue_kernel(CS_STRAY, 302, c0 + 8000, c0 + 9000, "_Z12stray_kernelv");
    F->queue_external(303, 999, CUPTI_EXTERNAL_CORRELATION_KIND_OPENACC); /* another tool's */
    F->queue_sync(0, c0 + 100, c0 + 600);
    F->queue_overhead(c0 + 10, c0 + 20);
    F->add_dropped(3);
    ZB_CHECK(t.n_records == 0); /* nothing before the flush */

    ZB_CHECK_OK(zb_cupti_flush());
    const fake_cupti_log *l = F->log();
    ZB_CHECK_MSG(l->n_flushes == 1 && l->flush_flags[0] == CUPTI_ACTIVITY_FLAG_FLUSH_FORCED,
                 "zb_cupti_flush: %d flushes, flag %u (want one, FLUSH_FORCED)", l->n_flushes,
                 l->n_flushes ? (unsigned)l->flush_flags[0] : 0u);
    ZB_CHECK(l->n_buffers_delivered == 1 && l->n_records_delivered == 11);
    ZB_CHECK_MSG(t.n_records == 5, "%zu trace records, want 5", t.n_records);

    const zb_trace_record *r = find(&t, "unit 0 forward", ZB_OP_COMPUTE);
    ZB_CHECK_MSG(r != NULL, "no compute record \"unit 0 forward\"");
    if (r) {
        ZB_CHECK(r->unit == 0 && r->stream == ZS_COMPUTE && r->flops == 2e9 && r->seq == id_fwd);
        ZB_CHECK_MSG(lands(r->start_ns, h0, 1000) && lands(r->end_ns, h0, 5000),
                     "kernel at [%lld, %lld] ns from h0, want [1000, 5000]",
                     (long long)(r->start_ns - h0.lo), (long long)(r->end_ns - h0.lo));
        ZB_CHECK(r->end_ns - r->start_ns >= 4000 - 100 && r->end_ns - r->start_ns <= 4000 + 100);
    }
    r = find(&t, "unit 0 all-gather", ZB_OP_COMM);
    ZB_CHECK_MSG(r != NULL, "the copy of the comm op is not a comm record \"unit 0 all-gather\"");
    if (r) {
        ZB_CHECK(r->unit == 0 && r->bytes == 4096 && r->seq == id_comm);
        ZB_CHECK_MSG(r->stream == ZS_COMM, "comm copy on stream %d, want the op's %d", r->stream, ZS_COMM);
        ZB_CHECK(lands(r->start_ns, h0, 2000) && lands(r->end_ns, h0, 3000));
    }
    r = find(&t, "memcpy HtoD", ZB_OP_COPY);
    ZB_CHECK_MSG(r != NULL, "no copy record \"memcpy HtoD\"");
    if (r) {
        ZB_CHECK(r->unit == -1 && r->stream == ZS_COMPUTE && r->bytes == 64);
        ZB_CHECK(lands(r->start_ns, h0, 6000));
    }
    r = find(&t, "memset", ZB_OP_COMM); /* on the comm stream */
    ZB_CHECK_MSG(r != NULL, "the memset on the comm stream is not comm");
    if (r) ZB_CHECK(r->unit == -1 && r->stream == ZS_COMM && r->bytes == 128);
    r = find(&t, "stray_kernel", ZB_OP_COMPUTE);
    ZB_CHECK_MSG(r != NULL, "no uncorrelated kernel \"stray_kernel\"");
    if (r) {
        ZB_CHECK(r->unit == -1 && r->stream == ZB_CUPTI_FOREIGN_STREAM_BASE + (int)CS_STRAY);
        ZB_CHECK(lands(r->start_ns, h0, 8000) && lands(r->end_ns, h0, 9000));
    }

    zb_cupti_stats s;
    ZB_CHECK_OK(zb_cupti_get_stats(&s));
    ZB_CHECK_MSG(s.n_dropped == 3, "n_dropped %zu, want 3", s.n_dropped);
    ZB_CHECK(s.n_emitted == 5 && s.n_uncorrelated == 3 && s.n_ops == 2 && s.n_pending == 0);
    ZB_CHECK(s.n_emitted_by_kind[ZB_OP_COMM] == 2 && s.n_emitted_by_kind[ZB_OP_COPY] == 1 &&
             s.n_emitted_by_kind[ZB_OP_COMPUTE] == 2);
    ZB_CHECK(s.n_by_kind[ZB_ACT_EXTERNAL_CORRELATION] == 3 && s.n_foreign_external == 1);
    ZB_CHECK(s.n_by_kind[ZB_ACT_RUNTIME] == 1 && s.n_by_kind[ZB_ACT_SYNCHRONIZATION] == 1);
    ZB_CHECK(s.n_by_kind[ZB_ACT_OVERHEAD] == 1 && s.overhead_ns == 10);
    ZB_CHECK_MSG(s.sync_ns == 500, "sync_ns %lld, want 500", (long long)s.sync_ns);
    ZB_CHECK(s.n_buffer_errors == 0 && s.n_zero_timestamp == 0 && s.n_inverted == 0);
    ZB_CHECK(s.n_clock_pairs >= 4); /* three at start, one per flush */

    /* The registry's view of the same losses. */
    const zb_device_backend *b = zb_device_backend_find("cuda");
    ZB_CHECK(b && b->tracer_stats);
    if (b && b->tracer_stats) {
        zb_tracer_stats ts;
        ZB_CHECK_OK(b->tracer_stats(&ts));
        ZB_CHECK_MSG(ts.records_dropped == 3, "registry tracer_stats: %llu dropped, want 3",
                     (unsigned long long)ts.records_dropped);
        ZB_CHECK(ts.name && strcmp(ts.name, "CUPTI") == 0 && ts.note[0] == '\0');
    }

    /* Window 2, delivered by the stop's final flush; the op is resolved,
     * and no id is left pushed. */
    uint64_t id_bwd = run_op(ZB_OP_COMPUTE, "unit 1 backward", 1, 0, 1e9, ZS_COMPUTE);
    stamp h1 = take_stamp();
    F->queue_kernel(CS_COMPUTE, 400, h1.fake + 1000, h1.fake + 2000, "_Z8bwd_gemmv");
    F->queue_external(400, id_bwd, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    int flushes = F->log()->n_flushes;
    ZB_CHECK_OK(zb_cupti_stop());
    check_stopped(flushes);
    ZB_CHECK_MSG(t.n_records == 6, "%zu trace records after stop, want 6", t.n_records);
    r = find(&t, "unit 1 backward", ZB_OP_COMPUTE);
    ZB_CHECK(r && r->unit == 1 && r->seq == id_bwd && lands(r->start_ns, h1, 1000));
    ZB_CHECK_OK(zb_cupti_get_stats(&s)); /* the final counts outlive the tracer */
    ZB_CHECK(s.n_emitted == 6 && s.n_dropped == 3 && s.n_ops == 3);

    /* Not running: ops push nothing. */
    int n_corr = F->log()->n_corr;
    zb_cupti_op_begin("unit 2 forward", 2, ZB_OP_COMPUTE, 1.0, ZS_COMPUTE);
    zb_cupti_op_end();
    ZB_CHECK(F->log()->n_corr == n_corr);
    zb_trace_destroy(&t);
}

/* One kernel in one window, started on the fake's current clock settings:
 * the clock note is `want_note` (NULL: none) and the kernel lands at +1000 ns
 * on the harness clock. */
static void run_clock_case(const char *name, bool want_timestamp_cb, const char *want_note) {
    zb_trace t;
    ZB_CHECK_OK(zb_trace_init(&t, 0, true));
    zb_status st = zb_cupti_start(&t, -1);
    ZB_CHECK_MSG(st == ZB_OK, "%s: zb_cupti_start: %s", name, zb_error_message());
    if (st != ZB_OK) {
        zb_trace_destroy(&t);
        return;
    }
    check_started(want_timestamp_cb);
    const char *note = zb_cupti_clock_note();
    if (want_note) {
        ZB_CHECK_MSG(strstr(note, "converted") && strstr(note, want_note),
                     "%s: clock note \"%s\" should say records are converted and \"%s\"", name,
                     note, want_note);
        ZB_CHECK(strchr(note, '\n') == NULL);
    } else {
        ZB_CHECK_MSG(note[0] == '\0', "%s: clock note \"%s\", want none", name, note);
    }
    ZB_CHECK_OK(zb_cupti_register_stream(H_COMPUTE, ZS_COMPUTE, false));
    uint64_t id = run_op(ZB_OP_COMPUTE, "unit 0 forward", 0, 0, 1e9, ZS_COMPUTE);
    stamp h0 = take_stamp();
    F->queue_kernel(CS_COMPUTE, 10, h0.fake + 1000, h0.fake + 4000, "_Z4gemmv");
    F->queue_external(10, id, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
    ZB_CHECK_OK(zb_cupti_flush());
    const zb_trace_record *r = find(&t, "unit 0 forward", ZB_OP_COMPUTE);
    ZB_CHECK_MSG(r && lands(r->start_ns, h0, 1000) && lands(r->end_ns, h0, 4000),
                 "%s: kernel at %lld ns from h0 on the harness clock, want 1000", name,
                 r ? (long long)(r->start_ns - h0.lo) : -1LL);
    const zb_device_backend *b = zb_device_backend_find("cuda");
    zb_tracer_stats ts;
    ZB_CHECK(b && b->tracer_stats && b->tracer_stats(&ts) == ZB_OK && strcmp(ts.note, note) == 0);
    int flushes = F->log()->n_flushes;
    ZB_CHECK_OK(zb_cupti_stop());
    check_stopped(flushes);
    zb_trace_destroy(&t);
}

/* CUPTI's own clock CLOCK_REALTIME-like, but the registered callback taken
 * (as CUPTI documents): the same clock, no note. */
static void test_clock_callback_honored(void) {
    F->reset();
    F->set_clock(REALTIME_OFFSET, true, false);
    run_clock_case("callback honored", true, NULL);
}

/* The callback registered but ignored: converted, and said so. */
static void test_clock_converted(void) {
    F->reset();
    F->set_clock(REALTIME_OFFSET, false, false);
    run_clock_case("callback ignored", true, "although CLOCK_MONOTONIC was registered");
}

/* ZB_CUPTI_CLOCK=cupti: no callback registered, CUPTI's clock converted. */
static void test_clock_env_cupti(void) {
    F->reset();
    F->set_clock(REALTIME_OFFSET, true, false);
    setenv("ZB_CUPTI_CLOCK", "cupti", 1);
    run_clock_case("ZB_CUPTI_CLOCK=cupti", false, "ZB_CUPTI_CLOCK=cupti");
    unsetenv("ZB_CUPTI_CLOCK");
}

int main(void) {
    if (!load_fake()) return 1;
    test_version_refused();
    test_other_profiler_refused();
    test_frozen_clock_refused();
    test_window();
    test_clock_callback_honored();
    test_clock_converted();
    test_clock_env_cupti();
    F->reset();
    return zb_test_finish("test_cupti_fake");
}
