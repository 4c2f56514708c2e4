/* The documents zerobench export writes (export.h).
 *
 * github-action-benchmark's custom tools read a JSON array of {"name",
 * "unit", "value", "range", "extra"} (range and extra optional strings),
 * one direction per array: customSmallerIsBetter or customBiggerIsBetter
 * (the action's README, "Custom benchmarks"). Bencher's BMF is one object,
 * benchmark name -> measure -> {"value", "lower_value", "upper_value"}, the
 * bounds optional (bencher.dev, "Bencher Metric Format"); it has no
 * direction: a project sets one per measure in its thresholds. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "export.h"
#include "out_path.h"
#include "report.h"
#include "run_identity.h"

json_t *zb_export_github_entry(const char *benchmark, const zb_metric_def *m, double value, bool has_range,
                               double lo, double hi, const char *extra) {
    if (!isfinite(value)) return NULL;
    char name[256], range[80]; /* a benchmark name (< 200 bytes) and a key fit whole */
    snprintf(name, sizeof name, "%s / %s", benchmark, m->key);
    json_t *o = json_object();
    if (!o) return NULL;
    int bad = json_object_set_new(o, "name", json_string(name));
    bad |= json_object_set_new(o, "unit", json_string(m->unit));
    bad |= json_object_set_new(o, "value", json_real(value));
    if (has_range) {
        snprintf(range, sizeof range, "%.6g..%.6g", lo, hi);
        bad |= json_object_set_new(o, "range", json_string(range));
    }
    if (extra) bad |= json_object_set_new(o, "extra", json_string(extra));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* A meta string escaped and cut to 64 bytes (escape.h: valid UTF-8
 * whatever the file held), or "?" where the file has none. */
static const char *meta_text(const json_t *v, char out[80]) {
    const char *s = json_string_value(v);
    return zb_escape(s && *s ? s : "?", 64, out, 80);
}

/* The tooltip of a document's figures: where and from what they came. */
static void doc_extra(const json_t *doc, const char *name, char *out, size_t n) {
    const json_t *meta = json_object_get(doc, "meta");
    char git[80], backend[80], comm[80], host[80], date[80], shown[72];
    zb_shown_path(name, shown);
    snprintf(out, n, "git %s, %s/%s on %s, %s (%s)", meta_text(json_object_get(meta, "git_describe"), git),
             meta_text(json_object_get(meta, "backend"), backend), meta_text(json_object_get(meta, "comm"), comm),
             meta_text(json_array_get(json_object_get(meta, "hosts"), 0), host),
             meta_text(json_object_get(meta, "date_utc"), date), shown);
}

/* The run's benchmark name: its label, whether simulated, and its count
 * among the runs of that label so far (counts: label -> runs seen). */
static bool benchmark_name(const json_t *run, json_t *counts, char *out, size_t n) {
    char label[200]; /* the label (< 160 bytes), " (simulated)" and " #K" fit whole */
    zb_run_label(run, label, 160);
    if (zb_run_is_simulated(run)) {
        size_t len = strlen(label);
        snprintf(label + len, sizeof label - len, " (simulated)");
    }
    json_int_t k = json_integer_value(json_object_get(counts, label)) + 1;
    if (json_object_set_new(counts, label, json_integer(k))) return false;
    if (k == 1) snprintf(out, n, "%s", label);
    else snprintf(out, n, "%s #%lld", label, (long long)k);
    return true;
}

/* One run's figures into the three documents. */
static zb_status export_run(const json_t *run, const char *bench, const char *extra, json_t *smaller,
                            json_t *bigger, json_t *bmf, size_t *n_points) {
    const json_t *metrics = json_object_get(run, "metrics");
    json_t *measures = NULL;
    for (int k = 0; zb_metric_at(k); k++) {
        const zb_metric_def *m = zb_metric_at(k);
        double v, lo, hi;
        if (!zb_metric_value(metrics, m->key, &v)) continue;
        bool spread = zb_metric_spread(metrics, m->key, v, &lo, &hi);
        json_t *e = zb_export_github_entry(bench, m, v, spread, lo, hi, extra);
        json_t *arr = m->better == ZB_BETTER_HIGHER ? bigger : smaller;
        json_t *point = json_pack("{s:f}", "value", v);
        if (!measures && point && !json_object_get(bmf, bench)) {
            measures = json_object();
            if (measures && json_object_set_new(bmf, bench, measures)) measures = NULL;
        }
        if (point && spread) {
            json_object_set_new(point, "lower_value", json_real(lo));
            json_object_set_new(point, "upper_value", json_real(hi));
        }
        if (!e || !point || !measures || json_array_append_new(arr, e) || json_object_set_new(measures, m->key, point)) {
            return ZB_FAIL(ZB_ERR_NOMEM, "export: out of memory");
        }
        (*n_points)++;
    }
    return ZB_OK;
}

zb_status zb_export_docs(const json_t *const *docs, const char *const *names, size_t n, json_t **smaller,
                         json_t **bigger, json_t **bmf, size_t *n_points) {
    *smaller = json_array();
    *bigger = json_array();
    *bmf = json_object();
    *n_points = 0;
    json_t *counts = json_object();
    zb_status s = *smaller && *bigger && *bmf && counts ? ZB_OK : ZB_FAIL(ZB_ERR_NOMEM, "export: out of memory");
    for (size_t d = 0; s == ZB_OK && d < n; d++) {
        const json_t *runs = json_object_get(docs[d], "runs");
        char extra[512];
        doc_extra(docs[d], names[d], extra, sizeof extra);
        for (size_t i = 0; s == ZB_OK && i < json_array_size(runs); i++) {
            char bench[200];
            const json_t *run = json_array_get(runs, i);
            if (!benchmark_name(run, counts, bench, sizeof bench)) s = ZB_FAIL(ZB_ERR_NOMEM, "export: out of memory");
            else s = export_run(run, bench, extra, *smaller, *bigger, *bmf, n_points);
        }
    }
    json_decref(counts);
    return s;
}
