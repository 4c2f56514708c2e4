/* The collective benchmark loop shared by all-gather, reduce-scatter and
 * all-reduce (see coll_bench.h).
 *
 * Per size: warm-up iterations, a barrier, then `iters` back-to-back
 * collectives on the comm stream timed from the host around a stream sync
 * (nccl-tests times the same way); the per-iteration time is reduced across
 * ranks as -a says. An event after each iteration (iter_samples.h) gives
 * the per-iteration samples, reduced across ranks alike, in the JSON as
 * metrics.samples.time_us for compare's test. With --compare-direct the out-of-place loop alternates
 * with the plain MPI calls' loops in rounds (compare_rounds) and reports its
 * best round. The check runs afterwards on freshly seeded data, never
 * inside the timed loop. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_bench.h"
#include "iter_samples.h"
#include "time_ranks.h"
#include "metrics.h"
#include "overlap.h"
#include "parse.h"
#include "row.h"

#define ZB_COLL_SEED 0x5eedULL

/* ---- options: the sweep, and -i (the collectives' own) ---------------------- */

#define TB 1099511627776.0 /* 1T: the largest size a flag takes */

static const zb_opt opt_stepbytes = {"stepbytes", 'i', ZB_OPT_SIZE, ZB_OPT_FIELD(step_bytes), 1, TB,
                                     "add this many bytes each step instead of -f"};

/* nccl-tests' -f and -i exclude each other; -i replaces the factor. */
static zb_status check_step(zb_config *cfg, const zb_opt_seen *seen) {
    bool gave_i = zb_opt_given(seen, &opt_stepbytes);
    if (gave_i && zb_opt_given(seen, &zb_opt_stepfactor)) {
        return ZB_FAIL(ZB_ERR_INVALID, "-f/--stepfactor and -i/--stepbytes exclude each other: give one");
    }
    if (gave_i) cfg->step_factor = 0;
    return ZB_OK;
}

/* Cold buffers: a collective in a training step reads a shard and writes a
 * gathered buffer that the compute since its last use has pushed out of
 * the caches, while a back-to-back loop on one buffer runs from them once
 * the buffer fits (on the CPU backend, 2 ranks here: all-gather at 4 MiB
 * 7.2 GB/s busbw from the caches, 3.5 at 16 MiB, as the step's own saw). */
static const zb_opt opt_rotate = {"rotate-bytes", 0, ZB_OPT_SIZE, ZB_OPT_FIELD(rotate_bytes), 0, TB,
                                  "cycle the calls over send and receive buffers of this many bytes each, a new "
                                  "part each call, so that no call finds its data in the caches (0: one buffer, "
                                  "as nccl-tests)"};

/* The collectives' own flags together: -i, and --rotate-bytes (the direct
 * calls of --compare-direct run on one buffer). */
static zb_status check_coll(zb_config *cfg, const zb_opt_seen *seen) {
    ZB_TRY(check_step(cfg, seen));
    if (cfg->rotate_bytes && cfg->compare_direct) {
        return ZB_FAIL(ZB_ERR_INVALID, "--rotate-bytes and --compare-direct exclude each other: the direct "
                                       "calls use one buffer");
    }
    return ZB_OK;
}

static const zb_opt *const step_opts[] = {&opt_stepbytes, &zb_opt_straggler_pct, &opt_rotate, NULL};
static const zb_opt_group coll_step = {step_opts, check_coll};
const zb_opt_group *const zb_coll_opt_groups[] = {&zb_opts_sweep_range, &coll_step, &zb_opts_sweep_run,
                                                   &zb_coll_opts_nccl_tests, NULL};

/* ---- the benchmark ---------------------------------------------------------- */

typedef struct coll_row {
    double seconds;
    double algbw_gbps, busbw_gbps;
    int64_t wrong; /* -1 when not checked */
    zb_iter_samples samples; /* per-iteration times, ranks reduced as -a says */
} coll_row;


static zb_status issue(zb_bench_ctx *ctx, const zb_coll_def *def, const zb_coll_args *a) {
    return def->issue(ctx->comm, ctx->comm_stream, a, def->name);
}

/* The timed loop: this rank's seconds per iteration, and its per-iteration
 * samples (this rank's, not yet reduced). */
