/* zerobench gemm: GEMM throughput on the device's compute stream.
 *
 * Shapes come from an M=N=K sweep (-b/-e/-f as dimensions), from --shape
 * MxNxK (repeatable), or from --model NAME: the GEMMs the step runs for one
 * layer and the LM head, each linear's forward (Y = X W^T, M = tokens =
 * batch*seq), its input gradient (dX = dY W) and its weight gradient (dW =
 * dY^T X, K = tokens), weights stored [out, in] as the model keeps them
 * (bench/zero3/unit_fwd.c, unit_bwd.c; the weight gradient is written in
 * the storage dtype here, in fp32 by the step). Throughput is 2MNK/t
 * (docs/design.md) against the per-rank peak. The check samples 64 entries of
 * C against a double-precision dot product, outside the timed loop.
 *
 * --compare-direct also times the same GEMM on the same buffers through the
 * library called directly, and prints the harness's overhead against it:
 * on cpu cblas_sgemm from this thread, on cuda a direct cuBLASLt call
 * (zb_cuda_gemm_direct_time: its own handle, stream and workspace, timed
 * with cudaEvents). The direct time is per rank, reduced like the harness's;
 * the two alternate for --direct-rounds rounds and each keeps its best.
 *
 * The harness's loop records an event after each GEMM (iter_samples.h): its
 * per-iteration times, ranks reduced as -a says, go in the JSON as
 * metrics.samples.time_us for compare's two-sample test (the best round's,
 * with --compare-direct). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bf16.h"
#include "iter_samples.h"
#include "metrics.h"
#include "op_records.h"
#include "rng.h"
#include "row.h"
#include "test_hook.h"
#include "time_ranks.h"

#define GEMM_SAMPLES 64

typedef struct gemm_shape {
    char name[32];
    int64_t m, n, k;
    bool trans_a, trans_b;
} gemm_shape;

typedef struct gemm_bufs {
    void *a, *b, *c; /* device buffers of the benchmark's dtype */
} gemm_bufs;

/* Host copies in fp32 (inputs already rounded to the dtype), for the check. */
typedef struct gemm_host {
    float *a, *b, *c;
} gemm_host;

static int collect_shapes(const zb_bench_ctx *ctx, gemm_shape *out, int cap, zb_status *st) {
    const zb_config *cfg = ctx->cfg;
    int n = 0;
    *st = ZB_OK;
    if (cfg->n_shapes > 0) {
        for (int i = 0; i < cfg->n_shapes && n < cap; i++, n++) {
            snprintf(out[n].name, sizeof out[n].name, "shape%d", i);
            out[n].m = cfg->shapes[i][0];
            out[n].n = cfg->shapes[i][1];
            out[n].k = cfg->shapes[i][2];
            out[n].trans_a = out[n].trans_b = false;
        }
        return n;
    }
    if (cfg->model[0]) {
        zb_model_profile mp;
        *st = zb_model_profile_load(cfg->model, &mp);
        if (*st != ZB_OK) return 0;
        int64_t t = cfg->tokens ? cfg->tokens : (int64_t)mp.batch * mp.seq;
        int64_t q = (int64_t)mp.heads * mp.head_dim, kv = (int64_t)mp.kv_heads * mp.head_dim;
        const struct {
            const char *name;
            int64_t out, in;
        } linear[] = {{"wq", q, mp.dim},          {"wk", kv, mp.dim},         {"wv", kv, mp.dim},
                      {"wo", mp.dim, q},          {"w_gate", mp.ffn_dim, mp.dim}, {"w_up", mp.ffn_dim, mp.dim},
                      {"w_down", mp.dim, mp.ffn_dim}, {"lm_head", mp.vocab, mp.dim}};
        for (size_t i = 0; i < sizeof linear / sizeof linear[0] && n + 3 <= cap; i++) {
            int64_t o = linear[i].out, in = linear[i].in;
            const gemm_shape three[3] = {{"", t, o, in, false, true}, {"", t, in, o, false, false},
                                         {"", o, in, t, true, false}};
            const char *pass[3] = {"fwd", "dgrad", "wgrad"};
            for (int p = 0; p < 3; p++, n++) {
                out[n] = three[p];
                snprintf(out[n].name, sizeof out[n].name, "%s.%s", linear[i].name, pass[p]);
            }
        }
        return n;
    }
    for (uint64_t d = cfg->min_bytes; d <= cfg->max_bytes && n < cap; d *= (uint64_t)cfg->step_factor) {
        snprintf(out[n].name, sizeof out[n].name, "square");
        out[n].m = out[n].n = out[n].k = (int64_t)d;
        out[n].trans_a = out[n].trans_b = false;
        n++;
    }
    return n;
}

