/* The plot tool's memory figure (plot.h): the peak memory per rank of each
 * step run by tag, as stacked bars, with the device's memory (its hardware
 * profile's) as a line. The bars are grouped and labelled as the step
 * figure's (plot_bars.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "plot_bars.h"
#include "profile.h"

/* The plot area of the memory figure in milli-em of its 6 pt tick text:
 * screen 0.15 to 0.98 of the canvas in memory.gp. */
#define AXIS_WIDTH ((int)(0.83 * ZB_PLOT_CANVAS_PT / 6 * 1000))

static bool fail(zb_plot_out *out, const char *why) {
    snprintf(out->why, sizeof out->why, "%s", why);
    return false;
}

/* True when run i is the first of its group. */
static bool first_of_group(const step_run *s, int i) {
    for (int k = 0; k < i; k++) {
        if (s[k].group_no == s[i].group_no) return false;
    }
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
    step_run *s = zb_plot_step_runs(in, &n, &oom);
    if (!s) return fail(out, oom ? "out of memory" : "no step runs in the inputs");
    if (n > ZB_PLOT_MAX_BARS) return zb_plot_too_many_bars(s, n, out);
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
        zb_plot_free_runs(s, n);
        return fail(out, with_tags ? "the step runs' peak_mem_by_tag_bytes are all zero"
                                   : "no step runs with peak_mem_by_tag_bytes in the inputs");
    }
    int n_groups = zb_plot_label_runs(s, n, in) ? zb_plot_number_groups(s, n) : -1;
    if (n_groups < 0) {
        zb_plot_free_runs(s, n);
        return fail(out, "out of memory");
    }
    bar_layout l;
    zb_plot_layout_bars(s, n, n_groups, &l);
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
        zb_plot_free_runs(s, n);
        return fail(out, "out of memory");
    }
    if (!zb_plot_text_open(&ref)) {
        zb_plot_free_runs(s, n);
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
    group_text *groups = zb_plot_group_labels(s, n, &l, axis, &numbered);
    if (!groups) {
        zb_plot_free_runs(s, n);
        zb_plot_text_close(&t);
        zb_plot_text_close(&ref);
        free(t.buf);
        free(ref.buf);
        return fail(out, "out of memory");
    }
    if (numbered) zb_plot_name_groups(t.f, s, n, n_groups);
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
        zb_plot_short_config(&s[i], bar_width, bar, sizeof bar);
        unlabelled += !bar[0];
        if (bar[0] && zb_plot_label_lines(bar) > blines) blines = zb_plot_label_lines(bar);
        if (zb_plot_label_lines(group) > glines) glines = zb_plot_label_lines(group);
        fprintf(t.f, "%g %d ", zb_plot_bar_x(&l, &s[i]), s[i].group_no);
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
            zb_plot_config_name(c, name, sizeof name);
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
    zb_plot_free_runs(s, n);
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
