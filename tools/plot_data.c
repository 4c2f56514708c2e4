/* The plot tool's line figures (plot.h): bus bandwidth vs message size with
 * the hardware profile's link bandwidth, GEMM throughput vs size with the
 * peak, step time and throughput over ranks, and bus bandwidth over ranks. Each builder writes its
 * series as gnuplot data blocks (plot_series.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot_series.h"
#include "profile.h"

/* What a collective series' key ends in when it was measured in place. */
#define IN_PLACE " (in place)"

static bool fail(zb_plot_out *out, const char *why) {
    snprintf(out->why, sizeof out->why, "%s", why);
    return false;
}

static bool finish_text(zb_plot_text *t, char **text, size_t *len) {
    if (!zb_plot_text_close(t)) return false;
    *text = t->buf;
    *len = t->len;
    return true;
}

/* The line figures' legend: below the plot area, about 0.8 of the canvas
 * wide, in milli-em of its 6 pt text. */
#define LEGEND_ROOM ((int)(0.8 * ZB_PLOT_CANVAS_PT / 6 * 1000))

/* The series' labels as legend entries (the reference lines' added by the
 * caller). */
static void key_of_series(const zb_plot_series_set *set, zb_plot_key *k) {
    for (int i = 0; i < set->n; i++) zb_plot_key_add(k, set->s[i].label);
}

/* Past ZB_PLOT_LINE_STYLES series the styles repeat: say so in the figure's
 * note (kept after any note already there) rather than draw two series
 * alike without a word. */
static void note_repeats(zb_plot_out *out, int n_series) {
    if (n_series <= ZB_PLOT_LINE_STYLES) return;
    size_t used = strlen(out->note);
    snprintf(out->note + used, sizeof out->note - used,
             "%s%d series: past %d they take the first ones' line styles again (plot fewer inputs per figure)",
             used ? "; " : "", n_series, ZB_PLOT_LINE_STYLES);
}

/* Appends the legend's layout to out->vars: its columns (at most) and the
 * width increment that makes each as wide as its widest entry. */
static void key_vars(zb_plot_out *out, zb_plot_key *k, int n_series, int room, double samplen) {
    zb_plot_key_layout(k, room, samplen);
    note_repeats(out, n_series);
    size_t used = strlen(out->vars);
    snprintf(out->vars + used, sizeof out->vars - used, "%skcols=%d; krows=%d; kw=%d", used ? "; " : "", k->cols,
             k->rows, k->width_fix);
}

/* The common ending of the over-ranks figures: the series (labels already
 * unique) written as data blocks under `header`, columns `cols`; the
 * legend's layout in out->vars (`room` and `samplen` as zb_plot_key_layout
 * takes them). */
static bool write_rank_series(zb_plot_series_set *set, const zb_plot_inputs *in, zb_plot_out *out,
                              const char *header, const char *const cols[4], int room, double samplen) {
    for (int i = 0; i < set->n; i++) set->s[i].file = 0;
    zb_plot_series_finish(set, in);
    zb_plot_key key = {0};
    key_of_series(set, &key);
    key_vars(out, &key, set->n, room, samplen);
    zb_plot_text t;
    if (!zb_plot_text_open(&t)) {
        zb_plot_series_free(set);
        return fail(out, "out of memory");
    }
    fputs(header, t.f);
    zb_plot_series_write(set, t.f, cols, 4);
    zb_plot_series_free(set);
    if (!finish_text(&t, &out->data, &out->data_len)) return fail(out, "out of memory");
    return true;
}

static bool is_collective(const char *bench) {
    return !strcmp(bench, "allgather") || !strcmp(bench, "reducescatter") || !strcmp(bench, "allreduce");
}

/* One horizontal reference line: two points at x0 and x1, its label (a
 * legend entry, cut as the series' are) added to the legend k. */
