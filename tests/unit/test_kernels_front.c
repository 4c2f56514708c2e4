/* The kernel front end (harness/device/kernels.c) over a recording backend
 * on a fake device: for every op, each bad shape, dtype, NULL pointer and
 * overflowing element count is refused with ZB_ERR_INVALID and one line
 * naming the op and the bad value, and never reaches the backend; a device
 * without a kernel table is refused; good calls (and calls with no work,
 * whose pointers may be NULL) reach the backend once, with the caller's
 * stream, label, unit and dtype and the op's FLOPs (attention: the shared
 * formula, 4*B*H*T*T*D forward and twice that backward; everything else
 * 0); and the formula agrees with the per-token count of harness/metrics. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "flops.h"
#include "kernels.h"
#include "zb_test.h"

/* ---- the recording backend -------------------------------------------- */

static int n_calls;
static const char *last_op;
static zb_kcall last_call;
static const void *last_ptr; /* the entry's first pointer argument */

static zb_status record(const zb_kcall *c, const char *op, const void *p) {
    n_calls++;
    last_op = op;
    last_call = *c;
    last_ptr = p;
    return ZB_OK;
}

static zb_status r_embedding_fwd(const zb_kcall *c, void *out, const int32_t *t, const void *w,
                                 int N, int C, int V) {
    return record(c, "embedding_fwd", out);
}
static zb_status r_embedding_bwd(const zb_kcall *c, float *dt, const int32_t *t, const void *d,
                                 int N, int C, int V) {
    return record(c, "embedding_bwd", dt);
}
static zb_status r_rmsnorm_fwd(const zb_kcall *c, void *out, float *r, const void *x,
                               const void *w, int N, int C, float eps) {
    return record(c, "rmsnorm_fwd", out);
}
static zb_status r_rmsnorm_bwd(const zb_kcall *c, void *dx, float *dw, const void *d,
                               const void *x, const void *w, const float *r, int N, int C) {
    return record(c, "rmsnorm_bwd", dx);
}
static zb_status r_rope_fwd(const zb_kcall *c, void *out, const void *x, int B, int T, int NH,
                            int D, float th) {
    return record(c, "rope_fwd", out);
}
static zb_status r_rope_bwd(const zb_kcall *c, void *dx, const void *d, int B, int T, int NH,
                            int D, float th) {
    return record(c, "rope_bwd", dx);
}
static zb_status r_attention_fwd(const zb_kcall *c, void *out, float *lse, const void *q,
                                 const void *k, const void *v, int B, int T, int H, int KVH,
                                 int D) {
    return record(c, "attention_fwd", out);
}
static zb_status r_attention_bwd(const zb_kcall *c, void *dq, void *dk, void *dv, const void *d,
                                 const void *q, const void *k, const void *v, const void *o,
                                 const float *lse, int B, int T, int H, int KVH, int D) {
    return record(c, "attention_bwd", dq);
}
static zb_status r_swiglu_fwd(const zb_kcall *c, void *h, const void *g, const void *u, size_t n) {
    return record(c, "swiglu_fwd", h);
}
static zb_status r_swiglu_bwd(const zb_kcall *c, void *dg, void *du, const void *dh,
                              const void *g, const void *u, size_t n) {
    return record(c, "swiglu_bwd", dg);
}
static zb_status r_residual_fwd(const zb_kcall *c, void *out, const void *a, const void *b,
                                size_t n) {
    return record(c, "residual_fwd", out);
}
static zb_status r_accumulate(const zb_kcall *c, void *dst, const void *src, size_t n) {
    return record(c, "accumulate", dst);
}
static zb_status r_cross_entropy_fwd(const zb_kcall *c, float *loss, float *lse,
                                     const void *lg, const int32_t *t, int N, int V) {
    return record(c, "cross_entropy_fwd", loss);
}
static zb_status r_cross_entropy_bwd(const zb_kcall *c, void *dl, const void *lg,
                                     const float *lse, const int32_t *t, int N, int V, float d) {
    return record(c, "cross_entropy_bwd", dl);
}
static zb_status r_adamw(const zb_kcall *c, float *p, const float *g, float *m, float *v,
                         size_t n, int t, float lr, float b1, float b2, float eps, float wd,
                         bool apply) {
    return record(c, "adamw", p);
}
static zb_status r_fill(const zb_kcall *c, float *dst, float value, size_t n) {
    return record(c, "fill", dst);
}
static zb_status r_cast(const zb_kcall *c, void *dst, zb_dtype dt, const void *src, zb_dtype st,
                        size_t n) {
    return record(c, "cast", dst);
}

