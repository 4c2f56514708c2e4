/* Run identity, pairing and labels (run_identity.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "parse.h"
#include "run_identity.h"

/* The runs' "what varies" keys (docs/design.md §7), every bench's. */
const char *const zb_run_identity_keys[] = {
    "bench",         "name",       "model",       "stage",         "mode",
    "shape",         "size_bytes", "in_place",    "dtype",         "act_dtype",
    "param_dtype",   "grad_reduce_dtype",         "trans_b",       "recompute",
    "prefetch_depth", "flops_convention",         "ranks",         "nodes",
    "rotate_bytes",   NULL,
};

bool zb_run_same_identity(const json_t *a, const json_t *b) {
    for (int i = 0; zb_run_identity_keys[i]; i++) {
        const json_t *x = json_object_get(a, zb_run_identity_keys[i]);
        const json_t *y = json_object_get(b, zb_run_identity_keys[i]);
        if (!x && !y) continue;
        if (!x || !y || !json_equal(x, y)) return false;
    }
    return true;
}

bool zb_run_is_simulated(const json_t *run) {
    const json_t *s = json_object_get(run, "simulated");
    return json_is_true(s) || (json_is_string(s) && json_string_length(s) > 0) || json_is_object(s);
}

/* Appends one key's part of the label. */
static void label_part(const char *key, const json_t *v, char *out, size_t n) {
    size_t used = strlen(out);
    if (used >= n - 1) return;
    char *p = out + used;
    size_t left = n - used;
    if (!strcmp(key, "size_bytes") && json_is_integer(v) && json_integer_value(v) >= 0) {
        char size[32];
        zb_format_size((uint64_t)json_integer_value(v), size, (int)sizeof size);
        snprintf(p, left, " %s", size);
    } else if (!strcmp(key, "in_place") && json_is_boolean(v)) {
        snprintf(p, left, " %s", json_is_true(v) ? "in-place" : "out-of-place");
    } else if (!strcmp(key, "stage") && json_is_integer(v)) {
        snprintf(p, left, " stage%lld", (long long)json_integer_value(v));
    } else if (json_is_string(v) && (!strcmp(key, "name") || !strcmp(key, "model") || !strcmp(key, "mode") ||
                                     !strcmp(key, "shape") || !strcmp(key, "dtype"))) {
        snprintf(p, left, " %s", json_string_value(v));
    } else if (json_is_string(v)) {
        snprintf(p, left, " %s=%s", key, json_string_value(v));
    } else if (json_is_integer(v)) {
        snprintf(p, left, " %s=%lld", key, (long long)json_integer_value(v));
    } else if (json_is_boolean(v)) {
        snprintf(p, left, " %s=%s", key, json_is_true(v) ? "true" : "false");
    } else if (json_is_real(v)) {
        snprintf(p, left, " %s=%g", key, json_real_value(v));
    } /* objects and arrays (a step's shape): named by the model */
}

/* A value the label leaves out because it is the usual one (the run's dtype
 * for the other dtypes, no recompute, depth 1, full attention FLOPs, no
 * transpose): a run that differs shows the key, so labels stay distinct. */
static bool label_default(const json_t *run, const char *key, const json_t *v) {
    const char *s = json_string_value(v);
    const char *dtype = json_string_value(json_object_get(run, "dtype"));
    if (!strcmp(key, "act_dtype") || !strcmp(key, "param_dtype") || !strcmp(key, "grad_reduce_dtype")) {
        return s && dtype && !strcmp(s, dtype);
    }
    if (!strcmp(key, "recompute")) return s && !strcmp(s, "none");
    if (!strcmp(key, "flops_convention")) return s && !strcmp(s, "full");
    if (!strcmp(key, "prefetch_depth")) return json_is_integer(v) && json_integer_value(v) == 1;
    if (!strcmp(key, "trans_b")) return json_is_false(v);
    return false;
}

void zb_run_label(const json_t *run, char *out, size_t n) {
    if (!n) return;
    const char *bench = json_string_value(json_object_get(run, "bench"));
    snprintf(out, n, "%s", bench ? bench : "(no bench)");
    for (int i = 1; zb_run_identity_keys[i]; i++) {
        const char *key = zb_run_identity_keys[i];
        const json_t *v = json_object_get(run, key);
        if (v && !json_is_null(v) && !label_default(run, key, v)) label_part(key, v, out, n);
    }
    if (zb_needs_escape(out)) { /* a newline or terminal escape from the file must not reach a table raw */
        char *raw = strdup(out);
        if (raw) zb_escape(raw, 0, out, n);
        else snprintf(out, n, "(label not shown: out of memory)");
        free(raw);
    }
}

