/* zerobench compare BASE.json NEW.json (or BASE... -- NEW.json, a BASE
 * being a file or a folder of them): pairs the runs of the results files
 * by their identity (run_identity.h, compare_docs.c), judges every judged
 * metric of each pair (metric_table.h, compare_judge.c) against its
 * tolerance, direction-aware, by the two-sample test where both runs carry
 * samples (twosample.h) and by the min-max spread where not, against
 * several bases by their between-run range (compare_bases.c), derived
 * metrics by their source, environments that differ named and not judged
 * (compare_env.c), and prints the table (compare_format.c); its options
 * are compare_args.c's. Exit 0: nothing regressed; 1: a regression; 2:
 * unusable input (a missing or broken file, another schema, no run in
 * common, a bad flag); 3: nothing comparable (every judged row's
 * environment or peak differs). The output (-o) is written whole before
 * the exit code is decided, whatever it is; --no-gate exits 0 instead of
 * 1 or 3. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "compare.h"
#include "compare_args.h"
#include "results.h"
#include "tool.h"

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

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
    if (zb_compare_parse_args(argc, argv, &a) != ZB_OK) return fail_input();
    if (a.help) {
        fputs(zb_compare_usage, stdout);
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
