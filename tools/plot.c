/* zerobench plot RESULTS.json... [TRACE.json] -o DIR: paper figures from
 * results files and a --trace file. For each figure kind (plot.h) whose
 * data the inputs hold, it writes DIR/<kind>.dat (and a second data file for
 * some kinds), then runs plots/<kind>.gp on it twice, for DIR/<kind>.pdf
 * (pdfcairo) and DIR/<kind>.png (pngcairo). A kind the inputs hold nothing
 * for gets one line saying why; nothing for any kind is bad input (exit 2).
 * Every data file's header holds the gnuplot command that rebuilds its
 * figure. Bad input (a file, a flag, -o DIR, gnuplot missing) is found
 * before anything is written; a gnuplot failure removes what this run
 * wrote (exit 1). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "escape.h"
#include "cleanup.h"
#include "out_path.h"
#include "parse.h"
#include "plot.h"
#include "plot_series.h"
#include "results.h"
#include "tool.h"

#define PATH_N 4096

static const zb_plot_kind kinds[] = {
    {"busbw", "bus bandwidth vs message size", zb_plot_build_busbw},
    {"gemm", "GEMM throughput vs size, with the peak", zb_plot_build_gemm},
    {"timeline", "one rank's step timeline, sync above prefetch", zb_plot_build_timeline},
    {"steps", "sync vs prefetch: step time, overlap, MFU", zb_plot_build_steps},
    {"memory", "peak memory by tag per mode and stage", zb_plot_build_memory},
    {"scaling", "step time and throughput over ranks", zb_plot_build_scaling},
    {"busbw_scaling", "bus bandwidth over ranks at the largest common size", zb_plot_build_busbw_scaling},
};

const zb_plot_kind *zb_plot_kind_at(int i) {
    return i >= 0 && i < (int)(sizeof kinds / sizeof kinds[0]) ? &kinds[i] : NULL;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: zerobench plot FILE... -o DIR [--rank R] [--scripts DIR]\n"
            "  FILE        results (--json, schema zerobench/1) or one --trace file (the timeline)\n"
            "  -o, --out   the folder for the figures (created when missing; its parent must exist)\n"
            "  --rank R    the timeline's rank (default 0)\n"
            "  --scripts   the gnuplot scripts' folder (default: $ZB_PLOTS, else the plots/ folder)\n"
            "figures, each DIR/KIND.pdf and DIR/KIND.png drawn by plots/KIND.gp from DIR/KIND.dat:\n");
    for (int i = 0; zb_plot_kind_at(i); i++) fprintf(f, "  %-13s %s\n", kinds[i].name, kinds[i].what);
    fprintf(f, "exit: 0 drawn; 1 gnuplot failed (nothing left behind); 2 bad input, gnuplot missing or nothing "
               "to plot\n");
}

static int bad(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static int bad(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "zerobench plot: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return 2;
}

/* The last error without its "(file:line)" tag. */
static const char *message(void) {
    static char buf[ZB_ERROR_MAX];
    return zb_error_text(buf, sizeof buf);
}

zb_status zb_plot_input_take(const char *path, json_t *d, zb_plot_input *in) {
    in->path = path;
    in->doc = NULL;
    in->is_trace = false;
    if (json_is_object(d) && json_is_array(json_object_get(d, "traceEvents"))) {
        in->doc = d;
        in->is_trace = true;
        return ZB_OK;
    }
    zb_status s = zb_results_check(path, d);
    if (s != ZB_OK) {
        json_decref(d);
        return s;
    }
    in->doc = d;
    return ZB_OK;
}

static zb_status load_input(const char *path, zb_plot_input *in) {
    json_t *d = NULL;
    in->path = path;
    in->doc = NULL;
    ZB_TRY(zb_results_read(path, &d)); /* read and parsed once, whichever it is */
    return zb_plot_input_take(path, d, in);
}

