/* calibrate's child runs: `zerobench ...` as a child of this binary with
 * --json (and --trace) into the run's temporary folder, and what the sweeps
 * read from their results. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib_runs.h"
#include "overlap.h"
#include "profile.h"
#include "results.h"
#include "tool_run.h"

/* The log's last line with words in it (mpirun frames its messages in
 * lines of dashes), for a one-line message. */
static void last_line(const char *log, char *out, size_t n) {
    FILE *f = fopen(log, "r");
    char line[512];
    snprintf(out, n, "(no output)");
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        bool words = false;
        for (const char *q = line; *q && !words; q++) words = isalpha((unsigned char)*q);
        if (words) snprintf(out, n, "%s", line);
    }
    if (f) fclose(f);
}

/* Runs `zerobench args...` with --json DIR/NAME.json and loads that file;
 * traced: with --trace DIR/NAME.trace.json too, so that the child reports
 * its calls' device time from their records (op_records.h). */
zb_status zb_calib_run_child(const calib_run *r, const char *name, const char **args, int n_args, bool traced,
                              json_t **doc) {
    char json[400], log[400], trace[400];
    snprintf(json, sizeof json, "%s/%s.json", r->dir, name);
    snprintf(log, sizeof log, "%s/%s.log", r->dir, name);
    snprintf(trace, sizeof trace, "%s/%s.trace.json", r->dir, name);
    const char *argv[64];
    int n = 0;
    for (int i = 0; i < n_args && n < 58; i++) argv[n++] = args[i];
    argv[n++] = "--json";
    argv[n++] = json;
    if (traced) {
        argv[n++] = "--trace";
        argv[n++] = trace;
    }
    argv[n] = NULL;
    int rc = 0;
    zb_status s = zb_tool_run_self(argv, log, r->timeout_s, &rc);
    if (s == ZB_OK && rc != 0) {
        char tail[400];
        last_line(log, tail, sizeof tail);
        s = ZB_FAIL(rc == 2 ? ZB_ERR_INVALID : ZB_ERR_IO, "calibrate: 'zerobench %s' failed (exit %d): %s", args[0], rc,
                    tail);
    }
    if (s != ZB_OK) return s;
    return zb_results_load(json, doc);
}

const char *zb_calib_str_or(const char *s, const char *dflt) { return s ? s : dflt; }

static zb_status load_base(const char *name, zb_calib *c) {
    char path[512];
    if (strchr(name, '/') || (strlen(name) > 5 && !strcmp(name + strlen(name) - 5, ".json"))) {
        snprintf(path, sizeof path, "%s", name);
    } else {
        char dir[400];
        ZB_TRY(zb_profile_dir(dir, sizeof dir));
        snprintf(path, sizeof path, "%s/hw/%s.json", dir, name);
    }
    json_error_t err;
    c->base = json_load_file(path, 0, &err);
    if (!json_is_object(c->base)) return ZB_FAIL(ZB_ERR_INVALID, "calibrate: base profile %s: %s", path, err.text);
    snprintf(c->base_path, sizeof c->base_path, "%s", path);
    return ZB_OK;
}

int zb_calib_job_args(const calib_args *a, const char *nodes, const char **args, int n) {
    args[n++] = "--backend";
    args[n++] = a->backend;
    args[n++] = "--comm";
    args[n++] = a->comm;
    args[n++] = "--nodes";
    args[n++] = nodes;
    args[n++] = "--gpus-per-node";
    args[n++] = a->gpn ? a->gpn : "2";
    if (atoi(nodes) > 1 && a->emulate) args[n++] = "--emulate-nodes";
    if (atoi(nodes) > 1 && a->hostfile) {
        args[n++] = "--hostfile";
        args[n++] = a->hostfile;
    }
    return n;
}

int zb_calib_rank_args(const calib_args *a, const char **args, int n) {
    if (a->threads) {
        args[n++] = "--threads";
        args[n++] = a->threads;
    }
    if (a->hw) {
        args[n++] = "--hw";
        args[n++] = a->hw;
    }
    return n;
}

/* Every rank of the job times the op at once (-a 1: the mean over ranks,
 * one rank's cost), as the step's ranks compute at once: on a cluster each
 * node alone, as one node would; in a cluster in a box (ci/cluster) or with
 * --emulate-nodes the nodes share this machine's cores as the step's ranks
 * do. One node alone there timed the medium model's compute at 0.54 of the
 * 2-node step's (501.6 ms a step against 920.6). */
