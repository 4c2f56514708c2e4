/* Run metadata for the JSON report's "meta" object (see meta.h). */
#include "meta.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>
#include <mpi.h>

#include "mpi_wait.h"

extern char **environ;

/* ---- pure helpers ------------------------------------------------------------- */

void zb_meta_first_line(char *s) {
    if (!s) return;
    s[strcspn(s, "\r\n")] = '\0';
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    size_t lead = 0;
    while (s[lead] && isspace((unsigned char)s[lead])) lead++;
    memmove(s, s + lead, n - lead + 1);
}

static bool zb_shell_safe(const char *w) {
    if (!w[0]) return false;
    for (; *w; w++)
        if (!isalnum((unsigned char)*w) && !strchr("_@%+=:,./-", *w)) return false;
    return true;
}

/* Bytes word `w` takes once quoted (without a separator). */
static size_t zb_shell_word_len(const char *w) {
    if (zb_shell_safe(w)) return strlen(w);
    size_t n = 2;
    for (; *w; w++) n += *w == '\'' ? 4 : 1;
    return n;
}

static char *zb_shell_put_word(char *p, const char *w) {
    if (zb_shell_safe(w)) {
        size_t n = strlen(w);
        memcpy(p, w, n);
        return p + n;
    }
    *p++ = '\'';
    for (; *w; w++) {
        if (*w == '\'') {
            memcpy(p, "'\\''", 4);
            p += 4;
        } else {
            *p++ = *w;
        }
    }
    *p++ = '\'';
    return p;
}

char *zb_meta_shell_join(int argc, char *const *argv) {
    size_t n = 1;
    for (int i = 0; i < argc; i++) n += zb_shell_word_len(argv[i] ? argv[i] : "") + 1;
    char *s = (char *)malloc(n);
    if (!s) return NULL;
    char *p = s;
    for (int i = 0; i < argc; i++) {
        if (i > 0) *p++ = ' ';
        p = zb_shell_put_word(p, argv[i] ? argv[i] : "");
    }
    *p = '\0';
    return s;
}

void zb_meta_cpu_model(const char *cpuinfo_path, char *out, size_t out_size) {
    if (!out || out_size == 0) return;
    snprintf(out, out_size, "unknown");
    FILE *f = fopen(cpuinfo_path ? cpuinfo_path : "/proc/cpuinfo", "r");
    if (!f) return;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) >= 0) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || !colon) continue;
        zb_meta_first_line(colon + 1);
        if (colon[1]) snprintf(out, out_size, "%s", colon + 1);
        break;
    }
    free(line);
    fclose(f);
}

/* Orders "NAME=value" strings by NAME ('=' ends the name). */
static int zb_env_cmp(const void *a, const void *b) {
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    for (;; x++, y++) {
        int cx = *x == '=' ? 0 : (unsigned char)*x, cy = *y == '=' ? 0 : (unsigned char)*y;
        if (cx != cy || cx == 0) return cx - cy;
    }
}

/* Sets NAME -> value from one "NAME=value" entry. An entry whose name or
 * value is not valid UTF-8 cannot go in JSON and is skipped. */
static zb_status zb_env_set(json_t *out, const char *entry) {
    const char *eq = strchr(entry, '=');
    if (!eq) return ZB_OK;
    json_t *name = json_stringn(entry, (size_t)(eq - entry));
    json_t *value = json_string(eq + 1);
    zb_status s = ZB_OK;
    if (name && value && json_object_set(out, json_string_value(name), value) != 0)
        s = ZB_FAIL(ZB_ERR_NOMEM, "meta: out of memory recording the environment");
    json_decref(name);
    json_decref(value);
    return s;
}

zb_status zb_meta_env_prefix(json_t *out, const char *prefix) {
    if (!json_is_object(out) || !prefix) return ZB_FAIL(ZB_ERR_INVALID, "meta: environment needs an object");
    size_t n = 0, plen = strlen(prefix);
    for (char **e = environ; e && *e; e++) n++;
    const char **hits = (const char **)malloc((n + 1) * sizeof *hits);
    if (!hits) return ZB_FAIL(ZB_ERR_NOMEM, "meta: out of memory reading the environment");
    size_t k = 0;
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, prefix, plen) == 0) hits[k++] = *e;
    qsort(hits, k, sizeof *hits, zb_env_cmp);
    zb_status s = ZB_OK;
    for (size_t i = 0; i < k && s == ZB_OK; i++) s = zb_env_set(out, hits[i]);
    free(hits);
    return s;
}

zb_status zb_meta_nccl_env(json_t *out) { return zb_meta_env_prefix(out, "NCCL_"); }

zb_status zb_meta_malloc_env(json_t *out) {
    static const char *const names[] = {"MALLOC_MMAP_MAX_", "MALLOC_TRIM_THRESHOLD_"};
    if (!json_is_object(out)) return ZB_FAIL(ZB_ERR_INVALID, "meta: environment needs an object");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        json_t *js = v ? json_string(v) : NULL;
        if (js && json_object_set_new(out, names[i], js) != 0)
            return ZB_FAIL(ZB_ERR_NOMEM, "meta: out of memory recording %s", names[i]);
    }
    return ZB_OK;
}

