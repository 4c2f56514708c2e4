/* zerobench export --format github-benchmark|bencher RESULTS.json... -o OUT:
 * the figures of results files as CI dashboards read them, with no base
 * run and no judgement (export.h). github-benchmark writes both of the
 * action's files, OUT-smaller.json (customSmallerIsBetter) and
 * OUT-bigger.json (customBiggerIsBetter), since the action reads one
 * direction per file; bencher writes one BMF file (or stdout without -o).
 * Exit 0: written (whatever the figures say: gating is compare's); 1: a
 * write failed; 2: unusable input (a missing or broken file, another
 * schema, no figure to export, a bad flag), with one line and no file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "export.h"
#include "out_path.h"
#include "report.h"
#include "results.h"
#include "tool.h"
#include "tool_args.h"

#define ZB_EXPORT_MAX_FILES 256
#define ZB_EXPORT_PATH_MAX 4096

typedef enum { FMT_NONE = 0, FMT_GITHUB, FMT_BENCHER } export_format;

typedef struct export_args {
    const char *files[ZB_EXPORT_MAX_FILES];
    int n_files;
    export_format format;
    const char *output;
    char out[2][ZB_EXPORT_PATH_MAX]; /* the files written: github's two, or bencher's one in out[0] */
    int n_out;
    bool help;
} export_args;

static const char *export_usage =
    "usage: zerobench export --format github-benchmark|bencher RESULTS.json... [-o OUT]\n"
    "  Writes the judged metrics of results files (compare's table: unit and direction) for a CI\n"
    "  dashboard; no base run, no verdict: exit 0 once written, 1 a write failed, 2 unusable input.\n"
    "  --format github-benchmark  github-action-benchmark's custom tools, one direction per file:\n"
    "                             -o OUT writes OUT-smaller.json (tool: customSmallerIsBetter) and\n"
    "                             OUT-bigger.json (tool: customBiggerIsBetter); -o is required\n"
    "  --format bencher           Bencher Metric Format (bencher run --adapter json --file OUT):\n"
    "                             {benchmark: {measure: {value, lower_value, upper_value}}}; stdout\n"
    "                             without -o. BMF has no direction: set each measure's threshold\n"
    "                             (an upper boundary for times and memory, a lower one for bandwidth,\n"
    "                             TFLOP/s, tokens/s, MFU and overlap)\n"
    "  -o, --output OUT           the file (bencher) or the files' prefix (github-benchmark)\n"
    "  -h, --help                 this help\n"
    "  A benchmark is a run (its label; ' (simulated)'; ' #2' for a second run of one label),\n"
    "  a measure one of its metrics under its key (step_time_ms, busbw_gbps, ...).\n";

static zb_status parse_args(int argc, char **argv, export_args *a) {
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v;
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            a->help = true;
        } else if ((v = zb_tool_flag_value(argc, argv, &i, "--format", NULL))) {
            if (!strcmp(v, "github-benchmark")) a->format = FMT_GITHUB;
            else if (!strcmp(v, "bencher")) a->format = FMT_BENCHER;
            else {
                char shown[72];
                return ZB_FAIL(ZB_ERR_INVALID, "--format '%s' (accepted: github-benchmark, bencher)",
                               zb_shown_path(v, shown));
            }
        } else if ((v = zb_tool_flag_value(argc, argv, &i, "--output", "-o"))) {
            if (!*v) return ZB_FAIL(ZB_ERR_INVALID, "--output: expected a file name");
            a->output = v;
        } else if (arg[0] == '-' && arg[1]) {
            char shown[72];
            return ZB_FAIL(ZB_ERR_INVALID, "unknown option '%s' (accepted: --format, -o/--output, --help)",
                           zb_shown_path(arg, shown));
        } else if (a->n_files < ZB_EXPORT_MAX_FILES) {
            a->files[a->n_files++] = arg;
        } else {
            return ZB_FAIL(ZB_ERR_INVALID, "at most %d results files", ZB_EXPORT_MAX_FILES);
        }
    }
    if (a->help) return ZB_OK;
    if (a->format == FMT_NONE) return ZB_FAIL(ZB_ERR_INVALID, "--format: required (accepted: github-benchmark, bencher)");
    if (!a->n_files) return ZB_FAIL(ZB_ERR_INVALID, "expected one or more results files (RESULTS.json...)");
    if (a->format == FMT_GITHUB && !a->output) {
        return ZB_FAIL(ZB_ERR_INVALID, "--format github-benchmark needs -o OUT: it writes OUT-smaller.json and "
                                       "OUT-bigger.json (the action reads one direction per file)");
    }
    if (a->output && a->format == FMT_GITHUB) {
        const char *ends[2] = {"-smaller.json", "-bigger.json"};
        for (int k = 0; k < 2; k++) {
            if (snprintf(a->out[k], sizeof a->out[k], "%s%s", a->output, ends[k]) >= (int)sizeof a->out[k]) {
                return ZB_FAIL(ZB_ERR_INVALID, "--output: longer than %d bytes", ZB_EXPORT_PATH_MAX - 16);
            }
        }
        a->n_out = 2;
    } else if (a->output) {
        snprintf(a->out[0], sizeof a->out[0], "%s", a->output);
        a->n_out = 1;
    }
    for (int k = 0; k < a->n_out; k++) ZB_TRY(zb_out_path_check("--output", a->out[k]));
    zb_path_use uses[ZB_EXPORT_MAX_FILES + 2];
    for (int k = 0; k < a->n_out; k++) uses[k] = (zb_path_use){"--output", a->out[k], true};
    for (int i = 0; i < a->n_files; i++) uses[a->n_out + i] = (zb_path_use){"RESULTS", a->files[i], false};
    return zb_paths_distinct(uses, a->n_out + a->n_files);
}

