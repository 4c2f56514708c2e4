/* The bar figures' layout and labels (plot_bars.h): one slot per
 * configuration present in every group, and every label wrapped to the
 * width its group or bar has on the axis, so no two overlap (groups
 * numbered where their names do not fit). */
#include <stdlib.h>
#include <string.h>

#include "plot_bars.h"

/* At most this many lines of a group's label. */
#define GROUP_LINES 3

void zb_plot_layout_bars(const step_run *s, int n, int n_groups, bar_layout *l) {
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

double zb_plot_bar_x(const bar_layout *l, const step_run *r) {
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

static int by_text(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every group's label (group_label), indexed by group number; NULL when
 * out of memory. Labels cut so far that two groups read alike (e.g.
 * "M1." for both M10 and M11) tell nothing apart: then every group is
 * numbered. */
group_text *zb_plot_group_labels(const step_run *s, int n, const bar_layout *l, int axis, bool *numbered) {
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

/* Where the groups are numbered, comment lines of the data file name each
 * (its fields whole but for control characters, each cut to 40 em). */
void zb_plot_name_groups(FILE *f, const step_run *s, int n, int n_groups) {
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
void zb_plot_config_name(int code, char *out, size_t n) {
    int stage = code / 3, kind = code % 3;
    char name[12];
    if (stage == 0) snprintf(name, sizeof name, "DDP");
    else snprintf(name, sizeof name, "ZeRO-%d", stage);
    snprintf(out, n, "%s%s", name, kind == 0 ? " sync" : kind == 1 ? (stage == 3 ? " prefetch" : "") : " other");
}

/* The lines of a wrapped label (zb_plot_wrap's \\n breaks). */
int zb_plot_label_lines(const char *s) {
    int n = 1;
    for (const char *c = strstr(s, "\\n"); c; c = strstr(c + 2, "\\n")) n++;
    return n;
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
void zb_plot_short_config(const step_run *r, int width, char *out, size_t n) {
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
