/* Arrival skew, transfer, and exposed wait and transfer of the step's
 * collectives (see step_wait.h). */
#include "step_wait.h"

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "mpi_wait.h"
#include "overlap.h"
#include "wait.h"

void zb_step_wait_free(zb_step_wait_stats *s) {
    free(s->per_rank);
    s->per_rank = NULL;
}

static int kind_of(const char *coll) {
    for (int k = 0; k < ZB_COLL_COUNT; k++) {
        if (!strcmp(coll, zb_coll_name((zb_coll)k))) return k;
    }
    return -1;
}

/* A record's identity across ranks: its collective and label (FNV-1a), so
 * the k-th collectives of two ranks are checked to be the same one. */
static int64_t identity_of(const zb_trace_record *r) {
    uint64_t h = 1469598103934665603ULL;
    for (const char *p = r->coll; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    h = (h ^ '/') * 1099511628211ULL;
    for (size_t i = 0; i < sizeof r->label && r->label[i]; i++) h = (h ^ (unsigned char)r->label[i]) * 1099511628211ULL;
    return (int64_t)(h >> 1);
}

/* Every rank's arrivals and completions of the step's collectives: all[r *
 * 3k + j] start, [+ k + j] end (rank 0's clock), [+ 2k + j] identity. */
typedef struct arrivals {
    size_t k;
    int64_t *all;
} arrivals;

/* Collective. Leaves a->k = 0 when the ranks did not trace the same
 * collectives (a GPU without its tracer, dropped records). */
static zb_status gather_arrivals(zb_bench_ctx *ctx, const zb_trace_record *recs, const size_t *idx, size_t k_mine,
                                 arrivals *a) {
    int n = ctx->topo.n_ranks;
    double timeout = ctx->cfg->timeout_s;
    a->k = 0;
    a->all = NULL;
    long long mine[2] = {(long long)k_mine, -(long long)k_mine}, ext[2];
    if (!zb_backends_traced(&ctx->backends)) mine[0] = mine[1] = -1;
    ZB_TRY(zb_mpi_allreduce_bounded(mine, ext, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD,
                                    "agreeing on the step's collectives", timeout));
    if (ext[0] != -ext[1] || ext[0] <= 0) return ZB_OK; /* not the same count everywhere, or none */
    size_t k = (size_t)ext[0];
    int64_t off = zb_clock_sync_offset(ctx->clock_sync, ctx->topo.rank);
    int64_t *send = (int64_t *)malloc(3 * k * sizeof(int64_t));
    int64_t *all = (int64_t *)malloc(3 * k * (size_t)n * sizeof(int64_t));
    /* Not agreed on: this rank's failure ends the job (main aborts). */
    if (!send || !all) {
        free(send);
        free(all);
        return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory gathering %zu collectives' arrivals", k);
    }
    for (size_t j = 0; j < k; j++) {
        send[j] = recs[idx[j]].start_ns + off;
        send[k + j] = recs[idx[j]].end_ns + off;
        send[2 * k + j] = identity_of(&recs[idx[j]]);
    }
    zb_status st = zb_mpi_allgather_bounded(send, all, (int)(3 * k), MPI_INT64_T, MPI_COMM_WORLD,
                                            "gathering the collectives' arrivals", timeout);
    free(send);
    if (st != ZB_OK) return st; /* a timeout: the buffer may still be MPI's */
    bool same = true;
    for (int r = 1; r < n && same; r++) {
        for (size_t j = 0; j < k && same; j++) same = all[(size_t)r * 3 * k + 2 * k + j] == all[2 * k + j];
    }
    if (!same) { /* every rank sees the same gathered data: all agree */
        free(all);
        return ZB_OK;
    }
    a->k = k;
    a->all = all;
    return ZB_OK;
}

zb_status zb_step_wait_measure(zb_bench_ctx *ctx, size_t first_record, const zb_step_result *r, double *row) {
    zb_trace *t = ctx->dev->cfg.trace;
    int me = ctx->topo.rank, n = ctx->topo.n_ranks;
    size_t n_recs = t->n_records - first_record;
    const zb_trace_record *recs = t->records + first_record;
    size_t *idx = (size_t *)malloc((n_recs + 1) * sizeof(size_t));
    if (!idx) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for the step's collectives");
    size_t k_mine = zb_trace_collectives(recs, n_recs, me, r->start_ns, r->end_ns, idx);
    arrivals av;
    zb_status st = gather_arrivals(ctx, recs, idx, k_mine, &av);
    if (st != ZB_OK || av.k == 0) {
        free(idx);
        return st;
    }
    size_t k = av.k;
    int64_t *last = (int64_t *)malloc(k * sizeof(int64_t));
    if (!last) {
        free(idx);
        free(av.all);
        return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for the step's collectives");
    }
    int64_t off = zb_clock_sync_offset(ctx->clock_sync, me);
    /* Per kind, this step's instances: skews in vals[kind * 2k ...], transfers after them. */
    double *vals = (double *)malloc(2 * k * ZB_COLL_COUNT * sizeof(double));
    if (!vals) {
        free(idx);
        free(av.all);
        free(last);
        return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for the step's collectives");
    }
    int count[ZB_COLL_COUNT] = {0}, n_last = 0;
    for (size_t j = 0; j < k; j++) {
        int64_t lo = INT64_MAX, hi = INT64_MIN, end_max = INT64_MIN;
        int last_rank = 0;
        for (int q = 0; q < n; q++) {
            const int64_t *arr = av.all + (size_t)q * 3 * k;
            if (arr[j] < lo) lo = arr[j];
            if (arr[j] > hi) {
                hi = arr[j];
                last_rank = q;
            }
            if (arr[k + j] > end_max) end_max = arr[k + j];
        }
        last[j] = hi - off; /* back on this rank's clock */
        n_last += last_rank == me;
        int kind = kind_of(recs[idx[j]].coll);
        if (kind < 0) continue;
        double skew_ms = (double)(hi - lo) / 1e6, xfer_ms = end_max > hi ? (double)(end_max - hi) / 1e6 : 0.0;
        vals[(size_t)kind * 2 * k + (size_t)count[kind]] = skew_ms;
        vals[(size_t)kind * 2 * k + k + (size_t)count[kind]] = xfer_ms;
        count[kind]++;
    }
    for (int q = 0; q < ZB_COLL_COUNT; q++) {
        if (!count[q]) continue;
        double *skews = vals + (size_t)q * 2 * k, *xfers = skews + k;
        row[ZB_STEP_KIND_FIELD(q, ZB_SK_COUNT)] = count[q];
        row[ZB_STEP_KIND_FIELD(q, ZB_SK_SKEW_MAX_MS)] = zb_max(skews, (size_t)count[q]);
        row[ZB_STEP_KIND_FIELD(q, ZB_SK_XFER_MIN_MS)] = zb_min(xfers, (size_t)count[q]);
        row[ZB_STEP_KIND_FIELD(q, ZB_SK_SKEW_MS)] = zb_median(skews, (size_t)count[q]);
        row[ZB_STEP_KIND_FIELD(q, ZB_SK_XFER_MS)] = zb_median(xfers, (size_t)count[q]);
    }
    free(vals);
    zb_wait_split ws;
    st = zb_wait_split_compute(recs, n_recs, r->start_ns, r->end_ns + 1, idx, last, k, &ws);
    if (st == ZB_OK) {
        row[ZB_SF_EXP_WAIT_MS] = (double)ws.exposed_wait_ns / 1e6;
        row[ZB_SF_EXP_XFER_MS] = (double)ws.exposed_transfer_ns / 1e6;
        row[ZB_SF_WAIT_MS] = (double)ws.wait_ns / 1e6;
        row[ZB_SF_TRANSFER_MS] = (double)ws.transfer_ns / 1e6;
        row[ZB_SF_LAST_PCT] = 100.0 * n_last / (double)k;
    }
    free(last);
    free(idx);
    free(av.all);
    return st;
}

zb_status zb_step_wait_take(const zb_step_summary *sum, const zb_step_rank_summary *per_rank, zb_step_wait_stats *out) {
    memset(out, 0, sizeof *out);
    int n = sum->n_ranks;
    out->n_ranks = n;
    out->per_rank = (zb_wait_rank *)calloc((size_t)(n > 0 ? n : 1), sizeof(zb_wait_rank));
    /* Not agreed on: this rank's failure ends the job (main aborts). */
    if (!out->per_rank) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for the wait statistics of %d ranks", n);
    for (int r = 0; r < n && per_rank; r++) {
        const zb_step_rank_summary *p = &per_rank[r];
        zb_wait_rank w = {p->wait_ms, p->transfer_ms, p->exposed_wait_ms, p->exposed_transfer_ms, p->last_arrival_pct};
        out->per_rank[r] = w;
    }
    out->measured = sum->wait_measured;
    out->exposed_wait_ms = sum->exposed_wait_ms;
    out->exposed_transfer_ms = sum->exposed_transfer_ms;
    for (int q = 0; q < ZB_COLL_COUNT; q++) {
        const zb_step_kind_summary *k = &sum->kinds[q];
        zb_wait_kind w = {k->count_per_step, k->skew_ms, k->skew_max_ms, k->transfer_ms, k->transfer_min_ms};
        out->kinds[q] = w;
    }
    return ZB_OK;
}

/* One collective kind's figures, metrics.by_collective.<kind>. */
static json_t *kind_json(const zb_wait_kind *w) {
    json_t *o = json_object();
    json_object_set_new(o, "count_per_step", json_integer(w->count_per_step));
    json_object_set_new(o, "arrival_skew_ms", zb_json_real_or_null(w->arrival_skew_ms));
    json_object_set_new(o, "arrival_skew_max_ms", zb_json_real_or_null(w->arrival_skew_max_ms));
    json_object_set_new(o, "transfer_ms", zb_json_real_or_null(w->transfer_ms));
    json_object_set_new(o, "transfer_min_ms", zb_json_real_or_null(w->transfer_min_ms));
    return o;
}

zb_status zb_step_wait_csv_columns(zb_report *report) {
    json_t *by = json_object(), *skeleton = json_pack("{s:{s:o}}", "metrics", "by_collective", by);
    const zb_wait_kind none = {0};
    for (int q = 0; by && q < ZB_COLL_COUNT; q++) {
        if (q != ZB_COLL_BARRIER) json_object_set_new(by, zb_coll_name((zb_coll)q), kind_json(&none));
    }
    zb_status s = skeleton ? zb_report_csv_declare(report, skeleton)
                           : ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the step's CSV columns");
    json_decref(skeleton);
    return s;
}

void zb_step_wait_json(const zb_step_wait_stats *s, json_t *run) {
    json_t *metrics = json_object_get(run, "metrics");
    if (metrics) {
        json_t *by = json_object();
        for (int q = 0; q < ZB_COLL_COUNT; q++) {
            const zb_wait_kind *w = &s->kinds[q];
            if (w->count_per_step) json_object_set_new(by, zb_coll_name((zb_coll)q), kind_json(w));
        }
        json_object_set_new(metrics, "by_collective", by);
    }
    /* Per rank: into the run's per_rank entries (the per-rank figures), one
     * added for a rank that has none. */
    json_t *ranks = json_object_get(run, "per_rank");
    if (!json_is_array(ranks)) {
        ranks = json_array();
        json_object_set_new(run, "per_rank", ranks);
    }
    for (int r = 0; s->per_rank && r < s->n_ranks; r++) {
        json_t *o = NULL;
        for (size_t i = 0; i < json_array_size(ranks) && !o; i++) {
            json_t *e = json_array_get(ranks, i);
            if (json_integer_value(json_object_get(e, "rank")) == r && json_is_integer(json_object_get(e, "rank"))) o = e;
        }
        if (!o) {
            o = json_pack("{s:i}", "rank", r);
            json_array_append_new(ranks, o);
        }
        const zb_wait_rank *w = &s->per_rank[r];
        json_object_set_new(o, "wait_ms", zb_json_real_or_null(w->wait_ms));
        json_object_set_new(o, "transfer_ms", zb_json_real_or_null(w->transfer_ms));
        json_object_set_new(o, "exposed_wait_ms", zb_json_real_or_null(w->exposed_wait_ms));
        json_object_set_new(o, "exposed_transfer_ms", zb_json_real_or_null(w->exposed_transfer_ms));
        json_object_set_new(o, "last_arrival_pct", zb_json_real_or_null(w->last_arrival_pct));
    }
}

void zb_step_wait_print(FILE *f, int stage, const char *mode, const zb_step_wait_stats *s) {
    if (!f || !s->measured) return;
    fprintf(f, "# arrivals, stage %d %s (median per collective):", stage, mode);
    const char *sep = " ";
    for (int q = 0; q < ZB_COLL_COUNT; q++) {
        const zb_wait_kind *w = &s->kinds[q];
        if (!w->count_per_step) continue;
        fprintf(f, "%s%s x%d arrival skew %.3f ms (max %.3f), transfer %.3f ms (min %.3f)", sep,
                zb_coll_name((zb_coll)q), w->count_per_step, w->arrival_skew_ms, w->arrival_skew_max_ms,
                w->transfer_ms, w->transfer_min_ms);
        sep = "; ";
    }
    int late = -1;
    for (int r = 0; s->per_rank && r < s->n_ranks; r++) {
        double p = s->per_rank[r].last_arrival_pct;
        if (!isnan(p) && (late < 0 || p > s->per_rank[late].last_arrival_pct)) late = r;
    }
    if (late >= 0 && s->n_ranks > 1) {
        fprintf(f, "; rank %d arrived last at %.0f %% of them", late, s->per_rank[late].last_arrival_pct);
    }
    fprintf(f, "\n");
}
