/* zerobench export: results files (zerobench/1) as CI dashboards read them,
 * with no base run: github-action-benchmark's customSmallerIsBetter and
 * customBiggerIsBetter arrays (one direction per file, as the action reads
 * them) and Bencher's BMF object. The metric table (metric_table.h) decides
 * which figures are written, their unit and their direction. export.c is
 * the command, export_format.c builds the documents; compare's
 * github-benchmark output builds its entries here too. */
#ifndef ZB_EXPORT_H
#define ZB_EXPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "metric_table.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One entry of github-action-benchmark's custom array: {"name", "unit",
 * "value", "range" ("lo..hi", only when has_range), "extra" (only when
 * extra is not NULL)}; name is "BENCHMARK / metric key". NULL when out of
 * memory or value is not finite. */
json_t *zb_export_github_entry(const char *benchmark, const zb_metric_def *m, double value, bool has_range,
                               double lo, double hi, const char *extra);

/* What export writes, built from n loaded results documents (names[i]
 * names document i; zb_results_load's checks passed): *smaller and *bigger
 * the two arrays of github-action-benchmark (its customSmallerIsBetter and
 * customBiggerIsBetter tools), *bmf Bencher's object {benchmark: {measure:
 * {"value", "lower_value", "upper_value"}}}. A benchmark is a run: its
 * label (run_identity.h), " (simulated)" for a simulated run, and " #K"
 * for the K-th run of one label among all the documents; a measure is a
 * judged metric the run holds as a finite number, under its key, with the
 * run's min-max spread as the bounds where it records one. *n_points
 * counts the figures written (each in one array and in the object).
 * ZB_ERR_NOMEM; the caller json_decref's the three. */
zb_status zb_export_docs(const json_t *const *docs, const char *const *names, size_t n, json_t **smaller,
                         json_t **bigger, json_t **bmf, size_t *n_points);

#ifdef __cplusplus
}
#endif
#endif
