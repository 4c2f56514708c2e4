/* Loading and validating acceptance profiles (accept.h): every field known,
 * typed and in range, every error one line naming the file and the field.
 * Unknown keys are refused too: a misspelt "min" must not silently leave a
 * check without a threshold. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accept.h"
#include "bench.h"
#include "profile.h"
#include "registry.h"
#include "results.h"
#include "run_identity.h"

typedef struct where_ctx {
    char file[72];
    char at[120]; /* "checks[2] (gemm_tflops)" or "" for the top level */
} where_ctx;

#define PFAIL(w, ...) prof_fail((w), __VA_ARGS__)

static zb_status prof_fail(const where_ctx *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static zb_status prof_fail(const where_ctx *w, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ZB_FAIL(ZB_ERR_INVALID, "'%s': %s%s%s", w->file, w->at, w->at[0] ? ": " : "", msg);
}

static bool key_in(const char *key, const char *const *keys) {
    for (int i = 0; keys[i]; i++) {
        if (!strcmp(key, keys[i])) return true;
    }
    return false;
}

static zb_status only_keys(const where_ctx *w, const json_t *o, const char *const *keys) {
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        (void)v;
        if (!key_in(k, keys)) return PFAIL(w, "unknown field \"%.40s\"", k);
    }
    return ZB_OK;
}

static zb_status get_string(const where_ctx *w, const json_t *o, const char *key, bool required, const char **out) {
    const json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v) return required ? PFAIL(w, "missing field \"%s\"", key) : ZB_OK;
    if (!json_is_string(v) || !json_string_length(v)) return PFAIL(w, "field \"%s\": expected a non-empty string", key);
    *out = json_string_value(v);
    return ZB_OK;
}

static zb_status get_number(const where_ctx *w, const json_t *o, const char *key, double lo, double hi, bool *have,
                            double *out) {
    const json_t *v = json_object_get(o, key);
    *have = v != NULL;
    if (!v) return ZB_OK;
    if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < lo ||
        json_number_value(v) > hi) {
        return PFAIL(w, "field \"%s\": expected a number in [%g, %g]", key, lo, hi);
    }
    *out = json_number_value(v);
    return ZB_OK;
}

static zb_status get_int(const where_ctx *w, const json_t *o, const char *key, long long lo, long long hi, bool *have,
                         long long *out) {
    const json_t *v = json_object_get(o, key);
    *have = v != NULL;
    if (!v) return ZB_OK;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
        return PFAIL(w, "field \"%s\": expected an integer in [%lld, %lld]", key, lo, hi);
    }
    *out = (long long)json_integer_value(v);
    return ZB_OK;
}

/* "args": an array of strings, without the flags accept sets itself. */
static zb_status get_args(const where_ctx *w, const json_t *o, const char **args, int *n) {
    const json_t *a = json_object_get(o, "args");
    *n = 0;
    if (!a) return ZB_OK;
    if (!json_is_array(a)) return PFAIL(w, "field \"args\": expected an array of strings");
    if (json_array_size(a) > ZB_ACCEPT_MAX_ARGS / 2) return PFAIL(w, "field \"args\": at most %d", ZB_ACCEPT_MAX_ARGS / 2);
    for (size_t i = 0; i < json_array_size(a); i++) {
        const char *s = json_string_value(json_array_get(a, i));
        if (!s) return PFAIL(w, "field \"args\"[%zu]: expected a string", i);
        if (!strcmp(s, "--json") || !strncmp(s, "--json=", 7) || !strcmp(s, "--help") || !strcmp(s, "-h")) {
            return PFAIL(w, "field \"args\"[%zu]: '%s' is set by accept itself", i, s);
        }
        args[(*n)++] = s;
    }
    return ZB_OK;
}

/* A field's value for a message: a number as %g, a string quoted, else its type. */
static const char *shown(const json_t *v, char *out, size_t n) {
    if (json_is_number(v)) snprintf(out, n, "%g", json_number_value(v));
    else if (json_is_string(v)) snprintf(out, n, "'%.32s'", json_string_value(v));
    else snprintf(out, n, "%s", json_is_object(v) ? "an object" : json_is_array(v) ? "an array" : "not a number");
    return out;
}

/* A threshold, `key`: {"reference": R, "unit": U, "fraction": F}, judged as
 * F x R. The reference is a measured or published figure in `unit` (the
 * metric's: a GFLOP/s figure under a TFLOP/s metric is refused, not
 * silently 1000 times off); a minimum's fraction is in (0, 1] and a
 * maximum's at least 1, so the threshold is never stricter than the figure
 * it comes from. */
