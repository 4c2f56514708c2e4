/* The plot tool's bar figures over step runs (plot_steps.c: step time,
 * overlap and MFU; plot_memory.c: peak memory by tag), shared by both: the
 * step runs and their groups (plot_bar_runs.c), and the bars' layout and
 * labels (plot_bar_labels.c). Internal to those four files. */
#ifndef ZB_PLOT_BARS_H
#define ZB_PLOT_BARS_H

#include <stdbool.h>
#include <stdio.h>

#include "plot_series.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Between two neighbours' labels: about one character. */
#define LABEL_GAP 600
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

/* A bar figure draws one bar per step run: past this many, a one-column
 * figure shows nothing legible and gnuplot spends minutes drawing it
 * (50,000 runs: a PDF of hundreds of MB), so the figure is left out. */
#define ZB_PLOT_MAX_BARS 1000

/* The bars' layout: the configurations present, in their fixed order, one
 * slot each in every group; bar i's x is its group's number plus its
 * slot's offset. */
typedef struct bar_layout {
    int slot_of[ZB_PLOT_CONFIG_CODES]; /* -1: not present */
    int n_slots, n_groups;
    double width;     /* one bar's width (x units: a group is 1) */
    char configs[64]; /* the codes present, "7 9 10", for the scripts */
} bar_layout;

/* A group's label as its runs' rows carry it. */
#define GROUP_LABEL_N 1024
typedef struct group_text {
    char text[GROUP_LABEL_N];
} group_text;

/* plot_bar_runs.c: the step runs of every input (NULL when none, or out of
 * memory: *oom), freed by zb_plot_free_runs; each run's configuration and
 * group key (false: out of memory); the groups numbered in first-seen
 * order (their count, -1: out of memory); and the figure left out past
 * ZB_PLOT_MAX_BARS runs (frees s, sets out->why, returns false). */
step_run *zb_plot_step_runs(const zb_plot_inputs *in, int *n, bool *oom);
void zb_plot_free_runs(step_run *s, int n);
bool zb_plot_label_runs(step_run *s, int n, const zb_plot_inputs *in);
int zb_plot_number_groups(step_run *s, int n);
bool zb_plot_too_many_bars(step_run *s, int n, zb_plot_out *out);

/* plot_bar_labels.c: the bars' layout and a bar's x; every group's label
 * for an axis `axis` milli-em wide (NULL: out of memory; *numbered when
 * the groups are numbered instead); the comment lines naming numbered
 * groups; a configuration's legend name; a wrapped label's lines; a bar's
 * configuration label for its width. */
void zb_plot_layout_bars(const step_run *s, int n, int n_groups, bar_layout *l);
double zb_plot_bar_x(const bar_layout *l, const step_run *r);
group_text *zb_plot_group_labels(const step_run *s, int n, const bar_layout *l, int axis, bool *numbered);
void zb_plot_name_groups(FILE *f, const step_run *s, int n, int n_groups);
void zb_plot_config_name(int code, char *out, size_t n);
int zb_plot_label_lines(const char *s);
void zb_plot_short_config(const step_run *r, int width, char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
