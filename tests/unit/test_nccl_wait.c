/* The NCCL comm's waits (harness/comm/nccl/nccl_wait.c) driven by fakes in place of
 * ncclCommGetAsyncError, cudaEventQuery, ncclCommAbort and the clock:
 * completion before the deadline; the timeout (abort called exactly once,
 * the message naming rank, op, label and unit); an asynchronous error (abort,
 * the error's text in the message); ncclInProgress then success; an event
 * query error; completion winning over a passed deadline; the ring of
 * collectives in flight (reuse of events, reaping, naming the stuck one);
 * and the NCCL version text. */
#include <string.h>

#include "comm_nccl.h"
#include "registry.h"
#include "nccl_boot.h"
#include "nccl_wait.h"
#include "zb_test.h"

#define MS 1000000LL

/* A scripted world: the communicator's state per poll, and per fake event
 * the poll (call count) from which it reads complete. */
typedef struct fake {
    const zb_nccl_query *async_script; /* per async call; the last entry repeats */
    int async_len;
    int async_calls;
    const char *async_why;
    int work_calls;
    int work_done_after;  /* the event reads complete from this call on; <0: never */
    bool work_error;      /* the event query fails */
    int aborts;
    int pauses;
    int64_t clock_ns;
    int64_t tick_ns;      /* the clock advances this much per read */
} fake;

static zb_nccl_query f_async(void *ctx, char *why, size_t n) {
    fake *f = (fake *)ctx;
    int i = f->async_calls < f->async_len ? f->async_calls : f->async_len - 1;
    f->async_calls++;
    zb_nccl_query q = f->async_script ? f->async_script[i] : ZB_NCCL_Q_DONE;
    if (q == ZB_NCCL_Q_ERROR) snprintf(why, n, "%s", f->async_why);
    return q;
}

static zb_nccl_query f_work(void *ctx, void *work, char *why, size_t n) {
    fake *f = (fake *)ctx;
    (void)work;
    f->work_calls++;
    if (f->work_error) {
        snprintf(why, n, "cudaEventQuery: cudaErrorIllegalAddress: an illegal memory access");
        return ZB_NCCL_Q_ERROR;
    }
    return f->work_done_after >= 0 && f->work_calls >= f->work_done_after ? ZB_NCCL_Q_DONE
                                                                          : ZB_NCCL_Q_PENDING;
}

static void f_abort(void *ctx) { ((fake *)ctx)->aborts++; }
static int64_t f_now(void *ctx) {
    fake *f = (fake *)ctx;
    f->clock_ns += f->tick_ns;
    return f->clock_ns;
}
static void f_pause(void *ctx) { ((fake *)ctx)->pauses++; }

static zb_nccl_wait_ops fake_ops(fake *f) {
    zb_nccl_wait_ops ops = {f_async, f_work, f_abort, f_now, f_pause, f};
    return ops;
}

static const zb_nccl_query always_done[] = {ZB_NCCL_Q_DONE};
static const zb_nccl_wait_what ag7 = {3, "allgather", "layer7.ag", 7, 1.0};
static int work_token; /* any non-NULL pointer stands for an event */

static void test_done_before_deadline(void) {
    fake f = {always_done, 1, 0, "", 0, 4, false, 0, 0, 0, 10 * MS};
    zb_nccl_wait_ops ops = fake_ops(&f);
    zb_error_clear();
    ZB_CHECK_OK(zb_nccl_wait(&ops, &ag7, &work_token));
    ZB_CHECK(f.work_calls == 4);
    ZB_CHECK(f.aborts == 0);
    ZB_CHECK(f.pauses == 3);
    ZB_CHECK(zb_error_message()[0] == '\0');
}

static void test_timeout_aborts_once(void) {
    fake f = {always_done, 1, 0, "", 0, -1, false, 0, 0, 0, 100 * MS};
    zb_nccl_wait_ops ops = fake_ops(&f);
    zb_nccl_waiter w;
    zb_nccl_waiter_init(&w, &ops, &ag7, &work_token, 1000 * MS);
    zb_status st = zb_nccl_waiter_run(&w);
    ZB_CHECK(st == ZB_ERR_TIMEOUT);
    ZB_CHECK(w.state == ZB_NCCL_WAIT_TIMED_OUT);
    ZB_CHECK(f.aborts == 1);
    /* Gave up at the first poll past 1 s on a clock that ticks 0.1 s per read. */
    ZB_CHECK_MSG(w.n_polls >= 10 && w.n_polls <= 11, "polls %d", w.n_polls);
    const char *msg = zb_error_message();
    ZB_CHECK_MSG(strstr(msg, "rank 3: allgather 'layer7.ag' (unit 7) did not complete within 1 s "
                             "(--timeout)") != NULL, "message: %s", msg);
    ZB_CHECK_MSG(strstr(msg, "aborted") != NULL, "message: %s", msg);
    /* A finished waiter stays finished and calls nothing more. */
    int calls = f.async_calls + f.work_calls;
    ZB_CHECK(zb_nccl_waiter_poll(&w) == ZB_NCCL_WAIT_TIMED_OUT);
    ZB_CHECK(zb_nccl_waiter_run(&w) == ZB_ERR_TIMEOUT);
    ZB_CHECK(f.aborts == 1);
    ZB_CHECK(f.async_calls + f.work_calls == calls);
}

