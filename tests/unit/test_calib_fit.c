/* The fits of zerobench calibrate (tools/calib_fit.h): an alpha-beta model
 * recovered from exact synthetic sweeps (one collective, and pooled over
 * collectives with different step counts), residuals of a perturbed sweep,
 * the negative-latency refit, sweeps that cannot be fitted, the GEMM
 * table recovered with the element-wise fit's overhead (the smallest size
 * too, not clamped), the rate fit (attention, element-wise bandwidth) and
 * the slowdowns beside the other kind of work, and a kernel's efficiency
 * over the element-wise bandwidth (recovered exactly; clamped at the bound
 * when its calls take no longer than the overhead). No timing. */
#include <math.h>
#include <string.h>

#include "calib_fit.h"
#include "zb_test.h"

static bool near(double a, double b, double rel) { return fabs(a - b) <= rel * fabs(b); }

static void test_alpha_beta(void) {
    const double lat = 7e-6, bw = 2.5e9;
    zb_calib_point p[32];
    int n = 0;
    /* all-gather (n-1 = 3 steps) and all-reduce (6 steps) on 4 ranks */
    for (int k = 0; k < 2; k++) {
        for (double x = 1024; x <= 64 * 1024 * 1024.0; x *= 4) {
            double steps = k ? 6 : 3;
            p[n++] = (zb_calib_point){steps, x, steps * lat + x / bw};
        }
    }
    zb_calib_fit f;
    ZB_CHECK_OK(zb_calib_fit_alpha_beta(p, n, &f));
    ZB_CHECK_MSG(near(f.latency_s, lat, 1e-9) && near(f.bandwidth_bytes_per_s, bw, 1e-9), "fit %g s, %g B/s",
                 f.latency_s, f.bandwidth_bytes_per_s);
    ZB_CHECK(f.rms_residual_pct < 1e-6 && f.max_residual_pct < 1e-6 && !f.latency_clamped && f.n_points == n);
    /* +-10 % on alternate points: residuals of that order, estimates close. */
    for (int i = 0; i < n; i++) p[i].time_s *= i % 2 ? 1.1 : 0.9;
    ZB_CHECK_OK(zb_calib_fit_alpha_beta(p, n, &f));
    ZB_CHECK(f.max_residual_pct > 5 && f.max_residual_pct < 15 && f.rms_residual_pct > 5);
    ZB_CHECK(near(f.bandwidth_bytes_per_s, bw, 0.15) && near(f.latency_s, lat, 0.3));
    /* pure bandwidth with a slight excess at large sizes: the latency fit goes negative and is refitted as 0 */
    n = 0;
    for (double x = 1e3; x <= 1e8; x *= 10) p[n++] = (zb_calib_point){1, x, x / bw * (x > 1e6 ? 1.2 : 1.0)};
    ZB_CHECK_OK(zb_calib_fit_alpha_beta(p, n, &f));
    ZB_CHECK(f.latency_s == 0 && f.latency_clamped && f.bandwidth_bytes_per_s > 0);
    /* unfit: one point, times falling with size, a zero time */
    ZB_CHECK(zb_calib_fit_alpha_beta(p, 1, &f) == ZB_ERR_INVALID);
    zb_calib_point down[3] = {{1, 1e3, 3e-3}, {1, 1e5, 2e-3}, {1, 1e7, 1e-3}};
    ZB_CHECK(zb_calib_fit_alpha_beta(down, 3, &f) == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "do not grow") != NULL);
    zb_calib_point zero[2] = {{1, 1e3, 0}, {1, 1e5, 1e-3}};
    ZB_CHECK(zb_calib_fit_alpha_beta(zero, 2, &f) == ZB_ERR_INVALID);
    ZB_CHECK(zb_calib_ring_steps("allgather", 8) == 7 && zb_calib_ring_steps("reducescatter", 8) == 7);
    ZB_CHECK(zb_calib_ring_steps("allreduce", 8) == 14 && zb_calib_ring_steps("allreduce", 1) == 0);
    ZB_CHECK(zb_calib_ring_steps("broadcast", 8) == -1);
}

