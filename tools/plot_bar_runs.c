/* The bar figures' step runs (plot_bars.h): the runs of every input that
 * measured a step, each with its configuration (zb_plot_config) and its
 * group: the fields that differ between the runs besides the
 * configuration (ranks, model, ...), whole, numbered in first-seen order. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "plot_bars.h"

void zb_plot_free_runs(step_run *s, int n) {
    for (int i = 0; s && i < n; i++) {
        free(s[i].key);
        for (int f = 0; f < N_FIELDS; f++) free(s[i].fields[f]);
    }
    free(s);
}

/* The step runs of every input, in order; NULL when there are none (or no
 * memory: *oom). */
step_run *zb_plot_step_runs(const zb_plot_inputs *in, int *n, bool *oom) {
    size_t total = 0;
    for (int i = 0; i < in->n; i++) total += zb_plot_n_runs(&in->files[i]);
    step_run *s = (step_run *)calloc(total + 1, sizeof(step_run));
    *n = 0;
    *oom = !s;
    for (int i = 0; s && i < in->n; i++) {
        for (size_t j = 0; j < zb_plot_n_runs(&in->files[i]); j++) {
            const json_t *r = zb_plot_run(&in->files[i], j);
            if (!zb_plot_is_step_run(r) || !isfinite(zb_plot_metric(r, "step_time_ms"))) continue;
            s[*n].run = r;
            s[*n].file = i;
            (*n)++;
        }
    }
    if (s && *n == 0) {
        free(s);
        return NULL;
    }
    return s;
}

/* A string made as printf would, malloc'ed (NULL: out of memory). */
static char *text_of(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static char *text_of(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *t = len >= 0 ? (char *)malloc((size_t)len + 1) : NULL;
    if (!t) return NULL;
    va_start(ap, fmt);
    vsnprintf(t, (size_t)len + 1, fmt, ap);
    va_end(ap);
    return t;
}

/* A field of run s as text, whole (NULL: out of memory). */
static char *field_text(const step_run *s, const zb_plot_inputs *in, int field) {
    const json_t *r = s->run, *meta = json_object_get(in->files[s->file].doc, "meta");
    switch (field) {
    case 0: return text_of("%s", zb_plot_str(r, "model"));
    case 1: {
        int ranks = zb_plot_int(r, "ranks", -1);
        return text_of("%d rank%s", ranks, ranks == 1 ? "" : "s");
    }
    case 2: {
        const char *dev = zb_plot_str(meta, "backend"), *comm = zb_plot_str(meta, "comm");
        return text_of("%s/%s", dev[0] ? dev : "?", comm[0] ? comm : "?");
    }
    case 3: return text_of("%s", zb_plot_str(r, "param_dtype"));
    case 4: return text_of("recompute %s", zb_plot_str(r, "recompute"));
    default: return text_of("depth %d", zb_plot_int(r, "prefetch_depth", -1));
    }
}

/* Each run's configuration, and its group: the fields that differ between
 * the runs (none: the model, as the label), whole, so that two models
 * differing only past what a label shows are two groups. False when out
 * of memory. */
bool zb_plot_label_runs(step_run *s, int n, const zb_plot_inputs *in) {
    bool varies[N_FIELDS] = {false}, any = false;
    for (int f = 0; f < N_FIELDS; f++) {
        char *a = field_text(&s[0], in, f);
        if (!a) return false;
        for (int i = 1; i < n && !varies[f]; i++) {
            char *b = field_text(&s[i], in, f);
            if (!b) {
                free(a);
                return false;
            }
            varies[f] = strcmp(a, b) != 0;
            free(b);
        }
        free(a);
        any |= varies[f];
    }
    if (!any) varies[0] = true; /* one group: the model names it */
    for (int i = 0; i < n; i++) {
        s[i].code = zb_plot_config(s[i].run, s[i].config, sizeof s[i].config);
        size_t key_len = 1;
        for (int f = 0; f < N_FIELDS; f++) {
            if (!varies[f]) continue;
            if (!(s[i].fields[f] = field_text(&s[i], in, f))) return false;
            key_len += strlen(s[i].fields[f]) + 24;
        }
        /* Each field with its length in front: no two lists of fields read alike. */
        if (!(s[i].key = (char *)malloc(key_len))) return false;
        size_t used = 0;
        s[i].key[0] = '\0';
        for (int f = 0; f < N_FIELDS; f++) {
            if (!s[i].fields[f]) continue;
            used += (size_t)snprintf(s[i].key + used, key_len - used, "%zu:%s;", strlen(s[i].fields[f]), s[i].fields[f]);
        }
    }
    return true;
}

/* Runs by group, then by their order (equal groups adjacent, the first
 * seen first). */
static int by_group(const void *a, const void *b) {
    const step_run *x = *(const step_run *const *)a, *y = *(const step_run *const *)b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x > y) - (x < y);
}

/* Numbers the groups in first-seen order (s[i].group_no) and returns how
 * many there are, -1 when out of memory. Sorted rather than every run
 * against the runs before it: 50,000 runs of as many configurations cost
 * O(n log n), not O(n^2). */
int zb_plot_number_groups(step_run *s, int n) {
    int *first = (int *)calloc((size_t)n + 1, sizeof(int)); /* the first run of each run's group */
    const step_run **by = (const step_run **)malloc(((size_t)n + 1) * sizeof *by);
    int n_groups = -1;
    if (first && by) {
        for (int i = 0; i < n; i++) by[i] = &s[i];
        qsort(by, (size_t)n, sizeof *by, by_group);
        for (int k = 0; k < n; k++) {
            bool same = k > 0 && !strcmp(by[k - 1]->key, by[k]->key);
            first[by[k] - s] = same ? first[by[k - 1] - s] : (int)(by[k] - s);
        }
        n_groups = 0;
        for (int i = 0; i < n; i++) s[i].group_no = first[i] == i ? n_groups++ : s[first[i]].group_no;
    }
    free(first);
    free(by);
    return n_groups;
}

bool zb_plot_too_many_bars(step_run *s, int n, zb_plot_out *out) {
    zb_plot_free_runs(s, 0);
    snprintf(out->why, sizeof out->why, "%d step runs, more than the %d bars one figure shows (plot fewer runs)", n,
             ZB_PLOT_MAX_BARS);
    return false;
}
