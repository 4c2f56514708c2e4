/* zerobench compare's options (compare_args.h): the usage text, and the
 * flags and files parsed and checked before any file is read (bad input is
 * exit 2 with nothing loaded). */
#include <stdio.h>
#include <string.h>

#include "compare_args.h"
#include "out_path.h"
#include "parse.h"
#include "tool_args.h"

const char *const zb_compare_usage =
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
    "  the 5 % false alarms are split over the gate's figures.\n"
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

zb_status zb_compare_parse_args(int argc, char **argv, cmp_args *a) {
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
