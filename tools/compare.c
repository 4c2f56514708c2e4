/* zerobench compare BASE.json NEW.json (or BASE... -- NEW.json, a BASE
 * being a file or a folder of them): pairs the runs of the results files
 * by their identity (run_identity.h), judges every judged metric of each
 * pair (metric_table.h) against its tolerance, direction-aware, by the
 * two-sample test where both runs carry samples (twosample.h) and by the
 * min-max spread where not, against several bases by their between-run
 * range (compare_bases.c), derived metrics by their source, environments
 * that differ named and not judged (compare_env.c), and prints the table
 * (compare_format.c). Exit 0: nothing regressed; 1: a regression; 2:
 * unusable input (a missing or broken file, another schema, no run in
 * common, a bad flag); 3: nothing comparable (every judged row's
 * environment or peak differs). The output (-o) is written whole before
 * the exit code is decided, whatever it is; --no-gate exits 0 instead of
 * 1 or 3. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "compare.h"
#include "parse.h"
#include "out_path.h"
#include "results.h"
#include "run_identity.h"
#include "tool.h"
#include "tool_args.h"
#include "twosample.h"

#define ZB_CMP_MAX_TOL 64
#define ZB_CMP_MAX_BASES 256 /* base files, folders expanded */

const char *zb_verdict_name(zb_verdict v) {
    switch (v) {
    case ZB_VERDICT_OK: return "ok";
    case ZB_VERDICT_BETTER: return "better";
    case ZB_VERDICT_REGRESSION: return "REGRESSION";
    case ZB_VERDICT_NOISE: return "noise";
    case ZB_VERDICT_NOT_MEASURED: return "n/m";
    case ZB_VERDICT_NOT_COMPARABLE: return "not comparable (different peaks)";
    case ZB_VERDICT_UNDETECTED: return "no difference detectable";
    case ZB_VERDICT_NOT_COMPARABLE_ENV: return "not comparable (environment)";
    case ZB_VERDICT_WORSE: return "worse (not gated)";
    }
    return "?";
}

void zb_compare_delta(const zb_metric_def *m, double b, double n, zb_cmp_row *row) {
    double diff = n - b;
    row->delta_finite = true;
    if (m->absolute) {
        row->delta = diff;
    } else if (b != 0.0) {
        row->delta = 100.0 * diff / fabs(b);
    } else {
        row->delta_finite = diff == 0.0;
        row->delta = diff == 0.0 ? 0.0 : (diff > 0 ? INFINITY : -INFINITY);
    }
}