static zb_status timed_loop(zb_bench_ctx *ctx, const zb_coll_def *def, const zb_coll_args *a,
                            const zb_coll_slots *sl, zb_iter_marks *marks, double *seconds, zb_iter_samples *samples) {
    const zb_config *cfg = ctx->cfg;
    for (int64_t i = 0; i < cfg->warmup_iters; i++) {
        zb_coll_args x = zb_coll_slot_args(a, sl, i);
        ZB_TRY(issue(ctx, def, &x));
    }
    ZB_TRY(zb_comm_barrier(ctx->comm, ctx->comm_stream));
    ZB_TRY(zb_comm_wait(ctx->comm, ctx->comm_stream, "warm-up", -1));
    int64_t t0 = zb_dev_now_ns(ctx->dev); /* virtual time on the sim */
    ZB_TRY(zb_iter_marks_begin(marks, ctx->dev, ctx->comm_stream, cfg->iters));
    for (int64_t i = 0; i < cfg->iters; i++) {
        zb_coll_args x = zb_coll_slot_args(a, sl, cfg->warmup_iters + i);
        ZB_TRY(issue(ctx, def, &x));
        ZB_TRY(zb_iter_marks_after(marks, i));
    }
    ZB_TRY(zb_comm_wait(ctx->comm, ctx->comm_stream, "timed loop", -1));
    *seconds = (double)(zb_dev_now_ns(ctx->dev) - t0) / 1e9 / (double)cfg->iters;
    return zb_iter_marks_read(marks, samples);
}

/* Seeded input, written on the host and copied to the device buffer: the
 * same path for host (cpu) and device (cuda) memory. */
static zb_status load_input(zb_bench_ctx *ctx, const zb_coll_def *def, const zb_coll_args *a, void *host) {
    zb_coll_args h = *a;
    h.send = host;
    zb_coll_fill_input(def, &h);
    zb_op_info info = {ZB_OP_COPY, "load_input", -1, 0, 0};
    size_t bytes = zb_coll_send_elems(def, a->count, a->n_ranks) * zb_dtype_size(a->dtype);
    ZB_TRY(ctx->dev->ops->memcpy_async(ctx->comm_stream, a->send, host, bytes, &info));
    return zb_comm_wait(ctx->comm, ctx->comm_stream, "load_input", -1);
}

static zb_status check_once(zb_bench_ctx *ctx, const zb_coll_def *def, const zb_coll_args *a, void *host,
                            int64_t *wrong) {
    ZB_TRY(load_input(ctx, def, a, host));
    ZB_TRY(issue(ctx, def, a));
    zb_op_info info = {ZB_OP_COPY, "read_output", -1, 0, 0};
    size_t bytes = zb_coll_recv_elems(def, a->count, a->n_ranks) * zb_dtype_size(a->dtype);
    ZB_TRY(ctx->dev->ops->memcpy_async(ctx->comm_stream, host, a->recv, bytes, &info));
    ZB_TRY(zb_comm_wait(ctx->comm, ctx->comm_stream, "read_output", -1));
    zb_coll_args h = *a;
    h.recv = host;
    return zb_bench_sum(ctx, zb_coll_count_wrong(def, &h), wrong);
}

/* The plain MPI baseline of one size (--compare-direct; 0: not timed): each
 * call's best round, and the harness's overhead over the better call in
 * its best round pair and as the median over the paired rounds. */
typedef struct coll_direct {
    double blocking_s, nonblocking_s, best_s;
    double median_overhead_pct;
    json_t *rounds; /* every round's three times, in the JSON; owned */
} coll_direct;

/* --compare-direct: the harness's timed loop and the two plain calls, in
 * --direct-rounds rounds whose order rotates (comm, non-blocking, blocking;
 * then starting one later), so drift in the machine's load lands on all
 * three alike. Each side's figure is its best round (ranks reduced as -a
 * says); local_best is this rank's best comm round. */
