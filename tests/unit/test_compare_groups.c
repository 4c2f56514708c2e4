/* compare with several runs on both sides (tools/compare_groups.c) and the
 * gate's roles (metric_table.h): Welch's t over the runs' figures decides
 * with the tolerance; too few figures on a side fall back to one NEW run;
 * a regression of a diagnostic (comm_ms) is "worse (not gated)" and exits
 * 0 unless --gate names it; exact metrics (memory) stay out of the
 * family; NEW files from another setup are unusable input. Synthetic
 * runs, nothing timed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "compare.h"
#include "zb_test.h"

/* A step run's metrics: step time ms, comm comm_ms, memory 1000 bytes. */
static json_t *metrics(double ms, double comm) {
    return json_pack("{s:f, s:f, s:f, s:f}", "step_time_ms", ms, "tokens_per_s", 1000.0 / ms, "comm_ms", comm,
                     "peak_mem_bytes", 1000.0);
}

static json_t *doc(double ms, double comm, const char *core) {
    json_t *run = json_pack("{s:s, s:s, s:s, s:i, s:o}", "bench", "step", "model", "tiny", "mode", "sync", "ranks", 2,
                            "metrics", metrics(ms, comm));
    return json_pack("{s:s, s:{s:{s:s}}, s:[o]}", "schema", "zerobench/1", "meta", "blas_core", "ran", core, "runs", run);
}

static const zb_cmp_row *row_of(const zb_cmp_result *r, const char *key) {
    for (size_t i = 0; i < r->n_rows; i++) {
        if (!strcmp(r->rows[i].m->key, key)) return &r->rows[i];
    }
    return NULL;
}

static void test_judge(void) {
    /* logs of {10, 10.4, 9.8, 10.1} vs {11, 11.3, 10.7}: Welch t 4.3853,
     * one-sided p 0.0053877 (scipy), medians 10.05 -> 11 (+9.45 %) */
    const double b[] = {10.0, 10.4, 9.8, 10.1}, n[] = {11.0, 11.3, 10.7};
    const json_t *bm[4], *nm[3];
    json_t *own[7];
    for (int j = 0; j < 4; j++) bm[j] = own[j] = metrics(b[j], 1.0);
    for (int j = 0; j < 3; j++) nm[j] = own[4 + j] = metrics(n[j], 1.0);
    const zb_metric_def *st = zb_metric_find("step_time_ms");
    zb_cmp_row r;
    memset(&r, 0, sizeof r);
    zb_compare_judge_groups(st, 5.0, 0.025, bm, 4, nm, 3, &r);
    ZB_CHECK(r.verdict == ZB_VERDICT_REGRESSION && r.basis == ZB_BASIS_GROUPS && r.n_base_runs == 4 && r.n_new_runs == 3);
    ZB_CHECK_MSG(fabs(r.p - 0.0053877) < 1e-6 && fabs(r.base - 10.05) < 1e-12 && fabs(r.new_value - 11.0) < 1e-12,
                 "p %g base %g new %g", r.p, r.base, r.new_value);
    ZB_CHECK(r.new_lo == 10.7 && r.new_hi == 11.3 && fabs(r.delta - 100.0 * 0.95 / 10.05) < 1e-9);
    /* at alpha 0.005 the same shift is not supported: no difference detectable */
    zb_compare_judge_groups(st, 5.0, 0.005, bm, 4, nm, 3, &r);
    ZB_CHECK(r.verdict == ZB_VERDICT_UNDETECTED);
    /* within a 10 % tolerance: ok, whatever the test */
    zb_compare_judge_groups(st, 10.0, 0.025, bm, 4, nm, 3, &r);
    ZB_CHECK(r.verdict == ZB_VERDICT_OK);
    /* swapped: better */
    zb_compare_judge_groups(st, 5.0, 0.025, nm, 3, bm, 4, &r);
    ZB_CHECK(r.verdict == ZB_VERDICT_BETTER);
    /* one NEW run with the figure: judged against the bases as one run */
    zb_compare_judge_groups(st, 5.0, 0.025, bm, 4, nm, 1, &r);
    ZB_CHECK(r.basis == ZB_BASIS_RERUNS && r.n_base_runs == 4);
    for (int j = 0; j < 7; j++) json_decref(own[j]);
}