/* ---- pairing ------------------------------------------------------------
 * Runs are grouped into identity classes through a hash table (a hash that
 * equal identities share, then zb_run_same_identity to confirm), so pairing
 * costs about one lookup per run instead of a scan of every earlier run: a
 * 10,000-run file paired in quadratic time took a minute. */

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

static uint64_t bytes_hash(const char *s, size_t n) {
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return h;
}

/* A hash of v that json_equal-equal values share: objects hash their
 * members order-free, a real's -0.0 hashes as 0.0 (they compare equal). */
static uint64_t value_hash(const json_t *v) {
    uint64_t h = (uint64_t)json_typeof(v) + 1;
    if (json_is_string(v)) return mix(h, bytes_hash(json_string_value(v), json_string_length(v)));
    if (json_is_integer(v)) return mix(h, (uint64_t)json_integer_value(v));
    if (json_is_real(v)) {
        double d = json_real_value(v);
        uint64_t bits = 0;
        if (d != 0.0) memcpy(&bits, &d, sizeof bits);
        return mix(h, bits);
    }
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) h = mix(h, value_hash(json_array_get(v, i)));
        return h;
    }
    if (json_is_object(v)) {
        uint64_t sum = 0;
        const char *key;
        const json_t *m;
        json_object_foreach((json_t *)v, key, m) sum += mix(bytes_hash(key, strlen(key)), value_hash(m));
        return mix(h, sum);
    }
    return h; /* null, true, false: the type says it all */
}

static uint64_t identity_hash(const json_t *run) {
    uint64_t h = 0;
    for (int i = 0; zb_run_identity_keys[i]; i++) {
        const json_t *v = json_object_get(run, zb_run_identity_keys[i]);
        h = mix(h, v ? value_hash(v) : 0x5bd1e995ULL); /* absent differs from every value */
    }
    return h;
}

/* One identity class: its first run, how many base runs of it were seen,
 * and its runs in new_runs as a list (first, last) through next_new[]. */
typedef struct id_class {
    uint64_t hash;
    const json_t *rep;
    long first_new, last_new;
} id_class;

typedef struct id_table {
    id_class *classes;
    size_t n_classes;
    long *slots; /* class index, -1 empty; open addressing */
    size_t mask;
} id_table;

static bool table_init(id_table *t, size_t n_runs) {
    size_t cap = 16;
    while (cap < 2 * n_runs) cap *= 2;
    t->classes = (id_class *)malloc((n_runs ? n_runs : 1) * sizeof *t->classes);
    t->slots = (long *)malloc(cap * sizeof *t->slots);
    t->n_classes = 0;
    t->mask = cap - 1;
    if (!t->classes || !t->slots) return false;
    for (size_t i = 0; i < cap; i++) t->slots[i] = -1;
    return true;
}

/* The class of `run`, added when new (the table has room for every run). */
static id_class *table_class(id_table *t, const json_t *run) {
    uint64_t h = identity_hash(run);
    size_t i = (size_t)h & t->mask;
    for (; t->slots[i] >= 0; i = (i + 1) & t->mask) {
        id_class *c = &t->classes[t->slots[i]];
        if (c->hash == h && zb_run_same_identity(c->rep, run)) return c;
    }
    id_class *c = &t->classes[t->n_classes];
    *c = (id_class){h, run, -1, -1};
    t->slots[i] = (long)t->n_classes++;
    return c;
}

bool zb_run_pair(const json_t *base, const json_t *new_runs, long *pair, size_t *n_pairs) {
    size_t nb = json_array_size(base), nn = json_array_size(new_runs);
    id_table t;
    long *next_new = (long *)malloc((nn ? nn : 1) * sizeof *next_new);
    bool ok = table_init(&t, nb + nn) && next_new;
    *n_pairs = 0;
    for (size_t j = 0; ok && j < nn; j++) { /* each class's new runs, in order */
        id_class *c = table_class(&t, json_array_get(new_runs, j));
        next_new[j] = -1;
        if (c->last_new >= 0) next_new[c->last_new] = (long)j;
        else c->first_new = (long)j;
        c->last_new = (long)j;
    }
    for (size_t i = 0; ok && i < nb; i++) { /* the k-th base run of a class takes its k-th new run */
        id_class *c = table_class(&t, json_array_get(base, i));
        pair[i] = c->first_new;
        if (c->first_new >= 0) {
            c->first_new = next_new[c->first_new];
            (*n_pairs)++;
        }
    }
    free(t.classes);
    free(t.slots);
    free(next_new);
    return ok;
}
