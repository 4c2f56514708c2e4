/* The plot tool's bar figures over step runs (plot.h): sync vs prefetch
 * (step time, overlap, MFU, with their spread as whiskers) and the peak
 * memory per tag as stacked bars. One row per step run, labelled by its
 * mode and by whatever else differs between the runs plotted. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot_series.h"

typedef struct step_run {
    const json_t *run;
    int file;
    char label[96]; /* the mode, then what differs */
    char group[96]; /* what differs between runs besides the mode */
} step_run;

/* The step runs of every input, in order; NULL when there are none (or no
 * memory: *oom). */
static step_run *step_runs(const zb_plot_inputs *in, int *n, bool *oom) {
    size_t total = 0;
    for (int i = 0; i < in->n; i++) total += zb_plot_n_runs(&in->files[i]);
    step_run *s = (step_run *)calloc(total + 1, sizeof(step_run));
    *n = 0;
    *oom = !s;
    for (int i = 0; s && i < in->n; i++) {
        for (size_t j = 0; j < zb_plot_n_runs(&in->files[i]); j++) {
            const json_t *r = zb_plot_run(&in->files[i], j);
            if (!zb_plot_is_step_run(r) || !isfinite(zb_plot_metric(r, "step_time_ms"))) continue;
            s[*n].run = r;
            s[*n].file = i;
            (*n)++;
        }
    }
    if (s && *n == 0) {
        free(s);
        return NULL;
    }
    return s;
}

/* A field as text, for telling runs apart. */
static void field_text(const step_run *s, const zb_plot_inputs *in, int field, char *out, size_t n) {
    const json_t *r = s->run;
    switch (field) {
    case 0: snprintf(out, n, "stage %d", zb_plot_int(r, "stage", -1)); break;
    case 1: snprintf(out, n, "%s", zb_plot_str(r, "model")); break;
    case 2: {
        int ranks = zb_plot_int(r, "ranks", -1);
        snprintf(out, n, "%d rank%s", ranks, ranks == 1 ? "" : "s");
        break;
    }
    case 3: zb_plot_backend(&in->files[s->file], out, n); break;
    case 4: snprintf(out, n, "%s", zb_plot_str(r, "param_dtype")); break;
    case 5: snprintf(out, n, "recompute %s", zb_plot_str(r, "recompute")); break;
    default: snprintf(out, n, "depth %d", zb_plot_int(r, "prefetch_depth", -1)); break;
    }
}

/* Labels: the mode, then each field that differs between the runs. */
static void label_runs(step_run *s, int n, const zb_plot_inputs *in) {
    enum { N_FIELDS = 7 };
    bool varies[N_FIELDS] = {false};
    for (int f = 0; f < N_FIELDS; f++) {
        char a[96], b[96];
        field_text(&s[0], in, f, a, sizeof a);
        for (int i = 1; i < n && !varies[f]; i++) {
            field_text(&s[i], in, f, b, sizeof b);
            varies[f] = strcmp(a, b) != 0;
        }
    }
    for (int i = 0; i < n; i++) {
        s[i].group[0] = '\0';
        for (int f = 0; f < N_FIELDS; f++) {
            if (!varies[f]) continue;
            char v[96];
            size_t used = strlen(s[i].group);
            field_text(&s[i], in, f, v, sizeof v);
            snprintf(s[i].group + used, sizeof s[i].group - used, "%s%s", used ? ", " : "", v);
        }
        snprintf(s[i].label, sizeof s[i].label, "%s%s%s", zb_plot_str(s[i].run, "mode"), s[i].group[0] ? " " : "",
                 s[i].group);
        if (!s[i].group[0]) { /* one configuration: name it */
            char stage[32];
            field_text(&s[i], in, 0, stage, sizeof stage);
            snprintf(s[i].group, sizeof s[i].group, "%s, %s", zb_plot_str(s[i].run, "model"), stage);
        }
    }
}

/* Runs by group, then by their order (equal groups adjacent, the first
 * seen first). */
static int by_group(const void *a, const void *b) {
    const step_run *x = *(const step_run *const *)a, *y = *(const step_run *const *)b;
    int c = strcmp(x->group, y->group);
    return c ? c : (x > y) - (x < y);
}

/* Each run's group number, groups numbered in first-seen order (NULL: out
 * of memory). Sorted rather than every run against the runs before it:
 * 50,000 runs of as many configurations cost O(n log n), not O(n^2). */
