/* calibrate's communication sweeps: the step's slowdowns beside the other
 * kind of work, and the collectives inside a node and across nodes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_runs.h"
#include "comm.h"
#include "dtype.h"

/* The sim's per-op overhead from the sync step: its time outside every op
 * record (idle_ms: the host's time between ops, the stream's hand-offs)
 * over its ops, the gap the sim puts before each op. The element-wise
 * sweep's intercept (0.4-0.5 us here) is a loop's gap between calls of
 * one op; the tiny step's ranks spent 0.37 ms of a 1.37 ms step outside
 * its 114 ops, 3.3 us each, which the sim had left out. */
static void take_gap(const json_t *metrics, zb_calib *c) {
    double idle = json_number_value(json_object_get(metrics, "idle_ms"));
    double ops = json_number_value(json_object_get(metrics, "ops_per_step"));
    c->gap_try.have = isfinite(idle) && idle >= 0 && isfinite(ops) && ops >= 1;
    if (!c->gap_try.have) {
        snprintf(c->gap_try.why_not, sizeof c->gap_try.why_not, "the step run gave no idle time and op count "
                 "(idle_ms %g, ops_per_step %g: not traced?)", idle, ops);
        return;
    }
    c->gap_idle_ms = idle;
    c->gap_ops = ops;
    c->gap_s = idle * 1e-3 / ops;
}

/* The hold at a collective's start from the prefetch step: the compute a
 * collective's start held back, over the collectives compute had work
 * beside (comm_hold.h), the gap the sim puts there (sim.comm_hold_s). On
 * one core a rank the collective's thread takes the core as it begins:
 * compute resumed 0.94 ms (median) after medium's gathers began on 2 ranks
 * here, 56 us after the tiny model's (the poll's spin, ZB_MPI_SPIN_NS). */
static void take_hold(const json_t *metrics, zb_calib *c) {
    double hold = json_number_value(json_object_get(metrics, "comm_hold_ms"));
    c->hold_try.have = isfinite(hold) && hold >= 0 && hold <= 1e3;
    if (!c->hold_try.have) {
        snprintf(c->hold_try.why_not, sizeof c->hold_try.why_not, "the prefetch step gave no hold at its "
                 "collectives' starts (comm_hold_ms %g: not traced, or no collective beside compute)", hold);
        return;
    }
    c->hold_s = hold * 1e-3;
}

/* The slowdowns beside the other kind of work, from the step itself: one
 * sync-vs-prefetch run (--mode both) at the model's shape on the job's
 * layout (across its nodes when it spans several: the comm a step overlaps
 * there is the inter-node one). Sync overlaps nothing; prefetch overlaps
 * comm with compute for overlap x comm; each pair of steps gives compute
 * and comm alone and beside. */
zb_status zb_calib_step_sweep(const calib_args *a, const calib_run *r, zb_calib *c) {
    const char *args[40] = {"step", "--mode", "both", "--steps", a->steps, "--warmup", "1"};
    int n = zb_calib_job_args(a, a->nodes ? a->nodes : "1", args, 7);
    if (a->model) {
        args[n++] = "--model";
        args[n++] = a->model;
    }
    n = zb_calib_rank_args(a, args, n);
    snprintf(c->step_command, sizeof c->step_command, "zerobench step --mode both --steps %s --model %s --nodes %s",
             a->steps, a->model ? a->model : "tiny", a->nodes ? a->nodes : "1");
    json_t *doc = NULL;
    ZB_TRY(zb_calib_run_child(r, "step", args, n, false, &doc));
    enum { CAP = ZB_CALIB_MAX_POINTS };
    static double comp[2][CAP], comm[2][CAP], ov[CAP];
    int nc[2] = {0, 0}, nm[2] = {0, 0}, no = 0;
    const json_t *runs = json_object_get(doc, "runs");
    for (size_t i = 0; i < json_array_size(runs); i++) {
        const json_t *run = json_array_get(runs, i);
        const char *mode = zb_calib_str_or(json_string_value(json_object_get(run, "mode")), "");
        int m = !strcmp(mode, "sync") ? 0 : !strcmp(mode, "prefetch") ? 1 : -1;
        if (m < 0) continue;
        const json_t *metrics = json_object_get(run, "metrics");
        double mem = json_number_value(json_object_get(metrics, "peak_mem_bytes"));
        if (mem > c->step_mem_bytes) c->step_mem_bytes = mem;
        if (m == 0) take_gap(metrics, c);
        if (m == 1) take_hold(metrics, c);
        nc[m] = zb_calib_samples_of(run, "compute_ms", 1e-3, comp[m], CAP);
        nm[m] = zb_calib_samples_of(run, "comm_ms", 1e-3, comm[m], CAP);
        if (m == 1) no = zb_calib_samples_of(run, "overlap_pct", 0.01, ov, CAP);
    }
    json_decref(doc);
    int pairs = nc[0];
    const int counts[4] = {nc[1], nm[0], nm[1], no};
    for (int i = 0; i < 4; i++) pairs = counts[i] < pairs ? counts[i] : pairs;
    for (int i = 0; i < pairs; i++) ov[i] *= comm[1][i]; /* the overlapped seconds */
    for (int k = 0; k < 2; k++) {
        const double *alone = k ? comm[0] : comp[0], *beside = k ? comm[1] : comp[1];
        c->slow_try[k].have = zb_calib_fit_slowdown(alone, beside, ov, pairs, &c->slow[k]) == ZB_OK;
        if (!c->slow_try[k].have) zb_calib_say_not(&c->slow_try[k]);
    }
    return ZB_OK;
}

