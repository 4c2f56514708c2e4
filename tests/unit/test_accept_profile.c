/* Acceptance profiles (tools/accept_profile.c) read and refused field by
 * field, the thresholds above all: each is {"reference", "unit",
 * "fraction"} and the check judges fraction x reference, never a typed
 * number; a bad reference, unit or fraction is one line naming the file,
 * the check and the field with the value and what is accepted. Then that
 * derived threshold is what the judge compares with, the margin reported,
 * and the shipped profiles load with every threshold below (or, for a
 * maximum, above) its reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accept.h"
#include "zb_test.h"

#define GEMM_HEAD "\"name\": \"g\", \"kind\": \"metric\", \"bench\": \"gemm\", \"metric\": \"tflops\", \"source\": \"s\""
#define STRAG_HEAD "\"name\": \"s\", \"kind\": \"straggler\", \"bench\": \"step\", \"source\": \"s\""

/* A profile file with `check` as its one check, loaded into p; the status. */
static zb_status load_one(const char *check, zb_accept_profile *p) {
    char path[] = "/tmp/zb_test_profile_XXXXXX.json";
    int fd = mkstemps(path, 5);
    ZB_CHECK(fd >= 0);
    if (fd < 0) return ZB_ERR_IO;
    FILE *f = fdopen(fd, "w");
    fprintf(f, "{\"name\": \"t\", \"checks\": [%s]}", check);
    fclose(f);
    zb_status s = zb_accept_profile_load(path, p);
    unlink(path);
    return s;
}

/* Refused, one line naming the file and every one of `want` (NULL-ended). */
static void refused_all(const char *check, const char *const *want) {
    zb_accept_profile p;
    zb_status s = load_one(check, &p);
    const char *msg = zb_error_message();
    bool named = s == ZB_ERR_INVALID && strstr(msg, "zb_test_profile") && !strchr(msg, '\n');
    for (int i = 0; named && want[i]; i++) named = strstr(msg, want[i]) != NULL;
    ZB_CHECK_MSG(named, "%s: expected one line naming '%s', got '%s'", check, want[0], msg);
    if (s == ZB_OK) zb_accept_profile_free(&p);
}

static void refused(const char *check, const char *field) {
    const char *want[] = {field, NULL};
    refused_all(check, want);
}

static void test_fields_refused(void) {
    refused("{\"kind\": \"metric\", \"bench\": \"gemm\", \"metric\": \"tflops\", \"source\": \"s\","
            " \"min\": {\"reference\": 1, \"unit\": \"TFLOP/s\", \"fraction\": 0.5}}",
            "\"name\"");
    refused("{\"name\": \"g\", \"kind\": \"metric\", \"bench\": \"gemm\", \"metric\": \"tflops\","
            " \"min\": {\"reference\": 1, \"unit\": \"TFLOP/s\", \"fraction\": 0.5}}",
            "\"source\"");
    refused("{\"name\": \"g\", \"kind\": \"metric\", \"bench\": \"gemm\", \"metric\": \"tflops\", \"source\": \"\","
            " \"min\": {\"reference\": 1, \"unit\": \"TFLOP/s\", \"fraction\": 0.5}}",
            "field \"source\": expected a non-empty string");
    refused("{\"name\": \"g\", \"kind\": \"metric\", \"bench\": \"nosuch\", \"metric\": \"tflops\", \"source\": \"s\","
            " \"min\": {\"reference\": 1, \"unit\": \"TFLOP/s\", \"fraction\": 0.5}}",
            "unknown benchmark 'nosuch'");
    refused("{\"name\": \"g\", \"kind\": \"metric\", \"bench\": \"gemm\", \"metric\": \"speed\", \"source\": \"s\","
            " \"min\": {\"reference\": 1, \"unit\": \"TFLOP/s\", \"fraction\": 0.5}}",
            "unknown metric 'speed'");
    refused("{" GEMM_HEAD "}", "\"min\" and \"max\"");
    refused("{" GEMM_HEAD ", \"min\": {\"reference\": 1, \"unit\": \"TFLOP/s\", \"fraction\": 0.5},"
            " \"max\": {\"reference\": 1, \"unit\": \"TFLOP/s\", \"fraction\": 2}}",
            "\"min\" and \"max\"");
    refused("{" GEMM_HEAD ", \"mni\": {\"reference\": 1, \"unit\": \"TFLOP/s\", \"fraction\": 0.5}}",
            "unknown field \"mni\"");
    refused("{\"name\": \"g\", \"kind\": \"gpu\", \"source\": \"s\"}", "\"kind\"");
    refused("{\"name\": \"d\", \"kind\": \"devices\", \"backend\": \"cuda\", \"source\": \"s\"}", "\"per_node\"");
    refused("{" STRAG_HEAD "}", "\"max_deviation_pct\"");
    refused("{" GEMM_HEAD ", \"min\": {\"reference\": 1, \"unit\": \"TFLOP/s\", \"fraction\": 0.5}, \"repeat\": 0}",
            "\"repeat\"");
    refused("{" GEMM_HEAD ", \"args\": [\"--json\", \"x\"],"
            " \"min\": {\"reference\": 1, \"unit\": \"TFLOP/s\", \"fraction\": 0.5}}",
            "\"args\"[0]");
}

