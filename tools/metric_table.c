/* The judged metrics (metric_table.h).
 *
 * Defaults: times 5 % (the order of run-to-run variation of a collective or a
 * step on a quiet machine), exposed and total communication 10 % (small
 * differences of large numbers in prefetch), memory 1 % (allocation is
 * deterministic: any growth is a change of the code), percentages in points
 * (a relative tolerance on an overlap near 0 would flag every rerun), wrong
 * elements 0. Metrics left out are derived from these (vs-sync, overhead),
 * counts fixed by a formula (comm bytes, FLOPs per token), spreads (their
 * own min/max) or not performance (loss, tracer losses). The last field
 * names the metric a judged one is computed from in the same run: bandwidth
 * and TFLOP/s are bytes or FLOPs over time_us, tokens/s and MFU/HFU are
 * tokens or FLOPs over step_time_ms, overlap_min_pct is the least of
 * overlap_pct's values; compare judges them by their source. The role
 * (metric_table.h) says which verdicts decide compare's exit code: the
 * headline times by a test over the noise, memory and wrong elements on
 * the tolerance alone (allocation is deterministic), the step's breakdown
 * only with --gate. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metric_table.h"

static const zb_metric_def zb_metrics_judged[] = {
    /* collectives */
    {"time_us", "us", ZB_BETTER_LOWER, 5.0, false},
    {"algbw_gbps", "GB/s", ZB_BETTER_HIGHER, 5.0, false, "time_us"},
    {"busbw_gbps", "GB/s", ZB_BETTER_HIGHER, 5.0, false, "time_us"},
    {"direct_time_us", "us", ZB_BETTER_LOWER, 5.0, false},
    {"wrong", "elements", ZB_BETTER_LOWER, 0.0, true, NULL, ZB_ROLE_EXACT},
    /* gemm */
    {"tflops", "TFLOP/s", ZB_BETTER_HIGHER, 5.0, false, "time_us"},
    {"pct_peak", "%", ZB_BETTER_HIGHER, 4.0, true, "time_us"},
    /* step */
    {"step_time_ms", "ms", ZB_BETTER_LOWER, 5.0, false},
    {"tokens_per_s", "tokens/s", ZB_BETTER_HIGHER, 5.0, false, "step_time_ms"},
    {"tokens_per_s_per_rank", "tokens/s", ZB_BETTER_HIGHER, 5.0, false, "step_time_ms"},
    {"mfu_pct", "%", ZB_BETTER_HIGHER, 2.0, true, "step_time_ms"},
    {"hfu_pct", "%", ZB_BETTER_HIGHER, 2.0, true, "step_time_ms"},
    {"overlap_pct", "%", ZB_BETTER_HIGHER, 5.0, true, NULL, ZB_ROLE_DIAGNOSTIC},
    {"overlap_min_pct", "%", ZB_BETTER_HIGHER, 10.0, true, "overlap_pct", ZB_ROLE_DIAGNOSTIC},
    {"hidden_pct", "%", ZB_BETTER_HIGHER, 10.0, true, NULL, ZB_ROLE_DIAGNOSTIC},
    {"exposed_comm_ms", "ms", ZB_BETTER_LOWER, 10.0, false, NULL, ZB_ROLE_DIAGNOSTIC},
    {"compute_ms", "ms", ZB_BETTER_LOWER, 5.0, false, NULL, ZB_ROLE_DIAGNOSTIC},
    {"comm_ms", "ms", ZB_BETTER_LOWER, 10.0, false, NULL, ZB_ROLE_DIAGNOSTIC},
    {"compute_slowdown_pct", "%", ZB_BETTER_LOWER, 5.0, true, NULL, ZB_ROLE_DIAGNOSTIC},
    {"peak_mem_bytes", "bytes", ZB_BETTER_LOWER, 1.0, false, NULL, ZB_ROLE_EXACT},
    {"device_pool_reserved_high_bytes", "bytes", ZB_BETTER_LOWER, 1.0, false, NULL, ZB_ROLE_EXACT},
    {"device_used_high_bytes", "bytes", ZB_BETTER_LOWER, 1.0, false, NULL, ZB_ROLE_EXACT},
};

#define ZB_N_JUDGED ((int)(sizeof zb_metrics_judged / sizeof zb_metrics_judged[0]))

const zb_metric_def *zb_metric_at(int i) { return i >= 0 && i < ZB_N_JUDGED ? &zb_metrics_judged[i] : NULL; }

const zb_metric_def *zb_metric_find(const char *key) {
    for (int i = 0; i < ZB_N_JUDGED; i++) {
        if (!strcmp(zb_metrics_judged[i].key, key)) return &zb_metrics_judged[i];
    }
    return NULL;
}

bool zb_metric_against_peak(const zb_metric_def *m) {
    return m && (!strcmp(m->key, "mfu_pct") || !strcmp(m->key, "hfu_pct") || !strcmp(m->key, "pct_peak"));
}

zb_metric_role zb_metric_role_of(const zb_metric_def *m) {
    const zb_metric_def *src = m->derived_from ? zb_metric_find(m->derived_from) : NULL;
    return src ? src->role : m->role;
}

void zb_metric_names(char *out, size_t n) {
    size_t used = 0;
    if (n) out[0] = '\0';
    for (int i = 0; i < ZB_N_JUDGED && used < n; i++) {
        used += (size_t)snprintf(out + used, n - used, "%s%s", i ? ", " : "", zb_metrics_judged[i].key);
    }
}

bool zb_metric_value(const json_t *metrics, const char *key, double *out) {
    const json_t *v = json_object_get(metrics, key);
    if (!json_is_number(v)) return false;
    double x = json_number_value(v);
    if (!isfinite(x)) return false;
    *out = x;
    return true;
}

bool zb_metric_spread(const json_t *metrics, const char *key, double value, double *lo, double *hi) {
    const char *unit = strrchr(key, '_');
    if (!unit || unit == key) return false;
    size_t stem = (size_t)(unit - key);
    char kmin[128], kmax[128];
    if (snprintf(kmin, sizeof kmin, "%.*s_min%s", (int)stem, key, unit) >= (int)sizeof kmin) return false;
    snprintf(kmax, sizeof kmax, "%.*s_max%s", (int)stem, key, unit);
    bool has_lo = zb_metric_value(metrics, kmin, lo), has_hi = zb_metric_value(metrics, kmax, hi);
    if (!has_lo) *lo = value;
    if (!has_hi) *hi = value;
    if (*lo > value) *lo = value; /* a spread always holds its own median */
    if (*hi < value) *hi = value;
    return has_lo || has_hi;
}

size_t zb_metric_samples(const json_t *metrics, const char *key, double **out) {
    const json_t *arr = json_object_get(json_object_get(metrics, "samples"), key);
    size_t n = json_array_size(arr), k = 0;
    *out = NULL;
    if (!n || !(*out = (double *)malloc(n * sizeof **out))) return 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(arr, i);
        if (json_is_number(v) && isfinite(json_number_value(v))) (*out)[k++] = json_number_value(v);
    }
    if (!k) {
        free(*out);
        *out = NULL;
    }
    return k;
}