/* A sweep too noisy to fit (on a loaded machine small sizes can take
 * longer than large ones) is said, not fatal: the profile then keeps the
 * base's value for that link and the summary says so. */
static void fit_or_say(const zb_calib_point *pts, int n, zb_calib_coll_fit *f) {
    char why[ZB_ERROR_MAX];
    f->have = zb_calib_fit_alpha_beta(pts, n, &f->fit) == ZB_OK;
    if (!f->have) snprintf(f->why_not, sizeof f->why_not, "%s", zb_error_text(why, sizeof why));
}

/* The collectives run as the step runs them: out of place, each call on
 * the next part of buffers as large as the step's per-rank peak memory
 * (--rotate-bytes; the step run's peak_mem_bytes), so that they find in the
 * caches what the step's find: the medium model's 316 MiB a rank is far
 * past this VM's 32 MiB of L3, and a loop on one buffer measured its
 * all-gather at 2x the bandwidth the step's own collectives reached (7.2
 * against 3.2-3.9 GB/s busbw at 4-12 MiB); the tiny model's 2.4 MB stays
 * in it, and its step's collectives ran at half the time the cold sweep
 * priced them (0.216 ms a step against 0.368). Without a step run (one
 * rank a node), over ZB_CALIB_ROTATE. */
#define ZB_CALIB_ROTATE "256M"

static void rotate_bytes(const zb_calib *c, char *out, size_t n) {
    if (c->step_mem_bytes > 0) snprintf(out, n, "%.0f", c->step_mem_bytes);
    else snprintf(out, n, "%s", ZB_CALIB_ROTATE);
}

/* One placement's sweeps of the three collectives, fitted one by one and pooled. */
zb_status zb_calib_coll_sweeps(const calib_args *a, const calib_run *r, int placement, const char *nodes,
                             zb_calib *c) {
    static zb_calib_point pooled[ZB_CALIB_N_COLLS * ZB_CALIB_MAX_POINTS];
    int n_pooled = 0, ranks = 0;
    char rot[32];
    rotate_bytes(c, rot, sizeof rot);
    for (int k = 0; k < ZB_CALIB_N_COLLS; k++) {
        const char *args[40] = {zb_calib_colls[k], "-b", a->coll_min, "-e", a->coll_max, "-f", "4", "-n", a->iters,
                                "-w", "1", "-c", "0", "-d", a->dtype, "--rotate-bytes", rot};
        int n = zb_calib_job_args(a, nodes, args, 17);
        char name[64];
        snprintf(name, sizeof name, "%s_%s", zb_calib_colls[k], placement == ZB_CALIB_INTRA ? "intra" : "inter");
        json_t *doc = NULL;
        ZB_TRY(zb_calib_run_child(r, name, args, n, false, &doc));
        zb_calib_point pts[ZB_CALIB_MAX_POINTS];
        int np = 0;
        const json_t *runs = json_object_get(doc, "runs");
        for (size_t i = 0; i < json_array_size(runs) && np < ZB_CALIB_MAX_POINTS; i++) {
            const json_t *run = json_array_get(runs, i);
            zb_dtype d;
            if (json_is_true(json_object_get(run, "in_place"))) continue; /* the step's are out of place */
            if (zb_dtype_parse(zb_calib_str_or(json_string_value(json_object_get(run, "dtype")), ""), &d) != ZB_OK) continue;
            ranks = (int)json_integer_value(json_object_get(run, "ranks"));
            size_t count = (size_t)json_integer_value(json_object_get(run, "count"));
            zb_coll kind = k == 0 ? ZB_COLL_ALLGATHER : k == 1 ? ZB_COLL_REDUCESCATTER : ZB_COLL_ALLREDUCE;
            pts[np].steps = zb_calib_ring_steps(zb_calib_colls[k], ranks);
            pts[np].sent_bytes = (double)zb_coll_sent_bytes(kind, count, zb_dtype_size(d), ranks);
            pts[np].time_s = zb_calib_op_time_s(run);
            pooled[n_pooled++] = pts[np++];
        }
        snprintf(c->coll_command, sizeof c->coll_command, "zerobench allgather|reducescatter|allreduce -b %s -e %s "
                 "-f 4 -n %s --rotate-bytes %s (out of place; the step's peak memory a rank)", a->coll_min,
                 a->coll_max, a->iters, rot);
        json_decref(doc);
        zb_calib_coll_fit *f = &c->coll[placement][k];
        f->ranks = ranks;
        fit_or_say(pts, np, f);
    }
    zb_calib_coll_fit *p = &c->pooled[placement];
    p->ranks = ranks;
    fit_or_say(pooled, n_pooled, p);
    return ZB_OK;
}
