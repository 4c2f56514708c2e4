/* The paired A/B of the step (--mode both) as data: its JSON fields and its
 * reading, one line of medians, 95 % intervals and verdicts (the statistics
 * are harness/metrics/paired.h's; step_run.c runs the pairs). Kept apart
 * from step_report.c's tables so other readings can be added beside it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "step.h"

static zb_field real(const char *key, double v) {
    zb_field f = {.key = key, .metric = true, .parent = "paired", .kind = ZB_FIELD_REAL, .d = v};
    return f;
}

static zb_field flag(const char *key, bool v) {
    zb_field f = {.key = key, .metric = true, .parent = "paired", .kind = ZB_FIELD_BOOL, .b = v};
    return f;
}

/* median, lo, hi, significant of one statistic: 4 fields. */
static int stat_fields(zb_field *f, const char *median, const char *lo, const char *hi, const char *sig,
                       const zb_paired *p) {
    f[0] = real(median, p->median);
    f[1] = real(lo, p->lo);
    f[2] = real(hi, p->hi);
    f[3] = flag(sig, p->significant);
    return 4;
}

int zb_step_paired_fields(zb_field *f, const zb_step_stats *r) {
    int n = 0;
    f[n] = (zb_field){.key = "pairs", .metric = true, .parent = "paired", .kind = ZB_FIELD_INT, .i = r->pairs};
    n++;
    f[n] = (zb_field){.key = "order", .metric = true, .parent = "paired", .kind = ZB_FIELD_TEXT, .s = "ABBA"};
    n++;
    /* why the pairs ended: fixed (--steps alone), precision, max-steps, max-time */
    f[n] = (zb_field){.key = "stopped_by", .metric = true, .parent = "paired", .kind = ZB_FIELD_TEXT,
                      .s = r->stopped_by ? r->stopped_by : "fixed"};
    n++;
    f[n++] = real("precision_pct", r->precision_pct);
    f[n++] = real("ci_level", r->step_diff_ms.level);
    n += stat_fields(f + n, "step_diff_ms", "step_diff_lo_ms", "step_diff_hi_ms", "step_diff_significant",
                     &r->step_diff_ms);
    n += stat_fields(f + n, "hidden_pct", "hidden_lo_pct", "hidden_hi_pct", "hidden_significant", &r->hidden);
    n += stat_fields(f + n, "compute_slowdown_pct", "compute_slowdown_lo_pct", "compute_slowdown_hi_pct",
                     "compute_slowdown_significant", &r->slowdown);
    /* Not paired (the sync run, one schedule): no JSON, empty CSV columns. */
    for (int i = 0; i < n; i++) f[i].absent = !r->paired;
    return n;
}

/* "X [lo, hi] unit: verdict" of one statistic. */
static size_t put_stat(char *buf, size_t n, const char *what, const zb_paired *p, const char *unit, bool sign) {
    if (p->n == 0) return (size_t)snprintf(buf, n, "%s not measured", what); /* one rank, or not traced */
    if (p->n < ZB_PAIRED_MIN_PAIRS) {
        return (size_t)snprintf(buf, n, "%s %s%.3f %s (%s)", what, sign && p->median > 0 ? "+" : "", p->median,
                                unit, zb_paired_verdict(p));
    }
    return (size_t)snprintf(buf, n, "%s %s%.3f %s [%.3f, %.3f]: %s", what, sign && p->median > 0 ? "+" : "",
                            p->median, unit, p->lo, p->hi, zb_paired_verdict(p));
}

/* Why the pairs ended, in words, into buf. */
static void stopped_words(const zb_step_stats *r, char *buf, size_t n) {
    const char *by = r->stopped_by ? r->stopped_by : "fixed";
    if (!strcmp(by, "precision"))
        snprintf(buf, n, "stopped when the step-time interval was within +-%g %% of sync's step", r->precision_pct);
    else if (!strcmp(by, "max-steps"))
        snprintf(buf, n, "stopped by --max-steps before +-%g %% was reached", r->precision_pct);
    else if (!strcmp(by, "max-time"))
        snprintf(buf, n, "stopped by --max-time before +-%g %% was reached", r->precision_pct);
    else snprintf(buf, n, "as many as --steps");
}

void zb_step_paired_reading(const zb_step_stats *r, char *buf, size_t n) {
    if (n) buf[0] = '\0';
    if (!r->paired || n == 0) return;
    char why[96];
    stopped_words(r, why, sizeof why);
    size_t at = (size_t)snprintf(buf, n, "paired A/B, stage %d: %d pairs of steps on one state (ABBA order; %s), "
                                 "medians of the pairs with 95 %% sign-test intervals: ", r->stage, r->pairs, why);
    if (at < n) at += put_stat(buf + at, n - at, "prefetch - sync step time", &r->step_diff_ms, "ms", true);
    if (at < n) at += (size_t)snprintf(buf + at, n - at, "; ");
    if (at < n) at += put_stat(buf + at, n - at, "hidden", &r->hidden, "%", false);
    if (at < n) at += (size_t)snprintf(buf + at, n - at, "; ");
    if (at < n) put_stat(buf + at, n - at, "compute slowdown", &r->slowdown, "%", true);
}