static zb_status compare_rounds(zb_bench_ctx *ctx, const zb_coll_def *def, const zb_coll_args *a,
                                zb_iter_marks *marks, coll_direct *d, double *local_best, double *comm_s,
                                zb_iter_samples *samples) {
    const zb_config *cfg = ctx->cfg;
    int rounds = (int)cfg->direct_rounds;
    double *overhead = (double *)malloc((size_t)rounds * sizeof *overhead);
    if (!overhead) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory for %d rounds", rounds);
    zb_coll_direct plain;
    zb_status st = zb_coll_direct_open(&plain, def, a);
    *local_best = *comm_s = d->blocking_s = d->nonblocking_s = INFINITY;
    d->rounds = json_array();
    if (!d->rounds) st = ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the rounds");
    zb_iter_samples *round = (zb_iter_samples *)malloc(sizeof *round);
    if (!round && st == ZB_OK) st = ZB_FAIL(ZB_ERR_NOMEM, "out of memory for a round's samples");
    samples->n = 0;
    for (int r = 0; r < rounds && st == ZB_OK; r++) {
        double t[3] = {0.0, 0.0, 0.0}; /* comm, non-blocking, blocking */
        for (int k = 0; k < 3 && st == ZB_OK; k++) {
            int m = (k + r) % 3;
            double local = 0.0;
            if (m == 0) {
                const zb_coll_slots one = {1, 0}; /* --rotate-bytes is refused with --compare-direct */
                st = timed_loop(ctx, def, a, &one, marks, &local, round);
                if (st == ZB_OK && local < *local_best) *local_best = local;
            } else {
                st = zb_coll_direct_time(&plain, a, m == 2, cfg->iters, cfg->warmup_iters, &local);
            }
            if (st == ZB_OK) st = zb_bench_reduce_time(ctx, local, &t[m]);
        }
        double best = t[1] < t[2] ? t[1] : t[2];
        overhead[r] = 100.0 * (t[0] - best) / best;
        json_t *one = json_pack("{s:f,s:f,s:f}", "comm", t[0] * 1e6, "nonblocking", t[1] * 1e6, "blocking", t[2] * 1e6);
        if (!one || json_array_append_new(d->rounds, one) != 0) st = ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the rounds");
        if (t[0] < *comm_s) { /* the best round's figure and, with it, its samples (t[0]: alike on every rank) */
            *comm_s = t[0];
            *samples = *round;
        }
        if (t[1] < d->nonblocking_s) d->nonblocking_s = t[1];
        if (t[2] < d->blocking_s) d->blocking_s = t[2];
    }
    free(round);
    if (plain.comm != MPI_COMM_NULL) zb_coll_direct_close(&plain);
    d->best_s = d->blocking_s < d->nonblocking_s ? d->blocking_s : d->nonblocking_s;
    d->median_overhead_pct = st == ZB_OK ? zb_median(overhead, (size_t)rounds) : 0.0;
    free(overhead);
    return st;
}

/* One size and placement: the timed loop (with the plain calls' rounds
 * when `direct` is given), per-rank times, bandwidths and the check. */
static zb_status run_one(zb_bench_ctx *ctx, const zb_coll_def *def, zb_coll_args *a, void *host,
                         size_t buffer_bytes, zb_iter_marks *marks, coll_row *row, coll_direct *direct,
                         zb_time_ranks *cr) {
    size_t e = zb_dtype_size(a->dtype);
    zb_coll_slots sl = zb_coll_slots_for(def, a, buffer_bytes);
    ZB_TRY(load_input(ctx, def, a, host)); /* the first part: the check's */
    double local = 0.0;
    if (direct) {
        ZB_TRY(compare_rounds(ctx, def, a, marks, direct, &local, &row->seconds, &row->samples));
    } else {
        ZB_TRY(timed_loop(ctx, def, a, &sl, marks, &local, &row->samples));
        ZB_TRY(zb_bench_reduce_time(ctx, local, &row->seconds));
    }
    ZB_TRY(zb_iter_samples_reduce(ctx, &row->samples));
    ZB_TRY(zb_time_ranks_gather(cr, ctx, a->in_place ? 1 : 0, local * 1e6));
    row->algbw_gbps = zb_gbps((double)zb_coll_size_bytes(def, a->count, e, a->n_ranks), row->seconds);
    row->busbw_gbps = row->algbw_gbps * def->busbw_factor(a->n_ranks);
    row->wrong = -1;
    if (ctx->cfg->check && zb_dev_holds_data(ctx->dev)) ZB_TRY(check_once(ctx, def, a, host, &row->wrong));
    return ZB_OK;
}

/* ---- one row per size: the table row and its two JSON runs (row.h) ---------- */

#define RUN_OUT (1u << 0) /* the out-of-place JSON run */
#define RUN_IN (1u << 1)  /* the in-place one */

/* time, algbw, busbw, #wrong of one placement, and time_us's samples
 * (`samples`, borrowed; NULL: none), into f; returns the count. */
