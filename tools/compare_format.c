/* compare's three outputs (compare.h): an aligned text table, a Markdown
 * table (a pull-request comment), and the JSON array github-action-benchmark
 * reads for its customSmallerIsBetter / customBiggerIsBetter tools: objects
 * with "name", "unit", "value" and the optional strings "range" and "extra".
 * The action keeps its own history, so "value" is NEW's figure; the base's
 * and the verdict go in "extra". One direction per array, as the action
 * reads one per file. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "export.h"
#include "report.h"
#include "table.h"

/* A growing string; `oom` remembers a failed allocation. */
typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void sb_printf(sbuf *b, const char *fmt, ...) {
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (w < 0) {
            b->oom = true;
            return;
        }
        if (b->p && b->len + (size_t)w < b->cap) {
            b->len += (size_t)w;
            return;
        }
        size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)w;
        char *p = (char *)realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        if (!b->p) p[0] = '\0';
        b->p = p;
        b->cap = cap;
    }
}

static void fmt_value(double v, char *out, size_t n) { snprintf(out, n, "%.6g", v); }

/* The change as the tolerance counts it: "+5.2 %", "-3.1 pp", "+2 elements". */
static void fmt_delta(const zb_cmp_row *r, char *out, size_t n) {
    if (r->verdict == ZB_VERDICT_NOT_MEASURED) snprintf(out, n, "-");
    else if (!r->delta_finite) snprintf(out, n, "%s from 0", r->delta > 0 ? "up" : "down");
    else if (!r->m->absolute) snprintf(out, n, "%+.2f %%", r->delta);
    else if (!strcmp(r->m->unit, "%")) snprintf(out, n, "%+.2f pp", r->delta);
    else snprintf(out, n, "%+g %s", r->delta, r->m->unit);
}

static void fmt_tol(const zb_cmp_row *r, char *out, size_t n) {
    if (!r->m->absolute) snprintf(out, n, "%g %%", r->tolerance);
    else if (!strcmp(r->m->unit, "%")) snprintf(out, n, "%g pp", r->tolerance);
    else snprintf(out, n, "%g %s", r->tolerance, r->m->unit);
}

static void fmt_side(const zb_cmp_row *r, bool is_new, char *out, size_t n) {
    bool have = is_new ? r->have_new : r->have_base;
    if (!have) snprintf(out, n, "n/m");
    else fmt_value(is_new ? r->new_value : r->base, out, n);
}

/* What the verdict rests on: the test's p and ratio, the source metric, or
 * today's rule for runs without samples; against several base runs, their
 * count and range. */
static void fmt_basis(const zb_cmp_row *r, char *out, size_t n) {
    size_t used = 0;
    if (r->verdict == ZB_VERDICT_NOT_MEASURED) used = (size_t)snprintf(out, n, "-");
    else if (r->basis == ZB_BASIS_SOURCE) used = (size_t)snprintf(out, n, "as %s", r->m->derived_from);
    else if (r->basis == ZB_BASIS_RULE) used = (size_t)snprintf(out, n, "rule (no samples)");
    else if (r->basis == ZB_BASIS_RERUNS) {
        const char *u = r->m->absolute ? r->m->unit : "%";
        snprintf(out, n, "%zu base runs, spread %.3g %s, rerun bound %.6g..%.6g, detects >= %.3g %s", r->n_base_runs,
                 r->rerun_spread, u, r->rerun_lo, r->rerun_hi, r->detectable, u);
        return;
    }
    else if (r->basis == ZB_BASIS_GROUPS) {
        const char *u = r->m->absolute ? r->m->unit : "%";
        snprintf(out, n, "%zu vs %zu runs, spread %.3g/%.3g %s, Welch p=%.2g, detects >= %.3g %s", r->n_base_runs,
                 r->n_new_runs, r->rerun_spread, r->new_spread, u, r->p, r->detectable, u);
        return;
    }
    else if (isfinite(r->ratio_lo)) {
        used = (size_t)snprintf(out, n, "U p=%.2g, x%.3f [%.3f, %.3f], n %zu/%zu", r->p, r->ratio, r->ratio_lo,
                                r->ratio_hi, r->n_base_samples, r->n_new_samples);
    } else {
        used = (size_t)snprintf(out, n, "U p=%.2g, n %zu/%zu", r->p, r->n_base_samples, r->n_new_samples);
    }
    if (r->n_base_runs > 1 && r->basis != ZB_BASIS_SOURCE && r->verdict != ZB_VERDICT_NOT_MEASURED && used < n) {
        snprintf(out + used, n - used, "; %zu base runs %.6g..%.6g", r->n_base_runs, r->base_lo, r->base_hi);
    }
}

