/* The calibration fits (calib_fit.h). */
#include <math.h>
#include <stdlib.h>
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

zb_status zb_calib_fit_gemm(zb_calib_gemm *g, double peak_flops, double overhead_s, double *rms, double *max) {
    if (g->n < 1) return ZB_FAIL(ZB_ERR_INVALID, "GEMM fit: no sizes");
    if (!(peak_flops > 0) || !isfinite(peak_flops))
        return ZB_FAIL(ZB_ERR_INVALID, "GEMM fit: peak %g FLOP/s; it needs the peak the sweep measured against",
                       peak_flops);
    if (!(overhead_s >= 0) || !isfinite(overhead_s))
        return ZB_FAIL(ZB_ERR_INVALID, "GEMM fit: per-op overhead %g s; it needs one >= 0", overhead_s);
    for (int i = 0; i < g->n; i++) {
        if (!(g->dim[i] > 0) || !(g->time_s[i] > 0) || (i && g->dim[i] <= g->dim[i - 1])) {
            return ZB_FAIL(ZB_ERR_INVALID, "GEMM fit: size %d (%g, %g s): sizes must be positive and increasing", i,
                           g->dim[i], g->time_s[i]);
        }
    }
    double sum2 = 0, worst = 0, cap = INFINITY;
    for (int i = g->n - 1; i >= 0; i--) { /* from the largest: each size at most the least time above it */
        double t = g->time_s[i] < cap ? g->time_s[i] : cap;
        g->capped[i] = t < g->time_s[i];
        cap = t;
        double flops = 2.0 * g->dim[i] * g->dim[i] * g->dim[i], busy = t - overhead_s;
        double eff = busy > 0 ? flops / (peak_flops * busy) : INFINITY;
        g->clamped[i] = eff > 1.0;
        g->eff[i] = eff > 1.0 ? 1.0 : eff;
        double model = overhead_s + flops / (peak_flops * g->eff[i]);
        double r = 100.0 * (model - g->time_s[i]) / g->time_s[i];
        sum2 += r * r;
        if (fabs(r) > worst) worst = fabs(r);
    }
    g->overhead_s = overhead_s;
    *rms = sqrt(sum2 / g->n);
    *max = worst;
    return ZB_OK;
}

static double min3(double a, double b, double c) { return a < b ? (a < c ? a : c) : (b < c ? b : c); }

double zb_calib_gemm_eff_at(const zb_calib_gemm *g, double d) {
    double eff = g->n ? g->eff[0] : 0;
    for (int i = 1; i < g->n && g->dim[i] <= d; i++) eff = g->eff[i];
    return eff;
}

/* Inserts (or replaces) the entry at dim d with eff; keeps dims increasing. */
static zb_status put_entry(zb_calib_gemm *g, double d, double eff, double time_s, bool clamped) {
    int i = 0;
    while (i < g->n && g->dim[i] < d) i++;
    if (i == g->n || g->dim[i] != d) {
        if (g->n >= ZB_CALIB_MAX_POINTS) return ZB_FAIL(ZB_ERR_INVALID, "GEMM fit: more than %d sizes", g->n);
        for (int j = g->n; j > i; j--) {
            g->dim[j] = g->dim[j - 1];
            g->time_s[j] = g->time_s[j - 1];
            g->eff[j] = g->eff[j - 1];
            g->clamped[j] = g->clamped[j - 1];
            g->capped[j] = g->capped[j - 1];
            g->from_model[j] = g->from_model[j - 1];
        }
        g->n++;
    }
    g->dim[i] = d;
    g->time_s[i] = time_s;
    g->eff[i] = eff;
    g->clamped[i] = clamped;
    g->capped[i] = false;
    g->from_model[i] = true;
    return ZB_OK;
}

zb_status zb_calib_gemm_add_shapes(zb_calib_gemm *g, const zb_calib_gemm_shape *s, int n, double peak_flops) {
    if (n < 1 || !(peak_flops > 0)) return ZB_FAIL(ZB_ERR_INVALID, "GEMM shapes fit: %d shapes, peak %g", n, peak_flops);
    for (int i = 0; i < n; i++) {
        if (!(s[i].m > 0 && s[i].n > 0 && s[i].k > 0 && s[i].time_s > 0)) {
            return ZB_FAIL(ZB_ERR_INVALID, "GEMM shapes fit: shape %d (%g x %g x %g, %g s) must be positive", i,
                           s[i].m, s[i].n, s[i].k, s[i].time_s);
        }
    }
    bool done[ZB_CALIB_MAX_POINTS] = {false};
    if (n > ZB_CALIB_MAX_POINTS) return ZB_FAIL(ZB_ERR_INVALID, "GEMM shapes fit: %d shapes", n);
    for (int i = 0; i < n; i++) {
        if (done[i]) continue;
        double d = min3(s[i].m, s[i].n, s[i].k), flops = 0, busy = 0, t = 0;
        for (int j = i; j < n; j++) {
            if (done[j] || min3(s[j].m, s[j].n, s[j].k) != d) continue;
            done[j] = true;
            flops += 2.0 * s[j].m * s[j].n * s[j].k;
            busy += s[j].time_s - g->overhead_s;
            t += s[j].time_s;
        }
        double eff = busy > 0 ? flops / (peak_flops * busy) : INFINITY;
        ZB_TRY(put_entry(g, d, eff > 1.0 ? 1.0 : eff, t, eff > 1.0));
    }
    double sum2 = 0, worst = 0;
    for (int i = 0; i < n; i++) {
        double eff = zb_calib_gemm_eff_at(g, min3(s[i].m, s[i].n, s[i].k));
        double model = g->overhead_s + 2.0 * s[i].m * s[i].n * s[i].k / (peak_flops * eff);
        double r = 100.0 * (model - s[i].time_s) / s[i].time_s;
        sum2 += r * r;
        worst = fabs(r) > worst ? fabs(r) : worst;
    }
    g->model_rms_pct = sqrt(sum2 / n);
    g->model_max_pct = worst;
    return ZB_OK;
}