static void put_ref(FILE *f, bool first, const char *xcol, const char *label, double x0, double x1, double y,
                    zb_plot_key *k) {
    char cut[512];
    zb_plot_cut_middle(label, ZB_PLOT_LEGEND_WIDTH, cut, sizeof cut);
    zb_plot_key_add(k, cut);
    if (!first) fputs("\n\n", f);
    zb_plot_put_str(f, xcol);
    fputc(' ', f);
    zb_plot_put_str(f, cut);
    fputc('\n', f);
    for (int i = 0; i < 2; i++) {
        zb_plot_put_num(f, i ? x1 : x0);
        fputc(' ', f);
        zb_plot_put_num(f, y);
        fputc('\n', f);
    }
}

/* The link a collective over `nodes` nodes of `per_node` ranks is bounded
 * by, from the run's hardware profile (meta.config.hw): NVLink within a
 * node, the node's NICs across nodes (zb_hw_inter_node_bw). Returns its
 * GB/s, 0 with *why set when there is none. */
static double link_gbps(const zb_plot_input *f, int nodes, int per_node, char *label, size_t n, char *why, size_t why_n) {
    const json_t *config = json_object_get(json_object_get(f->doc, "meta"), "config");
    const char *hw = zb_plot_str(config, "hw");
    if (!hw[0]) {
        snprintf(why, why_n, "no hardware profile in the run's meta.config.hw");
        return 0;
    }
    zb_hw_profile p;
    if (zb_hw_profile_load(hw, &p) != ZB_OK) {
        snprintf(why, why_n, "hardware profile '%.64s' does not load here", hw);
        return 0;
    }
    double bw = nodes > 1 ? zb_hw_inter_node_bw(&p, per_node) : p.nvlink_bytes_per_s;
    if (bw <= 0) {
        snprintf(why, why_n, "profile '%.64s' gives no %s bandwidth", hw, nodes > 1 ? "NIC" : "NVLink");
        return 0;
    }
    int nics = nodes > 1 ? (int)lround(bw / p.nic_bytes_per_s) : 0;
    bool nvlink_bound = nodes > 1 && per_node > 1 && p.nvlink_bytes_per_s > 0 && p.nvlink_bytes_per_s < bw;
    if (nvlink_bound) bw = p.nvlink_bytes_per_s; /* the node's NICs are fed over NVLink */
    if (nics > 1 && !nvlink_bound)
        snprintf(label, n, "%s %d NICs %.0f GB/s", p.name, nics, bw / 1e9);
    else
        snprintf(label, n, "%s %s %.0f GB/s", p.name, nodes > 1 && !nvlink_bound ? "NIC" : "NVLink", bw / 1e9);
    return bw / 1e9;
}