void zb_compare_judge(const zb_metric_def *m, double tol, const json_t *base_metrics,
                      const json_t *new_metrics, zb_cmp_row *row) {
    row->m = m;
    row->tolerance = tol;
    row->have_base = zb_metric_value(base_metrics, m->key, &row->base);
    row->have_new = zb_metric_value(new_metrics, m->key, &row->new_value);
    row->delta = 0.0;
    row->delta_finite = true;
    row->new_has_spread = false;
    row->verdict = ZB_VERDICT_NOT_MEASURED;
    row->basis = ZB_BASIS_RULE;
    row->n_base_samples = row->n_new_samples = 0;
    row->p = row->ratio = row->ratio_lo = row->ratio_hi = NAN;
    row->n_base_runs = row->have_base;
    row->base_lo = row->base_hi = row->have_base ? row->base : NAN;
    if (!row->have_base || !row->have_new) return;
    double b = row->base, n = row->new_value;
    zb_compare_delta(m, b, n, row);
    /* worse > 0: the change in the bad direction, in the tolerance's terms */
    double worse = m->better == ZB_BETTER_LOWER ? row->delta : -row->delta;
    double base_lo, base_hi;
    bool base_spread = zb_metric_spread(base_metrics, m->key, b, &base_lo, &base_hi);
    row->new_has_spread = zb_metric_spread(new_metrics, m->key, n, &row->new_lo, &row->new_hi);
    row->basis = ZB_BASIS_RULE;
    row->p = row->ratio = row->ratio_lo = row->ratio_hi = NAN;
    double *sb = NULL, *sn = NULL;
    row->n_base_samples = zb_metric_samples(base_metrics, m->key, &sb);
    row->n_new_samples = zb_metric_samples(new_metrics, m->key, &sn);
    if (row->n_base_samples >= ZB_TWOSAMPLE_MIN_N && row->n_new_samples >= ZB_TWOSAMPLE_MIN_N) {
        zb_twosample t = zb_twosample_test(sb, row->n_base_samples, sn, row->n_new_samples);
        row->basis = ZB_BASIS_TEST;
        row->p = t.p;
        row->ratio = t.ratio;
        row->ratio_lo = t.ratio_lo;
        row->ratio_hi = t.ratio_hi;
        /* the test's direction in the metric's terms: +1 NEW worse */
        int worse_dir = m->better == ZB_BETTER_LOWER ? t.direction : -t.direction;
        if (fabs(worse) <= tol) row->verdict = ZB_VERDICT_OK;
        else if (t.significant && worse > tol && worse_dir > 0) row->verdict = ZB_VERDICT_REGRESSION;
        else if (t.significant && -worse > tol && worse_dir < 0) row->verdict = ZB_VERDICT_BETTER;
        else row->verdict = ZB_VERDICT_UNDETECTED;
    } else if (worse > tol) {
        bool inside = (base_spread && n >= base_lo && n <= base_hi) ||
                      (row->new_has_spread && b >= row->new_lo && b <= row->new_hi);
        row->verdict = inside ? ZB_VERDICT_NOISE : ZB_VERDICT_REGRESSION;
    } else {
        row->verdict = -worse > tol ? ZB_VERDICT_BETTER : ZB_VERDICT_OK;
    }
    free(sb);
    free(sn);
}

/* ---- arguments ------------------------------------------------------------ */

typedef struct cmp_args {
    const char *files[2 * ZB_CMP_MAX_BASES]; /* as given: bases, then NEW (files or folders) */
    int n_files;
    bool dashdash; /* "--" seen: the files after it are NEW */
    int n_before;  /* files before "--" */
    zb_cmp_format format;
    int github_tool; /* -1 unset, 0 smaller, 1 bigger */
    const char *output;
    zb_cmp_tolerance tol[ZB_CMP_MAX_TOL];
    int n_tol;
    unsigned ignore_env;
    bool no_gate; /* --no-gate: write the output, exit 0 whatever the verdicts */
    bool gate_all;
    const zb_metric_def *gate[64];
    int n_gate;
    bool help;
} cmp_args;

static const char *cmp_usage =
    "usage: zerobench compare BASE.json NEW.json [options]\n"
    "       zerobench compare BASE1.json BASE2.json ... -- NEW.json [options]   (a BASE may be a folder)\n"
    "       zerobench compare BASE1.json BASE2.json ... -- NEW1.json NEW2.json ... [options]\n"
    "  Pairs the runs of the results files by identity and judges each metric:\n"
    "  exit 0 nothing regressed, 1 a regression, 2 unusable input, 3 nothing comparable\n"
    "  (the environments or peaks differ for every judged metric). With per-step or\n"
    "  per-iteration samples in both runs (metrics.samples), a regression is a change\n"
    "  beyond the tolerance that the Mann-Whitney U test finds at 5 %; derived metrics\n"
    "  (tokens/s, MFU, bandwidth) take their source's verdict; runs without samples:\n"
    "  tolerance and min-max spread. Several bases: from 3, NEW regresses when it is\n"
    "  worse than the tolerance and than the bound a rerun of the base stays inside\n"
    "  (Student's t over their figures); with 2, their range widened by the tolerance.\n"
    "  Several NEW files too (the same setup run 2+ times on each side, the steadiest\n"
    "  gate): Welch's t over the runs' figures, and the tolerance. With several files\n"
    "  the 5 %% false alarms are split over the gate's figures.\n"
    "  Only headline figures gate (times, bandwidths, memory, wrong elements); the\n"
    "  step's breakdown (compute, comm, exposed comm, overlap) is judged and shown as\n"
    "  'worse (not gated)'.\n"
    "  --gate all|KEY[,KEY]     the metrics whose verdicts decide the exit code: all, or\n"
    "                           those listed (their derived metrics follow)\n"
    "  --tolerance KEY=X[,KEY=X]  tolerance of a metric (repeatable): % of the base value,\n"
    "                           or points / elements for *_pct metrics and wrong\n"
    "  --ignore-env KEY[,KEY]   judge across this environment difference anyway (BLAS core,\n"
    "                           library version, ...; repeatable; the line stays)\n"
    "  --format text|markdown|github-benchmark   output (default text)\n"
    "  --github-tool customSmallerIsBetter|customBiggerIsBetter\n"
    "                           the direction github-benchmark writes (one per file; required)\n"
    "  -o, --output FILE        write the output to FILE (atomically) instead of stdout; it is\n"
    "                           written whole whatever the verdicts\n"
    "  --no-gate                exit 0 whatever the verdicts (2 still for unusable input, 1 for a\n"
    "                           failed write): the file without the gate (the figures alone, with\n"
    "                           no base: zerobench export)\n"
    "  -h, --help               this help\n";

