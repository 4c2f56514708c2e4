/* Helpers of the plot tool's figure builders (plot_data.c, plot_steps.c,
 * plot_memory.c, ...): reading results runs, labels sized to the figures'
 * font (plot_label.c), and series (a line of points under one label)
 * written as gnuplot data blocks (plot_series.c). */
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

/* Text widths. Every label is sized by what it measures in the figures'
 * font, "Sans" (DejaVu Sans here, fc-match), rather than by its count of
 * characters: a line of W's (1 em each) takes 1.6 times the room of the
 * average text. Widths are in thousandths of an em ("milli-em"): each
 * printable ASCII character its DejaVu Sans advance, rounded up, any other
 * character 1 em (wider than nearly all). The scripts draw at the nominal
 * sizes (style.gp), so a label of w milli-em at p pt is w * p / 1000 pt
 * of the 237.6 pt (3.3 in) canvas. */
#define ZB_PLOT_CANVAS_PT 237.6
/* Line styles plots/style.gp defines apart (colour, dash, point); the
 * 25th series takes the first's again. */
#define ZB_PLOT_LINE_STYLES 24
/* The width of s, its widest line where the two characters \n (a wrapped
 * label's break) split it. */
int zb_plot_text_width(const char *s);

/* `s` as a label of at most max_lines lines, each at most `width` milli-em
 * wide, for a data file: lines broken at ", " and spaces and joined by the
 * two characters \n (gnuplot's line break in a quoted string); a word wider
 * than the line keeps its start and end, "..." between (on a line too
 * narrow for that, its start and a '.'); text past the last line ends it
 * in "...". An input's backslash becomes '/', so the breaks are the result's
 * only backslashes. The result never holds more than max_lines lines
 * wider than width. */
void zb_plot_wrap(const char *s, int width, int max_lines, char *out, size_t n);

/* `s` cut to at most max_width milli-em ("..." ending a cut one), a
 * backslash becoming '/'. */
void zb_plot_cut(const char *s, int max_width, char *out, size_t n);
/* The same, cut in the middle: its start, "...", its end (what tells two
 * long names apart is as often at their end: "..._variant_B, 8 ranks"). */
void zb_plot_cut_middle(const char *s, int max_width, char *out, size_t n);

/* A legend (a gnuplot key) laid out by its entries' widths: gnuplot sizes
 * a key's columns at about 0.64 em a character (its font's h_char), too
 * narrow for wide text, so the key is given `width_fix` (set key width)
 * to make every column as wide as its widest entry, and the columns and
 * rows that then fit `room` milli-em of the key's font. Start from {0},
 * zb_plot_key_add each entry, then zb_plot_key_layout. */
typedef struct zb_plot_key {
    int n, widest, most;       /* entries, the widest (milli-em), the most characters */
    int cols, rows, width_fix; /* the layout */
} zb_plot_key;
void zb_plot_key_add(zb_plot_key *k, const char *entry);
/* `samplen`: the key's samplen (the sample's length in h_char). */
void zb_plot_key_layout(zb_plot_key *k, int room, double samplen);

/* `s` for a gnuplot -e assignment's single-quoted string: quotes,
 * backslashes, backquotes and control characters become spaces, at most
 * n - 1 bytes (cut at a UTF-8 boundary). */
void zb_plot_gp_text(const char *s, char *out, size_t n);

/* One point of a series: x, y and up to two more columns. */
typedef struct zb_plot_point {
    double x, y, c3, c4;
} zb_plot_point;

typedef struct zb_plot_series {
    char *key;       /* what the series is, in full (its identity: never cut) */
    char label[160]; /* its legend entry: the key, cut to fit at zb_plot_series_finish */
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

/* The series with this key from this file, made when new (NULL: out of
 * memory, set->oom). The key is an input's fields in full, however long:
 * two series whose keys differ anywhere stay two series (their labels,
 * cut to fit a legend, are told apart at zb_plot_series_finish). */
zb_plot_series *zb_plot_series_get(zb_plot_series_set *set, const char *key, int file);
/* The same, the key formatted as printf does. */
zb_plot_series *zb_plot_series_getf(zb_plot_series_set *set, int file, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The index of the series with this key from this file, -1 when none. */
int zb_plot_series_find(const zb_plot_series_set *set, const char *key, int file);
/* Marks series i for removal (its points freed at once); the marked ones
 * go in one pass at zb_plot_series_compact, the others keeping their order,
 * so dropping many of S series costs O(S), not O(S^2). */
void zb_plot_series_drop(zb_plot_series_set *set, int i);
void zb_plot_series_compact(zb_plot_series_set *set);
void zb_plot_series_add(zb_plot_series_set *set, zb_plot_series *s, zb_plot_point p);
/* The widest legend entry, in milli-em of the legend's 6 pt (about 47
 * characters of average text): with its sample and gaps, as gnuplot sizes
 * a key's column, one column across a line figure's plot area (about 33
 * em of the canvas' 39.6). */
#define ZB_PLOT_LEGEND_WIDTH 28000

/* Sorts every series by x, appends " (FILE)" to labels whose key two
 * inputs' series share, cuts every label to ZB_PLOT_LEGEND_WIDTH in the
 * middle (zb_plot_cut_middle), and then tells apart labels that the cut
 * made alike: each shows its key's start and the part where it differs
 * from the others ("allgather cpu_...W...dt3 ...W, 4 ranks"), and any
 * still alike a number (" #2"). No two legend entries read the same. */
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
