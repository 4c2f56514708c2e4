/* Reading results runs and writing series as gnuplot data (plot_series.h),
 * and the plot tool's text helpers (plot.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plot_series.h"
#include "report.h"

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

zb_plot_series *zb_plot_series_get(zb_plot_series_set *set, const char *label, int file) {
    for (int i = 0; i < set->n; i++) {
        if (set->s[i].file == file && !strcmp(set->s[i].label, label)) return &set->s[i];
    }
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

void zb_plot_series_remove(zb_plot_series_set *set, int i) {
    free(set->s[i].p);
    memmove(&set->s[i], &set->s[i + 1], (size_t)(set->n - i - 1) * sizeof set->s[0]);
    set->n--;
}

static int by_x(const void *a, const void *b) {
    double x = ((const zb_plot_point *)a)->x, y = ((const zb_plot_point *)b)->x;
    return x < y ? -1 : x > y;
}

void zb_plot_series_finish(zb_plot_series_set *set, const zb_plot_inputs *in) {
    bool *shared = (bool *)calloc((size_t)set->n + 1, sizeof(bool));
    for (int i = 0; i < set->n; i++) {
        qsort(set->s[i].p, (size_t)set->s[i].n, sizeof(zb_plot_point), by_x);
        for (int j = 0; shared && j < set->n; j++) {
            if (j != i && !strcmp(set->s[i].label, set->s[j].label)) shared[i] = true;
        }
    }
    for (int i = 0; shared && i < set->n; i++) {
        if (!shared[i]) continue;
        const char *path = in->files[set->s[i].file].path, *base = strrchr(path, '/');
        size_t used = strlen(set->s[i].label);
        snprintf(set->s[i].label + used, sizeof set->s[i].label - used, " (%s)", base ? base + 1 : path);
    }
    free(shared);
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
    memset(set, 0, sizeof *set);
}
