/* compare: the environment differences that change what is measured
 * (compare.h). Each key reads one figure of a results file's meta; two
 * files differ on a key when both record it and the values differ (a file
 * that lacks it, older or from another backend, is not a difference). The
 * table is data: a key more is a line more. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compare.h"
#include "escape.h"

typedef struct env_key {
    const char *name;   /* --ignore-env's name and the line's */
    const char *path[2]; /* meta member, and a member of it (NULL: the member itself) */
    const char *what;   /* what it changes, for the line */
} env_key;

static const env_key env_keys[] = {
    {"backend", {"backend", NULL}, "another device"},
    {"comm", {"comm", NULL}, "another communication library"},
    {"blas_core", {"blas_core", "ran"}, "other BLAS kernels (--blas-core)"},
    {"threads", {"config", "blas_threads"}, "another BLAS thread count"},
    {"ranks_per_node", {NULL, NULL}, "another placement"},
    {"cpu_model", {"cpu_model", NULL}, "another CPU"},
    {"gpu_model", {"gpu_model", NULL}, "another GPU"},
    {"mpi_library", {"mpi_library", NULL}, "another MPI library"},
    {"blas", {"blas", NULL}, "another BLAS library"},
    {"nccl_version", {"nccl_version", NULL}, "another NCCL"},
    {"cuda_runtime_version", {"cuda_runtime_version", NULL}, "another CUDA runtime"},
    {"cuda_driver_version", {"cuda_driver_version", NULL}, "another CUDA driver"},
};
#define N_ENV_KEYS ((int)(sizeof env_keys / sizeof env_keys[0]))

int zb_compare_env_key(const char *name) {
    for (int i = 0; i < N_ENV_KEYS; i++) {
        if (!strcmp(env_keys[i].name, name)) return i;
    }
    return -1;
}

void zb_compare_env_names(char *out, size_t n) {
    size_t used = 0;
    if (n) out[0] = '\0';
    for (int i = 0; i < N_ENV_KEYS && used < n; i++) {
        used += (size_t)snprintf(out + used, n - used, "%s%s", i ? ", " : "", env_keys[i].name);
    }
}

/* OpenBLAS's configuration string names the core that ran ("OpenBLAS
 * 0.3.21 ... Zen MAX_THREADS=64"): that word left out, so another core is
 * one difference (blas_core), not two. */
static void blas_library(const json_t *meta, const char *blas, char *out, size_t n) {
    const char *core = json_string_value(json_object_get(json_object_get(meta, "blas_core"), "ran"));
    size_t used = 0, len = core ? strlen(core) : 0;
    if (n) out[0] = '\0';
    for (const char *w = blas; *w && used + 1 < n;) {
        size_t wl = strcspn(w, " ");
        if (!(core && wl == len && !strncmp(w, core, len))) {
            used += (size_t)snprintf(out + used, n - used, "%s%.*s", used ? " " : "", (int)wl, w);
        }
        w += wl;
        while (*w == ' ') w++;
    }
}

/* The key's value in `meta` as text (out); false when not recorded. Ranks
 * per node: meta.ranks over the hosts it lists. */
static bool env_value(const json_t *meta, const env_key *k, char *out, size_t n) {
    if (!k->path[0]) {
        const json_t *ranks = json_object_get(meta, "ranks"), *hosts = json_object_get(meta, "hosts");
        if (!json_is_integer(ranks) || !json_array_size(hosts)) return false;
        snprintf(out, n, "%g", (double)json_integer_value(ranks) / (double)json_array_size(hosts));
        return true;
    }
    const json_t *v = json_object_get(meta, k->path[0]);
    if (k->path[1]) v = json_object_get(v, k->path[1]);
    if (json_is_string(v) && !strcmp(k->name, "blas")) blas_library(meta, json_string_value(v), out, n);
    else if (json_is_string(v)) snprintf(out, n, "%s", json_string_value(v));
    else if (json_is_integer(v)) snprintf(out, n, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v)) snprintf(out, n, "%g", json_real_value(v));
    else return false;
    return true;
}

int zb_compare_env(const json_t *base_doc, const char *base_name, const json_t *new_doc, unsigned ignore,
                   zb_cmp_result *r) {
    const json_t *bm = json_object_get(base_doc, "meta"), *nm = json_object_get(new_doc, "meta");
    int differ = 0;
    for (int i = 0; i < N_ENV_KEYS; i++) {
        char b[256], w[256];
        if (!env_value(bm, &env_keys[i], b, sizeof b) || !env_value(nm, &env_keys[i], w, sizeof w) || !strcmp(b, w)) {
            continue;
        }
        bool judged = (ignore >> i) & 1u;
        differ += !judged;
        if (r->n_env_lines >= ZB_CMP_MAX_ENV_LINES) {
            r->n_env_more++;
            continue;
        }
        char eb[96], ew[96];
        zb_escape(b, 80, eb, sizeof eb);
        zb_escape(w, 80, ew, sizeof ew);
        snprintf(r->env_lines[r->n_env_lines++], sizeof r->env_lines[0], "%s %s: BASE%s%s %s, NEW %s (%s)%s",
                 judged ? "judged anyway:" : "not comparable:", env_keys[i].name, base_name ? " " : "",
                 base_name ? base_name : "", eb, ew, env_keys[i].what,
                 judged ? " (--ignore-env)" : "; --ignore-env judges anyway");
    }
    return differ;
}