int zb_calib_layout_args(const calib_args *a, const char **args, int n) {
    n = zb_calib_job_args(a, a->nodes ? a->nodes : "1", args, n);
    args[n++] = "-a";
    args[n++] = "1";
    return zb_calib_rank_args(a, args, n);
}

/* How the first run ran: host, date, backends, threads per rank; and the base profile. */
zb_status zb_calib_take_meta(const calib_args *a, const json_t *doc, zb_calib *c) {
    const json_t *meta = json_object_get(doc, "meta"), *config = json_object_get(meta, "config");
    const char *host = json_string_value(json_array_get(json_object_get(meta, "hosts"), 0));
    const char *date = json_string_value(json_object_get(meta, "date_utc"));
    const char *hw = json_string_value(json_object_get(config, "hw"));
    snprintf(c->host, sizeof c->host, "%s", host ? host : "unknown");
    snprintf(c->date_utc, sizeof c->date_utc, "%s", date ? date : "unknown");
    snprintf(c->backend, sizeof c->backend, "%s", zb_calib_str_or(json_string_value(json_object_get(meta, "backend")), "?"));
    snprintf(c->comm, sizeof c->comm, "%s", zb_calib_str_or(json_string_value(json_object_get(meta, "comm")), "?"));
    c->threads = (int)json_integer_value(json_object_get(config, "blas_threads"));
    const char *base = a->base ? a->base : a->hw ? a->hw : hw;
    if (!base || !base[0]) {
        return ZB_FAIL(ZB_ERR_INVALID, "calibrate: the runs named no hardware profile to start from: pass --base BASE");
    }
    return load_base(base, c);
}

void zb_calib_say_not(zb_calib_try *t) {
    char why[ZB_ERROR_MAX];
    t->have = false;
    snprintf(t->why_not, sizeof t->why_not, "%s", zb_error_text(why, sizeof why));
}

/* A metric's samples of one run, into v (at most cap); how many. */
int zb_calib_samples_of(const json_t *run, const char *key, double scale, double *v, int cap) {
    const json_t *arr = json_object_get(json_object_get(json_object_get(run, "metrics"), "samples"), key);
    int n = 0;
    for (size_t i = 0; i < json_array_size(arr) && n < cap; i++) v[n++] = json_number_value(json_array_get(arr, i)) * scale;
    return n;
}

/* One op's time in a child run: the median of its per-iteration samples
 * (time_us), else the run's mean. On shared cores a few calls of a size can
 * run several times slower (a 64^3 GEMM here: 11 us in most calls, 38 in
 * others, its mean 2-3 times its median), and the step's ops are judged by
 * their median too; a mean would put those stalls into every op's cost. */
double zb_calib_op_time_s(const json_t *run) {
    double v[1024];
    int n = zb_calib_samples_of(run, "time_us", 1e-6, v, (int)(sizeof v / sizeof v[0]));
    if (n > 0) return zb_median(v, (size_t)n);
    return json_number_value(json_object_get(json_object_get(run, "metrics"), "time_us")) * 1e-6;
}

/* A traced run's device time per call (metrics.device_time_us: the median
 * of the calls' own records) when it has one, else op_time_s; *device says
 * which. The records leave out the gaps between calls, which the sim adds
 * to every op as op_overhead_s: a fit over them subtracts no overhead. */
double zb_calib_device_time_s(const json_t *run, bool *device) {
    const json_t *v = json_object_get(json_object_get(run, "metrics"), "device_time_us");
    *device = json_is_number(v) && json_number_value(v) > 0;
    return *device ? json_number_value(v) * 1e-6 : zb_calib_op_time_s(run);
}

void zb_calib_min_iters(const calib_args *a, char *out, size_t n) {
    snprintf(out, n, "%d", atoi(a->iters) > ZB_CALIB_MIN_ITERS ? atoi(a->iters) : ZB_CALIB_MIN_ITERS);
}

void zb_calib_remove_dir(const char *dir) {
    const char *names[] = {"memory", "kernels_0", "kernels_1", "gemm_model", "attention_0", "attention_1", "step", "gemm", "allgather_intra", "reducescatter_intra", "allreduce_intra", "allgather_inter",
                           "reducescatter_inter", "allreduce_inter"};
    char path[400];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s.json", dir, names[i]);
        unlink(path);
        snprintf(path, sizeof path, "%s/%s.log", dir, names[i]);
        unlink(path);
        snprintf(path, sizeof path, "%s/%s.trace.json", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}
