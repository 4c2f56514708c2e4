/* zerobench memory: the bandwidth element-wise ops reach on the device's
 * compute stream, through the kernel table (kernels.h): the residual add
 * out = a + b over n elements of -d (reads 2n, writes n: 3 n x the
 * element's bytes moved), n from a sweep of -b/-e/-f as the bytes of one
 * buffer. Each size runs -w untimed calls, then -n calls back to back on
 * the stream; the time per call is reduced across ranks as -a says. Every
 * rank runs at once, as the step's ranks do, so the figure is one rank's
 * bandwidth beside the others. zerobench calibrate fits time = per-op
 * overhead + bytes moved / bandwidth over the sweep (calib_fit.h).
 *
 * The check (-c 1, outside the timed calls): a = 1, b = 2, every element
 * of out must be 3 (exact in float and bf16). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bf16.h"
#include "kernels.h"
#include "row.h"

/* n copies of `value` in `dtype`, as the device holds them. */
static void *host_filled(size_t n, zb_dtype dtype, float value) {
    size_t es = zb_dtype_size(dtype);
    void *p = malloc(n * es + 1);
    for (size_t i = 0; p && i < n; i++) {
        if (dtype == ZB_DTYPE_BF16) ((zb_bf16 *)p)[i] = zb_f32_to_bf16(value);
        else ((float *)p)[i] = value;
    }
    return p;
}

static zb_status copy(zb_bench_ctx *ctx, void *dst, const void *src, size_t bytes, const char *label) {
    zb_op_info info = {ZB_OP_COPY, label, -1, 0, 0};
    ZB_TRY(ctx->dev->ops->memcpy_async(ctx->compute, dst, src, bytes, &info));
    return ctx->dev->ops->stream_sync(ctx->compute);
}

/* Elements of out that are not 3. */
static int64_t count_wrong(const void *host, size_t n, zb_dtype dtype) {
    int64_t wrong = 0;
    for (size_t i = 0; i < n; i++) {
        float v = dtype == ZB_DTYPE_BF16 ? zb_bf16_to_f32(((const zb_bf16 *)host)[i]) : ((const float *)host)[i];
        wrong += v != 3.0f;
    }
    return wrong;
}

/* Seconds per call of this rank, and its wrong elements (-1: not checked). */
static zb_status measure(zb_bench_ctx *ctx, size_t n, double *local_s, int64_t *wrong) {
    const zb_config *cfg = ctx->cfg;
    zb_dtype dtype = cfg->dtype;
    size_t bytes = n * zb_dtype_size(dtype);
    const zb_kernels *K = zb_kernels_for(ctx->dev);
    void *a = NULL, *b = NULL, *out = NULL;
    void *ha = host_filled(n, dtype, 1.0f), *hb = host_filled(n, dtype, 2.0f), *hout = malloc(bytes + 1);
    zb_status st = ha && hb && hout ? ZB_OK : ZB_FAIL(ZB_ERR_NOMEM, "memory: out of host memory for %zu bytes", bytes);
    if (st == ZB_OK) st = zb_dev_alloc(ctx->dev, bytes, ZB_MEM_BENCH_BUFFER, &a);
    if (st == ZB_OK) st = zb_dev_alloc(ctx->dev, bytes, ZB_MEM_BENCH_BUFFER, &b);
    if (st == ZB_OK) st = zb_dev_alloc(ctx->dev, bytes, ZB_MEM_BENCH_BUFFER, &out);
    if (st == ZB_OK) st = copy(ctx, a, ha, bytes, "upload");
    if (st == ZB_OK) st = copy(ctx, b, hb, bytes, "upload");
    zb_kcall kc = {ctx->compute, "residual_fwd", -1, dtype, 0.0};
    for (int64_t i = 0; i < cfg->warmup_iters && st == ZB_OK; i++) st = K->residual_fwd(&kc, out, a, b, n);
    if (st == ZB_OK) st = ctx->dev->ops->stream_sync(ctx->compute);
    int64_t t0 = zb_dev_now_ns(ctx->dev);
    for (int64_t i = 0; i < cfg->iters && st == ZB_OK; i++) st = K->residual_fwd(&kc, out, a, b, n);
    if (st == ZB_OK) st = ctx->dev->ops->stream_sync(ctx->compute);
    *local_s = (double)(zb_dev_now_ns(ctx->dev) - t0) / 1e9 / (double)cfg->iters;
    *wrong = -1;
    if (st == ZB_OK && cfg->check && zb_dev_holds_data(ctx->dev)) {
        st = copy(ctx, hout, out, bytes, "download");
        if (st == ZB_OK) *wrong = count_wrong(hout, n, dtype);
    }
    zb_dev_free(ctx->dev, out);
    zb_dev_free(ctx->dev, b);
    zb_dev_free(ctx->dev, a);
    free(ha);
    free(hb);
    free(hout);
    return st;
}