static zb_status add_tolerances(cmp_args *a, const char *text) {
    char buf[512], names[1024];
    if (strlen(text) >= sizeof buf) return ZB_FAIL(ZB_ERR_INVALID, "--tolerance: value too long");
    strcpy(buf, text);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) return ZB_FAIL(ZB_ERR_INVALID, "--tolerance '%.64s': expected KEY=X (e.g. step_time_ms=5)", item);
        *eq = '\0';
        const zb_metric_def *m = zb_metric_find(item);
        if (!m) {
            zb_metric_names(names, sizeof names);
            return ZB_FAIL(ZB_ERR_INVALID, "--tolerance: unknown metric '%.64s' (accepted: %s)", item, names);
        }
        double v;
        if (zb_parse_double(eq + 1, &v) != ZB_OK || v < 0) {
            return ZB_FAIL(ZB_ERR_INVALID, "--tolerance %s='%.32s': expected a number >= 0", item, eq + 1);
        }
        if (a->n_tol >= ZB_CMP_MAX_TOL) return ZB_FAIL(ZB_ERR_INVALID, "--tolerance: at most %d", ZB_CMP_MAX_TOL);
        a->tol[a->n_tol++] = (zb_cmp_tolerance){m, v};
    }
    return ZB_OK;
}

static zb_status add_gates(cmp_args *a, const char *text) {
    char buf[512], names[1024];
    if (!*text) return ZB_FAIL(ZB_ERR_INVALID, "--gate needs all or KEY[,KEY] (e.g. step_time_ms,comm_ms)");
    if (strlen(text) >= sizeof buf) return ZB_FAIL(ZB_ERR_INVALID, "--gate: value too long");
    if (!strcmp(text, "all")) {
        a->gate_all = true;
        return ZB_OK;
    }
    strcpy(buf, text);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        const zb_metric_def *m = zb_metric_find(item);
        if (!m) {
            zb_metric_names(names, sizeof names);
            return ZB_FAIL(ZB_ERR_INVALID, "--gate: unknown metric '%.64s' (accepted: all, %s)", item, names);
        }
        if (a->n_gate >= (int)(sizeof a->gate / sizeof a->gate[0])) return ZB_FAIL(ZB_ERR_INVALID, "--gate: too many");
        a->gate[a->n_gate++] = m;
    }
    return ZB_OK;
}

static zb_status add_ignore_env(cmp_args *a, const char *text) {
    char buf[512], names[512];
    if (!*text) return ZB_FAIL(ZB_ERR_INVALID, "--ignore-env needs KEY[,KEY] (e.g. blas_core)");
    if (strlen(text) >= sizeof buf) return ZB_FAIL(ZB_ERR_INVALID, "--ignore-env: value too long");
    strcpy(buf, text);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        int k = zb_compare_env_key(item);
        if (k < 0) {
            zb_compare_env_names(names, sizeof names);
            return ZB_FAIL(ZB_ERR_INVALID, "--ignore-env: unknown key '%.64s' (accepted: %s)", item, names);
        }
        a->ignore_env |= 1u << k;
    }
    return ZB_OK;
}