static void test_async_error(void) {
    static const zb_nccl_query script[] = {ZB_NCCL_Q_DONE, ZB_NCCL_Q_ERROR};
    fake f = {script, 2, 0, "NCCL error: remote process exited or there was a network error",
              0, -1, false, 0, 0, 0, 1 * MS};
    zb_nccl_wait_ops ops = fake_ops(&f);
    zb_nccl_wait_what what = {1, "reducescatter", "layer2.rs", 2, 300.0};
    zb_status st = zb_nccl_wait(&ops, &what, &work_token);
    ZB_CHECK(st == ZB_ERR_MPI);
    ZB_CHECK(f.aborts == 1);
    ZB_CHECK(f.async_calls == 2);
    const char *msg = zb_error_message();
    ZB_CHECK_MSG(strstr(msg, "rank 1: reducescatter 'layer2.rs' (unit 2) failed: NCCL error: "
                             "remote process exited or there was a network error") != NULL,
                 "message: %s", msg);
    ZB_CHECK_MSG(strstr(msg, "did not complete") == NULL, "message: %s", msg);
}

static void test_in_progress_then_success(void) {
    /* ncclCommInitRankConfig or a collective returned ncclInProgress: no
     * event, done when the communicator's state is ncclSuccess. */
    static const zb_nccl_query script[] = {ZB_NCCL_Q_PENDING, ZB_NCCL_Q_PENDING, ZB_NCCL_Q_PENDING,
                                           ZB_NCCL_Q_PENDING, ZB_NCCL_Q_PENDING, ZB_NCCL_Q_DONE};
    fake f = {script, 6, 0, "", 0, -1, false, 0, 0, 0, 1 * MS};
    zb_nccl_wait_ops ops = fake_ops(&f);
    zb_nccl_wait_what what = {0, "communicator init", "MPI_COMM_WORLD", -1, 10.0};
    ZB_CHECK_OK(zb_nccl_wait(&ops, &what, NULL));
    ZB_CHECK(f.async_calls == 6);
    ZB_CHECK(f.work_calls == 0);
    ZB_CHECK(f.aborts == 0);

    /* In progress past the deadline is a timeout naming the init. */
    static const zb_nccl_query stuck[] = {ZB_NCCL_Q_PENDING};
    fake g = {stuck, 1, 0, "", 0, -1, false, 0, 0, 0, 1000 * MS};
    ops = fake_ops(&g);
    ZB_CHECK(zb_nccl_wait(&ops, &what, NULL) == ZB_ERR_TIMEOUT);
    ZB_CHECK(g.aborts == 1);
    ZB_CHECK_MSG(strstr(zb_error_message(), "rank 0: communicator init 'MPI_COMM_WORLD' (unit -1) "
                                            "did not complete within 10 s") != NULL,
                 "message: %s", zb_error_message());

    /* While the communicator is in progress the event is not asked. */
    static const zb_nccl_query then_done[] = {ZB_NCCL_Q_PENDING, ZB_NCCL_Q_PENDING, ZB_NCCL_Q_DONE};
    fake h = {then_done, 3, 0, "", 0, 0, false, 0, 0, 0, 1 * MS};
    ops = fake_ops(&h);
    ZB_CHECK_OK(zb_nccl_wait(&ops, &ag7, &work_token));
    ZB_CHECK(h.work_calls == 1);
}

static void test_event_error(void) {
    fake f = {always_done, 1, 0, "", 0, -1, true, 0, 0, 0, 1 * MS};
    zb_nccl_wait_ops ops = fake_ops(&f);
    ZB_CHECK(zb_nccl_wait(&ops, &ag7, &work_token) == ZB_ERR_MPI);
    ZB_CHECK(f.aborts == 1);
    ZB_CHECK_MSG(strstr(zb_error_message(), "rank 3: allgather 'layer7.ag' (unit 7) failed: "
                                            "cudaEventQuery: cudaErrorIllegalAddress") != NULL,
                 "message: %s", zb_error_message());
}