bool zb_plot_build_busbw(const zb_plot_inputs *in, zb_plot_out *out) {
    zb_plot_series_set set = {0};
    double x0 = INFINITY, x1 = -INFINITY;
    for (int i = 0; i < in->n; i++) {
        char backend[80];
        zb_plot_backend(&in->files[i], backend, sizeof backend);
        for (size_t j = 0; j < zb_plot_n_runs(&in->files[i]); j++) {
            const json_t *r = zb_plot_run(&in->files[i], j);
            const char *bench = zb_plot_str(r, "bench");
            double size = zb_plot_num(r, "size_bytes"), bw = zb_plot_metric(r, "busbw_gbps");
            if (!is_collective(bench) || !(size > 0) || !isfinite(bw)) continue;
            char nodes[32] = "";
            int n_nodes = zb_plot_int(r, "nodes", -1);
            if (n_nodes > 1) snprintf(nodes, sizeof nodes, ", %d nodes", n_nodes);
            const char *dtype = zb_plot_str(r, "dtype");
            bool in_place = json_is_true(json_object_get(r, "in_place"));
            int ranks = zb_plot_int(r, "ranks", -1);
            zb_plot_series *s = zb_plot_series_getf(&set, i, "%s %s%s%s, %d rank%s%s%s", bench, backend,
                                                    strcmp(dtype, "float") ? " " : "", strcmp(dtype, "float") ? dtype : "",
                                                    ranks, ranks == 1 ? "" : "s", nodes, in_place ? IN_PLACE : "");
            zb_plot_series_add(&set, s, (zb_plot_point){size, bw, NAN, NAN});
            if (size < x0) x0 = size;
            if (size > x1) x1 = size;
        }
    }
    /* Out of place is the figure's measure; a series measured only in
     * place stays. */
    for (int i = 0; i < set.n; i++) {
        const char *key = set.s[i].key;
        size_t len = strlen(key), tail = strlen(IN_PLACE);
        if (len < tail || strcmp(key + len - tail, IN_PLACE)) continue;
        char *twin = strndup(key, len - tail);
        if (!twin) {
            set.oom = true;
            break;
        }
        if (zb_plot_series_find(&set, twin, set.s[i].file) >= 0) zb_plot_series_drop(&set, i);
        free(twin);
    }
    zb_plot_series_compact(&set);
    if (set.oom) {
        zb_plot_series_free(&set);
        return fail(out, "out of memory");
    }
    if (set.n == 0) {
        zb_plot_series_free(&set);
        return fail(out, "no allgather, reducescatter or allreduce runs with busbw_gbps in the inputs");
    }
    zb_plot_series_finish(&set, in);
    zb_plot_key key = {0};
    key_of_series(&set, &key);
    int n_series = set.n;
    zb_plot_text t, ref;
    if (!zb_plot_text_open(&t) || !zb_plot_text_open(&ref)) {
        zb_plot_series_free(&set);
        return fail(out, "out of memory");
    }
    fputs("# bus bandwidth (GB/s, 1e9 B/s) per message size (bytes), one block per collective and backend\n", t.f);
    const char *cols[] = {"size_bytes", "", "algbw_gbps"};
    zb_plot_series_write(&set, t.f, cols, 2);
    /* Reference lines: one per distinct (profile, link) among the inputs. */
    char refs[4][160];
    int n_refs = 0;
    char why[200] = "";
    double top = 0; /* the highest busbw drawn */
    for (int i = 0; i < set.n; i++) {
        for (int k = 0; k < set.s[i].n; k++) top = fmax(top, set.s[i].p[k].y);
    }
    for (int i = 0; i < in->n && n_refs < 4; i++) {
        int nodes = 0, per_node = 1;
        bool any = false;
        for (size_t j = 0; j < zb_plot_n_runs(&in->files[i]); j++) {
            const json_t *r = zb_plot_run(&in->files[i], j);
            if (!is_collective(zb_plot_str(r, "bench"))) continue;
            any = true;
            int run_nodes = zb_plot_int(r, "nodes", -1), run_ranks = zb_plot_int(r, "ranks", -1);
            if (run_nodes > nodes) nodes = run_nodes;
            if (run_nodes > 0 && run_ranks / run_nodes > per_node) per_node = run_ranks / run_nodes;
        }
        if (!any) continue;
        char label[160];
        double gbps = link_gbps(&in->files[i], nodes, per_node, label, sizeof label, why, sizeof why);
        bool seen = false;
        for (int k = 0; k < n_refs; k++) seen |= !strcmp(refs[k], label);
        if (gbps <= 0 || seen) continue;
        if (gbps > 8 * top) { /* a line that high would press the measured curves flat on the axis */
            char safe[160];
            zb_plot_gp_text(label, safe, sizeof safe);
            snprintf(why, sizeof why, "%s is off this scale (measured at most %.3g GB/s)", safe, top);
            continue;
        }
        put_ref(ref.f, n_refs == 0, "size_bytes", label, x0, x1, gbps, &key);
        snprintf(refs[n_refs++], sizeof refs[0], "%s", label);
    }
    zb_plot_series_free(&set);
    bool ok = finish_text(&t, &out->data, &out->data_len);
    if (!zb_plot_text_close(&ref)) ok = false;
    if (!ok) {
        free(ref.buf);
        return fail(out, "out of memory");
    }
    if (n_refs) {
        out->ref = ref.buf;
        out->ref_len = ref.len;
    } else {
        free(ref.buf);
        snprintf(out->note, sizeof out->note, "no link-bandwidth reference line: %s", why);
    }
    key_vars(out, &key, n_series, LEGEND_ROOM, 2.5);
    return true;
}

