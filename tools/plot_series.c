/* Reading results runs and writing series as gnuplot data (plot_series.h),
 * and the plot tool's text helpers (plot.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot_series.h"
#include "report.h"
#include "run_identity.h"

bool zb_plot_text_open(zb_plot_text *t) {
    t->buf = NULL;
    t->len = 0;
    t->f = open_memstream(&t->buf, &t->len);
    return t->f != NULL;
}

bool zb_plot_text_close(zb_plot_text *t) {
    bool ok = !ferror(t->f);
    if (fclose(t->f) != 0) ok = false;
    t->f = NULL;
    if (!ok) {
        free(t->buf);
        t->buf = NULL;
    }
    return ok && t->buf;
}

void zb_plot_put_num(FILE *f, double v) {
    char b[48];
    if (!isfinite(v)) {
        fputs("NaN", f);
        return;
    }
    zb_format_double(b, sizeof b, v);
    fputs(b, f);
}

void zb_plot_put_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) fputc(*s == '"' || (unsigned char)*s < 0x20 ? '\'' : *s, f);
    fputc('"', f);
}

double zb_plot_num(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

int zb_plot_int(const json_t *o, const char *key, int dflt) {
    double v = zb_plot_num(o, key);
    return isfinite(v) && v > -2147483648.0 && v < 2147483647.0 ? (int)v : dflt;
}

const char *zb_plot_str(const json_t *o, const char *key) {
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

double zb_plot_metric(const json_t *run, const char *key) { return zb_plot_num(json_object_get(run, "metrics"), key); }

bool zb_plot_is_step_run(const json_t *run) {
    const char *bench = zb_plot_str(run, "bench");
    return !strcmp(bench, "step") || !strcmp(bench, "scale");
}

void zb_plot_backend(const zb_plot_input *f, char *out, size_t n) {
    const json_t *meta = json_object_get(f->doc, "meta");
    const char *dev = zb_plot_str(meta, "backend"), *comm = zb_plot_str(meta, "comm");
    snprintf(out, n, "%s/%s", dev[0] ? dev : "?", comm[0] ? comm : "?");
}

size_t zb_plot_n_runs(const zb_plot_input *f) {
    return f->is_trace ? 0 : json_array_size(json_object_get(f->doc, "runs"));
}

const json_t *zb_plot_run(const zb_plot_input *f, size_t i) {
    return json_array_get(json_object_get(f->doc, "runs"), i);
}

bool zb_plot_is_simulated(const zb_plot_input *f) {
    if (f->is_trace) return zb_run_is_simulated(json_object_get(f->doc, "otherData"));
    if (zb_run_is_simulated(json_object_get(f->doc, "meta"))) return true;
    for (size_t i = 0; i < zb_plot_n_runs(f); i++) {
        if (zb_run_is_simulated(zb_plot_run(f, i))) return true;
    }
    return false;
}

int zb_plot_config(const json_t *run, char *out, size_t n) {
    int stage = zb_plot_int(run, "stage", 3);
    if (stage < 0 || stage > 3) stage = 3;
    const char *mode = zb_plot_str(run, "mode");
    int kind = !strcmp(mode, "sync") ? 0 : !strcmp(mode, "prefetch") ? 1 : 2;
    char name[16];
    if (stage == 0) snprintf(name, sizeof name, "DDP");
    else snprintf(name, sizeof name, "ZeRO-%d", stage);
    if (stage == 3 || kind == 0) snprintf(out, n, "%s %s", name, kind == 0 ? "sync" : mode);
    else if (kind == 1) snprintf(out, n, "%s", name);
    else snprintf(out, n, "%s %s", name, mode);
    return 3 * stage + kind;
}

/* UTF-8 characters in the first `len` bytes of s. */
static int chars_of(const char *s, size_t len) {
    int c = 0;
    for (size_t i = 0; i < len; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

/* The bytes of s's first `chars` UTF-8 characters (at most len). */
static size_t bytes_of(const char *s, size_t len, int chars) {
    size_t i = 0;
    for (int c = 0; i < len; i++) {
        if (((unsigned char)s[i] & 0xC0) != 0x80 && c++ == chars) break;
    }
    return i;
}

/* Appends len bytes of s to out (n bytes, used so far *k), a backslash
 * becoming '/' so that no \n of the input adds a line. */
static void put_bytes(char *out, size_t n, size_t *k, const char *s, size_t len) {
    for (size_t i = 0; i < len && *k + 1 < n; i++) out[(*k)++] = s[i] == '\\' ? '/' : s[i];
    out[*k] = '\0';
}

void zb_plot_cut(const char *s, int max_chars, char *out, size_t n) {
    size_t k = 0, len = strlen(s);
    if (n == 0) return;
    out[0] = '\0';
    if (chars_of(s, len) <= max_chars) {
        put_bytes(out, n, &k, s, len);
        return;
    }
    int keep = max_chars > 3 ? max_chars - 3 : max_chars;
    put_bytes(out, n, &k, s, bytes_of(s, len, keep));
    if (max_chars > 3) put_bytes(out, n, &k, "...", 3);
}

void zb_plot_wrap(const char *s, int width, int max_lines, char *out, size_t n) {
    size_t k = 0;
    if (n == 0) return;
    out[0] = '\0';
    if (width < 1) width = 1;
    if (max_lines < 1) max_lines = 1;
    int line = 0, col = 0; /* the current line and its length */
    const char *p = s;
    while (*p) {
        while (*p == ' ') p++;
        if (!*p) break;
        const char *w = p;
        while (*p && *p != ' ') p++;
        size_t wlen = (size_t)(p - w);
        int wchars = chars_of(w, wlen);
        /* A word after ", " starts a part ("2 ranks"): it joins the line
         * only when the whole part does, so lines break between parts. */
        int need = wchars;
        if (w > s + 1 && w[-1] == ' ' && w[-2] == ',') {
            const char *e = strstr(w, ", ");
            size_t plen = e ? (size_t)(e - w) + 1 : strlen(w);
            int pchars = chars_of(w, plen);
            if (pchars <= width) need = pchars;
        }
        bool fits = col == 0 ? wchars <= width : col + 1 + need <= width;
        if (!fits && col > 0) { /* a new line, or the end */
            if (line + 1 == max_lines) { /* no line left: "..." ends the last one */
                size_t start = k;
                while (start > 0 && !(start >= 2 && out[start - 2] == '\\' && out[start - 1] == 'n')) start--;
                int have = chars_of(out + start, k - start);
                if (have + 3 > width) {
                    k = start + bytes_of(out + start, k - start, width > 3 ? width - 3 : 0);
                }
                if (k > start && out[k - 1] == ',') k--;
                out[k] = '\0';
                put_bytes(out, n, &k, width >= 3 ? "..." : "", width >= 3 ? 3 : 0);
                return;
            }
            if (k > 0 && out[k - 1] == ',') k--; /* a comma ending a line goes */
            out[k] = '\0';
            if (k + 3 > n) return;
            out[k++] = '\\'; /* the line break, the one backslash the result holds */
            out[k++] = 'n';
            out[k] = '\0';
            line++;
            col = 0;
        }
        if (col > 0) {
            put_bytes(out, n, &k, " ", 1);
            col++;
        }
        if (wchars > width) { /* cut to width - 1 characters and a '.' */
            put_bytes(out, n, &k, w, bytes_of(w, wlen, width > 1 ? width - 1 : 1));
            if (width > 1) put_bytes(out, n, &k, ".", 1);
            col = width;
        } else {
            put_bytes(out, n, &k, w, wlen);
            col += wchars;
        }
    }
}

void zb_plot_gp_text(const char *s, char *out, size_t n) {
    size_t k = 0;
    if (n == 0) return;
    for (; *s && k + 1 < n; s++) {
        unsigned char c = (unsigned char)*s;
        out[k++] = (c < 0x20 || c == 0x7f || c == '\'' || c == '"' || c == '\\' || c == '`') ? ' ' : (char)c;
    }
    if (*s) { /* cut: a character cut in two goes whole */
        while (k > 0 && ((unsigned char)out[k - 1] & 0xC0) == 0x80) k--;
        if (k > 0 && ((unsigned char)out[k - 1] & 0xC0) == 0xC0) k--;
    }
    out[k] = '\0';
}

/* ---- the (file, label) index ------------------------------------------- */

static unsigned long series_hash(const char *label, int file) {
    unsigned long h = 2166136261u ^ (unsigned long)(unsigned)file; /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)label; *c; c++) h = (h ^ *c) * 16777619u;
    return h;
}

