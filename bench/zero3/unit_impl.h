/* Internal helpers shared by unit_fwd.c and unit_bwd.c (not a public API).
 * Shapes as in unit.h: N = B*T tokens, row-major [rows, cols] matrices. */
#ifndef ZB_ZERO3_UNIT_IMPL_H
#define ZB_ZERO3_UNIT_IMPL_H

#include <stdbool.h>

#include "unit.h"

/* Row-major out [m, n] = op(a) op(b) + beta * out, op(a) [m, k], op(b)
 * [k, n]; a is stored [k, m] when ta, b is stored [n, k] when tb. a and b
 * hold ctx->dtype; out too, or fp32 when out_f32 (parameter gradients).
 * Issued on ctx->stream with label "<label>" and 2*m*n*k FLOPs in the
 * trace. */
zb_status zb_unit_gemm(const zb_unit_ctx *c, int unit, const char *label, bool ta, bool tb,
                       int m, int n, int k, const void *a, const void *b, void *out,
                       float beta, bool out_f32);

/* A kernel call record on ctx->stream for `unit`. */
zb_kcall zb_unit_kcall(const zb_unit_ctx *c, int unit, const char *label);

/* The unit's tensor pointers within its flat vector `base` of `dtype`
 * elements. */
void zb_unit_tensors(const zb_model_cfg *cfg, int unit, const void *base, zb_dtype dtype,
                     const void *out[ZB_UNIT_MAX_TENSORS]);

/* Checks ctx, unit, acts and the workspace before issuing anything. */
zb_status zb_unit_check(const zb_unit_ctx *c, int unit, const zb_unit_acts *acts,
                        const char *what);

/* The layer forward into the intermediates s; with x_out NULL it stops
 * before the w_down product (what backward's recomputation needs). */
zb_status zb_unit_layer_forward(const zb_unit_ctx *c, int unit, const void *params,
                                const void *x_in, const zb_layer_saved *s, void *x_out);

#endif