static void test_gemm(void) {
    const double peak = 1e11, over = 5e-6, eff[4] = {0.2, 0.5, 0.8, 0.9};
    zb_calib_gemm g;
    memset(&g, 0, sizeof g);
    for (int i = 0; i < 4; i++) {
        g.dim[i] = 8 << (2 * i); /* 8, 32, 128, 512 */
        g.time_s[i] = over + 2 * g.dim[i] * g.dim[i] * g.dim[i] / (peak * eff[i]);
    }
    g.n = 4;
    double rms = -1, max = -1;
    /* the overhead given (the element-wise fit's): every efficiency recovered, even the smallest size's */
    ZB_CHECK_OK(zb_calib_fit_gemm(&g, peak, over, &rms, &max));
    for (int i = 0; i < 4; i++) {
        ZB_CHECK_MSG(near(g.eff[i], eff[i], 1e-9) && !g.clamped[i], "size %g: eff %g, want %g", g.dim[i], g.eff[i],
                     eff[i]);
    }
    ZB_CHECK(g.overhead_s == over && rms < 1e-6 && max < 1e-6);
    /* faster than the peak after the overhead: clamped to 1, marked, and its residual said */
    g.time_s[3] = over + 2 * g.dim[3] * g.dim[3] * g.dim[3] / (2 * peak);
    ZB_CHECK_OK(zb_calib_fit_gemm(&g, peak, over, &rms, &max));
    ZB_CHECK(g.eff[3] == 1.0 && g.clamped[3] && !g.clamped[2] && max > 10 && rms > 0);
    for (int i = 0; i < 4; i++) ZB_CHECK(!g.capped[i]);
    /* a smaller size slower than a larger one (its calls in the slow mode):
     * costed at the larger size's time, marked, its residual said; sizes
     * below untouched */
    g.time_s[3] = over + 2 * g.dim[3] * g.dim[3] * g.dim[3] / (peak * eff[3]);
    double t2 = g.time_s[2];
    g.time_s[1] = 2.0 * t2;
    ZB_CHECK_OK(zb_calib_fit_gemm(&g, peak, over, &rms, &max));
    ZB_CHECK(g.capped[1] && !g.capped[0] && !g.capped[2] && !g.capped[3]);
    ZB_CHECK_MSG(near(g.eff[1], 2 * g.dim[1] * g.dim[1] * g.dim[1] / (peak * (t2 - over)), 1e-9),
                 "capped size: eff %g", g.eff[1]);
    ZB_CHECK(near(g.eff[0], eff[0], 1e-9) && near(g.eff[2], eff[2], 1e-9) && max > 40);
    g.time_s[1] = over + 2 * g.dim[1] * g.dim[1] * g.dim[1] / (peak * eff[1]);
    ZB_CHECK(zb_calib_fit_gemm(&g, 0, over, &rms, &max) == ZB_ERR_INVALID);
    ZB_CHECK(zb_calib_fit_gemm(&g, peak, -1, &rms, &max) == ZB_ERR_INVALID);
    g.dim[2] = g.dim[1];
    ZB_CHECK(zb_calib_fit_gemm(&g, peak, over, &rms, &max) == ZB_ERR_INVALID);
}

