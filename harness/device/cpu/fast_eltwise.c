/* The cpu device's fast element-wise and norm kernels (cpu_fast.h).
 *
 * How they vectorise without fast-math options: the compiler may not reorder a
 * float sum, so every reduction keeps ZB_LANES independent partial sums
 * (or maxima) that the vectoriser maps onto one register each pass, and
 * the lanes are added at the end; exp is a polynomial with no libm call
 * (zb_cpu_vexpf), so loops around it vectorise too; selections are
 * ternaries (max, blend); `#pragma GCC ivdep` where an output may be its
 * own input (in place, same index: no loop-carried dependence), so no
 * run-time alias check sends the in-place case to scalar code.
 *
 * This file builds with -O3 and, where GCC offers it, each hot function is
 * compiled for AVX-512, AVX2 and the baseline and chosen at load time
 * (target_clones) by CPU feature, never by CPU model ("arch=..."): these
 * VMs report a model GCC's dispatcher does not know, as OpenBLAS's
 * detection does not (docs/design.md §10). The baseline clone stays scalar
 * around exp (SSE2 has no blend for the clamps). The order of additions
 * differs from the double-accumulating reference; tests bound the
 * difference (tests/unit/test_cpu_fast.c). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu_fast.h"
#include "math_adamw.h"
#include "math_rmsnorm.h"
#include "vec_clones.h"
#include "vexp.h"


#define ZB_LANES 16

/* Helpers are inlined into each clone, so they are compiled for its ISA. */
#if defined(__GNUC__)
#define ZB_INLINE static inline __attribute__((always_inline))
#else
#define ZB_INLINE static inline
#endif

/* vexp.h's polynomial e^x, inlined into each clone. */
ZB_INLINE float vexpf(float x) { return zb_vexpf_inline(x); }

float zb_cpu_vexpf(float x) { return vexpf(x); }

/* sum of squares of x[0..n) in lanes. */
ZB_INLINE float sum_sq(const float *x, int n) {
    float acc[ZB_LANES] = {0};
    int j = 0;
    for (; j + ZB_LANES <= n; j += ZB_LANES) {
        for (int l = 0; l < ZB_LANES; l++) acc[l] += x[j + l] * x[j + l];
    }
    float s = 0.0f;
    for (int l = 0; l < ZB_LANES; l++) s += acc[l];
    for (; j < n; j++) s += x[j] * x[j];
    return s;
}

ZB_VEC_CLONES
void zb_cpu_rmsnorm_fwd_fast(float *out, float *inv_rms, const float *x, const float *weight, int N, int C,
                             float eps) {
    for (int i = 0; i < N; i++) {
        const float *xr = x + (size_t)i * (size_t)C;
        float *yr = out + (size_t)i * (size_t)C;
        float r = zb_rmsnorm_inv_rms(sum_sq(xr, C) / (float)C, eps);
        inv_rms[i] = r;
        for (int c = 0; c < C; c++) yr[c] = zb_rmsnorm_scale(xr[c], r, weight[c]);
    }
}

ZB_VEC_CLONES
void zb_cpu_rmsnorm_bwd_fast(float *dx, float *dweight, const float *dout, const float *x, const float *weight,
                             const float *inv_rms, int N, int C) {
    for (int i = 0; i < N; i++) {
        const float *xr = x + (size_t)i * (size_t)C;
        const float *dyr = dout + (size_t)i * (size_t)C;
        float *dxr = dx + (size_t)i * (size_t)C;
        float r = inv_rms[i];
        float acc[ZB_LANES] = {0};
        int c = 0;
        for (; c + ZB_LANES <= C; c += ZB_LANES) {
            for (int l = 0; l < ZB_LANES; l++) acc[l] += dyr[c + l] * weight[c + l] * xr[c + l];
        }
        float dot = 0.0f;
        for (int l = 0; l < ZB_LANES; l++) dot += acc[l];
        for (; c < C; c++) dot += dyr[c] * weight[c] * xr[c];
        for (c = 0; c < C; c++) dweight[c] += zb_rmsnorm_dw(xr[c], dyr[c], r);
        float mean_dot = dot * r / (float)C;
        /* dxr may alias dyr: each element reads its own dy before writing. */
#pragma GCC ivdep
        for (c = 0; c < C; c++) dxr[c] = zb_rmsnorm_dx(xr[c], dyr[c], weight[c], r, mean_dot);
    }
}

ZB_INLINE float sigmoid(float x) { return 1.0f / (1.0f + vexpf(-x)); }

ZB_VEC_CLONES
void zb_cpu_swiglu_fwd_fast(float *h, const float *gate, const float *up, size_t n) {
#pragma GCC ivdep
    for (size_t i = 0; i < n; i++) h[i] = gate[i] * sigmoid(gate[i]) * up[i];
}

ZB_VEC_CLONES
void zb_cpu_swiglu_bwd_fast(float *dgate, float *dup, const float *dh, const float *gate, const float *up,
                            size_t n) {
#pragma GCC ivdep
    for (size_t i = 0; i < n; i++) {
        float g = gate[i], u = up[i], d = dh[i], s = sigmoid(g);
        dgate[i] = d * u * (s * (1.0f + g * (1.0f - s)));
        dup[i] = d * (g * s);
    }
}

ZB_VEC_CLONES
void zb_cpu_residual_fwd_fast(float *out, const float *a, const float *b, size_t n) {
#pragma GCC ivdep
    for (size_t i = 0; i < n; i++) out[i] = a[i] + b[i];
}

ZB_VEC_CLONES
void zb_cpu_accumulate_fast(float *dst, const float *src, size_t n) {
#pragma GCC ivdep
    for (size_t i = 0; i < n; i++) dst[i] += src[i];
}

