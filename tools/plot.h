/* The plot tool's parts (tools/plot*.c), shared among them: the inputs as
 * loaded, the figure kinds, and what building one figure's data gives.
 *
 * Each figure kind is one gnuplot script, plots/<kind>.gp, that reads one
 * data file (and, for some kinds, a second one: `ref`) and writes `out`,
 * a PDF or a PNG by the name's ending. The C side only writes data files
 * and runs the scripts; everything drawn is in the scripts. */
#ifndef ZB_PLOT_H
#define ZB_PLOT_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One input file: a results document (zerobench/1) or a Chrome trace. */
typedef struct zb_plot_input {
    const char *path;
    json_t *doc;
    bool is_trace;
} zb_plot_input;

/* Takes parsed document d as input `path`: a trace (an object with a
 * "traceEvents" array) is taken as one; anything else must pass
 * zb_results_check. On ZB_OK in->doc owns d; otherwise d is freed. */
zb_status zb_plot_input_take(const char *path, json_t *d, zb_plot_input *in);

typedef struct zb_plot_inputs {
    zb_plot_input *files;
    int n;
    int rank; /* --rank: the timeline's rank */
    bool simulated; /* the files hold simulated data (plot draws them apart) */
} zb_plot_inputs;

/* What a figure builder produces. `data` is the data file's text, `ref` the
 * second file's (NULL: the figure has none), `vars` extra gnuplot
 * assignments (e.g. "yunit='GFLOP/s'; "), each value free of quotes.
 * `why` (when the builder returns false): one line saying why the inputs
 * hold nothing this figure can use. `note`: an optional line to print with
 * the figure (e.g. a reference line left out and why). */
typedef struct zb_plot_out {
    char *data;
    size_t data_len;
    char *ref;
    size_t ref_len;
    char vars[2048];
    char why[256];
    char note[256];
} zb_plot_out;

/* A figure kind: its name (the script's and the files' stem), what it
 * shows, and its builder (true: data made; false: out->why set; a builder
 * that runs out of memory returns false with why saying so). */
typedef struct zb_plot_kind {
    const char *name;
    const char *what;
    bool (*build)(const zb_plot_inputs *in, zb_plot_out *out);
} zb_plot_kind;

/* The figure kinds in the order they are made. */
const zb_plot_kind *zb_plot_kind_at(int i);

/* Builders (plot_data.c, plot_timeline.c, plot_steps.c, plot_memory.c). */
bool zb_plot_build_busbw(const zb_plot_inputs *in, zb_plot_out *out);
bool zb_plot_build_gemm(const zb_plot_inputs *in, zb_plot_out *out);
bool zb_plot_build_timeline(const zb_plot_inputs *in, zb_plot_out *out);
bool zb_plot_build_steps(const zb_plot_inputs *in, zb_plot_out *out);
bool zb_plot_build_memory(const zb_plot_inputs *in, zb_plot_out *out);
bool zb_plot_build_scaling(const zb_plot_inputs *in, zb_plot_out *out);
bool zb_plot_build_busbw_scaling(const zb_plot_inputs *in, zb_plot_out *out);

/* A text buffer growing as it is written (open_memstream). */
typedef struct zb_plot_text {
    FILE *f;
    char *buf;
    size_t len;
} zb_plot_text;

bool zb_plot_text_open(zb_plot_text *t);
/* Closes the stream; the text is then t->buf (NUL-terminated, malloc'ed;
 * the caller frees it), t->len long. False when out of memory. */
bool zb_plot_text_close(zb_plot_text *t);

/* A number for a data file: shortest exact form, "NaN" when not finite
 * (gnuplot skips such points). */
void zb_plot_put_num(FILE *f, double v);
/* A string for a data file, double-quoted, with quotes and control
 * characters replaced so that gnuplot reads it as one column, and every
 * backslash a '/' (gnuplot reads escapes in a data file's quoted strings:
 * an input's "\n" would break the line, "\042" make a quote). */
void zb_plot_put_str(FILE *f, const char *s);
/* A label made by zb_plot_wrap, whose only backslashes are its line
 * breaks: written as zb_plot_put_str does, the breaks kept. */
void zb_plot_put_wrapped(FILE *f, const char *s);

/* Running gnuplot (plot_gnuplot.c). */

/* The scripts folder: `flag` (--scripts) when given, else $ZB_PLOTS, else
 * the compiled-in source folder, else <prefix>/share/zerobench/plots next
 * to this executable. ZB_ERR_INVALID naming where it looked when the folder
 * has no busbw.gp. */
zb_status zb_plot_scripts_dir(const char *flag, char *out, size_t n);
/* Checks that gnuplot runs and has the pdfcairo and pngcairo terminals:
 * ZB_ERR_INVALID with the Debian package to install otherwise. */
zb_status zb_plot_gnuplot_check(void);
/* Runs `gnuplot -e VARS SCRIPT`, at most timeout_s seconds; ZB_ERR_IO with
 * gnuplot's last message line when it fails. */
zb_status zb_plot_gnuplot_run(const char *vars, const char *script, double timeout_s);

#ifdef __cplusplus
}
#endif
#endif