static void fill_uniform(float *x, size_t n, uint64_t seed) {
    for (size_t i = 0; i < n; i++) x[i] = (float)zb_uniform_pm1(zb_splitmix_next(&seed));
}

static zb_gemm_desc desc_of(const gemm_shape *s, const gemm_bufs *b, zb_dtype dtype) {
    zb_gemm_desc g;
    memset(&g, 0, sizeof g);
    g.trans_a = s->trans_a;
    g.trans_b = s->trans_b;
    g.m = s->m;
    g.n = s->n;
    g.k = s->k;
    g.alpha = 1.0f;
    g.beta = 0.0f;
    g.a = b->a;
    g.lda = s->trans_a ? s->m : s->k;
    g.b = b->b;
    g.ldb = s->trans_b ? s->k : s->n;
    g.c = b->c;
    g.ldc = s->n;
    g.dtype = dtype;
    return g;
}

/* Wrong entries among GEMM_SAMPLES sampled ones. The bound 16*sqrt(K)*eps
 * times sum|a*b| covers fp32 blocked summation; one dropped or doubled term
 * (about sum|a*b|/K) is far above it for every K this benchmark runs. */
static int64_t check_sampled(const gemm_shape *s, const gemm_host *b, zb_dtype dtype, uint64_t seed) {
    int64_t wrong = 0;
    double tol = 16.0 * sqrt((double)s->k) * 0x1.0p-24;
    /* A bf16 output adds its own rounding: half an ulp, 2^-9 relative. */
    double out_tol = dtype == ZB_DTYPE_BF16 ? 0x1.0p-8 : 0.0;
    for (int i = 0; i < GEMM_SAMPLES; i++) {
        int64_t r = (int64_t)(zb_splitmix_next(&seed) % (uint64_t)s->m);
        int64_t c = (int64_t)(zb_splitmix_next(&seed) % (uint64_t)s->n);
        double ref = 0.0, mag = 0.0;
        for (int64_t k = 0; k < s->k; k++) {
            double av = s->trans_a ? b->a[k * s->m + r] : b->a[r * s->k + k];
            double bv = s->trans_b ? b->b[c * s->k + k] : b->b[k * s->n + c];
            ref += av * bv;
            mag += fabs(av * bv);
        }
        double got = b->c[r * s->n + c];
        if (!(fabs(got - ref) <= tol * mag + out_tol * fabs(ref) + 1e-30)) wrong++;
    }
    return wrong;
}

/* This rank's seconds per GEMM, and its per-iteration samples. */
static zb_status time_gemm(zb_bench_ctx *ctx, const zb_gemm_desc *g, zb_iter_marks *marks, double *seconds,
                           zb_iter_samples *samples, size_t *mark) {
    const zb_config *cfg = ctx->cfg;
    zb_op_info info = {ZB_OP_COMPUTE, "gemm", -1, 0, zb_gemm_flops((double)g->m, (double)g->n, (double)g->k)};
    for (int64_t i = 0; i < cfg->warmup_iters; i++) ZB_TRY(ctx->dev->ops->gemm(ctx->compute, g, &info));
    ZB_TRY(ctx->dev->ops->stream_sync(ctx->compute));
    double delay_ms = 0.0; /* the test hook (test_hook.h); gemm_run checked its syntax */
    ZB_TRY(zb_test_delay_ms(ctx->topo.rank, &delay_ms));
    if (mark) *mark = zb_op_records_mark(ctx);
    int64_t t0 = zb_dev_now_ns(ctx->dev); /* virtual time on the sim */
    ZB_TRY(zb_iter_marks_begin(marks, ctx->dev, ctx->compute, cfg->iters));
    for (int64_t i = 0; i < cfg->iters; i++) {
        ZB_TRY(ctx->dev->ops->gemm(ctx->compute, g, &info));
        if (i + 1 < cfg->iters) ZB_TRY(zb_iter_marks_after(marks, i));
    }
    if (delay_ms > 0 && ctx->dev->ops->launch_host) {
        zb_op_info d = {ZB_OP_COMPUTE, "test_delay", -1, 0, 0};
        ZB_TRY(ctx->dev->ops->launch_host(ctx->compute, zb_test_delay_sleep, &delay_ms, NULL, &d));
    }
    /* the last mark after the hook's delay: the samples hold it as the figure does */
    if (cfg->iters > 0) ZB_TRY(zb_iter_marks_after(marks, cfg->iters - 1));
    ZB_TRY(ctx->dev->ops->stream_sync(ctx->compute));
    *seconds = (double)(zb_dev_now_ns(ctx->dev) - t0) / 1e9 / (double)cfg->iters;
    return zb_iter_marks_read(marks, samples);
}