/* The files: BASE NEW, or BASE... -- NEW... */
static zb_status check_files(cmp_args *a) {
    if (!a->dashdash) {
        if (a->n_files != 2) {
            return ZB_FAIL(ZB_ERR_INVALID, "expected two results files, BASE.json NEW.json, or BASE... -- NEW.json "
                                           "(got %d)", a->n_files);
        }
        a->n_before = 1;
        return ZB_OK;
    }
    if (a->n_before < 1) return ZB_FAIL(ZB_ERR_INVALID, "'--': expected at least one BASE before it");
    if (a->n_files - a->n_before < 1) return ZB_FAIL(ZB_ERR_INVALID, "'--': expected a NEW results file after it");
    return ZB_OK;
}

static zb_status parse_args(int argc, char **argv, cmp_args *a) {
    memset(a, 0, sizeof *a);
    a->github_tool = -1;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            a->help = true;
        } else if (!strcmp(arg, "--no-gate")) {
            a->no_gate = true;
        } else if (!strcmp(arg, "--")) {
            if (a->dashdash) return ZB_FAIL(ZB_ERR_INVALID, "'--' given twice (BASE... -- NEW...)");
            a->dashdash = true;
            a->n_before = a->n_files;
        } else if ((v = zb_tool_flag_value(argc, argv, &i, "--tolerance", NULL))) {
            if (!*v) return ZB_FAIL(ZB_ERR_INVALID, "--tolerance needs KEY=X (e.g. step_time_ms=5)");
            ZB_TRY(add_tolerances(a, v));
        } else if ((v = zb_tool_flag_value(argc, argv, &i, "--ignore-env", NULL))) {
            ZB_TRY(add_ignore_env(a, v));
        } else if ((v = zb_tool_flag_value(argc, argv, &i, "--gate", NULL))) {
            ZB_TRY(add_gates(a, v));
        } else if ((v = zb_tool_flag_value(argc, argv, &i, "--format", NULL))) {
            if (!strcmp(v, "text")) a->format = ZB_CMP_TEXT;
            else if (!strcmp(v, "markdown")) a->format = ZB_CMP_MARKDOWN;
            else if (!strcmp(v, "github-benchmark")) a->format = ZB_CMP_GITHUB;
            else return ZB_FAIL(ZB_ERR_INVALID, "--format '%.32s' (accepted: text, markdown, github-benchmark)", v);
        } else if ((v = zb_tool_flag_value(argc, argv, &i, "--github-tool", NULL))) {
            if (!strcmp(v, "customSmallerIsBetter")) a->github_tool = 0;
            else if (!strcmp(v, "customBiggerIsBetter")) a->github_tool = 1;
            else {
                return ZB_FAIL(ZB_ERR_INVALID,
                               "--github-tool '%.32s' (accepted: customSmallerIsBetter, customBiggerIsBetter)", v);
            }
        } else if ((v = zb_tool_flag_value(argc, argv, &i, "--output", "-o"))) {
            if (!*v) return ZB_FAIL(ZB_ERR_INVALID, "--output: expected a file name");
            a->output = v;
        } else if (arg[0] == '-' && arg[1]) {
            return ZB_FAIL(ZB_ERR_INVALID, "unknown option '%.32s' (see zerobench compare --help)", arg);
        } else if (a->n_files < 2 * ZB_CMP_MAX_BASES) {
            a->files[a->n_files++] = arg;
        } else {
            return ZB_FAIL(ZB_ERR_INVALID, "'%.64s': at most %d files", arg, 2 * ZB_CMP_MAX_BASES);
        }
    }
    if (a->help) return ZB_OK;
    ZB_TRY(check_files(a));
    if (a->format == ZB_CMP_GITHUB && a->github_tool < 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "--format github-benchmark needs --github-tool customSmallerIsBetter or "
                                       "customBiggerIsBetter (the action reads one direction per file)");
    }
    if (a->format != ZB_CMP_GITHUB && a->github_tool >= 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "--github-tool goes with --format github-benchmark");
    }
    ZB_TRY(zb_out_path_check("--output", a->output));
    zb_path_use uses[2 * ZB_CMP_MAX_BASES + 1];
    uses[0] = (zb_path_use){"--output", a->output, true};
    for (int i = 0; i < a->n_files; i++) uses[i + 1] = (zb_path_use){i < a->n_before ? "BASE" : "NEW", a->files[i], false};
    return zb_paths_distinct(uses, a->n_files + 1);
}