static bool zb_array_has_string(const json_t *arr, const char *s, size_t n) {
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *v = json_array_get(arr, i);
        if (json_string_length(v) == n && memcmp(json_string_value(v), s, n) == 0) return true;
    }
    return false;
}

zb_status zb_meta_unique_hosts(json_t *out, const char *names, int n, size_t stride) {
    if (!json_is_array(out) || (n > 0 && !names) || stride == 0)
        return ZB_FAIL(ZB_ERR_INVALID, "meta: bad host name list");
    for (int i = 0; i < n; i++) {
        const char *name = names + (size_t)i * stride;
        size_t len = strnlen(name, stride);
        if (zb_array_has_string(out, name, len)) continue;
        if (json_array_append_new(out, json_stringn(name, len)) != 0)
            return ZB_FAIL(ZB_ERR_NOMEM, "meta: cannot record host name of rank %d", i);
    }
    return ZB_OK;
}

/* ---- the collective part ------------------------------------------------------- */

/* Gathers every rank's host name (all ranks get all names) into the new
 * array *hosts. Every rank makes the same two calls whatever happens
 * locally: an allocation failure anywhere is agreed on first. */
static zb_status zb_meta_gather_hosts(json_t **hosts, int *n_ranks, double timeout_s) {
    char mine[ZB_META_HOST_BYTES];
    memset(mine, 0, sizeof mine);
    if (gethostname(mine, sizeof mine - 1) != 0) snprintf(mine, sizeof mine, "unknown");
    int size = 1, rc = MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rc != MPI_SUCCESS) return zb_mpi_call_failed(rc, "MPI_Comm_size", "meta: MPI_COMM_WORLD");
    *n_ranks = size;
    char *all = (char *)malloc((size_t)size * ZB_META_HOST_BYTES);
    int ok = all != NULL, all_ok = 0;
    zb_status s = zb_mpi_allreduce_bounded(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD,
                                           "meta: agreeing on memory for the host names", timeout_s);
    if (s != ZB_OK || !all_ok) {
        free(all);
        if (s != ZB_OK) return s;
        return ZB_FAIL(ZB_ERR_NOMEM, "meta: out of memory gathering %d host names", size);
    }
    s = zb_mpi_allgather_bounded(mine, all, ZB_META_HOST_BYTES, MPI_CHAR, MPI_COMM_WORLD,
                                 "meta: gathering the host names", timeout_s);
    if (s != ZB_OK) return s; /* `all` may still be MPI's (mpi_wait.h): not freed */
    *hosts = json_array();
    if (!*hosts)
        s = ZB_FAIL(ZB_ERR_NOMEM, "meta: out of memory");
    else
        s = zb_meta_unique_hosts(*hosts, all, size, ZB_META_HOST_BYTES);
    free(all);
    return s;
}

/* ---- local fields --------------------------------------------------------------- */

/* Sets meta[key] = value (stolen); a NULL value means allocation failed. */
static zb_status zb_meta_put(json_t *meta, const char *key, json_t *value) {
    if (!value || json_object_set_new(meta, key, value) != 0)
        return ZB_FAIL(ZB_ERR_NOMEM, "meta: cannot set \"%s\"", key);
    return ZB_OK;
}

/* A JSON string of possibly non-UTF-8 text: invalid bytes become '?'. */
static json_t *zb_json_text(const char *s) {
    json_t *j = json_string(s);
    if (j || !s) return j;
    size_t n = strlen(s);
    char *copy = (char *)malloc(n + 1);
    if (!copy) return NULL;
    for (size_t i = 0; i <= n; i++) copy[i] = (s[i] & 0x80) ? '?' : s[i];
    j = json_string(copy);
    free(copy);
    return j;
}