static zb_status get_threshold(const where_ctx *w, const json_t *c, const char *key, bool is_min, const char *unit,
                               const char *unit_of, zb_accept_check *k) {
    static const char *const keys[] = {"reference", "unit", "fraction", NULL};
    const json_t *t = json_object_get(c, key);
    char val[48];
    if (!json_is_object(t)) {
        return PFAIL(w, "field \"%s\": %s (accepted: {\"reference\", \"unit\", \"fraction\"}, the threshold being "
                        "fraction x reference, a measured or published figure named in \"source\")",
                     key, shown(t, val, sizeof val));
    }
    const char *k2;
    json_t *v;
    json_object_foreach((json_t *)t, k2, v) {
        (void)v;
        if (!key_in(k2, keys)) return PFAIL(w, "unknown field \"%s.%.40s\" (accepted: reference, unit, fraction)", key, k2);
    }
    const json_t *ref = json_object_get(t, "reference"), *fr = json_object_get(t, "fraction");
    const json_t *un = json_object_get(t, "unit");
    if (!ref) return PFAIL(w, "missing field \"%s.reference\"", key);
    double r = json_is_number(ref) ? json_number_value(ref) : NAN;
    if (!(r > 0 && r <= 1e300)) {
        return PFAIL(w, "field \"%s.reference\": %s (accepted: a positive number, the measured or published figure)", key,
                     shown(ref, val, sizeof val));
    }
    if (!un) return PFAIL(w, "missing field \"%s.unit\"", key);
    if (!json_is_string(un) || strcmp(json_string_value(un), unit)) {
        return PFAIL(w, "field \"%s.unit\": %s (accepted: '%s', the unit of %s)", key, shown(un, val, sizeof val), unit,
                     unit_of);
    }
    if (!fr) return PFAIL(w, "missing field \"%s.fraction\"", key);
    double f = json_is_number(fr) ? json_number_value(fr) : NAN;
    if (is_min && !(f > 0 && f <= 1)) {
        return PFAIL(w, "field \"%s.fraction\": %s (accepted: a number in (0, 1], a minimum at or below its reference)",
                     key, shown(fr, val, sizeof val));
    }
    if (!is_min && !(f >= 1 && f <= 1e6)) {
        return PFAIL(w, "field \"%s.fraction\": %s (accepted: a number in [1, 1e6], a maximum at or above its reference)",
                     key, shown(fr, val, sizeof val));
    }
    k->is_min = is_min;
    k->reference = json_number_value(ref);
    k->fraction = f;
    k->unit = json_string_value(un);
    k->threshold = f * k->reference;
    if (!isfinite(k->threshold)) return PFAIL(w, "field \"%s\": fraction x reference is not a finite number", key);
    return ZB_OK;
}

static zb_status check_bench(const where_ctx *w, const char *bench) {
    char names[256] = "";
    size_t used = 0;
    for (int c = 0; c < ZB_CMD_COUNT; c++) {
        const zb_bench *b = zb_bench_find((zb_command)c);
        if (!b) continue;
        if (!strcmp(b->name, bench)) return ZB_OK;
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", b->name);
        if (used >= sizeof names) used = sizeof names - 1;
    }
    return PFAIL(w, "field \"bench\": unknown benchmark '%.40s' (accepted: %s)", bench, names);
}

static zb_status check_where(const where_ctx *w, const json_t *where) {
    if (!json_is_object(where)) return PFAIL(w, "field \"where\": expected an object of run identity keys");
    return only_keys(w, where, zb_run_identity_keys);
}

static zb_status load_common(const where_ctx *w, const json_t *c, zb_accept_check *k) {
    bool have;
    long long iv = 1;
    double dv = 0;
    ZB_TRY(get_string(w, c, "source", true, &k->source));
    ZB_TRY(get_int(w, c, "repeat", 1, ZB_ACCEPT_MAX_REPEAT, &have, &iv));
    k->repeat = have ? (int)iv : 1;
    const char *judge;
    ZB_TRY(get_string(w, c, "judge", false, &judge));
    if (judge && strcmp(judge, "best") && strcmp(judge, "median")) {
        return PFAIL(w, "field \"judge\": '%.32s' (accepted: best, median)", judge);
    }
    k->judge = judge && !strcmp(judge, "median") ? ZB_JUDGE_MEDIAN : ZB_JUDGE_BEST;
    ZB_TRY(get_number(w, c, "timeout_s", 1, 86400, &have, &dv));
    if (have) k->timeout_s = dv;
    return ZB_OK;
}

static zb_status load_run_fields(const where_ctx *w, const json_t *c, zb_accept_check *k) {
    bool have;
    long long iv = 0;
    ZB_TRY(get_string(w, c, "bench", true, &k->bench));
    ZB_TRY(check_bench(w, k->bench));
    ZB_TRY(get_args(w, c, k->args, &k->n_args));
    k->where = json_object_get(c, "where");
    if (k->where) ZB_TRY(check_where(w, k->where));
    ZB_TRY(get_int(w, c, "min_size_bytes", 0, INT64_MAX, &have, &iv));
    k->min_size_bytes = have ? (int64_t)iv : 0;
    return ZB_OK;
}

