/* zerobench scale: the scaling table of sharded data parallelism for one
 * model and hardware profile, simulated (--backend sim, the default here):
 * ZeRO-2 with its reductions overlapped, ZeRO-3 sync and ZeRO-3 prefetch,
 * for each node count of --nodes 1,2,4 (x --gpus-per-node GPUs). Each cell
 * is a real step run (step_run.c) on the sim device with a sim comm that
 * models that cluster, so its memory is the engine's per-tag accounting
 * (checked against the ledger: the "ledger" column) and its overlap and
 * exposed comm come from the schedule's trace, as for any step.
 * Columns: peak memory per GPU and whether it fits the profile's memory,
 * overlap %, exposed comm, step time, tokens/s, MFU. */
#include <string.h>

#include "registry.h"
#include "row.h"
#include "step.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define SCALE_FIELDS 64

typedef struct scale_cell {
    const char *name; /* "ZeRO-2", "ZeRO-3 sync", "ZeRO-3 prefetch" */
    int stage;
    zb_step_mode mode;
} scale_cell;

/* ZeRO-2 keeps full parameters: its schedule's only per-unit collectives are
 * the gradient reductions (overlapped with the backward, as DeepSpeed's
 * overlap_comm does) and the updated shards' all-gather. */
static const scale_cell cells[] = {
    {"ZeRO-2", 2, ZB_MODE_PREFETCH},
    {"ZeRO-3 sync", 3, ZB_MODE_SYNC},
    {"ZeRO-3 prefetch", 3, ZB_MODE_PREFETCH},
};
#define N_CELLS ((int)(sizeof cells / sizeof cells[0]))

static bool ledger_equal(const zb_step_stats *r) {
    for (int k = 0; k < ZB_MEM_TAG_COUNT; k++) {
        if (k == ZB_MEM_COMM_BUFFER || k == ZB_MEM_BENCH_BUFFER || zb_mem_tag_is_host((zb_mem_tag)k)) continue;
        if (r->peak_tag_bytes[k] != r->expected_tag_bytes[k]) return false;
    }
    return true;
}