static void summary_line(const zb_cmp_result *r, sbuf *b) {
    sb_printf(b, "%zu regression(s), %zu inside the runs' spread (noise), %zu better, in %zu comparison(s) of %zu "
                 "matched run(s)",
              r->n_regressions, r->n_noise, r->n_better, r->n_rows, r->n_pairs);
    if (r->n_undetected) sb_printf(b, "; %zu changed beyond tolerance with no difference detectable", r->n_undetected);
    if (r->n_not_comparable) sb_printf(b, "; %zu not comparable (different peaks)", r->n_not_comparable);
    if (r->n_not_comparable_env) sb_printf(b, "; %zu not comparable (environment)", r->n_not_comparable_env);
    if (r->n_bases > 1) sb_printf(b, "; %zu base files", r->n_bases);
    if (r->n_bases_left_out) sb_printf(b, ", %zu left out (environment)", r->n_bases_left_out);
    sb_printf(b, "; %zu judged by the samples' test, %zu by the rule (no samples)", r->n_tested, r->n_rule);
    if (r->n_reruns) sb_printf(b, ", %zu by the spread between base runs", r->n_reruns);
    if (r->n_groups) sb_printf(b, ", %zu by Welch's t over base and new runs", r->n_groups);
    if (r->n_worse) sb_printf(b, "; %zu worse in metrics that do not gate (--gate all gates them)", r->n_worse);
}

/* Where the base runs vary too much for the gate to catch a change of the
 * tolerance: one line per metric (its widest row), what it can detect and
 * what would help. */
static void noise_lines(const zb_cmp_result *r, sbuf *b) {
    for (size_t i = 0; i < r->n_rows; i++) {
        const zb_cmp_row *row = &r->rows[i];
        bool spread = row->basis == ZB_BASIS_RERUNS || row->basis == ZB_BASIS_GROUPS;
        if (!spread || !row->gated || !(row->detectable > row->tolerance)) continue;
        bool shown = true; /* the widest row of its metric, the first of equals */
        for (size_t j = 0; j < r->n_rows && shown; j++) {
            const zb_cmp_row *o = &r->rows[j];
            if (j == i || o->basis != row->basis || o->m != row->m || !(o->detectable > o->tolerance)) continue;
            shown = !(o->detectable > row->detectable || (o->detectable == row->detectable && j < i));
        }
        if (!shown) continue;
        const char *u = row->m->absolute ? row->m->unit : "%";
        if (row->basis == ZB_BASIS_GROUPS) {
            sb_printf(b, "# noise too large for %s: the %zu base and %zu new runs vary by %.3g and %.3g %s, so at %.2g "
                         "%% false alarms (%g %% over the gate's %zu figure(s)) only a change of %.3g %s or more is "
                         "caught in 95 %% of runs, not the %g %s tolerance; ",
                      row->m->key, row->n_base_runs, row->n_new_runs, row->rerun_spread, row->new_spread, u,
                      100.0 * row->alpha, 100.0 * ZB_CMP_GATE_ALPHA, r->gate_family, row->detectable, u,
                      row->tolerance, u);
            if (row->runs_needed) sb_printf(b, "%zu runs on each side would catch it\n", row->runs_needed);
            else sb_printf(b, "no number of runs catches it at this spread: steadier runs (more steps, a quieter "
                              "machine) or a wider tolerance\n");
            continue;
        }
        sb_printf(b, "# noise too large for %s: the %zu base runs vary by %.3g %s, so at %.2g %% false alarms (%g %% "
                     "over the gate's %zu figure(s)) only a change of %.3g %s or more is caught in 95 %% of runs, not "
                     "the %g %s tolerance; ",
                  row->m->key, row->n_base_runs, row->rerun_spread, u, 100.0 * row->alpha, 100.0 * ZB_CMP_GATE_ALPHA,
                  r->gate_family, row->detectable, u, row->tolerance, u);
        if (row->runs_needed) sb_printf(b, "%zu base runs would catch it\n", row->runs_needed);
        else sb_printf(b, "no number of base runs catches it at this spread: steadier runs (more steps, a quieter "
                          "machine) or a wider tolerance\n");
    }
}