/* time = overhead + work / rate: attention's efficiency and the element-wise bandwidth. */
static void test_rate(void) {
    const double over = 3e-6, rate = 4e10;
    double work[3] = {1e5, 1e6, 1e7}, t[3];
    for (int i = 0; i < 3; i++) t[i] = over + work[i] / rate;
    zb_calib_rate r;
    ZB_CHECK_OK(zb_calib_fit_rate(work, t, 3, over, &r));
    ZB_CHECK(near(r.rate, rate, 1e-9) && r.n_points == 3 && r.max_residual_pct < 1e-6);
    t[1] *= 1.2;
    ZB_CHECK_OK(zb_calib_fit_rate(work, t, 3, over, &r));
    ZB_CHECK(r.max_residual_pct > 5 && r.rms_residual_pct > 1);
    t[0] = over / 2; /* no longer than the overhead */
    ZB_CHECK(zb_calib_fit_rate(work, t, 3, over, &r) == ZB_ERR_INVALID);
    ZB_CHECK(zb_calib_fit_rate(work, t, 0, over, &r) == ZB_ERR_INVALID);
    /* the element-wise fit is the alpha-beta fit with one step: latency = the per-op overhead */
    zb_calib_point p[4];
    for (int i = 0; i < 4; i++) {
        double bytes = 12288.0 * (1 << (2 * i));
        p[i] = (zb_calib_point){1, bytes, over + bytes / rate};
    }
    zb_calib_fit f;
    ZB_CHECK_OK(zb_calib_fit_alpha_beta(p, 4, &f));
    ZB_CHECK(near(f.latency_s, over, 1e-9) && near(f.bandwidth_bytes_per_s, rate, 1e-9));
}

/* beside = alone + overlap f / (1 + f). */
/* The model's own GEMMs replace the square sweep's entry at their smallest
 * dimension (64) and are inserted where it has none (100), FLOP-weighted. */
static void test_gemm_shapes(void) {
    const double peak = 1e12;
    zb_calib_gemm g = {3, {16, 64, 256}, {1, 1, 1}, {0.2, 0.5, 0.8}};
    g.overhead_s = 0;
    const zb_calib_gemm_shape s[3] = {
        {64, 1024, 64, 2.0 * 64 * 1024 * 64 / (peak * 0.25)}, /* at 0.25 of peak */
        {1024, 64, 64, 2.0 * 1024 * 64 * 64 / (peak * 0.5)},  /* at 0.5: together 1/3 */
        {100, 200, 300, 2.0 * 100 * 200 * 300 / (peak * 0.6)},
    };
    ZB_CHECK_OK(zb_calib_gemm_add_shapes(&g, s, 3, peak));
    ZB_CHECK_MSG(g.n == 4 && g.dim[1] == 64 && g.dim[2] == 100 && g.dim[3] == 256, "table %d", g.n);
    ZB_CHECK_MSG(near(g.eff[1], 1.0 / 3.0, 1e-12) && near(g.eff[2], 0.6, 1e-12), "eff %g %g", g.eff[1], g.eff[2]);
    ZB_CHECK(g.from_model[1] && g.from_model[2] && !g.from_model[0] && !g.from_model[3] && g.eff[3] == 0.8);
    ZB_CHECK(zb_calib_gemm_eff_at(&g, 8) == 0.2 && zb_calib_gemm_eff_at(&g, 99) == g.eff[1]);
    /* priced at 1/3, the two shapes are off by -25 % and +50 %; the third exactly */
    ZB_CHECK_MSG(near(g.model_max_pct, 50.0, 1e-9), "max residual %g", g.model_max_pct);
    const zb_calib_gemm_shape bad = {0, 1, 1, 1e-6};
    ZB_CHECK(zb_calib_gemm_add_shapes(&g, &bad, 1, peak) == ZB_ERR_INVALID);
    zb_error_clear();
}

