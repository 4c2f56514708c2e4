/* The step's summaries over its records (harness/metrics/step_summary.h)
 * on synthetic records with answers worked out by hand: the step time is
 * the maximum over ranks, medians over steps and ranks skip NaN (not
 * measured), each rank's own medians, the worst rank, waiting vs transfer,
 * the per-kind arrival figures from rank 0's rows, a block with room for
 * more rows than measured, and --mode both's per-pair hidden % and
 * slowdown. No MPI. */
#include <math.h>
#include <string.h>

#include "step_summary.h"
#include "zb_test.h"

enum { RANKS = 3, STEPS = 4, CAP = 6 };

/* v[r][s][f] with room for CAP rows a rank; every field NaN first. */
static double v[RANKS][CAP][ZB_STEP_FIELDS];

static void clear(void) {
    for (int r = 0; r < RANKS; r++)
        for (int s = 0; s < CAP; s++)
            for (int f = 0; f < ZB_STEP_FIELDS; f++) v[r][s][f] = NAN;
}

static zb_step_records view(int steps) {
    zb_step_records rec = {RANKS, steps, (size_t)CAP * ZB_STEP_FIELDS, &v[0][0][0]};
    return rec;
}

static bool near(double a, double b) { return fabs(a - b) < 1e-12; }

