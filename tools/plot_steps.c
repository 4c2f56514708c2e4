/* The plot tool's step figure (plot.h): step time, overlap and MFU per
 * configuration (ZeRO-2, ZeRO-3 sync, ZeRO-3 prefetch, ...: zb_plot_config,
 * one fill each, in one order in every figure), with the paired interval
 * the step's verdict used as the prefetch bar's whisker. Runs are grouped
 * by what differs between them besides the configuration (ranks, model,
 * ...: plot_bar_runs.c), their labels wrapped to fit (plot_bar_labels.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot_bars.h"

/* The plot area of the step figure in milli-em of its 6 pt tick text:
 * screen 0.17 to 0.98 of the canvas in steps.gp (its step times take five
 * digits). */
#define STEPS_AXIS ((int)(0.81 * ZB_PLOT_CANVAS_PT / 6 * 1000))

static bool fail(zb_plot_out *out, const char *why) {
    snprintf(out->why, sizeof out->why, "%s", why);
    return false;
}

static void put_row(FILE *f, const double *v, int n) {
    for (int i = 0; i < n; i++) {
        fputc(' ', f);
        zb_plot_put_num(f, v[i]);
    }
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
    step_run *s = zb_plot_step_runs(in, &n, &oom);
    if (!s) return fail(out, oom ? "out of memory" : "no step runs in the inputs");
    if (n > ZB_PLOT_MAX_BARS) return zb_plot_too_many_bars(s, n, out);
    int n_groups = zb_plot_label_runs(s, n, in) ? zb_plot_number_groups(s, n) : -1;
    zb_plot_text t;
    if (n_groups < 0 || !zb_plot_text_open(&t)) {
        zb_plot_free_runs(s, n);
        return fail(out, "out of memory");
    }
    bar_layout l;
    zb_plot_layout_bars(s, n, n_groups, &l);
    bool numbered = false;
    group_text *groups = zb_plot_group_labels(s, n, &l, STEPS_AXIS, &numbered);
    if (!groups) {
        zb_plot_free_runs(s, n);
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
    if (numbered) zb_plot_name_groups(t.f, s, n, n_groups);
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
            v[12] = zb_plot_bar_x(&l, sync);
            double lv = zb_plot_num(pm, "ci_level");
            level = first_level || lv == level ? lv : NAN;
            first_level = false;
            paired++;
        } else if (s[i].code % 3 == 1) {
            unpaired++;
        }
        any_mfu += isfinite(mfu);
        fprintf(t.f, "%g %d ", zb_plot_bar_x(&l, &s[i]), s[i].group_no);
        const char *group = groups[s[i].group_no].text; /* xtic: one label a place */
        if (zb_plot_label_lines(group) > glines) glines = zb_plot_label_lines(group);
        zb_plot_put_wrapped(t.f, group);
        fprintf(t.f, " %d", s[i].code);
        for (int p = 0; p < 3; p++) whisk[p] += isfinite(v[4 * p + 1]) && isfinite(v[4 * p + 2]);
        put_row(t.f, v, 13);
        fputc('\n', t.f);
    }
    zb_plot_free_runs(s, n);
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
        zb_plot_config_name(c, name, sizeof name);
        zb_plot_key_add(&key, name);
    }
    zb_plot_key_layout(&key, STEPS_AXIS, 1.5);
    snprintf(out->vars, sizeof out->vars,
             "note='%s'; note2='%s'; mfu=%d; configs='%s'; bw=%.4f; glines=%d; krows=%d; kcols=%d; kw=%d; "
             "whisk='%d %d %d'", note1, note2, any_mfu ? 1 : 0, l.configs, l.width, glines, key.rows, key.cols,
             key.width_fix, whisk[0], whisk[1], whisk[2]);
    return true;
}