static void test_thresholds_refused(void) {
    /* a typed number is no threshold any more: it says what it is a fraction of */
    const char *typed[] = {"checks[0] (g): field \"min\": 20 (accepted: {\"reference\", \"unit\", \"fraction\"}", NULL};
    refused_all("{" GEMM_HEAD ", \"min\": 20}", typed);
    const char *typed_dev[] = {"field \"max_deviation_pct\": 50 (accepted: {", NULL};
    refused_all("{" STRAG_HEAD ", \"max_deviation_pct\": 50}", typed_dev);
    /* missing and unknown parts */
    refused("{" GEMM_HEAD ", \"min\": {\"unit\": \"TFLOP/s\", \"fraction\": 0.5}}", "missing field \"min.reference\"");
    refused("{" GEMM_HEAD ", \"min\": {\"reference\": 1, \"fraction\": 0.5}}", "missing field \"min.unit\"");
    refused("{" GEMM_HEAD ", \"min\": {\"reference\": 1, \"unit\": \"TFLOP/s\"}}", "missing field \"min.fraction\"");
    refused("{" GEMM_HEAD ", \"min\": {\"reference\": 1, \"unit\": \"TFLOP/s\", \"fraction\": 0.5, \"value\": 3}}",
            "unknown field \"min.value\" (accepted: reference, unit, fraction)");
    /* a reference that is no positive figure */
    const char *zero[] = {"field \"min.reference\": 0 (accepted: a positive number", NULL};
    refused_all("{" GEMM_HEAD ", \"min\": {\"reference\": 0, \"unit\": \"TFLOP/s\", \"fraction\": 0.5}}", zero);
    const char *neg[] = {"field \"min.reference\": -5 (accepted: a positive number", NULL};
    refused_all("{" GEMM_HEAD ", \"min\": {\"reference\": -5, \"unit\": \"TFLOP/s\", \"fraction\": 0.5}}", neg);
    const char *str[] = {"field \"min.reference\": '800' (accepted: a positive number", NULL};
    refused_all("{" GEMM_HEAD ", \"min\": {\"reference\": \"800\", \"unit\": \"TFLOP/s\", \"fraction\": 0.5}}", str);
    /* a reference in another unit than the metric's: 1000 times off otherwise */
    const char *unit[] = {"field \"min.unit\": 'GFLOP/s' (accepted: 'TFLOP/s', the unit of tflops)", NULL};
    refused_all("{" GEMM_HEAD ", \"min\": {\"reference\": 35, \"unit\": \"GFLOP/s\", \"fraction\": 0.5}}", unit);
    const char *dev_unit[] = {"field \"max_deviation_pct.unit\": 'ms' (accepted: '%'", NULL};
    refused_all("{" STRAG_HEAD ", \"max_deviation_pct\": {\"reference\": 5, \"unit\": \"ms\", \"fraction\": 2}}",
                dev_unit);
    /* a minimum's fraction in (0, 1] */
    const char *above[] = {"field \"min.fraction\": 1.5 (accepted: a number in (0, 1]", NULL};
    refused_all("{" GEMM_HEAD ", \"min\": {\"reference\": 1, \"unit\": \"TFLOP/s\", \"fraction\": 1.5}}", above);
    const char *zero_f[] = {"field \"min.fraction\": 0 (accepted: a number in (0, 1]", NULL};
    refused_all("{" GEMM_HEAD ", \"min\": {\"reference\": 1, \"unit\": \"TFLOP/s\", \"fraction\": 0}}", zero_f);
    const char *nan_f[] = {"field \"min.fraction\": 'half' (accepted: a number in (0, 1]", NULL};
    refused_all("{" GEMM_HEAD ", \"min\": {\"reference\": 1, \"unit\": \"TFLOP/s\", \"fraction\": \"half\"}}", nan_f);
    /* a maximum's (and a deviation's) fraction at least 1 */
    const char *below[] = {"field \"max.fraction\": 0.5 (accepted: a number in [1, 1e6]", NULL};
    refused_all("{\"name\": \"t\", \"kind\": \"metric\", \"bench\": \"allgather\", \"metric\": \"time_us\","
                " \"source\": \"s\", \"max\": {\"reference\": 100, \"unit\": \"us\", \"fraction\": 0.5}}",
                below);
    const char *dev_below[] = {"field \"max_deviation_pct.fraction\": 0.9 (accepted: a number in [1, 1e6]", NULL};
    refused_all("{" STRAG_HEAD ", \"max_deviation_pct\": {\"reference\": 5, \"unit\": \"%\", \"fraction\": 0.9}}",
                dev_below);
}

