/* zerobench accept PROFILE: hardware acceptance. Loads the profile
 * (accept_profile.c), counts the devices first and stops there on a
 * degraded node, then runs each check's benchmark as a child of this same
 * binary (tool_run.h: --json to a temporary file, the check's timeout),
 * `repeat` times, judges the results (accept_judge.c) and prints PASS, FAIL
 * or SKIP per check with the measured value, the threshold (a fraction of
 * a reference figure), the margin and the source (accept_report.c, also
 * --junit and --json). Exit 0: every check passed or
 * does not apply; 1: a check failed; 2: a bad profile or flag (no output
 * file written). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "accept.h"
#include "out_path.h"
#include "results.h"
#include "tool.h"
#include "tool_run.h"

typedef struct accept_args {
    const char *profile, *junit, *json;
    bool help, dry_run;
} accept_args;

static const char *accept_usage =
    "usage: zerobench accept PROFILE [options]\n"
    "  Runs the checks of an acceptance profile (profiles/accept/PROFILE.json, or a path)\n"
    "  and prints PASS/FAIL per check: exit 0 all passed, 1 a check failed, 2 a bad profile.\n"
    "  --junit FILE   also write the verdicts as JUnit XML\n"
    "  --json FILE    also write them as JSON (schema zerobench-accept/1)\n"
    "  --dry-run      check the profile and print each check's command; run nothing\n"
    "  -h, --help     this help\n";

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static zb_status parse_args(int argc, char **argv, accept_args *a) {
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char **dst = !strcmp(arg, "--junit") ? &a->junit : !strcmp(arg, "--json") ? &a->json : NULL;
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            a->help = true;
        } else if (!strcmp(arg, "--dry-run")) {
            a->dry_run = true;
        } else if (dst) {
            if (i + 1 >= argc) return ZB_FAIL(ZB_ERR_INVALID, "%s needs a file name", arg);
            *dst = argv[++i];
            if (!(*dst)[0]) return ZB_FAIL(ZB_ERR_INVALID, "%s: expected a file name", arg);
            ZB_TRY(zb_out_path_check(arg, *dst));
        } else if (arg[0] == '-') {
            return ZB_FAIL(ZB_ERR_INVALID, "unknown option '%.32s' (see zerobench accept --help)", arg);
        } else if (a->profile) {
            return ZB_FAIL(ZB_ERR_INVALID, "'%.64s': accept takes one profile", arg);
        } else {
            a->profile = arg;
        }
    }
    if (!a->help && !a->profile) return ZB_FAIL(ZB_ERR_INVALID, "expected a profile (see zerobench accept --help)");
    const zb_path_use uses[] = {{"--junit", a->junit, true}, {"--json", a->json, true}, {"PROFILE", a->profile, false}};
    return zb_paths_distinct(uses, 3);
}

/* What a failed child said, for the check's reason: its last "zerobench:"
 * line (the project's error lines; not the launcher's "launching:" line),
 * else its last line with a letter in it (not an mpirun rule of dashes). */
static void last_line(const char *log, char *out, size_t n) {
    FILE *f = fopen(log, "r");
    char line[1024];
    bool have_own = false;
    out[0] = '\0';
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        bool own = !strncmp(line, "zerobench:", 10) && strncmp(line, "zerobench: launching:", 21), letter = false;
        for (const char *c = line; *c && !letter; c++) letter = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z');
        if (own || (letter && !have_own)) snprintf(out, n, "%s", line);
        have_own = have_own || own;
    }
    fclose(f);
}

/* The command line of a run of benchmark check c, NULL-terminated:
 * args[0] the benchmark, the profile's and the check's flags, --json
 * json_path, then `last` when not NULL. `args` holds ZB_ACCEPT_MAX_ARGS + 4. */
static void check_command(const zb_accept_profile *p, const zb_accept_check *c, const char *json_path,
                          const char *last, const char **args) {
    int n = 0;
    args[n++] = c->bench;
    for (int i = 0; i < p->n_args; i++) args[n++] = p->args[i];
    for (int i = 0; i < c->n_args; i++) args[n++] = c->args[i];
    args[n++] = "--json";
    args[n++] = json_path;
    if (last) args[n++] = last;
    args[n] = NULL;
}

