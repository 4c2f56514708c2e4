/* zerobench kernels: the step's element-wise kernels (kernels.h: the
 * embedding, RMSNorm, RoPE, SwiGLU, the residual add and accumulation, the
 * cross-entropy, AdamW, fill and cast), each at the shape the step calls it
 * with, on the compute stream: N = batch x seq tokens of dim C (RoPE on the
 * query heads), SwiGLU over N x ffn_dim, the cross-entropy over N x vocab,
 * AdamW, fill and cast over the largest unit's shard on this many ranks.
 * The shape is the model profile's (--model, "tiny" when not given) with
 * the shape flags overriding it.
 *
 * Each kernel runs -w untimed calls, then -n calls back to back, an event
 * after each (iter_samples.h); a row gives the time per call (reduced
 * across ranks as -a says), the bytes it moves as the sim counts them
 * (kernel_bytes.h) and the bandwidth that makes; when the run is traced
 * (--trace) also the median of the calls' own records, the time on the
 * device without the gaps between calls (op_records.h). zerobench calibrate fits
 * each kernel's efficiency from it (docs/design.md §6): on a GPU these
 * kernels move their bytes at close to the memory's bandwidth, on the cpu
 * backend several are bound by their arithmetic (exp, sin and cos, the
 * softmax), which one memory bandwidth cannot price.
 *
 * Inputs are uniform in [0, 1) (AdamW's second moment must not be
 * negative), tokens and targets spread over the vocabulary. The kernels'
 * results are checked against their CPU references by the kernel tests
 * (tests/unit/test_kernel_*.c); this benchmark only times them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "dtype_access.h"
#include "iter_samples.h"
#include "kernel_bytes.h"
#include "kernels.h"
#include "model.h"
#include "model_opts.h"
#include "op_records.h"
#include "rng.h"
#include "row.h"

typedef struct kern_shape {
    int B, T, N, C, H, D, F, V;
    size_t shard; /* elements of the largest unit's shard on this many ranks */
} kern_shape;

/* A buffer's element type: the storage dtype (-d), fp32, int32 tokens, bf16. */
enum { KB_ST, KB_F32, KB_TOK, KB_BF16 };

typedef struct kern_buf {
    size_t n;
    int type;
} kern_buf;

enum {
    K_EMB_FWD, K_EMB_BWD, K_NORM_FWD, K_NORM_BWD, K_ROPE_FWD, K_ROPE_BWD, K_SWIGLU_FWD, K_SWIGLU_BWD, K_RESIDUAL,
    K_ACCUMULATE, K_CE_FWD, K_CE_BWD, K_ADAMW, K_FILL, K_CAST, K_COUNT
};

#define KERN_MAX_BUFS 5

typedef struct kern_case {
    const char *name;
    int n_bufs;
    kern_buf bufs[KERN_MAX_BUFS];
    double bytes; /* moved per call, kernel_bytes.h */
    char shape[64];
} kern_case;

static zb_status shape_of(const zb_bench_ctx *ctx, kern_shape *out) {
    const zb_config *cfg = ctx->cfg;
    zb_model_profile mp;
    ZB_TRY(zb_model_profile_load(cfg->model[0] ? cfg->model : ZB_MODEL_DEFAULT, &mp));
    zb_model_cfg m;
    zb_model_cfg_from_profile(&mp, 1, &m);
    zb_model_apply_shape(cfg, &m);
    ZB_TRY(zb_model_cfg_validate(&m));
    double most = (double)m.batch * m.seq * (m.vocab > m.ffn_dim ? m.vocab : m.ffn_dim);
    if (most > 2147483647.0 || (double)m.batch * m.seq * m.heads * m.head_dim > 2147483647.0) {
        return ZB_FAIL(ZB_ERR_INVALID, "kernels: batch x seq x max(vocab, ffn-dim, heads x head-dim) = %.0f "
                       "elements; at most 2^31 - 1", most);
    }
    size_t unit = 0;
    for (int u = 0; u < zb_model_n_units(&m); u++) {
        size_t n = zb_model_unit_numel(&m, u);
        unit = n > unit ? n : unit;
    }
    size_t ranks = ctx->world_ranks > 0 ? (size_t)ctx->world_ranks : 1;
    *out = (kern_shape){m.batch, m.seq, m.batch * m.seq, m.dim, m.heads, m.head_dim, m.ffn_dim, m.vocab,
                        (unit + ranks - 1) / ranks};
    return ZB_OK;
}