static void test_thresholds_derived(void) {
    zb_accept_profile p;
    ZB_CHECK_OK(load_one("{" GEMM_HEAD ", \"min\": {\"reference\": 0.121, \"unit\": \"TFLOP/s\", \"fraction\": 0.5}}",
                         &p));
    if (p.n_checks == 1) {
        const zb_accept_check *c = &p.checks[0];
        ZB_CHECK(c->repeat == 1 && c->is_min && c->reference == 0.121 && c->fraction == 0.5 &&
                 !strcmp(c->unit, "TFLOP/s"));
        ZB_CHECK_MSG(fabs(c->threshold - 0.0605) < 1e-15, "threshold %g, expected 0.5 x 0.121", c->threshold);
        zb_accept_profile_free(&p);
    }
    ZB_CHECK_OK(load_one("{\"name\": \"t\", \"kind\": \"metric\", \"bench\": \"allgather\", \"metric\": \"time_us\","
                         " \"source\": \"s\", \"max\": {\"reference\": 100, \"unit\": \"us\", \"fraction\": 1.5}}",
                         &p));
    if (p.n_checks == 1) {
        ZB_CHECK(!p.checks[0].is_min && p.checks[0].threshold == 150);
        zb_accept_profile_free(&p);
    }
    ZB_CHECK_OK(load_one("{" STRAG_HEAD ", \"max_deviation_pct\": {\"reference\": 10.6, \"unit\": \"%\", \"fraction\": 2}}",
                         &p));
    if (p.n_checks == 1) {
        ZB_CHECK(p.checks[0].threshold == 21.2 && !strcmp(p.checks[0].metric, "compute_ms"));
        zb_accept_profile_free(&p);
    }
}

/* An all-gather result with one run at 4 MiB. */
static json_t *bw_doc(double gbps) {
    return json_pack("{s:s, s:[{s:s, s:I, s:b, s:i, s:{s:f}}]}", "schema", "zerobench/1", "runs", "bench", "allgather",
                     "size_bytes", (json_int_t)(4 << 20), "in_place", 0, "ranks", 2, "metrics", "busbw_gbps", gbps);
}

/* The judge compares with fraction x reference: 0.4 x 7.91 = 3.164 GB/s,
 * so 3.2 passes and 3.1 fails though both are far below the reference;
 * the margin is measured / threshold - 1. */