static zb_status load_check(const where_ctx *w, const json_t *c, zb_accept_check *k) {
    static const char *const devices_keys[] = {"name", "kind", "source", "backend", "per_node", NULL};
    static const char *const metric_keys[] = {"name",  "kind", "source", "bench",     "args",  "metric",
                                              "min",   "max",  "where",  "min_size_bytes", "repeat", "judge",
                                              "timeout_s", NULL};
    static const char *const straggler_keys[] = {"name",  "kind",           "source", "bench",
                                                 "args",  "by",             "max_deviation_pct",
                                                 "per_rank_metric", "where", "min_size_bytes",
                                                 "repeat", "judge",         "timeout_s", NULL};
    const char *kind;
    ZB_TRY(get_string(w, c, "kind", true, &kind));
    ZB_TRY(load_common(w, c, k));
    bool have;
    long long iv = 0;
    if (!strcmp(kind, "devices")) {
        k->kind = ZB_CHECK_DEVICES;
        ZB_TRY(only_keys(w, c, devices_keys));
        ZB_TRY(get_string(w, c, "backend", true, &k->backend));
        if (!zb_device_backend_find(k->backend)) {
            return PFAIL(w, "field \"backend\": unknown device backend '%.32s'", k->backend);
        }
        ZB_TRY(get_int(w, c, "per_node", 1, 1024, &have, &iv));
        if (!have) return PFAIL(w, "missing field \"per_node\"");
        k->per_node = (int)iv;
    } else if (!strcmp(kind, "metric")) {
        k->kind = ZB_CHECK_METRIC;
        ZB_TRY(only_keys(w, c, metric_keys));
        ZB_TRY(load_run_fields(w, c, k));
        ZB_TRY(get_string(w, c, "metric", true, &k->metric));
        if (!(k->def = zb_metric_find(k->metric))) {
            char names[1024];
            zb_metric_names(names, sizeof names);
            return PFAIL(w, "field \"metric\": unknown metric '%.40s' (accepted: %s)", k->metric, names);
        }
        bool have_min = json_object_get(c, "min") != NULL, have_max = json_object_get(c, "max") != NULL;
        if (have_min == have_max) return PFAIL(w, "expected exactly one of the fields \"min\" and \"max\" (the threshold)");
        ZB_TRY(get_threshold(w, c, have_min ? "min" : "max", have_min, k->def->unit, k->metric, k));
    } else if (!strcmp(kind, "straggler")) {
        k->kind = ZB_CHECK_STRAGGLER;
        ZB_TRY(only_keys(w, c, straggler_keys));
        ZB_TRY(load_run_fields(w, c, k));
        if (!json_object_get(c, "max_deviation_pct")) return PFAIL(w, "missing field \"max_deviation_pct\"");
        const char *by;
        ZB_TRY(get_string(w, c, "by", false, &by));
        if (by && strcmp(by, "rank") && strcmp(by, "node")) return PFAIL(w, "field \"by\": '%.32s' (accepted: rank, node)", by);
        k->by_node = by && !strcmp(by, "node");
        ZB_TRY(get_string(w, c, "per_rank_metric", false, &k->metric));
        /* the step's ranks wait for each other, so their step times agree; a
         * slow rank shows in its own compute time */
        if (!k->metric) k->metric = !strcmp(k->bench, "step") ? "compute_ms" : "time_us";
        ZB_TRY(get_threshold(w, c, "max_deviation_pct", false, "%", "a deviation from the median", k));
    } else {
        return PFAIL(w, "field \"kind\": '%.32s' (accepted: devices, metric, straggler)", kind);
    }
    return ZB_OK;
}

/* NAME -> <profiles>/accept/NAME.json; anything with a '/' or ".json" is a path. */
static zb_status resolve(const char *name_or_path, char *path, size_t n) {
    size_t len = strlen(name_or_path);
    if (!len) return ZB_FAIL(ZB_ERR_INVALID, "accept: expected a profile name or path");
    if (strchr(name_or_path, '/') || (len > 5 && !strcmp(name_or_path + len - 5, ".json"))) {
        if (len >= n) return ZB_FAIL(ZB_ERR_INVALID, "accept: profile path too long");
        strcpy(path, name_or_path);
        return ZB_OK;
    }
    char dir[512];
    ZB_TRY(zb_profile_dir(dir, sizeof dir));
    if ((size_t)snprintf(path, n, "%s/accept/%s.json", dir, name_or_path) >= n) {
        return ZB_FAIL(ZB_ERR_INVALID, "accept: profile path too long");
    }
    FILE *f = fopen(path, "r");
    if (f) {
        fclose(f);
        return ZB_OK;
    }
    char names[1024] = "";
    if (zb_profile_list("accept", names, sizeof names) != ZB_OK) names[0] = '\0';
    return ZB_FAIL(ZB_ERR_INVALID, "accept: no profile '%.64s' in %s/accept (available: %s)", name_or_path, dir,
                   names[0] ? names : "none");
}