static int result_fields(zb_field *f, const coll_row *row, unsigned run, const char *group, json_t *samples) {
    zb_field time = {.key = "time_us", .metric = true, .runs = run, .tables = 1, .header = "time", .unit = "us",
                     .group = group, .kind = ZB_FIELD_REAL, .decimals = 1, .d = row->seconds * 1e6};
    zb_field alg = {.key = "algbw_gbps", .metric = true, .runs = run, .tables = 1, .header = "algbw", .unit = "GB/s",
                    .group = group, .kind = ZB_FIELD_REAL, .decimals = 3, .d = row->algbw_gbps};
    zb_field bus = {.key = "busbw_gbps", .metric = true, .runs = run, .tables = 1, .header = "busbw", .unit = "GB/s",
                    .group = group, .kind = ZB_FIELD_REAL, .decimals = 3, .d = row->busbw_gbps};
    zb_field wrong = {.key = "wrong", .metric = true, .runs = run, .tables = 1, .header = "#wrong", .group = group,
                      .na = "N/A", .kind = ZB_FIELD_INT, .null = row->wrong < 0, .i = row->wrong};
    f[0] = time;
    f[1] = alg;
    f[2] = bus;
    f[3] = wrong;
    if (!samples) return 4;
    f[4] = (zb_field){.key = "time_us", .metric = true, .parent = "samples", .runs = run, .kind = ZB_FIELD_JSON,
                      .j = samples};
    return 5;
}

/* The table's type column in nccl-tests' names (its -d takes them too). */
static const char *nccl_type_name(zb_dtype t) { return t == ZB_DTYPE_BF16 ? "bfloat16" : zb_dtype_name(t); }

/* One size: out of place (a[0], rows[0]) and in place, and the direct MPI
 * time when --compare-direct timed it. */
