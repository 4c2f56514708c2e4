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
#include "parse.h"
#include "plot.h"
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
    snprintf(buf, sizeof buf, "%s", zb_error_message());
    char *tag = strrchr(buf, '(');
    if (tag && tag > buf && tag[-1] == ' ' && buf[strlen(buf) - 1] == ')') tag[-1] = '\0';
    return buf;
}

/* A trace (an object with a "traceEvents" array) is taken as one; anything
 * else must be a results file. */
static zb_status load_input(const char *path, zb_plot_input *in) {
    in->path = path;
    in->doc = NULL;
    in->is_trace = false;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        json_t *d = json_load_file(path, 0, NULL);
        if (json_is_object(d) && json_is_array(json_object_get(d, "traceEvents"))) {
            in->doc = d;
            in->is_trace = true;
            return ZB_OK;
        }
        json_decref(d);
    }
    return zb_results_load(path, &in->doc);
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

/* A gnuplot single-quoted string: a quote is written twice. */
static void gp_string(char *out, size_t n, const char *s) {
    size_t k = 0;
    if (k + 1 < n) out[k++] = '\'';
    for (; *s && k + 3 < n; s++) {
        if (*s == '\'') out[k++] = '\'';
        out[k++] = *s;
    }
    if (k + 1 < n) out[k++] = '\'';
    out[k] = '\0';
}

/* What this run wrote, removed again when a later step fails. */
typedef struct written {
    char paths[64][PATH_N];
    int n;
} written;

static void forget_all(written *w) {
    for (int i = 0; i < w->n; i++) unlink(w->paths[i]);
    w->n = 0;
}

static zb_status write_file(written *w, const char *path, const char *text, size_t len) {
    ZB_TRY(zb_atomic_write(path, text, len));
    if (w->n < 64) snprintf(w->paths[w->n++], PATH_N, "%s", path);
    return ZB_OK;
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
        for (const char *c = in->files[i].path; *c; c++) fputc((unsigned char)*c < 0x20 ? '?' : *c, t.f);
    }
    fprintf(t.f, "\n# rebuild: gnuplot -e \"%s\" %s\n", vars_pdf, script);
    fprintf(t.f, "#      and gnuplot -e \"%s\" %s\n", vars_png, script);
    fputs(body, t.f);
    if (!zb_plot_text_close(&t)) return NULL;
    *len = t.len;
    return t.buf;
}