zb_status zb_accept_profile_load(const char *name_or_path, zb_accept_profile *out) {
    char path[512], shown[72];
    memset(out, 0, sizeof *out);
    ZB_TRY(resolve(name_or_path, path, sizeof path));
    zb_results_shown_path(path, shown);
    FILE *f = fopen(path, "rb");
    if (!f) return ZB_FAIL(ZB_ERR_INVALID, "'%s': %s", shown, strerror(errno));
    /* profiles are small: 1 MiB is far beyond any */
    char *text = (char *)malloc(1 << 20);
    size_t len = text ? fread(text, 1, 1 << 20, f) : 0;
    bool error = ferror(f) != 0, big = text && len == (1 << 20);
    fclose(f);
    zb_status s;
    if (!text) s = ZB_FAIL(ZB_ERR_NOMEM, "accept: out of memory");
    else if (error) s = ZB_FAIL(ZB_ERR_INVALID, "'%s': cannot be read", shown);
    else if (big) s = ZB_FAIL(ZB_ERR_INVALID, "'%s': larger than 1 MiB: not a profile", shown);
    else s = zb_accept_profile_parse(text, len, path, out);
    free(text);
    return s;
}

zb_status zb_accept_profile_parse(const char *text, size_t len, const char *filename, zb_accept_profile *out) {
    static const char *const top_keys[] = {"name", "description", "args", "timeout_s", "checks", NULL};
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", filename ? filename : "<profile>");
    where_ctx w;
    memset(&w, 0, sizeof w);
    zb_results_shown_path(out->path, w.file);
    json_error_t err;
    json_t *doc = json_loadb(text, len, 0, &err);
    if (!doc) return ZB_FAIL(ZB_ERR_INVALID, "'%s': not JSON (line %d: %s)", w.file, err.line, err.text);
    out->doc = doc;
    zb_status s = ZB_OK;
    const json_t *checks = json_object_get(doc, "checks");
    const char *name = NULL;
    bool have;
    double timeout = 600;
    if (!json_is_object(doc)) s = PFAIL(&w, "expected a JSON object");
    if (s == ZB_OK) s = only_keys(&w, doc, top_keys);
    if (s == ZB_OK) s = get_string(&w, doc, "name", true, &name);
    if (s == ZB_OK) s = get_string(&w, doc, "description", false, &out->description);
    if (s == ZB_OK) s = get_args(&w, doc, out->args, &out->n_args);
    if (s == ZB_OK) s = get_number(&w, doc, "timeout_s", 1, 86400, &have, &timeout);
    if (s == ZB_OK && !checks) s = PFAIL(&w, "missing field \"checks\"");
    if (s == ZB_OK && (!json_is_array(checks) || !json_array_size(checks))) {
        s = PFAIL(&w, "field \"checks\": expected a non-empty array of checks");
    }
    if (s == ZB_OK) {
        snprintf(out->name, sizeof out->name, "%s", name);
        out->checks = (zb_accept_check *)calloc(json_array_size(checks), sizeof *out->checks);
        if (!out->checks) s = ZB_FAIL(ZB_ERR_NOMEM, "accept: out of memory");
    }
    for (size_t i = 0; s == ZB_OK && i < json_array_size(checks); i++) {
        const json_t *c = json_array_get(checks, i);
        zb_accept_check *k = &out->checks[i];
        snprintf(w.at, sizeof w.at, "checks[%zu]", i);
        if (!json_is_object(c)) {
            s = PFAIL(&w, "expected an object");
            break;
        }
        k->timeout_s = timeout;
        s = get_string(&w, c, "name", true, &k->name);
        if (s != ZB_OK) break;
        snprintf(w.at, sizeof w.at, "checks[%zu] (%.64s)", i, k->name);
        for (size_t j = 0; j < i; j++) {
            if (!strcmp(out->checks[j].name, k->name)) s = PFAIL(&w, "field \"name\": used by checks[%zu] too", j);
        }
        if (s == ZB_OK) s = load_check(&w, c, k);
        if (s == ZB_OK && out->n_args + k->n_args > ZB_ACCEPT_MAX_ARGS - 4) {
            s = PFAIL(&w, "field \"args\": too many arguments with the profile's");
        }
        out->n_checks = i + 1;
    }
    if (s != ZB_OK) zb_accept_profile_free(out);
    return s;
}

void zb_accept_profile_free(zb_accept_profile *p) {
    free(p->checks);
    json_decref(p->doc);
    memset(p, 0, sizeof *p);
}