/* -o DIR: an existing writable folder, or a name whose parent is one. */
static zb_status check_out_dir(const char *dir, bool *exists) {
    char shown[72], parent[PATH_N];
    struct stat st;
    zb_results_shown_path(dir, shown);
    *exists = stat(dir, &st) == 0;
    if (*exists) {
        if (!S_ISDIR(st.st_mode)) return ZB_FAIL(ZB_ERR_INVALID, "-o '%s': not a folder", shown);
        if (access(dir, W_OK | X_OK) != 0) return ZB_FAIL(ZB_ERR_INVALID, "-o '%s': not writable", shown);
        return ZB_OK;
    }
    snprintf(parent, sizeof parent, "%s", dir);
    size_t n = strlen(parent);
    while (n > 1 && parent[n - 1] == '/') parent[--n] = '\0';
    char *slash = strrchr(parent, '/');
    if (!slash) strcpy(parent, ".");
    else if (slash == parent) slash[1] = '\0';
    else *slash = '\0';
    if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode) || access(parent, W_OK | X_OK) != 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "-o '%s': does not exist and its parent is not a writable folder", shown);
    }
    return ZB_OK;
}

/* A path as gnuplot must see it: a relative one gets "./" in front, so that
 * no path starts with '<' or '|', which gnuplot would open as a pipe to a
 * shell command. Written as a single-quoted gnuplot string (a quote
 * doubled): gnuplot substitutes `backquoted commands` everywhere except in
 * single quotes. */
static void gp_path(char *out, size_t n, const char *path) {
    size_t k = 0;
    if (k + 1 < n) out[k++] = '\'';
    if (path[0] != '/' && k + 3 < n) {
        out[k++] = '.';
        out[k++] = '/';
    }
    for (const char *s = path; *s && k + 3 < n; s++) {
        if (*s == '\'') out[k++] = '\'';
        out[k++] = *s;
    }
    if (k + 1 < n) out[k++] = '\'';
    out[k] = '\0';
}

/* `s` as one word of a POSIX shell command, for the rebuild lines a user
 * pastes: bare when every character is plain, in double quotes when none of
 * " $ ` \ ! is in it, else in single quotes (a quote becomes '\''). */
static void sh_word(char *out, size_t n, const char *s) {
    bool plain = s[0] != '\0', dq_ok = true;
    for (const char *c = s; *c; c++) {
        if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-", *c)) plain = false;
        if (strchr("\"$`\\!", *c)) dq_ok = false;
    }
    if (plain) {
        snprintf(out, n, "%s", s);
        return;
    }
    if (dq_ok) {
        snprintf(out, n, "\"%s\"", s);
        return;
    }
    size_t k = 0;
    if (k + 1 < n) out[k++] = '\'';
    for (const char *c = s; *c && k + 6 < n; c++) {
        if (*c == '\'') {
            memcpy(out + k, "'\\''", 4);
            k += 4;
        } else {
            out[k++] = *c;
        }
    }
    if (k + 1 < n) out[k++] = '\'';
    out[k] = '\0';
}

/* A flag's path must not hold control characters: they would break the
 * data files' one-line headers and the one-line messages. */
static zb_status check_plain_path(const char *flag, const char *path) {
    for (const char *c = path; *c; c++) {
        if ((unsigned char)*c < 0x20 || *c == 0x7f) {
            char shown[72];
            return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': control characters in a path are not accepted", flag,
                           zb_results_shown_path(path, shown));
        }
    }
    return ZB_OK;
}

/* Measured and simulated inputs are drawn apart, never in one figure: a
 * simulated figure's files are KIND_sim.*, and it is marked SIMULATED. */
enum { N_ORIGINS = 2 };

/* The stem of a figure's files: KIND, or KIND_sim for simulated data. */
static void figure_stem(const zb_plot_kind *k, int origin, char *out, size_t n) {
    snprintf(out, n, "%s%s", k->name, origin ? "_sim" : "");
}