static zb_status add_row(zb_bench_ctx *ctx, zb_rows *out, const zb_coll_def *def, const zb_coll_args *a,
                         const coll_row *rows, const coll_direct *direct, zb_time_ranks *cr) {
    size_t e = zb_dtype_size(a[0].dtype);
    uint64_t size = zb_coll_size_bytes(def, a[0].count, e, a[0].n_ranks);
    const char *dtype = zb_dtype_name(a[0].dtype);
    zb_field f[40] = {
        {.key = "bench", .kind = ZB_FIELD_TEXT, .s = def->name},
        /* nccl-tests' columns in its order and meaning, so that a script
         * reading its rows by field number reads these: count per rank for
         * all-gather and reduce-scatter, total for all-reduce (coll.h), as
         * nccl-tests prints it; root -1, as it prints for collectives
         * without one; type in nccl-tests' names. */
        {.key = "size_bytes", .tables = 1, .header = "size", .unit = "B", .kind = ZB_FIELD_INT, .i = (int64_t)size},
        {.key = "count", .tables = 1, .header = "count", .unit = "elements", .kind = ZB_FIELD_INT,
         .i = (int64_t)a[0].count},
        {.key = "dtype", .kind = ZB_FIELD_TEXT, .s = dtype},
        {.tables = 1, .header = "type", .kind = ZB_FIELD_TEXT, .s = nccl_type_name(a[0].dtype)},
        {.tables = 1, .header = "redop", .kind = ZB_FIELD_TEXT, .s = def->redop},
        {.tables = 1, .header = "root", .kind = ZB_FIELD_INT, .i = -1},
        {.key = "in_place", .runs = RUN_OUT, .kind = ZB_FIELD_BOOL, .b = false},
        {.key = "in_place", .runs = RUN_IN, .kind = ZB_FIELD_BOOL, .b = true},
        {.key = "ranks", .kind = ZB_FIELD_INT, .i = ctx->world_ranks},
        {.key = "nodes", .kind = ZB_FIELD_INT, .i = ctx->world_nodes},
        /* part of the run's identity: a cold-buffer run is another measurement */
        {.key = ctx->cfg->rotate_bytes ? "rotate_bytes" : NULL, .kind = ZB_FIELD_INT,
         .i = (int64_t)ctx->cfg->rotate_bytes},
    };
    int n = 13;
    /* The values behind time_us: compare's two-sample test reads them. */
    json_t *samples[2] = {NULL, NULL};
    for (int ip = 0; ip < 2; ip++) {
        if (rows[ip].samples.n && !(samples[ip] = zb_iter_samples_json(&rows[ip].samples))) {
            json_decref(samples[0]);
            return ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the samples");
        }
    }
    n += result_fields(&f[n], &rows[0], RUN_OUT, "out-of-place", samples[0]);
    n += result_fields(&f[n], &rows[1], RUN_IN, "in-place", samples[1]);
    if (ctx->cfg->compare_direct) {
        /* In the JSON only when measured (a positive time). The table's
         * time and overhead are against the better plain call. */
        double direct_s = direct->best_s;
        bool timed = direct_s > 0;
        zb_field time = {.key = timed ? "direct_time_us" : NULL, .metric = true, .runs = RUN_OUT, .tables = 1,
                         .header = "time", .unit = "us", .group = "direct MPI", .kind = ZB_FIELD_REAL,
                         .decimals = 1, .d = direct_s * 1e6};
        zb_field blocking = {.key = timed ? "direct_blocking_time_us" : NULL, .metric = true, .runs = RUN_OUT,
                             .kind = ZB_FIELD_REAL, .d = direct->blocking_s * 1e6};
        zb_field nonblocking = {.key = timed ? "direct_nonblocking_time_us" : NULL, .metric = true,
                                .runs = RUN_OUT, .kind = ZB_FIELD_REAL, .d = direct->nonblocking_s * 1e6};
        zb_field over = {.key = timed ? "harness_overhead_pct" : NULL, .metric = true, .runs = RUN_OUT,
                         .tables = 1, .header = "overhead", .unit = "%", .group = "direct MPI",
                         .kind = ZB_FIELD_REAL, .decimals = 1, .sign = true,
                         .d = 100.0 * (rows[0].seconds - direct_s) / direct_s};
        zb_field median = {.key = timed ? "harness_overhead_median_pct" : NULL, .metric = true, .runs = RUN_OUT,
                           .tables = 1, .header = "median", .unit = "%", .group = "direct MPI",
                           .kind = ZB_FIELD_REAL, .decimals = 1, .sign = true, .d = direct->median_overhead_pct};
        zb_field rounds = {.key = timed ? "direct_rounds" : NULL, .runs = RUN_OUT, .kind = ZB_FIELD_INT,
                           .i = ctx->cfg->direct_rounds};
        zb_field each = {.key = timed ? "direct_rounds_us" : NULL, .runs = RUN_OUT, .kind = ZB_FIELD_JSON,
                         .j = direct->rounds};
        f[n++] = time;
        f[n++] = over;
        f[n++] = median;
        f[n++] = blocking;
        f[n++] = nonblocking;
        f[n++] = rounds;
        f[n++] = each;
    }
    const unsigned placement_runs[2] = {RUN_OUT, RUN_IN};
    int k = 0;
    char out_what[64], in_what[64];
    snprintf(out_what, sizeof out_what, "%llu B out-of-place", (unsigned long long)size);
    snprintf(in_what, sizeof in_what, "%llu B in-place", (unsigned long long)size);
    const char *const what[2] = {out_what, in_what};
    zb_status st = zb_time_ranks_fields(cr, ctx, placement_runs, what, &f[n], &k);
    if (st == ZB_OK) st = zb_rows_add(out, f, n + k, 2);
    zb_time_ranks_row_done(cr);
    json_decref(samples[0]);
    json_decref(samples[1]);
    return st;
}

/* The sizes of the sweep, nccl-tests' way: -f multiplies, -i adds. */
static uint64_t next_size(const zb_config *cfg, uint64_t size) {
    if (cfg->step_factor > 1) return size > UINT64_MAX / (uint64_t)cfg->step_factor ? UINT64_MAX : size * (uint64_t)cfg->step_factor;
    return size + cfg->step_bytes;
}

