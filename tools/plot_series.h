/* Helpers of the plot tool's figure builders (plot_data.c, plot_steps.c):
 * reading results runs, and series (a line of points under one label)
 * written as gnuplot data blocks. */
#ifndef ZB_PLOT_SERIES_H
#define ZB_PLOT_SERIES_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "plot.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A number field of `o`, NaN when missing, null or not a number. */
double zb_plot_num(const json_t *o, const char *key);
/* An integer field of `o` (a number within int range, truncated), `dflt`
 * otherwise. */
int zb_plot_int(const json_t *o, const char *key, int dflt);
/* A string field of `o`, "" when missing. */
const char *zb_plot_str(const json_t *o, const char *key);
/* A run's metric (o.metrics.key), NaN when not measured. */
double zb_plot_metric(const json_t *run, const char *key);
/* A run of training steps: the step benchmark's, or one cell of `scale`
 * (the same step metrics, one per node count and configuration). */
bool zb_plot_is_step_run(const json_t *run);
/* "cpu/mpi": the file's device and comm backends. */
void zb_plot_backend(const zb_plot_input *f, char *out, size_t n);
/* A file's runs (an empty array's worth for a trace). */
size_t zb_plot_n_runs(const zb_plot_input *f);
const json_t *zb_plot_run(const zb_plot_input *f, size_t i);

/* True when the input holds simulated data: a results file whose meta or
 * any run says "simulated", a trace whose otherData does. plot draws such
 * inputs apart from measured ones (KIND_sim figures, marked SIMULATED). */
bool zb_plot_is_simulated(const zb_plot_input *f);

/* A step run's configuration as the scale table names it, into out, and its
 * place in the fixed order every figure uses (its legend order, fill and
 * line type): "ZeRO-3 sync", "ZeRO-3 prefetch" at stage 3; "ZeRO-S" (its
 * reductions overlapped, mode prefetch) and "ZeRO-S sync" below; another
 * mode "ZeRO-S MODE"; stage 0 is "DDP" ("DDP sync"). Code 3 * stage + (0 sync, 1 prefetch, 2 other);
 * ZB_PLOT_CONFIG_CODES bounds it. */
#define ZB_PLOT_CONFIG_CODES 12
int zb_plot_config(const json_t *run, char *out, size_t n);

/* `s` as a label of at most max_lines lines of at most `width` characters
 * (UTF-8 characters, not bytes), for a data file: lines broken at ", " and
 * spaces and joined by the two characters \n (gnuplot's line break in a
 * quoted string); a word longer than the line is cut to width - 1
 * characters and a '.'; text past the last line ends it in "...". The
 * result never holds more than max_lines lines of width characters. */
void zb_plot_wrap(const char *s, int width, int max_lines, char *out, size_t n);

/* `s` cut to at most max_chars UTF-8 characters ("..." ending a cut one). */
void zb_plot_cut(const char *s, int max_chars, char *out, size_t n);

/* `s` for a gnuplot -e assignment's single-quoted string: quotes,
 * backslashes, backquotes and control characters become spaces, at most
 * n - 1 bytes (cut at a UTF-8 boundary). */
void zb_plot_gp_text(const char *s, char *out, size_t n);

/* One point of a series: x, y and up to two more columns. */
typedef struct zb_plot_point {
    double x, y, c3, c4;
} zb_plot_point;

typedef struct zb_plot_series {
    char label[160];
    int file; /* the input it came from; a label two files share gets the file's name */
    bool dropped; /* zb_plot_series_drop'ed, gone at zb_plot_series_compact */
    zb_plot_point *p;
    int n, cap;
} zb_plot_series;

typedef struct zb_plot_series_set {
    zb_plot_series *s;
    int n, cap;
    bool oom;
    int *index;    /* hash of (file, label) -> series, so a run finds its series in O(1) */
    int index_cap; /* a power of two, over twice n; 0: no index yet */
} zb_plot_series_set;

/* The series with this label from this file, made when new (NULL: out of
 * memory, set->oom). */
zb_plot_series *zb_plot_series_get(zb_plot_series_set *set, const char *label, int file);
/* The index of the series with this label from this file, -1 when none. */
int zb_plot_series_find(const zb_plot_series_set *set, const char *label, int file);
/* Marks series i for removal (its points freed at once); the marked ones
 * go in one pass at zb_plot_series_compact, the others keeping their order,
 * so dropping many of S series costs O(S), not O(S^2). */
void zb_plot_series_drop(zb_plot_series_set *set, int i);
void zb_plot_series_compact(zb_plot_series_set *set);
void zb_plot_series_add(zb_plot_series_set *set, zb_plot_series *s, zb_plot_point p);
/* The longest legend entry, in characters (a one-column figure's width). */
#define ZB_PLOT_LEGEND_CHARS 56

/* Sorts every series by x, appends " (FILE)" to labels that two inputs'
 * series share and cuts every label to ZB_PLOT_LEGEND_CHARS ("..."). */
void zb_plot_series_finish(zb_plot_series_set *set, const zb_plot_inputs *in);
/* Writes the series as data blocks (two blank lines apart), each headed by
 * a row of column names whose second is the series' label (gnuplot's
 * `title columnheader(2)`); `cols` names the columns (2 to 4). */
void zb_plot_series_write(const zb_plot_series_set *set, FILE *f, const char *const *cols, int n_cols);
void zb_plot_series_free(zb_plot_series_set *set);

#ifdef __cplusplus
}
#endif
#endif