/* The kernels, their buffers (in the order call() passes them) and bytes. */
static void cases_of(const kern_shape *s, zb_dtype st, kern_case c[K_COUNT]) {
    size_t nc = (size_t)s->N * s->C, nf = (size_t)s->N * s->F, nv = (size_t)s->N * s->V;
    size_t nq = (size_t)s->B * s->T * s->H * s->D, V = (size_t)s->V, C = (size_t)s->C, N = (size_t)s->N;
    const kern_case all[K_COUNT] = {
        {"embedding_fwd", 3, {{nc, KB_ST}, {N, KB_TOK}, {V * C, KB_ST}}, zb_kbytes_embedding_fwd(st, s->N, s->C)},
        {"embedding_bwd", 3, {{V * C, KB_F32}, {N, KB_TOK}, {nc, KB_ST}}, zb_kbytes_embedding_bwd(st, s->N, s->C)},
        {"rmsnorm_fwd", 4, {{nc, KB_ST}, {N, KB_F32}, {nc, KB_ST}, {C, KB_ST}}, zb_kbytes_rmsnorm_fwd(st, s->N, s->C)},
        {"rmsnorm_bwd", 5, {{nc, KB_ST}, {C, KB_F32}, {nc, KB_ST}, {nc, KB_ST}, {C, KB_ST}},
         zb_kbytes_rmsnorm_bwd(st, s->N, s->C)},
        {"rope_fwd", 2, {{nq, KB_ST}, {nq, KB_ST}}, zb_kbytes_rope(st, s->B, s->T, s->H, s->D)},
        {"rope_bwd", 2, {{nq, KB_ST}, {nq, KB_ST}}, zb_kbytes_rope(st, s->B, s->T, s->H, s->D)},
        {"swiglu_fwd", 3, {{nf, KB_ST}, {nf, KB_ST}, {nf, KB_ST}}, zb_kbytes_swiglu_fwd(st, nf)},
        {"swiglu_bwd", 5, {{nf, KB_ST}, {nf, KB_ST}, {nf, KB_ST}, {nf, KB_ST}, {nf, KB_ST}},
         zb_kbytes_swiglu_bwd(st, nf)},
        {"residual_fwd", 3, {{nc, KB_ST}, {nc, KB_ST}, {nc, KB_ST}}, zb_kbytes_residual_fwd(st, nc)},
        {"accumulate", 2, {{nc, KB_ST}, {nc, KB_ST}}, zb_kbytes_accumulate(st, nc)},
        {"cross_entropy_fwd", 4, {{1, KB_F32}, {N, KB_F32}, {nv, KB_ST}, {N, KB_TOK}},
         zb_kbytes_cross_entropy_fwd(st, s->N, s->V)},
        {"cross_entropy_bwd", 4, {{nv, KB_ST}, {nv, KB_ST}, {N, KB_F32}, {N, KB_TOK}},
         zb_kbytes_cross_entropy_bwd(st, s->N, s->V)},
        {"adamw", 4, {{s->shard, KB_F32}, {s->shard, KB_F32}, {s->shard, KB_F32}, {s->shard, KB_F32}},
         zb_kbytes_adamw(s->shard)},
        {"fill", 1, {{s->shard, KB_F32}}, zb_kbytes_fill(s->shard)},
        /* the step's parameter cast: the fp32 master shard to the bf16 it gathers */
        {"cast", 2, {{s->shard, KB_BF16}, {s->shard, KB_F32}}, zb_kbytes_cast(ZB_DTYPE_BF16, ZB_DTYPE_F32, s->shard)},
    };
    memcpy(c, all, sizeof all);
    snprintf(c[K_EMB_FWD].shape, sizeof c[0].shape, "N%d C%d V%d", s->N, s->C, s->V);
    snprintf(c[K_EMB_BWD].shape, sizeof c[0].shape, "N%d C%d V%d", s->N, s->C, s->V);
    snprintf(c[K_NORM_FWD].shape, sizeof c[0].shape, "N%d C%d", s->N, s->C);
    snprintf(c[K_NORM_BWD].shape, sizeof c[0].shape, "N%d C%d", s->N, s->C);
    snprintf(c[K_ROPE_FWD].shape, sizeof c[0].shape, "B%d T%d H%d D%d", s->B, s->T, s->H, s->D);
    snprintf(c[K_ROPE_BWD].shape, sizeof c[0].shape, "B%d T%d H%d D%d", s->B, s->T, s->H, s->D);
    for (int k = K_SWIGLU_FWD; k <= K_SWIGLU_BWD; k++) snprintf(c[k].shape, sizeof c[0].shape, "n%zu", nf);
    for (int k = K_RESIDUAL; k <= K_ACCUMULATE; k++) snprintf(c[k].shape, sizeof c[0].shape, "n%zu", nc);
    for (int k = K_CE_FWD; k <= K_CE_BWD; k++) snprintf(c[k].shape, sizeof c[0].shape, "N%d V%d", s->N, s->V);
    for (int k = K_ADAMW; k <= K_CAST; k++) snprintf(c[k].shape, sizeof c[0].shape, "n%zu", s->shard);
}