static void test_derived_threshold_judged(void) {
    zb_accept_profile p;
    ZB_CHECK_OK(load_one("{\"name\": \"ag\", \"kind\": \"metric\", \"bench\": \"allgather\", \"metric\": \"busbw_gbps\","
                         " \"source\": \"s\", \"min_size_bytes\": 4194304,"
                         " \"min\": {\"reference\": 7.91, \"unit\": \"GB/s\", \"fraction\": 0.4}}",
                         &p));
    if (p.n_checks != 1) return;
    const zb_accept_check *c = &p.checks[0];
    json_t *pass = bw_doc(3.2), *fail = bw_doc(3.1);
    zb_check_outcome o;
    memset(&o, 0, sizeof o);
    zb_accept_judge(c, &pass, 1, &o);
    ZB_CHECK(o.verdict == ZB_CHECK_PASS && o.value == 3.2);
    double m = zb_accept_margin_pct(c, o.value);
    ZB_CHECK_MSG(fabs(m - 100.0 * (3.2 / (0.4 * 7.91) - 1)) < 1e-9 && m > 0, "margin %g", m);
    char lines[2400];
    zb_accept_describe(c, &o, lines, sizeof lines);
    ZB_CHECK_MSG(strstr(lines, "PASS  ag: busbw_gbps 3.2 GB/s, threshold >= 3.164 GB/s (0.4 x 7.91 GB/s), margin +1 % "
                               "(best of 1: 3.2) at allgather 4M") != NULL,
                 "printed '%s'", lines);
    zb_check_outcome_clear(&o);
    zb_accept_judge(c, &fail, 1, &o);
    ZB_CHECK(o.verdict == ZB_CHECK_FAIL && zb_accept_margin_pct(c, o.value) < 0);
    zb_accept_describe(c, &o, lines, sizeof lines);
    ZB_CHECK_MSG(strstr(lines, "FAIL  ag: busbw_gbps 3.1 GB/s, threshold >= 3.164 GB/s (0.4 x 7.91 GB/s), margin -2 %") !=
                     NULL,
                 "printed '%s'", lines);
    zb_check_outcome_clear(&o);
    json_decref(pass);
    json_decref(fail);
    zb_accept_profile_free(&p);
}

/* A maximum's margin is 1 - measured / threshold: positive inside it. */
static void test_margin_of_a_maximum(void) {
    zb_accept_check c;
    memset(&c, 0, sizeof c);
    c.kind = ZB_CHECK_STRAGGLER;
    c.threshold = 20;
    ZB_CHECK(fabs(zb_accept_margin_pct(&c, 5) - 75) < 1e-12);
    ZB_CHECK(fabs(zb_accept_margin_pct(&c, 30) + 50) < 1e-12);
    c.kind = ZB_CHECK_METRIC;
    c.is_min = true;
    ZB_CHECK(fabs(zb_accept_margin_pct(&c, 30) - 50) < 1e-12);
}

/* The shipped profiles: every threshold a stated fraction of its
 * reference, on the right side of it. */
static void test_shipped_profiles(void) {
    const char *names[] = {"cpu-smoke", "h100_sxm_8x", "h200_sxm_8x"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        zb_accept_profile p;
        ZB_CHECK_MSG(zb_accept_profile_load(names[i], &p) == ZB_OK, "%s: %s", names[i], zb_error_message());
        for (size_t k = 0; k < p.n_checks; k++) {
            const zb_accept_check *c = &p.checks[k];
            if (c->kind == ZB_CHECK_DEVICES) continue;
            bool is_min = c->kind == ZB_CHECK_METRIC && c->is_min;
            ZB_CHECK_MSG(c->reference > 0 && fabs(c->threshold - c->fraction * c->reference) < 1e-12 * c->reference &&
                             (is_min ? c->threshold <= c->reference : c->threshold >= c->reference) &&
                             strlen(c->source) > 40,
                         "%s: %s", names[i], c->name);
        }
        zb_accept_profile_free(&p);
    }
}

int main(void) {
    test_fields_refused();
    test_thresholds_refused();
    test_thresholds_derived();
    test_derived_threshold_judged();
    test_margin_of_a_maximum();
    test_shipped_profiles();
    return zb_test_finish("test_accept_profile");
}
