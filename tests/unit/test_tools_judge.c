/* The judging of compare and accept on synthetic results (no benchmark
 * runs): compare's direction, tolerance and noise rule per metric, its two-sample
 * test where runs carry samples, derived metrics following their source; run
 * identity and pairing; accept's metric checks (worst selected run, sizes
 * below min_size_bytes ignored, best and median of repeats) and straggler
 * checks from per_rank figures (a slowed rank named, by node, absent
 * per-rank figures, one rank). Acceptance profiles, field by field:
 * test_accept_profile.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accept.h"
#include "compare.h"
#include "rng.h"
#include "run_identity.h"
#include "zb_test.h"

static json_t *parse(const char *text) {
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j) fprintf(stderr, "bad test JSON: %s\n", e.text);
    return j;
}

static zb_verdict judge(const char *key, double tol, const char *base, const char *nw) {
    json_t *b = parse(base), *n = parse(nw);
    zb_cmp_row row;
    memset(&row, 0, sizeof row);
    zb_compare_judge(zb_metric_find(key), tol, b, n, &row);
    json_decref(b);
    json_decref(n);
    return row.verdict;
}

/* A step_time_ms metrics object: figure `fig`, n samples centre * (1 + 2 %
 * noise) from `seed`, as a run writes them (metrics.samples). */
static json_t *step_with_samples(double fig, double centre, size_t n, uint64_t seed) {
    json_t *arr = json_array();
    uint64_t st = seed;
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(arr, json_real(centre * (1.0 + 0.02 * zb_uniform_pm1(zb_splitmix_next(&st)))));
    }
    return json_pack("{s:f, s:{s:o}}", "step_time_ms", fig, "samples", "step_time_ms", arr);
}

static zb_cmp_row judge_samples(json_t *b, json_t *n) {
    zb_cmp_row row;
    memset(&row, 0, sizeof row);
    zb_compare_judge(zb_metric_find("step_time_ms"), 5, b, n, &row);
    json_decref(b);
    json_decref(n);
    return row;
}

/* With samples on both sides the two-sample test decides (tolerance 5 %). */
static void test_compare_samples(void) {
    /* 10 % slower, 2 % noise, 20 steps each: found, a regression */
    zb_cmp_row r = judge_samples(step_with_samples(100, 100, 20, 1), step_with_samples(110, 110, 20, 2));
    ZB_CHECK(r.verdict == ZB_VERDICT_REGRESSION && r.basis == ZB_BASIS_TEST && r.p < 0.001);
    ZB_CHECK(r.n_base_samples == 20 && r.n_new_samples == 20 && r.ratio_lo > 1.0 && r.ratio_hi > 1.05);
    /* 10 % faster: better */
    r = judge_samples(step_with_samples(100, 100, 20, 1), step_with_samples(90, 90, 20, 2));
    ZB_CHECK(r.verdict == ZB_VERDICT_BETTER && r.basis == ZB_BASIS_TEST);
    /* the same distribution: ok */
    r = judge_samples(step_with_samples(100, 100, 20, 1), step_with_samples(100, 100, 20, 3));
    ZB_CHECK(r.verdict == ZB_VERDICT_OK && r.basis == ZB_BASIS_TEST && r.p > 0.05);
    /* a significant 3 % shift is within the tolerance: ok */
    r = judge_samples(step_with_samples(100, 100, 20, 1), step_with_samples(103, 103, 20, 2));
    ZB_CHECK(r.verdict == ZB_VERDICT_OK);
    /* the figure 10 % up, the samples the same: no difference detectable, not a regression */
    r = judge_samples(step_with_samples(100, 100, 20, 1), step_with_samples(110, 100, 20, 1));
    ZB_CHECK(r.verdict == ZB_VERDICT_UNDETECTED && r.p == 1.0);
    ZB_CHECK(!strcmp(zb_verdict_name(ZB_VERDICT_UNDETECTED), "no difference detectable"));
    /* fewer than ZB_TWOSAMPLE_MIN_N samples on a side: today's rule */
    r = judge_samples(step_with_samples(100, 100, 4, 1), step_with_samples(110, 110, 20, 2));
    ZB_CHECK(r.verdict == ZB_VERDICT_REGRESSION && r.basis == ZB_BASIS_RULE);
}

/* Derived metrics take their source's verdict: a step time called noise and
 * its tokens/s called a regression was two verdicts on one measurement. */