static int *number_groups(const step_run *s, int n) {
    int *group_of = (int *)calloc((size_t)n + 1, sizeof(int));
    int *first = (int *)calloc((size_t)n + 1, sizeof(int)); /* the first run of each run's group */
    const step_run **by = (const step_run **)malloc(((size_t)n + 1) * sizeof *by);
    if (group_of && first && by) {
        for (int i = 0; i < n; i++) by[i] = &s[i];
        qsort(by, (size_t)n, sizeof *by, by_group);
        for (int k = 0; k < n; k++) {
            bool same = k > 0 && !strcmp(by[k - 1]->group, by[k]->group);
            first[by[k] - s] = same ? first[by[k - 1] - s] : (int)(by[k] - s);
        }
        int n_groups = 0;
        for (int i = 0; i < n; i++) group_of[i] = first[i] == i ? n_groups++ : group_of[first[i]];
    } else {
        free(group_of);
        group_of = NULL;
    }
    free(first);
    free(by);
    return group_of;
}

static bool fail(zb_plot_out *out, const char *why) {
    snprintf(out->why, sizeof out->why, "%s", why);
    return false;
}

/* A bar figure draws one bar per step run: past this many, a one-column
 * figure shows nothing legible and gnuplot spends minutes drawing it
 * (50,000 runs: a PDF of hundreds of MB), so the figure is left out. */
#define ZB_PLOT_MAX_BARS 1000

static bool too_many_bars(step_run *s, int n, zb_plot_out *out) {
    free(s);
    snprintf(out->why, sizeof out->why, "%d step runs, more than the %d bars one figure shows (plot fewer runs)", n,
             ZB_PLOT_MAX_BARS);
    return false;
}

static void put_row(FILE *f, const double *v, int n) {
    for (int i = 0; i < n; i++) {
        fputc(' ', f);
        zb_plot_put_num(f, v[i]);
    }
}

bool zb_plot_build_steps(const zb_plot_inputs *in, zb_plot_out *out) {
    int n = 0;
    bool oom = false;
    step_run *s = step_runs(in, &n, &oom);
    if (!s) return fail(out, oom ? "out of memory" : "no step runs in the inputs");
    if (n > ZB_PLOT_MAX_BARS) return too_many_bars(s, n, out);
    label_runs(s, n, in);
    zb_plot_text t;
    if (!zb_plot_text_open(&t)) {
        free(s);
        return fail(out, "out of memory");
    }
    fputs("# one row per step run: its bar's x, its group's x and label, mode (0 "
          "sync, 1 prefetch, 2 other); step time (ms): median, min, max over steps; overlap (%): median and its whisker (min-max "
          "over the ranks' medians, or on one rank min over steps to the median); MFU (%): median and the MFU at the slowest and fastest step; NaN: not measured "
          "(no bar) or no spread (no whisker)\n", t.f);
    fputs("\"x\" \"group_x\" \"group\" \"mode\" \"step_ms\" \"step_lo\" \"step_hi\" \"overlap_pct\" \"overlap_lo\" "
          "\"overlap_hi\" \"mfu_pct\" \"mfu_lo\" \"mfu_hi\"\n", t.f);
    /* Groups in first-seen order: sync left of its group's centre, prefetch right. */
    int *group_of = number_groups(s, n);
    if (!group_of) {
        free(s);
        zb_plot_text_close(&t);
        free(t.buf);
        return fail(out, "out of memory");
    }
    int no_spread = 0, any_mfu = 0, over_ranks = 0, over_steps = 0;
    for (int i = 0; i < n; i++) {
        const json_t *r = s[i].run;
        const char *mode = zb_plot_str(r, "mode");
        double st = zb_plot_metric(r, "step_time_ms"), lo = zb_plot_metric(r, "step_time_min_ms");
        double hi = zb_plot_metric(r, "step_time_max_ms"), ov = zb_plot_metric(r, "overlap_pct");
        double ov_lo = zb_plot_metric(r, "overlap_min_pct"), mfu = zb_plot_metric(r, "mfu_pct");
        bool spread = isfinite(lo) && isfinite(hi) && hi > lo;
        if (!spread) {
            lo = hi = NAN;
            no_spread++;
        }
        /* Overlap: min-max over the ranks' own medians (per_rank) where
         * several ranks ran; otherwise only its minimum over steps is
         * recorded, and the whisker runs from it up to the median. */
        double ov_hi = ov, r_lo = INFINITY, r_hi = -INFINITY;
        size_t k;
        const json_t *pr;
        int n_ranks = 0;
        json_array_foreach(json_object_get(r, "per_rank"), k, pr) {
            double v = zb_plot_num(pr, "overlap_pct");
            if (!isfinite(v)) continue;
            n_ranks++;
            if (v < r_lo) r_lo = v;
            if (v > r_hi) r_hi = v;
        }
        if (n_ranks >= 2) {
            ov_lo = r_hi > r_lo ? r_lo : NAN;
            ov_hi = r_hi > r_lo ? r_hi : NAN;
            over_ranks++;
        } else {
            if (!(isfinite(ov_lo) && isfinite(ov) && ov > ov_lo)) ov_lo = ov_hi = NAN;
            over_steps++;
        }
        /* MFU is inversely proportional to step time. */
        double mfu_lo = spread ? mfu * st / hi : NAN, mfu_hi = spread ? mfu * st / lo : NAN;
        any_mfu += isfinite(mfu);
        int m = !strcmp(mode, "sync") ? 0 : !strcmp(mode, "prefetch") ? 1 : 2;
        fprintf(t.f, "%g %d ", group_of[i] + (m == 0 ? -0.21 : m == 1 ? 0.21 : 0.0), group_of[i]);
        char group[200]; /* one line per field: gnuplot reads \n in a quoted string as a line break */
        size_t g = 0;
        for (const char *c = s[i].group; *c && g + 3 < sizeof group; c++) {
            if (c[0] == ',' && c[1] == ' ') {
                group[g++] = '\\';
                group[g++] = 'n';
                c++;
            } else {
                group[g++] = *c;
            }
        }
        group[g] = '\0';
        zb_plot_put_str(t.f, group);
        fprintf(t.f, " %d", m);
        double v[9] = {st, lo, hi, ov, ov_lo, ov_hi, mfu, mfu_lo, mfu_hi};
        put_row(t.f, v, 9);
        fputc('\n', t.f);
    }
    free(s);
    free(group_of);
    if (!zb_plot_text_close(&t)) return fail(out, "out of memory");
    out->data = t.buf;
    out->data_len = t.len;
    /* Short: it is printed under a figure one column wide. */
    const char *ov_note = !over_ranks ? "min to median" : !over_steps ? "over ranks" : "over ranks; 1 rank: min to median";
    snprintf(out->note, sizeof out->note, "whiskers: min-max over steps (overlap: %s)%s%s", ov_note,
             no_spread ? "; none: no spread" : "", any_mfu ? "" : "; no MFU: no peak");
    snprintf(out->vars, sizeof out->vars, "note='%s'; mfu=%d", out->note, any_mfu ? 1 : 0);
    return true;
}