static zb_dtype type_of(int type, zb_dtype st) {
    if (type == KB_ST) return st;
    if (type == KB_F32) return ZB_DTYPE_F32;
    if (type == KB_TOK) return ZB_DTYPE_F32; /* int32: as many bytes, written as integers */
    return ZB_DTYPE_BF16;
}

static zb_status call(const zb_kernels *K, const zb_kcall *kc, int k, void *const *b, const kern_shape *s) {
    switch (k) {
    case K_EMB_FWD: return K->embedding_fwd(kc, b[0], b[1], b[2], s->N, s->C, s->V);
    case K_EMB_BWD: return K->embedding_bwd(kc, b[0], b[1], b[2], s->N, s->C, s->V);
    case K_NORM_FWD: return K->rmsnorm_fwd(kc, b[0], b[1], b[2], b[3], s->N, s->C, 1e-5f);
    case K_NORM_BWD: return K->rmsnorm_bwd(kc, b[0], b[1], b[2], b[3], b[4], b[1], s->N, s->C);
    case K_ROPE_FWD: return K->rope_fwd(kc, b[0], b[1], s->B, s->T, s->H, s->D, 10000.0f);
    case K_ROPE_BWD: return K->rope_bwd(kc, b[0], b[1], s->B, s->T, s->H, s->D, 10000.0f);
    case K_SWIGLU_FWD: return K->swiglu_fwd(kc, b[0], b[1], b[2], (size_t)s->N * s->F);
    case K_SWIGLU_BWD: return K->swiglu_bwd(kc, b[0], b[1], b[2], b[3], b[4], (size_t)s->N * s->F);
    case K_RESIDUAL: return K->residual_fwd(kc, b[0], b[1], b[2], (size_t)s->N * s->C);
    case K_ACCUMULATE: return K->accumulate(kc, b[0], b[1], (size_t)s->N * s->C);
    case K_CE_FWD: return K->cross_entropy_fwd(kc, b[0], b[1], b[2], b[3], s->N, s->V);
    case K_CE_BWD: return K->cross_entropy_bwd(kc, b[0], b[1], b[2], b[3], s->N, s->V, 1.0f);
    case K_ADAMW: return K->adamw(kc, b[0], b[1], b[2], b[3], s->shard, 1, 1e-4f, 0.9f, 0.95f, 1e-8f, 0.1f, true);
    case K_FILL: return K->fill(kc, b[0], 0.0f, s->shard);
    default: return K->cast(kc, b[0], ZB_DTYPE_BF16, b[1], ZB_DTYPE_F32, s->shard);
    }
}

/* A device buffer of b's elements, filled: uniform [0, 1), or tokens in [0, V). */
static zb_status make_buf(zb_bench_ctx *ctx, const kern_buf *b, zb_dtype st, int V, uint64_t seed, void **out) {
    zb_dtype t = type_of(b->type, st);
    size_t bytes = b->n * zb_dtype_size(t);
    ZB_TRY(zb_dev_alloc(ctx->dev, bytes + 1, ZB_MEM_BENCH_BUFFER, out));
    if (!zb_dev_holds_data(ctx->dev)) return ZB_OK;
    void *host = malloc(bytes + 1);
    if (!host) return ZB_FAIL(ZB_ERR_NOMEM, "kernels: out of host memory for %zu bytes", bytes);
    for (size_t i = 0; i < b->n; i++) {
        uint64_t r = zb_splitmix_next(&seed);
        if (b->type == KB_TOK) ((int32_t *)host)[i] = (int32_t)(r % (uint64_t)V);
        else zb_dtype_store(host, i, t, (float)(0.5 + 0.5 * zb_uniform_pm1(r)));
    }
    zb_op_info info = {ZB_OP_COPY, "upload", -1, 0, 0};
    zb_status s = ctx->dev->ops->memcpy_async(ctx->compute, *out, host, bytes, &info);
    if (s == ZB_OK) s = ctx->dev->ops->stream_sync(ctx->compute);
    free(host);
    return s;
}

