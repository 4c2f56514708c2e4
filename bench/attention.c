/* zerobench attention: the device's fused causal GQA attention, forward
 * and backward, through the kernel table (kernels.h) on the compute stream.
 *
 * The shape is the model profile's (--model, "tiny" when not given) with
 * --batch --seq --heads --kv-heads --head-dim overriding it; q, k, v and
 * dout are uniform in [-1, 1). Each call is timed alone (issued, then the
 * stream synchronized) after -w untimed ones; a row shows the median and
 * the best of -n calls. The backward's out and lse come from one forward
 * before its calls. FLOPs as everywhere in zerobench (kernels.h): the full
 * 4 B H T^2 D forward, twice that backward; the JSON also carries the
 * causal count (2 B H T (T+1) D; the backward 2.5 times the forward,
 * FlashAttention-2's convention), which PyTorch peers report and the
 * "of peak" column is taken over.
 *
 * The check (-c 1, outside the timed calls) recomputes sampled rows in
 * double: query rows (out, lse, dq) from the inputs alone, kv rows (dk, dv)
 * from the inputs and the device's out and lse. An element is wrong when it
 * misses by more than the rounding of its sums allows (attn_tol). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "dtype_access.h"
#include "kernels.h"
#include "model.h"
#include "model_opts.h"
#include "rng.h"
#include "row.h"

#define ATTN_SAMPLES 8 /* query rows and kv rows checked per shape */

typedef struct attn_shape {
    int B, T, H, KVH, D;
} attn_shape;

/* The arrays, each nq, nkv or nl floats: inputs q, k, v, dout; outputs out,
 * lse, dq, dk, dv. */
enum { A_Q, A_K, A_V, A_DOUT, A_OUT, A_LSE, A_DQ, A_DK, A_DV, A_COUNT };

typedef struct attn_data {
    attn_shape s;
    zb_dtype dtype;      /* storage of every array but lse (fp32): -d */
    size_t n[A_COUNT];
    void *dev[A_COUNT];
    float *host[A_COUNT]; /* the values as stored, widened (inputs rounded to dtype first) */
    void *stage;         /* one array in dtype, for uploads and downloads */
} attn_data;

/* The storage of array a: lse is fp32 whatever the dtype (kernels.h). */
static zb_dtype dtype_of(const attn_data *d, int a) { return a == A_LSE ? ZB_DTYPE_F32 : d->dtype; }

static zb_status shape_of(const zb_config *cfg, attn_shape *out) {
    zb_model_profile mp;
    ZB_TRY(zb_model_profile_load(cfg->model[0] ? cfg->model : ZB_MODEL_DEFAULT, &mp));
    zb_model_cfg m;
    zb_model_cfg_from_profile(&mp, 1, &m);
    zb_model_apply_shape(cfg, &m);
    if (m.heads % m.kv_heads != 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "attention: --heads %d must be a multiple of --kv-heads %d", m.heads,
                       m.kv_heads);
    }
    double big = (double)m.batch * m.seq * m.heads * m.head_dim;
    if (big > 2147483647.0) {
        return ZB_FAIL(ZB_ERR_INVALID, "attention: B*T*H*D = %.0f elements; at most 2^31 - 1", big);
    }
    *out = (attn_shape){m.batch, m.seq, m.heads, m.kv_heads, m.head_dim};
    return ZB_OK;
}

static void sizes_of(const attn_shape *s, size_t n[A_COUNT]) {
    size_t nq = (size_t)s->B * s->T * s->H * s->D, nkv = (size_t)s->B * s->T * s->KVH * s->D;
    size_t nl = (size_t)s->B * s->H * s->T;
    const size_t each[A_COUNT] = {nq, nkv, nkv, nq, nq, nl, nq, nkv, nkv};
    memcpy(n, each, sizeof each);
}

static void free_data(zb_bench_ctx *ctx, attn_data *d) {
    for (int a = 0; a < A_COUNT; a++) {
        if (d->dev[a]) zb_dev_free(ctx->dev, d->dev[a]);
        free(d->host[a]);
    }
    free(d->stage);
}

