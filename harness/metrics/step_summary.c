/* The step's summaries over its records (step_summary.h). */
#include "step_summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "overlap.h"
#include "stragglers.h"

double zb_step_rec(const zb_step_records *rec, int r, int s, int f) {
    return rec->v[(size_t)r * rec->rank_stride + (size_t)s * ZB_STEP_FIELDS + (size_t)f];
}

double zb_step_rec_step_ms(const zb_step_records *rec, int s) {
    double m = NAN;
    for (int r = 0; r < rec->n_ranks; r++) {
        double v = zb_step_rec(rec, r, s, ZB_SF_LOCAL_MS);
        if (!isnan(v) && (isnan(m) || v > m)) m = v;
    }
    return m;
}

void zb_step_rec_column(const zb_step_records *rec, int f, double *out) {
    for (int r = 0; r < rec->n_ranks; r++) {
        for (int s = 0; s < rec->steps; s++) out[(size_t)r * (size_t)rec->steps + (size_t)s] = zb_step_rec(rec, r, s, f);
    }
}

static bool view_ok(const zb_step_records *rec) {
    return rec->n_ranks >= 1 && rec->steps >= 0 && rec->v &&
           rec->rank_stride >= (size_t)rec->steps * ZB_STEP_FIELDS;
}

/* Rank r's field f over its steps into col (steps values). */
static void rank_row(const zb_step_records *rec, int r, int f, double *col) {
    for (int s = 0; s < rec->steps; s++) col[s] = zb_step_rec(rec, r, s, f);
}

static void kind_summary(const zb_step_records *rec, int q, double *col, zb_step_kind_summary *k) {
    memset(k, 0, sizeof *k);
    k->skew_max_ms = k->transfer_min_ms = NAN;
    /* The arrivals are every rank's gathered alike: rank 0's row holds them. */
    for (int s = 0; s < rec->steps; s++) {
        double c = zb_step_rec(rec, 0, s, ZB_STEP_KIND_FIELD(q, ZB_SK_COUNT));
        if (!isnan(c) && c > k->count_per_step) k->count_per_step = (int)c;
    }
    rank_row(rec, 0, ZB_STEP_KIND_FIELD(q, ZB_SK_SKEW_MAX_MS), col);
    k->skew_max_ms = zb_max(col, (size_t)rec->steps);
    rank_row(rec, 0, ZB_STEP_KIND_FIELD(q, ZB_SK_XFER_MIN_MS), col);
    k->transfer_min_ms = zb_min(col, (size_t)rec->steps);
    rank_row(rec, 0, ZB_STEP_KIND_FIELD(q, ZB_SK_SKEW_MS), col);
    k->skew_ms = zb_median(col, (size_t)rec->steps);
    rank_row(rec, 0, ZB_STEP_KIND_FIELD(q, ZB_SK_XFER_MS), col);
    k->transfer_ms = zb_median(col, (size_t)rec->steps);
}

/* The fields each rank's own medians are of, in zb_step_rank_summary's order. */
static const int rank_fields[] = {ZB_SF_LOCAL_MS, ZB_SF_OVERLAP_PCT, ZB_SF_EXPOSED_MS,  ZB_SF_COMPUTE_MS,
                                  ZB_SF_COMM_MS,  ZB_SF_WAIT_MS,     ZB_SF_TRANSFER_MS, ZB_SF_EXP_WAIT_MS,
                                  ZB_SF_EXP_XFER_MS, ZB_SF_LAST_PCT};
#define N_RANK_FIELDS (sizeof rank_fields / sizeof rank_fields[0])

static void rank_summary(const zb_step_records *rec, int r, double *col, zb_step_rank_summary *out) {
    double *dst[N_RANK_FIELDS] = {&out->step_ms,     &out->overlap_pct,     &out->exposed_ms,
                                  &out->compute_ms,  &out->comm_ms,         &out->wait_ms,
                                  &out->transfer_ms, &out->exposed_wait_ms, &out->exposed_transfer_ms,
                                  &out->last_arrival_pct};
    for (size_t i = 0; i < N_RANK_FIELDS; i++) {
        rank_row(rec, r, rank_fields[i], col);
        *dst[i] = zb_median(col, (size_t)rec->steps);
    }
}

