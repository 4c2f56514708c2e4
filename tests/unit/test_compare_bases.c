/* compare against several base files (tools/compare_bases.c): the base is
 * the median of the base runs' figures; NEW regresses only when worse than
 * their range widened by the tolerance and, with samples, when the test
 * over the pooled base samples finds it worse; inside the widened range a
 * change beyond the tolerance is noise; a base from another environment is
 * left out and named; with every base left out nothing is comparable
 * (exit 3). Synthetic runs, nothing timed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "compare.h"
#include "zb_test.h"

/* A step run's metrics: step time `ms`, with 20 samples ms +- 1 % unless
 * `samples` is false. */
static json_t *metrics(double ms, bool samples) {
    json_t *m = json_pack("{s:f, s:f}", "step_time_ms", ms, "tokens_per_s", 1000.0 / ms);
    if (samples) {
        json_t *a = json_array();
        for (int i = 0; i < 20; i++) json_array_append_new(a, json_real(ms * (0.99 + 0.001 * i)));
        json_object_set_new(m, "samples", json_pack("{s:o}", "step_time_ms", a));
    }
    return m;
}

static zb_verdict judge(const double *base_ms, size_t k, double new_ms, bool samples, zb_cmp_row *row) {
    const json_t *bm[8];
    json_t *owned[8];
    for (size_t j = 0; j < k; j++) bm[j] = owned[j] = metrics(base_ms[j], samples);
    json_t *nm = metrics(new_ms, samples);
    memset(row, 0, sizeof *row);
    zb_compare_judge_bases(zb_metric_find("step_time_ms"), 5.0, 0.05, bm, k, nm, row);
    for (size_t j = 0; j < k; j++) json_decref(owned[j]);
    json_decref(nm);
    return row->verdict;
}

static void test_judge(void) {
    const double base[] = {10.0, 11.0, 12.0}, two[] = {10.0, 12.0};
    zb_cmp_row r;
    /* Three base runs: the rerun bound over their figures (rerun.h:
     * 8.066..14.919 for {10, 11, 12}), samples or not; inside it, worse
     * than the tolerance is noise. */
    ZB_CHECK(judge(base, 3, 11.2, true, &r) == ZB_VERDICT_OK && r.n_base_runs == 3 && r.base == 11.0);
    ZB_CHECK(r.base_lo == 10.0 && r.base_hi == 12.0 && r.basis == ZB_BASIS_RERUNS);
    ZB_CHECK_MSG(fabs(r.rerun_hi - 14.918533) < 1e-4 && fabs(r.detectable - 61.717) < 1e-2 && r.runs_needed == 0,
                 "bound %g, detects %g %%, runs %zu", r.rerun_hi, r.detectable, r.runs_needed);
    ZB_CHECK(judge(base, 3, 13.0, true, &r) == ZB_VERDICT_NOISE); /* +18 %: inside what a rerun gives */
    ZB_CHECK_MSG(fabs(r.delta - 100.0 * 2.0 / 11.0) < 1e-9, "delta %g against the median", r.delta);
    ZB_CHECK(judge(base, 3, 15.0, true, &r) == ZB_VERDICT_REGRESSION);
    ZB_CHECK(judge(base, 3, 15.0, false, &r) == ZB_VERDICT_REGRESSION && r.basis == ZB_BASIS_RERUNS);
    ZB_CHECK(judge(base, 3, 9.0, true, &r) == ZB_VERDICT_OK && judge(base, 3, 8.0, true, &r) == ZB_VERDICT_BETTER);
    /* steady bases: a 6 % change beyond the bound and the tolerance */
    const double steady[] = {10.0, 10.05, 9.95, 10.0};
    ZB_CHECK(judge(steady, 4, 10.6, true, &r) == ZB_VERDICT_REGRESSION && r.detectable < 5.0);
    ZB_CHECK(judge(steady, 4, 10.4, true, &r) == ZB_VERDICT_OK); /* beyond the bound, within the tolerance */
    /* Two base runs: their range widened by the tolerance (12.6), with the
     * pooled test where there are samples */
    ZB_CHECK(judge(two, 2, 12.5, true, &r) == ZB_VERDICT_NOISE && r.basis == ZB_BASIS_TEST);
    ZB_CHECK(judge(two, 2, 13.0, true, &r) == ZB_VERDICT_REGRESSION && r.p < 0.001);
    ZB_CHECK(judge(two, 2, 9.0, true, &r) == ZB_VERDICT_BETTER);
    ZB_CHECK(judge(two, 2, 13.0, false, &r) == ZB_VERDICT_REGRESSION && r.basis == ZB_BASIS_RULE);
    ZB_CHECK(judge(two, 2, 12.5, false, &r) == ZB_VERDICT_NOISE);
    /* one base run: the two-run judgement (12.5 against 10 is +25 %) */
    ZB_CHECK(judge(base, 1, 12.5, true, &r) == ZB_VERDICT_REGRESSION && r.n_base_runs == 1);
}

/* The text names a metric whose base runs are too noisy for its
 * tolerance, with what it can detect. */