static void test_done_wins_over_deadline(void) {
    /* The deadline has long passed, but the work reads complete at the
     * first poll: that is a success, not a timeout. */
    fake f = {always_done, 1, 0, "", 0, 1, false, 0, 0, 0, 1000 * MS};
    zb_nccl_wait_ops ops = fake_ops(&f);
    zb_nccl_waiter w;
    zb_nccl_waiter_init(&w, &ops, &ag7, &work_token, 0);
    ZB_CHECK_OK(zb_nccl_waiter_run(&w));
    ZB_CHECK(f.aborts == 0);
    /* An asynchronous error is reported as such even past the deadline. */
    static const zb_nccl_query err[] = {ZB_NCCL_Q_ERROR};
    fake g = {err, 1, 0, "NCCL error: unhandled system error", 0, -1, false, 0, 0, 0, 1000 * MS};
    ops = fake_ops(&g);
    zb_nccl_waiter_init(&w, &ops, &ag7, &work_token, 0);
    ZB_CHECK(zb_nccl_waiter_run(&w) == ZB_ERR_MPI);
    ZB_CHECK(g.aborts == 1);
}

/* ---- the ring ------------------------------------------------------------ */

/* Events are small ints; an event reads complete when its number is below
 * `done_below`. */
typedef struct ring_fake {
    int done_below;
    int queries;
    int aborts;
    int64_t clock_ns;
} ring_fake;

static zb_nccl_query r_async(void *ctx, char *why, size_t n) {
    (void)ctx, (void)why, (void)n;
    return ZB_NCCL_Q_DONE;
}
static zb_nccl_query r_work(void *ctx, void *work, char *why, size_t n) {
    ring_fake *r = (ring_fake *)ctx;
    (void)why, (void)n;
    r->queries++;
    return (int)(intptr_t)work < r->done_below ? ZB_NCCL_Q_DONE : ZB_NCCL_Q_PENDING;
}
static void r_abort(void *ctx) { ((ring_fake *)ctx)->aborts++; }
static int64_t r_now(void *ctx) {
    ring_fake *r = (ring_fake *)ctx;
    r->clock_ns += 50 * MS;
    return r->clock_ns;
}

static zb_nccl_pending ring; /* large: keep it off the stack */

static void push_numbered(zb_nccl_pending *p, int *next_event, zb_coll kind, const char *label,
                          int unit) {
    zb_nccl_pending_op *slot = zb_nccl_pending_next(p);
    if (!slot) return;
    /* An event is created once per slot, then reused. */
    if (!slot->event) slot->event = (void *)(intptr_t)(1000 + (*next_event)++);
    zb_nccl_pending_push(p, kind, label, unit);
}