/* Writes one figure's data files and draws its PDF and PNG. */
static zb_status draw(const zb_plot_kind *k, const zb_plot_inputs *in, zb_plot_out *o, const char *dir,
                      const char *scripts, written *w) {
    char data[PATH_N], ref[PATH_N], script[PATH_N], q_data[PATH_N * 2], q_ref[PATH_N * 2];
    snprintf(data, sizeof data, "%s/%s.dat", dir, k->name);
    snprintf(ref, sizeof ref, "%s/%s_ref.dat", dir, k->name);
    snprintf(script, sizeof script, "%s/%s.gp", scripts, k->name);
    gp_string(q_data, sizeof q_data, data);
    gp_string(q_ref, sizeof q_ref, ref);
    char vars[3][PATH_N * 6];
    const char *ext[3] = {"pdf", "png", NULL};
    char final_out[2][PATH_N], tmp_out[2][PATH_N];
    for (int i = 0; i < 2; i++) {
        char q_out[PATH_N * 2], q_tmp[PATH_N * 2];
        snprintf(final_out[i], PATH_N, "%s/%s.%s", dir, k->name, ext[i]);
        snprintf(tmp_out[i], PATH_N, "%s/.%s.%ld.tmp.%s", dir, k->name, (long)getpid(), ext[i]);
        gp_string(q_out, sizeof q_out, final_out[i]);
        gp_string(q_tmp, sizeof q_tmp, tmp_out[i]);
        /* vars[i]: as documented (the final name); vars[2]: what runs now. */
        snprintf(vars[i], sizeof vars[i], "data=%s; %s%s%sout=%s", q_data, o->ref ? "ref=" : "", o->ref ? q_ref : "",
                 o->ref ? "; " : "", q_out);
        if (o->vars[0]) {
            size_t used = strlen(vars[i]);
            snprintf(vars[i] + used, sizeof vars[i] - used, "; %s", o->vars);
        }
    }
    size_t len = 0;
    char *text = data_text(k, in, vars[0], vars[1], script, o->data, &len);
    if (!text) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory writing %s", data);
    zb_status st = write_file(w, data, text, len);
    free(text);
    if (st == ZB_OK && o->ref) st = write_file(w, ref, o->ref, o->ref_len);
    for (int i = 0; st == ZB_OK && i < 2; i++) {
        char q_tmp[PATH_N * 2];
        gp_string(q_tmp, sizeof q_tmp, tmp_out[i]);
        snprintf(vars[2], sizeof vars[2], "data=%s; %s%s%sout=%s%s%s", q_data, o->ref ? "ref=" : "",
                 o->ref ? q_ref : "", o->ref ? "; " : "", q_tmp, o->vars[0] ? "; " : "", o->vars);
        st = zb_plot_gnuplot_run(vars[2], script, 120.0);
        struct stat sb;
        if (st == ZB_OK && (stat(tmp_out[i], &sb) != 0 || sb.st_size == 0)) {
            st = ZB_FAIL(ZB_ERR_IO, "gnuplot wrote no %s for %s", ext[i], k->name);
        }
        if (st == ZB_OK && rename(tmp_out[i], final_out[i]) != 0) {
            st = ZB_FAIL(ZB_ERR_IO, "cannot rename %s: %s", tmp_out[i], strerror(errno));
        }
        if (st != ZB_OK) unlink(tmp_out[i]);
        else if (w->n < 64) snprintf(w->paths[w->n++], PATH_N, "%s", final_out[i]);
    }
    if (st == ZB_OK) {
        printf("%-13s %s %s (data %s%s%s)\n", k->name, final_out[0], final_out[1], data, o->ref ? ", " : "",
               o->ref ? ref : "");
        if (o->note[0]) printf("%-13s note: %s\n", "", o->note);
    }
    return st;
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
    zb_status st = ZB_OK;
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
    zb_plot_out outs[8];
    memset(outs, 0, sizeof outs);
    bool made[8] = {false};
    int n_made = 0;
    char whys[1024] = "";
    for (int k = 0; st == ZB_OK && zb_plot_kind_at(k); k++) {
        made[k] = kinds[k].build(in, &outs[k]);
        if (made[k]) {
            n_made++;
        } else {
            size_t used = strlen(whys);
            snprintf(whys + used, sizeof whys - used, "%s%s: %s", used ? "; " : "", kinds[k].name, outs[k].why);
        }
    }
    if (st == ZB_OK && n_made == 0) {
        st = ZB_FAIL(ZB_ERR_INVALID, "nothing to plot in the inputs (%s)", whys);
    }
    if (st == ZB_OK) st = zb_plot_gnuplot_check();
    if (st == ZB_OK && !exists && mkdir(a.out_dir, 0777) != 0) {
        char shown[72];
        st = ZB_FAIL(ZB_ERR_INVALID, "-o '%s': cannot create it: %s", zb_results_shown_path(a.out_dir, shown),
                     strerror(errno));
    }
    bool created = st == ZB_OK && !exists;
    if (st != ZB_OK) rc = 2;
    written *w = (written *)calloc(1, sizeof(written));
    if (rc < 0 && !w) {
        st = ZB_FAIL(ZB_ERR_NOMEM, "out of memory");
        rc = 1;
    }
    for (int k = 0; rc < 0 && zb_plot_kind_at(k); k++) {
        if (!made[k]) {
            printf("%-13s not drawn: %s\n", kinds[k].name, outs[k].why);
            continue;
        }
        st = draw(&kinds[k], in, &outs[k], a.out_dir, scripts, w);
        if (st != ZB_OK) rc = 1;
    }
    if (rc < 0) rc = 0;
    if (rc != 0) {
        fprintf(stderr, "zerobench plot: %s\n", message());
        if (w) forget_all(w);
        if (created) rmdir(a.out_dir);
    }
    free(w);
    for (int k = 0; k < 8; k++) free_out(&outs[k]);
    for (int i = 0; i < in->n; i++) json_decref(in->files[i].doc);
    free(in->files);
    return rc;
}

const zb_tool zb_tool_plot = {"plot", "figures (PDF, PNG) from results and a trace, drawn by gnuplot", plot_main};