/* The reference's per-element update (math_adamw.h) in a loop the compiler
 * vectorises: sqrtf becomes one instruction because this file builds with
 * -fno-math-errno (no errno to set for a negative argument; the result is
 * the same correctly rounded square root), so the result is bit for bit
 * the reference's. The four arrays are distinct (kernels.h). */
ZB_VEC_CLONES
void zb_cpu_adamw_fast(float *params, const float *grads, float *m, float *v, size_t n, int t, float lr,
                       float beta1, float beta2, float eps, float weight_decay, bool apply_weight_decay) {
    float bc1 = zb_adamw_bias_correction(beta1, t);
    float bc2 = zb_adamw_bias_correction(beta2, t);
    float wd = apply_weight_decay ? weight_decay : 0.0f;
#pragma GCC ivdep
    for (size_t i = 0; i < n; i++) {
        zb_adamw_update(&params[i], &m[i], &v[i], grads[i], lr, beta1, beta2, eps, wd, bc1, bc2);
    }
}

/* max of p[0..n) in lanes (n >= 1). */
ZB_INLINE float row_max(const float *p, int n) {
    float m[ZB_LANES];
    for (int l = 0; l < ZB_LANES; l++) m[l] = p[0];
    int j = 0;
    for (; j + ZB_LANES <= n; j += ZB_LANES) {
        for (int l = 0; l < ZB_LANES; l++) m[l] = p[j + l] > m[l] ? p[j + l] : m[l];
    }
    float mx = m[0];
    for (int l = 1; l < ZB_LANES; l++) mx = m[l] > mx ? m[l] : mx;
    for (; j < n; j++) mx = p[j] > mx ? p[j] : mx;
    return mx;
}

/* sum of e^(p_j - mx) over p[0..n), in lanes; writes the exponentials to
 * e when e is not NULL. */
ZB_INLINE float sum_exp(float *e, const float *p, int n, float mx) {
    float acc[ZB_LANES] = {0};
    int j = 0;
    for (; j + ZB_LANES <= n; j += ZB_LANES) {
        for (int l = 0; l < ZB_LANES; l++) {
            float v = vexpf(p[j + l] - mx);
            if (e) e[j + l] = v;
            acc[l] += v;
        }
    }
    float s = 0.0f;
    for (int l = 0; l < ZB_LANES; l++) s += acc[l];
    for (; j < n; j++) {
        float v = vexpf(p[j] - mx);
        if (e) e[j] = v;
        s += v;
    }
    return s;
}

ZB_VEC_CLONES
void zb_cpu_softmax_row_fast(float *p, int n) {
    if (n <= 0) return;
    float mx = row_max(p, n);
    float inv = 1.0f / sum_exp(p, p, n, mx);
    for (int j = 0; j < n; j++) p[j] *= inv;
}

ZB_VEC_CLONES
void zb_cpu_softmax_bwd_row_fast(float *d, const float *p, int n, float scale) {
    float acc[ZB_LANES] = {0};
    int j = 0;
    for (; j + ZB_LANES <= n; j += ZB_LANES) {
        for (int l = 0; l < ZB_LANES; l++) acc[l] += p[j + l] * d[j + l];
    }
    float pdp = 0.0f;
    for (int l = 0; l < ZB_LANES; l++) pdp += acc[l];
    for (; j < n; j++) pdp += p[j] * d[j];
    for (j = 0; j < n; j++) d[j] = p[j] * (d[j] - pdp) * scale;
}

ZB_VEC_CLONES
zb_status zb_cpu_cross_entropy_fwd_fast(float *loss, float *lse, const float *logits, const int32_t *targets,
                                        int N, int V) {
    int n_bad = 0, first_bad = -1;
    double total = 0.0; /* N terms: the order of the mean does not matter */
    for (int i = 0; i < N; i++) {
        const float *row = logits + (size_t)i * (size_t)V;
        float mx = row_max(row, V);
        float l = mx + logf(sum_exp(NULL, row, V, mx));
        lse[i] = l;
        int32_t tgt = targets[i];
        if (tgt < 0 || tgt >= V) {
            if (n_bad++ == 0) first_bad = i;
            continue;
        }
        total += (double)l - (double)row[tgt];
    }
    *loss = N > 0 ? (float)(total / (double)N) : 0.0f;
    if (n_bad > 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "cross-entropy: target %d at position %d is outside [0, %d) (%d bad)",
                       (int)targets[first_bad], first_bad, V, n_bad);
    }
    return ZB_OK;
}

ZB_VEC_CLONES
zb_status zb_cpu_cross_entropy_bwd_fast(float *dlogits, const float *logits, const float *lse,
                                        const int32_t *targets, int N, int V, float dloss) {
    int n_bad = 0, first_bad = -1;
    float scale = N > 0 ? dloss / (float)N : 0.0f;
    for (int i = 0; i < N; i++) {
        const float *row = logits + (size_t)i * (size_t)V;
        float *drow = dlogits + (size_t)i * (size_t)V;
        float l = lse[i];
        int32_t tgt = targets[i];
        /* The target's logit, read before dlogits (which may be logits) changes. */
        float at_tgt = tgt >= 0 && tgt < V ? row[tgt] : 0.0f;
#pragma GCC ivdep
        for (int j = 0; j < V; j++) drow[j] = scale * vexpf(row[j] - l);
        if (tgt < 0 || tgt >= V) {
            if (n_bad++ == 0) first_bad = i;
        } else {
            drow[tgt] = scale * (vexpf(at_tgt - l) - 1.0f);
        }
    }
    if (n_bad > 0) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "cross-entropy backward: target %d at position %d is outside [0, %d) (%d bad)",
                       (int)targets[first_bad], first_bad, V, n_bad);
    }
    return ZB_OK;
}
