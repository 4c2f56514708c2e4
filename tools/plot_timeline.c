/* The plot tool's step timeline (plot.h): one measured step per mode of one
 * rank, from a --trace file (Chrome trace-event JSON), each stream a row of
 * the ops it ran, sync above prefetch, on one time axis from each step's
 * start.
 *
 * Which step: where the trace has step slices (cat "step" on the rank's
 * step track, args {step, phase "warm-up"|"measured", mode}), the last
 * measured step of each mode, and the records starting inside its slice.
 * A trace without step slices is split by its records' labels: a run
 * (mode) starts with the engine's "init" copies, a step with its
 * "load_batch"; the last step of each run is taken, its modes named from
 * the results files' step runs when their count matches, else "run N".
 *
 * Rank R is pid R + 1 (trace_events.h); a trace written before ids started
 * at 1 has a pid 0, and there pid = R. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot_series.h"

typedef struct window {
    char mode[32];
    int step; /* -1: not known */
    double t0_us, t1_us;
    int order; /* sync 0, prefetch 1, others after, in trace order */
    bool have; /* a step was taken */
} window;

enum { MAX_WINDOWS = 16, MAX_STREAMS = 16 };

static bool fail(zb_plot_out *out, const char *why) {
    snprintf(out->why, sizeof out->why, "%s", why);
    return false;
}

static bool is_record(const json_t *e, int rank_pid) {
    const char *ph = zb_plot_str(e, "ph"), *cat = zb_plot_str(e, "cat");
    return !strcmp(ph, "X") && zb_plot_int(e, "pid", -1) == rank_pid &&
           (!strcmp(cat, "compute") || !strcmp(cat, "comm") || !strcmp(cat, "copy"));
}

static int mode_order(const char *mode, int seq) {
    return !strcmp(mode, "sync") ? 0 : !strcmp(mode, "prefetch") ? 1 : 2 + seq;
}

/* From step slices: the last measured step of each mode. */
static int windows_from_steps(const json_t *ev, int rank_pid, window *w) {
    int n = 0;
    size_t i;
    const json_t *e;
    json_array_foreach(ev, i, e) {
        if (strcmp(zb_plot_str(e, "ph"), "X") || strcmp(zb_plot_str(e, "cat"), "step") ||
            zb_plot_int(e, "pid", -1) != rank_pid) {
            continue;
        }
        const json_t *args = json_object_get(e, "args");
        if (strcmp(zb_plot_str(args, "phase"), "measured")) continue;
        const char *mode = zb_plot_str(args, "mode");
        char name[32];
        snprintf(name, sizeof name, "%s", mode[0] ? mode : "run");
        int k = 0;
        while (k < n && strcmp(w[k].mode, name)) k++;
        if (k == n) {
            if (n == MAX_WINDOWS) continue;
            n++;
            snprintf(w[k].mode, sizeof w[k].mode, "%s", name);
            w[k].order = mode_order(name, k);
        }
        double ts = zb_plot_num(e, "ts"), dur = zb_plot_num(e, "dur");
        if (!isfinite(ts) || !isfinite(dur) || (w[k].have && ts < w[k].t0_us)) continue;
        w[k].have = true;
        w[k].step = zb_plot_int(args, "step", -1);
        w[k].t0_us = ts;
        w[k].t1_us = ts + dur;
    }
    return n;
}

typedef struct rec {
    double ts, end;
    const char *name;
} rec;

static int by_ts(const void *a, const void *b) {
    double x = ((const rec *)a)->ts, y = ((const rec *)b)->ts;
    return x < y ? -1 : x > y;
}