bool zb_plot_build_memory(const zb_plot_inputs *in, zb_plot_out *out) {
    int n = 0;
    bool oom = false;
    step_run *s = step_runs(in, &n, &oom);
    if (!s) return fail(out, oom ? "out of memory" : "no step runs in the inputs");
    if (n > ZB_PLOT_MAX_BARS) return too_many_bars(s, n, out);
    /* Device tags with bytes in some run, in first-seen order; host staging
     * is host memory, outside the device's peak. */
    enum { MAX_TAGS = 32 };
    const char *tags[MAX_TAGS];
    int n_tags = 0, with_tags = 0;
    for (int i = 0; i < n; i++) {
        const json_t *by = json_object_get(json_object_get(s[i].run, "metrics"), "peak_mem_by_tag_bytes");
        const char *key;
        const json_t *v;
        with_tags += json_is_object(by);
        json_object_foreach((json_t *)by, key, v) {
            if (!strcmp(key, "host_staging") || !(json_number_value(v) > 0) || n_tags == MAX_TAGS) continue;
            bool seen = false;
            for (int k = 0; k < n_tags; k++) seen |= !strcmp(tags[k], key);
            if (!seen) tags[n_tags++] = key;
        }
    }
    if (n_tags == 0) {
        free(s);
        return fail(out, with_tags ? "the step runs' peak_mem_by_tag_bytes are all zero"
                                   : "no step runs with peak_mem_by_tag_bytes in the inputs");
    }
    label_runs(s, n, in);
    zb_plot_text t;
    if (!zb_plot_text_open(&t)) {
        free(s);
        return fail(out, "out of memory");
    }
    fputs("# peak memory per rank (MiB) by tag, one row per step run (host staging left out: host memory)\n", t.f);
    fputs("\"run\"", t.f);
    for (int k = 0; k < n_tags; k++) {
        char name[64];
        snprintf(name, sizeof name, "%s", tags[k]);
        for (char *c = name; *c; c++) *c = *c == '_' ? ' ' : *c;
        fputc(' ', t.f);
        zb_plot_put_str(t.f, name);
    }
    fputc('\n', t.f);
    for (int i = 0; i < n; i++) {
        const json_t *by = json_object_get(json_object_get(s[i].run, "metrics"), "peak_mem_by_tag_bytes");
        char label[200]; /* two lines: gnuplot reads \n in a quoted string as a line break */
        snprintf(label, sizeof label, "%s\\n%s", zb_plot_str(s[i].run, "mode"), s[i].group);
        zb_plot_put_str(t.f, label);
        for (int k = 0; k < n_tags; k++) {
            double b = zb_plot_num(by, tags[k]);
            fputc(' ', t.f);
            zb_plot_put_num(t.f, isfinite(b) ? b / 1048576.0 : 0.0);
        }
        fputc('\n', t.f);
    }
    free(s);
    if (!zb_plot_text_close(&t)) return fail(out, "out of memory");
    out->data = t.buf;
    out->data_len = t.len;
    snprintf(out->vars, sizeof out->vars, "tags=%d", n_tags);
    return true;
}