zb_status zb_step_summarize(const zb_step_records *rec, zb_step_summary *out, zb_step_rank_summary *per_rank) {
    memset(out, 0, sizeof *out);
    if (!view_ok(rec)) return ZB_FAIL(ZB_ERR_INVALID, "zb_step_summarize: a records view that does not fit its rows");
    int n = rec->n_ranks, steps = rec->steps;
    out->steps = steps;
    out->n_ranks = n;
    size_t all = (size_t)n * (size_t)steps;
    double *col = (double *)malloc(sizeof(double) * (all + 1));
    if (!col) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory summarizing %d ranks' %d steps", n, steps);
    for (int s = 0; s < steps; s++) col[s] = zb_step_rec_step_ms(rec, s);
    out->step_min_ms = zb_min(col, (size_t)steps);
    out->step_max_ms = zb_max(col, (size_t)steps);
    out->step_ms = zb_median(col, (size_t)steps);
    struct {
        int f;
        double *med;
    } over_all[] = {{ZB_SF_OVERLAP_PCT, &out->overlap_pct},     {ZB_SF_EXPOSED_MS, &out->exposed_ms},
                    {ZB_SF_COMPUTE_MS, &out->compute_ms},       {ZB_SF_COMM_MS, &out->comm_ms},
                    {ZB_SF_EXP_WAIT_MS, &out->exposed_wait_ms}, {ZB_SF_EXP_XFER_MS, &out->exposed_transfer_ms},
                    {ZB_SF_IDLE_MS, &out->idle_ms},             {ZB_SF_OPS, &out->ops},
                    {ZB_SF_HOLD_MS, &out->hold_ms}};
    for (size_t i = 0; i < sizeof over_all / sizeof over_all[0]; i++) {
        zb_step_rec_column(rec, over_all[i].f, col);
        if (over_all[i].f == ZB_SF_OVERLAP_PCT) out->overlap_min_pct = zb_min(col, all);
        *over_all[i].med = zb_median(col, all);
    }
    out->wait_measured = !isnan(out->exposed_wait_ms);
    out->overlap_worst_pct = out->exposed_worst_ms = NAN;
    for (int r = 0; r < n; r++) {
        zb_step_rank_summary rs;
        rank_summary(rec, r, col, &rs);
        if (per_rank) per_rank[r] = rs;
        if (!isnan(rs.overlap_pct) && (isnan(out->overlap_worst_pct) || rs.overlap_pct < out->overlap_worst_pct))
            out->overlap_worst_pct = rs.overlap_pct;
        if (!isnan(rs.exposed_ms) && (isnan(out->exposed_worst_ms) || rs.exposed_ms > out->exposed_worst_ms))
            out->exposed_worst_ms = rs.exposed_ms;
    }
    for (int q = 0; q < ZB_COLL_COUNT; q++) kind_summary(rec, q, col, &out->kinds[q]);
    free(col);
    return ZB_OK;
}

/* Each step's median over ranks of field f into out[0..steps). */
static void step_medians(const zb_step_records *rec, int f, double *col, double *out) {
    for (int s = 0; s < rec->steps; s++) {
        for (int r = 0; r < rec->n_ranks; r++) col[r] = zb_step_rec(rec, r, s, f);
        out[s] = zb_median(col, (size_t)rec->n_ranks);
    }
}

zb_status zb_step_pair(const zb_step_records *sync, const zb_step_records *prefetch, zb_step_pairs *out,
                       double *hidden, double *slowdown) {
    memset(out, 0, sizeof *out);
    if (!view_ok(sync) || !view_ok(prefetch) || sync->n_ranks != prefetch->n_ranks ||
        sync->steps != prefetch->steps) {
        return ZB_FAIL(ZB_ERR_INVALID, "zb_step_pair: sync's and prefetch's records are not of the same pairs");
    }
    int steps = sync->steps, n = sync->n_ranks;
    size_t per = (size_t)(steps > 0 ? steps : 1);
    double *buf = (double *)malloc(sizeof(double) * (7 * per + (size_t)n));
    if (!buf) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for the paired statistics of %d pairs", steps);
    double *s_step = buf, *p_step = buf + per, *s_exp = buf + 2 * per, *s_comp = buf + 3 * per;
    double *p_comp = buf + 4 * per, *hid = buf + 5 * per, *slow = buf + 6 * per, *col = buf + 7 * per;
    for (int i = 0; i < steps; i++) {
        s_step[i] = zb_step_rec_step_ms(sync, i);
        p_step[i] = zb_step_rec_step_ms(prefetch, i);
    }
    step_medians(sync, ZB_SF_EXPOSED_MS, col, s_exp);
    step_medians(sync, ZB_SF_COMPUTE_MS, col, s_comp);
    step_medians(prefetch, ZB_SF_COMPUTE_MS, col, p_comp);
    for (int i = 0; i < steps; i++) {
        hid[i] = s_exp[i] > 0 ? 100.0 * (s_step[i] - p_step[i]) / s_exp[i] : NAN;
        /* Slowdown beside communication: none to measure where sync's
         * exposed comm is not (nothing sent, or not traced). */
        slow[i] = s_comp[i] > 0 && isfinite(s_exp[i]) ? 100.0 * (p_comp[i] / s_comp[i] - 1.0) : NAN;
    }
    out->pairs = steps;
    out->step_diff_ms = zb_paired_diff(s_step, p_step, (size_t)steps);
    out->hidden = zb_paired_median_ci(hid, (size_t)steps);
    out->slowdown = zb_paired_median_ci(slow, (size_t)steps);
    if (hidden) memcpy(hidden, hid, sizeof(double) * (size_t)steps);
    if (slowdown) memcpy(slowdown, slow, sizeof(double) * (size_t)steps);
    free(buf);
    return ZB_OK;
}