/* Without step slices: split by the labels (see the top comment). */
static int windows_from_labels(const json_t *ev, int rank_pid, int n_ranks, const zb_plot_inputs *in, window *w) {
    size_t n_ev = json_array_size(ev), n = 0, i;
    rec *r = (rec *)malloc((n_ev ? n_ev : 1) * sizeof(rec));
    if (!r) return 0;
    const json_t *e;
    json_array_foreach(ev, i, e) {
        if (!is_record(e, rank_pid)) continue;
        double ts = zb_plot_num(e, "ts"), dur = zb_plot_num(e, "dur");
        if (isfinite(ts) && isfinite(dur)) r[n++] = (rec){ts, ts + dur, zb_plot_str(e, "name")};
    }
    qsort(r, n, sizeof(rec), by_ts);
    int nw = -1;
    bool in_init = false;
    for (size_t k = 0; k < n; k++) {
        bool init = !strcmp(r[k].name, "init");
        if (init && !in_init && nw + 1 < MAX_WINDOWS) {
            nw++;
            w[nw].step = -1;
            w[nw].t0_us = NAN;
            w[nw].t1_us = r[k].end;
        }
        in_init = init;
        if (nw < 0) continue;
        if (!strcmp(r[k].name, "load_batch")) w[nw].t0_us = r[k].ts;
        if (r[k].end > w[nw].t1_us) w[nw].t1_us = r[k].end;
    }
    free(r);
    int found = 0;
    for (int k = 0; k <= nw; k++) {
        if (isfinite(w[k].t0_us)) w[found++] = w[k];
    }
    /* The modes, from the results' step runs of as many ranks as the trace
     * when they line up. */
    const char *modes[MAX_WINDOWS];
    int n_modes = 0;
    for (int f = 0; f < in->n; f++) {
        for (size_t j = 0; j < zb_plot_n_runs(&in->files[f]); j++) {
            const json_t *run = zb_plot_run(&in->files[f], j);
            if (!strcmp(zb_plot_str(run, "bench"), "step") && zb_plot_int(run, "ranks", -1) == n_ranks &&
                n_modes < MAX_WINDOWS) {
                modes[n_modes++] = zb_plot_str(run, "mode");
            }
        }
    }
    for (int k = 0; k < found; k++) {
        if (n_modes == found) snprintf(w[k].mode, sizeof w[k].mode, "%s", modes[k]);
        else snprintf(w[k].mode, sizeof w[k].mode, "run %d", k + 1);
        w[k].order = mode_order(w[k].mode, k);
    }
    return found;
}

static int by_order(const void *a, const void *b) {
    return ((const window *)a)->order - ((const window *)b)->order;
}

/* The stream's name from the trace's thread_name metadata. */
static const char *stream_name(const json_t *ev, int rank_pid, int tid) {
    size_t i;
    const json_t *e;
    json_array_foreach(ev, i, e) {
        if (!strcmp(zb_plot_str(e, "ph"), "M") && !strcmp(zb_plot_str(e, "name"), "thread_name") &&
            zb_plot_int(e, "pid", -1) == rank_pid && zb_plot_int(e, "tid", -1) == tid) {
            return zb_plot_str(json_object_get(e, "args"), "name");
        }
    }
    return "stream";
}

/* 0 for a trace with pid 0 (pid = rank, as written before), else 1. */
static int pid_base(const json_t *ev) {
    size_t i;
    const json_t *e;
    json_array_foreach(ev, i, e) {
        if (zb_plot_int(e, "pid", -1) == 0) return 0;
    }
    return 1;
}