int main(void) {
    clear();
    /* local step times: rank r at step s = 10 + s + r; max over ranks 12 + s. */
    for (int r = 0; r < RANKS; r++) {
        for (int s = 0; s < STEPS; s++) {
            v[r][s][ZB_SF_LOCAL_MS] = 10 + s + r;
            v[r][s][ZB_SF_OVERLAP_PCT] = 10.0 * (r + 1) + s; /* rank 0: 10..13, 1: 20..23, 2: 30..33 */
            v[r][s][ZB_SF_EXPOSED_MS] = 1.0 + r;
            v[r][s][ZB_SF_COMPUTE_MS] = 5.0;
            v[r][s][ZB_SF_COMM_MS] = 2.0;
            v[r][s][ZB_SF_EXP_WAIT_MS] = 0.25 * r;
            v[r][s][ZB_SF_EXP_XFER_MS] = 1.0 + 0.75 * r;
            v[r][s][ZB_SF_IDLE_MS] = 0.5 + 0.1 * s; /* 0.5 .. 0.8 */
            v[r][s][ZB_SF_OPS] = r == 2 ? 101 : 100;
        }
    }
    /* Rank 2 did not trace step 3: its trace figures there are not measured. */
    v[2][3][ZB_SF_OVERLAP_PCT] = NAN;
    /* A row past the measured steps is never read. */
    v[0][STEPS][ZB_SF_LOCAL_MS] = 1e9;
    /* All-gather: 2 instances, skew 0.1..0.4 by step, its max instance 1.0 at step 2. */
    for (int s = 0; s < STEPS; s++) {
        v[0][s][ZB_STEP_KIND_FIELD(ZB_COLL_ALLGATHER, ZB_SK_COUNT)] = 2;
        v[0][s][ZB_STEP_KIND_FIELD(ZB_COLL_ALLGATHER, ZB_SK_SKEW_MS)] = 0.1 * (s + 1);
        v[0][s][ZB_STEP_KIND_FIELD(ZB_COLL_ALLGATHER, ZB_SK_SKEW_MAX_MS)] = s == 2 ? 1.0 : 0.5;
        v[0][s][ZB_STEP_KIND_FIELD(ZB_COLL_ALLGATHER, ZB_SK_XFER_MS)] = 3.0;
        v[0][s][ZB_STEP_KIND_FIELD(ZB_COLL_ALLGATHER, ZB_SK_XFER_MIN_MS)] = 2.0 + s;
    }
    zb_step_records rec = view(STEPS);
    ZB_CHECK(near(zb_step_rec_step_ms(&rec, 0), 12) && near(zb_step_rec_step_ms(&rec, 3), 15));
    zb_step_summary sum;
    zb_step_rank_summary pr[RANKS];
    ZB_CHECK_OK(zb_step_summarize(&rec, &sum, pr));
    ZB_CHECK(sum.steps == STEPS && sum.n_ranks == RANKS);
    ZB_CHECK(near(sum.step_ms, 13.5) && near(sum.step_min_ms, 12) && near(sum.step_max_ms, 15));
    /* overlap: 11 values (one NaN left out): 10..13, 20..23, 30..32: median 21. */
    ZB_CHECK_MSG(near(sum.overlap_pct, 21) && near(sum.overlap_min_pct, 10), "overlap %g min %g", sum.overlap_pct,
                 sum.overlap_min_pct);
    ZB_CHECK(near(sum.exposed_ms, 2) && near(sum.compute_ms, 5) && near(sum.comm_ms, 2));
    /* idle time and ops: medians over every step and rank */
    ZB_CHECK_MSG(near(sum.idle_ms, 0.65) && near(sum.ops, 100), "idle %g ops %g", sum.idle_ms, sum.ops);
    /* per rank: rank 1's step times 11..14 (median 12.5); rank 2's overlap 30..32 (31) */
    ZB_CHECK(near(pr[1].step_ms, 12.5) && near(pr[2].overlap_pct, 31) && near(pr[0].overlap_pct, 11.5));
    ZB_CHECK(near(sum.overlap_worst_pct, 11.5) && near(sum.exposed_worst_ms, 3));
    /* waiting vs transfer: medians over steps and ranks; rank 2's own */
    ZB_CHECK(sum.wait_measured && near(sum.exposed_wait_ms, 0.25) && near(sum.exposed_transfer_ms, 1.75));
    ZB_CHECK(near(pr[2].exposed_wait_ms, 0.5) && isnan(pr[2].wait_ms));
    const zb_step_kind_summary *ag = &sum.kinds[ZB_COLL_ALLGATHER];
    ZB_CHECK(ag->count_per_step == 2 && near(ag->skew_ms, 0.25) && near(ag->skew_max_ms, 1.0));
    ZB_CHECK(near(ag->transfer_ms, 3.0) && near(ag->transfer_min_ms, 2.0));
    ZB_CHECK(sum.kinds[ZB_COLL_REDUCESCATTER].count_per_step == 0 && isnan(sum.kinds[ZB_COLL_REDUCESCATTER].skew_ms));
    /* the column is rank-major */
    double col[RANKS * STEPS];
    zb_step_rec_column(&rec, ZB_SF_OVERLAP_PCT, col);
    ZB_CHECK(col[0] == 10 && col[STEPS] == 20 && isnan(col[2 * STEPS + 3]));

    /* Nothing measured: every figure NaN, no wait measured. */
    clear();
    rec = view(STEPS);
    ZB_CHECK_OK(zb_step_summarize(&rec, &sum, NULL));
    ZB_CHECK(isnan(sum.step_ms) && isnan(sum.overlap_pct) && !sum.wait_measured && isnan(sum.overlap_worst_pct));
    /* A view that does not fit its rows is refused. */
    zb_step_records bad = {RANKS, CAP + 1, (size_t)CAP * ZB_STEP_FIELDS, &v[0][0][0]};
    ZB_CHECK(zb_step_summarize(&bad, &sum, NULL) == ZB_ERR_INVALID);
    zb_error_clear();

    /* Pairs: sync at 20 ms with 4 ms exposed and 10 ms compute; prefetch
     * 2 ms faster each pair (hidden 50 %) with compute 11 ms (slowdown 10 %). */
    enum { PAIRS = 8 };
    static double sv[RANKS][PAIRS][ZB_STEP_FIELDS], pv[RANKS][PAIRS][ZB_STEP_FIELDS];
    for (int r = 0; r < RANKS; r++) {
        for (int s = 0; s < PAIRS; s++) {
            for (int f = 0; f < ZB_STEP_FIELDS; f++) sv[r][s][f] = pv[r][s][f] = NAN;
            sv[r][s][ZB_SF_LOCAL_MS] = 20.0 + s - r; /* max over ranks: rank 0's */
            pv[r][s][ZB_SF_LOCAL_MS] = 18.0 + s - r;
            sv[r][s][ZB_SF_EXPOSED_MS] = 4.0;
            sv[r][s][ZB_SF_COMPUTE_MS] = 10.0;
            pv[r][s][ZB_SF_COMPUTE_MS] = r == 1 ? 99.0 : 11.0; /* the median over ranks ignores rank 1 */
        }
    }
    zb_step_records s_rec = {RANKS, PAIRS, (size_t)PAIRS * ZB_STEP_FIELDS, &sv[0][0][0]};
    zb_step_records p_rec = {RANKS, PAIRS, (size_t)PAIRS * ZB_STEP_FIELDS, &pv[0][0][0]};
    zb_step_pairs p;
    double hidden[PAIRS], slow[PAIRS];
    ZB_CHECK_OK(zb_step_pair(&s_rec, &p_rec, &p, hidden, slow));
    ZB_CHECK(p.pairs == PAIRS && near(p.step_diff_ms.median, -2) && p.step_diff_ms.significant);
    ZB_CHECK(near(hidden[0], 50) && near(p.hidden.median, 50) && near(slow[3], 10) && near(p.slowdown.median, 10));
    /* sync exposed nothing measurable: no hidden %, no slowdown */
    for (int r = 0; r < RANKS; r++) sv[r][0][ZB_SF_EXPOSED_MS] = NAN;
    ZB_CHECK_OK(zb_step_pair(&s_rec, &p_rec, &p, hidden, slow));
    ZB_CHECK(isnan(hidden[0]) && isnan(slow[0]) && p.hidden.n == PAIRS - 1);
    /* Records of different pairs are refused. */
    p_rec.steps = PAIRS - 1;
    ZB_CHECK(zb_step_pair(&s_rec, &p_rec, &p, NULL, NULL) == ZB_ERR_INVALID);
    zb_error_clear();
    return zb_test_finish("test_step_summary");
}