static const zb_kernels recorder = {
    "recorder",       r_embedding_fwd, r_embedding_bwd,     r_rmsnorm_fwd,       r_rmsnorm_bwd,
    r_rope_fwd,       r_rope_bwd,      r_attention_fwd,     r_attention_bwd,     r_swiglu_fwd,
    r_swiglu_bwd,     r_residual_fwd,  r_accumulate,        r_cross_entropy_fwd, r_cross_entropy_bwd,
    r_adamw,          r_fill,          r_cast,
};
static const zb_kernels *recorder_table(void) { return &recorder; }

/* Devices: one whose backend has the recording table, one without a table. */
static zb_device_ops fake_ops, bare_ops;
static zb_device fake_dev, bare_dev;
static zb_stream fake_s, bare_s;

/* ---- helpers -------------------------------------------------------------- */

static float buf[64];
static int32_t tok[8];
#define P ((void *)buf)
#define T tok

static bool one_line(const char *msg) { return msg[0] && !strchr(msg, '\n'); }

/* A refused call: `code`, one line holding `want`, and nothing forwarded. */
#define REFUSED(expr, code, want)                                                               \
    do {                                                                                        \
        int before_ = n_calls;                                                                  \
        zb_error_clear();                                                                       \
        zb_status st_ = (expr);                                                                 \
        const char *m_ = zb_error_message();                                                    \
        ZB_CHECK_MSG(st_ == (code), "%s: status %s, want %s (%s)", #expr, zb_status_name(st_),  \
                     zb_status_name(code), m_);                                                 \
        ZB_CHECK_MSG(strstr(m_, (want)) != NULL && one_line(m_), "%s: message '%s' lacks '%s'", \
                     #expr, m_, (want));                                                        \
        ZB_CHECK_MSG(n_calls == before_, "%s reached the backend", #expr);                      \
    } while (0)
#define BAD(expr, want) REFUSED(expr, ZB_ERR_INVALID, want)

/* A forwarded call: ZB_OK, the backend's `op` called once with the call
 * as given plus `flops`, and its first pointer. */
#define FORWARDED(expr, op, c, fl, ptr)                                                      \
    do {                                                                                        \
        int before_ = n_calls;                                                                  \
        zb_status st_ = (expr);                                                                 \
        ZB_CHECK_MSG(st_ == ZB_OK, "%s: %s (%s)", #expr, zb_status_name(st_),                   \
                     zb_error_message());                                                       \
        ZB_CHECK_MSG(n_calls == before_ + 1 && last_op && !strcmp(last_op, (op)),               \
                     "%s: backend calls %d, op %s", #expr, n_calls - before_,                   \
                     last_op ? last_op : "(none)");                                             \
        ZB_CHECK_MSG(last_call.stream == (c)->stream && last_call.label == (c)->label &&        \
                         last_call.unit == (c)->unit && last_call.dtype == (c)->dtype,          \
                     "%s: the call was not passed on as given", #expr);                         \
        ZB_CHECK_MSG(last_call.flops == (fl), "%s: flops %g, want %g", #expr,                   \
                     last_call.flops, (double)(fl));                                            \
        ZB_CHECK_MSG(last_ptr == (ptr), "%s: pointer not passed on", #expr);                    \
    } while (0)

/* ---- every op -------------------------------------------------------------- */

static void test_common(const zb_kernels *k) {
    const zb_kcall none = {NULL, "x", 1, ZB_DTYPE_F32};
    BAD(k->embedding_fwd(NULL, P, T, P, 2, 4, 8), "kernels: embedding_fwd without a stream");
    BAD(k->fill(&none, buf, 0.0f, 4), "kernels: fill without a stream");
    BAD(k->cast(&none, P, ZB_DTYPE_BF16, P, ZB_DTYPE_F32, 4), "kernels: cast without a stream");
    const zb_kcall bare = {&bare_s, "x", 1, ZB_DTYPE_F32};
    REFUSED(k->accumulate(&bare, P, P, 4), ZB_ERR_UNSUPPORTED,
            "kernels: accumulate: the 'bare' device has no kernel table");
    /* A stale flops value from the caller is replaced by the op's own. */
    zb_kcall stale = {&fake_s, "stale", 2, ZB_DTYPE_F32, 123.0};
    FORWARDED(k->fill(&stale, buf, 1.0f, 4), "fill", &stale, 0.0, (const void *)buf);
}

/* Every storage op refuses an unknown dtype, naming itself and the value. */
static void test_dtype(const zb_kernels *k) {
    const zb_kcall c = {&fake_s, "bad", 3, ZB_DTYPE_COUNT};
    const zb_kcall neg = {&fake_s, "bad", 3, (zb_dtype)-1};
    const char *w = "storage dtype 2 is not float or bf16";
    BAD(k->embedding_fwd(&c, P, T, P, 2, 4, 8), "kernels: embedding_fwd: storage dtype 2");
    BAD(k->embedding_bwd(&c, buf, T, P, 2, 4, 8), "kernels: embedding_bwd: storage dtype 2");
    BAD(k->rmsnorm_fwd(&c, P, buf, P, P, 2, 4, 1e-5f), "kernels: rmsnorm_fwd: storage dtype 2");
    BAD(k->rmsnorm_bwd(&c, P, buf, P, P, P, buf, 2, 4), "kernels: rmsnorm_bwd: storage dtype 2");
    BAD(k->rope_fwd(&c, P, P, 1, 2, 2, 4, 1e4f), "kernels: rope_fwd: storage dtype 2");
    BAD(k->rope_bwd(&c, P, P, 1, 2, 2, 4, 1e4f), "kernels: rope_bwd: storage dtype 2");
    BAD(k->attention_fwd(&c, P, P, P, P, P, 1, 2, 2, 1, 4), "kernels: attention_fwd: storage dtype 2");
    BAD(k->attention_bwd(&c, P, P, P, P, P, P, P, P, P, 1, 2, 2, 1, 4),
        "kernels: attention_bwd: storage dtype 2");
    BAD(k->swiglu_fwd(&c, P, P, P, 8), "kernels: swiglu_fwd: storage dtype 2");
    BAD(k->swiglu_bwd(&c, P, P, P, P, P, 8), "kernels: swiglu_bwd: storage dtype 2");
    BAD(k->residual_fwd(&c, P, P, P, 8), "kernels: residual_fwd: storage dtype 2");
    BAD(k->accumulate(&c, P, P, 8), w);
    BAD(k->accumulate(&neg, P, P, 8), "kernels: accumulate: storage dtype -1");
    BAD(k->cross_entropy_fwd(&c, buf, buf, P, T, 2, 8), "kernels: cross_entropy_fwd: storage dtype 2");
    BAD(k->cross_entropy_bwd(&c, P, P, buf, T, 2, 8, 1.0f),
        "kernels: cross_entropy_bwd: storage dtype 2");
    /* fill, adamw and cast ignore c->dtype. */
    FORWARDED(k->fill(&c, buf, 0.5f, 8), "fill", &c, 0.0, (const void *)buf);
    FORWARDED(k->adamw(&c, buf, buf, buf, buf, 8, 1, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.0f, false),
              "adamw", &c, 0.0, (const void *)buf);
    FORWARDED(k->cast(&c, P, ZB_DTYPE_F32, P, ZB_DTYPE_BF16, 8), "cast", &c, 0.0, P);
}

static void test_embedding_rmsnorm(const zb_kernels *k) {
    const zb_kcall c = {&fake_s, "e", 0, ZB_DTYPE_F32};
    BAD(k->embedding_fwd(&c, P, T, P, -1, 4, 8), "kernels: embedding_fwd: negative N or C (-1, 4)");
    BAD(k->embedding_fwd(&c, P, T, P, 2, -4, 8), "kernels: embedding_fwd: negative N or C (2, -4)");
    BAD(k->embedding_fwd(&c, P, T, P, 2, 4, -8), "kernels: embedding_fwd: negative N or C");
    BAD(k->embedding_fwd(&c, NULL, T, P, 2, 4, 8), "kernels: embedding_fwd: out is NULL");
    BAD(k->embedding_fwd(&c, P, NULL, P, 2, 4, 8), "kernels: embedding_fwd: tokens is NULL");
    BAD(k->embedding_fwd(&c, P, T, NULL, 2, 4, 8), "kernels: embedding_fwd: table is NULL");
    BAD(k->embedding_bwd(&c, buf, T, P, -2, 4, 8), "kernels: embedding_bwd: negative N or C (-2, 4)");
    BAD(k->embedding_bwd(&c, NULL, T, P, 2, 4, 8), "kernels: embedding_bwd: dtable is NULL");
    BAD(k->embedding_bwd(&c, buf, T, NULL, 2, 4, 8), "kernels: embedding_bwd: dout is NULL");
    FORWARDED(k->embedding_fwd(&c, P, T, P, 2, 4, 8), "embedding_fwd", &c, 0.0, P);
    FORWARDED(k->embedding_bwd(&c, buf, T, P, 2, 4, 8), "embedding_bwd", &c, 0.0,
              (const void *)buf);
    FORWARDED(k->embedding_fwd(&c, NULL, NULL, NULL, 0, 4, 8), "embedding_fwd", &c, 0.0, NULL);

    BAD(k->rmsnorm_fwd(&c, P, buf, P, P, 2, 0, 1e-5f),
        "kernels: rmsnorm_fwd: rows N >= 0 and width C > 0 needed (2, 0)");
    BAD(k->rmsnorm_fwd(&c, P, buf, P, P, -1, 4, 1e-5f), "kernels: rmsnorm_fwd: rows N >= 0");
    BAD(k->rmsnorm_fwd(&c, P, NULL, P, P, 2, 4, 1e-5f), "kernels: rmsnorm_fwd: inv_rms is NULL");
    BAD(k->rmsnorm_fwd(&c, P, buf, P, NULL, 2, 4, 1e-5f), "kernels: rmsnorm_fwd: weight is NULL");
    BAD(k->rmsnorm_bwd(&c, P, buf, P, P, P, buf, 2, -3),
        "kernels: rmsnorm_bwd: rows N >= 0 and width C > 0 needed (2, -3)");
    BAD(k->rmsnorm_bwd(&c, P, NULL, P, P, P, buf, 2, 4), "kernels: rmsnorm_bwd: dweight is NULL");
    BAD(k->rmsnorm_bwd(&c, P, buf, P, P, P, NULL, 2, 4), "kernels: rmsnorm_bwd: inv_rms is NULL");
    FORWARDED(k->rmsnorm_fwd(&c, P, buf, P, P, 2, 4, 1e-5f), "rmsnorm_fwd", &c, 0.0, P);
    FORWARDED(k->rmsnorm_bwd(&c, P, buf, P, P, P, buf, 2, 4), "rmsnorm_bwd", &c, 0.0, P);
}

static void test_rope_attention(const zb_kernels *k) {
    const zb_kcall c = {&fake_s, "layer1.attn", 1, ZB_DTYPE_BF16};
    BAD(k->rope_fwd(&c, P, P, 1, 2, 2, 3, 1e4f),
        "kernels: rope_fwd: head dim 3 must be a positive even number");
    BAD(k->rope_bwd(&c, P, P, 1, 2, 2, 0, 1e4f),
        "kernels: rope_bwd: head dim 0 must be a positive even number");
    BAD(k->rope_fwd(&c, P, P, -1, 2, 2, 4, 1e4f),
        "kernels: rope_fwd: negative batch or sequence (-1, 2)");
    BAD(k->rope_bwd(&c, P, P, 1, 2, -2, 4, 1e4f), "kernels: rope_bwd: negative batch or sequence");
    BAD(k->rope_fwd(&c, P, P, INT_MAX, INT_MAX, INT_MAX, 4, 1e4f),
        "kernels: rope_fwd: x of 2147483647 x 2147483647 x 2147483647 x 4 elements overflows");
    BAD(k->rope_fwd(&c, NULL, P, 1, 2, 2, 4, 1e4f), "kernels: rope_fwd: out is NULL");
    BAD(k->rope_bwd(&c, P, NULL, 1, 2, 2, 4, 1e4f), "kernels: rope_bwd: dout is NULL");
    FORWARDED(k->rope_fwd(&c, P, P, 1, 2, 2, 4, 1e4f), "rope_fwd", &c, 0.0, P);
    FORWARDED(k->rope_bwd(&c, P, P, 1, 2, 2, 4, 1e4f), "rope_bwd", &c, 0.0, P);

    BAD(k->attention_fwd(&c, P, P, P, P, P, 1, 2, 4, 3, 8),
        "kernels: attention_fwd: query heads 4 must be a positive multiple of kv heads 3 "
        "(head dim 8 > 0)");
    BAD(k->attention_fwd(&c, P, P, P, P, P, 1, 2, 0, 1, 8), "query heads 0 must be");
    BAD(k->attention_bwd(&c, P, P, P, P, P, P, P, P, P, 1, 2, 4, 0, 8),
        "kernels: attention_bwd: query heads 4 must be a positive multiple of kv heads 0");
    BAD(k->attention_bwd(&c, P, P, P, P, P, P, P, P, P, 1, 2, 4, 2, 0), "(head dim 0 > 0)");
    BAD(k->attention_fwd(&c, P, P, P, P, P, 70000, 2, 4, 2, 8),
        "kernels: attention_fwd: batch in [0, 65535] and sequence >= 0 needed (70000, 2)");
    BAD(k->attention_fwd(&c, P, P, P, P, P, 1, -2, 4, 2, 8),
        "kernels: attention_fwd: batch in [0, 65535] and sequence >= 0 needed (1, -2)");
    BAD(k->attention_bwd(&c, P, P, P, P, P, P, P, P, P, 1, 2, 70000, 2, 8),
        "kernels: attention_bwd: batch in [0, 65535]");
    /* nothing of T x T is checked (none exists): a long sequence is fine */
    FORWARDED(k->attention_fwd(&c, P, P, P, P, P, 1, 1 << 20, 2, 1, 8), "attention_fwd", &c,
              zb_attention_fwd_flops(1, 1 << 20, 2, 8), P);
    BAD(k->attention_fwd(&c, P, NULL, P, P, P, 1, 2, 4, 2, 8), "kernels: attention_fwd: lse is NULL");
    BAD(k->attention_fwd(&c, P, P, P, P, NULL, 1, 2, 4, 2, 8), "kernels: attention_fwd: v is NULL");
    BAD(k->attention_bwd(&c, P, NULL, P, P, P, P, P, P, P, 1, 2, 4, 2, 8),
        "kernels: attention_bwd: dk is NULL");
    BAD(k->attention_bwd(&c, P, P, P, P, P, P, P, NULL, P, 1, 2, 4, 2, 8),
        "kernels: attention_bwd: out is NULL");
    BAD(k->attention_bwd(&c, P, P, P, P, P, P, P, P, NULL, 1, 2, 4, 2, 8),
        "kernels: attention_bwd: lse is NULL");
    /* 4*B*H*T*T*D forward, twice that backward. */
    FORWARDED(k->attention_fwd(&c, P, P, P, P, P, 3, 5, 4, 2, 8), "attention_fwd", &c,
              4.0 * 3 * 4 * 5 * 5 * 8, P);
    FORWARDED(k->attention_bwd(&c, P, P, P, P, P, P, P, P, P, 3, 5, 4, 2, 8), "attention_bwd", &c,
              8.0 * 3 * 4 * 5 * 5 * 8, P);
    FORWARDED(k->attention_fwd(&c, NULL, NULL, NULL, NULL, NULL, 0, 5, 4, 2, 8), "attention_fwd",
              &c, 0.0, NULL);
}

static void test_elementwise(const zb_kernels *k) {
    const zb_kcall c = {&fake_s, NULL, -1, ZB_DTYPE_F32};
    const size_t huge = SIZE_MAX / 2;
    BAD(k->swiglu_fwd(&c, P, P, P, huge), "kernels: swiglu_fwd: h of");
    BAD(k->swiglu_fwd(&c, P, NULL, P, 8), "kernels: swiglu_fwd: gate is NULL");
    BAD(k->swiglu_bwd(&c, P, P, P, P, P, huge), "kernels: swiglu_bwd: dh of");
    BAD(k->swiglu_bwd(&c, P, NULL, P, P, P, 8), "kernels: swiglu_bwd: dup is NULL");
    BAD(k->residual_fwd(&c, P, P, P, huge), "overflows a byte count");
    BAD(k->residual_fwd(&c, P, P, NULL, 8), "kernels: residual_fwd: b is NULL");
    BAD(k->accumulate(&c, P, P, huge), "kernels: accumulate: dst of");
    BAD(k->accumulate(&c, NULL, P, 8), "kernels: accumulate: dst is NULL");
    FORWARDED(k->swiglu_fwd(&c, P, P, P, 8), "swiglu_fwd", &c, 0.0, P);
    FORWARDED(k->swiglu_bwd(&c, P, P, P, P, P, 8), "swiglu_bwd", &c, 0.0, P);
    FORWARDED(k->residual_fwd(&c, P, P, P, 8), "residual_fwd", &c, 0.0, P);
    FORWARDED(k->accumulate(&c, P, P, 8), "accumulate", &c, 0.0, P);
    FORWARDED(k->accumulate(&c, NULL, NULL, 0), "accumulate", &c, 0.0, NULL);

    BAD(k->cross_entropy_fwd(&c, buf, buf, P, T, 2, 0),
        "kernels: cross_entropy_fwd: rows N >= 0 and vocab V > 0 needed (2, 0)");
    BAD(k->cross_entropy_fwd(&c, buf, buf, P, T, -1, 8), "kernels: cross_entropy_fwd: rows N >= 0");
    BAD(k->cross_entropy_fwd(&c, buf, buf, P, NULL, 2, 8),
        "kernels: cross_entropy_fwd: targets is NULL");
    BAD(k->cross_entropy_bwd(&c, P, P, buf, T, 2, -8, 1.0f),
        "kernels: cross_entropy_bwd: rows N >= 0 and vocab V > 0 needed (2, -8)");
    BAD(k->cross_entropy_bwd(&c, P, P, NULL, T, 2, 8, 1.0f), "kernels: cross_entropy_bwd: lse is NULL");
    FORWARDED(k->cross_entropy_fwd(&c, buf, buf, P, T, 2, 8), "cross_entropy_fwd", &c, 0.0,
              (const void *)buf);
    FORWARDED(k->cross_entropy_bwd(&c, P, P, buf, T, 2, 8, 1.0f), "cross_entropy_bwd", &c, 0.0, P);

    BAD(k->adamw(&c, buf, buf, buf, buf, 8, 0, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.0f, false),
        "kernels: adamw: step 0 must be >= 1");
    BAD(k->adamw(&c, buf, buf, buf, buf, huge, 1, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.0f, false),
        "kernels: adamw: params of");
    BAD(k->adamw(&c, buf, buf, NULL, buf, 8, 1, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.0f, false),
        "kernels: adamw: m is NULL");
    BAD(k->fill(&c, buf, 0.0f, huge), "kernels: fill: dst of");
    BAD(k->fill(&c, NULL, 0.0f, 8), "kernels: fill: dst is NULL");
    BAD(k->cast(&c, P, ZB_DTYPE_F32, P, ZB_DTYPE_F32, 8),
        "kernels: cast: float -> float is not supported (float <-> bf16 only)");
    BAD(k->cast(&c, P, ZB_DTYPE_BF16, P, ZB_DTYPE_BF16, 8), "kernels: cast: bf16 -> bf16");
    BAD(k->cast(&c, P, ZB_DTYPE_COUNT, P, ZB_DTYPE_F32, 8), "kernels: cast: float ->");
    BAD(k->cast(&c, P, ZB_DTYPE_BF16, P, ZB_DTYPE_F32, huge), "kernels: cast: src of");
    BAD(k->cast(&c, P, ZB_DTYPE_BF16, NULL, ZB_DTYPE_F32, 8), "kernels: cast: src is NULL");
    FORWARDED(k->adamw(&c, buf, buf, buf, buf, 8, 1, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.0f, false),
              "adamw", &c, 0.0, (const void *)buf);
    FORWARDED(k->fill(&c, buf, 0.0f, 8), "fill", &c, 0.0, (const void *)buf);
    FORWARDED(k->cast(&c, P, ZB_DTYPE_BF16, P, ZB_DTYPE_F32, 8), "cast", &c, 0.0, P);
}

/* The per-token attention term of harness/metrics/flops.c is the same
 * formula: one sequence's forward over its tokens, times the layers. */
static void test_flops_agree(void) {
    zb_flops_shape s = {4, 256, 8, 2, 32, 688, 1000, 128};
    zb_flops_breakdown b;
    ZB_CHECK_OK(zb_flops_per_token(&s, ZB_FLOPS_FULL, ZB_RECOMPUTE_NONE, &b));
    double fwd = 4.0 * zb_attention_fwd_flops(1, 128, 8, 32) / 128.0;
    ZB_CHECK_MSG(b.attn_flops == 3.0 * fwd, "attn_flops %g, want %g", b.attn_flops, 3.0 * fwd);
    ZB_CHECK(zb_attention_bwd_flops(2, 3, 4, 6) == 2.0 * zb_attention_fwd_flops(2, 3, 4, 6));
}

int main(void) {
    fake_ops.name = "fake";
    fake_ops.kernels = recorder_table;
    bare_ops.name = "bare";
    fake_dev.ops = &fake_ops;
    bare_dev.ops = &bare_ops;
    fake_s.dev = &fake_dev;
    bare_s.dev = &bare_dev;
    snprintf(fake_s.name, sizeof fake_s.name, "fake");
    snprintf(bare_s.name, sizeof bare_s.name, "bare");

    const zb_kernels *k = zb_kernels_for(&fake_dev);
    ZB_CHECK(k != NULL && k != &recorder);
    ZB_CHECK(zb_kernels_for(&bare_dev) == NULL && zb_error_message()[0] != '\0');
    ZB_CHECK(zb_kernels_for(NULL) == NULL);
    if (!k) return zb_test_finish("test_kernels_front");
    test_common(k);
    test_dtype(k);
    test_embedding_rmsnorm(k);
    test_rope_attention(k);
    test_elementwise(k);
    test_flops_agree();
    return zb_test_finish("test_kernels_front");
}