static zb_status render_text(const zb_cmp_result *r, sbuf *b) {
    sb_printf(b, "# zerobench compare: BASE %s, NEW %s: %zu matched run(s)\n", r->base_path, r->new_path, r->n_pairs);
    sb_printf(b, "# change: %% of the base value (pp: points of a percentage); with samples on both sides, a "
                 "regression is a change beyond the tolerance that the Mann-Whitney U test finds at 5 %% (p; x: "
                 "NEW/BASE with its 95 %% interval); derived metrics take their source's verdict\n");
    if (r->n_rule) {
        sb_printf(b, "# %zu comparison(s) without samples on both sides: today's rule (the tolerance; noise: worse "
                     "than it but inside a run's min-max spread)\n", r->n_rule);
    }
    if (r->n_bases <= 1 && r->n_tested) {
        sb_printf(b, "# one base run: its steps' spread does not hold how a rerun moves (load and clocks shift a "
                     "whole run: on a shared machine the larger part of the noise); with 3 or more base runs (compare B1 B2 B3 "
                     "-- NEW) the gate judges against what reruns give\n");
    }
    if (r->n_news > 1) {
        sb_printf(b, "# %zu base and %zu new files: base and new are the medians of their runs' figures; a regression "
                     "is worse than the tolerance with Welch's t over the runs' figures (log values for a relative "
                     "metric) finding NEW worse, one-sided, each of the %zu gated figures at %.2g %%, so that a rerun "
                     "of the base fails the gate in %g %%\n", r->n_bases, r->n_news, r->gate_family,
                  100.0 * ZB_CMP_GATE_ALPHA / (double)(r->gate_family ? r->gate_family : 1), 100.0 * ZB_CMP_GATE_ALPHA);
    } else if (r->n_bases > 1) {
        sb_printf(b, "# %zu base files: base is the median of the base runs' figures; from 3 base runs a regression "
                     "is worse than both the tolerance and the bound a rerun of the base stays inside (their "
                     "figures' mean and spread, Student's t; each of the %zu gated figures at %.2g %%, so that a "
                     "rerun fails the gate in %g %%); with 2, worse than their range widened by the "
                     "tolerance, with the test (their samples pooled) finding it; noise: worse than the tolerance, "
                     "inside the bound or range\n", r->n_bases, r->gate_family, 100.0 * ZB_CMP_GATE_ALPHA / (double)(r->gate_family ? r->gate_family : 1), 100.0 * ZB_CMP_GATE_ALPHA);
    }
    size_t ungated = 0;
    for (size_t i = 0; i < r->n_rows; i++) ungated += !r->rows[i].gated && r->rows[i].verdict != ZB_VERDICT_NOT_MEASURED;
    if (ungated) {
        sb_printf(b, "# the exit code follows the headline figures (times, bandwidths, memory, wrong elements); the "
                     "step's breakdown (compute, comm, exposed comm, overlap) is judged the same way and shown, a "
                     "regression there as 'worse (not gated)' (--gate all gates it)\n");
    }
    /* Said before the table: what its MFU and times rest on differs. */
    if (r->peak_note[0]) sb_printf(b, "# %s\n", r->peak_note);
    for (size_t i = 0; i < r->n_env_lines; i++) sb_printf(b, "# %s\n", r->env_lines[i]);
    if (r->n_env_more) sb_printf(b, "# ... and %zu more environment difference(s)\n", r->n_env_more);
    zb_table *t = zb_table_new();
    if (!t) return ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    const char *heads[] = {"run", "metric", "unit", "base", "new", "change", "tolerance", "verdict", "judged by"};
    zb_status s = ZB_OK;
    for (int c = 0; s == ZB_OK && c < 9; c++) {
        s = zb_table_add_column(t, heads[c], NULL, c < 3 || c >= 7 ? ZB_ALIGN_LEFT : ZB_ALIGN_RIGHT);
    }
    for (size_t i = 0; s == ZB_OK && i < r->n_rows; i++) {
        const zb_cmp_row *row = &r->rows[i];
        char base[32], nw[32], delta[48], tol[48], basis[192];
        fmt_side(row, false, base, sizeof base);
        fmt_side(row, true, nw, sizeof nw);
        fmt_delta(row, delta, sizeof delta);
        fmt_tol(row, tol, sizeof tol);
        fmt_basis(row, basis, sizeof basis);
        s = zb_table_add_row(t);
        if (s == ZB_OK) {
            zb_table_set(t, 0, "%s", r->pairs[row->pair].label);
            zb_table_set(t, 1, "%s", row->m->key);
            zb_table_set(t, 2, "%s", row->m->unit);
            zb_table_set(t, 3, "%s", base);
            zb_table_set(t, 4, "%s", nw);
            zb_table_set(t, 5, "%s", delta);
            zb_table_set(t, 6, "%s", tol);
            zb_table_set(t, 7, "%s", zb_verdict_name(row->verdict));
            zb_table_set(t, 8, "%s", basis);
        }
    }
    /* the table prints to a stream: a memory stream gathers it */
    char *mem = NULL;
    size_t mem_len = 0;
    FILE *f = s == ZB_OK ? open_memstream(&mem, &mem_len) : NULL;
    if (s == ZB_OK && !f) s = ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    if (f) {
        s = zb_table_print(t, f, "#");
        fclose(f);
        if (s == ZB_OK) sb_printf(b, "%s", mem);
        free(mem);
    }
    zb_table_free(t);
    for (size_t i = 0; i < r->n_only_base; i++) sb_printf(b, "# only in BASE: %s\n", r->only_base[i]);
    for (size_t i = 0; i < r->n_only_new; i++) sb_printf(b, "# only in NEW: %s\n", r->only_new[i]);
    noise_lines(r, b);
    sb_printf(b, "# ");
    summary_line(r, b);
    sb_printf(b, "\n");
    return s;
}

