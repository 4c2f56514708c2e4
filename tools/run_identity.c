/* Run identity, pairing and labels (run_identity.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "run_identity.h"

/* The runs' "what varies" keys (docs/design.md §7), every bench's. */
const char *const zb_run_identity_keys[] = {
    "bench",         "name",       "model",       "stage",         "mode",
    "shape",         "size_bytes", "in_place",    "dtype",         "act_dtype",
    "param_dtype",   "grad_reduce_dtype",         "trans_b",       "recompute",
    "prefetch_depth", "flops_convention",         "ranks",         "nodes",
    NULL,
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
}

/* The number of runs before `i` in `runs` with run i's identity. */
static size_t occurrence(const json_t *runs, size_t i) {
    size_t k = 0;
    for (size_t j = 0; j < i; j++) {
        if (zb_run_same_identity(json_array_get(runs, j), json_array_get(runs, i))) k++;
    }
    return k;
}

bool zb_run_pair(const json_t *base, const json_t *new_runs, long *pair, size_t *n_pairs) {
    size_t nb = json_array_size(base), nn = json_array_size(new_runs);
    size_t *occ_new = (size_t *)malloc((nn ? nn : 1) * sizeof *occ_new);
    if (!occ_new) return false;
    for (size_t j = 0; j < nn; j++) occ_new[j] = occurrence(new_runs, j);
    *n_pairs = 0;
    for (size_t i = 0; i < nb; i++) {
        const json_t *b = json_array_get(base, i);
        size_t k = occurrence(base, i);
        pair[i] = -1;
        for (size_t j = 0; j < nn; j++) {
            if (occ_new[j] == k && zb_run_same_identity(b, json_array_get(new_runs, j))) {
                pair[i] = (long)j;
                (*n_pairs)++;
                break;
            }
        }
    }
    free(occ_new);
    return true;
}