static void test_ring(void) {
    zb_nccl_pending_init(&ring);
    ZB_CHECK(zb_nccl_pending_oldest(&ring) == NULL);
    int created = 0;
    for (int i = 0; i < ZB_NCCL_PENDING_MAX; i++) {
        push_numbered(&ring, &created, ZB_COLL_ALLGATHER, "ag", i);
    }
    ZB_CHECK(zb_nccl_pending_full(&ring));
    ZB_CHECK(zb_nccl_pending_next(&ring) == NULL);
    ZB_CHECK(created == ZB_NCCL_PENDING_MAX);

    /* Reaping pops complete entries from the oldest and stops at the first
     * incomplete one, even if later ones read complete. */
    ring_fake r = {1000 + 10, 0, 0, 0};
    zb_nccl_wait_ops ops = {r_async, r_work, r_abort, r_now, NULL, &r};
    ZB_CHECK(zb_nccl_pending_reap(&ring, &ops) == 10);
    ZB_CHECK(ring.count == ZB_NCCL_PENDING_MAX - 10);
    ZB_CHECK(zb_nccl_pending_oldest(&ring)->unit == 10);

    /* Ten more pushes wrap around and reuse the first ten slots' events. */
    for (int i = 0; i < 10; i++) push_numbered(&ring, &created, ZB_COLL_REDUCESCATTER, "rs", 100 + i);
    ZB_CHECK(created == ZB_NCCL_PENDING_MAX);
    ZB_CHECK(zb_nccl_pending_full(&ring));

    /* Draining: everything up to entry 20 completes; entry 20 never does.
     * The timeout names it (all under one deadline), aborts once, and
     * leaves it as the oldest. */
    r.done_below = 1000 + 20;
    r.clock_ns = 0;
    zb_status st = zb_nccl_pending_drain(&ring, &ops, 5, 2.0, 2000 * MS);
    ZB_CHECK(st == ZB_ERR_TIMEOUT);
    ZB_CHECK(r.aborts == 1);
    ZB_CHECK_MSG(strstr(zb_error_message(), "rank 5: allgather 'ag' (unit 20) did not complete "
                                            "within 2 s") != NULL,
                 "message: %s", zb_error_message());
    ZB_CHECK(zb_nccl_pending_oldest(&ring)->unit == 20);

    /* Once all complete, draining empties the ring, in order; the wrapped
     * entries keep their own names. */
    r.done_below = 1 << 30;
    r.clock_ns = 0;
    ZB_CHECK_OK(zb_nccl_pending_drain(&ring, &ops, 5, 2.0, 2000 * MS));
    ZB_CHECK(ring.count == 0);
    ZB_CHECK(zb_nccl_pending_oldest(&ring) == NULL);

    /* Labels are truncated, never overrun; NULL takes the collective's name. */
    zb_nccl_pending_init(&ring);
    char long_label[200];
    memset(long_label, 'x', sizeof long_label - 1);
    long_label[sizeof long_label - 1] = '\0';
    push_numbered(&ring, &created, ZB_COLL_ALLREDUCE, long_label, 1);
    push_numbered(&ring, &created, ZB_COLL_ALLREDUCE, NULL, 2);
    ZB_CHECK(strlen(ring.slots[0].label) == ZB_LABEL_MAX - 1);
    ZB_CHECK(strcmp(ring.slots[1].label, "allreduce") == 0);
    zb_nccl_pending_pop(&ring);
    zb_nccl_pending_pop(&ring);
    zb_nccl_pending_pop(&ring); /* popping an empty ring is harmless */
    ZB_CHECK(ring.count == 0);
}

static void test_version_text(void) {
    char buf[32];
    zb_nccl_version_text(22809, buf, sizeof buf);
    ZB_CHECK(strcmp(buf, "2.28.9") == 0);
    zb_nccl_version_text(21903, buf, sizeof buf);
    ZB_CHECK(strcmp(buf, "2.19.3") == 0);
    zb_nccl_version_text(2708, buf, sizeof buf); /* the old encoding, NCCL 2.7.8 */
    ZB_CHECK(strcmp(buf, "2.7.8") == 0);
    zb_nccl_version_text(30001, buf, sizeof buf);
    ZB_CHECK(strcmp(buf, "3.0.1") == 0);
    zb_nccl_version_text(-1, buf, sizeof buf);
    ZB_CHECK(strcmp(buf, "unknown") == 0);
}

static void test_stub_or_meta(void) {
    const zb_comm_backend *nccl = zb_comm_backend_find("nccl");
    ZB_CHECK(nccl != NULL && nccl->device_only && !strcmp(nccl->device_only, "cuda"));
    if (!nccl) return;
#ifndef ZB_HAVE_CUDA
    /* Built without CUDA: the entry says so and offers nothing. */
    ZB_CHECK(nccl->not_built && strstr(nccl->not_built, "built without CUDA") != NULL);
    ZB_CHECK(!nccl->create && !nccl->meta);
#else
    /* ncclGetVersion needs no GPU: the meta names the library's version. */
    ZB_CHECK(!nccl->not_built && nccl->create && nccl->meta);
    json_t *meta = json_object();
    ZB_CHECK_OK(nccl->meta(meta));
    const char *v = json_string_value(json_object_get(meta, "nccl_version"));
    ZB_CHECK(v != NULL && v[0] >= '2' && v[0] <= '9' && strchr(v, '.') != NULL);
    ZB_CHECK(json_string_value(json_object_get(meta, "nccl_version_built")) != NULL);
    ZB_CHECK(zb_nccl_meta(NULL) == ZB_ERR_INVALID);
    json_decref(meta);
    /* Not an nccl comm: the wait refuses it. */
    ZB_CHECK(zb_comm_nccl_wait(NULL, NULL, "wait", 0) == ZB_ERR_INVALID);
#endif
}

int main(void) {
    test_done_before_deadline();
    test_timeout_aborts_once();
    test_async_error();
    test_in_progress_then_success();
    test_event_error();
    test_done_wins_over_deadline();
    test_ring();
    test_version_text();
    test_stub_or_meta();
    return zb_test_finish("test_nccl_wait");
}