/* The files of one figure in -o DIR, by their names there. */
static int kind_files(const char *stem, bool with_ref, char names[4][80]) {
    int n = 0;
    snprintf(names[n++], 80, "%s.dat", stem);
    if (with_ref) snprintf(names[n++], 80, "%s_ref.dat", stem);
    snprintf(names[n++], 80, "%s.pdf", stem);
    snprintf(names[n++], 80, "%s.png", stem);
    return n;
}

/* This run's staging folder, DIR/.zerobench-plot.XXXXXX: every file is
 * drawn there and moved into DIR only when every figure succeeded, so a
 * failed or killed run leaves DIR's earlier figures as they were. The
 * folder and each file in it are registered with cleanup.h, so SIGINT or
 * SIGTERM removes them. */
#define STAGE_MAX 64
typedef struct staging {
    char dir[PATH_N];
    int dir_slot;
    char names[STAGE_MAX][80];
    int slots[STAGE_MAX];
    int n;
} staging;

static zb_status stage_open(staging *g, const char *out_dir) {
    g->n = 0;
    g->dir_slot = -1;
    snprintf(g->dir, sizeof g->dir, "%s/.zerobench-plot.XXXXXX", out_dir);
    if (!mkdtemp(g->dir)) return ZB_FAIL(ZB_ERR_IO, "cannot create a staging folder in %s: %s", out_dir, strerror(errno));
    zb_status st = zb_cleanup_add(g->dir, true, &g->dir_slot);
    if (st != ZB_OK) rmdir(g->dir);
    return st;
}

/* Registers `name` in the staging folder; its path into `path`. */
static zb_status stage_add(staging *g, const char *name, char *path, size_t n) {
    if (g->n >= STAGE_MAX) return ZB_FAIL(ZB_ERR_INTERNAL, "plot: more than %d files staged", STAGE_MAX);
    snprintf(path, n, "%s/%s", g->dir, name);
    snprintf(g->names[g->n], sizeof g->names[0], "%s", name);
    ZB_TRY(zb_cleanup_add(path, false, &g->slots[g->n]));
    g->n++;
    return ZB_OK;
}

static void stage_discard(staging *g) {
    char path[PATH_N + 96];
    for (int i = 0; i < g->n; i++) {
        snprintf(path, sizeof path, "%s/%s", g->dir, g->names[i]);
        unlink(path);
        zb_cleanup_drop(g->slots[i]);
    }
    rmdir(g->dir);
    zb_cleanup_drop(g->dir_slot);
    g->n = 0;
}

/* Moves every staged file into out_dir with the cleanup signals held, so
 * that a SIGINT or SIGTERM cannot leave half the figures old and half new. */
static zb_status stage_commit(staging *g, const char *out_dir) {
    char from[PATH_N + 96], to[PATH_N + 96];
    zb_status st = ZB_OK;
    zb_cleanup_hold();
    for (int i = 0; i < g->n && st == ZB_OK; i++) {
        snprintf(from, sizeof from, "%s/%s", g->dir, g->names[i]);
        snprintf(to, sizeof to, "%s/%s", out_dir, g->names[i]);
        if (rename(from, to) != 0) st = ZB_FAIL(ZB_ERR_IO, "cannot move %s into %s: %s", g->names[i], out_dir, strerror(errno));
        else zb_cleanup_drop(g->slots[i]);
    }
    if (st != ZB_OK) stage_discard(g);
    else {
        rmdir(g->dir);
        zb_cleanup_drop(g->dir_slot);
        g->n = 0;
    }
    zb_cleanup_release();
    return st;
}

/* The data file: a header saying what it is, from what, and how to rebuild
 * the figure, then the builder's text. */
