/* MPI test of the clock alignment (harness/control/clock_sync.h) and its use in the
 * trace export, run at 2 and 4 ranks on one machine. The upper half of the
 * ranks plays node 1 and gets a clock 5 s ahead (ZB_TEST_CLOCK_SKEW_NS, set
 * before the first clock reading). Checked:
 *   - node 0's ranks have offset exactly 0; node 1's ranks all have the same
 *     offset, within its uncertainty of -5 s; every rank holds every result;
 *   - a one-node job measures nothing and reports offsets of 0;
 *   - each rank traces one op around an MPI_Barrier. A barrier cannot end on
 *     any rank before every rank has entered it, so those ops overlap in
 *     real time: in the exported trace they must overlap to within the
 *     uncertainties (nothing else: no timing assumption), and without the
 *     recorded offsets (each rank's own clock) they are ~5 s apart. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "clock_sync.h"
#include "mpi_boot.h"
#include "trace_export.h"
#include "zb_test.h"

#define SKEW_NS 5000000000LL

static int64_t llabs64(int64_t v) { return v < 0 ? -v : v; }

static void test_two_nodes(const zb_topology *t, zb_clock_sync *s) {
    zb_status st = zb_clock_sync_run(t, 30.0, s);
    ZB_CHECK_OK(st);
    if (st != ZB_OK) return;
    ZB_CHECK(s->n_ranks == t->n_ranks && s->n_nodes == 2);
    ZB_CHECK(s->round_trips == ZB_CLOCK_SYNC_ROUND_TRIPS);
    int first1 = t->n_ranks / 2;
    for (int r = 0; r < t->n_ranks; r++) {
        if (r < first1) {
            ZB_CHECK_MSG(s->node[r] == 0 && s->offset_ns[r] == 0 && s->uncertainty_ns[r] == 0,
                         "rank %d (node 0): node %d offset %lld uncertainty %lld", r, s->node[r],
                         (long long)s->offset_ns[r], (long long)s->uncertainty_ns[r]);
        } else {
            int64_t err = s->offset_ns[r] + SKEW_NS;
            ZB_CHECK_MSG(s->node[r] == 1 && llabs64(err) <= s->uncertainty_ns[r],
                         "rank %d (node 1): offset %lld, expected -5 s within %lld ns", r,
                         (long long)s->offset_ns[r], (long long)s->uncertainty_ns[r]);
            /* Coarse sanity only: a round trip on one machine is far below 1 s. */
            ZB_CHECK(s->uncertainty_ns[r] >= 0 && s->uncertainty_ns[r] < 1000000000LL);
            ZB_CHECK(s->offset_ns[r] == s->offset_ns[first1] && s->uncertainty_ns[r] == s->uncertainty_ns[first1]);
        }
    }
    /* Every rank holds the same table. */
    int64_t sum = 0, min = 0, max = 0;
    for (int r = 0; r < t->n_ranks; r++) sum += s->offset_ns[r] ^ (s->uncertainty_ns[r] << 1);
    MPI_Allreduce(&sum, &min, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&sum, &max, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    ZB_CHECK_MSG(min == max, "rank %d: the ranks' offset tables differ", t->rank);
}

static void test_one_node(const zb_topology *two_nodes) {
    zb_topology t = *two_nodes;
    t.node = 0;
    t.n_nodes = 1;
    zb_clock_sync s;
    ZB_CHECK_OK(zb_clock_sync_run(&t, 30.0, &s));
    ZB_CHECK(s.round_trips == 0 && s.n_ranks == t.n_ranks);
    for (int r = 0; r < s.n_ranks; r++) ZB_CHECK(s.offset_ns[r] == 0 && s.uncertainty_ns[r] == 0);
    json_t *j = zb_clock_sync_json(&s);
    ZB_CHECK(j && strcmp(json_string_value(json_object_get(j, "method")), "single_node") == 0);
    json_decref(j);
    zb_clock_sync_free(&s);
}

/* Start and end (ns) of rank r's "barrier" event in the exported trace. */
static void event_of(json_t *doc, int r, double *start_ns, double *end_ns) {
    *start_ns = *end_ns = -1;
    json_t *events = json_object_get(doc, "traceEvents");
    for (size_t i = 0; i < json_array_size(events); i++) {
        json_t *e = json_array_get(events, i);
        const char *ph = json_string_value(json_object_get(e, "ph"));
        if (!ph || strcmp(ph, "X") != 0 || json_integer_value(json_object_get(e, "pid")) != r + 1) continue; /* pid = rank + 1 */
        double ts = json_number_value(json_object_get(e, "ts")), dur = json_number_value(json_object_get(e, "dur"));
        *start_ns = ts * 1e3;
        *end_ns = (ts + dur) * 1e3;
    }
}

