/* compare against the peak (tools/compare_peak.c): MFU, HFU and % of peak
 * are judged only between runs measured against the same peak (meta.peak's
 * figure and basis, else the runs' peak_source); otherwise they are "not
 * comparable (different peaks)", not a regression, and a line names both
 * peaks. MFU and HFU take their source step time's verdict. A BLAS core
 * that differs (compare_env.c) is named and makes every row not comparable
 * (exit 3) unless --ignore-env blas_core judges anyway. Nothing is timed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "compare.h"
#include "zb_test.h"

/* A step result: one run with MFU (and HFU) `mfu`, its meta's peak (JSON
 * text; NULL: none), BLAS core (NULL: none) and peak_source (NULL: none). */
static json_t *doc(double mfu, double step_ms, const char *peak_json, const char *core, const char *run_source) {
    json_t *meta = json_object();
    if (peak_json) json_object_set_new(meta, "peak", json_loads(peak_json, 0, NULL));
    if (core) json_object_set_new(meta, "blas_core", json_pack("{s:s}", "ran", core));
    json_t *run = json_pack("{s:s, s:s, s:s, s:i, s:{s:f, s:f, s:f}}", "bench", "step", "model", "tiny", "mode", "sync",
                            "ranks", 2, "metrics", "mfu_pct", mfu, "hfu_pct", mfu, "step_time_ms", step_ms);
    if (run_source) json_object_set_new(run, "peak_source", json_string(run_source));
    return json_pack("{s:s, s:o, s:[o]}", "schema", "zerobench/1", "meta", meta, "runs", run);
}

static const char *PEAK_A = "{\"gflops_per_rank\": 113.0, \"source\": \"cached measurement of 2026-01-02T03:04:05Z\","
                            " \"basis\": \"measurement of 2026-01-02T03:04:05Z on host vm x 1 thread(s)\"}";
static const char *PEAK_A2 = "{\"gflops_per_rank\": 113.0, \"source\": \"measured once on node 0 before work\","
                             " \"basis\": \"measurement of 2026-01-02T03:04:05Z on host vm x 1 thread(s)\"}";
static const char *PEAK_B = "{\"gflops_per_rank\": 85.2, \"source\": \"measured once on node 0 before work\","
                            " \"basis\": \"measurement of 2026-01-03T00:00:00Z on host vm x 1 thread(s)\"}";
static const char *PEAK_FLAG = "{\"gflops_per_rank\": 113.0, \"source\": \"--peak-gflops\", \"basis\": \"--peak-gflops\"}";

typedef struct outcome {
    zb_verdict mfu, hfu, step;
    size_t regressions, not_comparable, not_comparable_env;
    int exit_code;
    char text[8192];
    char peak_note[640], env[1024];
} outcome;

static outcome run_compare_ignoring(json_t *b, json_t *n, unsigned ignore) {
    outcome o;
    memset(&o, 0, sizeof o);
    zb_cmp_result r;
    memset(&r, 0, sizeof r);
    r.base_path = "base.json";
    r.new_path = "new.json";
    r.ignore_env = ignore;
    ZB_CHECK(b && n);
    if (b && n) ZB_CHECK_OK(zb_compare_docs(b, n, NULL, 0, &r));
    for (size_t i = 0; i < r.n_rows; i++) {
        if (!strcmp(r.rows[i].m->key, "mfu_pct")) o.mfu = r.rows[i].verdict;
        if (!strcmp(r.rows[i].m->key, "hfu_pct")) o.hfu = r.rows[i].verdict;
        if (!strcmp(r.rows[i].m->key, "step_time_ms")) o.step = r.rows[i].verdict;
    }
    o.regressions = r.n_regressions;
    o.not_comparable = r.n_not_comparable;
    o.not_comparable_env = r.n_not_comparable_env;
    o.exit_code = zb_compare_exit_code(&r);
    snprintf(o.peak_note, sizeof o.peak_note, "%s", r.peak_note);
    for (size_t i = 0; i < r.n_env_lines; i++) {
        size_t used = strlen(o.env);
        snprintf(o.env + used, sizeof o.env - used, "%s\n", r.env_lines[i]);
    }
    char *text = NULL;
    if (r.n_rows && zb_compare_render(&r, ZB_CMP_TEXT, false, &text) == ZB_OK) {
        snprintf(o.text, sizeof o.text, "%s", text);
        free(text);
    }
    zb_compare_result_free(&r);
    json_decref(b);
    json_decref(n);
    return o;
}

static outcome run_compare(json_t *b, json_t *n) { return run_compare_ignoring(b, n, 0); }