static zb_status sweep(zb_bench_ctx *ctx, const zb_coll_def *def, void *buf_a, void *buf_b, size_t buffer_bytes,
                       void *host, zb_iter_marks *marks, zb_rows *t, double *busbw_sum, int *n_rows, zb_time_ranks *cr) {
    const zb_config *cfg = ctx->cfg;
    size_t e = zb_dtype_size(cfg->dtype);
    for (uint64_t size = cfg->min_bytes; size <= cfg->max_bytes; size = next_size(cfg, size)) {
        coll_row *rows = (coll_row *)calloc(2, sizeof *rows); /* 16 KB of samples: on the heap */
        if (!rows) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory for a size's samples");
        zb_status st = ZB_OK;
        zb_coll_args a[2];
        coll_direct direct = {0.0, 0.0, 0.0, 0.0, NULL};
        for (int ip = 0; ip < 2; ip++) {
            zb_coll_args *x = &a[ip];
            memset(x, 0, sizeof *x);
            x->count = zb_coll_count_for(def, size, e, ctx->world_ranks);
            x->dtype = cfg->dtype;
            x->rank = ctx->topo.rank;
            x->n_ranks = ctx->world_ranks;
            x->in_place = ip == 1;
            x->seed = ZB_COLL_SEED + size;
            zb_coll_place(def, x, buf_a, buf_b);
            st = run_one(ctx, def, x, host, buffer_bytes, marks, &rows[ip], ip == 0 && cfg->compare_direct ? &direct : NULL, cr);
            if (st != ZB_OK) break;
            *busbw_sum += rows[ip].busbw_gbps;
            ++*n_rows;
            if (rows[ip].wrong > 0) ctx->wrong += rows[ip].wrong;
        }
        if (st == ZB_OK) st = add_row(ctx, t, def, a, rows, &direct, cr);
        json_decref(direct.rounds);
        free(rows);
        if (st != ZB_OK) return st;
        if (size == UINT64_MAX) break;
    }
    return ZB_OK;
}

/* --rotate-bytes: both buffers zeroed through the staging copy before the
 * sweep, so that every part's pages are mapped (no first-touch faults in a
 * timed loop) and a reduction over a part meets zeros, not stale bytes
 * that could hold NaNs or denormals. Each size then loads its seeded input
 * into the first part only (the check's); the others keep zeros. */
static zb_status zero_fill(zb_bench_ctx *ctx, void *buf_a, void *buf_b, size_t buffer_bytes) {
    size_t chunk = buffer_bytes < ((size_t)16 << 20) ? buffer_bytes : (size_t)16 << 20;
    void *zeros = calloc(1, chunk);
    if (!zeros) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for --rotate-bytes' %zu-byte zero chunk", chunk);
    zb_op_info info = {ZB_OP_COPY, "zero_buffers", -1, 0, 0};
    void *const bufs[2] = {buf_a, buf_b};
    zb_status st = ZB_OK;
    for (int b = 0; b < 2 && st == ZB_OK; b++) {
        for (size_t off = 0; off < buffer_bytes && st == ZB_OK; off += chunk) {
            size_t n = buffer_bytes - off < chunk ? buffer_bytes - off : chunk;
            st = ctx->dev->ops->memcpy_async(ctx->comm_stream, (char *)bufs[b] + off, zeros, n, &info);
        }
    }
    if (st == ZB_OK) st = zb_comm_wait(ctx->comm, ctx->comm_stream, "zero_buffers", -1);
    free(zeros); /* after the wait: the copies read it in stream order */
    return st;
}

/* The run's buffers (zb_coll_bench_run): two device buffers of -e bytes
 * (send and receive: any size of the sweep fits them) and a host staging
 * copy of as many, for the inputs and the check. */
zb_status zb_coll_memory_need(const zb_bench_ctx *ctx, zb_mem_need *out) {
    const zb_config *cfg = ctx->cfg;
    bool rotated = cfg->rotate_bytes > cfg->max_bytes;
    uint64_t buffer = rotated ? cfg->rotate_bytes : cfg->max_bytes;
    char size[32], staging[32];
    zb_format_size(buffer, size, sizeof size);
    zb_format_size(cfg->max_bytes, staging, sizeof staging);
    out->device_bytes = 2.0 * (double)buffer;
    out->host_bytes = (double)cfg->max_bytes;
    snprintf(out->flag, sizeof out->flag, rotated ? "--rotate-bytes" : "-e/--maxbytes");
    snprintf(out->value, sizeof out->value, "%s", size);
    snprintf(out->device_what, sizeof out->device_what, "send and receive buffers of %s each", size);
    snprintf(out->host_what, sizeof out->host_what, "a host staging copy of %s", staging);
    return ZB_OK;
}

