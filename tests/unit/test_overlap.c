/* Overlap from trace records (harness/metrics/overlap.h) on hand-made records whose
 * unions and intersections are worked out by hand, and the median/min
 * helpers. Stream 0 is compute, stream 1 the comm stream throughout. */
#include <math.h>
#include <string.h>

#include "overlap.h"
#include "zb_test.h"

#define COMP 0
#define COMM 1

static zb_trace_record rec(int stream, zb_op_kind kind, int64_t s, int64_t e, const char *label) {
    zb_trace_record r;
    memset(&r, 0, sizeof r);
    r.rank = 0;
    r.stream = stream;
    r.kind = kind;
    r.unit = -1;
    r.start_ns = s;
    r.end_ns = e;
    strncpy(r.label, label, ZB_LABEL_MAX - 1);
    return r;
}

static zb_overlap run(const zb_trace_record *r, size_t n, int64_t t0, int64_t t1) {
    zb_overlap o;
    ZB_CHECK_OK(zb_overlap_compute(r, n, t0, t1, &o));
    return o;
}

static void check_consistent(const zb_overlap *o) {
    ZB_CHECK(o->exposed_comm_ns == o->comm_ns - o->overlap_ns);
    ZB_CHECK(o->busy_ns == o->comm_ns + o->compute_ns - o->overlap_ns);
    ZB_CHECK(o->overlap_ns <= o->comm_ns && o->overlap_ns <= o->compute_ns);
}

static void test_basic_cases(void) {
    /* No overlap: compute [0,100), comm [100,150). */
    zb_trace_record a[] = {rec(COMP, ZB_OP_COMPUTE, 0, 100, "gemm"),
                           rec(COMM, ZB_OP_COMM, 100, 150, "allgather")};
    zb_overlap o = run(a, 2, 0, 1000);
    ZB_CHECK(o.comm_ns == 50 && o.compute_ns == 100 && o.overlap_ns == 0);
    ZB_CHECK(o.exposed_comm_ns == 50 && o.busy_ns == 150);
    ZB_CHECK(o.comm_measured && o.overlap_pct == 0.0);
    check_consistent(&o);

    /* Full overlap: comm [20,80) inside compute [0,100). */
    zb_trace_record b[] = {rec(COMP, ZB_OP_COMPUTE, 0, 100, "gemm"),
                           rec(COMM, ZB_OP_COMM, 20, 80, "allgather")};
    o = run(b, 2, 0, 1000);
    ZB_CHECK(o.comm_ns == 60 && o.overlap_ns == 60 && o.exposed_comm_ns == 0);
    ZB_CHECK(o.overlap_pct == 100.0 && o.busy_ns == 100);
    check_consistent(&o);

    /* Partial: compute [0,100), comm [75,175): 25 of 100 hidden. */
    zb_trace_record c[] = {rec(COMM, ZB_OP_COMM, 75, 175, "reducescatter"),
                           rec(COMP, ZB_OP_COMPUTE, 0, 100, "gemm")};
    o = run(c, 2, 0, 1000);
    ZB_CHECK(o.comm_ns == 100 && o.overlap_ns == 25 && o.exposed_comm_ns == 75);
    ZB_CHECK_MSG(fabs(o.overlap_pct - 25.0) < 1e-12, "partial overlap %.17g", o.overlap_pct);
    ZB_CHECK(o.busy_ns == 175);
    check_consistent(&o);
}