static void test_compare_derived(void) {
    ZB_CHECK(!strcmp(zb_metric_find("tokens_per_s")->derived_from, "step_time_ms"));
    ZB_CHECK(!strcmp(zb_metric_find("mfu_pct")->derived_from, "step_time_ms"));
    ZB_CHECK(!strcmp(zb_metric_find("busbw_gbps")->derived_from, "time_us"));
    ZB_CHECK(zb_metric_find("step_time_ms")->derived_from == NULL);
    /* the case: step time inside the base's spread (noise), tokens/s 15 % down */
    json_t *b = parse("{\"schema\": \"zerobench/1\", \"runs\": [{\"bench\": \"step\", \"model\": \"tiny\", \"metrics\": "
                      "{\"step_time_ms\": 10, \"step_time_min_ms\": 8, \"step_time_max_ms\": 13, "
                      "\"tokens_per_s\": 1000, \"mfu_pct\": 40}}]}");
    json_t *n = parse("{\"schema\": \"zerobench/1\", \"runs\": [{\"bench\": \"step\", \"model\": \"tiny\", \"metrics\": "
                      "{\"step_time_ms\": 11.5, \"tokens_per_s\": 870, \"mfu_pct\": 34.8}}]}");
    zb_cmp_result r;
    memset(&r, 0, sizeof r);
    r.base_path = "b.json";
    r.new_path = "n.json";
    ZB_CHECK_OK(zb_compare_docs(b, n, NULL, 0, &r));
    ZB_CHECK(r.n_rows == 3 && r.n_regressions == 0 && r.n_noise == 3 && r.n_rule == 1);
    for (size_t i = 0; i < r.n_rows; i++) {
        ZB_CHECK(r.rows[i].verdict == ZB_VERDICT_NOISE);
        ZB_CHECK(r.rows[i].basis == (i ? ZB_BASIS_SOURCE : ZB_BASIS_RULE));
    }
    zb_compare_result_free(&r);
    json_decref(b);
    json_decref(n);
}

static void test_compare_judge(void) {
    /* lower is better */
    ZB_CHECK(judge("time_us", 5, "{\"time_us\": 100}", "{\"time_us\": 104}") == ZB_VERDICT_OK);
    ZB_CHECK(judge("time_us", 5, "{\"time_us\": 100}", "{\"time_us\": 106}") == ZB_VERDICT_REGRESSION);
    ZB_CHECK(judge("time_us", 5, "{\"time_us\": 100}", "{\"time_us\": 90}") == ZB_VERDICT_BETTER);
    /* higher is better */
    ZB_CHECK(judge("busbw_gbps", 5, "{\"busbw_gbps\": 100}", "{\"busbw_gbps\": 94}") == ZB_VERDICT_REGRESSION);
    ZB_CHECK(judge("busbw_gbps", 5, "{\"busbw_gbps\": 100}", "{\"busbw_gbps\": 130}") == ZB_VERDICT_BETTER);
    ZB_CHECK(judge("tflops", 5, "{\"tflops\": 1}", "{\"tflops\": 0.5}") == ZB_VERDICT_REGRESSION);
    /* percentages in points: 0.3 -> 0.1 % overlap is -0.2 pp, not -67 % */
    ZB_CHECK(judge("overlap_pct", 5, "{\"overlap_pct\": 0.3}", "{\"overlap_pct\": 0.1}") == ZB_VERDICT_OK);
    ZB_CHECK(judge("overlap_pct", 5, "{\"overlap_pct\": 60}", "{\"overlap_pct\": 54}") == ZB_VERDICT_REGRESSION);
    ZB_CHECK(judge("mfu_pct", 2, "{\"mfu_pct\": 40}", "{\"mfu_pct\": 37.5}") == ZB_VERDICT_REGRESSION);
    /* wrong elements: any increase */
    ZB_CHECK(judge("wrong", 0, "{\"wrong\": 0}", "{\"wrong\": 1}") == ZB_VERDICT_REGRESSION);
    ZB_CHECK(judge("wrong", 0, "{\"wrong\": 0}", "{\"wrong\": 0}") == ZB_VERDICT_OK);
    /* relative change from 0 */
    ZB_CHECK(judge("exposed_comm_ms", 10, "{\"exposed_comm_ms\": 0}", "{\"exposed_comm_ms\": 1}") ==
             ZB_VERDICT_REGRESSION);
    /* not measured: null or absent on one side */
    ZB_CHECK(judge("hidden_pct", 10, "{\"hidden_pct\": null}", "{\"hidden_pct\": 5}") == ZB_VERDICT_NOT_MEASURED);
    ZB_CHECK(judge("peak_mem_bytes", 1, "{}", "{\"peak_mem_bytes\": 5}") == ZB_VERDICT_NOT_MEASURED);
    /* noise: new inside the base's min-max spread, or base inside new's */
    ZB_CHECK(judge("step_time_ms", 5, "{\"step_time_ms\": 100, \"step_time_min_ms\": 90, \"step_time_max_ms\": 120}",
                   "{\"step_time_ms\": 115}") == ZB_VERDICT_NOISE);
    ZB_CHECK(judge("step_time_ms", 5, "{\"step_time_ms\": 100}",
                   "{\"step_time_ms\": 115, \"step_time_min_ms\": 99, \"step_time_max_ms\": 130}") == ZB_VERDICT_NOISE);
    ZB_CHECK(judge("step_time_ms", 5, "{\"step_time_ms\": 100, \"step_time_min_ms\": 95, \"step_time_max_ms\": 105}",
                   "{\"step_time_ms\": 115, \"step_time_min_ms\": 110, \"step_time_max_ms\": 120}") ==
             ZB_VERDICT_REGRESSION);
    /* overlap's spread is its minimum */
    ZB_CHECK(judge("overlap_pct", 5, "{\"overlap_pct\": 60, \"overlap_min_pct\": 40}", "{\"overlap_pct\": 50}") ==
             ZB_VERDICT_NOISE);
}