/* Copies host array a to the device in its storage dtype (through stage). */
static zb_status upload(zb_bench_ctx *ctx, attn_data *d, int a) {
    zb_dtype t = dtype_of(d, a);
    for (size_t i = 0; i < d->n[a]; i++) zb_dtype_store(d->stage, i, t, d->host[a][i]);
    zb_op_info info = {ZB_OP_COPY, "upload", -1, 0, 0};
    ZB_TRY(ctx->dev->ops->memcpy_async(ctx->compute, d->dev[a], d->stage, d->n[a] * zb_dtype_size(t), &info));
    return ctx->dev->ops->stream_sync(ctx->compute); /* stage is reused */
}

/* Copies device array a back and widens it into host[a]. */
static zb_status download(zb_bench_ctx *ctx, attn_data *d, int a) {
    zb_dtype t = dtype_of(d, a);
    zb_op_info info = {ZB_OP_COPY, "download", -1, 0, 0};
    ZB_TRY(ctx->dev->ops->memcpy_async(ctx->compute, d->stage, d->dev[a], d->n[a] * zb_dtype_size(t), &info));
    ZB_TRY(ctx->dev->ops->stream_sync(ctx->compute));
    for (size_t i = 0; i < d->n[a]; i++) d->host[a][i] = zb_dtype_load(d->stage, i, t);
    return ZB_OK;
}

/* Allocates every array on the device and on the host, fills the inputs
 * and uploads them. */
static zb_status alloc_data(zb_bench_ctx *ctx, attn_data *d) {
    sizes_of(&d->s, d->n);
    size_t most = 0;
    for (int a = 0; a < A_COUNT; a++) {
        size_t bytes = d->n[a] * zb_dtype_size(dtype_of(d, a));
        if (bytes > most) most = bytes;
        d->host[a] = (float *)malloc(d->n[a] * sizeof(float) + 1);
        if (!d->host[a]) return ZB_FAIL(ZB_ERR_NOMEM, "attention: out of host memory for %zu floats", d->n[a]);
        ZB_TRY(zb_dev_alloc(ctx->dev, bytes + 1, ZB_MEM_BENCH_BUFFER, &d->dev[a]));
    }
    d->stage = malloc(most + 1);
    if (!d->stage) return ZB_FAIL(ZB_ERR_NOMEM, "attention: out of host memory for %zu bytes of staging", most);
    for (int a = A_Q; a <= A_DOUT; a++) {
        uint64_t seed = 100 * (uint64_t)(ctx->topo.rank + 1) + (uint64_t)a;
        zb_dtype t = dtype_of(d, a);
        /* the check reads what the kernels read: the value as stored */
        for (size_t i = 0; i < d->n[a]; i++) {
            float v = (float)zb_uniform_pm1(zb_splitmix_next(&seed));
            zb_dtype_store(d->stage, 0, t, v);
            d->host[a][i] = zb_dtype_load(d->stage, 0, t);
        }
        ZB_TRY(upload(ctx, d, a));
    }
    return ZB_OK;
}