static char *data_text(const zb_plot_kind *k, const zb_plot_inputs *in, const char *vars_pdf, const char *vars_png,
                       const char *script, const char *body, size_t *len) {
    zb_plot_text t;
    if (!zb_plot_text_open(&t)) return NULL;
    fprintf(t.f, "# zerobench plot: %s (%s)\n# from:", k->name, k->what);
    for (int i = 0; i < in->n; i++) { /* one comment line, whatever the names hold */
        fputc(' ', t.f);
        zb_escape_fputs(in->files[i].path, t.f);
    }
    char w_pdf[PATH_N * 8], w_png[PATH_N * 8], w_script[PATH_N * 4];
    sh_word(w_pdf, sizeof w_pdf, vars_pdf);
    sh_word(w_png, sizeof w_png, vars_png);
    sh_word(w_script, sizeof w_script, script);
    fprintf(t.f, "\n# rebuild: gnuplot -e %s %s\n", w_pdf, w_script);
    fprintf(t.f, "#      and gnuplot -e %s %s\n", w_png, w_script);
    fputs(body, t.f);
    if (!zb_plot_text_close(&t)) return NULL;
    *len = t.len;
    return t.buf;
}

/* gnuplot's -e assignments: data (and ref), out, then the builder's vars. */
static void gp_vars(char *out, size_t n, const char *data, const char *ref, const char *fig, const char *extra) {
    char q_data[PATH_N * 2], q_ref[PATH_N * 2], q_fig[PATH_N * 2];
    gp_path(q_data, sizeof q_data, data);
    gp_path(q_fig, sizeof q_fig, fig);
    if (ref) gp_path(q_ref, sizeof q_ref, ref);
    snprintf(out, n, "data=%s; %s%s%sout=%s%s%s", q_data, ref ? "ref=" : "", ref ? q_ref : "", ref ? "; " : "", q_fig,
             extra[0] ? "; " : "", extra);
}

/* Writes one figure's data files and draws its PDF and PNG into the
 * staging folder; the data file's rebuild lines name the final paths in
 * `dir`. */
static zb_status draw(const zb_plot_kind *k, const char *stem, const zb_plot_inputs *in, zb_plot_out *o,
                      const char *dir, const char *scripts, staging *g) {
    char names[4][80], script[PATH_N], final_data[PATH_N], final_ref[PATH_N];
    int n_names = kind_files(stem, o->ref != NULL, names);
    snprintf(script, sizeof script, "%s%s/%s.gp", scripts[0] == '/' ? "" : "./", scripts, k->name);
    snprintf(final_data, sizeof final_data, "%s/%s", dir, names[0]);
    snprintf(final_ref, sizeof final_ref, "%s/%s", dir, names[1]);
    char staged[4][PATH_N + 96];
    for (int i = 0; i < n_names; i++) ZB_TRY(stage_add(g, names[i], staged[i], sizeof staged[i]));
    const char *fig_final[2], *fig_staged[2];
    char final_fig[2][PATH_N + 96];
    for (int i = 0; i < 2; i++) {
        snprintf(final_fig[i], sizeof final_fig[i], "%s/%s", dir, names[n_names - 2 + i]);
        fig_final[i] = final_fig[i];
        fig_staged[i] = staged[n_names - 2 + i];
    }
    char vars_doc[2][PATH_N * 6], vars_run[PATH_N * 6];
    for (int i = 0; i < 2; i++) {
        gp_vars(vars_doc[i], sizeof vars_doc[i], final_data, o->ref ? final_ref : NULL, fig_final[i], o->vars);
    }
    size_t len = 0;
    char *text = data_text(k, in, vars_doc[0], vars_doc[1], script, o->data, &len);
    if (!text) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory writing %s", names[0]);
    zb_status st = zb_atomic_write(staged[0], text, len);
    free(text);
    if (st == ZB_OK && o->ref) st = zb_atomic_write(staged[1], o->ref, o->ref_len);
    for (int i = 0; st == ZB_OK && i < 2; i++) {
        gp_vars(vars_run, sizeof vars_run, staged[0], o->ref ? staged[1] : NULL, fig_staged[i], o->vars);
        st = zb_plot_gnuplot_run(vars_run, script, 120.0);
        struct stat sb;
        if (st == ZB_OK && (stat(fig_staged[i], &sb) != 0 || sb.st_size == 0)) {
            st = ZB_FAIL(ZB_ERR_IO, "gnuplot wrote no %s for %s", i ? "png" : "pdf", k->name);
        }
    }
    return st;
}