static zb_status add_row(zb_rows *rows, const zb_bench_ctx *ctx, const zb_step_plan *plan, const scale_cell *c,
                         int nodes, int per_node, const zb_step_stats *r, double mem_per_gpu) {
    zb_field f[SCALE_FIELDS];
    int n = 0;
    bool fits = (double)r->peak_bytes <= r->mem_per_rank_bytes;
    f[n++] = (zb_field){.key = "bench", .kind = ZB_FIELD_TEXT, .s = "scale"};
    f[n++] = (zb_field){.key = "nodes", .tables = 1, .header = "nodes", .kind = ZB_FIELD_INT, .i = nodes};
    f[n++] = (zb_field){.key = "gpus_per_node", .kind = ZB_FIELD_INT, .i = per_node};
    f[n++] = (zb_field){.key = "ranks", .tables = 1, .header = "GPUs", .kind = ZB_FIELD_INT, .i = ctx->world_ranks};
    f[n++] = (zb_field){.key = "config", .tables = 1, .header = "config", .left = true, .kind = ZB_FIELD_TEXT,
                        .s = c->name};
    f[n++] = (zb_field){.key = "stage", .kind = ZB_FIELD_INT, .i = c->stage};
    f[n++] = (zb_field){.key = "mode", .kind = ZB_FIELD_TEXT, .s = c->mode == ZB_MODE_SYNC ? "sync" : "prefetch"};
    f[n++] = (zb_field){.key = "model", .kind = ZB_FIELD_TEXT, .s = plan->model_label};
    f[n++] = (zb_field){.key = "hw", .kind = ZB_FIELD_TEXT, .s = ctx->hw.name};
    f[n++] = (zb_field){.key = "recompute", .kind = ZB_FIELD_TEXT, .s = plan->engine.recompute ? "full" : "none"};
    f[n++] = (zb_field){.key = "simulated", .kind = ZB_FIELD_BOOL, .b = ctx->simulated};
    f[n++] = (zb_field){.key = "peak_mem_bytes", .metric = true, .tables = 1, .header = "peak mem/GPU",
                        .unit = "GiB", .div = GIB, .decimals = 2, .kind = ZB_FIELD_INT, .i = (int64_t)r->peak_bytes};
    f[n++] = (zb_field){.key = "fits", .metric = true, .tables = 1, .header = "fits", .kind = ZB_FIELD_BOOL,
                        .b = fits, .cell = fits ? "yes" : "NO"};
    f[n++] = (zb_field){.key = "mem_per_gpu_bytes", .metric = true, .kind = ZB_FIELD_REAL, .d = mem_per_gpu};
    f[n++] = (zb_field){.tables = 1, .header = "ledger", .kind = ZB_FIELD_TEXT,
                        .s = ledger_equal(r) ? "equal" : "DIFFERS"};
    f[n++] = (zb_field){.key = "overlap_pct", .metric = true, .tables = 1, .header = "overlap", .unit = "%",
                        .decimals = 1, .na = "n/m", .kind = ZB_FIELD_REAL, .d = r->overlap_pct};
    f[n++] = (zb_field){.key = "exposed_comm_ms", .metric = true, .tables = 1, .header = "exposed comm",
                        .unit = "ms", .decimals = 1, .na = "n/m", .kind = ZB_FIELD_REAL, .d = r->exposed_comm_ms};
    f[n++] = (zb_field){.key = "compute_ms", .metric = true, .kind = ZB_FIELD_REAL, .d = r->compute_ms};
    f[n++] = (zb_field){.key = "comm_ms", .metric = true, .kind = ZB_FIELD_REAL, .d = r->comm_ms};
    f[n++] = (zb_field){.key = "step_time_ms", .metric = true, .tables = 1, .header = "step", .unit = "ms",
                        .decimals = 1, .kind = ZB_FIELD_REAL, .d = r->step_ms};
    f[n++] = (zb_field){.key = "tokens_per_s", .metric = true, .tables = 1, .header = "tokens/s", .unit = "total",
                        .decimals = 0, .kind = ZB_FIELD_REAL, .d = r->tokens_per_s};
    f[n++] = (zb_field){.key = "tokens_per_s_per_rank", .metric = true, .tables = 1, .header = "tokens/s",
                        .unit = "per GPU", .decimals = 0, .kind = ZB_FIELD_REAL,
                        .d = r->tokens_per_s / ctx->world_ranks};
    f[n++] = (zb_field){.key = "mfu_pct", .metric = true, .tables = 1, .header = "MFU", .unit = "%",
                        .decimals = 1, .na = "n/m", .kind = ZB_FIELD_REAL, .d = r->mfu_pct};
    f[n++] = (zb_field){.key = "comm_bytes_per_step", .metric = true, .kind = ZB_FIELD_INT,
                        .i = (int64_t)r->comm_bytes_per_step};
    f[n++] = (zb_field){.key = "comm_bytes_formula", .metric = true, .kind = ZB_FIELD_INT,
                        .i = (int64_t)r->comm_bytes_formula};
    for (int k = 0; k < ZB_MEM_TAG_COUNT; k++) {
        f[n++] = (zb_field){.key = zb_mem_tag_name((zb_mem_tag)k), .metric = true, .parent = "peak_mem_by_tag_bytes",
                            .kind = ZB_FIELD_INT, .i = (int64_t)r->peak_tag_bytes[k]};
    }
    for (int k = 0; k < ZB_MEM_TAG_COUNT; k++) {
        f[n++] = (zb_field){.key = zb_mem_tag_name((zb_mem_tag)k), .metric = true, .parent = "ledger_by_tag_bytes",
                            .kind = ZB_FIELD_INT, .i = (int64_t)r->expected_tag_bytes[k]};
    }
    return zb_rows_add(rows, f, n, 1);
}

/* One node count: a sim comm for nodes x per_node ranks in place of the
 * run's comm, the three cells, the run's comm back. */