/* M, N, K of a gemm run's "MxNxK" shape. */
static bool shape_of(const json_t *r, double *mnk) {
    long long m, n, k;
    char extra;
    if (sscanf(zb_plot_str(r, "shape"), "%lldx%lldx%lld%c", &m, &n, &k, &extra) != 3 || m <= 0 || n <= 0 || k <= 0) {
        return false;
    }
    *mnk = (double)m * (double)n * (double)k;
    return true;
}

static int by_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

bool zb_plot_build_gemm(const zb_plot_inputs *in, zb_plot_out *out) {
    zb_plot_series_set set = {0};
    double x0 = INFINITY, x1 = -INFINITY, top = 0;
    for (int i = 0; i < in->n; i++) {
        char backend[80];
        zb_plot_backend(&in->files[i], backend, sizeof backend);
        for (size_t j = 0; j < zb_plot_n_runs(&in->files[i]); j++) {
            const json_t *r = zb_plot_run(&in->files[i], j);
            double mnk = 0, tf = zb_plot_metric(r, "tflops"), pct = zb_plot_metric(r, "pct_peak");
            if (strcmp(zb_plot_str(r, "bench"), "gemm") || !shape_of(r, &mnk) || !isfinite(tf)) continue;
            int ranks = zb_plot_int(r, "ranks", -1);
            bool square = !strcmp(zb_plot_str(r, "name"), "square");
            zb_plot_series *s = zb_plot_series_getf(&set, i, "%s %s%s%s%s", backend, zb_plot_str(r, "dtype"),
                                                    json_is_true(json_object_get(r, "trans_b")) ? " B^T" : "",
                                                    square ? "" : " (model shapes)", ranks > 1 ? ", per rank" : "");
            double x = cbrt(mnk);
            /* c3: this row's peak (TFLOP/s) from tflops and pct_peak. */
            double peak = pct > 0 ? tf / pct * 100.0 : NAN;
            zb_plot_series_add(&set, s, (zb_plot_point){x, tf, peak, NAN});
            if (x < x0) x0 = x;
            if (x > x1) x1 = x;
            if (tf > top) top = tf;
            if (peak > top) top = peak;
        }
    }
    if (set.oom || set.n == 0) {
        bool oom = set.oom;
        zb_plot_series_free(&set);
        return fail(out, oom ? "out of memory" : "no gemm runs with tflops and a MxNxK shape in the inputs");
    }
    zb_plot_series_finish(&set, in);
    /* GFLOP/s when nothing reaches a TFLOP/s (CPU runs). */
    double scale = top < 1.0 ? 1000.0 : 1.0;
    snprintf(out->vars, sizeof out->vars, "yunit='%s'", scale > 1 ? "GFLOP/s" : "TFLOP/s");
    zb_plot_key key = {0};
    key_of_series(&set, &key);
    int n_series = set.n;
    zb_plot_text t, ref;
    if (!zb_plot_text_open(&t) || !zb_plot_text_open(&ref)) {
        zb_plot_series_free(&set);
        return fail(out, "out of memory");
    }
    fprintf(t.f, "# GEMM throughput (%s) per size ((M*N*K)^(1/3)), one block per backend and dtype; "
                 "column 3: the peak the run was measured against\n", scale > 1 ? "GFLOP/s" : "TFLOP/s");
    int n_peaks = 0;
    for (int i = 0; i < set.n; i++) {
        zb_plot_series *s = &set.s[i];
        double *peaks = (double *)malloc((size_t)s->n * sizeof(double));
        int n = 0;
        for (int k = 0; k < s->n; k++) {
            s->p[k].y *= scale;
            s->p[k].c3 *= scale;
            if (peaks && isfinite(s->p[k].c3)) peaks[n++] = s->p[k].c3;
        }
        if (n > 0) { /* one peak per series: the median of the rows' */
            qsort(peaks, (size_t)n, sizeof(double), by_double);
            char label[200];
            snprintf(label, sizeof label, "peak %s: %.3g %s", s->label, peaks[n / 2], scale > 1 ? "GFLOP/s" : "TFLOP/s");
            put_ref(ref.f, n_peaks++ == 0, "size", label, x0, x1, peaks[n / 2], &key);
        }
        free(peaks);
    }
    const char *cols[] = {"size", "", "peak"};
    zb_plot_series_write(&set, t.f, cols, 3);
    zb_plot_series_free(&set);
    bool ok = finish_text(&t, &out->data, &out->data_len);
    if (!zb_plot_text_close(&ref)) ok = false;
    if (!ok) {
        free(ref.buf);
        return fail(out, "out of memory");
    }
    if (n_peaks) {
        out->ref = ref.buf;
        out->ref_len = ref.len;
    } else {
        free(ref.buf);
        snprintf(out->note, sizeof out->note, "no peak line: the runs carry no pct_peak");
    }
    key_vars(out, &key, n_series, LEGEND_ROOM, 2.5);
    return true;
}