zb_status zb_calib_fit_rate(const double *work, const double *time_s, int n, double overhead_s, zb_calib_rate *out) {
    if (n < 1) return ZB_FAIL(ZB_ERR_INVALID, "rate fit: no points");
    double num = 0, den = 0;
    for (int i = 0; i < n; i++) {
        double busy = time_s[i] - overhead_s;
        if (!(work[i] > 0) || !(time_s[i] > 0) || !(busy > 0)) {
            return ZB_FAIL(ZB_ERR_INVALID, "rate fit: point %d (%g work, %g s) is no longer than the per-op "
                           "overhead %g s", i, work[i], time_s[i], overhead_s);
        }
        double w = 1.0 / (time_s[i] * time_s[i]);
        num += w * work[i] * busy; /* least squares for u = 1 / rate in busy = work u */
        den += w * work[i] * work[i];
    }
    zb_calib_rate r = {n, den / num, 0, 0};
    double sum2 = 0;
    for (int i = 0; i < n; i++) {
        double e = 100.0 * (overhead_s + work[i] / r.rate - time_s[i]) / time_s[i];
        sum2 += e * e;
        if (fabs(e) > r.max_residual_pct) r.max_residual_pct = fabs(e);
    }
    r.rms_residual_pct = sqrt(sum2 / n);
    *out = r;
    return ZB_OK;
}

zb_status zb_calib_fit_kernel(zb_calib_kernel *k, double bandwidth, double overhead_s) {
    if (k->n < 1 || !(bandwidth > 0)) {
        return ZB_FAIL(ZB_ERR_INVALID, "kernel fit: %s: %d points, bandwidth %g", k->name, k->n, bandwidth);
    }
    zb_error_clear();
    bool fitted = zb_calib_fit_rate(k->bytes, k->time_s, k->n, overhead_s, &k->fit) == ZB_OK;
    zb_error_clear(); /* no slower than the overhead: not an error, the bound */
    k->eff = fitted ? k->fit.rate / bandwidth : ZB_CALIB_KERNEL_EFF_MAX;
    k->clamped = !fitted || !(k->eff <= ZB_CALIB_KERNEL_EFF_MAX);
    if (k->clamped) k->eff = ZB_CALIB_KERNEL_EFF_MAX;
    if (!fitted) k->fit = (zb_calib_rate){k->n, bandwidth * k->eff, 0, 0};
    return ZB_OK;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n) {
    double s[ZB_CALIB_MAX_POINTS];
    if (n > ZB_CALIB_MAX_POINTS) n = ZB_CALIB_MAX_POINTS;
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

zb_status zb_calib_fit_slowdown(const double *alone, const double *beside, const double *overlap, int n,
                                zb_calib_slowdown *out) {
    if (n < 1) return ZB_FAIL(ZB_ERR_INVALID, "slowdown fit: no pairs");
    if (n > ZB_CALIB_MAX_POINTS) n = ZB_CALIB_MAX_POINTS;
    /* The median of the pairs' differences, not the difference of medians:
     * the two steps of a pair share the machine's slow spells, which the
     * difference cancels; the separate medians carry all of them. */
    double d[ZB_CALIB_MAX_POINTS];
    for (int i = 0; i < n; i++) d[i] = beside[i] - alone[i];
    double o = median(overlap, n);
    if (!(o > 0)) return ZB_FAIL(ZB_ERR_INVALID, "slowdown fit: the overlapped runs overlapped nothing");
    double r = median(d, n) / o, f = r < 1 ? r / (1 - r) : INFINITY; /* beside = alone + o f / (1 + f) */
    zb_calib_slowdown s = {n, f, false, 0, 0};
    if (!(f >= 0) || f > 10) {
        s.clamped = true;
        s.factor = f > 10 ? 10 : 0;
    }
    double sum2 = 0;
    for (int i = 0; i < n; i++) {
        double model = alone[i] + overlap[i] * s.factor / (1 + s.factor);
        double e = beside[i] > 0 ? 100.0 * (model - beside[i]) / beside[i] : 0;
        sum2 += e * e;
        if (fabs(e) > s.max_residual_pct) s.max_residual_pct = fabs(e);
    }
    s.rms_residual_pct = sqrt(sum2 / n);
    *out = s;
    return ZB_OK;
}