static int fail(int code) {
    fprintf(stderr, "zerobench export: %s\n", zb_error_message());
    return code;
}

/* Writes doc to `path` (atomically), or to stdout when path is NULL. */
static zb_status put(const json_t *doc, const char *path) {
    size_t len = 0;
    char *text = zb_json_dump(doc, 2, &len);
    if (!text) return ZB_FAIL(ZB_ERR_NOMEM, "export: out of memory");
    zb_status s = ZB_OK;
    char *full = (char *)realloc(text, len + 2);
    if (!full) {
        free(text);
        return ZB_FAIL(ZB_ERR_NOMEM, "export: out of memory");
    }
    full[len++] = '\n';
    full[len] = '\0';
    if (path) s = zb_atomic_write(path, full, len);
    else if (fwrite(full, 1, len, stdout) != len) s = ZB_FAIL(ZB_ERR_IO, "export: writing to stdout failed");
    free(full);
    return s;
}

static int export_main(int argc, char **argv) {
    export_args a;
    if (parse_args(argc, argv, &a) != ZB_OK) return fail(2);
    if (a.help) {
        fputs(export_usage, stdout);
        return 0;
    }
    json_t *docs[ZB_EXPORT_MAX_FILES] = {NULL};
    zb_status s = ZB_OK;
    for (int i = 0; s == ZB_OK && i < a.n_files; i++) s = zb_results_load(a.files[i], &docs[i]);
    json_t *smaller = NULL, *bigger = NULL, *bmf = NULL;
    size_t n_points = 0;
    int code = 0;
    if (s != ZB_OK) {
        code = fail(s == ZB_ERR_NOMEM ? 1 : 2);
    } else if ((s = zb_export_docs((const json_t *const *)docs, a.files, (size_t)a.n_files, &smaller, &bigger, &bmf,
                                   &n_points)) != ZB_OK) {
        code = fail(1);
    } else if (!n_points) {
        char names[1024];
        zb_metric_names(names, sizeof names);
        ZB_FAIL(ZB_ERR_INVALID, "nothing to export: no run of the %d file(s) holds a figure of the metrics "
                                "exported (%s)", a.n_files, names);
        code = fail(2);
    } else if (a.format == FMT_GITHUB) {
        s = put(smaller, a.out[0]);
        if (s == ZB_OK) s = put(bigger, a.out[1]);
        if (s != ZB_OK) code = fail(1);
    } else if ((s = put(bmf, a.n_out ? a.out[0] : NULL)) != ZB_OK) {
        code = fail(1);
    }
    if (!code && a.n_out) {
        char shown[2][72];
        fprintf(stderr, "zerobench export: %zu figure(s) of %zu run(s) written to %s%s%s\n", n_points,
                json_object_size(bmf), zb_shown_path(a.out[0], shown[0]), a.n_out > 1 ? " and " : "",
                a.n_out > 1 ? zb_shown_path(a.out[1], shown[1]) : "");
    }
    json_decref(smaller);
    json_decref(bigger);
    json_decref(bmf);
    for (int i = 0; i < a.n_files; i++) json_decref(docs[i]);
    return code;
}

const zb_tool zb_tool_export = {
    .name = "export",
    .summary = "write results files' figures for CI dashboards (github-action-benchmark, Bencher); no base",
    .main = export_main,
};