zb_status zb_coll_bench_run(zb_bench_ctx *ctx) {
    const zb_config *cfg = ctx->cfg;
    const zb_coll_def *def = ctx->bench->coll;
    if (cfg->compare_direct && cfg->dtype != ZB_DTYPE_F32) {
        return ZB_FAIL(ZB_ERR_INVALID, "--compare-direct times float only, not -d %s",
                       zb_dtype_name(cfg->dtype));
    }
    if (cfg->compare_direct && !zb_dev_mem_is_host(ctx->dev)) {
        return ZB_FAIL(ZB_ERR_INVALID, "--compare-direct calls MPI on host buffers: --backend cpu only");
    }
    zb_time_ranks cr; /* collective: before anything local can fail */
    zb_status st = zb_time_ranks_init(ctx, &cr, 2);
    if (st != ZB_OK) {
        zb_time_ranks_free(&cr);
        return st;
    }
    void *buf_a = NULL, *buf_b = NULL;
    size_t bytes = (size_t)cfg->max_bytes;
    size_t buffer_bytes = cfg->rotate_bytes > cfg->max_bytes ? (size_t)cfg->rotate_bytes : bytes;
    void *host = malloc(bytes ? bytes : 1); /* staging for inputs and checks */
    if (!host) st = ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for a %zu-byte staging buffer", bytes);
    if (st == ZB_OK) st = zb_dev_alloc(ctx->dev, buffer_bytes, ZB_MEM_BENCH_BUFFER, &buf_a);
    if (st == ZB_OK) st = zb_dev_alloc(ctx->dev, buffer_bytes, ZB_MEM_BENCH_BUFFER, &buf_b);
    if (st == ZB_OK && buffer_bytes > bytes) st = zero_fill(ctx, buf_a, buf_b, buffer_bytes);
    zb_rows *t = st == ZB_OK ? zb_rows_new(ctx->report, 1) : NULL;
    double busbw_sum = 0.0;
    int n_rows = 0;
    if (st == ZB_OK && !t) st = ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the table");
    /* the per-iteration marks, reused size after size */
    zb_iter_marks *marks = st == ZB_OK ? (zb_iter_marks *)calloc(1, sizeof *marks) : NULL;
    if (st == ZB_OK && !marks) st = ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the timing events");
    if (st == ZB_OK) st = sweep(ctx, def, buf_a, buf_b, buffer_bytes, host, marks, t, &busbw_sum, &n_rows, &cr);
    if (st == ZB_OK && ctx->out) {
        zb_rows_print(t, 0, ctx->out, "#");
        if (!zb_dev_holds_data(ctx->dev)) {
            fprintf(ctx->out, "# Out of bounds values : not checked (SIMULATED: the device holds no data)\n");
        } else {
            fprintf(ctx->out, "# Out of bounds values : %lld %s\n", (long long)ctx->wrong, ctx->wrong ? "FAILED" : "OK");
        }
        /* nccl-tests' closing lines to the byte ("%g %s" with an empty
         * status: a bare number in GB/s, then a space), so that its scripts
         * read them; zerobench's own notes follow as comments. */
        fprintf(ctx->out, "# Avg bus bandwidth    : %g \n#\n", n_rows ? busbw_sum / n_rows : 0.0);
        if (ctx->world_ranks == 1) { /* busbw's factor (n-1)/n, nccl-tests' definition, is 0 */
            fprintf(ctx->out, "# one rank: no byte crosses a link, so busbw is 0 by definition and algbw is a local "
                              "copy's speed; run 2 or more ranks to measure a fabric\n");
        }
        if (cfg->rotate_bytes) {
            char span[32];
            zb_format_size(buffer_bytes, span, sizeof span);
            fprintf(ctx->out, "# --rotate-bytes: each call on the next part of send and receive buffers of %s "
                              "each (cold caches, as in a training step); without it, one buffer as nccl-tests\n",
                    span);
        }
        if (cfg->compare_direct) {
            fprintf(ctx->out, "# direct MPI: the better of the plain blocking and non-blocking calls; %lld rounds "
                    "alternated with the out-of-place loop, each side's time its best round; overhead: best "
                    "against best, median: of the rounds' paired overheads\n", (long long)cfg->direct_rounds);
        }
        zb_time_ranks_print(&cr, ctx->out);
    }
    zb_time_ranks_free(&cr);
    if (marks) zb_iter_marks_free(marks);
    free(marks);
    zb_rows_free(t);
    zb_dev_free(ctx->dev, buf_b);
    zb_dev_free(ctx->dev, buf_a);
    free(host);
    return st;
}
