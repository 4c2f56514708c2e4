/* The collective benchmark loop shared by all-gather, reduce-scatter and
 * all-reduce (see coll_bench.h).
 *
 * Per size: warm-up iterations, a barrier, then `iters` back-to-back
 * collectives on the comm stream timed from the host around a stream sync
 * (nccl-tests times the same way); the per-iteration time is reduced across
 * ranks as -a says. The check runs afterwards on freshly seeded data, never
 * inside the timed loop. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "coll_bench.h"
#include "metrics.h"
#include "table.h"

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

static const zb_opt *const step_opts[] = {&opt_stepbytes, NULL};
static const zb_opt_group coll_step = {step_opts, check_step};
const zb_opt_group *const zb_coll_opt_groups[] = {&zb_opts_sweep_range, &coll_step, &zb_opts_sweep_run, NULL};

/* ---- the benchmark ---------------------------------------------------------- */

typedef struct coll_row {
    double seconds;
    double algbw_gbps, busbw_gbps;
    int64_t wrong; /* -1 when not checked */
} coll_row;

static zb_status issue(zb_bench_ctx *ctx, const zb_coll_def *def, const zb_coll_args *a) {
    return def->issue(ctx->comm, ctx->comm_stream, a, def->name);
}

static zb_status timed_loop(zb_bench_ctx *ctx, const zb_coll_def *def, const zb_coll_args *a,
                            double *seconds) {
    const zb_config *cfg = ctx->cfg;
    for (int64_t i = 0; i < cfg->warmup_iters; i++) ZB_TRY(issue(ctx, def, a));
    ZB_TRY(zb_comm_barrier(ctx->comm, ctx->comm_stream));
    ZB_TRY(zb_comm_wait(ctx->comm, ctx->comm_stream, "warm-up", -1));
    int64_t t0 = zb_now_ns();
    for (int64_t i = 0; i < cfg->iters; i++) ZB_TRY(issue(ctx, def, a));
    ZB_TRY(zb_comm_wait(ctx->comm, ctx->comm_stream, "timed loop", -1));
    *seconds = (double)(zb_now_ns() - t0) / 1e9 / (double)cfg->iters;
    return ZB_OK;
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

static zb_status run_one(zb_bench_ctx *ctx, const zb_coll_def *def, zb_coll_args *a, void *host,
                         coll_row *row) {
    size_t e = zb_dtype_size(a->dtype);
    ZB_TRY(load_input(ctx, def, a, host));
    double local = 0.0;
    ZB_TRY(timed_loop(ctx, def, a, &local));
    ZB_TRY(zb_bench_reduce_time(ctx, local, &row->seconds));
    row->algbw_gbps = zb_gbps((double)zb_coll_size_bytes(def, a->count, e, a->n_ranks), row->seconds);
    row->busbw_gbps = row->algbw_gbps * def->busbw_factor(a->n_ranks);
    row->wrong = -1;
    if (ctx->cfg->check) ZB_TRY(check_once(ctx, def, a, host, &row->wrong));
    return ZB_OK;
}

static void add_json_run(zb_bench_ctx *ctx, const zb_coll_def *def, uint64_t size_bytes,
                         const zb_coll_args *a, const coll_row *row, double direct_s) {
    json_t *run = json_object();
    json_object_set_new(run, "bench", json_string(def->name));
    json_object_set_new(run, "size_bytes", json_integer((json_int_t)size_bytes));
    json_object_set_new(run, "count", json_integer((json_int_t)a->count));
    json_object_set_new(run, "dtype", json_string(zb_dtype_name(a->dtype)));
    json_object_set_new(run, "in_place", json_boolean(a->in_place));
    json_object_set_new(run, "ranks", json_integer(ctx->topo.n_ranks));
    json_object_set_new(run, "nodes", json_integer(ctx->topo.n_nodes));
    json_t *m = json_object();
    json_object_set_new(m, "time_us", zb_json_real_or_null(row->seconds * 1e6));
    json_object_set_new(m, "algbw_gbps", zb_json_real_or_null(row->algbw_gbps));
    json_object_set_new(m, "busbw_gbps", zb_json_real_or_null(row->busbw_gbps));
    json_object_set_new(m, "wrong", row->wrong < 0 ? json_null() : json_integer(row->wrong));
    if (direct_s > 0) {
        json_object_set_new(m, "direct_time_us", zb_json_real_or_null(direct_s * 1e6));
        json_object_set_new(m, "harness_overhead_pct",
                            zb_json_real_or_null(100.0 * (row->seconds - direct_s) / direct_s));
    }
    json_object_set_new(run, "metrics", m);
    zb_report_add_run(ctx->report, run);
}

static zb_table *make_table(bool direct) {
    zb_table *t = zb_table_new();
    if (!t) return NULL;
    zb_table_add_column(t, "size", "B", ZB_ALIGN_RIGHT);
    zb_table_add_column(t, "count", "elements", ZB_ALIGN_RIGHT);
    zb_table_add_column(t, "type", "", ZB_ALIGN_RIGHT);
    zb_table_add_column(t, "redop", "", ZB_ALIGN_RIGHT);
    for (int g = 0; g < 2; g++) {
        zb_table_add_column(t, "time", "us", ZB_ALIGN_RIGHT);
        zb_table_add_column(t, "algbw", "GB/s", ZB_ALIGN_RIGHT);
        zb_table_add_column(t, "busbw", "GB/s", ZB_ALIGN_RIGHT);
        zb_table_add_column(t, "#wrong", "", ZB_ALIGN_RIGHT);
    }
    zb_table_add_group(t, "out-of-place", 4, 4);
    zb_table_add_group(t, "in-place", 8, 4);
    if (direct) {
        zb_table_add_column(t, "time", "us", ZB_ALIGN_RIGHT);
        zb_table_add_column(t, "overhead", "%", ZB_ALIGN_RIGHT);
        zb_table_add_group(t, "direct MPI", 12, 2);
    }
    return t;
}

static void set_result_cells(zb_table *t, int first, const coll_row *row) {
    zb_table_set(t, first, "%.1f", row->seconds * 1e6);
    zb_table_set(t, first + 1, "%.3f", row->algbw_gbps);
    zb_table_set(t, first + 2, "%.3f", row->busbw_gbps);
    if (row->wrong < 0) {
        zb_table_set(t, first + 3, "N/A");
    } else {
        zb_table_set(t, first + 3, "%lld", (long long)row->wrong);
    }
}

/* The sizes of the sweep, nccl-tests' way: -f multiplies, -i adds. */
static uint64_t next_size(const zb_config *cfg, uint64_t size) {
    if (cfg->step_factor > 1) return size > UINT64_MAX / (uint64_t)cfg->step_factor ? UINT64_MAX : size * (uint64_t)cfg->step_factor;
    return size + cfg->step_bytes;
}

static zb_status sweep(zb_bench_ctx *ctx, const zb_coll_def *def, void *buf_a, void *buf_b, void *host,
                       zb_table *t, double *busbw_sum, int *n_rows) {
    const zb_config *cfg = ctx->cfg;
    size_t e = zb_dtype_size(cfg->dtype);
    for (uint64_t size = cfg->min_bytes; size <= cfg->max_bytes; size = next_size(cfg, size)) {
        coll_row rows[2];
        zb_coll_args a[2];
        for (int ip = 0; ip < 2; ip++) {
            zb_coll_args *x = &a[ip];
            memset(x, 0, sizeof *x);
            x->count = zb_coll_count_for(def, size, e, ctx->topo.n_ranks);
            x->dtype = cfg->dtype;
            x->rank = ctx->topo.rank;
            x->n_ranks = ctx->topo.n_ranks;
            x->in_place = ip == 1;
            x->seed = ZB_COLL_SEED + size;
            zb_coll_place(def, x, buf_a, buf_b);
            ZB_TRY(run_one(ctx, def, x, host, &rows[ip]));
            *busbw_sum += rows[ip].busbw_gbps;
            ++*n_rows;
            if (rows[ip].wrong > 0) ctx->wrong += rows[ip].wrong;
        }
        double direct_s = 0.0;
        if (cfg->compare_direct) {
            ZB_TRY(zb_coll_direct_time(def, &a[0], cfg->iters, cfg->warmup_iters, &direct_s));
            ZB_TRY(zb_bench_reduce_time(ctx, direct_s, &direct_s));
        }
        uint64_t used_bytes = zb_coll_size_bytes(def, a[0].count, e, a[0].n_ranks);
        for (int ip = 0; ip < 2; ip++) add_json_run(ctx, def, used_bytes, &a[ip], &rows[ip], ip == 0 ? direct_s : 0.0);
        zb_table_add_row(t);
        zb_table_set(t, 0, "%llu", (unsigned long long)used_bytes);
        zb_table_set(t, 1, "%llu", (unsigned long long)(used_bytes / e));
        zb_table_set(t, 2, "%s", zb_dtype_name(cfg->dtype));
        zb_table_set(t, 3, "%s", def->redop);
        set_result_cells(t, 4, &rows[0]);
        set_result_cells(t, 8, &rows[1]);
        if (cfg->compare_direct) {
            zb_table_set(t, 12, "%.1f", direct_s * 1e6);
            zb_table_set(t, 13, "%+.1f", 100.0 * (rows[0].seconds - direct_s) / direct_s);
        }
        if (size == UINT64_MAX) break;
    }
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
    void *buf_a = NULL, *buf_b = NULL;
    size_t bytes = (size_t)cfg->max_bytes;
    void *host = malloc(bytes ? bytes : 1); /* staging for inputs and checks */
    if (!host) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for a %zu-byte staging buffer", bytes);
    zb_status st = zb_dev_alloc(ctx->dev, bytes, ZB_MEM_BENCH_BUFFER, &buf_a);
    if (st == ZB_OK) st = zb_dev_alloc(ctx->dev, bytes, ZB_MEM_BENCH_BUFFER, &buf_b);
    zb_table *t = st == ZB_OK ? make_table(cfg->compare_direct) : NULL;
    double busbw_sum = 0.0;
    int n_rows = 0;
    if (st == ZB_OK && !t) st = ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the table");
    if (st == ZB_OK) st = sweep(ctx, def, buf_a, buf_b, host, t, &busbw_sum, &n_rows);
    if (st == ZB_OK && ctx->out) {
        zb_table_print(t, ctx->out, "#");
        fprintf(ctx->out, "# Out of bounds values : %lld %s\n", (long long)ctx->wrong,
                ctx->wrong ? "FAILED" : "OK");
        fprintf(ctx->out, "# Avg bus bandwidth    : %.3f GB/s\n",
                n_rows ? busbw_sum / n_rows : 0.0);
    }
    zb_table_free(t);
    zb_dev_free(ctx->dev, buf_b);
    zb_dev_free(ctx->dev, buf_a);
    free(host);
    return st;
}