/* The baseline for --compare-direct, this rank's seconds per GEMM: the
 * device backend's direct library call (cblas_sgemm on cpu, cuBLASLt on
 * cuda; device_backend.h). */
static zb_status time_direct(zb_bench_ctx *ctx, const zb_gemm_desc *g, double *seconds) {
    const zb_config *cfg = ctx->cfg;
    return ctx->backends.device->gemm_direct_time(ctx->dev, g, cfg->warmup_iters, cfg->iters, seconds);
}

/* One shape's row: the table row and its JSON run (row.h). direct_title:
 * the group title over the direct columns; NULL: none. */
static zb_status add_row(zb_bench_ctx *ctx, zb_rows *out, const gemm_shape *s, double sec, double pct,
                         int64_t wrong, double direct_s, const char *direct_title, const zb_iter_samples *samples,
                         zb_time_ranks *tr, double dev_s) {
    char shape[96];
    snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)s->m, (long long)s->n, (long long)s->k);
    double flops = zb_gemm_flops((double)s->m, (double)s->n, (double)s->k);
    zb_field f[24] = {
        {.key = "bench", .kind = ZB_FIELD_TEXT, .s = "gemm"},
        {.key = "name", .tables = 1, .header = "name", .left = true, .kind = ZB_FIELD_TEXT, .s = s->name},
        {.key = "shape", .kind = ZB_FIELD_TEXT, .s = shape},
        {.tables = 1, .header = "M", .kind = ZB_FIELD_INT, .i = s->m},
        {.tables = 1, .header = "N", .kind = ZB_FIELD_INT, .i = s->n},
        {.tables = 1, .header = "K", .kind = ZB_FIELD_INT, .i = s->k},
        {.key = "dtype", .tables = 1, .header = "type", .kind = ZB_FIELD_TEXT, .s = zb_dtype_name(ctx->cfg->dtype)},
        {.key = "trans_a", .kind = ZB_FIELD_BOOL, .b = s->trans_a},
        {.key = "trans_b", .kind = ZB_FIELD_BOOL, .b = s->trans_b},
        {.key = "ranks", .kind = ZB_FIELD_INT, .i = ctx->world_ranks},
        {.key = "nodes", .kind = ZB_FIELD_INT, .i = ctx->world_nodes},
        {.key = "time_us", .metric = true, .tables = 1, .header = "time", .unit = "us", .kind = ZB_FIELD_REAL,
         .decimals = 1, .d = sec * 1e6},
        {.tables = 1, .header = "throughput", .unit = "GFLOP/s", .kind = ZB_FIELD_REAL, .decimals = 2,
         .d = flops / sec / 1e9},
        {.key = "tflops", .metric = true, .kind = ZB_FIELD_REAL, .d = flops / sec / 1e12},
        {.key = "pct_peak", .metric = true, .tables = 1, .header = "of peak", .unit = "%", .kind = ZB_FIELD_REAL,
         .decimals = 1, .d = pct},
        {.key = "wrong", .metric = true, .tables = 1, .header = "#wrong", .na = "N/A", .kind = ZB_FIELD_INT,
         .null = wrong < 0, .i = wrong},
    };
    int n = 16;
    /* traced (--trace): the median of the timed calls' own records, without the gaps between calls */
    if (!isnan(dev_s)) f[n++] = (zb_field){.key = "device_time_us", .metric = true, .kind = ZB_FIELD_REAL, .d = dev_s * 1e6};
    /* The values behind time_us: compare's two-sample test reads them. */
    json_t *sj = samples->n ? zb_iter_samples_json(samples) : NULL;
    if (samples->n && !sj) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the samples");
    if (sj) f[n++] = (zb_field){.key = "time_us", .metric = true, .parent = "samples", .kind = ZB_FIELD_JSON, .j = sj};
    if (direct_title) {
        /* In the JSON only when measured (a positive time). */
        bool timed = direct_s > 0;
        zb_field time = {.key = timed ? "direct_time_us" : NULL, .metric = true, .tables = 1, .header = "time",
                         .unit = "us", .group = direct_title, .kind = ZB_FIELD_REAL, .decimals = 1,
                         .d = direct_s * 1e6};
        zb_field over = {.key = timed ? "harness_overhead_pct" : NULL, .metric = true, .tables = 1,
                         .header = "overhead", .unit = "%", .group = direct_title, .kind = ZB_FIELD_REAL,
                         .decimals = 1, .sign = true, .d = 100.0 * (sec - direct_s) / direct_s};
        f[n++] = time;
        f[n++] = over;
    }
    char what[160];
    snprintf(what, sizeof what, "%s %s", s->name, shape);
    const char *const whats[1] = {what};
    const unsigned runs[1] = {1u};
    int k = 0;
    zb_status st = zb_time_ranks_fields(tr, ctx, runs, whats, &f[n], &k);
    if (st == ZB_OK) st = zb_rows_add(out, f, n + k, 1);
    zb_time_ranks_row_done(tr);
    json_decref(sj);
    return st;
}