static void test_nested_and_overlapping(void) {
    /* Compute on two streams: [0,50), [10,20) nested, [40,90) overlapping,
     * [200,300) separate: C = [0,90) ∪ [200,300), |C| = 190.
     * Comm: [80,120) and [100,110) nested, [115,210) overlapping, [250,260):
     * M = [80,210) ∪ [250,260) = 130 + 10 = 140.
     * M ∩ C = [80,90) + [200,210) + [250,260) = 30. */
    zb_trace_record r[] = {
        rec(COMP, ZB_OP_COMPUTE, 40, 90, "b"),      rec(COMP, ZB_OP_COMPUTE, 0, 50, "a"),
        rec(2, ZB_OP_COMPUTE, 10, 20, "nested"),    rec(COMP, ZB_OP_COMPUTE, 200, 300, "c"),
        rec(COMM, ZB_OP_COMM, 100, 110, "inner"),   rec(COMM, ZB_OP_COMM, 80, 120, "outer"),
        rec(COMM, ZB_OP_COMM, 250, 260, "late"),    rec(COMM, ZB_OP_COMM, 115, 210, "chain"),
    };
    zb_trace_record copy[sizeof r / sizeof r[0]];
    memcpy(copy, r, sizeof r);
    zb_overlap o = run(r, sizeof r / sizeof r[0], 0, 1000);
    ZB_CHECK_MSG(o.compute_ns == 190, "compute %lld", (long long)o.compute_ns);
    ZB_CHECK_MSG(o.comm_ns == 140, "comm %lld", (long long)o.comm_ns);
    ZB_CHECK_MSG(o.overlap_ns == 30, "overlap %lld", (long long)o.overlap_ns);
    ZB_CHECK(o.busy_ns == 300 && o.exposed_comm_ns == 110);
    ZB_CHECK(o.n_comm_records == 4 && o.n_compute_records == 4);
    check_consistent(&o);
    ZB_CHECK_MSG(memcmp(copy, r, sizeof r) == 0, "the input records were modified");

    /* Touching intervals join without double counting. */
    zb_trace_record t[] = {rec(COMM, ZB_OP_COMM, 0, 10, "x"), rec(COMM, ZB_OP_COMM, 10, 20, "y"),
                           rec(COMM, ZB_OP_COMM, 0, 20, "z")};
    o = run(t, 3, 0, 100);
    ZB_CHECK(o.comm_ns == 20 && o.compute_ns == 0 && o.overlap_pct == 0.0);
}

static void test_classification(void) {
    /* Copies count as neither. */
    zb_trace_record a[] = {rec(COMP, ZB_OP_COMPUTE, 0, 100, "gemm"),
                           rec(3, ZB_OP_COPY, 0, 500, "h2d"),
                           rec(COMM, ZB_OP_COMM, 50, 150, "allgather")};
    zb_overlap o = run(a, 3, 0, 1000);
    ZB_CHECK(o.compute_ns == 100 && o.comm_ns == 100 && o.overlap_ns == 50);
    ZB_CHECK(o.busy_ns == 150);

    /* Only the kind counts: records are classified where they are made
     * (the issuer, or the CUPTI map for GPU records). A record of kind
     * compute is compute whatever its label (an NCCL kernel name) or stream
     * (the comm stream); a copy is neither, on the comm stream too; the comm
     * stream argument changes nothing. */
    zb_trace_record b[] = {rec(COMP, ZB_OP_COMPUTE, 0, 100, "gemm"),
                           rec(COMP, ZB_OP_COMPUTE, 100, 160, "ncclDevKernel_AllGather_RING_LL"),
                           rec(COMM, ZB_OP_COPY, 0, 30, "stage"),
                           rec(COMM, ZB_OP_COMPUTE, 150, 170, "cast"),
                           rec(COMM, ZB_OP_COMM, 0, 40, "x"),
                           rec(COMP, ZB_OP_COMM, 160, 200, "ncclDevKernel_ReduceScatter")};
    o = run(b, 6, 0, 1000);
    ZB_CHECK_MSG(o.comm_ns == 80 && o.compute_ns == 170 && o.overlap_ns == 50,
                 "comm %lld compute %lld overlap %lld", (long long)o.comm_ns,
                 (long long)o.compute_ns, (long long)o.overlap_ns);
    ZB_CHECK(o.n_comm_records == 2 && o.n_compute_records == 3);
    zb_overlap o2;
    ZB_CHECK_OK(zb_overlap_compute(b, 6, 0, 1000, &o2));
    ZB_CHECK(o2.comm_ns == o.comm_ns && o2.compute_ns == o.compute_ns &&
             o2.overlap_ns == o.overlap_ns);
    ZB_CHECK(zb_overlap_is_comm(&b[4]) && zb_overlap_is_comm(&b[5]));
    ZB_CHECK(!zb_overlap_is_comm(&b[1]) && !zb_overlap_is_comm(&b[2]) && !zb_overlap_is_comm(&b[3]));
}