/* Series by their configuration's place in the fixed order (kept in the
 * series' file field while sorting), then by label. */
static int by_config(const void *a, const void *b) {
    const zb_plot_series *x = (const zb_plot_series *)a, *y = (const zb_plot_series *)b;
    if (x->file != y->file) return x->file < y->file ? -1 : 1;
    return strcmp(x->label, y->label);
}

bool zb_plot_build_scaling(const zb_plot_inputs *in, zb_plot_out *out) {
    zb_plot_series_set set = {0};
    /* What the series' labels need besides the configuration: the model
     * and the backends where they differ. */
    char model0[96] = "", backend0[80] = "";
    bool first = true, models_vary = false, backends_vary = false;
    for (int i = 0; i < in->n; i++) {
        char backend[80];
        zb_plot_backend(&in->files[i], backend, sizeof backend);
        for (size_t j = 0; j < zb_plot_n_runs(&in->files[i]); j++) {
            const json_t *r = zb_plot_run(&in->files[i], j);
            if (!zb_plot_is_step_run(r)) continue;
            if (first) {
                snprintf(model0, sizeof model0, "%s", zb_plot_str(r, "model"));
                snprintf(backend0, sizeof backend0, "%s", backend);
                first = false;
            }
            models_vary |= strcmp(model0, zb_plot_str(r, "model")) != 0;
            backends_vary |= strcmp(backend0, backend) != 0;
        }
    }
    for (int i = 0; i < in->n; i++) {
        char backend[80];
        zb_plot_backend(&in->files[i], backend, sizeof backend);
        for (size_t j = 0; j < zb_plot_n_runs(&in->files[i]); j++) {
            const json_t *r = zb_plot_run(&in->files[i], j);
            double ranks = zb_plot_num(r, "ranks"), t = zb_plot_metric(r, "step_time_ms");
            if (!zb_plot_is_step_run(r) || !(ranks > 0) || !isfinite(t)) continue;
            char config[48];
            int code = zb_plot_config(r, config, sizeof config);
            /* One series over every input; its file field holds the
             * configuration's code until the series are sorted by it. */
            zb_plot_series *s = zb_plot_series_getf(&set, code, "%s%s%s%s%s", config, models_vary ? ", " : "",
                                                    models_vary ? zb_plot_str(r, "model") : "",
                                                    backends_vary ? ", " : "", backends_vary ? backend : "");
            zb_plot_series_add(&set, s,
                               (zb_plot_point){ranks, t, zb_plot_metric(r, "tokens_per_s"), zb_plot_num(r, "nodes")});
        }
    }
    /* Only series measured at two or more rank counts show scaling. */
    for (int i = 0; i < set.n; i++) {
        bool several = false;
        for (int k = 1; k < set.s[i].n; k++) several |= set.s[i].p[k].x != set.s[i].p[0].x;
        if (!several) zb_plot_series_drop(&set, i);
    }
    zb_plot_series_compact(&set);
    if (set.oom || set.n == 0) {
        bool oom = set.oom;
        zb_plot_series_free(&set);
        return fail(out, oom ? "out of memory" : "no step runs of one configuration at two or more rank counts");
    }
    /* The fixed order, and each configuration's line type (style.gp: 1
     * ZeRO-3 prefetch, 2 ZeRO-3 sync, 3 ZeRO-2, ...), the same in every
     * figure; a second series of one configuration takes the next free one. */
    qsort(set.s, (size_t)set.n, sizeof *set.s, by_config);
    static const int lt_of[ZB_PLOT_CONFIG_CODES] = {8, 8, 8, 6, 5, 8, 4, 3, 8, 2, 1, 7};
    bool used[ZB_PLOT_LINE_STYLES + 1] = {false};
    char lts[sizeof out->vars / 2] = "";
    for (int i = 0; i < set.n; i++) {
        int lt = set.s[i].file >= 0 && set.s[i].file < ZB_PLOT_CONFIG_CODES ? lt_of[set.s[i].file] : 8;
        for (int tries = 0; used[lt] && tries < ZB_PLOT_LINE_STYLES; tries++) lt = lt % ZB_PLOT_LINE_STYLES + 1;
        used[lt] = true;
        size_t len = strlen(lts);
        if (len + 4 < sizeof lts) snprintf(lts + len, sizeof lts - len, "%s%d", i ? " " : "", lt);
    }
    /* The model (and backends) every series shares, as the legend's title,
     * one line across the canvas (in the terminal's 7 pt). */
    char what[200], cut[256], safe[256];
    snprintf(what, sizeof what, "%s%s%s", models_vary ? "" : model0, !models_vary && !backends_vary ? ", " : "",
             backends_vary ? "" : backend0);
    zb_plot_cut_middle(what, (int)(0.9 * ZB_PLOT_CANVAS_PT / 7 * 1000), cut, sizeof cut);
    zb_plot_gp_text(cut, safe, sizeof safe);
    snprintf(out->vars, sizeof out->vars, "lts='%s'; what='%s'", lts, safe);
    const char *const cols[] = {"ranks", "", "tokens_per_s", "nodes"};
    return write_rank_series(&set, in, out,
                             "# step time (ms, median over steps) and tokens/s (all ranks) per number of ranks, one "
                             "block per configuration (and model and backend where they differ); column 4: nodes\n",
                             cols, (int)(0.96 * ZB_PLOT_CANVAS_PT / 6 * 1000), 2.5);
}