static void test_docs(void) {
    json_t *b[3] = {doc(10.0, 1.0, "Zen"), doc(10.3, 1.1, "Zen"), doc(9.9, 0.9, "Zen")};
    json_t *n[3] = {doc(10.1, 2.0, "Zen"), doc(10.2, 2.2, "Zen"), doc(9.95, 2.1, "Zen")};
    const char *bn[3] = {"a.json", "b.json", "c.json"}, *nn[3] = {"x.json", "y.json", "z.json"};
    zb_cmp_result r;
    memset(&r, 0, sizeof r);
    ZB_CHECK_OK(zb_compare_groups((const json_t *const *)b, bn, 3, (const json_t *const *)n, nn, 3, NULL, 0, &r));
    /* family: step_time_ms only (tokens/s derived, comm_ms a diagnostic, memory exact) */
    ZB_CHECK_MSG(r.gate_family == 1 && r.n_news == 3 && r.n_pairs == 1, "family %zu", r.gate_family);
    const zb_cmp_row *comm = row_of(&r, "comm_ms"), *step = row_of(&r, "step_time_ms"), *mem = row_of(&r, "peak_mem_bytes");
    ZB_CHECK(comm && comm->verdict == ZB_VERDICT_WORSE && !comm->gated && comm->basis == ZB_BASIS_GROUPS);
    ZB_CHECK(step && step->verdict == ZB_VERDICT_OK && step->gated);
    ZB_CHECK(mem && mem->verdict == ZB_VERDICT_OK && mem->detectable == 0.0);
    ZB_CHECK(r.n_worse == 1 && r.n_regressions == 0 && zb_compare_exit_code(&r) == ZB_CMP_EXIT_PASS);
    ZB_CHECK(!strncmp(r.new_path, "3 files: x.json", 15) && !strncmp(r.base_path, "3 files: a.json", 15));
    char *text = NULL;
    ZB_CHECK_OK(zb_compare_render(&r, ZB_CMP_TEXT, false, &text));
    ZB_CHECK_MSG(text && strstr(text, "worse (not gated)") && strstr(text, "3 vs 3 runs") &&
                     strstr(text, "1 worse in metrics that do not gate"),
                 "%s", text ? text : "(null)");
    free(text);
    zb_compare_result_free(&r);
    /* --gate comm_ms: it gates, and joins the family */
    memset(&r, 0, sizeof r);
    r.gate[0] = zb_metric_find("comm_ms");
    r.n_gate = 1;
    ZB_CHECK_OK(zb_compare_groups((const json_t *const *)b, bn, 3, (const json_t *const *)n, nn, 3, NULL, 0, &r));
    ZB_CHECK(r.gate_family == 1 && row_of(&r, "comm_ms")->verdict == ZB_VERDICT_REGRESSION);
    ZB_CHECK(row_of(&r, "step_time_ms")->gated == false && zb_compare_exit_code(&r) == ZB_CMP_EXIT_REGRESSION);
    zb_compare_result_free(&r);
    /* --gate all: both in the family */
    memset(&r, 0, sizeof r);
    r.gate_all = true;
    ZB_CHECK_OK(zb_compare_groups((const json_t *const *)b, bn, 3, (const json_t *const *)n, nn, 3, NULL, 0, &r));
    ZB_CHECK(r.gate_family == 2 && r.n_regressions == 1);
    zb_compare_result_free(&r);
    /* one base file: unusable with several NEW files */
    memset(&r, 0, sizeof r);
    ZB_CHECK(zb_compare_groups((const json_t *const *)b, bn, 1, (const json_t *const *)n, nn, 3, NULL, 0, &r) ==
             ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "3 NEW files need at least 2 BASE files") != NULL);
    zb_compare_result_free(&r);
    /* a NEW file from another setup: unusable, named */
    json_t *odd = doc(10.0, 2.0, "Prescott"), *mixed[2] = {n[0], odd};
    memset(&r, 0, sizeof r);
    ZB_CHECK(zb_compare_groups((const json_t *const *)b, bn, 3, (const json_t *const *)mixed, nn, 2, NULL, 0, &r) ==
             ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "'x.json' and 'y.json' differ") &&
                     strstr(zb_error_message(), "blas_core"),
                 "%s", zb_error_message());
    zb_compare_result_free(&r);
    json_decref(odd);
    for (int i = 0; i < 3; i++) {
        json_decref(b[i]);
        json_decref(n[i]);
    }
}

int main(void) {
    test_judge();
    test_docs();
    return zb_test_finish("test_compare_groups");
}