static zb_status run_nodes(zb_bench_ctx *ctx, zb_rows *rows, int nodes, int per_node) {
    zb_comm_config cc = {ctx->cfg->timeout_s, nodes, per_node};
    zb_stream *streams[2] = {ctx->comm_stream, ctx->compute};
    zb_comm *comm = NULL;
    ZB_TRY(ctx->backends.comm->create(ctx->dev, streams, 2, &cc, &comm));
    zb_comm *run_comm = ctx->comm;
    int run_ranks = ctx->world_ranks, run_nodes_ = ctx->world_nodes;
    ctx->comm = comm;
    ctx->world_ranks = comm->n_ranks;
    ctx->world_nodes = nodes;
    zb_step_plan plan;
    zb_status st = zb_step_make_plan(ctx, &plan);
    if (st == ZB_OK) st = zb_step_check_units(ctx, &plan);
    double mem = zb_step_memory_per_rank(ctx);
    for (int i = 0; i < N_CELLS && st == ZB_OK; i++) {
        plan.engine.stage = cells[i].stage;
        plan.engine.mode = cells[i].mode;
        zb_step_stats r;
        st = zb_step_run(ctx, &plan, &r); /* its first act zeroes r, so release is safe on failure */
        if (st == ZB_OK) st = add_row(rows, ctx, &plan, &cells[i], nodes, per_node, &r, mem);
        zb_step_stats_release(&r); /* the row holds copies */
    }
    ctx->comm = run_comm;
    ctx->world_ranks = run_ranks;
    ctx->world_nodes = run_nodes_;
    zb_comm_destroy(comm);
    return st;
}

static zb_status scale_run(zb_bench_ctx *ctx) {
    const zb_config *cfg = ctx->cfg;
    if (!ctx->simulated) {
        return ZB_FAIL(ZB_ERR_INVALID, "scale: --backend %s runs here, on one cluster; the scaling table models "
                       "several: use --backend sim", ctx->backends.device->name);
    }
    int per_node = cfg->gpus_per_node > 0 ? (int)cfg->gpus_per_node
                   : ctx->hw.gpus_per_node > 0 ? ctx->hw.gpus_per_node : 1;
    zb_rows *rows = zb_rows_new(ctx->report, 1);
    if (!rows) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the scaling table");
    zb_status st = ZB_OK;
    int n_counts = cfg->nodes_list.n > 0 ? cfg->nodes_list.n : 1;
    for (int i = 0; i < n_counts && st == ZB_OK; i++) {
        int nodes = cfg->nodes_list.n > 0 ? (int)cfg->nodes_list.v[i] : 1;
        st = run_nodes(ctx, rows, nodes, per_node);
    }
    if (st == ZB_OK && ctx->out) {
        zb_step_plan plan;
        st = zb_step_make_plan(ctx, &plan);
        const char *model = plan.model_label;
        double params = st == ZB_OK ? zb_model_total_params(&plan.engine.model) : 0;
        fprintf(ctx->out, "# SIMULATED scaling table: %s (%.4g B parameters) on %s, %d GPU(s) per node, %.3g GB "
                "per GPU; recompute %s; %lld measured step(s) per cell\n", model, params / 1e9, ctx->hw.name,
                per_node, zb_step_memory_per_rank(ctx) / 1e9, cfg->recompute == 1 ? "full" : "none",
                (long long)cfg->steps);
        fprintf(ctx->out, "# ZeRO-2: full parameters, reductions overlapped with the backward; ZeRO-3 sync: "
                "nothing overlaps; ZeRO-3 prefetch: the next unit gathered during this one. peak mem: the "
                "engine's per-tag accounting (ledger: equal when every tag matches the ledger); fits: against "
                "the profile's memory; cells that do not fit are timed as if they did\n");
        if (st == ZB_OK) st = zb_rows_print(rows, 0, ctx->out, "#");
    }
    zb_rows_free(rows);
    return st;
}

/* The sim is scale's backend unless another is named (which it refuses). */
static void scale_defaults(zb_config *cfg) {
    snprintf(cfg->backend, sizeof cfg->backend, "sim");
    cfg->steps = 2;
    cfg->warmup_steps = 1;
    cfg->precision_pct = 0.0; /* the sim's virtual time has no noise to pair away */
}

static zb_status scale_check(zb_config *cfg, const zb_opt_seen *seen) {
    const zb_device_backend *b = zb_device_backend_find(cfg->backend);
    if (!b || !b->simulated) {
        return ZB_FAIL(ZB_ERR_INVALID, "scale --backend %s: the scaling table models clusters that are not here; "
                       "it runs on a simulated backend (--backend sim, the default)", cfg->backend);
    }
    return ZB_OK;
}

static const zb_opt_group *const scale_groups[] = {&zb_step_model_group, NULL};

const zb_bench zb_bench_scale = {
    .name = "scale",
    .groups = scale_groups,
    .defaults = scale_defaults,
    .check = scale_check,
    .flags = ZB_BENCH_ALWAYS_TRACE | ZB_BENCH_NODE_LIST,
    .peak_dtype = zb_step_peak_dtype,
    .run = scale_run,
};