/* A benchmark that exited 2 on check `index`'s arguments: a bad profile. */
static zb_status refused(const zb_accept_profile *p, const zb_accept_check *c, size_t index, const char *tail) {
    char shown[72];
    return ZB_FAIL(ZB_ERR_INVALID, "'%s': checks[%zu] (%s): zerobench %s refused its arguments: %s",
                   zb_results_shown_path(p->path, shown), index, c->name, c->bench, tail);
}

/* Runs check c `repeat` times; docs[] get the results. ZB_ERR_INVALID: the
 * benchmark refused the profile's arguments (a bad profile). Any other
 * failure is the check's: out->reason says it and the return is ZB_OK. */
static zb_status run_benchmark(const zb_accept_profile *p, const zb_accept_check *c, size_t index, const char *tmp,
                               json_t **docs, int *n_docs, zb_check_outcome *out) {
    *n_docs = 0;
    for (int r = 0; r < c->repeat; r++) {
        char json_path[1100], log_path[1100], tail[400];
        snprintf(json_path, sizeof json_path, "%s/check%zu-run%d.json", tmp, index, r);
        snprintf(log_path, sizeof log_path, "%s/check%zu-run%d.log", tmp, index, r);
        const char *args[ZB_ACCEPT_MAX_ARGS + 4];
        check_command(p, c, json_path, NULL, args);
        int code = 0;
        zb_status s = zb_tool_run_self(args, log_path, c->timeout_s, &code);
        last_line(log_path, tail, sizeof tail);
        if (s == ZB_ERR_TIMEOUT) {
            out->verdict = ZB_CHECK_FAIL;
            snprintf(out->reason, sizeof out->reason, "run %d of zerobench %s ran past %g s and was stopped", r + 1,
                     c->bench, c->timeout_s);
            return ZB_OK;
        }
        if (s != ZB_OK) {
            out->verdict = ZB_CHECK_FAIL;
            snprintf(out->reason, sizeof out->reason, "%s", zb_error_message());
            return ZB_OK;
        }
        if (code == 2) return refused(p, c, index, tail);
        if (code != 0) {
            out->verdict = ZB_CHECK_FAIL;
            snprintf(out->reason, sizeof out->reason, "run %d of zerobench %s exited %d: %s", r + 1, c->bench, code,
                     tail);
            return ZB_OK;
        }
        if (zb_results_load(json_path, &docs[*n_docs]) != ZB_OK) {
            out->verdict = ZB_CHECK_FAIL;
            snprintf(out->reason, sizeof out->reason, "run %d: %s", r + 1, zb_error_message());
            return ZB_OK;
        }
        (*n_docs)++;
    }
    return ZB_OK;
}

/* Whether checks a and b run the same benchmark the same way, so that b
 * can judge a's results instead of running them again. */
static bool same_runs(const zb_accept_check *a, const zb_accept_check *b) {
    if (a->kind == ZB_CHECK_DEVICES || b->kind == ZB_CHECK_DEVICES) return false;
    if (strcmp(a->bench, b->bench) || a->n_args != b->n_args || a->repeat != b->repeat) return false;
    for (int i = 0; i < a->n_args; i++) {
        if (strcmp(a->args[i], b->args[i])) return false;
    }
    return true;
}

static void remove_tmp(const char *tmp, const zb_accept_profile *p) {
    char path[1100];
    for (size_t i = 0; i < p->n_checks; i++) {
        for (int r = 0; r < p->checks[i].repeat; r++) {
            snprintf(path, sizeof path, "%s/check%zu-run%d.json", tmp, i, r);
            unlink(path);
            snprintf(path, sizeof path, "%s/check%zu-run%d.log", tmp, i, r);
            unlink(path);
        }
    }
    rmdir(tmp);
}

/* Devices checks first (fail fast on a degraded node), then the profile's order. */
static void run_order(const zb_accept_profile *p, const zb_accept_check **order, size_t *index) {
    size_t k = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < p->n_checks; i++) {
            if ((p->checks[i].kind == ZB_CHECK_DEVICES) == (pass == 0)) {
                index[k] = i;
                order[k++] = &p->checks[i];
            }
        }
    }
}

/* A fresh temporary folder for the children's files, in $TMPDIR or /tmp. */
static bool make_tmp(char *tmp, size_t n) {
    const char *tdir = getenv("TMPDIR");
    snprintf(tmp, n, "%s/zb-accept-XXXXXX", tdir && tdir[0] ? tdir : "/tmp");
    return mkdtemp(tmp) != NULL;
}