double zb_compare_tolerance_of(const zb_cmp_tolerance *tol, int n_tol, const zb_metric_def *m) {
    double t = m->tolerance;
    for (int i = 0; i < n_tol; i++) {
        if (tol[i].m == m) t = tol[i].value; /* the last one given wins */
    }
    return t;
}

/* ---- the comparison ----------------------------------------------------- */

void zb_compare_result_free(zb_cmp_result *r) {
    for (size_t i = 0; i < r->n_only_base; i++) free(r->only_base[i]);
    for (size_t i = 0; i < r->n_only_new; i++) free(r->only_new[i]);
    free(r->only_base);
    free(r->only_new);
    free(r->pairs);
    free(r->rows);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static char *label_dup(const json_t *run) {
    char label[160];
    zb_run_label(run, label, sizeof label);
    return strdup(label);
}

/* Lists the runs of `runs` that no pair uses (used[i] false). */
static zb_status list_unmatched(const json_t *runs, const bool *used, char ***out, size_t *n) {
    size_t total = json_array_size(runs);
    *out = (char **)calloc(total ? total : 1, sizeof **out);
    if (!*out) return ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    *n = 0;
    for (size_t i = 0; i < total; i++) {
        if (used[i]) continue;
        if (!((*out)[(*n)++] = label_dup(json_array_get(runs, i)))) return ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    }
    return ZB_OK;
}

/* A derived metric (metric_table.h) takes the verdict of its source's row
 * among the pair's earlier rows, when that row was judged: one
 * measurement, one verdict (a step time called noise next to its tokens/s
 * called a regression was two verdicts on the same numbers). */
void zb_compare_follow_source(const zb_cmp_row *rows, size_t n, zb_cmp_row *row) {
    if (!row->m->derived_from || row->verdict == ZB_VERDICT_NOT_MEASURED) return;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].m->key, row->m->derived_from) || rows[i].verdict == ZB_VERDICT_NOT_MEASURED) continue;
        row->verdict = rows[i].verdict;
        row->basis = ZB_BASIS_SOURCE;
        return;
    }
}

bool zb_compare_gates(const zb_cmp_result *r, const zb_metric_def *m) {
    const zb_metric_def *src = m->derived_from ? zb_metric_find(m->derived_from) : NULL;
    if (r->gate_all) return true;
    if (r->n_gate) {
        for (int i = 0; i < r->n_gate; i++) {
            if (r->gate[i] == m || (src && r->gate[i] == src)) return true;
        }
        return false;
    }
    return zb_metric_role_of(m) != ZB_ROLE_DIAGNOSTIC;
}

bool zb_compare_in_family(const zb_cmp_result *r, const zb_metric_def *m) {
    return !m->derived_from && m->role != ZB_ROLE_EXACT && zb_compare_gates(r, m);
}

void zb_compare_count(zb_cmp_result *r, zb_cmp_row *row) {
    row->gated = zb_compare_gates(r, row->m);
    if (!row->gated && row->verdict == ZB_VERDICT_REGRESSION) row->verdict = ZB_VERDICT_WORSE;
    r->n_worse += row->verdict == ZB_VERDICT_WORSE;
    r->n_groups += row->basis == ZB_BASIS_GROUPS;
    r->n_tested += row->basis == ZB_BASIS_TEST;
    r->n_rule += row->basis == ZB_BASIS_RULE && row->verdict != ZB_VERDICT_NOT_MEASURED;
    r->n_reruns += row->basis == ZB_BASIS_RERUNS;
    r->n_not_comparable += row->verdict == ZB_VERDICT_NOT_COMPARABLE;
    r->n_not_comparable_env += row->verdict == ZB_VERDICT_NOT_COMPARABLE_ENV;
    r->n_regressions += row->verdict == ZB_VERDICT_REGRESSION;
    r->n_noise += row->verdict == ZB_VERDICT_NOISE;
    r->n_better += row->verdict == ZB_VERDICT_BETTER;
    r->n_undetected += row->verdict == ZB_VERDICT_UNDETECTED;
}