/* One line per figure drawn, once it is in DIR. */
static void print_drawn(const char *stem, const zb_plot_out *o, const char *dir) {
    printf("%-17s %s/%s.pdf %s/%s.png (data %s/%s.dat", stem, dir, stem, dir, stem, dir, stem);
    if (o->ref) printf(", %s/%s_ref.dat", dir, stem);
    printf(")\n");
    if (o->note[0]) printf("%-17s note: %s\n", "", o->note);
}

static void free_out(zb_plot_out *o) {
    free(o->data);
    free(o->ref);
    memset(o, 0, sizeof *o);
}

typedef struct plot_args {
    const char *out_dir, *scripts;
    zb_plot_inputs in;
} plot_args;

static int parse(int argc, char **argv, plot_args *a) {
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        bool has_value = i + 1 < argc;
        if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(s, "-o") || !strcmp(s, "--out")) {
            if (!has_value) return bad("%s needs a folder", s);
            a->out_dir = argv[++i];
        } else if (!strcmp(s, "--scripts")) {
            if (!has_value) return bad("%s needs a folder", s);
            a->scripts = argv[++i];
        } else if (!strcmp(s, "--rank")) {
            int64_t r = 0;
            if (!has_value) return bad("%s needs a rank", s);
            if (zb_parse_int64(argv[++i], &r) != ZB_OK || r < 0 || r > 1000000) {
                return bad("--rank '%s': expected a rank, an integer >= 0", argv[i]);
            }
            a->in.rank = (int)r;
        } else if (s[0] == '-' && s[1]) {
            return bad("unknown option '%s' (accepted: -o/--out, --rank, --scripts, --help)", s);
        } else {
            a->in.files[a->in.n++].path = s;
        }
    }
    if (!a->out_dir || !a->out_dir[0]) return bad("%s", "no -o DIR given: the folder for the figures");
    if (a->in.n == 0) return bad("%s", "no input files (results JSON, or a --trace file for the timeline)");
    return -1;
}

/* -o DIR's files this run would write must not be its inputs, nor links,
 * folders or FIFOs (they are replaced by rename, never written through). */
static zb_status check_outputs(const zb_plot_inputs *in, zb_plot_out outs[][8], bool made[][8], const char *dir,
                               bool dir_exists) {
    zb_path_use *uses = (zb_path_use *)calloc((size_t)in->n + 4 * 8 * N_ORIGINS, sizeof *uses);
    char(*paths)[PATH_N + 96] = calloc(4 * 8 * N_ORIGINS, sizeof *paths);
    zb_status st = uses && paths ? ZB_OK : ZB_FAIL(ZB_ERR_NOMEM, "out of memory");
    int n = 0;
    for (int i = 0; st == ZB_OK && i < in->n; i++) uses[n++] = (zb_path_use){"input", in->files[i].path, false};
    int n_out = 0;
    for (int g = 0; g < N_ORIGINS; g++) {
        for (int k = 0; st == ZB_OK && zb_plot_kind_at(k); k++) {
            if (!made[g][k]) continue;
            char names[4][80], stem[64];
            figure_stem(zb_plot_kind_at(k), g, stem, sizeof stem);
            int m = kind_files(stem, outs[g][k].ref != NULL, names);
            for (int j = 0; j < m && st == ZB_OK; j++) {
                snprintf(paths[n_out], sizeof paths[0], "%s/%s", dir, names[j]);
                if (dir_exists) st = zb_out_path_check("-o", paths[n_out]);
                uses[n++] = (zb_path_use){"-o", paths[n_out++], true};
            }
        }
    }
    if (st == ZB_OK) st = zb_paths_distinct(uses, n);
    free(uses);
    free(paths);
    return st;
}

