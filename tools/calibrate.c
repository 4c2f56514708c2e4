/* zerobench calibrate -o PROFILE.json: runs the GEMM sweep and the
 * collective sweeps on the machine at hand as child runs of this binary
 * (tool_run.h, --json to a temporary folder), fits them (calib_fit.h) and
 * writes a hardware profile that loads like any other (calib_profile.c;
 * its options: calib_args.c):
 * the measured peak, GEMM efficiency by size and the per-op overhead, the
 * latency and bandwidth of the links inside a node and, when the job spans
 * nodes, across them; everything else from the base profile.
 *
 *   zerobench calibrate -o /tmp/here.json
 *   zerobench calibrate -o here.json --backend cuda --dtype bf16 --nodes 2 --gpus-per-node 8
 *
 * Exit codes: 0 written, 2 bad input (nothing run, no file), 1 a child run
 * or a fit that failed (no file). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calib.h"
#include "comm.h"
#include "dtype.h"
#include "kernels.h"
#include "overlap.h"
#include "profile.h"
#include "results.h"
#include "tool.h"
#include "tool_run.h"

/* ---- child runs ---------------------------------------------------------------- */

typedef struct calib_run {
    char dir[256];
    double timeout_s;
} calib_run;

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
static zb_status run_child_as(const calib_run *r, const char *name, const char **args, int n_args, bool traced,
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

static zb_status run_child(const calib_run *r, const char *name, const char **args, int n_args, json_t **doc) {
    return run_child_as(r, name, args, n_args, false, doc);
}

static const char *str_or(const char *s, const char *dflt) { return s ? s : dflt; }

/* ---- the sweeps ------------------------------------------------------------------- */

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

/* The layout of the runs that time compute: one node of G ranks, each with
 * the threads a step's rank gets, so each figure is one rank's beside the
 * others (the step runs them so). Appends to args, returns the new count. */
static int layout_args(const calib_args *a, const char **args, int n) {
    args[n++] = "--backend";
    args[n++] = a->backend;
    args[n++] = "--nodes";
    args[n++] = "1";
    args[n++] = "--gpus-per-node";
    args[n++] = a->gpn ? a->gpn : "2";
    args[n++] = "-a";
    args[n++] = "1"; /* the mean over ranks: one rank's cost */
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

/* How the first run ran: host, date, backends, threads per rank; and the base profile. */
static zb_status take_meta(const calib_args *a, const json_t *doc, zb_calib *c) {
    const json_t *meta = json_object_get(doc, "meta"), *config = json_object_get(meta, "config");
    const char *host = json_string_value(json_array_get(json_object_get(meta, "hosts"), 0));
    const char *date = json_string_value(json_object_get(meta, "date_utc"));
    const char *hw = json_string_value(json_object_get(config, "hw"));
    snprintf(c->host, sizeof c->host, "%s", host ? host : "unknown");
    snprintf(c->date_utc, sizeof c->date_utc, "%s", date ? date : "unknown");
    snprintf(c->backend, sizeof c->backend, "%s", str_or(json_string_value(json_object_get(meta, "backend")), "?"));
    snprintf(c->comm, sizeof c->comm, "%s", str_or(json_string_value(json_object_get(meta, "comm")), "?"));
    c->threads = (int)json_integer_value(json_object_get(config, "blas_threads"));
    const char *base = a->base ? a->base : a->hw ? a->hw : hw;
    if (!base || !base[0]) {
        return ZB_FAIL(ZB_ERR_INVALID, "calibrate: the runs named no hardware profile to start from: pass --base BASE");
    }
    return load_base(base, c);
}

static void say_not(zb_calib_try *t) {
    char why[ZB_ERROR_MAX];
    t->have = false;
    snprintf(t->why_not, sizeof t->why_not, "%s", zb_error_text(why, sizeof why));
}

/* A metric's samples of one run, into v (at most cap); how many. */
static int samples_of(const json_t *run, const char *key, double scale, double *v, int cap) {
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
static double op_time_s(const json_t *run) {
    double v[1024];
    int n = samples_of(run, "time_us", 1e-6, v, (int)(sizeof v / sizeof v[0]));
    if (n > 0) return zb_median(v, (size_t)n);
    return json_number_value(json_object_get(json_object_get(run, "metrics"), "time_us")) * 1e-6;
}

/* A traced run's device time per call (metrics.device_time_us: the median
 * of the calls' own records) when it has one, else op_time_s; *device says
 * which. The records leave out the gaps between calls, which the sim adds
 * to every op as op_overhead_s: a fit over them subtracts no overhead. */
static double device_time_s(const json_t *run, bool *device) {
    const json_t *v = json_object_get(json_object_get(run, "metrics"), "device_time_us");
    *device = json_is_number(v) && json_number_value(v) > 0;
    return *device ? json_number_value(v) * 1e-6 : op_time_s(run);
}

/* Calls of a few microseconds run in one of two modes on the cpu backend
 * (the stream's thread kept busy by the host, or woken for each op), and
 * the first dozens after a size change mostly in the slow one: six runs of
 * the 64^3 GEMM gave medians of 2.8-3.0 us over 200 calls after 20 warm-up,
 * 6.4-13.1 us over 10 after 1. So the GEMM sweep times at least
 * ZB_CALIB_MIN_ITERS calls a size, after ZB_CALIB_WARMUP (the large sizes'
 * calls are milliseconds: a few seconds in all). */
#define ZB_CALIB_MIN_ITERS 200
#define ZB_CALIB_WARMUP "20"

static void min_iters(const calib_args *a, char *out, size_t n) {
    snprintf(out, n, "%d", atoi(a->iters) > ZB_CALIB_MIN_ITERS ? atoi(a->iters) : ZB_CALIB_MIN_ITERS);
}

/* Element-wise bandwidth and the per-op overhead: zerobench memory over the
 * collective sizes, fitted as time = overhead + bytes moved / bandwidth. */
static zb_status mem_sweep(const calib_args *a, const calib_run *r, zb_calib *c) {
    /* Buffers of 4K .. 16M (--quick: 4M): past the caches, where the step's large ops run; at least 20 calls
     * each, not ZB_CALIB_MIN_ITERS: 200 calls on one buffer kept it in the caches (67-74 GB/s against 53 with
     * 20, and the medium step's predictions fell to 0.73-0.81 of the measured). */
    char iters[32];
    snprintf(iters, sizeof iters, "%d", atoi(a->iters) > 20 ? atoi(a->iters) : 20);
    const char *top = a->quick ? "4M" : "16M";
    const char *args[40] = {"memory", "-b", "4K", "-e", top, "-f", "4", "-n", iters, "-w", "2", "-c", "0",
                            "-d", a->dtype};
    int n = layout_args(a, args, 15);
    snprintf(c->mem_command, sizeof c->mem_command, "zerobench memory -b 4K -e %s -f 4 -n %s", top, iters);
    json_t *doc = NULL;
    ZB_TRY(run_child(r, "memory", args, n, &doc));
    zb_status s = take_meta(a, doc, c);
    const json_t *runs = json_object_get(doc, "runs");
    zb_calib_point pts[ZB_CALIB_MAX_POINTS];
    int np = 0;
    for (size_t i = 0; s == ZB_OK && i < json_array_size(runs) && np < ZB_CALIB_MAX_POINTS; i++) {
        const json_t *m = json_object_get(json_array_get(runs, i), "metrics");
        pts[np].steps = 1;
        pts[np].sent_bytes = json_number_value(json_object_get(m, "bytes_moved"));
        pts[np++].time_s = op_time_s(json_array_get(runs, i));
    }
    json_decref(doc);
    if (s != ZB_OK) return s;
    c->mem_try.have = zb_calib_fit_alpha_beta(pts, np, &c->mem) == ZB_OK;
    if (!c->mem_try.have) say_not(&c->mem_try);
    return ZB_OK;
}

static zb_status gemm_sweep(const calib_args *a, const calib_run *r, zb_calib *c) {
    char iters[32];
    min_iters(a, iters, sizeof iters);
    const char *args[40] = {"gemm", "-b", a->gemm_min, "-e", a->gemm_max, "-f", "2", "-n", iters, "-w", ZB_CALIB_WARMUP,
                            "-c", "0", "-d", a->dtype};
    int n = layout_args(a, args, 15);
    snprintf(c->gemm_command, sizeof c->gemm_command, "zerobench gemm -b %s -e %s -f 2 -n %s -w %s", a->gemm_min,
             a->gemm_max, iters, ZB_CALIB_WARMUP);
    json_t *doc = NULL;
    ZB_TRY(run_child_as(r, "gemm", args, n, true, &doc));
    const json_t *runs = json_object_get(doc, "runs");
    zb_status s = ZB_OK;
    double peak_sum = 0;
    bool all_device = true;
    for (size_t i = 0; s == ZB_OK && i < json_array_size(runs); i++) {
        const json_t *run = json_array_get(runs, i), *m = json_object_get(run, "metrics");
        double tflops = json_number_value(json_object_get(m, "tflops"));
        double pct = json_number_value(json_object_get(m, "pct_peak"));
        long long dim = 0;
        if (sscanf(str_or(json_string_value(json_object_get(run, "shape")), ""), "%lldx", &dim) != 1 || !(pct > 0) ||
            c->gemm.n >= ZB_CALIB_MAX_POINTS) {
            s = ZB_FAIL(ZB_ERR_IO, "calibrate: the GEMM run gave no %% of peak (no peak known: pass --hw with "
                        "the device's peak)");
            break;
        }
        c->gemm.dim[c->gemm.n] = (double)dim;
        bool device = false;
        c->gemm.time_s[c->gemm.n] = device_time_s(run, &device);
        all_device = all_device && device;
        c->gemm.n++;
        peak_sum += tflops * 1e12 * 100.0 / pct; /* the same peak for every size of one run */
    }
    if (s == ZB_OK && c->gemm.n < 2) s = ZB_FAIL(ZB_ERR_IO, "calibrate: the GEMM run gave %d size(s)", c->gemm.n);
    if (s == ZB_OK) {
        c->peak_flops = peak_sum / c->gemm.n;
        const json_t *field = json_object_get(c->base, strcmp(a->dtype, "bf16") ? "fp32_flops" : "bf16_flops");
        snprintf(c->peak_source, sizeof c->peak_source, "%s, per rank of %s x %d thread(s)", json_is_string(field)
                 ? "measured by the gemm run (the harness's FMA peak)" : "the base profile's peak",
                 a->gpn ? a->gpn : "2", c->threads);
        /* Device times hold no gap between calls; loop times hold the per-op overhead (the element-wise
         * fit's): a GEMM's time beyond it is its FLOPs' */
        c->gemm_device = all_device;
        double over = all_device || !c->mem_try.have ? 0 : c->mem.latency_s;
        s = zb_calib_fit_gemm(&c->gemm, c->peak_flops, over, &c->gemm_rms_pct, &c->gemm_max_pct);
    }
    json_decref(doc);
    return s;
}

/* The element-wise kernels one by one (zerobench kernels) at the model's
 * shapes and at twice its batch: per kernel, time = overhead + bytes /
 * (bandwidth x efficiency), the bandwidth and overhead the element-wise
 * fit's. One bandwidth prices a GPU's kernels; on the cpu backend RoPE,
 * the cross-entropy and the casts are bound by their arithmetic (6-8 GB/s
 * against the residual add's 30-50 on the medium model here). */
static zb_status kern_sweep(const calib_args *a, const calib_run *r, zb_calib *c) {
    zb_model_profile mp;
    ZB_TRY(zb_model_profile_load(a->model ? a->model : "tiny", &mp));
    char iters[32];
    snprintf(iters, sizeof iters, "%d", atoi(a->iters) > 50 ? atoi(a->iters) : 50);
    c->n_kern = 0;
    bool all_device = true;
    for (int k = 0; k < ZB_CALIB_KERNEL_SHAPES; k++) {
        char batch[32], name[32];
        snprintf(batch, sizeof batch, "%d", mp.batch << k);
        snprintf(name, sizeof name, "kernels_%d", k);
        const char *args[40] = {"kernels", "--model", a->model ? a->model : "tiny", "--batch", batch, "-n", iters,
                                "-w", "5", "-c", "0", "-d", a->dtype};
        int n = layout_args(a, args, 13);
        json_t *doc = NULL;
        ZB_TRY(run_child_as(r, name, args, n, true, &doc));
        const json_t *runs = json_object_get(doc, "runs");
        for (size_t i = 0; i < json_array_size(runs) && (int)i < (int)(sizeof c->kern / sizeof c->kern[0]); i++) {
            const json_t *run = json_array_get(runs, i);
            zb_calib_kernel *kk = &c->kern[i];
            if (k == 0) {
                snprintf(kk->name, sizeof kk->name, "%s", str_or(json_string_value(json_object_get(run, "op")), "?"));
                c->n_kern++;
            }
            if ((int)i >= c->n_kern || kk->n >= ZB_CALIB_KERNEL_SHAPES) continue;
            kk->bytes[kk->n] = json_number_value(json_object_get(json_object_get(run, "metrics"), "bytes_moved"));
            bool device = false;
            kk->time_s[kk->n++] = device_time_s(run, &device);
            all_device = all_device && device;
        }
        json_decref(doc);
    }
    snprintf(c->kern_command, sizeof c->kern_command, "zerobench kernels --model %s --batch %d,%d -n %s -w 5",
             a->model ? a->model : "tiny", mp.batch, 2 * mp.batch, iters);
    if (!c->mem_try.have) {
        snprintf(c->kern_try.why_not, sizeof c->kern_try.why_not, "no element-wise bandwidth to scale (%s)",
                 c->mem_try.why_not);
        return ZB_OK;
    }
    c->kern_try.have = c->n_kern > 0;
    c->kern_device = all_device;
    double over = all_device ? 0 : c->mem.latency_s; /* device times hold no gap between calls */
    for (int i = 0; i < c->n_kern && c->kern_try.have; i++) {
        c->kern_try.have = zb_calib_fit_kernel(&c->kern[i], c->mem.bandwidth_bytes_per_s, over) == ZB_OK;
    }
    if (!c->kern_try.have) say_not(&c->kern_try);
    return ZB_OK;
}

/* The model's own GEMMs (zerobench gemm --model: each linear's forward,
 * input gradient and weight gradient, and the LM head's), fitted into the
 * square sweep's table at their smallest dimensions (calib_fit.h). As many
 * calls as the square sweep (its calls of microseconds need them, calib
 * above), fewer where that would take more than about 30 s. */
static zb_status gemm_model_sweep(const calib_args *a, const calib_run *r, zb_calib *c) {
    zb_model_profile mp;
    ZB_TRY(zb_model_profile_load(a->model ? a->model : "tiny", &mp));
    double t = (double)mp.batch * mp.seq, q = (double)mp.heads * mp.head_dim, kv = (double)mp.kv_heads * mp.head_dim;
    double per_set = 3 * 2 * t * (2 * q * mp.dim + 2 * kv * mp.dim + 3.0 * mp.ffn_dim * mp.dim + (double)mp.vocab * mp.dim);
    double set_s = per_set / (0.5 * c->peak_flops); /* at half the peak: an upper guess */
    int iters = ZB_CALIB_MIN_ITERS, warm = atoi(ZB_CALIB_WARMUP);
    if ((iters + warm) * set_s > 30.0) {
        iters = (int)(30.0 / set_s) - 2 > 10 ? (int)(30.0 / set_s) - 2 : 10;
        warm = 2;
    }
    char it[32], w[32];
    snprintf(it, sizeof it, "%d", iters);
    snprintf(w, sizeof w, "%d", warm);
    const char *args[40] = {"gemm", "--model", a->model ? a->model : "tiny", "-n", it, "-w", w, "-c", "0", "-d",
                            a->dtype};
    int n = layout_args(a, args, 11);
    snprintf(c->gemm_model_command, sizeof c->gemm_model_command, "zerobench gemm --model %s -n %s -w %s",
             a->model ? a->model : "tiny", it, w);
    json_t *doc = NULL;
    ZB_TRY(run_child_as(r, "gemm_model", args, n, true, &doc));
    const json_t *runs = json_object_get(doc, "runs");
    zb_calib_gemm_shape shapes[ZB_CALIB_MAX_POINTS];
    int ns = 0;
    bool mixed = false;
    for (size_t i = 0; i < json_array_size(runs) && ns < ZB_CALIB_MAX_POINTS; i++) {
        const json_t *run = json_array_get(runs, i);
        long long m = 0, nn = 0, k = 0;
        if (sscanf(str_or(json_string_value(json_object_get(run, "shape")), ""), "%lldx%lldx%lld", &m, &nn, &k) != 3) {
            continue;
        }
        bool device = false;
        shapes[ns++] = (zb_calib_gemm_shape){(double)m, (double)nn, (double)k, device_time_s(run, &device)};
        mixed = mixed || device != c->gemm_device; /* times of two kinds: not pooled */
    }
    json_decref(doc);
    if (mixed) {
        snprintf(c->gemm_model_try.why_not, sizeof c->gemm_model_try.why_not, "its times and the square sweep's "
                 "are not of one kind (device records against loop times)");
        return ZB_OK;
    }
    c->gemm_model_try.have = zb_calib_gemm_add_shapes(&c->gemm, shapes, ns, c->peak_flops) == ZB_OK;
    if (!c->gemm_model_try.have) say_not(&c->gemm_model_try);
    return ZB_OK;
}

/* Fused attention at the model's shape and at twice its sequence: time =
 * overhead + causal FLOPs / (peak x efficiency), forward and backward. */
static zb_status attn_sweep(const calib_args *a, const calib_run *r, zb_calib *c) {
    double work[2][4], t[2][4];
    int np = 0;
    zb_model_profile mp;
    ZB_TRY(zb_model_profile_load(a->model ? a->model : "tiny", &mp));
    for (int k = 0; k < 2; k++) {
        char seq[32], name[32];
        snprintf(seq, sizeof seq, "%d", mp.seq << k);
        snprintf(name, sizeof name, "attention_%d", k);
        const char *args[40] = {"attention", "--model", a->model ? a->model : "tiny", "--seq", seq, "-n", a->iters,
                                "-w", "1", "-c", "0"};
        int n = layout_args(a, args, 11);
        json_t *doc = NULL;
        ZB_TRY(run_child(r, name, args, n, &doc));
        const json_t *runs = json_object_get(doc, "runs");
        for (size_t i = 0; i < json_array_size(runs) && i < 2; i++) {
            const json_t *run = json_array_get(runs, i), *sh = json_object_get(run, "shape");
            bool bwd = !strcmp(str_or(json_string_value(json_object_get(run, "pass")), ""), "bwd");
            double f = zb_attention_fwd_causal_flops((int)json_integer_value(json_object_get(sh, "batch")),
                                                     (int)json_integer_value(json_object_get(sh, "seq")),
                                                     (int)json_integer_value(json_object_get(sh, "heads")),
                                                     (int)json_integer_value(json_object_get(sh, "head_dim")));
            work[bwd][np] = bwd ? 2.5 * f : f;
            t[bwd][np] = op_time_s(run);
        }
        np++;
        json_decref(doc);
    }
    snprintf(c->attn_command, sizeof c->attn_command, "zerobench attention --model %s --seq %d,%d -n %s",
             a->model ? a->model : "tiny", mp.seq, 2 * mp.seq, a->iters);
    double over = c->mem_try.have ? c->mem.latency_s : 0;
    c->attn_try.have = zb_calib_fit_rate(work[0], t[0], np, over, &c->attn[0]) == ZB_OK &&
                       zb_calib_fit_rate(work[1], t[1], np, over, &c->attn[1]) == ZB_OK;
    if (!c->attn_try.have) say_not(&c->attn_try);
    return ZB_OK;
}

/* The slowdowns beside the other kind of work, from the step itself: one
 * sync-vs-prefetch run (--mode both) at the model's shape on the step's
 * layout. Sync overlaps nothing; prefetch overlaps comm with compute for
 * overlap x comm; each pair of steps gives compute and comm alone and beside. */
static zb_status step_sweep(const calib_args *a, const calib_run *r, zb_calib *c) {
    const char *args[40] = {"step", "--mode", "both", "--steps", a->steps, "--warmup", "1", "--comm", a->comm};
    int n = 9;
    if (a->model) {
        args[n++] = "--model";
        args[n++] = a->model;
    }
    int before = n;
    n = layout_args(a, args, n);
    /* the step takes no -a */
    for (int i = before; i + 1 < n; i++) {
        if (!strcmp(args[i], "-a")) {
            for (int j = i; j + 2 < n; j++) args[j] = args[j + 2];
            n -= 2;
            break;
        }
    }
    snprintf(c->step_command, sizeof c->step_command, "zerobench step --mode both --steps %s --model %s", a->steps,
             a->model ? a->model : "tiny");
    json_t *doc = NULL;
    ZB_TRY(run_child(r, "step", args, n, &doc));
    enum { CAP = ZB_CALIB_MAX_POINTS };
    static double comp[2][CAP], comm[2][CAP], ov[CAP];
    int nc[2] = {0, 0}, nm[2] = {0, 0}, no = 0;
    const json_t *runs = json_object_get(doc, "runs");
    for (size_t i = 0; i < json_array_size(runs); i++) {
        const json_t *run = json_array_get(runs, i);
        const char *mode = str_or(json_string_value(json_object_get(run, "mode")), "");
        int m = !strcmp(mode, "sync") ? 0 : !strcmp(mode, "prefetch") ? 1 : -1;
        if (m < 0) continue;
        double mem = json_number_value(json_object_get(json_object_get(run, "metrics"), "peak_mem_bytes"));
        if (mem > c->step_mem_bytes) c->step_mem_bytes = mem;
        nc[m] = samples_of(run, "compute_ms", 1e-3, comp[m], CAP);
        nm[m] = samples_of(run, "comm_ms", 1e-3, comm[m], CAP);
        if (m == 1) no = samples_of(run, "overlap_pct", 0.01, ov, CAP);
    }
    json_decref(doc);
    int pairs = nc[0];
    const int counts[4] = {nc[1], nm[0], nm[1], no};
    for (int i = 0; i < 4; i++) pairs = counts[i] < pairs ? counts[i] : pairs;
    for (int i = 0; i < pairs; i++) ov[i] *= comm[1][i]; /* the overlapped seconds */
    for (int k = 0; k < 2; k++) {
        const double *alone = k ? comm[0] : comp[0], *beside = k ? comm[1] : comp[1];
        c->slow_try[k].have = zb_calib_fit_slowdown(alone, beside, ov, pairs, &c->slow[k]) == ZB_OK;
        if (!c->slow_try[k].have) say_not(&c->slow_try[k]);
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
static zb_status coll_sweeps(const calib_args *a, const calib_run *r, int placement, const char *nodes,
                             zb_calib *c) {
    static zb_calib_point pooled[ZB_CALIB_N_COLLS * ZB_CALIB_MAX_POINTS];
    int n_pooled = 0, ranks = 0;
    char rot[32];
    rotate_bytes(c, rot, sizeof rot);
    for (int k = 0; k < ZB_CALIB_N_COLLS; k++) {
        const char *args[40] = {zb_calib_colls[k], "--backend", a->backend, "--comm", a->comm, "--nodes", nodes,
                                "--gpus-per-node", a->gpn ? a->gpn : "2", "-b", a->coll_min, "-e", a->coll_max,
                                "-f", "4", "-n", a->iters, "-w", "1", "-c", "0", "-d", a->dtype,
                                "--rotate-bytes", rot};
        int n = 25;
        if (placement == ZB_CALIB_INTER && a->emulate) args[n++] = "--emulate-nodes";
        if (placement == ZB_CALIB_INTER && a->hostfile) {
            args[n++] = "--hostfile";
            args[n++] = a->hostfile;
        }
        char name[64];
        snprintf(name, sizeof name, "%s_%s", zb_calib_colls[k], placement == ZB_CALIB_INTRA ? "intra" : "inter");
        json_t *doc = NULL;
        ZB_TRY(run_child(r, name, args, n, &doc));
        zb_calib_point pts[ZB_CALIB_MAX_POINTS];
        int np = 0;
        const json_t *runs = json_object_get(doc, "runs");
        for (size_t i = 0; i < json_array_size(runs) && np < ZB_CALIB_MAX_POINTS; i++) {
            const json_t *run = json_array_get(runs, i);
            zb_dtype d;
            if (json_is_true(json_object_get(run, "in_place"))) continue; /* the step's are out of place */
            if (zb_dtype_parse(str_or(json_string_value(json_object_get(run, "dtype")), ""), &d) != ZB_OK) continue;
            ranks = (int)json_integer_value(json_object_get(run, "ranks"));
            size_t count = (size_t)json_integer_value(json_object_get(run, "count"));
            zb_coll kind = k == 0 ? ZB_COLL_ALLGATHER : k == 1 ? ZB_COLL_REDUCESCATTER : ZB_COLL_ALLREDUCE;
            pts[np].steps = zb_calib_ring_steps(zb_calib_colls[k], ranks);
            pts[np].sent_bytes = (double)zb_coll_sent_bytes(kind, count, zb_dtype_size(d), ranks);
            pts[np].time_s = op_time_s(run);
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

static void remove_dir(const char *dir) {
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

static int calibrate_main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            zb_calib_usage(stdout);
            return 0;
        }
    }
    calib_args a;
    if (zb_calib_parse_args(argc, argv, &a) != ZB_OK || zb_calib_validate(&a) != ZB_OK) {
        fprintf(stderr, "zerobench: %s\n", zb_error_message());
        return 2;
    }
    static zb_calib c; /* large: off the stack */
    memset(&c, 0, sizeof c);
    snprintf(c.dtype, sizeof c.dtype, "%s", a.dtype);
    c.nodes = a.nodes ? atoi(a.nodes) : 1;
    c.gpus_per_node = a.gpn ? atoi(a.gpn) : 2;
    calib_run r;
    const char *tmpdir = getenv("TMPDIR");
    snprintf(r.dir, sizeof r.dir, "%s/zb_calibrate.XXXXXX", tmpdir && tmpdir[0] ? tmpdir : "/tmp");
    r.timeout_s = atof(a.timeout);
    if (!mkdtemp(r.dir)) {
        fprintf(stderr, "zerobench: calibrate: cannot make a temporary folder %s: %s\n", r.dir, strerror(errno));
        return 1;
    }
    zb_status s = mem_sweep(&a, &r, &c);
    if (s == ZB_OK) s = kern_sweep(&a, &r, &c);
    if (s == ZB_OK) s = gemm_sweep(&a, &r, &c);
    if (s == ZB_OK) s = gemm_model_sweep(&a, &r, &c);
    if (s == ZB_OK) s = attn_sweep(&a, &r, &c);
    if (s == ZB_OK && c.gpus_per_node > 1) s = step_sweep(&a, &r, &c);
    if (s == ZB_OK && c.gpus_per_node > 1) s = coll_sweeps(&a, &r, ZB_CALIB_INTRA, "1", &c);
    if (s == ZB_OK && c.nodes > 1) s = coll_sweeps(&a, &r, ZB_CALIB_INTER, a.nodes, &c);
    static char missing[2048], borrowed[2048];
    if (s == ZB_OK) s = zb_calib_write_profile(&c, a.out, missing, borrowed, sizeof missing);
    remove_dir(r.dir);
    json_decref(c.base);
    if (s != ZB_OK) {
        fprintf(stderr, "zerobench: %s\n", zb_error_message());
        return s == ZB_ERR_INVALID ? 2 : 1;
    }
    zb_calib_print_summary(&c, a.out, missing, borrowed);
    return 0;
}

const zb_tool zb_tool_calibrate = {
    .name = "calibrate",
    .summary = "run the GEMM and collective sweeps here and write a hardware profile fitted to them",
    .main = calibrate_main,
};
