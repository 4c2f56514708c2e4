/* The wait/transfer split of a rank's collectives (harness/metrics/wait.h)
 * and the trace helpers the split and the export rely on (trace.h:
 * zb_trace_collectives, step marks, phases, truncation, memory samples), on
 * hand-made records whose answers are worked out by hand. */
#include <stdint.h>
#include <string.h>

#include "trace.h"
#include "wait.h"
#include "zb_test.h"

static zb_trace_record rec(zb_op_kind kind, const char *coll, int64_t start, int64_t end, uint64_t seq) {
    zb_trace_record r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.start_ns = start;
    r.end_ns = end;
    r.seq = seq;
    r.stream = kind == ZB_OP_COMM ? 1 : 0;
    strcpy(r.label, coll ? coll : "k");
    if (coll) strcpy(r.coll, coll);
    return r;
}

/* compute [0,100) [150,300); allgather [50,200) last arrival 120: wait
 * [50,120), transfer [120,200); reducescatter [300,400) last arrival 250
 * (this rank was last): no wait. M = [50,200) ∪ [300,400), C as above.
 * |M \ C| = [100,150) + [300,400) = 150; W \ C = [100,120) = 20. */
static void test_split(void) {
    zb_trace_record r[4] = {rec(ZB_OP_COMPUTE, NULL, 0, 100, 0), rec(ZB_OP_COMM, "allgather", 50, 200, 1),
                            rec(ZB_OP_COMPUTE, NULL, 150, 300, 2), rec(ZB_OP_COMM, "reducescatter", 300, 400, 3)};
    size_t idx[4];
    size_t k = zb_trace_collectives(r, 4, 0, 0, 1000, idx);
    ZB_CHECK(k == 2 && idx[0] == 1 && idx[1] == 3);
    int64_t last[2] = {120, 250};
    zb_wait_split w;
    ZB_CHECK_OK(zb_wait_split_compute(r, 4, 0, 1000, idx, last, k, &w));
    ZB_CHECK_MSG(w.wait_ns == 70 && w.transfer_ns == 80 + 100, "wait %lld transfer %lld", (long long)w.wait_ns,
                 (long long)w.transfer_ns);
    ZB_CHECK_MSG(w.exposed_comm_ns == 150 && w.exposed_wait_ns == 20 && w.exposed_transfer_ns == 130,
                 "exposed %lld wait %lld transfer %lld", (long long)w.exposed_comm_ns, (long long)w.exposed_wait_ns,
                 (long long)w.exposed_transfer_ns);
    /* A last arrival after the record's end (clock uncertainty): all wait, clipped to the record. */
    int64_t late[2] = {500, 250};
    ZB_CHECK_OK(zb_wait_split_compute(r, 4, 0, 1000, idx, late, k, &w));
    ZB_CHECK(w.wait_ns == 150 && w.transfer_ns == 100 && w.exposed_wait_ns == 50 &&
             w.exposed_wait_ns + w.exposed_transfer_ns == w.exposed_comm_ns);
    /* A window that cuts the allgather at 150: only [50,150) counts. */
    ZB_CHECK_OK(zb_wait_split_compute(r, 4, 0, 150, idx, last, 1, &w));
    ZB_CHECK(w.wait_ns == 70 && w.transfer_ns == 30 && w.exposed_comm_ns == 50 && w.exposed_wait_ns == 20);
    size_t bad = 9;
    ZB_CHECK(zb_wait_split_compute(r, 4, 0, 1000, &bad, last, 1, &w) == ZB_ERR_INVALID);
}

/* Collectives in issue order whatever the append order; other ranks and
 * records outside the window left out. */
static void test_collectives_order(void) {
    zb_trace_record r[5] = {rec(ZB_OP_COMM, "allgather", 10, 20, 7), rec(ZB_OP_COMM, "allreduce", 30, 40, 3),
                            rec(ZB_OP_COMM, "allgather", 50, 60, 5), rec(ZB_OP_COPY, NULL, 5, 6, 1),
                            rec(ZB_OP_COMM, "allgather", 500, 600, 9)};
    r[2].rank = 1;
    size_t idx[5];
    size_t k = zb_trace_collectives(r, 5, 0, 0, 100, idx);
    ZB_CHECK(k == 2 && idx[0] == 1 && idx[1] == 0);
    ZB_CHECK(zb_trace_collectives(r, 5, 1, 0, 100, idx) == 1 && idx[0] == 2);
}

static void test_trace_marks(void) {
    zb_trace t;
    ZB_CHECK_OK(zb_trace_init(&t, 0, true));
    int p = zb_trace_phase_begin(&t, "prefetch", 3, 2, 10);
    ZB_CHECK(p == 0 && !strcmp(t.phases[0].name, "stage 3 prefetch") && t.phases[0].stage == 3);
    ZB_CHECK(t.phases[0].first_written > t.phases[0].last_written); /* none yet */
    zb_trace_mark_step(&t, p, 3, false, 100, 200);
    zb_trace_mark_step(&t, p, 4, false, 300, 400);
    zb_trace_mark_step(&t, 5, 4, false, 300, 400); /* no such phase: ignored */
    ZB_CHECK(t.n_steps == 2 && t.phases[0].first_written == 3 && t.phases[0].last_written == 4);
    zb_op_info info = {ZB_OP_COMM, "x", -1, 0, 0.0, "allgather"};
    for (int i = 0; i < 5; i++) zb_trace_add(&t, 1, &info, (uint64_t)i, i, i + 1);
    ZB_CHECK(t.n_records == 5 && !strcmp(t.records[0].coll, "allgather"));
    zb_trace_truncate(&t, 2);
    ZB_CHECK(t.n_records == 2);
    zb_trace_truncate(&t, 9);
    ZB_CHECK(t.n_records == 2);
    size_t live[3] = {1, 2, 3};
    zb_trace_mem_sample_add(&t, live, 3);
    ZB_CHECK(t.n_mem == 1 && t.mem[0].live_bytes[2] == 3 && t.mem[0].live_bytes[3] == 0);
    zb_trace_destroy(&t);
    ZB_CHECK_OK(zb_trace_init(&t, 0, false)); /* tracing off: nothing is kept */
    ZB_CHECK(zb_trace_phase_begin(&t, "sync", 3, 0, 1) == -1);
    zb_trace_mem_sample_add(&t, live, 3);
    ZB_CHECK(t.n_mem == 0);
    zb_trace_destroy(&t);
}

int main(void) {
    test_split();
    test_collectives_order();
    test_trace_marks();
    return zb_test_finish("test_wait_split");
}