int zb_compare_exit_code(const zb_cmp_result *r) {
    if (r->n_regressions) return ZB_CMP_EXIT_REGRESSION;
    size_t not_comparable = r->n_not_comparable + r->n_not_comparable_env, judged = 0;
    for (size_t i = 0; i < r->n_rows; i++) {
        zb_verdict v = r->rows[i].verdict;
        judged += v != ZB_VERDICT_NOT_MEASURED && v != ZB_VERDICT_NOT_COMPARABLE && v != ZB_VERDICT_NOT_COMPARABLE_ENV;
    }
    return not_comparable && !judged ? ZB_CMP_EXIT_NOT_COMPARABLE : ZB_CMP_EXIT_PASS;
}

zb_status zb_compare_docs(const json_t *base, const json_t *nw, const zb_cmp_tolerance *tol, int n_tol,
                          zb_cmp_result *r) {
    const json_t *br = json_object_get(base, "runs"), *nr = json_object_get(nw, "runs");
    size_t nb = json_array_size(br), nn = json_array_size(nr), n_pairs = 0;
    char shown[2][72];
    zb_results_shown_path(r->base_path, shown[0]);
    zb_results_shown_path(r->new_path, shown[1]);
    if (!nb) return ZB_FAIL(ZB_ERR_INVALID, "'%s': no runs to compare", shown[0]);
    if (!nn) return ZB_FAIL(ZB_ERR_INVALID, "'%s': no runs to compare", shown[1]);
    r->n_bases = 1;
    /* Another environment measured something else: named, not judged. */
    bool other_env = zb_compare_env(base, NULL, nw, r->ignore_env, r) > 0;
    r->n_bases_left_out = other_env;
    long *pair = (long *)malloc(nb * sizeof *pair);
    bool *used_b = (bool *)calloc(nb, 1), *used_n = (bool *)calloc(nn, 1);
    size_t n_metrics = 0;
    while (zb_metric_at((int)n_metrics)) n_metrics++;
    zb_status s = ZB_OK;
    if (!pair || !used_b || !used_n || !zb_run_pair(br, nr, pair, &n_pairs)) {
        s = ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    } else if (n_pairs == 0) {
        char lb[160], ln[160];
        zb_run_label(json_array_get(br, 0), lb, sizeof lb);
        zb_run_label(json_array_get(nr, 0), ln, sizeof ln);
        s = ZB_FAIL(ZB_ERR_INVALID, "no run of '%s' matches a run of '%s' (the first are '%s' and '%s')", shown[0],
                    shown[1], lb, ln);
    } else {
        r->pairs = (zb_cmp_pair *)calloc(n_pairs, sizeof *r->pairs);
        r->rows = (zb_cmp_row *)calloc(n_pairs * n_metrics, sizeof *r->rows);
        if (!r->pairs || !r->rows) s = ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    }
    for (size_t i = 0; s == ZB_OK && i < nb; i++) {
        if (pair[i] < 0) continue;
        used_b[i] = used_n[pair[i]] = true;
        zb_cmp_pair *p = &r->pairs[r->n_pairs];
        p->base_run = json_array_get(br, i);
        p->new_run = json_array_get(nr, (size_t)pair[i]);
        zb_compare_pair_label(p);
        const json_t *bm = json_object_get(p->base_run, "metrics"), *nm = json_object_get(p->new_run, "metrics");
        /* MFU against one peak and MFU against another are not one measure. */
        char peaks[sizeof r->peak_note];
        bool other_peak = zb_compare_peaks_differ(base, p->base_run, nw, p->new_run, peaks, sizeof peaks);
        if (other_peak && !r->peak_note[0]) snprintf(r->peak_note, sizeof r->peak_note, "%s", peaks);
        size_t first_row = r->n_rows;
        for (size_t k = 0; k < n_metrics; k++) {
            const zb_metric_def *m = zb_metric_at((int)k);
            if (!json_object_get(bm, m->key) && !json_object_get(nm, m->key)) continue;
            zb_cmp_row *row = &r->rows[r->n_rows++];
            row->pair = r->n_pairs;
            zb_compare_judge(m, zb_compare_tolerance_of(tol, n_tol, m), bm, nm, row);
            zb_compare_follow_source(r->rows + first_row, r->n_rows - 1 - first_row, row);
            zb_compare_not_comparable(row, other_env, other_peak);
            zb_compare_count(r, row);
        }
        r->n_pairs++;
    }
    if (s == ZB_OK) s = list_unmatched(br, used_b, &r->only_base, &r->n_only_base);
    if (s == ZB_OK) s = list_unmatched(nr, used_n, &r->only_new, &r->n_only_new);
    free(pair);
    free(used_b);
    free(used_n);
    return s;
}