/* This rank's seconds per call of kernel k, and its per-call samples. */
static zb_status time_kernel(zb_bench_ctx *ctx, const kern_shape *s, const kern_case *kc_, int k,
                             zb_iter_marks *marks, double *seconds, zb_iter_samples *samples, size_t *mark) {
    const zb_config *cfg = ctx->cfg;
    const zb_kernels *K = zb_kernels_for(ctx->dev);
    if (!K) return ZB_FAIL(ZB_ERR_UNSUPPORTED, "kernels: the %s device has no kernel table", ctx->dev->ops->name);
    void *b[KERN_MAX_BUFS] = {NULL};
    zb_status st = ZB_OK;
    for (int i = 0; i < kc_->n_bufs && st == ZB_OK; i++) {
        st = make_buf(ctx, &kc_->bufs[i], cfg->dtype, s->V, 1000 * (uint64_t)(ctx->topo.rank + 1) + 10 * k + i, &b[i]);
    }
    zb_kcall kc = {ctx->compute, kc_->name, -1, cfg->dtype, 0.0};
    for (int64_t i = 0; i < cfg->warmup_iters && st == ZB_OK; i++) st = call(K, &kc, k, b, s);
    if (st == ZB_OK) st = ctx->dev->ops->stream_sync(ctx->compute);
    *mark = zb_op_records_mark(ctx);
    int64_t t0 = zb_dev_now_ns(ctx->dev);
    if (st == ZB_OK) st = zb_iter_marks_begin(marks, ctx->dev, ctx->compute, cfg->iters);
    for (int64_t i = 0; i < cfg->iters && st == ZB_OK; i++) {
        st = call(K, &kc, k, b, s);
        if (st == ZB_OK) st = zb_iter_marks_after(marks, i);
    }
    if (st == ZB_OK) st = ctx->dev->ops->stream_sync(ctx->compute);
    *seconds = (double)(zb_dev_now_ns(ctx->dev) - t0) / 1e9 / (double)cfg->iters;
    if (st == ZB_OK) st = zb_iter_marks_read(marks, samples);
    for (int i = 0; i < kc_->n_bufs; i++) {
        if (b[i]) zb_dev_free(ctx->dev, b[i]);
    }
    return st;
}

static zb_status add_row(zb_bench_ctx *ctx, zb_rows *t, const kern_case *c, double sec, double dev_s,
                         const zb_iter_samples *samples) {
    json_t *sj = samples->n ? zb_iter_samples_json(samples) : NULL;
    if (samples->n && !sj) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the samples");
    zb_field f[] = {
        {.key = "bench", .kind = ZB_FIELD_TEXT, .s = "kernels"},
        {.key = "op", .tables = 1, .header = "kernel", .kind = ZB_FIELD_TEXT, .s = c->name},
        {.key = "shape", .tables = 1, .header = "shape", .kind = ZB_FIELD_TEXT, .s = c->shape},
        {.key = "dtype", .tables = 1, .header = "type", .kind = ZB_FIELD_TEXT, .s = zb_dtype_name(ctx->cfg->dtype)},
        {.key = "ranks", .kind = ZB_FIELD_INT, .i = ctx->world_ranks},
        {.key = "nodes", .kind = ZB_FIELD_INT, .i = ctx->world_nodes},
        {.key = "bytes_moved", .metric = true, .tables = 1, .header = "moved", .unit = "B", .kind = ZB_FIELD_INT,
         .i = (int64_t)c->bytes},
        {.key = "time_us", .metric = true, .tables = 1, .header = "time", .unit = "us", .kind = ZB_FIELD_REAL,
         .decimals = 2, .d = sec * 1e6},
        {.key = "gbps", .metric = true, .tables = 1, .header = "bandwidth", .unit = "GB/s", .kind = ZB_FIELD_REAL,
         .decimals = 2, .d = c->bytes / sec / 1e9},
        {.key = "device_time_us", .metric = true, .tables = 1, .header = "on device", .unit = "us",
         .na = "N/A", .kind = ZB_FIELD_REAL, .decimals = 2, .null = isnan(dev_s), .d = dev_s * 1e6},
        {.key = sj ? "time_us" : NULL, .metric = true, .parent = "samples", .kind = ZB_FIELD_JSON, .j = sj},
    };
    int n = (int)(sizeof f / sizeof f[0]) - (sj ? 0 : 1);
    return zb_rows_add(t, f, n, 1);
}