/* Markdown cells: a '|' would end the cell. */
static void md_cell(sbuf *b, const char *s) {
    for (; *s; s++) {
        if (*s == '|') sb_printf(b, "\\|");
        else sb_printf(b, "%c", *s);
    }
}

static zb_status render_markdown(const zb_cmp_result *r, sbuf *b) {
    sb_printf(b, "### zerobench compare\n\nBASE `");
    md_cell(b, r->base_path);
    sb_printf(b, "`, NEW `");
    md_cell(b, r->new_path);
    sb_printf(b, "`: %s", r->n_regressions ? "**" : "");
    summary_line(r, b);
    sb_printf(b, "%s.\n\n", r->n_regressions ? "**" : "");
    for (size_t i = 0; i < 1 + r->n_env_lines; i++) {
        const char *note = i ? r->env_lines[i - 1] : r->peak_note;
        if (!note[0]) continue;
        sb_printf(b, "> ");
        md_cell(b, note);
        sb_printf(b, "\n\n");
    }
    sb_printf(b, "| run | metric | base | new | change | tolerance | verdict | judged by |\n");
    sb_printf(b, "|---|---|---:|---:|---:|---:|---|---|\n");
    for (size_t i = 0; i < r->n_rows; i++) {
        const zb_cmp_row *row = &r->rows[i];
        char base[32], nw[32], delta[48], tol[48], basis[192];
        fmt_side(row, false, base, sizeof base);
        fmt_side(row, true, nw, sizeof nw);
        fmt_delta(row, delta, sizeof delta);
        fmt_tol(row, tol, sizeof tol);
        fmt_basis(row, basis, sizeof basis);
        bool bad = row->verdict == ZB_VERDICT_REGRESSION;
        sb_printf(b, "| ");
        md_cell(b, r->pairs[row->pair].label);
        sb_printf(b, " | %s (%s) | %s | %s | %s | %s | %s%s%s | %s |\n", row->m->key, row->m->unit, base, nw, delta,
                  tol, bad ? "**" : "", zb_verdict_name(row->verdict), bad ? "**" : "", basis);
    }
    if (r->n_only_base || r->n_only_new) sb_printf(b, "\n");
    for (size_t i = 0; i < r->n_only_base; i++) {
        sb_printf(b, "- only in BASE: ");
        md_cell(b, r->only_base[i]);
        sb_printf(b, "\n");
    }
    for (size_t i = 0; i < r->n_only_new; i++) {
        sb_printf(b, "- only in NEW: ");
        md_cell(b, r->only_new[i]);
        sb_printf(b, "\n");
    }
    return ZB_OK;
}

/* The entries are export's (export.h), so that a dashboard fed by compare
 * and one fed by export hold the same series; compare adds the verdict. */
static zb_status render_github(const zb_cmp_result *r, bool bigger, sbuf *b) {
    json_t *arr = json_array();
    if (!arr) return ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    for (size_t i = 0; i < r->n_rows; i++) {
        const zb_cmp_row *row = &r->rows[i];
        if (!row->have_new || (row->m->better == ZB_BETTER_HIGHER) != bigger) continue;
        char extra[352], base[32], delta[48], basis[192];
        fmt_side(row, false, base, sizeof base);
        fmt_delta(row, delta, sizeof delta);
        fmt_basis(row, basis, sizeof basis);
        snprintf(extra, sizeof extra, "base %s, change %s, %s (%s)", base, delta, zb_verdict_name(row->verdict),
                 basis);
        json_t *o = zb_export_github_entry(r->pairs[row->pair].label, row->m, row->new_value, row->new_has_spread,
                                           row->new_lo, row->new_hi, extra);
        if (!o || json_array_append_new(arr, o)) {
            json_decref(arr);
            return ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
        }
    }
    size_t len = 0;
    char *text = zb_json_dump(arr, 2, &len);
    json_decref(arr);
    if (!text) return ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    sb_printf(b, "%s%s", text, len && text[len - 1] == '\n' ? "" : "\n");
    free(text);
    return ZB_OK;
}

zb_status zb_compare_render(const zb_cmp_result *r, zb_cmp_format format, bool bigger, char **out) {
    sbuf b = {0};
    sb_printf(&b, "%s", "");
    zb_status s = format == ZB_CMP_MARKDOWN ? render_markdown(r, &b)
                  : format == ZB_CMP_GITHUB ? render_github(r, bigger, &b)
                                            : render_text(r, &b);
    if (s == ZB_OK && b.oom) s = ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    if (s != ZB_OK) {
        free(b.p);
        return s;
    }
    *out = b.p;
    return ZB_OK;
}
