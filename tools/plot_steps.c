/* The plot tool's bar figures over step runs (plot.h): step time, overlap
 * and MFU per configuration (ZeRO-2, ZeRO-3 sync, ZeRO-3 prefetch, ...:
 * zb_plot_config, one fill each, in one order in every figure), with the
 * paired interval the step's verdict used as the prefetch bar's whisker,
 * and the peak memory per tag as stacked bars with the device's memory as
 * a line. Runs are grouped by what differs between them besides the
 * configuration (ranks, model, ...); every label is wrapped to the width
 * its group or bar has on the axis, so no two overlap. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "plot_series.h"
#include "profile.h"

/* Characters of tick text (6 pt, DejaVu Sans at about 0.6 em a character)
 * across the plot area of a one-column figure (about 197 pt wide). */
#define AXIS_CHARS 54
/* At most this many lines of a group's label. */
#define GROUP_LINES 3

typedef struct step_run {
    const json_t *run;
    int file;
    char group[96]; /* what differs between runs besides the configuration */
    char config[48]; /* "ZeRO-3 prefetch" (zb_plot_config) */
    int code;        /* its place in the fixed order */
    int group_no;    /* groups numbered in first-seen order */
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

/* A field as text, for telling runs apart (the configuration, which holds
 * the stage and the mode, is the bars' own). */
enum { N_FIELDS = 6 };
static void field_text(const step_run *s, const zb_plot_inputs *in, int field, char *out, size_t n) {
    const json_t *r = s->run;
    switch (field) {
    case 0: snprintf(out, n, "%s", zb_plot_str(r, "model")); break;
    case 1: {
        int ranks = zb_plot_int(r, "ranks", -1);
        snprintf(out, n, "%d rank%s", ranks, ranks == 1 ? "" : "s");
        break;
    }
    case 2: zb_plot_backend(&in->files[s->file], out, n); break;
    case 3: snprintf(out, n, "%s", zb_plot_str(r, "param_dtype")); break;
    case 4: snprintf(out, n, "recompute %s", zb_plot_str(r, "recompute")); break;
    default: snprintf(out, n, "depth %d", zb_plot_int(r, "prefetch_depth", -1)); break;
    }
}

/* Each run's configuration, and its group: each field that differs
 * between the runs (one configuration: the model). */
static void label_runs(step_run *s, int n, const zb_plot_inputs *in) {
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
        s[i].code = zb_plot_config(s[i].run, s[i].config, sizeof s[i].config);
        s[i].group[0] = '\0';
        for (int f = 0; f < N_FIELDS; f++) {
            if (!varies[f]) continue;
            char v[96], cut[96]; /* each field cut, so that every one has its place in the label */
            size_t used = strlen(s[i].group);
            field_text(&s[i], in, f, v, sizeof v);
            zb_plot_cut(v, 24, cut, sizeof cut);
            snprintf(s[i].group + used, sizeof s[i].group - used, "%s%s", used ? ", " : "", cut);
        }
        if (!s[i].group[0]) {
            char v[96];
            field_text(&s[i], in, 0, v, sizeof v);
            zb_plot_cut(v, 48, s[i].group, sizeof s[i].group);
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
            bool same = k > 0 && !strcmp(by[k - 1]->group, by[k]->group);
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

/* A group's label, wrapped to the characters its share of the axis holds.
 * Past what any label can use (a group narrower than 3 characters), the
 * groups are numbered instead, every k-th labelled. */
static void group_label(const bar_layout *l, const step_run *r, char *out, size_t n) {
    int width = (int)(AXIS_CHARS / (l->n_groups + 0.2)) - 1;
    if (width >= 3) {
        zb_plot_wrap(r->group, width, GROUP_LINES, out, n);
        return;
    }
    int every = 1;
    while ((double)AXIS_CHARS * every / (l->n_groups + 0.2) < 6) every++;
    if (r->group_no % every) snprintf(out, n, "%s", "");
    else snprintf(out, n, "%d", r->group_no + 1);
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
        if (s[i].file == r->file && s[i].code == r->code - 1 && !strcmp(s[i].group, r->group)) return &s[i];
    }
    return NULL;
}

bool zb_plot_build_steps(const zb_plot_inputs *in, zb_plot_out *out) {
    int n = 0;
    bool oom = false;
    step_run *s = step_runs(in, &n, &oom);
    if (!s) return fail(out, oom ? "out of memory" : "no step runs in the inputs");
    if (n > ZB_PLOT_MAX_BARS) return too_many_bars(s, n, out);
    label_runs(s, n, in);
    int n_groups = number_groups(s, n);
    zb_plot_text t;
    if (n_groups < 0 || !zb_plot_text_open(&t)) {
        free(s);
        return fail(out, "out of memory");
    }
    bar_layout l;
    layout_bars(s, n, n_groups, &l);
    fputs("# one row per step run: its bar's x, its group's x and label, its configuration (code: 3 * stage + 0 sync, "
          "1 prefetch, 2 other); then per panel (step time ms, overlap %, MFU %) the median over steps, its whisker's "
          "low and high end and the reference it is read against: on a prefetch bar paired with sync (--mode both), "
          "sync's median plus the paired interval of prefetch - sync that the step's verdict used (it crosses the "
          "reference, sync's median, exactly when the difference is not significant; MFU the same interval through "
          "MFU ~ 1 / step time); last, the reference's left end (the sync bar's x); NaN: not measured (no bar), no "
          "interval (no whisker)\n", t.f);
    fputs("\"x\" \"group_x\" \"group\" \"config\" \"step_ms\" \"step_lo\" \"step_hi\" \"step_ref\" \"overlap_pct\" "
          "\"overlap_lo\" \"overlap_hi\" \"overlap_ref\" \"mfu_pct\" \"mfu_lo\" \"mfu_hi\" \"mfu_ref\" \"ref_x0\"\n", t.f);
    int paired = 0, unpaired = 0, any_mfu = 0, glines = 1;
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
        char group[200];
        group_label(&l, &s[i], group, sizeof group);
        if (label_lines(group) > glines) glines = label_lines(group);
        zb_plot_put_str(t.f, group);
        fprintf(t.f, " %d", s[i].code);
        put_row(t.f, v, 13);
        fputc('\n', t.f);
    }
    free(s);
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
    snprintf(out->note, sizeof out->note, "%s%s%s", note1, note2[0] ? "; " : "", note2);
    /* The legend's rows above the panels: as many configurations a row as
     * the longest name (with its sample) fits across the figure. */
    int longest = 0, n_configs = 0;
    for (int c = 0; c < ZB_PLOT_CONFIG_CODES; c++) {
        if (l.slot_of[c] < 0) continue;
        n_configs++;
        int len = c == 10 ? 15 : 12; /* "ZeRO-3 prefetch"; the others at most "ZeRO-3 other" */
        if (len > longest) longest = len;
    }
    int per_row = (AXIS_CHARS + 6) / (longest + 7);
    int krows = (n_configs + per_row - 1) / per_row;
    snprintf(out->vars, sizeof out->vars,
             "note='%s'; note2='%s'; mfu=%d; configs='%s'; bw=%.4f; glines=%d; krows=%d", note1, note2,
             any_mfu ? 1 : 0, l.configs, l.width, glines, krows);
    return true;
}

/* The device's memory per rank from a run's hardware profile
 * (meta.config.hw), shared by device_sharing_ranks ranks: 0 with *why set
 * when the profile gives none (a CPU profile measures host memory). */
static double device_memory(const zb_plot_input *f, const json_t *run, char *name, size_t name_n, char *why,
                            size_t why_n) {
    const char *hw = zb_plot_str(json_object_get(json_object_get(f->doc, "meta"), "config"), "hw");
    char shown[64];
    zb_plot_cut(hw, 40, shown, sizeof shown);
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
    zb_plot_cut(p.name, 40, name, name_n);
    return sharing > 1 ? p.mem_bytes / sharing : p.mem_bytes;
}

/* True when every word of s is at most width characters. */
static bool words_fit(const char *s, int width) {
    int run = 0;
    for (const char *c = s;; c++) {
        if (!*c || *c == ' ') {
            if (run > width) return false;
            if (!*c) return true;
            run = 0;
        } else if (((unsigned char)*c & 0xC0) != 0x80) {
            run++;
        }
    }
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
        free(s);
        return fail(out, with_tags ? "the step runs' peak_mem_by_tag_bytes are all zero"
                                   : "no step runs with peak_mem_by_tag_bytes in the inputs");
    }
    label_runs(s, n, in);
    int n_groups = number_groups(s, n);
    if (n_groups < 0) {
        free(s);
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
        free(s);
        return fail(out, "out of memory");
    }
    if (!zb_plot_text_open(&ref)) {
        free(s);
        zb_plot_text_close(&t);
        free(t.buf);
        return fail(out, "out of memory");
    }
    fprintf(t.f, "# peak memory per rank (%s) by tag, one row per step run (host staging left out: host memory): its "
                 "bar's x, its group's x and label, its configuration (code and label); then each tag's top, the tags "
                 "stacked in the order of the columns\n", gib ? "GiB" : "MiB");
    fputs("\"x\" \"group_x\" \"group\" \"config\" \"bar\"", t.f);
    for (int k = 0; k < n_tags; k++) {
        char name[64];
        zb_plot_cut(tags[k], 24, name, sizeof name);
        for (char *c = name; *c; c++) *c = *c == '_' ? ' ' : *c;
        fputc(' ', t.f);
        zb_plot_put_str(t.f, name);
    }
    fputc('\n', t.f);
    /* A bar's label: its configuration, wrapped to the bar's share of the
     * axis, in the first of its shorter forms that fits whole. */
    int bar_chars = (int)(AXIS_CHARS * 1.1 * l.width / (n_groups + 0.2)), glines = 1; /* 5.5 pt: 1.1x the 6 pt characters */
    for (int i = 0; i < n; i++) {
        const json_t *by = json_object_get(json_object_get(s[i].run, "metrics"), "peak_mem_by_tag_bytes");
        char group[200], bar[96];
        group_label(&l, &s[i], group, sizeof group);
        short_config(&s[i], bar_chars, bar, sizeof bar);
        if (label_lines(group) > glines) glines = label_lines(group);
        fprintf(t.f, "%g %d ", bar_x(&l, &s[i]), s[i].group_no);
        zb_plot_put_str(t.f, group);
        fprintf(t.f, " %d ", s[i].code);
        zb_plot_put_str(t.f, bar);
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
    free(s);
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
    /* The legend's rows, outside the plot above it: as many entries a row as
     * the longest (with its sample) fits across the figure. */
    int longest = 0, entries = n_tags + drawn;
    for (int k = 0; k < n_tags; k++) {
        int len = (int)strlen(tags[k]) > 24 ? 24 : (int)strlen(tags[k]);
        if (len > longest) longest = len;
    }
    if (drawn && longest < 24) longest = 24; /* "device memory 74.5 GiB" or a profile's name */
    int per_row = (AXIS_CHARS + 6) / (longest + 6);
    if (per_row < 1) per_row = 1;
    int krows = (entries + per_row - 1) / per_row;
    char fills[3 * MAX_TAGS + 1] = "";
    for (int k = 0; k < n_tags; k++) {
        size_t used = strlen(fills);
        snprintf(fills + used, sizeof fills - used, "%s%d", k ? " " : "", order[k] < ZB_MEM_TAG_COUNT ? order[k] :
                 ZB_MEM_TAG_COUNT + k);
    }
    snprintf(out->vars, sizeof out->vars, "tags=%d; yunit='%s'; fills='%s'; bw=%.4f; glines=%d; krows=%d%s%s%s",
             n_tags, gib ? "GiB" : "MiB", fills, l.width, glines, krows, off[0] ? "; offscale='" : "", off, off[0] ? "'" : "");
    return true;
}
