/* The plot tool's bar figures over step runs (plot.h): step time, overlap
 * and MFU per configuration (ZeRO-2, ZeRO-3 sync, ZeRO-3 prefetch, ...:
 * zb_plot_config, one fill each, in one order in every figure), with the
 * paired interval the step's verdict used as the prefetch bar's whisker,
 * and the peak memory per tag as stacked bars with the device's memory as
 * a line. Runs are grouped by what differs between them besides the
 * configuration (ranks, model, ...); every label is wrapped to the width
 * its group or bar has on the axis, so no two overlap. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "plot_series.h"
#include "profile.h"

/* The plot area of the bar figures in milli-em of their 6 pt tick text:
 * screen 0.17 to 0.98 of the canvas in steps.gp (its step times take five
 * digits), 0.15 to 0.98 in memory.gp. */
#define STEPS_AXIS ((int)(0.81 * ZB_PLOT_CANVAS_PT / 6 * 1000))
#define AXIS_WIDTH ((int)(0.83 * ZB_PLOT_CANVAS_PT / 6 * 1000))
/* Between two neighbours' labels: about one character. */
#define LABEL_GAP 600
/* At most this many lines of a group's label. */
#define GROUP_LINES 3
/* A group label's field at most (about 24 characters of average text). */
#define FIELD_WIDTH 14400

/* A field of a run that tells groups apart (the configuration, which holds
 * the stage and the mode, is the bars' own). */
enum { N_FIELDS = 6 };

typedef struct step_run {
    const json_t *run;
    int file;
    char *key;               /* the fields that differ, whole: what groups the runs */
    char *fields[N_FIELDS];  /* those fields, whole, as the label shows them (NULL: the same in every run) */
    char config[48];         /* "ZeRO-3 prefetch" (zb_plot_config) */
    int code;                /* its place in the fixed order */
    int group_no;            /* groups numbered in first-seen order */
} step_run;

static void free_runs(step_run *s, int n) {
    for (int i = 0; s && i < n; i++) {
        free(s[i].key);
        for (int f = 0; f < N_FIELDS; f++) free(s[i].fields[f]);
    }
    free(s);
}

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

/* A string made as printf would, malloc'ed (NULL: out of memory). */
static char *text_of(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static char *text_of(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *t = len >= 0 ? (char *)malloc((size_t)len + 1) : NULL;
    if (!t) return NULL;
    va_start(ap, fmt);
    vsnprintf(t, (size_t)len + 1, fmt, ap);
    va_end(ap);
    return t;
}

/* A field of run s as text, whole (NULL: out of memory). */
static char *field_text(const step_run *s, const zb_plot_inputs *in, int field) {
    const json_t *r = s->run, *meta = json_object_get(in->files[s->file].doc, "meta");
    switch (field) {
    case 0: return text_of("%s", zb_plot_str(r, "model"));
    case 1: {
        int ranks = zb_plot_int(r, "ranks", -1);
        return text_of("%d rank%s", ranks, ranks == 1 ? "" : "s");
    }
    case 2: {
        const char *dev = zb_plot_str(meta, "backend"), *comm = zb_plot_str(meta, "comm");
        return text_of("%s/%s", dev[0] ? dev : "?", comm[0] ? comm : "?");
    }
    case 3: return text_of("%s", zb_plot_str(r, "param_dtype"));
    case 4: return text_of("recompute %s", zb_plot_str(r, "recompute"));
    default: return text_of("depth %d", zb_plot_int(r, "prefetch_depth", -1));
    }
}

/* Each run's configuration, and its group: the fields that differ between
 * the runs (none: the model, as the label), whole, so that two models
 * differing only past what a label shows are two groups. False when out
 * of memory. */
static bool label_runs(step_run *s, int n, const zb_plot_inputs *in) {
    bool varies[N_FIELDS] = {false}, any = false;
    for (int f = 0; f < N_FIELDS; f++) {
        char *a = field_text(&s[0], in, f);
        if (!a) return false;
        for (int i = 1; i < n && !varies[f]; i++) {
            char *b = field_text(&s[i], in, f);
            if (!b) {
                free(a);
                return false;
            }
            varies[f] = strcmp(a, b) != 0;
            free(b);
        }
        free(a);
        any |= varies[f];
    }
    if (!any) varies[0] = true; /* one group: the model names it */
    for (int i = 0; i < n; i++) {
        s[i].code = zb_plot_config(s[i].run, s[i].config, sizeof s[i].config);
        size_t key_len = 1;
        for (int f = 0; f < N_FIELDS; f++) {
            if (!varies[f]) continue;
            if (!(s[i].fields[f] = field_text(&s[i], in, f))) return false;
            key_len += strlen(s[i].fields[f]) + 24;
        }
        /* Each field with its length in front: no two lists of fields read alike. */
        if (!(s[i].key = (char *)malloc(key_len))) return false;
        size_t used = 0;
        s[i].key[0] = '\0';
        for (int f = 0; f < N_FIELDS; f++) {
            if (!s[i].fields[f]) continue;
            used += (size_t)snprintf(s[i].key + used, key_len - used, "%zu:%s;", strlen(s[i].fields[f]), s[i].fields[f]);
        }
    }
    return true;
}

/* Runs by group, then by their order (equal groups adjacent, the first
 * seen first). */
static int by_group(const void *a, const void *b) {
    const step_run *x = *(const step_run *const *)a, *y = *(const step_run *const *)b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x > y) - (x < y);
}