/* Copies n fp32 host values to device buffer dst as `dtype`, rounding the
 * host values to what the device holds (so the check uses the same inputs). */
static zb_status upload(zb_bench_ctx *ctx, void *dst, float *host, size_t n, zb_dtype dtype) {
    zb_op_info info = {ZB_OP_COPY, "upload", -1, 0, 0};
    if (dtype == ZB_DTYPE_F32) {
        ZB_TRY(ctx->dev->ops->memcpy_async(ctx->compute, dst, host, n * sizeof(float), &info));
        return ctx->dev->ops->stream_sync(ctx->compute);
    }
    zb_bf16 *staged = (zb_bf16 *)malloc(n * sizeof(zb_bf16) + 1);
    if (!staged) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory staging %zu bf16 values", n);
    for (size_t i = 0; i < n; i++) {
        staged[i] = zb_f32_to_bf16(host[i]);
        host[i] = zb_bf16_to_f32(staged[i]);
    }
    zb_status st = ctx->dev->ops->memcpy_async(ctx->compute, dst, staged, n * sizeof(zb_bf16), &info);
    if (st == ZB_OK) st = ctx->dev->ops->stream_sync(ctx->compute);
    free(staged);
    return st;
}

static zb_status download(zb_bench_ctx *ctx, float *host, const void *src, size_t n, zb_dtype dtype) {
    zb_op_info info = {ZB_OP_COPY, "download", -1, 0, 0};
    if (dtype == ZB_DTYPE_F32) {
        ZB_TRY(ctx->dev->ops->memcpy_async(ctx->compute, host, src, n * sizeof(float), &info));
        return ctx->dev->ops->stream_sync(ctx->compute);
    }
    zb_bf16 *staged = (zb_bf16 *)malloc(n * sizeof(zb_bf16) + 1);
    if (!staged) return ZB_FAIL(ZB_ERR_NOMEM, "out of host memory staging %zu bf16 values", n);
    zb_status st = ctx->dev->ops->memcpy_async(ctx->compute, staged, src, n * sizeof(zb_bf16), &info);
    if (st == ZB_OK) st = ctx->dev->ops->stream_sync(ctx->compute);
    for (size_t i = 0; st == ZB_OK && i < n; i++) host[i] = zb_bf16_to_f32(staged[i]);
    free(staged);
    return st;
}