static json_t *zb_meta_argv_array(int argc, char *const *argv) {
    json_t *a = json_array();
    for (int i = 0; a && i < argc; i++) {
        if (json_array_append_new(a, zb_json_text(argv[i] ? argv[i] : "")) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static zb_status zb_meta_put_command(json_t *meta, int argc, char *const *argv) {
    char *line = zb_meta_shell_join(argc, argv);
    zb_status s = zb_meta_put(meta, "command_line", line ? zb_json_text(line) : NULL);
    free(line);
    if (s == ZB_OK) s = zb_meta_put(meta, "argv", zb_meta_argv_array(argc, argv));
    return s;
}

static zb_status zb_meta_put_mpi(json_t *meta) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    int len = 0, major = 0, minor = 0;
    memset(lib, 0, sizeof lib);
    if (MPI_Get_library_version(lib, &len) != MPI_SUCCESS) snprintf(lib, sizeof lib, "unknown");
    zb_meta_first_line(lib);
    char ver[32];
    if (MPI_Get_version(&major, &minor) == MPI_SUCCESS)
        snprintf(ver, sizeof ver, "%d.%d", major, minor);
    else
        snprintf(ver, sizeof ver, "unknown");
    ZB_TRY(zb_meta_put(meta, "mpi_library", zb_json_text(lib)));
    return zb_meta_put(meta, "mpi_version", json_string(ver));
}

static zb_status zb_meta_put_host(json_t *meta) {
    char buf[512];
    zb_meta_cpu_model(NULL, buf, sizeof buf);
    ZB_TRY(zb_meta_put(meta, "cpu_model", zb_json_text(buf)));
    ZB_TRY(zb_meta_put(meta, "cpu_cores_online", json_integer((json_int_t)sysconf(_SC_NPROCESSORS_ONLN))));
    ZB_TRY(zb_meta_put_mpi(meta));
    const char *blas = openblas_get_config();
    snprintf(buf, sizeof buf, "%s", blas ? blas : "unknown");
    zb_meta_first_line(buf);
    ZB_TRY(zb_meta_put(meta, "blas", zb_json_text(buf)));
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
    else
        snprintf(buf, sizeof buf, "unknown");
    return zb_meta_put(meta, "kernel", zb_json_text(buf));
}

static zb_status zb_meta_put_date(json_t *meta) {
    char buf[64] = "unknown";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return zb_meta_put(meta, "date_utc", json_string(buf));
}

static zb_status zb_meta_put_env(json_t *meta) {
    json_t *nccl = json_object(), *mall = json_object();
    zb_status s = (!nccl || !mall) ? ZB_FAIL(ZB_ERR_NOMEM, "meta: out of memory") : ZB_OK;
    if (s == ZB_OK) s = zb_meta_nccl_env(nccl);
    if (s == ZB_OK) s = zb_meta_malloc_env(mall);
    if (s != ZB_OK) {
        json_decref(nccl);
        json_decref(mall);
        return s;
    }
    s = zb_meta_put(meta, "nccl_env", nccl);
    if (s == ZB_OK) s = zb_meta_put(meta, "malloc_env", mall);
    else json_decref(mall);
    return s;
}

static zb_status zb_meta_put_local(json_t *meta, int argc, char *const *argv, const json_t *config,
                                   json_t *hosts, int n_ranks) {
    ZB_TRY(zb_meta_put(meta, "zerobench_version", json_string(ZB_VERSION)));
    ZB_TRY(zb_meta_put(meta, "git_describe", json_string(ZB_GIT_DESCRIBE)));
    ZB_TRY(zb_meta_put_command(meta, argc, argv));
    ZB_TRY(zb_meta_put(meta, "config", config ? json_deep_copy(config) : json_object()));
    ZB_TRY(zb_meta_put(meta, "hosts", json_incref(hosts)));
    ZB_TRY(zb_meta_put(meta, "ranks", json_integer(n_ranks)));
    ZB_TRY(zb_meta_put_host(meta));
    ZB_TRY(zb_meta_put_date(meta));
    /* GPU fields (gpu_model, gpu_count, driver_version, cuda_version,
     * nccl_version) are added to this object by the CUDA backend. */
    return zb_meta_put_env(meta);
}

zb_status zb_meta_collect(json_t *meta, int argc, char *const *argv, const json_t *config, double timeout_s) {
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (!inited || finalized)
        return ZB_FAIL(ZB_ERR_INVALID, "meta: zb_meta_collect needs MPI to be initialized (and not finalized)");
    json_t *hosts = NULL;
    int n_ranks = 0;
    zb_status s = zb_meta_gather_hosts(&hosts, &n_ranks, timeout_s); /* the only collective: first */
    if (s == ZB_OK && !json_is_object(meta))
        s = ZB_FAIL(ZB_ERR_INVALID, "meta: zb_meta_collect needs a JSON object to fill");
    if (s == ZB_OK && (argc < 0 || (argc > 0 && !argv)))
        s = ZB_FAIL(ZB_ERR_INVALID, "meta: bad command line (argc %d)", argc);
    if (s == ZB_OK) s = zb_meta_put_local(meta, argc, argv, config, hosts, n_ranks);
    json_decref(hosts);
    return s;
}

zb_status zb_meta_collect_local(json_t *meta, int argc, char *const *argv, const json_t *config) {
    if (!json_is_object(meta)) return ZB_FAIL(ZB_ERR_INVALID, "meta: zb_meta_collect_local needs a JSON object to fill");
    if (argc < 0 || (argc > 0 && !argv)) return ZB_FAIL(ZB_ERR_INVALID, "meta: bad command line (argc %d)", argc);
    char host[ZB_META_HOST_BYTES];
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    json_t *hosts = json_array();
    if (!hosts || json_array_append_new(hosts, zb_json_text(host)) != 0) {
        json_decref(hosts);
        return ZB_FAIL(ZB_ERR_NOMEM, "meta: out of memory");
    }
    zb_status s = zb_meta_put_local(meta, argc, argv, config, hosts, 1);
    json_decref(hosts);
    return s;
}