static zb_status add_row(zb_bench_ctx *ctx, zb_rows *t, size_t n, double sec, int64_t wrong) {
    double moved = 3.0 * (double)n * (double)zb_dtype_size(ctx->cfg->dtype);
    zb_field f[] = {
        {.key = "bench", .kind = ZB_FIELD_TEXT, .s = "memory"},
        {.key = "op", .kind = ZB_FIELD_TEXT, .s = "residual_fwd"},
        {.key = "bytes", .tables = 1, .header = "bytes", .kind = ZB_FIELD_INT,
         .i = (int64_t)(n * zb_dtype_size(ctx->cfg->dtype))},
        {.key = "count", .tables = 1, .header = "elements", .kind = ZB_FIELD_INT, .i = (int64_t)n},
        {.key = "dtype", .tables = 1, .header = "type", .kind = ZB_FIELD_TEXT, .s = zb_dtype_name(ctx->cfg->dtype)},
        {.key = "ranks", .kind = ZB_FIELD_INT, .i = ctx->world_ranks},
        {.key = "nodes", .kind = ZB_FIELD_INT, .i = ctx->world_nodes},
        {.key = "bytes_moved", .metric = true, .tables = 1, .header = "moved", .unit = "B", .kind = ZB_FIELD_INT,
         .i = (int64_t)moved},
        {.key = "time_us", .metric = true, .tables = 1, .header = "time", .unit = "us", .kind = ZB_FIELD_REAL,
         .decimals = 2, .d = sec * 1e6},
        {.key = "gbps", .metric = true, .tables = 1, .header = "bandwidth", .unit = "GB/s", .kind = ZB_FIELD_REAL,
         .decimals = 2, .d = moved / sec / 1e9},
        {.key = "wrong", .metric = true, .tables = 1, .header = "#wrong", .na = "N/A", .kind = ZB_FIELD_INT,
         .null = wrong < 0, .i = wrong},
    };
    return zb_rows_add(t, f, (int)(sizeof f / sizeof f[0]), 1);
}

static zb_status memory_run(zb_bench_ctx *ctx) {
    const zb_config *cfg = ctx->cfg;
    size_t es = zb_dtype_size(cfg->dtype);
    zb_rows *t = zb_rows_new(ctx->report, 1);
    zb_status st = t ? ZB_OK : ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the table");
    for (uint64_t bytes = cfg->min_bytes; st == ZB_OK && bytes <= cfg->max_bytes;
         bytes *= (uint64_t)cfg->step_factor) {
        size_t n = (size_t)(bytes / es) ? (size_t)(bytes / es) : 1;
        double local = 0.0, sec = 0.0;
        int64_t wrong = -1, all_wrong = -1;
        st = measure(ctx, n, &local, &wrong);
        if (st == ZB_OK) st = zb_bench_reduce_time(ctx, local, &sec);
        if (st == ZB_OK && wrong >= 0) st = zb_bench_sum(ctx, wrong, &all_wrong);
        if (st == ZB_OK && all_wrong > 0) ctx->wrong += all_wrong;
        if (st == ZB_OK) st = add_row(ctx, t, n, sec, all_wrong);
    }
    if (st == ZB_OK && ctx->out) {
        fprintf(ctx->out, "# memory: out = a + b (residual_fwd), bytes moved = 3 x one buffer; time per call, "
                "-n calls back to back\n");
        zb_rows_print(t, 0, ctx->out, "#");
        if (zb_dev_holds_data(ctx->dev)) {
            fprintf(ctx->out, "# Wrong elements : %lld %s\n", (long long)ctx->wrong, ctx->wrong ? "FAILED" : "OK");
        }
    }
    if (t) zb_rows_free(t);
    return st;
}

/* ---- options ----------------------------------------------------------------- */

static const zb_opt_group *const memory_groups[] = {&zb_opts_sweep_range, &zb_opts_sweep_run, NULL};

/* Buffers of 4K .. 16M, x4. */
static void memory_defaults(zb_config *cfg) {
    cfg->min_bytes = 4096;
    cfg->max_bytes = 16u << 20;
    cfg->step_factor = 4;
}

static zb_status memory_check(zb_config *cfg, const zb_opt_seen *seen) {
    (void)seen;
    if (cfg->compare_direct) {
        return ZB_FAIL(ZB_ERR_INVALID, "memory --compare-direct: element-wise ops have no direct library baseline");
    }
    if (cfg->dtype != ZB_DTYPE_F32 && cfg->dtype != ZB_DTYPE_BF16) {
        return ZB_FAIL(ZB_ERR_INVALID, "memory -d/--datatype %s: accepted: float, bf16", zb_dtype_name(cfg->dtype));
    }
    return ZB_OK;
}

/* The three buffers of the largest size on the device, and their host copies. */
static zb_status memory_need(const zb_bench_ctx *ctx, zb_mem_need *out) {
    out->device_bytes = 3.0 * (double)ctx->cfg->max_bytes;
    out->host_bytes = 3.0 * (double)ctx->cfg->max_bytes;
    snprintf(out->flag, sizeof out->flag, "-e/--maxbytes");
    snprintf(out->value, sizeof out->value, "%llu", (unsigned long long)ctx->cfg->max_bytes);
    snprintf(out->device_what, sizeof out->device_what, "a, b and out of the largest size");
    snprintf(out->host_what, sizeof out->host_what, "their host copies");
    return ZB_OK;
}

const zb_bench zb_bench_memory = {
    .name = "memory",
    .groups = memory_groups,
    .defaults = memory_defaults,
    .check = memory_check,
    .flags = ZB_BENCH_SWEEP_HEADER,
    .run = memory_run,
    .memory_need = memory_need,
};