static zb_status call(const zb_kernels *K, const zb_kcall *kc, const attn_data *d, bool bwd) {
    const attn_shape *s = &d->s;
    void *const *p = d->dev;
    if (!bwd) return K->attention_fwd(kc, p[A_OUT], p[A_LSE], p[A_Q], p[A_K], p[A_V], s->B, s->T, s->H, s->KVH, s->D);
    return K->attention_bwd(kc, p[A_DQ], p[A_DK], p[A_DV], p[A_DOUT], p[A_Q], p[A_K], p[A_V], p[A_OUT], p[A_LSE],
                            s->B, s->T, s->H, s->KVH, s->D);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median and best seconds of -n calls, each issued and waited for alone. */
static zb_status time_calls(zb_bench_ctx *ctx, const zb_kernels *K, const attn_data *d, bool bwd, double *med,
                            double *best) {
    const zb_config *cfg = ctx->cfg;
    zb_kcall kc = {ctx->compute, bwd ? "attention_bwd" : "attention_fwd", -1, d->dtype, 0.0};
    double *t = (double *)malloc((size_t)cfg->iters * sizeof *t);
    if (!t) return ZB_FAIL(ZB_ERR_NOMEM, "attention: out of memory for %lld times", (long long)cfg->iters);
    zb_status st = ZB_OK;
    for (int64_t i = 0; i < cfg->warmup_iters && st == ZB_OK; i++) st = call(K, &kc, d, bwd);
    if (st == ZB_OK) st = ctx->dev->ops->stream_sync(ctx->compute);
    for (int64_t i = 0; i < cfg->iters && st == ZB_OK; i++) {
        int64_t t0 = zb_dev_now_ns(ctx->dev);
        st = call(K, &kc, d, bwd);
        if (st == ZB_OK) st = ctx->dev->ops->stream_sync(ctx->compute);
        t[i] = (double)(zb_dev_now_ns(ctx->dev) - t0) / 1e9;
    }
    if (st == ZB_OK) {
        qsort(t, (size_t)cfg->iters, sizeof *t, cmp_double);
        *best = t[0];
        *med = cfg->iters % 2 ? t[cfg->iters / 2] : 0.5 * (t[cfg->iters / 2 - 1] + t[cfg->iters / 2]);
    }
    free(t);
    return st;
}

/* ---- the check ------------------------------------------------------------ */

#define U_F32 0x1.0p-24

/* Rounding allowed for an element that is a sum of n terms of total
 * magnitude mag (sum of |term|): the fp32 sum's random-walk sqrt(n) u, the
 * D-term dot products inside each probability (D u), the polynomial exp's
 * 4 u once per probability and once per running-max rescale (at most
 * T/128), with the 16 of gemm's check for the constants. */
static double attn_tol(double n, const attn_shape *s, double mag) {
    return 16.0 * U_F32 * (sqrt(n) + s->D + 4.0 * (s->T / 128 + 2)) * mag + 1e-30;
}

/* bf16 storage adds, relative to the terms' magnitude: the output's own
 * rounding (2^-9), Di = rowsum(dO * O) from the rounded out (2^-9), and,
 * where the kernel rounds P and dS to bf16 for tensor-core products
 * (cuDNN), one 2^-9 each: four bf16 half-ulps, 2^-7 in all. */
#define U_BF16_TERMS 0x1.0p-7

static double out_tol(const attn_data *d, double n, double mag) {
    double t = attn_tol(n, &d->s, mag);
    return d->dtype == ZB_DTYPE_BF16 ? t + U_BF16_TERMS * mag : t;
}

static double dot_d(const float *a, const float *b, int n) {
    double acc = 0.0;
    for (int i = 0; i < n; i++) acc += (double)a[i] * (double)b[i];
    return acc;
}

static double abs_dot(const float *a, const float *b, int n) {
    double acc = 0.0;
    for (int i = 0; i < n; i++) acc += fabs((double)a[i] * (double)b[i]);
    return acc;
}

static int64_t wrong_if(double got, double want, double tol) { return fabs(got - want) <= tol ? 0 : 1; }

/* Query row i of head h, batch b, in double: out, lse and dq against the
 * device's. p: 2 T doubles of scratch. */
static int64_t check_query_row(const attn_data *d, int b, int h, int i, double *p) {
    /* lse keeps fp32's bound with bf16 storage too: q and k are bf16 already,
     * so nothing is rounded before the scores */
    const attn_shape *s = &d->s;
    int D = s->D, qld = s->H * D, kvld = s->KVH * D, g = h / (s->H / s->KVH);
    double scale = 1.0 / sqrt((double)D), m = -INFINITY, l = 0.0, smag = 0.0;
    size_t qoff = ((size_t)b * s->T + i) * qld + (size_t)h * D, kv0 = (size_t)b * s->T * kvld + (size_t)g * D;
    const float *qi = d->host[A_Q] + qoff, *doi = d->host[A_DOUT] + qoff;
    const float *k = d->host[A_K] + kv0, *v = d->host[A_V] + kv0;
    for (int j = 0; j <= i; j++) {
        p[j] = scale * dot_d(qi, k + (size_t)j * kvld, D);
        m = fmax(m, p[j]);
        smag = fmax(smag, fabs(p[j]));
    }
    for (int j = 0; j <= i; j++) l += exp(p[j] - m);
    double lse = m + log(l);
    int64_t wrong = wrong_if(d->host[A_LSE][((size_t)b * s->H + h) * s->T + i], lse,
                             16.0 * U_F32 * (sqrt((double)s->T) + s->D * smag + fabs(lse) + 4.0 * (s->T / 128 + 2)));
    double di = 0.0, di_mag = 0.0;
    for (int e = 0; e < D; e++) {
        double acc = 0.0, mag = 0.0;
        for (int j = 0; j <= i; j++) {
            double pv = exp(p[j] - lse) * v[(size_t)j * kvld + e];
            acc += pv, mag += fabs(pv);
        }
        di += acc * doi[e], di_mag += fabs(acc * doi[e]);
        wrong += wrong_if(d->host[A_OUT][qoff + e], acc, out_tol(d, i + 1, mag));
    }
    /* p becomes dS / scale and s_mag the magnitude its dot products carry
     * (dP - Di cancels: its rounding is that of the terms, not the result) */
    double *s_mag = p + s->T;
    for (int j = 0; j <= i; j++) {
        double pj = exp(p[j] - lse);
        const float *vj = v + (size_t)j * kvld;
        p[j] = pj * (dot_d(doi, vj, D) - di);
        s_mag[j] = pj * (abs_dot(doi, vj, D) + di_mag);
    }
    for (int e = 0; e < D; e++) {
        double acc = 0.0, mag = 0.0;
        for (int j = 0; j <= i; j++) {
            double kje = k[(size_t)j * kvld + e];
            acc += scale * p[j] * kje, mag += scale * s_mag[j] * fabs(kje);
        }
        wrong += wrong_if(d->host[A_DQ][qoff + e], acc, out_tol(d, i + 1, mag));
    }
    return wrong;
}

/* Kv row j of kv head g, batch b: dk, dv summed over the query heads that
 * read it and the rows i >= j, with P from the device's lse and
 * rowsum(dO * O) from its out (the forward is checked on its own). */
static int64_t check_kv_row(const attn_data *d, int b, int g, int j, double *acc) {
    const attn_shape *s = &d->s;
    int D = s->D, qld = s->H * D, kvld = s->KVH * D, rep = s->H / s->KVH;
    double scale = 1.0 / sqrt((double)D);
    size_t kvoff = ((size_t)b * s->T + j) * kvld + (size_t)g * D;
    const float *kj = d->host[A_K] + kvoff, *vj = d->host[A_V] + kvoff;
    double *dk = acc, *dv = acc + D, *dkm = acc + 2 * D, *dvm = acc + 3 * D;
    memset(acc, 0, 4 * (size_t)D * sizeof *acc);
    for (int h = g * rep; h < (g + 1) * rep; h++) {
        for (int i = j; i < s->T; i++) {
            size_t qoff = ((size_t)b * s->T + i) * qld + (size_t)h * D;
            const float *qi = d->host[A_Q] + qoff, *doi = d->host[A_DOUT] + qoff;
            double lse = d->host[A_LSE][((size_t)b * s->H + h) * s->T + i];
            double p = exp(scale * dot_d(qi, kj, D) - lse);
            const float *oi = d->host[A_OUT] + qoff;
            double ds = p * (dot_d(doi, vj, D) - dot_d(doi, oi, D)) * scale;
            double ds_mag = p * (abs_dot(doi, vj, D) + abs_dot(doi, oi, D)) * scale; /* as in dq */
            for (int e = 0; e < D; e++) {
                dk[e] += ds * qi[e], dkm[e] += ds_mag * fabs(qi[e]);
                dv[e] += p * doi[e], dvm[e] += fabs(p * doi[e]);
            }
        }
    }
    int64_t wrong = 0;
    double n = (double)rep * (s->T - j);
    for (int e = 0; e < D; e++) {
        wrong += wrong_if(d->host[A_DK][kvoff + e], dk[e], out_tol(d, n, dkm[e]));
        wrong += wrong_if(d->host[A_DV][kvoff + e], dv[e], out_tol(d, n, dvm[e]));
    }
    return wrong;
}

/* Downloads the outputs and checks ATTN_SAMPLES query rows and kv rows (the
 * first and last rows among them); wrong elements into *wrong. */
static zb_status check(zb_bench_ctx *ctx, attn_data *d, int64_t *wrong) {
    for (int a = A_OUT; a < A_COUNT; a++) ZB_TRY(download(ctx, d, a));
    const attn_shape *s = &d->s;
    double *scratch = (double *)malloc((2 * (size_t)s->T + 4 * (size_t)s->D) * sizeof *scratch);
    if (!scratch) return ZB_FAIL(ZB_ERR_NOMEM, "attention check: out of memory");
    uint64_t seed = 7 + (uint64_t)ctx->topo.rank;
    *wrong = 0;
    for (int n = 0; n < ATTN_SAMPLES; n++) {
        int b = (int)(zb_splitmix_next(&seed) % (uint64_t)s->B);
        int i = n == 0 ? 0 : n == 1 ? s->T - 1 : (int)(zb_splitmix_next(&seed) % (uint64_t)s->T);
        int h = (int)(zb_splitmix_next(&seed) % (uint64_t)s->H), g = (int)(zb_splitmix_next(&seed) % (uint64_t)s->KVH);
        *wrong += check_query_row(d, b, h, i, scratch);
        *wrong += check_kv_row(d, b, g, i, scratch + 2 * (size_t)s->T);
    }
    free(scratch);
    return ZB_OK;
}

/* ---- rows ----------------------------------------------------------------- */

static zb_status add_row(zb_bench_ctx *ctx, zb_rows *rows, const attn_shape *s, const char *impl, bool bwd,
                         zb_dtype dtype, double med, double best, int64_t wrong) {
    double full = bwd ? zb_attention_bwd_flops(s->B, s->T, s->H, s->D) : zb_attention_fwd_flops(s->B, s->T, s->H, s->D);
    /* what the kernel performs: the key pairs j <= i, the backward five
     * tile products to the forward's two; "of peak" is taken over it */
    double causal = zb_attention_fwd_causal_flops(s->B, s->T, s->H, s->D) * (bwd ? 2.5 : 1.0);
    double pct = ctx->peak_flops > 0 ? 100.0 * causal / med / ctx->peak_flops : NAN;
    zb_field f[] = {
        {.key = "bench", .kind = ZB_FIELD_TEXT, .s = "attention"},
        {.key = "pass", .tables = 1, .header = "pass", .left = true, .kind = ZB_FIELD_TEXT, .s = bwd ? "bwd" : "fwd"},
        {.key = "impl", .kind = ZB_FIELD_TEXT, .s = impl},
        {.key = "batch", .parent = "shape", .tables = 1, .header = "B", .kind = ZB_FIELD_INT, .i = s->B},
        {.key = "seq", .parent = "shape", .tables = 1, .header = "T", .kind = ZB_FIELD_INT, .i = s->T},
        {.key = "heads", .parent = "shape", .tables = 1, .header = "H", .kind = ZB_FIELD_INT, .i = s->H},
        {.key = "kv_heads", .parent = "shape", .tables = 1, .header = "KVH", .kind = ZB_FIELD_INT, .i = s->KVH},
        {.key = "head_dim", .parent = "shape", .tables = 1, .header = "D", .kind = ZB_FIELD_INT, .i = s->D},
        {.key = "dtype", .kind = ZB_FIELD_TEXT, .s = zb_dtype_name(dtype)},
        {.key = "ranks", .kind = ZB_FIELD_INT, .i = ctx->world_ranks},
        {.key = "time_us", .metric = true, .tables = 1, .header = "median", .unit = "us", .kind = ZB_FIELD_REAL,
         .decimals = 1, .d = med * 1e6},
        {.key = "best_time_us", .metric = true, .tables = 1, .header = "best", .unit = "us", .kind = ZB_FIELD_REAL,
         .decimals = 1, .d = best * 1e6},
        {.tables = 1, .header = "throughput", .unit = "GFLOP/s", .kind = ZB_FIELD_REAL, .decimals = 2,
         .d = full / med / 1e9},
        {.key = "tflops", .metric = true, .kind = ZB_FIELD_REAL, .d = full / med / 1e12},
        {.key = "tflops_causal", .metric = true, .kind = ZB_FIELD_REAL, .d = causal / med / 1e12},
        {.key = "pct_peak", .metric = true, .tables = 1, .header = "of peak", .unit = "%", .kind = ZB_FIELD_REAL,
         .decimals = 1, .d = pct},
        {.key = "wrong", .metric = true, .tables = 1, .header = "#wrong", .na = "N/A", .kind = ZB_FIELD_INT,
         .null = wrong < 0, .i = wrong},
    };
    return zb_rows_add(rows, f, (int)(sizeof f / sizeof f[0]), 1);
}

/* Times the forward and the backward on one set of buffers, then checks. */
static zb_status measure(zb_bench_ctx *ctx, const zb_kernels *K, attn_data *d, double med[2], double best[2],
                         int64_t *wrong) {
    ZB_TRY(alloc_data(ctx, d));
    for (int bwd = 0; bwd < 2; bwd++) {
        double m = 0.0, b = 0.0;
        ZB_TRY(time_calls(ctx, K, d, bwd, &m, &b));
        ZB_TRY(zb_bench_reduce_time(ctx, m, &med[bwd]));
        ZB_TRY(zb_bench_reduce_time(ctx, b, &best[bwd]));
    }
    *wrong = -1;
    if (!ctx->cfg->check || !zb_dev_holds_data(ctx->dev)) return ZB_OK;
    int64_t local = 0;
    ZB_TRY(check(ctx, d, &local));
    return zb_bench_sum(ctx, local, wrong);
}

static zb_status attention_run(zb_bench_ctx *ctx) {
    attn_data d;
    memset(&d, 0, sizeof d);
    ZB_TRY(shape_of(ctx->cfg, &d.s));
    d.dtype = ctx->cfg->dtype;
    const zb_kernels *K = zb_kernels_for(ctx->dev);
    if (!K) {
        return ZB_FAIL(ZB_ERR_UNSUPPORTED, "attention: the %s device has no kernel table", ctx->backends.device->name);
    }
    zb_kcall kc = {ctx->compute, "attention", -1, d.dtype, 0.0};
    const char *impl = K->attention_impl(&kc);
    double med[2] = {0, 0}, best[2] = {0, 0};
    int64_t wrong = -1;
    zb_status st = measure(ctx, K, &d, med, best, &wrong);
    free_data(ctx, &d);
    zb_rows *rows = st == ZB_OK ? zb_rows_new(ctx->report, 1) : NULL;
    if (st == ZB_OK && !rows) st = ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the table");
    for (int bwd = 0; bwd < 2 && st == ZB_OK; bwd++) {
        st = add_row(ctx, rows, &d.s, impl, bwd, d.dtype, med[bwd], best[bwd], wrong);
    }
    if (wrong > 0) ctx->wrong += wrong;
    if (st == ZB_OK && ctx->out) {
        fprintf(ctx->out, "# attention: causal, %s, %s storage (fp32 math and lse); peak %.2f GFLOP/s per rank (%s)\n",
                impl, zb_dtype_name(d.dtype), ctx->peak_flops / 1e9, ctx->peak_source);
        zb_rows_print(rows, 0, ctx->out, "#");
        fprintf(ctx->out, "# FLOPs: throughput over the full 4 B H T^2 D forward, twice that backward (MFU's count); "
                          "of peak over what a causal kernel performs, 2 B H T (T+1) D forward, 2.5x that backward "
                          "(the JSON's tflops_causal)\n");
        if (wrong < 0) {
            fprintf(ctx->out, "# Wrong sampled elements : not checked (%s)\n",
                    zb_dev_holds_data(ctx->dev) ? "-c 0" : "SIMULATED: the device holds no data");
        }
        else {
            fprintf(ctx->out, "# Wrong sampled elements : %lld %s\n", (long long)wrong, wrong ? "FAILED" : "OK");
        }
    }
    if (rows) zb_rows_free(rows);
    return st;
}

/* ---- options and entry ------------------------------------------------------ */

static const zb_opt *const attention_opts[] = {&zb_opt_model,    &zb_opt_batch,    &zb_opt_seq, &zb_opt_heads,
                                               &zb_opt_kv_heads, &zb_opt_head_dim, NULL};
static const zb_opt_group attention_group = {attention_opts, NULL};
static const zb_opt_group *const attention_groups[] = {&zb_opts_sweep_run, &attention_group, NULL};

/* -d float or bf16 (the storage; on cuda bf16 is cuDNN's SDPA where it
 * loads), no direct baseline. */
static zb_status attention_check(zb_config *cfg, const zb_opt_seen *seen) {
    if (cfg->dtype != ZB_DTYPE_F32 && cfg->dtype != ZB_DTYPE_BF16) {
        return ZB_FAIL(ZB_ERR_INVALID, "attention -d/--datatype %s: float or bf16", zb_dtype_name(cfg->dtype));
    }
    if (cfg->compare_direct) {
        return ZB_FAIL(ZB_ERR_INVALID, "attention --compare-direct: attention has no direct library baseline");
    }
    return ZB_OK;
}

/* The peak of the math the storage selects: bf16 tensor cores for bf16. */
static zb_dtype attention_peak_dtype(const zb_config *cfg, zb_dtype device_default) {
    (void)device_default;
    return cfg->dtype == ZB_DTYPE_BF16 ? ZB_DTYPE_BF16 : ZB_DTYPE_F32;
}

/* The nine arrays on the device and their host copies. */
static zb_status attention_memory_need(const zb_bench_ctx *ctx, zb_mem_need *out) {
    attn_shape s;
    ZB_TRY(shape_of(ctx->cfg, &s));
    size_t n[A_COUNT];
    sizes_of(&s, n);
    size_t es = zb_dtype_size(ctx->cfg->dtype == ZB_DTYPE_BF16 ? ZB_DTYPE_BF16 : ZB_DTYPE_F32);
    double dev = 0.0, host = 0.0;
    for (int a = 0; a < A_COUNT; a++) {
        dev += (double)n[a] * (a == A_LSE ? sizeof(float) : es);
        host += (double)n[a] * sizeof(float);
    }
    out->device_bytes = dev;
    out->host_bytes = host + (double)n[A_Q] * sizeof(float); /* and the staging array */
    snprintf(out->flag, sizeof out->flag, "--batch/--seq/--heads/--head-dim");
    snprintf(out->value, sizeof out->value, "B%d T%d H%d KVH%d D%d", s.B, s.T, s.H, s.KVH, s.D);
    snprintf(out->device_what, sizeof out->device_what, "q, k, v, out, dout, dq, dk, dv in -d, lse in float");
    snprintf(out->host_what, sizeof out->host_what, "their float host copies and a staging array");
    return ZB_OK;
}

const zb_bench zb_bench_attention = {
    .name = "attention",
    .groups = attention_groups,
    .check = attention_check,
    .flags = ZB_BENCH_SWEEP_HEADER,
    .peak_dtype = attention_peak_dtype,
    .run = attention_run,
    .memory_need = attention_memory_need,
};