static void test_identity(void) {
    json_t *a = parse("[{\"bench\": \"allgather\", \"size_bytes\": 4096, \"in_place\": false, \"ranks\": 2},"
                      " {\"bench\": \"allgather\", \"size_bytes\": 4096, \"in_place\": true, \"ranks\": 2},"
                      " {\"bench\": \"gemm\", \"shape\": \"8x8x8\"}]");
    json_t *b = parse("[{\"bench\": \"allgather\", \"size_bytes\": 4096, \"in_place\": true, \"ranks\": 2,"
                      "   \"metrics\": {}, \"per_rank\": [], \"peak_source\": \"x\"},"
                      " {\"bench\": \"allgather\", \"size_bytes\": 4096, \"in_place\": false, \"ranks\": 4}]");
    long pair[3];
    size_t n = 0;
    ZB_CHECK(zb_run_pair(a, b, pair, &n));
    ZB_CHECK(n == 1 && pair[0] == -1 && pair[1] == 0 && pair[2] == -1);
    char label[160];
    zb_run_label(json_array_get(a, 0), label, sizeof label);
    ZB_CHECK_MSG(!strcmp(label, "allgather 4K out-of-place ranks=2"), "label '%s'", label);
    json_decref(a);
    json_decref(b);
}

/* A collective result with one run per (size, time) and optional per_rank times. */
static json_t *coll_doc(const double *bw, const long long *sizes, int n) {
    json_t *runs = json_array();
    for (int i = 0; i < n; i++) {
        json_t *r = json_pack("{s:s, s:I, s:b, s:i, s:{s:f}}", "bench", "allgather", "size_bytes", sizes[i], "in_place",
                              0, "ranks", 2, "metrics", "busbw_gbps", bw[i]);
        json_array_append_new(runs, r);
    }
    return json_pack("{s:s, s:o}", "schema", "zerobench/1", "runs", runs);
}

static zb_accept_check metric_check(void) {
    zb_accept_check c;
    memset(&c, 0, sizeof c);
    c.name = "ag";
    c.source = "test";
    c.kind = ZB_CHECK_METRIC;
    c.bench = "allgather";
    c.metric = "busbw_gbps";
    c.def = zb_metric_find("busbw_gbps");
    c.is_min = true;
    c.threshold = 10;
    c.min_size_bytes = 1 << 20;
    c.repeat = 1;
    return c;
}

static void test_accept_metric(void) {
    const long long sizes[3] = {1024, 1 << 20, 2 << 20};
    /* the latency-bound size (0.1 GB/s) is below min_size_bytes: not judged */
    const double bw1[3] = {0.1, 12, 15}, bw2[3] = {0.1, 8, 16};
    json_t *docs[2] = {coll_doc(bw1, sizes, 3), coll_doc(bw2, sizes, 3)};
    zb_accept_check c = metric_check();
    zb_check_outcome o;
    memset(&o, 0, sizeof o);
    zb_accept_judge(&c, docs, 1, &o);
    ZB_CHECK(o.verdict == ZB_CHECK_PASS && o.have_value && o.value == 12);
    ZB_CHECK_MSG(strstr(o.where, "allgather 1M") != NULL, "where '%s'", o.where);
    zb_check_outcome_clear(&o);
    /* the second repeat alone fails at 1M (8 < 10) */
    zb_accept_judge(&c, docs + 1, 1, &o);
    ZB_CHECK(o.verdict == ZB_CHECK_FAIL && o.value == 8 && strstr(o.reason, "1 of 2") != NULL);
    zb_check_outcome_clear(&o);
    /* best of both repeats: 1M gives max(12, 8) = 12 */
    c.repeat = 2;
    zb_accept_judge(&c, docs, 2, &o);
    ZB_CHECK(o.verdict == ZB_CHECK_PASS && o.value == 12 && o.n_values == 2);
    zb_check_outcome_clear(&o);
    /* median of two: 1M gives 10, still >= 10 */
    c.judge = ZB_JUDGE_MEDIAN;
    zb_accept_judge(&c, docs, 2, &o);
    ZB_CHECK(o.verdict == ZB_CHECK_PASS && fabs(o.value - 10) < 1e-12);
    zb_check_outcome_clear(&o);
    /* a maximum, and a selection matching nothing */
    c.is_min = false;
    c.threshold = 14;
    c.judge = ZB_JUDGE_BEST;
    zb_accept_judge(&c, docs, 2, &o);
    ZB_CHECK(o.verdict == ZB_CHECK_FAIL && o.value == 15); /* 2M: min(15, 16) = 15 > 14 */
    zb_check_outcome_clear(&o);
    c.min_size_bytes = 1LL << 40;
    zb_accept_judge(&c, docs, 2, &o);
    ZB_CHECK(o.verdict == ZB_CHECK_FAIL && !o.have_value && strstr(o.reason, "no allgather run") != NULL);
    zb_check_outcome_clear(&o);
    json_decref(docs[0]);
    json_decref(docs[1]);
}

