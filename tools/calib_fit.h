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
 *   element-wise time = overhead + bytes moved / bandwidth: the same fit
 *                with one "step" per call, its latency the per-op overhead.
 *   GEMMs        time(d) = overhead + 2 d^3 / (peak * eff(d)) for square
 *                d x d x d GEMMs, overhead the element-wise fit's per-op
 *                overhead (the sim adds it to every op): eff(d) is what is
 *                left, clamped to 1 (and marked) where a size ran faster
 *                than the peak after the overhead; the residuals are of
 *                the clamped sizes only.
 *   rates        time = overhead + work / rate (attention: work its causal
 *                FLOPs, rate peak x efficiency), least squares weighted by
 *                1/time^2 with the overhead fixed.
 *   kernels      per element-wise kernel, time = overhead + bytes / (bandwidth
 *                x eff) over its runs at two shapes: the rate fit above with
 *                work = its bytes, eff = rate / bandwidth (the element-wise
 *                fit's), in (0, 10] (a kernel no slower than the overhead,
 *                or faster than 10 x the bandwidth, is clamped to 10).
 *   slowdowns    one kind of work (compute, or comm) running beside the
 *                other for an overlapped time O takes alone + O f / (1 + f)
 *                (the sim's model: inside the overlap it progresses at
 *                1 / (1 + f)); f from the median of the differences of
 *                paired runs with (prefetch) and without (sync) overlap
 *                over the median overlap, clamped to [0, 10],
 *                the residuals those of each pair's prediction. */
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
    bool capped[ZB_CALIB_MAX_POINTS];   /* out: slower than a larger size: costed at that size's time */
    bool from_model[ZB_CALIB_MAX_POINTS]; /* out: the entry is the model's own GEMMs' (add_shapes) */
    double overhead_s;                  /* out */
    double model_rms_pct, model_max_pct; /* out: add_shapes' residuals, over each model GEMM */
} zb_calib_gemm;

/* Fills eff and clamped from dim, time_s, the peak FLOP/s and the per-op
 * overhead (stored in overhead_s); dims must be positive and strictly
 * increasing. A size whose median time exceeds a larger size's is costed
 * at that larger time (capped): a GEMM with fewer FLOPs of the same kernel
 * family does not cost more, and on the cpu backend such a size is one
 * whose calls ran in the slow of their two modes (the stream thread woken
 * for each call; 32^3 at 7.1 us against 3.0 for 64^3). rms/max residual
 * against the measured times in *rms, *max (percent). */
zb_status zb_calib_fit_gemm(zb_calib_gemm *g, double peak_flops, double overhead_s, double *rms, double *max);

/* One of the model's own GEMMs, as the step runs it (zerobench gemm --model). */
typedef struct zb_calib_gemm_shape {
    double m, n, k, time_s;
} zb_calib_gemm_shape;

/* After zb_calib_fit_gemm: the model's own GEMMs replace the square
 * sweep's entry at each smallest dimension d they have (or are inserted
 * there, in order): eff(d) = their FLOPs over peak x the sum of their times
 * less the overhead, clamped to 1, so the sim prices the model's GEMMs at
 * what they took together (the square d^3 GEMM runs at another speed than
 * the d x 8192 x d LM head: 0.76-0.80 of peak against 0.71-0.73 on the
 * medium model here). model_rms/max_pct: each shape's time as priced
 * against its own. ZB_ERR_INVALID for no shapes, a non-positive dimension
 * or time, or a table that would exceed ZB_CALIB_MAX_POINTS entries. */
zb_status zb_calib_gemm_add_shapes(zb_calib_gemm *g, const zb_calib_gemm_shape *s, int n, double peak_flops);

/* The table's efficiency for a GEMM whose smallest dimension is d (its step
 * function, as the sim reads it: the last entry at or below d, the first below
 * all). */
double zb_calib_gemm_eff_at(const zb_calib_gemm *g, double d);

typedef struct zb_calib_rate {
    int n_points;
    double rate;             /* work per second */
    double rms_residual_pct, max_residual_pct;
} zb_calib_rate;

/* Fits time[i] = overhead_s + work[i] / rate: ZB_ERR_INVALID for no
 * points, a non-positive time or work, or times no longer than the
 * overhead. */
zb_status zb_calib_fit_rate(const double *work, const double *time_s, int n, double overhead_s, zb_calib_rate *out);

#define ZB_CALIB_KERNEL_EFF_MAX 10.0 /* sim.kernel_efficiency's bound (profile.h) */
#define ZB_CALIB_KERNEL_SHAPES 2

typedef struct zb_calib_kernel {
    char name[32];
    int n;                                  /* shapes timed */
    double bytes[ZB_CALIB_KERNEL_SHAPES];   /* moved per call (kernel_bytes.h) */
    double time_s[ZB_CALIB_KERNEL_SHAPES];
    double eff;                             /* out: of the bandwidth */
    bool clamped;                           /* out: eff set to ZB_CALIB_KERNEL_EFF_MAX */
    zb_calib_rate fit;                      /* out */
} zb_calib_kernel;

/* Fills k's eff, clamped and fit from its points, the element-wise
 * bandwidth and the per-op overhead; ZB_ERR_INVALID for no points or a
 * non-positive bandwidth. */
zb_status zb_calib_fit_kernel(zb_calib_kernel *k, double bandwidth, double overhead_s);

typedef struct zb_calib_slowdown {
    int n_pairs;
    double factor;   /* f >= 0: (1 + f) times as long inside the overlap */
    bool clamped;    /* the estimate was outside [0, 10] */
    double rms_residual_pct, max_residual_pct;
} zb_calib_slowdown;

/* From n paired runs: alone[i] (no overlap), beside[i] (the same work
 * overlapped with the other kind for overlap[i]), all seconds. The factor
 * comes from the median of beside[i] - alone[i]; ZB_ERR_INVALID for no pairs or no overlap. */
zb_status zb_calib_fit_slowdown(const double *alone, const double *beside, const double *overlap, int n,
                                zb_calib_slowdown *out);

#ifdef __cplusplus
}
#endif
#endif