static zb_status kernels_run(zb_bench_ctx *ctx) {
    kern_shape s;
    ZB_TRY(shape_of(ctx, &s));
    kern_case cases[K_COUNT];
    cases_of(&s, ctx->cfg->dtype, cases);
    zb_rows *t = zb_rows_new(ctx->report, 1);
    zb_iter_marks *marks = (zb_iter_marks *)calloc(1, sizeof *marks);
    zb_iter_samples *samples = (zb_iter_samples *)malloc(sizeof *samples);
    zb_status st = t && marks && samples ? ZB_OK : ZB_FAIL(ZB_ERR_NOMEM, "kernels: out of memory for the table");
    for (int k = 0; k < K_COUNT && st == ZB_OK; k++) {
        double local = 0.0, sec = 0.0, dev_s = NAN;
        size_t mark = 0;
        samples->n = 0;
        st = time_kernel(ctx, &s, &cases[k], k, marks, &local, samples, &mark);
        if (st == ZB_OK) st = zb_bench_reduce_time(ctx, local, &sec);
        if (st == ZB_OK) st = zb_iter_samples_reduce(ctx, samples);
        if (st == ZB_OK) st = zb_op_records_median(ctx, mark, cases[k].name, &dev_s);
        if (st == ZB_OK) st = add_row(ctx, t, &cases[k], sec, dev_s, samples);
    }
    if (st == ZB_OK && ctx->out) {
        fprintf(ctx->out, "# kernels: the step's element-wise kernels at its shapes; bytes moved as the sim counts "
                "them; time per call, -n calls back to back\n");
        zb_rows_print(t, 0, ctx->out, "#");
    }
    if (marks) zb_iter_marks_free(marks);
    free(marks);
    free(samples);
    if (t) zb_rows_free(t);
    return st;
}

/* ---- options and entry ------------------------------------------------------ */

static const zb_opt *const kernels_opts[] = {&zb_opt_model,    &zb_opt_batch,    &zb_opt_seq,     &zb_opt_dim,
                                             &zb_opt_heads,    &zb_opt_kv_heads, &zb_opt_head_dim, &zb_opt_ffn_dim,
                                             &zb_opt_vocab,    &zb_opt_layers,   NULL};
static const zb_opt_group kernels_group = {kernels_opts, NULL};
static const zb_opt_group *const kernels_groups[] = {&zb_opts_sweep_run, &kernels_group, NULL};

static zb_status kernels_check(zb_config *cfg, const zb_opt_seen *seen) {
    for (int i = 0; i < seen->n && cfg->check; i++) {
        if (!strcmp(seen->given[i]->name, "check")) {
            return ZB_FAIL(ZB_ERR_INVALID, "kernels -c/--check 1: accepted: 0 (this benchmark only times the kernels; "
                           "the kernel tests check their results against the CPU references)");
        }
    }
    if (cfg->dtype != ZB_DTYPE_F32 && cfg->dtype != ZB_DTYPE_BF16) {
        return ZB_FAIL(ZB_ERR_INVALID, "kernels -d/--datatype %s: accepted: float, bf16", zb_dtype_name(cfg->dtype));
    }
    if (cfg->compare_direct) {
        return ZB_FAIL(ZB_ERR_INVALID, "kernels --compare-direct: the kernels have no direct library baseline");
    }
    return ZB_OK;
}

/* The largest kernel's buffers (they are made one kernel at a time) and one host copy. */
static zb_status kernels_memory_need(const zb_bench_ctx *ctx, zb_mem_need *out) {
    kern_shape s;
    ZB_TRY(shape_of(ctx, &s));
    kern_case cases[K_COUNT];
    cases_of(&s, ctx->cfg->dtype, cases);
    double most = 0.0, biggest = 0.0;
    for (int k = 0; k < K_COUNT; k++) {
        double sum = 0.0;
        for (int i = 0; i < cases[k].n_bufs; i++) {
            double b = (double)cases[k].bufs[i].n * (double)zb_dtype_size(type_of(cases[k].bufs[i].type,
                                                                                 ctx->cfg->dtype));
            sum += b;
            biggest = b > biggest ? b : biggest;
        }
        most = sum > most ? sum : most;
    }
    out->device_bytes = most;
    out->host_bytes = biggest;
    snprintf(out->flag, sizeof out->flag, "--model and the shape flags");
    snprintf(out->value, sizeof out->value, "N%d C%d F%d V%d", s.N, s.C, s.F, s.V);
    snprintf(out->device_what, sizeof out->device_what, "the largest kernel's buffers");
    snprintf(out->host_what, sizeof out->host_what, "one upload copy of the largest buffer");
    return ZB_OK;
}

const zb_bench zb_bench_kernels = {
    .name = "kernels",
    .groups = kernels_groups,
    .check = kernels_check,
    .flags = ZB_BENCH_SWEEP_HEADER,
    .run = kernels_run,
    .memory_need = kernels_memory_need,
};