/* Allocates, fills and uploads A and B; times; checks; frees. */
static zb_status measure_shape(zb_bench_ctx *ctx, const gemm_shape *s, zb_iter_marks *marks, double *sec,
                               double *local_s, int64_t *wrong, double *direct_s, zb_iter_samples *samples,
                               double *dev_s) {
    const zb_config *cfg = ctx->cfg;
    zb_dtype dtype = cfg->dtype;
    size_t e = zb_dtype_size(dtype);
    size_t na = (size_t)(s->m * s->k), nb = (size_t)(s->k * s->n), nc = (size_t)(s->m * s->n);
    gemm_bufs b = {NULL, NULL, NULL};
    gemm_host h = {(float *)malloc(na * sizeof(float)), (float *)malloc(nb * sizeof(float)),
                   (float *)malloc(nc * sizeof(float))};
    zb_status st = (h.a && h.b && h.c) ? ZB_OK : ZB_FAIL(ZB_ERR_NOMEM, "out of host memory for GEMM inputs");
    if (st == ZB_OK) st = zb_dev_alloc(ctx->dev, na * e, ZB_MEM_BENCH_BUFFER, &b.a);
    if (st == ZB_OK) st = zb_dev_alloc(ctx->dev, nb * e, ZB_MEM_BENCH_BUFFER, &b.b);
    if (st == ZB_OK) st = zb_dev_alloc(ctx->dev, nc * e, ZB_MEM_BENCH_BUFFER, &b.c);
    zb_gemm_desc g = desc_of(s, &b, dtype);
    if (st == ZB_OK) {
        fill_uniform(h.a, na, 1 + (uint64_t)ctx->topo.rank);
        fill_uniform(h.b, nb, 1000 + (uint64_t)ctx->topo.rank);
        st = upload(ctx, b.a, h.a, na, dtype);
    }
    if (st == ZB_OK) st = upload(ctx, b.b, h.b, nb, dtype);
    size_t mark = SIZE_MAX;
    if (st == ZB_OK) st = time_gemm(ctx, &g, marks, local_s, samples, &mark);
    if (st == ZB_OK) st = zb_op_records_median(ctx, mark, "gemm", dev_s);
    bool check = cfg->check && zb_dev_holds_data(ctx->dev); /* the sim holds none */
    if (st == ZB_OK && check) st = download(ctx, h.c, b.c, nc, dtype);
    if (st == ZB_OK) st = zb_bench_reduce_time(ctx, *local_s, sec);
    if (st == ZB_OK && check) {
        st = zb_bench_sum(ctx, check_sampled(s, &h, dtype, 77 + (uint64_t)ctx->topo.rank), wrong);
    }
    /* After the check's download (the direct run overwrites C): the
     * direct call and the harness alternate, even rounds the direct call
     * first, odd rounds the harness (round 0's harness loop is the one
     * above), and each side keeps its best round. */
    if (cfg->compare_direct) *direct_s = INFINITY;
    zb_iter_samples *round = cfg->compare_direct && st == ZB_OK ? (zb_iter_samples *)malloc(sizeof *round) : NULL;
    if (cfg->compare_direct && st == ZB_OK && !round) st = ZB_FAIL(ZB_ERR_NOMEM, "out of memory for a round's samples");
    for (int64_t r = 0; st == ZB_OK && cfg->compare_direct && r < cfg->direct_rounds; r++) {
        for (int k = 0; k < 2 && st == ZB_OK; k++) {
            bool harness = r % 2 == 0 ? k == 1 : k == 0;
            if (harness && r == 0) continue;
            double local = 0.0, t = 0.0;
            st = harness ? time_gemm(ctx, &g, marks, &local, round, NULL) : time_direct(ctx, &g, &local);
            if (st == ZB_OK && harness && local < *local_s) *local_s = local;
            if (st == ZB_OK) st = zb_bench_reduce_time(ctx, local, &t);
            double *best = harness ? sec : direct_s;
            if (st == ZB_OK && t < *best) {
                *best = t;
                if (harness) *samples = *round; /* the kept round's (t: alike on every rank) */
            }
        }
    }
    free(round);
    if (st == ZB_OK) st = zb_iter_samples_reduce(ctx, samples);
    zb_dev_free(ctx->dev, b.c);
    zb_dev_free(ctx->dev, b.b);
    zb_dev_free(ctx->dev, b.a);
    free(h.a);
    free(h.b);
    free(h.c);
    return st;
}

static zb_status run_shape(zb_bench_ctx *ctx, const gemm_shape *s, zb_rows *t, const char *direct_title,
                           zb_iter_marks *marks, zb_iter_samples *samples, zb_time_ranks *tr) {
    double sec = 0.0, local_s = 0.0, direct_s = 0.0, dev_s = NAN;
    int64_t wrong = -1;
    samples->n = 0;
    ZB_TRY(measure_shape(ctx, s, marks, &sec, &local_s, &wrong, &direct_s, samples, &dev_s));
    ZB_TRY(zb_time_ranks_gather(tr, ctx, 0, local_s * 1e6));
    double flops = zb_gemm_flops((double)s->m, (double)s->n, (double)s->k);
    double pct = ctx->peak_flops > 0 ? 100.0 * flops / sec / ctx->peak_flops : NAN;
    if (wrong > 0) ctx->wrong += wrong;
    return add_row(ctx, t, s, sec, pct, wrong, direct_s, direct_title, samples, tr, dev_s);
}