/* Points by size (c3), then ranks (x); by_ranks: by ranks alone. */
static int by_size_then_ranks(const void *a, const void *b) {
    const zb_plot_point *p = (const zb_plot_point *)a, *q = (const zb_plot_point *)b;
    if (p->c3 != q->c3) return p->c3 < q->c3 ? -1 : 1;
    return p->x < q->x ? -1 : p->x > q->x;
}

static int by_ranks(const void *a, const void *b) {
    double x = ((const zb_plot_point *)a)->x, y = ((const zb_plot_point *)b)->x;
    return x < y ? -1 : x > y;
}

/* The number of distinct x among n points sorted by x. */
static int distinct_x(const zb_plot_point *p, int n) {
    int d = n > 0;
    for (int k = 1; k < n; k++) d += p[k].x != p[k - 1].x;
    return d;
}

/* The largest size a series measured at every one of its rank counts (NaN
 * and set->oom when out of memory). Sorted copies rather than every size
 * against every point of every rank count: O(n log n), not O(n^3). */
static double common_largest(zb_plot_series_set *set, const zb_plot_series *s) {
    zb_plot_point *p = (zb_plot_point *)malloc(((size_t)s->n + 1) * sizeof *p);
    if (!p) {
        set->oom = true;
        return NAN;
    }
    memcpy(p, s->p, (size_t)s->n * sizeof *p);
    qsort(p, (size_t)s->n, sizeof *p, by_ranks);
    int n_ranks = distinct_x(p, s->n);
    qsort(p, (size_t)s->n, sizeof *p, by_size_then_ranks);
    double best = NAN;
    for (int k = 0; k < s->n;) {
        int end = k;
        while (end < s->n && p[end].c3 == p[k].c3) end++;
        if (distinct_x(p + k, end - k) == n_ranks) best = p[k].c3; /* sizes ascend: the last one is the largest */
        k = end;
    }
    free(p);
    return best;
}