int main(void) {
    /* Same peak (one cached measurement): MFU judged, by its source step
     * time (10 -> 13.4 ms, MFU 40 -> 30 %): step, MFU and HFU regress. */
    outcome o = run_compare(doc(40, 10, PEAK_A, "SkylakeX", NULL), doc(30, 13.4, PEAK_A, "SkylakeX", NULL));
    ZB_CHECK(o.mfu == ZB_VERDICT_REGRESSION && o.step == ZB_VERDICT_REGRESSION && o.regressions == 3 &&
             o.not_comparable == 0);
    ZB_CHECK_MSG(strstr(o.text, "as step_time_ms"), "text:\n%s", o.text);
    /* MFU moved with no change of step time: one measurement, one verdict (ok). */
    o = run_compare(doc(40, 10, PEAK_A, NULL, NULL), doc(30, 10, PEAK_A, NULL, NULL));
    ZB_CHECK(o.mfu == ZB_VERDICT_OK && o.hfu == ZB_VERDICT_OK && o.regressions == 0);
    ZB_CHECK(o.peak_note[0] == '\0' && o.env[0] == '\0' && !strstr(o.text, "different"));
    /* The run that measured and the run that reused its measurement: one peak. */
    o = run_compare(doc(40, 10, PEAK_A2, NULL, NULL), doc(30, 13.4, PEAK_A, NULL, NULL));
    ZB_CHECK(o.mfu == ZB_VERDICT_REGRESSION && o.not_comparable == 0);

    /* Different peaks, slower kernel, "better" MFU: every row not
     * comparable (another BLAS core measured other kernels), exit 3, the
     * core and the peaks named. */
    o = run_compare(doc(20, 10, PEAK_A, "SkylakeX", NULL), doc(31, 24, PEAK_B, "Prescott", NULL));
    ZB_CHECK(o.mfu == ZB_VERDICT_NOT_COMPARABLE_ENV && o.step == ZB_VERDICT_NOT_COMPARABLE_ENV);
    ZB_CHECK(o.regressions == 0 && o.not_comparable_env == 3 && o.exit_code == ZB_CMP_EXIT_NOT_COMPARABLE);
    ZB_CHECK_MSG(strstr(o.env, "not comparable: blas_core: BASE SkylakeX, NEW Prescott"),
                 "env '%s'", o.env);
    ZB_CHECK_MSG(strstr(o.text, "# not comparable: blas_core: ") && strstr(o.text, "3 not comparable (environment)"),
                 "text:\n%s", o.text);
    /* --ignore-env blas_core: judged; MFU still not (different peaks), the
     * step time regresses, both peaks named. */
    o = run_compare_ignoring(doc(20, 10, PEAK_A, "SkylakeX", NULL), doc(31, 24, PEAK_B, "Prescott", NULL),
                             1u << zb_compare_env_key("blas_core"));
    ZB_CHECK(o.mfu == ZB_VERDICT_NOT_COMPARABLE && o.hfu == ZB_VERDICT_NOT_COMPARABLE);
    ZB_CHECK(o.step == ZB_VERDICT_REGRESSION && o.regressions == 1 && o.not_comparable == 2);
    ZB_CHECK(o.exit_code == ZB_CMP_EXIT_REGRESSION && strstr(o.env, "judged anyway: blas_core"));
    ZB_CHECK_MSG(strstr(o.peak_note, "different peaks: BASE 113 GFLOP/s per rank (cached measurement") &&
                     strstr(o.peak_note, "NEW 85.2 GFLOP/s per rank (measured once"),
                 "peak note '%s'", o.peak_note);
    ZB_CHECK_MSG(strstr(o.text, "# different peaks: ") && strstr(o.text, "not comparable (different peaks)") &&
                     strstr(o.text, "2 not comparable (different peaks)"),
                 "text:\n%s", o.text);
    /* Only the peak differs: MFU not judged, the rest is, exit 0 (a line says why). */
    o = run_compare(doc(20, 10, PEAK_A, NULL, NULL), doc(31, 10, PEAK_B, NULL, NULL));
    ZB_CHECK(o.mfu == ZB_VERDICT_NOT_COMPARABLE && o.step == ZB_VERDICT_OK && o.exit_code == ZB_CMP_EXIT_PASS);
    ZB_CHECK(zb_compare_env_key("nope") == -1);
    /* Equal figures, other basis (--peak-gflops against a measurement): not one peak. */
    o = run_compare(doc(40, 10, PEAK_A, NULL, NULL), doc(30, 10, PEAK_FLAG, NULL, NULL));
    ZB_CHECK(o.mfu == ZB_VERDICT_NOT_COMPARABLE && o.regressions == 0);
    /* Files before meta.peak: the runs' peak_source decides. */
    o = run_compare(doc(40, 10, NULL, NULL, "measured 99.4"), doc(30, 10, NULL, NULL, "measured 85.2"));
    ZB_CHECK(o.mfu == ZB_VERDICT_NOT_COMPARABLE && strstr(o.peak_note, "BASE measured 99.4; NEW measured 85.2"));
    o = run_compare(doc(40, 10, NULL, NULL, "profile h100_sxm bf16_flops"),
                    doc(30, 13.4, NULL, NULL, "profile h100_sxm bf16_flops"));
    ZB_CHECK(o.mfu == ZB_VERDICT_REGRESSION);
    /* Nothing known about either peak: judged as before. */
    o = run_compare(doc(40, 10, NULL, NULL, NULL), doc(30, 13.4, NULL, NULL, NULL));
    ZB_CHECK(o.mfu == ZB_VERDICT_REGRESSION && o.peak_note[0] == '\0');
    /* A peak source holding a newline or an escape is shown escaped. */
    o = run_compare(doc(40, 10, NULL, NULL, "a\nb\033[2J"), doc(30, 10, NULL, NULL, "c"));
    ZB_CHECK(o.mfu == ZB_VERDICT_NOT_COMPARABLE && !strchr(o.peak_note, '\n') && !strchr(o.peak_note, '\033'));
    ZB_CHECK(!strcmp(zb_verdict_name(ZB_VERDICT_NOT_COMPARABLE), "not comparable (different peaks)"));
    return zb_test_finish("test_compare_peak");
}