void zb_compare_not_comparable(zb_cmp_row *row, bool other_env, bool other_peak) {
    if (row->verdict == ZB_VERDICT_NOT_MEASURED) return;
    if (other_env) row->verdict = ZB_VERDICT_NOT_COMPARABLE_ENV;
    else if (other_peak && zb_metric_against_peak(row->m)) row->verdict = ZB_VERDICT_NOT_COMPARABLE;
}

void zb_compare_pair_label(zb_cmp_pair *p) {
    zb_run_label(p->base_run, p->label, sizeof p->label);
    if (zb_run_is_simulated(p->base_run) || zb_run_is_simulated(p->new_run)) {
        size_t len = strlen(p->label);
        snprintf(p->label + len, sizeof p->label - len, " (%s simulated)",
                 zb_run_is_simulated(p->base_run) ? (zb_run_is_simulated(p->new_run) ? "both" : "base") : "new");
    }
}

static int fail_input(void) {
    fprintf(stderr, "zerobench compare: %s\n", zb_error_message());
    return ZB_CMP_EXIT_INPUT;
}

/* The files a->files[from..to): each as given, a folder as its *.json
 * files in name order (not recursing), into *paths (malloc'ed strings,
 * free_paths them). `role` names the side in messages. */
static zb_status expand_files(const cmp_args *a, int from, int to, const char *role, char ***paths, size_t *n) {
    *n = 0;
    *paths = (char **)calloc(ZB_CMP_MAX_BASES, sizeof **paths);
    if (!*paths) return ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    for (int i = from; i < to; i++) {
        const char *f = a->files[i];
        char shown[72];
        DIR *d = opendir(f);
        if (!d) { /* a file (or unreadable: its load says why) */
            if (*n >= ZB_CMP_MAX_BASES) return ZB_FAIL(ZB_ERR_INVALID, "at most %d %s files", ZB_CMP_MAX_BASES, role);
            if (!((*paths)[(*n)++] = strdup(f))) return ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
            continue;
        }
        size_t first = *n;
        zb_status s = ZB_OK;
        for (struct dirent *e; s == ZB_OK && (e = readdir(d));) {
            size_t len = strlen(e->d_name);
            if (len < 6 || strcmp(e->d_name + len - 5, ".json") || e->d_name[0] == '.') continue;
            if (*n >= ZB_CMP_MAX_BASES) {
                s = ZB_FAIL(ZB_ERR_INVALID, "'%s': at most %d %s files", zb_results_shown_path(f, shown),
                            ZB_CMP_MAX_BASES, role);
                break;
            }
            char *p = (char *)malloc(strlen(f) + len + 2);
            if (!p) s = ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
            else sprintf(p, "%s/%s", f, e->d_name);
            (*paths)[(*n)++] = p;
        }
        closedir(d);
        ZB_TRY(s);
        if (*n == first) {
            return ZB_FAIL(ZB_ERR_INVALID, "'%s': a folder with no *.json results file (%s: a file or a folder of them)",
                           zb_results_shown_path(f, shown), role);
        }
        qsort(*paths + first, *n - first, sizeof **paths, cmp_str);
    }
    return ZB_OK;
}

