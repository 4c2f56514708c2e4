/* The fits behind zerobench calibrate (pure arithmetic, no I/O):
 *
 *   collectives  time = steps * latency + sent_bytes / bandwidth, the sim's
 *                alpha-beta model of a ring (steps: n-1 for all-gather and
 *                reduce-scatter, 2(n-1) for all-reduce; sent_bytes: what one
 *                rank sends, zb_coll_sent_bytes). Least squares over the
 *                sweep, each point weighted by 1/time^2, so the residuals
 *                minimized are relative: the small sizes that decide the
 *                latency count as much as the large ones that decide the
 *                bandwidth. A negative latency is refitted as 0.
 *   GEMMs        time(d) = overhead + 2 d^3 / (peak * eff(d)) for square
 *                d x d x d GEMMs: overhead is the least time any size spent
 *                beyond its FLOPs at the peak, eff(d) what is left, clamped
 *                to (0, 1], so overhead + the efficiency table reproduce
 *                every measured time (the sim adds its per-op overhead to
 *                every op). */
#ifndef ZB_CALIB_FIT_H
#define ZB_CALIB_FIT_H

#include <stdbool.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_CALIB_MAX_POINTS 256

typedef struct zb_calib_point {
    double steps;      /* the algorithm's latency steps */
    double sent_bytes; /* bytes one rank sends */
    double time_s;
} zb_calib_point;

typedef struct zb_calib_fit {
    int n_points;
    double latency_s;           /* per algorithm step */
    double bandwidth_bytes_per_s;
    bool latency_clamped;       /* the unconstrained fit gave a negative latency */
    double rms_residual_pct;    /* of (model - measured) / measured */
    double max_residual_pct;    /* largest |residual| */
} zb_calib_fit;

/* Fits points[0..n): ZB_ERR_INVALID (one line) for fewer than 2 points, a
 * point without a positive time or with negative bytes, or times that do
 * not grow with the bytes (no positive bandwidth). */
zb_status zb_calib_fit_alpha_beta(const zb_calib_point *points, int n, zb_calib_fit *out);

/* Ring steps of a collective on n ranks ("allgather", "reducescatter",
 * "allreduce"); 0 on one rank, -1 for another name. */
int zb_calib_ring_steps(const char *coll, int n_ranks);

typedef struct zb_calib_gemm {
    int n;
    double dim[ZB_CALIB_MAX_POINTS];    /* M = N = K */
    double time_s[ZB_CALIB_MAX_POINTS];
    double eff[ZB_CALIB_MAX_POINTS];    /* out */
    bool clamped[ZB_CALIB_MAX_POINTS];  /* out: the efficiency was above 1 */
    double overhead_s;                  /* out */
} zb_calib_gemm;

/* Fills eff, clamped and overhead_s from dim, time_s and the peak FLOP/s;
 * dims must be positive and strictly increasing. */
zb_status zb_calib_fit_gemm(zb_calib_gemm *g, double peak_flops);

#ifdef __cplusplus
}
#endif
#endif