/* One shape's buffers (measure_shape): A, B and C on the device in the
 * dtype, their fp32 host copies, and a bf16 staging copy of one of them. */
static void shape_need(const gemm_shape *s, zb_dtype dtype, double *device, double *host) {
    double na = (double)s->m * (double)s->k, nb = (double)s->k * (double)s->n, nc = (double)s->m * (double)s->n;
    double largest = fmax(na, fmax(nb, nc));
    *device = (na + nb + nc) * (double)zb_dtype_size(dtype);
    *host = (na + nb + nc) * sizeof(float) + (dtype == ZB_DTYPE_F32 ? 0.0 : largest * sizeof(zb_bf16));
}

/* The flag that gave the shapes, and its value. */
static void shape_flag(const zb_config *cfg, const gemm_shape *s, zb_mem_need *out) {
    if (cfg->n_shapes > 0) {
        snprintf(out->flag, sizeof out->flag, "--shape");
        snprintf(out->value, sizeof out->value, "%lldx%lldx%lld", (long long)s->m, (long long)s->n, (long long)s->k);
    } else if (cfg->model[0]) {
        snprintf(out->flag, sizeof out->flag, "--model/--tokens");
        snprintf(out->value, sizeof out->value, "%s", cfg->model);
    } else {
        snprintf(out->flag, sizeof out->flag, "-e/--maxbytes");
        snprintf(out->value, sizeof out->value, "%lld", (long long)s->m);
    }
}

/* The largest shape's buffers (shapes run one at a time; bench.h). */
static zb_status gemm_memory_need(const zb_bench_ctx *ctx, zb_mem_need *out) {
    gemm_shape shapes[ZB_MAX_SHAPES];
    zb_status st;
    int n = collect_shapes(ctx, shapes, ZB_MAX_SHAPES, &st);
    ZB_TRY(st);
    int worst = -1;
    double worst_total = -1.0;
    for (int i = 0; i < n; i++) {
        double device, host;
        shape_need(&shapes[i], ctx->cfg->dtype, &device, &host);
        if (device + host <= worst_total) continue;
        worst = i;
        worst_total = device + host;
        out->device_bytes = device;
        out->host_bytes = host;
    }
    if (worst < 0) return ZB_OK;
    const gemm_shape *s = &shapes[worst];
    shape_flag(ctx->cfg, s, out);
    snprintf(out->device_what, sizeof out->device_what, "A, B and C of %s %lldx%lldx%lld in %s", s->name,
             (long long)s->m, (long long)s->n, (long long)s->k, zb_dtype_name(ctx->cfg->dtype));
    snprintf(out->host_what, sizeof out->host_what, "float host copies of A, B and C");
    return ZB_OK;
}

