/* The calibration fits (calib_fit.h). */
#include <math.h>
#include <string.h>

#include "calib_fit.h"

int zb_calib_ring_steps(const char *coll, int n_ranks) {
    if (n_ranks <= 1) return strcmp(coll, "allgather") && strcmp(coll, "reducescatter") && strcmp(coll, "allreduce") ? -1 : 0;
    if (!strcmp(coll, "allgather") || !strcmp(coll, "reducescatter")) return n_ranks - 1;
    if (!strcmp(coll, "allreduce")) return 2 * (n_ranks - 1);
    return -1;
}

static void residuals(const zb_calib_point *p, int n, zb_calib_fit *f) {
    double sum2 = 0, worst = 0;
    for (int i = 0; i < n; i++) {
        double model = p[i].steps * f->latency_s + p[i].sent_bytes / f->bandwidth_bytes_per_s;
        double r = 100.0 * (model - p[i].time_s) / p[i].time_s;
        sum2 += r * r;
        if (fabs(r) > worst) worst = fabs(r);
    }
    f->rms_residual_pct = sqrt(sum2 / n);
    f->max_residual_pct = worst;
}

zb_status zb_calib_fit_alpha_beta(const zb_calib_point *p, int n, zb_calib_fit *out) {
    if (n < 2) return ZB_FAIL(ZB_ERR_INVALID, "alpha-beta fit: %d point(s); it needs at least 2 sizes", n);
    /* Weighted normal equations for t = L s + u x, weights 1/t^2. */
    double ss = 0, sx = 0, xx = 0, st = 0, xt = 0;
    for (int i = 0; i < n; i++) {
        if (!(p[i].time_s > 0) || !(p[i].sent_bytes >= 0) || !(p[i].steps >= 0) || !isfinite(p[i].time_s)) {
            return ZB_FAIL(ZB_ERR_INVALID, "alpha-beta fit: point %d (%g bytes, %g s) is not a measurement", i,
                           p[i].sent_bytes, p[i].time_s);
        }
        double w = 1.0 / (p[i].time_s * p[i].time_s);
        ss += w * p[i].steps * p[i].steps;
        sx += w * p[i].steps * p[i].sent_bytes;
        xx += w * p[i].sent_bytes * p[i].sent_bytes;
        st += w * p[i].steps * p[i].time_s;
        xt += w * p[i].sent_bytes * p[i].time_s;
    }
    zb_calib_fit f;
    memset(&f, 0, sizeof f);
    f.n_points = n;
    double det = ss * xx - sx * sx, lat = 0, u = 0;
    if (ss > 0 && det > 1e-12 * ss * xx) {
        lat = (st * xx - sx * xt) / det;
        u = (ss * xt - sx * st) / det;
    }
    if (!(ss > 0 && det > 1e-12 * ss * xx) || lat < 0) {
        f.latency_clamped = ss > 0 && lat < 0;
        lat = 0; /* bandwidth alone */
        u = xx > 0 ? xt / xx : 0;
    }
    if (!(u > 0)) {
        return ZB_FAIL(ZB_ERR_INVALID, "alpha-beta fit: the times of %d sizes do not grow with the bytes sent; "
                       "no bandwidth can be fitted (sweep larger sizes or more iterations)", n);
    }
    f.latency_s = lat;
    f.bandwidth_bytes_per_s = 1.0 / u;
    residuals(p, n, &f);
    *out = f;
    return ZB_OK;
}

zb_status zb_calib_fit_gemm(zb_calib_gemm *g, double peak_flops) {
    if (g->n < 1) return ZB_FAIL(ZB_ERR_INVALID, "GEMM fit: no sizes");
    if (!(peak_flops > 0) || !isfinite(peak_flops))
        return ZB_FAIL(ZB_ERR_INVALID, "GEMM fit: peak %g FLOP/s; it needs the peak the sweep measured against",
                       peak_flops);
    double over = INFINITY;
    for (int i = 0; i < g->n; i++) {
        if (!(g->dim[i] > 0) || !(g->time_s[i] > 0) || (i && g->dim[i] <= g->dim[i - 1])) {
            return ZB_FAIL(ZB_ERR_INVALID, "GEMM fit: size %d (%g, %g s): sizes must be positive and increasing", i,
                           g->dim[i], g->time_s[i]);
        }
        double spare = g->time_s[i] - 2.0 * g->dim[i] * g->dim[i] * g->dim[i] / peak_flops;
        if (spare < over) over = spare;
    }
    g->overhead_s = over > 0 ? over : 0;
    for (int i = 0; i < g->n; i++) {
        double flops = 2.0 * g->dim[i] * g->dim[i] * g->dim[i], busy = g->time_s[i] - g->overhead_s;
        double eff = busy > 0 ? flops / (peak_flops * busy) : 1.0;
        g->clamped[i] = eff > 1.0;
        g->eff[i] = eff > 1.0 ? 1.0 : eff;
    }
    return ZB_OK;
}