bool zb_plot_build_timeline(const zb_plot_inputs *in, zb_plot_out *out) {
    const zb_plot_input *trace = NULL;
    for (int i = 0; i < in->n; i++) {
        if (in->files[i].is_trace) trace = &in->files[i];
    }
    if (!trace) return fail(out, "no --trace file among the inputs");
    const json_t *ev = json_object_get(trace->doc, "traceEvents");
    int base = pid_base(ev), rank_pid = in->rank + base, max_pid = -1;
    bool has_rank = false;
    size_t i;
    const json_t *e;
    json_array_foreach(ev, i, e) {
        if (strcmp(zb_plot_str(e, "ph"), "X")) continue;
        int pid = zb_plot_int(e, "pid", -1);
        if (pid > max_pid) max_pid = pid;
        has_rank |= is_record(e, rank_pid);
    }
    if (!has_rank) {
        snprintf(out->why, sizeof out->why, "the trace %.64s has no records of rank %d (--rank; it has ranks 0-%d)",
                 trace->path, in->rank, max_pid - base);
        return false;
    }
    window w[MAX_WINDOWS];
    memset(w, 0, sizeof w);
    for (int k = 0; k < MAX_WINDOWS; k++) w[k].step = -1;
    int nw = windows_from_steps(ev, rank_pid, w);
    bool marked = nw > 0;
    if (!marked) nw = windows_from_labels(ev, rank_pid, max_pid + 1 - base, in, w);
    if (nw == 0) return fail(out, "the trace has no steps (no step slices; no init and load_batch records to find them by)");
    qsort(w, (size_t)nw, sizeof(window), by_order);
    /* Rows: each window's streams, top to bottom; y counts down to 1. */
    int streams[MAX_WINDOWS][MAX_STREAMS], n_streams[MAX_WINDOWS] = {0}, n_rows = 0;
    for (int k = 0; k < nw; k++) {
        json_array_foreach(ev, i, e) {
            double ts = zb_plot_num(e, "ts");
            if (!is_record(e, rank_pid) || !(ts >= w[k].t0_us && ts <= w[k].t1_us)) continue;
            int tid = zb_plot_int(e, "tid", -1), s = 0;
            while (s < n_streams[k] && streams[k][s] != tid) s++;
            if (s == n_streams[k] && s < MAX_STREAMS) streams[k][n_streams[k]++] = tid;
        }
        for (int a = 1; a < n_streams[k]; a++) { /* by stream id: compute (the lowest) first */
            for (int b = a; b > 0 && streams[k][b] < streams[k][b - 1]; b--) {
                int t = streams[k][b];
                streams[k][b] = streams[k][b - 1];
                streams[k][b - 1] = t;
            }
        }
        n_rows += n_streams[k];
    }
    zb_plot_text t;
    if (!zb_plot_text_open(&t)) return fail(out, "out of memory");
    fprintf(t.f, "# rank %d, one %s step per mode:", in->rank, marked ? "measured" : "(last)");
    for (int k = 0; k < nw; k++) {
        if (w[k].step >= 0) fprintf(t.f, " %s step %d (%.3f ms)", w[k].mode, w[k].step, (w[k].t1_us - w[k].t0_us) / 1e3);
        else fprintf(t.f, " %s last step (%.3f ms)", w[k].mode, (w[k].t1_us - w[k].t0_us) / 1e3);
    }
    fputs("\n# blocks: 0 compute, 1 comm, 2 copy records (row y, start and end in ms from the step's start, op); "
          "3 the rows' labels\n", t.f);
    const char *kinds[3] = {"compute", "comm", "copy"};
    int kind_rows[3] = {0, 0, 0}; /* the script draws (and names) only the kinds with records */
    for (int kind = 0; kind < 3; kind++) {
        fprintf(t.f, "%s\"y\" \"start_ms\" \"end_ms\" \"op\"\n", kind ? "\n\n" : "");
        int rows = 0, y = n_rows;
        for (int k = 0; k < nw; k++) {
            json_array_foreach(ev, i, e) {
                double ts = zb_plot_num(e, "ts"), dur = zb_plot_num(e, "dur");
                if (!is_record(e, rank_pid) || !(ts >= w[k].t0_us && ts <= w[k].t1_us) || !isfinite(dur) ||
                    strcmp(zb_plot_str(e, "cat"), kinds[kind])) {
                    continue;
                }
                int tid = zb_plot_int(e, "tid", -1), s = 0;
                while (s < n_streams[k] && streams[k][s] != tid) s++;
                fprintf(t.f, "%d ", y - s);
                zb_plot_put_num(t.f, (ts - w[k].t0_us) / 1e3);
                fputc(' ', t.f);
                zb_plot_put_num(t.f, (ts + dur - w[k].t0_us) / 1e3);
                fputc(' ', t.f);
                zb_plot_put_str(t.f, zb_plot_str(e, "name"));
                fputc('\n', t.f);
                rows++;
            }
            y -= n_streams[k];
        }
        if (rows == 0) fputs("NaN NaN NaN \"none\"\n", t.f); /* the block must exist for the script */
        kind_rows[kind] = rows;
    }
    fputs("\n\n\"y\" \"row\"\n", t.f);
    /* The rows' labels share the left margin (7 pt, at most ROW_WIDTH): the
     * mode and the stream each cut to their part, so both stay told apart. */
    enum { ROW_WIDTH = 11000, MODE_WIDTH = 5000 };
    int y = n_rows, widest = 0;
    for (int k = 0; k < nw; k++) {
        for (int s = 0; s < n_streams[k]; s++) {
            char mode[96], stream[160], label[260];
            zb_plot_cut_middle(w[k].mode, MODE_WIDTH, mode, sizeof mode);
            zb_plot_cut_middle(stream_name(ev, rank_pid, streams[k][s]),
                               ROW_WIDTH - zb_plot_text_width(mode) - zb_plot_text_width(" "), stream, sizeof stream);
            snprintf(label, sizeof label, "%s %s", mode, stream);
            if (zb_plot_text_width(label) > widest) widest = zb_plot_text_width(label);
            fprintf(t.f, "%d ", y--);
            zb_plot_put_str(t.f, label);
            fputc('\n', t.f);
        }
    }
    if (!zb_plot_text_close(&t)) return fail(out, "out of memory");
    out->data = t.buf;
    out->data_len = t.len;
    /* The title: the process's name ("rank R on HOST" where the trace says)
     * and each mode's step. */
    char title[160];
    const char *pname = "";
    json_array_foreach(ev, i, e) {
        if (!strcmp(zb_plot_str(e, "ph"), "M") && !strcmp(zb_plot_str(e, "name"), "process_name") &&
            zb_plot_int(e, "pid", -1) == rank_pid) {
            pname = zb_plot_str(json_object_get(e, "args"), "name");
        }
    }
    if (pname[0]) snprintf(title, sizeof title, "%.80s:", pname);
    else snprintf(title, sizeof title, "rank %d:", in->rank);
    for (int k = 0; k < nw; k++) {
        size_t used = strlen(title);
        if (w[k].step >= 0) snprintf(title + used, sizeof title - used, "%s %s step %d", k ? "," : "", w[k].mode, w[k].step);
        else snprintf(title + used, sizeof title - used, "%s last %s step", k ? "," : "", w[k].mode);
    }
    char cut[256], safe[256]; /* one line across the canvas (6 pt, centred on it) */
    zb_plot_cut(title, (int)(0.94 * ZB_PLOT_CANVAS_PT / 6 * 1000), cut, sizeof cut);
    zb_plot_gp_text(cut, safe, sizeof safe);
    /* Seconds on the axis for steps past 2 s: five-digit ms labels collide. */
    double longest = 0;
    for (int k = 0; k < nw; k++) longest = fmax(longest, (w[k].t1_us - w[k].t0_us) / 1e3);
    /* The left margin: the widest row label (7 pt), the tics' gap and a
     * point to spare, as a fraction of the canvas (gnuplot's own reckons
     * 0.64 em a character: a row of W's would run off the canvas). */
    double lm = (widest * 7.0 / 1000 + 6) / ZB_PLOT_CANVAS_PT;
    snprintf(out->vars, sizeof out->vars, "rows=%d; title='%s'; xunit='%s'; lm=%.4f; kinds='%d %d %d'", n_rows, safe,
             longest > 2000 ? "s" : "ms", lm, kind_rows[0] > 0, kind_rows[1] > 0, kind_rows[2] > 0);
    if (!marked) snprintf(out->note, sizeof out->note, "the trace has no step slices: steps found by their records' labels");
    return true;
}