static void index_put(zb_plot_series_set *set, int i) {
    unsigned long mask = (unsigned long)set->index_cap - 1;
    unsigned long k = series_hash(set->s[i].label, set->s[i].file) & mask;
    while (set->index[k] >= 0) k = (k + 1) & mask;
    set->index[k] = i;
}

/* (Re)builds the index with room for `need` series; false when out of memory. */
static bool index_build(zb_plot_series_set *set, int need) {
    int cap = 16;
    while (cap < 2 * need) cap *= 2;
    int *slots = (int *)malloc((size_t)cap * sizeof *slots);
    if (!slots) return false;
    for (int k = 0; k < cap; k++) slots[k] = -1;
    free(set->index);
    set->index = slots;
    set->index_cap = cap;
    for (int i = 0; i < set->n; i++) index_put(set, i);
    return true;
}

int zb_plot_series_find(const zb_plot_series_set *set, const char *label, int file) {
    if (!set->index_cap) { /* no index (none built yet): a scan */
        for (int i = 0; i < set->n; i++) {
            if (!set->s[i].dropped && set->s[i].file == file && !strcmp(set->s[i].label, label)) return i;
        }
        return -1;
    }
    unsigned long mask = (unsigned long)set->index_cap - 1;
    for (unsigned long k = series_hash(label, file) & mask; set->index[k] >= 0; k = (k + 1) & mask) {
        const zb_plot_series *s = &set->s[set->index[k]];
        if (!s->dropped && s->file == file && !strcmp(s->label, label)) return set->index[k];
    }
    return -1;
}

