/* Reading results runs and writing series as gnuplot data (plot_series.h),
 * and the plot tool's data-file text (plot.h); the labels' widths, cuts
 * and wraps are plot_label.c's. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_label.h"
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

/* A character of a data file's quoted string: quotes and control
 * characters become a single quote, a backslash '/'. */
static int data_char(char c) {
    return c == '"' || (unsigned char)c < 0x20 || c == 0x7f ? '\'' : c == '\\' ? '/' : c;
}

void zb_plot_put_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) fputc(data_char(*s), f);
    fputc('"', f);
}

void zb_plot_put_wrapped(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (s[0] == '\\' && s[1] == 'n') {
            fputs("\\n", f);
            s++;
        } else {
            fputc(data_char(*s), f);
        }
    }
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

/* ---- the (file, label) index ------------------------------------------- */

static unsigned long series_hash(const char *key, int file) {
    unsigned long h = 2166136261u ^ (unsigned long)(unsigned)file; /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)key; *c; c++) h = (h ^ *c) * 16777619u;
    return h;
}

static void index_put(zb_plot_series_set *set, int i) {
    unsigned long mask = (unsigned long)set->index_cap - 1;
    unsigned long k = series_hash(set->s[i].key, set->s[i].file) & mask;
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

int zb_plot_series_find(const zb_plot_series_set *set, const char *key, int file) {
    if (!set->index_cap) { /* no index (none built yet): a scan */
        for (int i = 0; i < set->n; i++) {
            if (!set->s[i].dropped && set->s[i].file == file && !strcmp(set->s[i].key, key)) return i;
        }
        return -1;
    }
    unsigned long mask = (unsigned long)set->index_cap - 1;
    for (unsigned long k = series_hash(key, file) & mask; set->index[k] >= 0; k = (k + 1) & mask) {
        const zb_plot_series *s = &set->s[set->index[k]];
        if (!s->dropped && s->file == file && !strcmp(s->key, key)) return set->index[k];
    }
    return -1;
}

zb_plot_series *zb_plot_series_get(zb_plot_series_set *set, const char *key, int file) {
    if (set->index_cap < 2 * (set->n + 1) && !index_build(set, set->n + 1)) {
        set->oom = true;
        return NULL;
    }
    int found = zb_plot_series_find(set, key, file);
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
    char *copy = strdup(key);
    if (!copy) {
        set->oom = true;
        return NULL;
    }
    zb_plot_series *s = &set->s[set->n++];
    memset(s, 0, sizeof *s);
    s->key = copy;
    /* Both ends kept: what tells series apart is as often at the key's end. */
    zb_plot_cut_middle(key, ZB_PLOT_LEGEND_WIDTH, s->label, sizeof s->label);
    s->file = file;
    index_put(set, set->n - 1);
    return s;
}

zb_plot_series *zb_plot_series_getf(zb_plot_series_set *set, int file, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *key = len >= 0 ? (char *)malloc((size_t)len + 1) : NULL;
    if (!key) {
        set->oom = true;
        return NULL;
    }
    va_start(ap, fmt);
    vsnprintf(key, (size_t)len + 1, fmt, ap);
    va_end(ap);
    zb_plot_series *s = zb_plot_series_get(set, key, file);
    free(key);
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
        if (set->s[i].dropped) {
            free(set->s[i].key); /* kept till now: the index still hashes it */
        } else {
            set->s[kept++] = set->s[i];
        }
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

static int by_key(const void *a, const void *b) {
    return strcmp((*(const zb_plot_series *const *)a)->key, (*(const zb_plot_series *const *)b)->key);
}

static int by_label(const void *a, const void *b) {
    int c = strcmp((*(const zb_plot_series *const *)a)->label, (*(const zb_plot_series *const *)b)->label);
    return c ? c : by_key(a, b);
}

/* shared[i]: another series (another input's) has series i's key (sorted
 * by key, so O(S log S) rather than every pair); false when out of memory. */
static bool shared_keys(const zb_plot_series_set *set, bool *shared) {
    const zb_plot_series **by = (const zb_plot_series **)malloc(((size_t)set->n + 1) * sizeof *by);
    if (!by) return false;
    for (int i = 0; i < set->n; i++) by[i] = &set->s[i];
    qsort(by, (size_t)set->n, sizeof *by, by_key);
    for (int i = 1; i < set->n; i++) {
        if (strcmp(by[i - 1]->key, by[i]->key)) continue;
        shared[by[i - 1] - set->s] = shared[by[i] - set->s] = true;
    }
    free(by);
    return true;
}

/* The length of the common start of a and b. */
static size_t common_start(const char *a, const char *b) {
    size_t k = 0;
    while (a[k] && a[k] == b[k]) k++;
    return k;
}

/* The start of the word that holds byte `at` of s, and the end of the
 * word after it (two words: "4 ranks", "dt3 float"). */
static size_t word_start(const char *s, size_t at) {
    while (at > 0 && s[at - 1] != ' ') at--;
    return at;
}
static size_t two_words_end(const char *s, size_t from) {
    size_t e = from;
    for (int words = 0; s[e] && words < 2; words++) {
        while (s[e] == ' ') e++;
        while (s[e] && s[e] != ' ') e++;
    }
    return e;
}

/* Labels alike though their keys differ (the cut took what told them
 * apart): each becomes its key's start and, for every other key alike in
 * label, the words where the two part ("allgather cpu...dt3 float...");
 * labels alike after that get " #N" in their sorted order. */
static void tell_apart(zb_plot_series_set *set) {
    if (set->n < 2) return;
    zb_plot_series **by = (zb_plot_series **)malloc((size_t)set->n * sizeof *by);
    size_t *at = (size_t *)malloc((size_t)set->n * sizeof *at);
    if (!by || !at) { /* out of memory: the legend keeps its cut labels */
        free(by);
        free(at);
        return;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < set->n; i++) by[i] = &set->s[i];
        qsort(by, (size_t)set->n, sizeof *by, by_label);
        for (int a = 0; a < set->n;) {
            int b = a + 1;
            while (b < set->n && !strcmp(by[a]->label, by[b]->label)) b++;
            for (int i = a; b - a > 1 && i < b; i++) {
                char out[sizeof by[i]->label];
                size_t k = 0;
                if (pass == 0) {
                    const char *key = by[i]->key;
                    int n_at = 0; /* where it parts from each other key, word starts, sorted, once each */
                    for (int j = a; j < b; j++) {
                        if (j == i) continue;
                        size_t w = word_start(key, common_start(key, by[j]->key)), m = (size_t)n_at;
                        while (m > 0 && at[m - 1] > w) m--;
                        if (m > 0 && at[m - 1] == w) continue;
                        memmove(at + m + 1, at + m, ((size_t)n_at - m) * sizeof *at);
                        at[m] = w;
                        n_at++;
                    }
                    char joined[sizeof out];
                    size_t head = n_at ? zb_plot_fit_start(key, at[0], ZB_PLOT_LEGEND_WIDTH / 4) : 0, shown = head;
                    zb_plot_put_bytes(joined, sizeof joined, &k, key, head);
                    for (int m = 0; m < n_at; m++) {
                        size_t from = at[m] > shown ? at[m] : shown, end = two_words_end(key, from);
                        end = from + zb_plot_fit_start(key + from, end - from, ZB_PLOT_LEGEND_WIDTH / 4); /* room left for the end */
                        if (end <= shown) continue;
                        if (from > shown) zb_plot_put_bytes(joined, sizeof joined, &k, "...", 3);
                        zb_plot_put_bytes(joined, sizeof joined, &k, key + from, end - from);
                        shown = end;
                    }
                    if (key[shown]) { /* and its end, as much as fits ("..., 4 ranks") */
                        size_t len = strlen(key + shown);
                        int room = ZB_PLOT_LEGEND_WIDTH - zb_plot_text_width(joined) - DOTS_WIDTH;
                        size_t from = room > 0 ? zb_plot_fit_end(key + shown, len, room) : len;
                        while (from < len && key[shown + from] == ' ') from++;
                        zb_plot_put_bytes(joined, sizeof joined, &k, "...", 3);
                        zb_plot_put_bytes(joined, sizeof joined, &k, key + shown + from, len - from);
                    }
                    zb_plot_cut(joined, ZB_PLOT_LEGEND_WIDTH, out, sizeof out);
                } else {
                    char tag[16];
                    snprintf(tag, sizeof tag, " #%d", i - a + 1);
                    zb_plot_cut(by[i]->label, ZB_PLOT_LEGEND_WIDTH - zb_plot_text_width(tag), out, sizeof out);
                    k = strlen(out);
                    zb_plot_put_bytes(out, sizeof out, &k, tag, strlen(tag));
                }
                memcpy(by[i]->label, out, sizeof out);
            }
            a = b;
        }
    }
    free(by);
    free(at);
}

void zb_plot_series_finish(zb_plot_series_set *set, const zb_plot_inputs *in) {
    bool *shared = (bool *)calloc((size_t)set->n + 1, sizeof(bool));
    for (int i = 0; i < set->n; i++) qsort(set->s[i].p, (size_t)set->s[i].n, sizeof(zb_plot_point), by_x);
    if (shared && !shared_keys(set, shared)) {
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
    /* A legend entry wider than this would run past a column's width. */
    for (int i = 0; i < set->n; i++) {
        char cut[sizeof set->s[i].label];
        zb_plot_cut_middle(set->s[i].label, ZB_PLOT_LEGEND_WIDTH, cut, sizeof cut);
        memcpy(set->s[i].label, cut, sizeof cut);
    }
    tell_apart(set);
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
    for (int i = 0; i < set->n; i++) {
        free(set->s[i].p);
        free(set->s[i].key);
    }
    free(set->s);
    free(set->index);
    memset(set, 0, sizeof *set);
}