/* Creates -o DIR when missing. Another plot creating it at the same moment
 * is not an error: the folder is then there, not ours. */
static zb_status make_out_dir(const char *dir, bool *created) {
    *created = false;
    if (mkdir(dir, 0777) == 0) {
        *created = true;
        return ZB_OK;
    }
    struct stat st;
    if (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return ZB_OK;
    char shown[72];
    return ZB_FAIL(ZB_ERR_INVALID, "-o '%s': cannot create it: %s", zb_results_shown_path(dir, shown),
                   strerror(errno));
}

/* The mark a simulated figure carries: what made its data. Quote-free, for
 * the origin='...' gnuplot assignment. */
static void sim_mark(const zb_plot_inputs *in, char *out, size_t n) {
    const char *hw = "";
    for (int i = 0; i < in->n && !hw[0]; i++) {
        const json_t *meta = json_object_get(in->files[i].doc, "meta");
        hw = zb_plot_str(json_object_get(meta, "config"), "hw");
    }
    /* One line across the figure's top (6.5 pt): the profile's name cut to
     * what the rest leaves. */
    char cut[256], safe[256];
    int room = (int)(0.94 * ZB_PLOT_CANVAS_PT / 6.5 * 1000) - zb_plot_text_width("SIMULATED (sim backend, profile )");
    zb_plot_cut_middle(hw, room, cut, sizeof cut);
    zb_plot_gp_text(cut, safe, sizeof safe);
    if (safe[0]) snprintf(out, n, "SIMULATED (sim backend, profile %s)", safe);
    else snprintf(out, n, "SIMULATED (sim backend)");
}

static int plot_main(int argc, char **argv) {
    plot_args a;
    memset(&a, 0, sizeof a);
    a.in.files = (zb_plot_input *)calloc((size_t)argc, sizeof(zb_plot_input));
    if (!a.in.files) return bad("%s", "out of memory");
    int rc = parse(argc, argv, &a);
    if (rc >= 0) {
        free(a.in.files);
        return rc;
    }
    zb_plot_inputs *in = &a.in;
    int n_traces = 0;
    bool exists = false;
    char scripts[PATH_N];
    zb_status st = check_plain_path("-o", a.out_dir);
    if (st == ZB_OK && a.scripts) st = check_plain_path("--scripts", a.scripts);
    for (int i = 0; st == ZB_OK && i < in->n; i++) {
        st = load_input(in->files[i].path, &in->files[i]);
        if (st == ZB_OK && in->files[i].is_trace && ++n_traces > 1) {
            char shown[72];
            st = ZB_FAIL(ZB_ERR_INVALID, "'%s': a second trace file (the timeline takes one)",
                         zb_results_shown_path(in->files[i].path, shown));
        }
    }
    if (st == ZB_OK) st = check_out_dir(a.out_dir, &exists);
    if (st == ZB_OK) st = zb_plot_scripts_dir(a.scripts, scripts, sizeof scripts);
    if (st == ZB_OK) st = check_plain_path("the scripts folder", scripts);
    /* The inputs by origin: measured (0) and simulated (1), each drawn on
     * its own (a 2 ms CPU step beside a 16 s simulated one hides the CPU
     * bars). */
    zb_plot_inputs origin[N_ORIGINS];
    memset(origin, 0, sizeof origin);
    for (int g = 0; st == ZB_OK && g < N_ORIGINS; g++) {
        origin[g].files = (zb_plot_input *)calloc((size_t)in->n + 1, sizeof(zb_plot_input));
        origin[g].rank = in->rank;
        origin[g].simulated = g == 1;
        if (!origin[g].files) st = ZB_FAIL(ZB_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; st == ZB_OK && i < in->n; i++) {
        zb_plot_inputs *o = &origin[zb_plot_is_simulated(&in->files[i]) ? 1 : 0];
        o->files[o->n++] = in->files[i];
    }
    zb_plot_out outs[N_ORIGINS][8];
    memset(outs, 0, sizeof outs);
    bool made[N_ORIGINS][8];
    memset(made, 0, sizeof made);
    int n_made = 0;
    char whys[2048] = "";
    for (int g = 0; st == ZB_OK && g < N_ORIGINS; g++) {
        if (origin[g].n == 0) continue;
        char mark[320] = "";
        if (g == 1) sim_mark(&origin[g], mark, sizeof mark);
        for (int k = 0; zb_plot_kind_at(k); k++) {
            made[g][k] = kinds[k].build(&origin[g], &outs[g][k]);
            if (made[g][k]) {
                n_made++;
                size_t used = strlen(outs[g][k].vars);
                if (mark[0]) {
                    snprintf(outs[g][k].vars + used, sizeof outs[g][k].vars - used, "%sorigin='%s'", used ? "; " : "",
                             mark);
                }
            } else {
                char stem[64];
                figure_stem(&kinds[k], g, stem, sizeof stem);
                size_t used = strlen(whys);
                snprintf(whys + used, sizeof whys - used, "%s%s: %s", used ? "; " : "", stem, outs[g][k].why);
            }
        }
    }
    if (st == ZB_OK && n_made == 0) {
        st = ZB_FAIL(ZB_ERR_INVALID, "nothing to plot in the inputs (%s)", whys);
    }
    if (st == ZB_OK) st = check_outputs(in, outs, made, a.out_dir, exists);
    if (st == ZB_OK) st = zb_plot_gnuplot_check();
    bool created = false;
    if (st == ZB_OK && !exists) st = make_out_dir(a.out_dir, &created);
    if (st != ZB_OK) rc = 2;
    staging *g = rc < 0 ? (staging *)calloc(1, sizeof(staging)) : NULL;
    if (rc < 0 && !g) {
        st = ZB_FAIL(ZB_ERR_NOMEM, "out of memory");
        rc = 1;
    }
    if (rc < 0 && (st = stage_open(g, a.out_dir)) != ZB_OK) rc = 1;
    for (int o = 0; o < N_ORIGINS; o++) {
        for (int k = 0; rc < 0 && zb_plot_kind_at(k); k++) {
            char stem[64];
            figure_stem(&kinds[k], o, stem, sizeof stem);
            if (made[o][k] && (st = draw(&kinds[k], stem, &origin[o], &outs[o][k], a.out_dir, scripts, g)) != ZB_OK) {
                rc = 1;
            }
        }
    }
    if (rc < 0 && (st = stage_commit(g, a.out_dir)) != ZB_OK) rc = 1;
    if (rc < 0) {
        rc = 0;
        for (int k = 0; zb_plot_kind_at(k); k++) {
            for (int o = 0; o < N_ORIGINS; o++) {
                if (origin[o].n == 0) continue;
                char stem[64];
                figure_stem(&kinds[k], o, stem, sizeof stem);
                if (made[o][k]) print_drawn(stem, &outs[o][k], a.out_dir);
                else printf("%-17s not drawn: %s\n", stem, outs[o][k].why);
            }
        }
    }
    if (rc != 0) {
        fprintf(stderr, "zerobench plot: %s\n", message());
        if (g && g->n) stage_discard(g);
        else if (g && g->dir[0]) rmdir(g->dir);
        if (created) rmdir(a.out_dir);
    }
    free(g);
    for (int o = 0; o < N_ORIGINS; o++) {
        for (int k = 0; k < 8; k++) free_out(&outs[o][k]);
        free(origin[o].files);
    }
    for (int i = 0; i < in->n; i++) json_decref(in->files[i].doc);
    free(in->files);
    return rc;
}

const zb_tool zb_tool_plot = {"plot", "figures (PDF, PNG) from results and a trace, drawn by gnuplot", plot_main};