zb_plot_series *zb_plot_series_get(zb_plot_series_set *set, const char *label, int file) {
    if (set->index_cap < 2 * (set->n + 1) && !index_build(set, set->n + 1)) {
        set->oom = true;
        return NULL;
    }
    int found = zb_plot_series_find(set, label, file);
    if (found >= 0) return &set->s[found];
    if (set->n == set->cap) {
        int cap = set->cap ? 2 * set->cap : 8;
        zb_plot_series *s = (zb_plot_series *)realloc(set->s, (size_t)cap * sizeof *s);
        if (!s) {
            set->oom = true;
            return NULL;
        }
        set->s = s;
        set->cap = cap;
    }
    zb_plot_series *s = &set->s[set->n++];
    memset(s, 0, sizeof *s);
    snprintf(s->label, sizeof s->label, "%s", label);
    s->file = file;
    index_put(set, set->n - 1);
    return s;
}

void zb_plot_series_add(zb_plot_series_set *set, zb_plot_series *s, zb_plot_point p) {
    if (!s) return;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        zb_plot_point *q = (zb_plot_point *)realloc(s->p, (size_t)cap * sizeof *q);
        if (!q) {
            set->oom = true;
            return;
        }
        s->p = q;
        s->cap = cap;
    }
    s->p[s->n++] = p;
}