static void test_noise_line(void) {
    json_t *b[3], *nw;
    const char *names[] = {"a.json", "b.json", "c.json"};
    const double ms[] = {10.0, 11.0, 12.0};
    for (int j = 0; j < 3; j++) {
        b[j] = json_pack("{s:s, s:{s:s}, s:[{s:s, s:s, s:i, s:o}]}", "schema", "zerobench/1", "meta", "backend", "cpu",
                         "runs", "bench", "step", "mode", "sync", "ranks", 2, "metrics", metrics(ms[j], false));
    }
    nw = json_pack("{s:s, s:{s:s}, s:[{s:s, s:s, s:i, s:o}]}", "schema", "zerobench/1", "meta", "backend", "cpu", "runs",
                   "bench", "step", "mode", "sync", "ranks", 2, "metrics", metrics(11.5, false));
    zb_cmp_result r = {0};
    r.new_path = "new.json";
    ZB_CHECK_OK(zb_compare_bases((const json_t *const *)b, names, 3, nw, NULL, 0, &r));
    char *text = NULL;
    ZB_CHECK_OK(zb_compare_render(&r, ZB_CMP_TEXT, false, &text));
    ZB_CHECK(r.gate_family == 1); /* step_time_ms: tokens/s derives from it */
    ZB_CHECK_MSG(text && strstr(text, "# noise too large for step_time_ms: the 3 base runs vary by 9.55 %") &&
                     strstr(text, "only a change of 61.7 % or more is caught") &&
                     strstr(text, "no number of base runs catches it"),
                 "%s", text ? text : "(null)");
    ZB_CHECK(text && !strstr(text, "noise too large for tokens_per_s")); /* derived: its source's verdict */
    free(text);
    zb_compare_result_free(&r);
    for (int j = 0; j < 3; j++) json_decref(b[j]);
    json_decref(nw);
}

/* A results document: one step run of step time ms, meta.blas_core.ran core. */
static json_t *doc(double ms, const char *core) {
    json_t *run = json_pack("{s:s, s:s, s:s, s:i, s:o}", "bench", "step", "model", "tiny", "mode", "sync", "ranks", 2,
                            "metrics", metrics(ms, true));
    return json_pack("{s:s, s:{s:{s:s}}, s:[o]}", "schema", "zerobench/1", "meta", "blas_core", "ran", core, "runs", run);
}

static void test_docs(void) {
    json_t *b[3] = {doc(10.0, "Zen"), doc(11.0, "Zen"), doc(12.0, "Prescott")};
    json_t *nw = doc(11.9, "Zen");
    const char *names[3] = {"a.json", "b.json", "c.json"};
    zb_cmp_result r;
    memset(&r, 0, sizeof r);
    r.new_path = "new.json";
    ZB_CHECK_OK(zb_compare_bases((const json_t *const *)b, names, 3, nw, NULL, 0, &r));
    /* c.json ran Prescott: left out; against 10..11 widened to 11.55, 11.9 regresses */
    ZB_CHECK(r.n_bases == 3 && r.n_bases_left_out == 1 && r.n_pairs == 1 && r.n_env_lines == 1);
    ZB_CHECK_MSG(strstr(r.env_lines[0], "not comparable: blas_core: BASE c.json Prescott, NEW Zen"), "'%s'",
                 r.env_lines[0]);
    ZB_CHECK(r.rows[0].verdict == ZB_VERDICT_REGRESSION && r.rows[0].n_base_runs == 2);
    ZB_CHECK(r.rows[1].verdict == ZB_VERDICT_REGRESSION && r.rows[1].basis == ZB_BASIS_SOURCE);
    ZB_CHECK(zb_compare_exit_code(&r) == ZB_CMP_EXIT_REGRESSION && !strncmp(r.base_path, "3 files: a.json", 15));
    char *text = NULL;
    ZB_CHECK_OK(zb_compare_render(&r, ZB_CMP_TEXT, false, &text));
    ZB_CHECK_MSG(text && strstr(text, "2 base runs 10..11") && strstr(text, "3 base files, 1 left out"), "%s", text);
    free(text);
    zb_compare_result_free(&r);
    /* every base from another environment: judged against them, not comparable, exit 3 */
    json_t *other = doc(11.0, "Haswell");
    memset(&r, 0, sizeof r);
    r.new_path = "new.json";
    ZB_CHECK_OK(zb_compare_bases((const json_t *const *)b, names, 2, other, NULL, 0, &r));
    ZB_CHECK(r.n_bases_left_out == 2 && r.n_not_comparable_env == 2 && r.n_regressions == 0);
    ZB_CHECK(zb_compare_exit_code(&r) == ZB_CMP_EXIT_NOT_COMPARABLE);
    zb_compare_result_free(&r);
    json_decref(other);
    for (int i = 0; i < 3; i++) json_decref(b[i]);
    json_decref(nw);
}

int main(void) {
    test_judge();
    test_noise_line();
    test_docs();
    return zb_test_finish("test_compare_bases");
}