/* Loads paths[0..n) into *docs (calloc'ed). */
static zb_status load_all(char **paths, size_t n, json_t ***docs) {
    if (!(*docs = (json_t **)calloc(n ? n : 1, sizeof **docs))) return ZB_FAIL(ZB_ERR_NOMEM, "compare: out of memory");
    for (size_t i = 0; i < n; i++) ZB_TRY(zb_results_load(paths[i], &(*docs)[i]));
    return ZB_OK;
}

static void free_docs(json_t **docs, char **paths, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (docs) json_decref(docs[i]);
        if (paths) free(paths[i]);
    }
    free(docs);
    free(paths);
}

static int compare_main(int argc, char **argv) {
    cmp_args a;
    if (parse_args(argc, argv, &a) != ZB_OK) return fail_input();
    if (a.help) {
        fputs(cmp_usage, stdout);
        return 0;
    }
    char **paths = NULL, **new_paths = NULL;
    size_t nb = 0, nn = 0;
    json_t **bases = NULL, **news = NULL;
    zb_status s = expand_files(&a, 0, a.n_before, "BASE", &paths, &nb);
    if (s == ZB_OK) s = expand_files(&a, a.n_before, a.n_files, "NEW", &new_paths, &nn);
    if (s == ZB_OK) s = load_all(paths, nb, &bases);
    if (s == ZB_OK) s = load_all(new_paths, nn, &news);
    if (s != ZB_OK) {
        int code = s == ZB_ERR_NOMEM ? 1 : fail_input();
        if (s == ZB_ERR_NOMEM) fprintf(stderr, "zerobench compare: %s\n", zb_error_message());
        free_docs(bases, paths, nb);
        free_docs(news, new_paths, nn);
        return code;
    }
    zb_cmp_result r;
    memset(&r, 0, sizeof r);
    r.base_path = nb == 1 ? paths[0] : NULL;
    r.new_path = nn == 1 ? new_paths[0] : NULL;
    r.ignore_env = a.ignore_env;
    r.gate_all = a.gate_all;
    r.n_gate = a.n_gate;
    memcpy(r.gate, a.gate, sizeof r.gate);
    char *text = NULL;
    if (nn == 1) {
        s = zb_compare_bases((const json_t *const *)bases, (const char *const *)paths, nb, news[0], a.tol, a.n_tol, &r);
    } else {
        s = zb_compare_groups((const json_t *const *)bases, (const char *const *)paths, nb, (const json_t *const *)news,
                              (const char *const *)new_paths, nn, a.tol, a.n_tol, &r);
    }
    if (s == ZB_OK) s = zb_compare_render(&r, a.format, a.github_tool == 1, &text);
    int code = 0;
    if (s != ZB_OK) {
        code = s == ZB_ERR_INVALID ? fail_input() : (fprintf(stderr, "zerobench compare: %s\n", zb_error_message()), 1);
    } else if (a.output) {
        if (zb_atomic_write(a.output, text, strlen(text)) != ZB_OK) {
            fprintf(stderr, "zerobench compare: %s\n", zb_error_message());
            code = 1;
        }
    } else {
        fputs(text, stdout);
    }
    if (code == 0 && !a.no_gate) code = zb_compare_exit_code(&r);
    if (s == ZB_OK && (r.n_only_base || r.n_only_new) && a.format == ZB_CMP_GITHUB) {
        fprintf(stderr, "zerobench compare: %zu run(s) only in BASE, %zu only in NEW (not written)\n",
                r.n_only_base, r.n_only_new);
    }
    free(text);
    zb_compare_result_free(&r);
    free_docs(bases, paths, nb);
    free_docs(news, new_paths, nn);
    return code;
}

const zb_tool zb_tool_compare = {
    .name = "compare",
    .summary = "judge NEW.json against BASE.json (or several bases): regressions per run and metric (exit 1 on any)",
    .main = compare_main,
};