/* --dry-run refuses what the real run would refuse: each benchmark check's
 * command line goes to a child of this binary with --help last, which
 * parses every flag and value as the run would, then stops before any work
 * (no check of how the flags combine: that needs the run). Exit 2 from it:
 * the profile is bad, as in the real run. */
static zb_status dry_check_args(const zb_accept_profile *p) {
    char tmp[512];
    if (!make_tmp(tmp, sizeof tmp)) return ZB_FAIL(ZB_ERR_IO, "cannot make a temporary folder %s: %s", tmp, strerror(errno));
    zb_status s = ZB_OK;
    for (size_t i = 0; i < p->n_checks && s == ZB_OK; i++) {
        const zb_accept_check *c = &p->checks[i];
        if (c->kind == ZB_CHECK_DEVICES) continue;
        char json_path[1100], log_path[1100], tail[400];
        snprintf(json_path, sizeof json_path, "%s/check%zu-dry.json", tmp, i);
        snprintf(log_path, sizeof log_path, "%s/check%zu-dry.log", tmp, i);
        const char *args[ZB_ACCEPT_MAX_ARGS + 4];
        check_command(p, c, json_path, "--help", args);
        int code = 0;
        s = zb_tool_run_self(args, log_path, c->timeout_s, &code);
        last_line(log_path, tail, sizeof tail);
        unlink(log_path);
        unlink(json_path); /* never written (--help), removed all the same */
        if (s == ZB_OK && code == 2) s = refused(p, c, i, tail);
    }
    rmdir(tmp);
    return s;
}

/* --dry-run: what each check would run, devices first. */
static void dry_run(const zb_accept_profile *p) {
    const zb_accept_check **order = (const zb_accept_check **)calloc(p->n_checks, sizeof *order);
    size_t *index = (size_t *)calloc(p->n_checks, sizeof *index);
    if (!order || !index) {
        free(order);
        free(index);
        return;
    }
    run_order(p, order, index);
    printf("# zerobench accept %s (%s): %zu check(s), not run (--dry-run)\n", p->name, p->path, p->n_checks);
    for (size_t k = 0; k < p->n_checks; k++) {
        const zb_accept_check *c = order[k];
        if (c->kind == ZB_CHECK_DEVICES) {
            printf("%s: count the %s devices of this node, expected %d\n", c->name, c->backend, c->per_node);
            continue;
        }
        printf("%s: %d x zerobench %s", c->name, c->repeat, c->bench);
        for (int i = 0; i < p->n_args; i++) printf(" %s", p->args[i]);
        for (int i = 0; i < c->n_args; i++) printf(" %s", c->args[i]);
        printf(" --json FILE (timeout %g s); %s %s %.4g %s (%.4g x %.4g %s)\n", c->timeout_s,
               c->kind == ZB_CHECK_METRIC ? c->metric : "deviation from the median",
               c->kind == ZB_CHECK_METRIC && c->is_min ? ">=" : "<=", c->threshold, c->unit, c->fraction, c->reference,
               c->unit);
    }
    free(order);
    free(index);
}