static zb_status gemm_run(zb_bench_ctx *ctx) {
    const zb_device_backend *be = ctx->backends.device;
    /* The cpu device's bf16 GEMM widens to float in scratch and runs sgemm:
     * a reference, so its time would not be a bf16 GEMM's. */
    if (be->gemm_float_only_why && ctx->cfg->dtype != ZB_DTYPE_F32) {
        return ZB_FAIL(ZB_ERR_INVALID, "-d/--datatype %s: the %s backend times GEMM in float only (%s)",
                       zb_dtype_name(ctx->cfg->dtype), be->name, be->gemm_float_only_why);
    }
    const char *direct_title = ctx->cfg->compare_direct && be->gemm_direct_time ? be->gemm_direct_name : NULL;
    if (ctx->cfg->compare_direct && !direct_title) {
        return ZB_FAIL(ZB_ERR_INVALID, "--compare-direct: the %s backend has no direct GEMM baseline",
                       be->name);
    }
    double delay_ms = 0.0;
    ZB_TRY(zb_test_delay_ms(ctx->topo.rank, &delay_ms)); /* a bad hook value fails on every rank */
    gemm_shape shapes[ZB_MAX_SHAPES];
    zb_status st;
    int n = collect_shapes(ctx, shapes, ZB_MAX_SHAPES, &st);
    ZB_TRY(st);
    zb_time_ranks tr; /* collective: before anything local can fail */
    st = zb_time_ranks_init(ctx, &tr, 1);
    zb_rows *t = st == ZB_OK ? zb_rows_new(ctx->report, 1) : NULL;
    if (st == ZB_OK && !t) st = ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the table");
    /* the timing events (reused shape after shape) and a shape's samples */
    zb_iter_marks *marks = (zb_iter_marks *)calloc(1, sizeof *marks);
    zb_iter_samples *samples = (zb_iter_samples *)malloc(sizeof *samples);
    if (st == ZB_OK && (!marks || !samples)) st = ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the timing events");
    for (int i = 0; i < n && st == ZB_OK; i++) st = run_shape(ctx, &shapes[i], t, direct_title, marks, samples, &tr);
    if (marks) zb_iter_marks_free(marks);
    free(marks);
    free(samples);
    if (st == ZB_OK && ctx->out) {
        fprintf(ctx->out, "# peak %.2f GFLOP/s per rank (%s)\n", ctx->peak_flops / 1e9, ctx->peak_source);
        zb_rows_print(t, 0, ctx->out, "#");
        if (!zb_dev_holds_data(ctx->dev)) {
            fprintf(ctx->out, "# Wrong sampled entries : not checked (SIMULATED: the device holds no data)\n");
        } else {
            fprintf(ctx->out, "# Wrong sampled entries : %lld %s\n", (long long)ctx->wrong, ctx->wrong ? "FAILED" : "OK");
        }
        if (direct_title) {
            fprintf(ctx->out, "# %s: %lld rounds alternated with the harness's loop, each side's time its best "
                    "round\n", direct_title, (long long)ctx->cfg->direct_rounds);
        }
        zb_time_ranks_print(&tr, ctx->out);
    }
    zb_time_ranks_free(&tr);
    if (t) zb_rows_free(t);
    return st;
}

/* ---- options ----------------------------------------------------------------- */

static const zb_opt opt_shape = {"shape", 0, ZB_OPT_SHAPE, 0, 0, 0, 0, "MxNxK; repeat for several shapes"};
static const zb_opt opt_tokens = {"tokens", 0, ZB_OPT_INT, ZB_OPT_FIELD(tokens), 1, 1e9,
                                  "M of the --model GEMMs (default batch*seq of the profile)"};
static const zb_opt *const gemm_opts[] = {&opt_shape, &zb_opt_model, &opt_tokens, NULL};
static const zb_opt_group gemm_group = {gemm_opts, NULL};
static const zb_opt_group *const gemm_groups[] = {&zb_opts_sweep_range, &zb_opts_sweep_run, &gemm_group, NULL};

/* The default sweep M=N=K 256..2048, set before the flags so that -b or -e
 * alone keeps the other bound from this sweep, not the collectives' 32M. */
static void gemm_defaults(zb_config *cfg) {
    cfg->min_bytes = 256;
    cfg->max_bytes = 2048;
}

/* Shapes come one way only: -b/-e (M=N=K sweep), --shape or --model. */
static zb_status gemm_check(zb_config *cfg, const zb_opt_seen *seen) {
    cfg->gemm_sweep_given = zb_opt_given(seen, &zb_opt_minbytes) || zb_opt_given(seen, &zb_opt_maxbytes);
    int ways = (cfg->n_shapes > 0) + (cfg->model[0] != '\0') + cfg->gemm_sweep_given;
    if (ways > 1) {
        return ZB_FAIL(ZB_ERR_INVALID, "gemm takes one of -b/-e (M=N=K sweep), --shape or --model, not several");
    }
    if (cfg->max_bytes > (1u << 20)) {
        return ZB_FAIL(ZB_ERR_INVALID, "gemm -e/--maxbytes %llu: a GEMM dimension is at most 1048576",
                       (unsigned long long)cfg->max_bytes);
    }
    return ZB_OK;
}

/* GEMM runs in its -d dtype. */
static zb_dtype gemm_peak_dtype(const zb_config *cfg, zb_dtype device_default) {
    (void)device_default;
    return cfg->dtype;
}

const zb_bench zb_bench_gemm = {
    .name = "gemm",
    .groups = gemm_groups,
    .defaults = gemm_defaults,
    .check = gemm_check,
    .flags = ZB_BENCH_SWEEP_HEADER,
    .peak_dtype = gemm_peak_dtype,
    .run = gemm_run,
    .memory_need = gemm_memory_need,
};