static void test_window_and_empty(void) {
    /* Window [50,150): compute [0,100) -> [50,100); comm [90,200) -> [90,150);
     * comm [150,170) lies outside (the window is half-open). */
    zb_trace_record a[] = {rec(COMP, ZB_OP_COMPUTE, 0, 100, "gemm"),
                           rec(COMM, ZB_OP_COMM, 90, 200, "ag"),
                           rec(COMM, ZB_OP_COMM, 150, 170, "rs"),
                           rec(COMP, ZB_OP_COMPUTE, 0, 40, "before")};
    zb_overlap o = run(a, 4, 50, 150);
    ZB_CHECK(o.compute_ns == 50 && o.comm_ns == 60 && o.overlap_ns == 10);
    ZB_CHECK(o.n_comm_records == 1 && o.n_compute_records == 1);
    ZB_CHECK(fabs(o.overlap_pct - 100.0 / 6.0) < 1e-12);

    /* No comm in the window: not measured (NaN), never a fake 0. */
    o = run(a, 4, 0, 80);
    ZB_CHECK(o.comm_ns == 0 && o.compute_ns == 80 && o.exposed_comm_ns == 0);
    ZB_CHECK(!o.comm_measured && isnan(o.overlap_pct));
    o = run(a, 0, 0, 80);
    ZB_CHECK(!o.comm_measured && isnan(o.overlap_pct) && o.busy_ns == 0);
    o = run(a, 4, 60, 60); /* empty window */
    ZB_CHECK(!o.comm_measured && o.compute_ns == 0);

    /* Bad input is refused, not guessed at. */
    ZB_CHECK(zb_overlap_compute(a, 4, 100, 50, &o) == ZB_ERR_INVALID);
    ZB_CHECK(zb_overlap_compute(NULL, 4, 0, 50, &o) == ZB_ERR_INVALID);
    zb_trace_record bad = rec(COMP, ZB_OP_COMPUTE, 10, 5, "backwards");
    ZB_CHECK(zb_overlap_compute(&bad, 1, 0, 50, &o) == ZB_ERR_INVALID);

    /* Mixed ranks: refused by the plain form, filtered by the rank form. */
    zb_trace_record m[] = {rec(COMP, ZB_OP_COMPUTE, 0, 100, "gemm"),
                           rec(COMM, ZB_OP_COMM, 0, 100, "ag")};
    m[1].rank = 1;
    ZB_CHECK(zb_overlap_compute(m, 2, 0, 1000, &o) == ZB_ERR_INVALID);
    ZB_CHECK_OK(zb_overlap_compute_rank(m, 2, 1, 0, 1000, &o));
    ZB_CHECK(o.comm_ns == 100 && o.compute_ns == 0 && o.overlap_pct == 0.0);
    ZB_CHECK_OK(zb_overlap_compute_rank(m, 2, 0, 0, 1000, &o));
    ZB_CHECK(o.comm_ns == 0 && o.compute_ns == 100 && !o.comm_measured);
}

static void test_median_min(void) {
    double odd[] = {5, 1, 3};
    ZB_CHECK(zb_median(odd, 3) == 3.0);
    ZB_CHECK(odd[0] == 1.0 && odd[2] == 5.0); /* sorted in place */
    double even[] = {4, 1, 10, 2};
    ZB_CHECK(zb_median(even, 4) == 3.0);
    double one[] = {7.5};
    ZB_CHECK(zb_median(one, 1) == 7.5);
    ZB_CHECK(isnan(zb_median(NULL, 0)));
    /* NaN entries (steps without comm) are skipped, not counted as 0. */
    double with_nan[] = {NAN, 40, 10, NAN, 20};
    ZB_CHECK_MSG(zb_median(with_nan, 5) == 20.0, "median %g", with_nan[1]);
    double with_nan2[] = {NAN, 40, 10};
    ZB_CHECK(zb_median(with_nan2, 3) == 25.0);
    double all_nan[] = {NAN, NAN};
    ZB_CHECK(isnan(zb_median(all_nan, 2)));
    double mn[] = {NAN, 3, -2, 8};
    ZB_CHECK(zb_min(mn, 4) == -2.0 && zb_max(mn, 4) == 8.0);
    ZB_CHECK(mn[1] == 3.0); /* not modified */
    ZB_CHECK(isnan(zb_min(all_nan, 2)) && isnan(zb_min(NULL, 0)));
}

int main(void) {
    test_basic_cases();
    test_nested_and_overlapping();
    test_classification();
    test_window_and_empty();
    test_median_min();
    return zb_test_finish("test_overlap");
}