static int accept_main(int argc, char **argv) {
    accept_args a;
    zb_accept_profile p;
    if (parse_args(argc, argv, &a) != ZB_OK) {
        fprintf(stderr, "zerobench accept: %s\n", zb_error_message());
        return 2;
    }
    if (a.help) {
        fputs(accept_usage, stdout);
        return 0;
    }
    /* Its children start their own MPI jobs (the launcher's --nodes): under
     * mpirun or srun every rank would run the whole profile, and each child
     * would take the job's rank variables for its own. The variables are the
     * launcher's (harness/cli/launch.c, zb_under_mpi). */
    static const char *const mpi_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof mpi_vars / sizeof mpi_vars[0]; i++) {
        if (getenv(mpi_vars[i])) {
            fprintf(stderr, "zerobench accept: runs its benchmarks as MPI jobs of their own: start it outside "
                            "mpirun/srun (%s is set)\n", mpi_vars[i]);
            return 2;
        }
    }
    if (zb_accept_profile_load(a.profile, &p) != ZB_OK) {
        fprintf(stderr, "zerobench accept: %s\n", zb_error_message());
        return 2;
    }
    if (a.dry_run) {
        zb_status s = dry_check_args(&p);
        if (s == ZB_OK) dry_run(&p);
        else fprintf(stderr, "zerobench accept: %s\n", zb_error_message());
        zb_accept_profile_free(&p);
        return s == ZB_OK ? 0 : s == ZB_ERR_INVALID ? 2 : 1;
    }
    char tmp[512];
    const zb_accept_check **order = (const zb_accept_check **)calloc(p.n_checks, sizeof *order);
    size_t *index = (size_t *)calloc(p.n_checks, sizeof *index);
    zb_check_outcome *out = (zb_check_outcome *)calloc(p.n_checks, sizeof *out);
    json_t *(*docs)[ZB_ACCEPT_MAX_REPEAT] = calloc(p.n_checks, sizeof *docs); /* each check's results */
    int *n_docs = (int *)calloc(p.n_checks, sizeof *n_docs);
    if (!order || !index || !out || !docs || !n_docs || !make_tmp(tmp, sizeof tmp)) {
        fprintf(stderr, "zerobench accept: cannot make a temporary folder %s: %s\n", tmp, strerror(errno));
        free(docs);
        free(n_docs);
        free(order);
        free(index);
        free(out);
        zb_accept_profile_free(&p);
        return 1;
    }
    run_order(&p, order, index);
    printf("# zerobench accept %s (%s): %zu check(s)%s%s\n", p.name, p.path, p.n_checks, p.description ? ": " : "",
           p.description ? p.description : "");
    fflush(stdout);
    const char *degraded = NULL;
    zb_status bad = ZB_OK;
    size_t n_fail = 0, done = 0;
    for (size_t k = 0; k < p.n_checks && bad == ZB_OK; k++, done++) {
        const zb_accept_check *c = order[k];
        double t0 = now_s();
        if (c->kind == ZB_CHECK_DEVICES) {
            zb_accept_devices(c, &out[k]);
            if (out[k].verdict == ZB_CHECK_FAIL && !degraded) degraded = c->name;
        } else if (degraded) {
            out[k].verdict = ZB_CHECK_SKIP;
            snprintf(out[k].reason, sizeof out[k].reason, "not run: the devices check '%s' failed", degraded);
        } else {
            size_t j = 0;
            while (j < k && !(same_runs(order[j], c) && n_docs[j] == c->repeat)) j++;
            if (j < k) { /* the same runs as an earlier check: judge its results */
                for (int r = 0; r < n_docs[j]; r++) docs[k][r] = json_incref(docs[j][r]);
                n_docs[k] = n_docs[j];
            } else {
                bad = run_benchmark(&p, c, index[k], tmp, docs[k], &n_docs[k], &out[k]);
            }
            if (bad != ZB_OK) break;
            if (!out[k].reason[0]) zb_accept_judge(c, docs[k], n_docs[k], &out[k]);
        }
        out[k].seconds = now_s() - t0;
        n_fail += out[k].verdict == ZB_CHECK_FAIL;
        char lines[2400];
        zb_accept_describe(c, &out[k], lines, sizeof lines);
        fputs(lines, stdout);
        fflush(stdout);
    }
    int code = bad != ZB_OK ? 2 : n_fail ? 1 : 0;
    if (bad != ZB_OK) {
        fprintf(stderr, "zerobench accept: %s\n", zb_error_message());
    } else {
        printf("# %s: %zu of %zu check(s) failed\n", n_fail ? "FAILED" : "PASSED", n_fail, p.n_checks);
        zb_status s = ZB_OK;
        if (a.junit) s = zb_accept_write_junit(&p, order, out, done, a.junit);
        if (s == ZB_OK && a.json) s = zb_accept_write_json(&p, order, out, done, a.json);
        if (s != ZB_OK) {
            fprintf(stderr, "zerobench accept: %s\n", zb_error_message());
            code = 1;
        }
    }
    for (size_t k = 0; k < p.n_checks; k++) {
        zb_check_outcome_clear(&out[k]);
        for (int r = 0; r < n_docs[k]; r++) json_decref(docs[k][r]);
    }
    free(docs);
    free(n_docs);
    remove_tmp(tmp, &p);
    free(order);
    free(index);
    free(out);
    zb_accept_profile_free(&p);
    return code;
}

const zb_tool zb_tool_accept = {
    .name = "accept",
    .summary = "hardware acceptance: run a profile's checks (profiles/accept/), PASS/FAIL each (exit 1 on any FAIL)",
    .main = accept_main,
};