static void test_accept_straggler(void) {
    json_t *slow = parse("{\"schema\": \"zerobench/1\", \"runs\": [{\"bench\": \"step\", \"mode\": \"prefetch\","
                         " \"per_rank\": [{\"rank\": 0, \"host\": \"a\", \"node\": 0, \"step_time_ms\": 100},"
                         "                {\"rank\": 1, \"host\": \"a\", \"node\": 0, \"step_time_ms\": 101},"
                         "                {\"rank\": 2, \"host\": \"b\", \"node\": 1, \"step_time_ms\": 99},"
                         "                {\"rank\": 3, \"host\": \"b\", \"node\": 1, \"step_time_ms\": 150}]}]}");
    json_t *none = parse("{\"schema\": \"zerobench/1\", \"runs\": [{\"bench\": \"step\", \"mode\": \"prefetch\"}]}");
    json_t *one = parse("{\"schema\": \"zerobench/1\", \"runs\": [{\"bench\": \"step\", \"mode\": \"prefetch\","
                        " \"per_rank\": [{\"rank\": 0, \"host\": \"a\", \"node\": 0, \"step_time_ms\": 100}]}]}");
    zb_accept_check c;
    memset(&c, 0, sizeof c);
    c.name = "st";
    c.source = "test";
    c.kind = ZB_CHECK_STRAGGLER;
    c.bench = "step";
    c.metric = "step_time_ms";
    c.threshold = 10;
    c.repeat = 1;
    zb_check_outcome o;
    memset(&o, 0, sizeof o);
    zb_accept_judge(&c, &slow, 1, &o);
    /* median of 99, 100, 101, 150 is 100.5: rank 3 is 49.3 % above it */
    ZB_CHECK(o.verdict == ZB_CHECK_FAIL && fabs(o.value - 100.0 * (150 - 100.5) / 100.5) < 1e-9);
    ZB_CHECK_MSG(strstr(o.culprits, "rank 3 (host b)") && !strstr(o.culprits, "rank 1"), "culprits '%s'", o.culprits);
    ZB_CHECK(json_array_size(o.culprit_list) == 1);
    zb_check_outcome_clear(&o);
    c.threshold = 60;
    zb_accept_judge(&c, &slow, 1, &o);
    ZB_CHECK(o.verdict == ZB_CHECK_PASS && !o.culprits[0]);
    zb_check_outcome_clear(&o);
    /* by node: node means 100.5 and 124.5, median 112.5, node 1 10.7 % above */
    c.by_node = true;
    c.threshold = 10;
    zb_accept_judge(&c, &slow, 1, &o);
    ZB_CHECK(o.verdict == ZB_CHECK_FAIL && strstr(o.culprits, "node 1 (host b)") != NULL);
    zb_check_outcome_clear(&o);
    c.by_node = false;
    zb_accept_judge(&c, &none, 1, &o);
    ZB_CHECK(o.verdict == ZB_CHECK_FAIL && strstr(o.reason, "cannot be judged") != NULL);
    zb_check_outcome_clear(&o);
    zb_accept_judge(&c, &one, 1, &o);
    ZB_CHECK(o.verdict == ZB_CHECK_SKIP && strstr(o.reason, "not applicable") != NULL);
    zb_check_outcome_clear(&o);
    json_decref(slow);
    json_decref(none);
    json_decref(one);
}

int main(void) {
    test_compare_judge();
    test_compare_samples();
    test_compare_derived();
    test_identity();
    test_accept_metric();
    test_accept_straggler();
    return zb_test_finish("test_tools_judge");
}
