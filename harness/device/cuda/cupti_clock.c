/* CUPTI clock -> harness clock (zb_clock_map in cupti_map.h).
 *
 * Model: with x = cupti - ref_cupti and d = (mono - ref_mono) - x for the
 * reference pair (the first one), d = a + e*x is fitted by least squares over
 * the stored pairs (two-pass: means first, so large x stay exact enough), and
 * mono = ref_mono + x + round(a + e*x). Keeping x and the unit slope in int64
 * makes a pure offset exact to the nanosecond; only the small correction
 * a + e*x goes through double.
 *
 * At tracer start, zb_clock_map_decide says whether the records can be
 * trusted on the harness clock: never shifted silently (docs/design.md §9). */
#include "cupti_map.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void zb_clock_map_init(zb_clock_map *m) { memset(m, 0, sizeof *m); }

static double zb_clock_map_model(const zb_clock_map *m, int64_t x) {
    return m->offset_ns + m->drift * (double)x;
}

static void zb_clock_map_fit(zb_clock_map *m) {
    const zb_clock_pair *ref = &m->pairs[0];
    size_t n = m->n_pairs;
    double xm = 0, dm = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t x = m->pairs[i].cupti_ns - ref->cupti_ns;
        int64_t d = (m->pairs[i].mono_ns - ref->mono_ns) - x;
        xm += (double)x;
        dm += (double)d;
    }
    xm /= (double)n;
    dm /= (double)n;
    double sxx = 0, sxd = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t x = m->pairs[i].cupti_ns - ref->cupti_ns;
        int64_t d = (m->pairs[i].mono_ns - ref->mono_ns) - x;
        sxx += ((double)x - xm) * ((double)x - xm);
        sxd += ((double)x - xm) * ((double)d - dm);
    }
    m->drift = sxx > 0 ? sxd / sxx : 0.0;
    m->offset_ns = dm - m->drift * xm;
}

void zb_clock_map_add(zb_clock_map *m, int64_t cupti_ns, int64_t mono_ns, int64_t *residual_ns) {
    int64_t residual = 0;
    if (m->n_pairs > 0) {
        residual = mono_ns - zb_clock_map_convert(m, cupti_ns);
        int64_t mag = residual < 0 ? -residual : residual;
        if (mag > m->max_residual_ns) m->max_residual_ns = mag;
    }
    if (residual_ns) *residual_ns = residual;
    if (m->n_pairs == ZB_CLOCK_MAP_MAX_PAIRS) {
        /* Keep the reference pair; drop the oldest after it. */
        memmove(&m->pairs[1], &m->pairs[2], (ZB_CLOCK_MAP_MAX_PAIRS - 2) * sizeof m->pairs[0]);
        m->n_pairs--;
    }
    m->pairs[m->n_pairs].cupti_ns = cupti_ns;
    m->pairs[m->n_pairs].mono_ns = mono_ns;
    m->n_pairs++;
    zb_clock_map_fit(m);
}

int64_t zb_clock_map_convert(const zb_clock_map *m, int64_t cupti_ns) {
    if (m->n_pairs == 0) return cupti_ns;
    const zb_clock_pair *ref = &m->pairs[0];
    int64_t x = cupti_ns - ref->cupti_ns;
    return ref->mono_ns + x + (int64_t)llround(zb_clock_map_model(m, x));
}

zb_status zb_clock_map_measure(zb_clock_map *m, int64_t (*read_other)(void *ctx), void *ctx,
                               int n_samples, int64_t *residual_ns) {
    if (!read_other || n_samples < 1) {
        return ZB_FAIL(ZB_ERR_INVALID, "clock pair: no reader or n_samples %d < 1", n_samples);
    }
    int64_t best_width = -1, best_other = 0, best_mid = 0;
    for (int i = 0; i < n_samples; i++) {
        int64_t before = zb_now_ns();
        int64_t other = read_other(ctx);
        int64_t after = zb_now_ns();
        if (other < 0) continue;
        int64_t width = after - before;
        if (best_width < 0 || width < best_width) {
            best_width = width;
            best_other = other;
            best_mid = before + width / 2;
        }
    }
    if (best_width < 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "clock pair: the other clock could not be read (%d tries)",
                       n_samples);
    }
    zb_clock_map_add(m, best_other, best_mid, residual_ns);
    return ZB_OK;
}

zb_clock_decision zb_clock_map_decide(const zb_clock_map *m, char *msg, size_t n) {
    if (n) msg[0] = '\0';
    if (m->n_pairs == 0) {
        snprintf(msg, n, "no CUPTI clock reading to pair with CLOCK_MONOTONIC: records cannot be converted");
        return ZB_CLOCK_REFUSE;
    }
    for (size_t i = 1; i < m->n_pairs; i++) {
        const zb_clock_pair *a = &m->pairs[i - 1], *b = &m->pairs[i];
        /* Pairs are measured one after another, so both clocks must advance. */
        if (b->mono_ns <= a->mono_ns || b->cupti_ns <= a->cupti_ns) {
            snprintf(msg, n, "CUPTI clock does not advance with CLOCK_MONOTONIC (%lld then %lld ns): records "
                     "cannot be converted", (long long)a->cupti_ns, (long long)b->cupti_ns);
            return ZB_CLOCK_REFUSE;
        }
    }
    if (m->max_residual_ns > ZB_CLOCK_MAP_TOLERANCE_NS) {
        snprintf(msg, n, "CUPTI clock pairs disagree by %lld ns (more than %d ns): records cannot be converted",
                 (long long)m->max_residual_ns, ZB_CLOCK_MAP_TOLERANCE_NS);
        return ZB_CLOCK_REFUSE;
    }
    const zb_clock_pair *last = &m->pairs[m->n_pairs - 1];
    int64_t ahead = last->cupti_ns - last->mono_ns; /* |1.7e18| fits: both are non-negative */
    if (ahead >= -ZB_CLOCK_AGREE_NS && ahead <= ZB_CLOCK_AGREE_NS) return ZB_CLOCK_SAME;
    snprintf(msg, n, "CUPTI clock is %.6g s %s CLOCK_MONOTONIC: records converted through fitted clock pairs",
             fabs((double)ahead) / 1e9, ahead > 0 ? "ahead of" : "behind");
    return ZB_CLOCK_CONVERT;
}