void zb_plot_series_drop(zb_plot_series_set *set, int i) {
    free(set->s[i].p);
    set->s[i].p = NULL;
    set->s[i].n = set->s[i].cap = 0;
    set->s[i].dropped = true;
}

void zb_plot_series_compact(zb_plot_series_set *set) {
    int kept = 0;
    for (int i = 0; i < set->n; i++) {
        if (!set->s[i].dropped) set->s[kept++] = set->s[i];
    }
    set->n = kept;
    free(set->index); /* the indices moved: rebuilt by the next get */
    set->index = NULL;
    set->index_cap = 0;
}

static int by_x(const void *a, const void *b) {
    double x = ((const zb_plot_point *)a)->x, y = ((const zb_plot_point *)b)->x;
    return x < y ? -1 : x > y;
}

static int by_label(const void *a, const void *b) {
    return strcmp((*(const zb_plot_series *const *)a)->label, (*(const zb_plot_series *const *)b)->label);
}

/* shared[i]: another series has series i's label (sorted by label, so
 * O(S log S) rather than every pair); false when out of memory. */
static bool shared_labels(const zb_plot_series_set *set, bool *shared) {
    const zb_plot_series **by = (const zb_plot_series **)malloc(((size_t)set->n + 1) * sizeof *by);
    if (!by) return false;
    for (int i = 0; i < set->n; i++) by[i] = &set->s[i];
    qsort(by, (size_t)set->n, sizeof *by, by_label);
    for (int i = 1; i < set->n; i++) {
        if (strcmp(by[i - 1]->label, by[i]->label)) continue;
        shared[by[i - 1] - set->s] = shared[by[i] - set->s] = true;
    }
    free(by);
    return true;
}

void zb_plot_series_finish(zb_plot_series_set *set, const zb_plot_inputs *in) {
    bool *shared = (bool *)calloc((size_t)set->n + 1, sizeof(bool));
    for (int i = 0; i < set->n; i++) qsort(set->s[i].p, (size_t)set->s[i].n, sizeof(zb_plot_point), by_x);
    if (shared && !shared_labels(set, shared)) {
        free(shared);
        shared = NULL;
    }
    for (int i = 0; shared && i < set->n; i++) {
        if (!shared[i]) continue;
        const char *path = in->files[set->s[i].file].path, *base = strrchr(path, '/');
        size_t used = strlen(set->s[i].label);
        snprintf(set->s[i].label + used, sizeof set->s[i].label - used, " (%s)", base ? base + 1 : path);
    }
    free(shared);
    /* A legend entry longer than this would run past a column's width. */
    for (int i = 0; i < set->n; i++) {
        char cut[sizeof set->s[i].label];
        zb_plot_cut(set->s[i].label, ZB_PLOT_LEGEND_CHARS, cut, sizeof cut);
        memcpy(set->s[i].label, cut, sizeof cut);
    }
}

void zb_plot_series_write(const zb_plot_series_set *set, FILE *f, const char *const *cols, int n_cols) {
    for (int i = 0; i < set->n; i++) {
        const zb_plot_series *s = &set->s[i];
        if (i) fputs("\n\n", f);
        zb_plot_put_str(f, cols[0]);
        fputc(' ', f);
        zb_plot_put_str(f, s->label);
        for (int c = 2; c < n_cols; c++) {
            fputc(' ', f);
            zb_plot_put_str(f, cols[c]);
        }
        fputc('\n', f);
        for (int k = 0; k < s->n; k++) {
            double v[4] = {s->p[k].x, s->p[k].y, s->p[k].c3, s->p[k].c4};
            for (int c = 0; c < n_cols; c++) {
                if (c) fputc(' ', f);
                zb_plot_put_num(f, v[c]);
            }
            fputc('\n', f);
        }
    }
}

void zb_plot_series_free(zb_plot_series_set *set) {
    for (int i = 0; i < set->n; i++) free(set->s[i].p);
    free(set->s);
    free(set->index);
    memset(set, 0, sizeof *set);
}