static void test_kernel(void) {
    const double bw = 50e9, over = 2e-6;
    /* eff 0.2: 1 and 2 MB at 10 GB/s after the overhead */
    zb_calib_kernel k = {"rope_fwd", 2, {1e6, 2e6}, {over + 1e6 / 10e9, over + 2e6 / 10e9}};
    ZB_CHECK_OK(zb_calib_fit_kernel(&k, bw, over));
    ZB_CHECK_MSG(near(k.eff, 0.2, 1e-12) && !k.clamped && k.fit.rms_residual_pct < 1e-9, "eff %g", k.eff);
    /* a kernel no slower than the overhead: at the bound, marked */
    zb_calib_kernel quick = {"residual_fwd", 2, {1e3, 2e3}, {over, over * 0.9}};
    ZB_CHECK_OK(zb_calib_fit_kernel(&quick, bw, over));
    ZB_CHECK(quick.eff == ZB_CALIB_KERNEL_EFF_MAX && quick.clamped);
    /* faster than the bound allows after the overhead: clamped too */
    zb_calib_kernel fast = {"fill", 1, {1e9}, {over + 1e9 / (20 * bw)}};
    ZB_CHECK_OK(zb_calib_fit_kernel(&fast, bw, over));
    ZB_CHECK(fast.eff == ZB_CALIB_KERNEL_EFF_MAX && fast.clamped);
    zb_calib_kernel none = {"fill", 0};
    ZB_CHECK(zb_calib_fit_kernel(&none, bw, over) == ZB_ERR_INVALID);
    zb_error_clear();
    ZB_CHECK(zb_calib_fit_kernel(&k, 0, over) == ZB_ERR_INVALID);
    zb_error_clear();
}

static void test_slowdown(void) {
    const double f = 0.5;
    double alone[5], beside[5], overlap[5];
    for (int i = 0; i < 5; i++) {
        alone[i] = 1e-3 * (1 + 0.01 * i);
        overlap[i] = 4e-4;
        beside[i] = alone[i] + overlap[i] * f / (1 + f);
    }
    zb_calib_slowdown s;
    ZB_CHECK_OK(zb_calib_fit_slowdown(alone, beside, overlap, 5, &s));
    ZB_CHECK_MSG(near(s.factor, f, 1e-9) && !s.clamped && s.max_residual_pct < 1e-6 && s.n_pairs == 5,
                 "factor %g", s.factor);
    /* faster beside the other kind: no slowdown, clamped to 0 */
    for (int i = 0; i < 5; i++) beside[i] = alone[i] * 0.9;
    ZB_CHECK_OK(zb_calib_fit_slowdown(alone, beside, overlap, 5, &s));
    ZB_CHECK(s.factor == 0 && s.clamped && s.max_residual_pct > 5);
    /* more extra time than the overlap itself: beyond any factor, clamped to 10 */
    for (int i = 0; i < 5; i++) beside[i] = alone[i] + 2 * overlap[i];
    ZB_CHECK_OK(zb_calib_fit_slowdown(alone, beside, overlap, 5, &s));
    ZB_CHECK(s.factor == 10 && s.clamped);
    /* paired: one pair whose prefetch step fell in a fast spell moves the
     * median of beside below alone's, not the median of the differences */
    const double base[5] = {1e-3, 2e-3, 10e-3, 11e-3, 12e-3};
    for (int i = 0; i < 5; i++) {
        alone[i] = base[i];
        beside[i] = base[i] + overlap[i] * f / (1 + f) - (i == 2 ? 8.5e-3 : 0.0);
    }
    ZB_CHECK_OK(zb_calib_fit_slowdown(alone, beside, overlap, 5, &s));
    ZB_CHECK_MSG(near(s.factor, f, 1e-9) && !s.clamped, "paired factor %g, expected %g", s.factor, f);
    for (int i = 0; i < 5; i++) overlap[i] = 0;
    ZB_CHECK(zb_calib_fit_slowdown(alone, beside, overlap, 5, &s) == ZB_ERR_INVALID);
    ZB_CHECK(zb_calib_fit_slowdown(alone, beside, overlap, 0, &s) == ZB_ERR_INVALID);
}

int main(void) {
    test_kernel();
    test_gemm_shapes();
    test_alpha_beta();
    test_gemm();
    test_rate();
    test_slowdown();
    return zb_test_finish("test_calib_fit");
}