static void check_trace(const char *path, const zb_clock_sync *s) {
    json_error_t jerr;
    json_t *doc = json_load_file(path, 0, &jerr);
    ZB_CHECK_MSG(doc != NULL, "%s: %s", path, jerr.text);
    if (!doc) return;
    json_t *meta = json_object_get(json_object_get(doc, "otherData"), "clock_sync");
    json_t *ranks = json_object_get(meta, "ranks");
    ZB_CHECK((int)json_array_size(ranks) == s->n_ranks);
    double max_start = -1e300, min_end = 1e300, raw_max_start = -1e300, raw_min_end = 1e300;
    int64_t max_unc = 0;
    for (int r = 0; r < s->n_ranks; r++) {
        json_t *jr = json_array_get(ranks, (size_t)r);
        int64_t off = (int64_t)json_integer_value(json_object_get(jr, "offset_ns"));
        ZB_CHECK_MSG(off == s->offset_ns[r], "trace offset of rank %d is %lld, measured %lld", r, (long long)off,
                     (long long)s->offset_ns[r]);
        if (s->uncertainty_ns[r] > max_unc) max_unc = s->uncertainty_ns[r];
        double a, b;
        event_of(doc, r, &a, &b);
        ZB_CHECK_MSG(a >= 0 && b >= a, "rank %d has no barrier event", r);
        if (a > max_start) max_start = a;
        if (b < min_end) min_end = b;
        /* Back on the rank's own clock (up to a common origin). */
        if (a - (double)off > raw_max_start) raw_max_start = a - (double)off;
        if (b - (double)off < raw_min_end) raw_min_end = b - (double)off;
    }
    /* 1 us for the microsecond doubles in the file. */
    double slack = 2.0 * (double)max_unc + 1e3;
    ZB_CHECK_MSG(max_start - min_end <= slack,
                 "aligned: the latest start is %.0f ns after the earliest end (allowed %.0f)", max_start - min_end,
                 slack);
    ZB_CHECK_MSG(raw_max_start - raw_min_end > 4e9,
                 "unaligned: the ranks are only %.0f ns apart; the skew did not take", raw_max_start - raw_min_end);
    json_decref(doc);
}

static void test_trace(const zb_topology *t, const zb_clock_sync *s) {
    zb_trace tr;
    ZB_CHECK_OK(zb_trace_init(&tr, t->rank, true));
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t a = zb_now_ns();
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t b = zb_now_ns();
    zb_op_info info = {ZB_OP_COMM, "barrier", -1, 0, 0.0};
    zb_trace_add(&tr, 1, &info, 0, a, b);
    char path[64] = "";
    if (t->rank == 0) snprintf(path, sizeof path, "/tmp/zb_test_trace_align_%d.json", (int)getpid());
    MPI_Bcast(path, (int)sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    ZB_CHECK_OK(zb_trace_export_chrome(&tr, s, path, 60.0));
    /* The records the metrics read stay on the rank's own clock. */
    ZB_CHECK(tr.n_records == 1 && tr.records[0].start_ns == a && tr.records[0].end_ns == b);
    if (t->rank == 0) {
        check_trace(path, s);
        remove(path);
    }
    zb_trace_destroy(&tr);
}

int main(int argc, char **argv) {
    unsetenv("ZB_NODE_ID");
    if (zb_mpi_init(&argc, &argv) != ZB_OK) {
        fprintf(stderr, "zb_mpi_init: %s\n", zb_error_message());
        zb_mpi_abort(1);
    }
    zb_topology t;
    memset(&t, 0, sizeof t);
    MPI_Comm_rank(MPI_COMM_WORLD, &t.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t.n_ranks);
    /* Two "nodes": the lower half of the ranks (with rank 0) and the upper. */
    t.n_nodes = 2;
    t.node = t.rank >= t.n_ranks / 2 ? 1 : 0;
    /* Before any clock reading: the hook is read once. */
    if (t.node == 1) setenv("ZB_TEST_CLOCK_SKEW_NS", "5000000000", 1);
    else unsetenv("ZB_TEST_CLOCK_SKEW_NS");
    zb_clock_sync s;
    memset(&s, 0, sizeof s);
    test_two_nodes(&t, &s);
    test_one_node(&t);
    if (s.offset_ns) test_trace(&t, &s);
    zb_clock_sync_free(&s);
    int mine = zb_test_failures, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    zb_test_failures = total;
    zb_mpi_finalize();
    if (t.rank != 0) return total == 0 ? 0 : 1;
    return zb_test_finish("test_trace_align");
}