bool zb_plot_build_busbw_scaling(const zb_plot_inputs *in, zb_plot_out *out) {
    zb_plot_series_set set = {0};
    for (int i = 0; i < in->n; i++) {
        char backend[80];
        zb_plot_backend(&in->files[i], backend, sizeof backend);
        for (size_t j = 0; j < zb_plot_n_runs(&in->files[i]); j++) {
            const json_t *r = zb_plot_run(&in->files[i], j);
            const char *bench = zb_plot_str(r, "bench"), *dtype = zb_plot_str(r, "dtype");
            double size = zb_plot_num(r, "size_bytes"), bw = zb_plot_metric(r, "busbw_gbps");
            double ranks = zb_plot_num(r, "ranks");
            if (!is_collective(bench) || !(size > 0) || !(ranks > 0) || !isfinite(bw) ||
                json_is_true(json_object_get(r, "in_place"))) {
                continue;
            }
            /* x ranks, y busbw, c3 the size, c4 nodes; one series over every input. */
            zb_plot_series *s = zb_plot_series_getf(&set, -1, "%s %s%s%s", bench, backend,
                                                    strcmp(dtype, "float") ? " " : "", strcmp(dtype, "float") ? dtype : "");
            zb_plot_series_add(&set, s,
                               (zb_plot_point){ranks, bw, size, zb_plot_num(r, "nodes")});
        }
    }
    /* Each series at its largest size common to all its rank counts, kept
     * when it has two or more of them. */
    for (int i = 0; i < set.n; i++) {
        zb_plot_series *s = &set.s[i];
        double size = common_largest(&set, s);
        int kept = 0;
        for (int k = 0; k < s->n; k++) {
            if (s->p[k].c3 == size) s->p[kept++] = s->p[k];
        }
        s->n = kept;
        bool several = false;
        for (int k = 1; k < s->n; k++) several |= s->p[k].x != s->p[0].x;
        if (several) {
            const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
            int u = 0;
            double v = size;
            while (u < 4 && v >= 1024 && fmod(v, 1024) == 0) {
                v /= 1024;
                u++;
            }
            size_t used = strlen(s->label);
            snprintf(s->label + used, sizeof s->label - used, ", %.0f %s", v, unit[u]);
            continue;
        }
        zb_plot_series_drop(&set, i);
    }
    zb_plot_series_compact(&set);
    if (set.oom || set.n == 0) {
        bool oom = set.oom;
        zb_plot_series_free(&set);
        return fail(out, oom ? "out of memory" : "no collective runs of one kind and backend at two or more rank counts");
    }
    const char *const cols[] = {"ranks", "", "size_bytes", "nodes"};
    return write_rank_series(&set, in, out,
                             "# bus bandwidth (GB/s, out of place) per number of ranks at the largest message size "
                             "measured at every rank count, one block per collective and backend; column 3: that "
                             "size (bytes), 4: nodes\n", cols, LEGEND_ROOM, 2.5);
}