/* Numbers the groups in first-seen order (s[i].group_no) and returns how
 * many there are, -1 when out of memory. Sorted rather than every run
 * against the runs before it: 50,000 runs of as many configurations cost
 * O(n log n), not O(n^2). */
static int number_groups(step_run *s, int n) {
    int *first = (int *)calloc((size_t)n + 1, sizeof(int)); /* the first run of each run's group */
    const step_run **by = (const step_run **)malloc(((size_t)n + 1) * sizeof *by);
    int n_groups = -1;
    if (first && by) {
        for (int i = 0; i < n; i++) by[i] = &s[i];
        qsort(by, (size_t)n, sizeof *by, by_group);
        for (int k = 0; k < n; k++) {
            bool same = k > 0 && !strcmp(by[k - 1]->key, by[k]->key);
            first[by[k] - s] = same ? first[by[k - 1] - s] : (int)(by[k] - s);
        }
        n_groups = 0;
        for (int i = 0; i < n; i++) s[i].group_no = first[i] == i ? n_groups++ : s[first[i]].group_no;
    }
    free(first);
    free(by);
    return n_groups;
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
    free_runs(s, 0);
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

/* The bars' layout: the configurations present, in their fixed order, one
 * slot each in every group; bar i's x is its group's number plus its
 * slot's offset. */
typedef struct bar_layout {
    int slot_of[ZB_PLOT_CONFIG_CODES]; /* -1: not present */
    int n_slots, n_groups;
    double width;     /* one bar's width (x units: a group is 1) */
    char configs[64]; /* the codes present, "7 9 10", for the scripts */
} bar_layout;

static void layout_bars(const step_run *s, int n, int n_groups, bar_layout *l) {
    bool present[ZB_PLOT_CONFIG_CODES] = {false};
    for (int i = 0; i < n; i++) present[s[i].code] = true;
    l->n_slots = 0;
    l->n_groups = n_groups;
    l->configs[0] = '\0';
    for (int c = 0; c < ZB_PLOT_CONFIG_CODES; c++) {
        l->slot_of[c] = present[c] ? l->n_slots++ : -1;
        if (!present[c]) continue;
        size_t used = strlen(l->configs);
        snprintf(l->configs + used, sizeof l->configs - used, "%s%d", used ? " " : "", c);
    }
    l->width = 0.84 / l->n_slots;
}

static double bar_x(const bar_layout *l, const step_run *r) {
    return r->group_no + (l->slot_of[r->code] - (l->n_slots - 1) / 2.0) * l->width;
}

/* A group's label, wrapped to the width its share of the axis holds (the
 * x range is n_groups + 0.2 groups wide), a neighbour's gap left: one
 * field alone takes up to GROUP_LINES lines; of several, each is cut to a
 * line, so that the later ones (ranks, backend, ...) keep their place.
 * `axis` is the axis' width in milli-em of the labels' font. Past what any
 * label can use (a group narrower than 3 characters), or `numbered`, the
 * groups are numbered instead, every k-th labelled: true then. */
static bool group_label(const bar_layout *l, const step_run *r, int axis, bool numbered, char *out, size_t n) {
    double share = axis / (l->n_groups + 0.2);
    int width = (int)share - LABEL_GAP;
    if (width >= 1900 && !numbered) {
        int n_fields = 0;
        for (int f = 0; f < N_FIELDS; f++) n_fields += r->fields[f] != NULL;
        char text[4 * N_FIELDS * 128] = "";
        for (int f = 0; f < N_FIELDS; f++) {
            if (!r->fields[f]) continue;
            char cut[4 * 128];
            /* One line each of several fields, or for a field of one word
             * (wrapping could not split it: cut once, in the middle). */
            bool one_line = n_fields > 1 || !strchr(r->fields[f], ' ');
            int room = one_line && width < FIELD_WIDTH ? width : FIELD_WIDTH;
            zb_plot_cut_middle(r->fields[f], room, cut, sizeof cut);
            size_t used = strlen(text);
            snprintf(text + used, sizeof text - used, "%s%s", used ? ", " : "", cut);
        }
        zb_plot_wrap(text, width, GROUP_LINES, out, n);
        return false;
    }
    char last[16];
    snprintf(last, sizeof last, "%d", l->n_groups);
    int every = 1;
    while (share * every < zb_plot_text_width(last) + LABEL_GAP) every++;
    if (r->group_no % every) snprintf(out, n, "%s", "");
    else snprintf(out, n, "%d", r->group_no + 1);
    return true;
}

/* A group's label as its runs' rows carry it. */
#define GROUP_LABEL_N 1024
typedef struct group_text {
    char text[GROUP_LABEL_N];
} group_text;

static int by_text(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every group's label (group_label), indexed by group number; NULL when
 * out of memory. Labels cut so far that two groups read alike (e.g.
 * "M1." for both M10 and M11) tell nothing apart: then every group is
 * numbered. */
static group_text *group_labels(const step_run *s, int n, const bar_layout *l, int axis, bool *numbered) {
    group_text *g = (group_text *)calloc((size_t)l->n_groups + 1, sizeof *g);
    const char **by = (const char **)malloc(((size_t)l->n_groups + 1) * sizeof *by);
    bool *done = (bool *)calloc((size_t)l->n_groups + 1, sizeof *done);
    if (!g || !by || !done) {
        free(g);
        free(by);
        free(done);
        return NULL;
    }
    *numbered = false;
    for (int pass = 0; pass < 2; pass++) {
        *numbered = pass == 1;
        memset(done, 0, ((size_t)l->n_groups + 1) * sizeof *done);
        for (int i = 0; i < n; i++) {
            if (done[s[i].group_no]) continue;
            done[s[i].group_no] = true;
            *numbered |= group_label(l, &s[i], axis, pass == 1, g[s[i].group_no].text, sizeof g[0].text);
        }
        bool alike = false;
        for (int k = 0; k < l->n_groups; k++) by[k] = g[k].text;
        qsort(by, (size_t)l->n_groups, sizeof *by, by_text);
        for (int k = 1; k < l->n_groups && !alike; k++) alike = by[k][0] && !strcmp(by[k - 1], by[k]);
        if (!alike) break;
    }
    free(by);
    free(done);
    return g;
}

/* True when run i is the first of its group. */
static bool first_of_group(const step_run *s, int i) {
    for (int k = 0; k < i; k++) {
        if (s[k].group_no == s[i].group_no) return false;
    }
    return true;
}

/* Where the groups are numbered, comment lines of the data file name each
 * (its fields whole but for control characters, each cut to 40 em). */
static void name_groups(FILE *f, const step_run *s, int n, int n_groups) {
    bool *done = (bool *)calloc((size_t)n_groups + 1, sizeof *done);
    if (!done) return;
    for (int i = 0; i < n; i++) {
        if (done[s[i].group_no]) continue;
        done[s[i].group_no] = true;
        fprintf(f, "# group %d:", s[i].group_no + 1);
        for (int k = 0, first = 1; k < N_FIELDS; k++) {
            if (!s[i].fields[k]) continue;
            char cut[512];
            zb_plot_cut_middle(s[i].fields[k], 40000, cut, sizeof cut);
            for (char *c = cut; *c; c++) *c = (unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c;
            fprintf(f, "%s %s", first ? "" : ",", cut);
            first = 0;
        }
        fputc('\n', f);
    }
    free(done);
}

/* Configuration `code`'s name as the scripts' legends write it (style.gp's
 * cfgname). */
static void config_name(int code, char *out, size_t n) {
    int stage = code / 3, kind = code % 3;
    char name[12];
    if (stage == 0) snprintf(name, sizeof name, "DDP");
    else snprintf(name, sizeof name, "ZeRO-%d", stage);
    snprintf(out, n, "%s%s", name, kind == 0 ? " sync" : kind == 1 ? (stage == 3 ? " prefetch" : "") : " other");
}

/* The lines of a wrapped label (zb_plot_wrap's \\n breaks). */
static int label_lines(const char *s) {
    int n = 1;
    for (const char *c = strstr(s, "\\n"); c; c = strstr(c + 2, "\\n")) n++;
    return n;
}

/* The sync run that prefetch run r was paired with: the same file, stage
 * and group (NULL: none). */
static const step_run *partner(const step_run *s, int n, const step_run *r) {
    for (int i = 0; i < n; i++) {
        if (s[i].file == r->file && s[i].code == r->code - 1 && !strcmp(s[i].key, r->key)) return &s[i];
    }
    return NULL;
}

bool zb_plot_build_steps(const zb_plot_inputs *in, zb_plot_out *out) {
    int n = 0;
    bool oom = false;
    step_run *s = step_runs(in, &n, &oom);
    if (!s) return fail(out, oom ? "out of memory" : "no step runs in the inputs");
    if (n > ZB_PLOT_MAX_BARS) return too_many_bars(s, n, out);
    int n_groups = label_runs(s, n, in) ? number_groups(s, n) : -1;
    zb_plot_text t;
    if (n_groups < 0 || !zb_plot_text_open(&t)) {
        free_runs(s, n);
        return fail(out, "out of memory");
    }
    bar_layout l;
    layout_bars(s, n, n_groups, &l);
    bool numbered = false;
    group_text *groups = group_labels(s, n, &l, STEPS_AXIS, &numbered);
    if (!groups) {
        free_runs(s, n);
        zb_plot_text_close(&t);
        free(t.buf);
        return fail(out, "out of memory");
    }
    fputs("# one row per step run: its bar's x, its group's x and label, its configuration (code: 3 * stage + 0 sync, "
          "1 prefetch, 2 other); then per panel (step time ms, overlap %, MFU %) the median over steps, its whisker's "
          "low and high end and the reference it is read against: on a prefetch bar paired with sync (--mode both), "
          "sync's median plus the paired interval of prefetch - sync that the step's verdict used (it crosses the "
          "reference, sync's median, exactly when the difference is not significant; MFU the same interval through "
          "MFU ~ 1 / step time); last, the reference's left end (the sync bar's x); NaN: not measured (no bar), no "
          "interval (no whisker)\n", t.f);
    if (numbered) name_groups(t.f, s, n, n_groups);
    fputs("\"x\" \"group_x\" \"group\" \"config\" \"step_ms\" \"step_lo\" \"step_hi\" \"step_ref\" \"overlap_pct\" "
          "\"overlap_lo\" \"overlap_hi\" \"overlap_ref\" \"mfu_pct\" \"mfu_lo\" \"mfu_hi\" \"mfu_ref\" \"ref_x0\"\n", t.f);
    int paired = 0, unpaired = 0, any_mfu = 0, glines = 1, whisk[3] = {0, 0, 0};
    double level = NAN; /* the paired intervals' confidence (NaN: they differ) */
    bool first_level = true;
    for (int i = 0; i < n; i++) {
        const json_t *r = s[i].run;
        const json_t *pm = json_object_get(json_object_get(r, "metrics"), "paired");
        double st = zb_plot_metric(r, "step_time_ms"), ov = zb_plot_metric(r, "overlap_pct");
        double mfu = zb_plot_metric(r, "mfu_pct");
        double lo = zb_plot_num(pm, "step_diff_lo_ms"), hi = zb_plot_num(pm, "step_diff_hi_ms");
        double v[13];
        for (int k = 0; k < 13; k++) v[k] = NAN;
        v[0] = st;
        v[4] = ov;
        v[8] = mfu;
        const step_run *sync = s[i].code % 3 == 1 && isfinite(lo) && isfinite(hi) ? partner(s, n, &s[i]) : NULL;
        double ts = sync ? zb_plot_metric(sync->run, "step_time_ms") : NAN;
        /* A low end below 0 (a noisy sync step: prefetch - sync < -sync) is
         * kept as it is: the axis starts at 0, so gnuplot draws the whisker
         * down to the axis. */
        if (sync && isfinite(ts)) {
            v[1] = ts + lo;
            v[2] = ts + hi;
            v[3] = ts;
            double ms = zb_plot_metric(sync->run, "mfu_pct");
            /* MFU = k / T: the same interval, its ends swapped; unbounded
             * above (no whisker) when the step's low end reaches 0. */
            if (isfinite(ms) && ts + lo > 0) {
                v[9] = ms * ts / (ts + hi);
                v[10] = ms * ts / (ts + lo);
                v[11] = ms;
            }
            v[12] = bar_x(&l, sync);
            double lv = zb_plot_num(pm, "ci_level");
            level = first_level || lv == level ? lv : NAN;
            first_level = false;
            paired++;
        } else if (s[i].code % 3 == 1) {
            unpaired++;
        }
        any_mfu += isfinite(mfu);
        fprintf(t.f, "%g %d ", bar_x(&l, &s[i]), s[i].group_no);
        const char *group = groups[s[i].group_no].text; /* xtic: one label a place */
        if (label_lines(group) > glines) glines = label_lines(group);
        zb_plot_put_wrapped(t.f, group);
        fprintf(t.f, " %d", s[i].code);
        for (int p = 0; p < 3; p++) whisk[p] += isfinite(v[4 * p + 1]) && isfinite(v[4 * p + 2]);
        put_row(t.f, v, 13);
        fputc('\n', t.f);
    }
    free_runs(s, n);
    free(groups);
    if (!zb_plot_text_close(&t)) return fail(out, "out of memory");
    out->data = t.buf;
    out->data_len = t.len;
    /* Two short lines: they are printed under a figure one column wide. */
    char note1[128], note2[128] = "";
    if (paired) {
        char conf[16] = "";
        if (isfinite(level) && level > 0 && level < 1) snprintf(conf, sizeof conf, "%.1f%% ", 100 * level);
        snprintf(note1, sizeof note1, "whisker: sync + the paired %sinterval of prefetch - sync", conf);
        snprintf(note2, sizeof note2, "crossing the dash (the sync median) = not significant%s",
                 unpaired ? "; none: unpaired" : "");
    } else if (in->simulated) {
        snprintf(note1, sizeof note1, "no whiskers: simulated steps have no noise");
    } else {
        snprintf(note1, sizeof note1, "no whiskers: no paired interval (--mode both, 6+ pairs)");
    }
    if (!any_mfu) {
        char *n2 = note2[0] ? note2 : note1;
        size_t used = strlen(n2);
        snprintf(n2 + used, sizeof note2 - used, "; no MFU: no peak");
    }
    snprintf(out->note, sizeof out->note, "%s%s%s%s", note1, note2[0] ? "; " : "", note2,
             numbered ? "; groups numbered (their names do not fit): the data file names them" : "");
    /* The legend above the panels: the configurations, as style.gp's
     * cfgname names them, laid out by their widths. */
    zb_plot_key key = {0};
    for (int c = 0; c < ZB_PLOT_CONFIG_CODES; c++) {
        char name[24];
        if (l.slot_of[c] < 0) continue;
        config_name(c, name, sizeof name);
        zb_plot_key_add(&key, name);
    }
    zb_plot_key_layout(&key, STEPS_AXIS, 1.5);
    snprintf(out->vars, sizeof out->vars,
             "note='%s'; note2='%s'; mfu=%d; configs='%s'; bw=%.4f; glines=%d; krows=%d; kcols=%d; kw=%d; "
             "whisk='%d %d %d'", note1, note2, any_mfu ? 1 : 0, l.configs, l.width, glines, key.rows, key.cols,
             key.width_fix, whisk[0], whisk[1], whisk[2]);
    return true;
}

/* The device's memory per rank from a run's hardware profile
 * (meta.config.hw), shared by device_sharing_ranks ranks: 0 with *why set
 * when the profile gives none (a CPU profile measures host memory). */
static double device_memory(const zb_plot_input *f, const json_t *run, char *name, size_t name_n, char *why,
                            size_t why_n) {
    const char *hw = zb_plot_str(json_object_get(json_object_get(f->doc, "meta"), "config"), "hw");
    char shown[256];
    zb_plot_cut(hw, 24000, shown, sizeof shown);
    zb_hw_profile p;
    if (!hw[0]) {
        snprintf(why, why_n, "no hardware profile in the runs' meta.config.hw");
        return 0;
    }
    if (zb_hw_profile_load(hw, &p) != ZB_OK) {
        snprintf(why, why_n, "hardware profile '%s' does not load here", shown);
        return 0;
    }
    if (p.mem_bytes_measure || !(p.mem_bytes > 0)) {
        snprintf(why, why_n, "profile '%s' has no device memory (it measures the host's)", shown);
        return 0;
    }
    double sharing = zb_plot_metric(run, "device_sharing_ranks");
    zb_plot_cut(p.name, 20000, name, name_n);
    return sharing > 1 ? p.mem_bytes / sharing : p.mem_bytes;
}

/* True when every word of s is at most width milli-em wide. */
static bool words_fit(const char *s, int width) {
    char word[64];
    for (const char *c = s; *c;) {
        size_t len = strcspn(c, " ");
        snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), c);
        if (zb_plot_text_width(word) > width) return false;
        c += len;
        while (*c == ' ') c++;
    }
    return true;
}

/* A bar's configuration label in at most two lines of `width`: "ZeRO-3
 * prefetch", else "Z3 prefetch", "Z3 pref.", "Z3 p" (the first whose words
 * fit), else nothing (the group and the legend then name the bars). */
static void short_config(const step_run *r, int width, char *out, size_t n) {
    char forms[4][64];
    const char *mode = strchr(r->config, ' '); /* " sync", " prefetch", or none (ZeRO-2) */
    int stage = r->code / 3;
    snprintf(forms[0], sizeof forms[0], "%s", r->config);
    char z[8];
    snprintf(z, sizeof z, stage ? "Z%d" : "DDP", stage);
    snprintf(forms[1], sizeof forms[1], "%s%s", z, mode ? mode : "");
    snprintf(forms[2], sizeof forms[2], "%s%s%.4s%s", z, mode ? " " : "", mode ? mode + 1 : "",
             mode && strlen(mode + 1) > 4 ? "." : "");
    snprintf(forms[3], sizeof forms[3], "%s%s%.1s", z, mode ? " " : "", mode ? mode + 1 : "");
    for (int f = 0; f < 4; f++) {
        if (!words_fit(forms[f], width)) continue;
        zb_plot_wrap(forms[f], width, 2, out, n);
        return;
    }
    snprintf(out, n, "%s", "");
}

/* Tag k's place in the fixed order (the engine's tags, zb_mem_tag_name),
 * ZB_MEM_TAG_COUNT and after for a tag it does not know. */
static int tag_order(const char *tag) {
    for (int k = 0; k < ZB_MEM_TAG_COUNT; k++) {
        if (!strcmp(zb_mem_tag_name((zb_mem_tag)k), tag)) return k;
    }
    return ZB_MEM_TAG_COUNT;
}

bool zb_plot_build_memory(const zb_plot_inputs *in, zb_plot_out *out) {
    int n = 0;
    bool oom = false;
    step_run *s = step_runs(in, &n, &oom);
    if (!s) return fail(out, oom ? "out of memory" : "no step runs in the inputs");
    if (n > ZB_PLOT_MAX_BARS) return too_many_bars(s, n, out);
    /* Device tags with bytes in some run, the engine's in its order, others
     * after them as first seen; host staging is host memory, outside the
     * device's peak. */
    enum { MAX_TAGS = 32 };
    const char *tags[MAX_TAGS];
    int order[MAX_TAGS];
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
            if (seen) continue;
            int o = tag_order(key), at = n_tags;
            while (at > 0 && order[at - 1] > o) at--; /* unknown ones (equal order) stay first-seen */
            for (int k = n_tags; k > at; k--) {
                tags[k] = tags[k - 1];
                order[k] = order[k - 1];
            }
            tags[at] = key;
            order[at] = o;
            n_tags++;
        }
    }
    if (n_tags == 0) {
        free_runs(s, n);
        return fail(out, with_tags ? "the step runs' peak_mem_by_tag_bytes are all zero"
                                   : "no step runs with peak_mem_by_tag_bytes in the inputs");
    }
    int n_groups = label_runs(s, n, in) ? number_groups(s, n) : -1;
    if (n_groups < 0) {
        free_runs(s, n);
        return fail(out, "out of memory");
    }
    bar_layout l;
    layout_bars(s, n, n_groups, &l);
    /* The unit the tables use: GiB where a bar reaches 1 GiB (the scale
     * table), MiB below (the step table). */
    double top = 0;
    for (int i = 0; i < n; i++) {
        const json_t *by = json_object_get(json_object_get(s[i].run, "metrics"), "peak_mem_by_tag_bytes");
        double sum = 0;
        for (int k = 0; k < n_tags; k++) {
            double b = zb_plot_num(by, tags[k]);
            sum += isfinite(b) && b > 0 ? b : 0;
        }
        if (sum > top) top = sum;
    }
    bool gib = top >= 1073741824.0;
    double unit = gib ? 1073741824.0 : 1048576.0;
    zb_plot_text t, ref;
    if (!zb_plot_text_open(&t)) {
        free_runs(s, n);
        return fail(out, "out of memory");
    }
    if (!zb_plot_text_open(&ref)) {
        free_runs(s, n);
        zb_plot_text_close(&t);
        free(t.buf);
        return fail(out, "out of memory");
    }
    fprintf(t.f, "# peak memory per rank (%s) by tag, one row per step run (host staging left out: host memory): its "
                 "bar's x, its group's x and label, its configuration (code and label); then each tag's top, the tags "
                 "stacked in the order of the columns\n", gib ? "GiB" : "MiB");
    /* The labels (group and bar) are 5.5 pt: the axis holds 6 / 5.5 of its
     * 6 pt width. */
    int axis = AXIS_WIDTH * 12 / 11, glines = 1, blines = 0, unlabelled = 0;
    int bar_width = (int)(axis * l.width / (n_groups + 0.2)) - LABEL_GAP / 2;
    bool numbered = false;
    group_text *groups = group_labels(s, n, &l, axis, &numbered);
    if (!groups) {
        free_runs(s, n);
        zb_plot_text_close(&t);
        zb_plot_text_close(&ref);
        free(t.buf);
        free(ref.buf);
        return fail(out, "out of memory");
    }
    if (numbered) name_groups(t.f, s, n, n_groups);
    fputs("\"x\" \"group_x\" \"group\" \"config\" \"bar\"", t.f);
    /* The legend's entries: the tags (an input's own, cut to a field's
     * width), then the device-memory lines drawn. */
    zb_plot_key key = {0};
    for (int k = 0; k < n_tags; k++) {
        char name[256];
        zb_plot_cut_middle(tags[k], FIELD_WIDTH, name, sizeof name);
        for (char *c = name; *c; c++) *c = *c == '_' ? ' ' : *c;
        zb_plot_key_add(&key, name);
        fputc(' ', t.f);
        zb_plot_put_str(t.f, name);
    }
    fputc('\n', t.f);
    /* A bar's label: its configuration, wrapped to the bar's share of the
     * axis, in the first of its shorter forms that fits whole. */
    for (int i = 0; i < n; i++) {
        const json_t *by = json_object_get(json_object_get(s[i].run, "metrics"), "peak_mem_by_tag_bytes");
        /* The group's label on its first run's row only: drawn once per run,
         * it would be drawn over itself (antialiased text darkens). */
        const char *group = first_of_group(s, i) ? groups[s[i].group_no].text : "";
        char bar[96];
        short_config(&s[i], bar_width, bar, sizeof bar);
        unlabelled += !bar[0];
        if (bar[0] && label_lines(bar) > blines) blines = label_lines(bar);
        if (label_lines(group) > glines) glines = label_lines(group);
        fprintf(t.f, "%g %d ", bar_x(&l, &s[i]), s[i].group_no);
        zb_plot_put_wrapped(t.f, group);
        fprintf(t.f, " %d ", s[i].code);
        zb_plot_put_wrapped(t.f, bar);
        double sum = 0;
        for (int k = 0; k < n_tags; k++) {
            double b = zb_plot_num(by, tags[k]);
            sum += isfinite(b) && b > 0 ? b : 0;
            fputc(' ', t.f);
            zb_plot_put_num(t.f, sum / unit);
        }
        fputc('\n', t.f);
    }
    /* The device's memory per rank, one line per profile: drawn where it is
     * within 8x of the tallest bar (beyond, the bars would be slivers under
     * it, and the figure says so in words instead). */
    char names[4][64], why[160] = "", off[200] = "";
    int n_refs = 0;
    double refs[4];
    for (int i = 0; i < n && n_refs < 4; i++) {
        char name[64];
        double mem = device_memory(&in->files[s[i].file], s[i].run, name, sizeof name, why, sizeof why);
        bool seen = false;
        for (int k = 0; k < n_refs; k++) seen |= !strcmp(names[k], name) && refs[k] == mem;
        if (!(mem > 0) || seen) continue;
        snprintf(names[n_refs], sizeof names[0], "%s", name);
        refs[n_refs++] = mem;
    }
    int drawn = 0;
    for (int k = 0; k < n_refs; k++) {
        char label[160];
        snprintf(label, sizeof label, "%s %.1f %s", n_refs > 1 ? names[k] : "device memory", refs[k] / unit,
                 gib ? "GiB" : "MiB");
        if (refs[k] > 8 * top) {
            char safe[160];
            zb_plot_gp_text(label, safe, sizeof safe);
            snprintf(off, sizeof off, "%s (off this scale)", safe);
            continue;
        }
        zb_plot_key_add(&key, label);
        if (drawn++) fputs("\n\n", ref.f);
        zb_plot_put_str(ref.f, "x");
        fputc(' ', ref.f);
        zb_plot_put_str(ref.f, label);
        fputc('\n', ref.f);
        fprintf(ref.f, "%g ", -0.6);
        zb_plot_put_num(ref.f, refs[k] / unit);
        fprintf(ref.f, "\n%g ", n_groups - 0.4);
        zb_plot_put_num(ref.f, refs[k] / unit);
        fputc('\n', ref.f);
    }
    /* Bars too narrow for any form of their configuration's name: a line
     * under the figure names them, left to right, in up to two lines. */
    char barnote[2][256] = {"", ""};
    if (unlabelled) {
        char list[512] = "bars in each group, left to right:";
        for (int c = 0; c < ZB_PLOT_CONFIG_CODES; c++) {
            if (l.slot_of[c] < 0) continue;
            char name[24];
            config_name(c, name, sizeof name);
            size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s %s", list[used - 1] == ':' ? "" : ",", name);
        }
        char wrapped[600];
        zb_plot_wrap(list, (int)(0.96 * ZB_PLOT_CANVAS_PT / 5.5 * 1000), 2, wrapped, sizeof wrapped);
        char *br = strstr(wrapped, "\\n");
        if (br) *br = '\0';
        snprintf(barnote[0], sizeof barnote[0], "%s", wrapped);
        if (br) snprintf(barnote[1], sizeof barnote[1], "%s", br + 2);
    }
    free_runs(s, n);
    free(groups);
    bool ok = zb_plot_text_close(&t);
    if (!zb_plot_text_close(&ref)) ok = false;
    if (!ok) {
        free(t.buf);
        free(ref.buf);
        return fail(out, "out of memory");
    }
    out->data = t.buf;
    out->data_len = t.len;
    if (drawn) {
        out->ref = ref.buf;
        out->ref_len = ref.len;
    } else {
        free(ref.buf);
        if (off[0]) snprintf(out->note, sizeof out->note, "no device-memory line: %s", off);
        else snprintf(out->note, sizeof out->note, "no device-memory line: %s", why);
    }
    if (numbered) {
        size_t used = strlen(out->note);
        snprintf(out->note + used, sizeof out->note - used, "%sgroups numbered (their names do not fit): the data "
                 "file names them", used ? "; " : "");
    }
    /* The legend, outside the plot above it, laid out by its entries' widths. */
    zb_plot_key_layout(&key, AXIS_WIDTH, 1.5);
    char fills[3 * MAX_TAGS + 1] = "";
    for (int k = 0; k < n_tags; k++) {
        size_t used = strlen(fills);
        snprintf(fills + used, sizeof fills - used, "%s%d", k ? " " : "", order[k] < ZB_MEM_TAG_COUNT ? order[k] :
                 ZB_MEM_TAG_COUNT + k);
    }
    int used = snprintf(out->vars, sizeof out->vars,
                        "tags=%d; yunit='%s'; fills='%s'; bw=%.4f; glines=%d; blines=%d; krows=%d; kcols=%d; kw=%d",
                        n_tags, gib ? "GiB" : "MiB", fills, l.width, glines, blines, key.rows, key.cols,
                        key.width_fix);
    if (off[0] && used > 0 && (size_t)used < sizeof out->vars) {
        used += snprintf(out->vars + used, sizeof out->vars - (size_t)used, "; offscale='%s'", off);
    }
    for (int b = 0; b < 2 && barnote[b][0] && used > 0 && (size_t)used < sizeof out->vars; b++) {
        char safe[256];
        zb_plot_gp_text(barnote[b], safe, sizeof safe);
        used += snprintf(out->vars + used, sizeof out->vars - (size_t)used, "; barnote%s='%s'", b ? "2" : "", safe);
    }
    return true;
}
