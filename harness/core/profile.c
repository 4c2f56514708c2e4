/* Loader for hardware and model profiles (profiles/hw/NAME.json,
 * profiles/models/NAME.json): name resolution, file reading, JSON parsing with
 * jansson, and validation with one-line messages that name the file and
 * the field. See profile.h for the fields and their rules. */
#include "profile.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "escape.h"
#include "input_file.h"

/* ---- messages -------------------------------------------------------------- */

/* Where a field lives, for messages: the file, the object, a key prefix
 * ("" at the top level, "sources." inside sources). */
typedef struct zb_field_ctx {
    const char *file;
    const json_t *obj;
    const char *prefix;
} zb_field_ctx;

/* A short description of a JSON value for "got ..." in messages. */
static void zb_describe(const json_t *v, char *out, size_t n) {
    char text[48];
    switch (json_typeof(v)) {
    case JSON_STRING:
        zb_escape(json_string_value(v), 40, text, sizeof text);
        snprintf(out, n, "\"%s\"", text);
        return;
    case JSON_INTEGER: snprintf(out, n, "%lld", (long long)json_integer_value(v)); return;
    case JSON_REAL: snprintf(out, n, "%.6g", json_real_value(v)); return;
    case JSON_TRUE: snprintf(out, n, "true"); return;
    case JSON_FALSE: snprintf(out, n, "false"); return;
    case JSON_NULL: snprintf(out, n, "null"); return;
    case JSON_OBJECT: snprintf(out, n, "an object"); return;
    case JSON_ARRAY: snprintf(out, n, "an array"); return;
    }
    snprintf(out, n, "an unknown value");
}

static zb_status zb_field_error(const zb_field_ctx *c, const char *key, const char *expected,
                                const json_t *got) {
    char desc[64];
    zb_describe(got, desc, sizeof desc);
    return ZB_FAIL(ZB_ERR_INVALID, "%s: field \"%s%s\": expected %s, got %s", c->file, c->prefix,
                   key, expected, desc);
}

static zb_status zb_field_get(const zb_field_ctx *c, const char *key, const json_t **out) {
    *out = json_object_get(c->obj, key);
    if (*out == NULL)
        return ZB_FAIL(ZB_ERR_INVALID, "%s: missing field \"%s%s\"", c->file, c->prefix, key);
    return ZB_OK;
}

/* ---- typed fields ------------------------------------------------------------ */

static zb_status zb_field_name(const zb_field_ctx *c, const char *key, char *out, size_t n) {
    const json_t *v;
    ZB_TRY(zb_field_get(c, key, &v));
    char expected[64];
    snprintf(expected, sizeof expected, "a non-empty string of at most %zu bytes", n - 1);
    if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) >= n)
        return zb_field_error(c, key, expected, v);
    snprintf(out, n, "%s", json_string_value(v));
    return ZB_OK;
}

static zb_status zb_field_pos_int(const zb_field_ctx *c, const char *key, int *out) {
    const json_t *v;
    ZB_TRY(zb_field_get(c, key, &v));
    char expected[64];
    snprintf(expected, sizeof expected, "a positive integer up to %d", ZB_PROFILE_INT_MAX);
    if (!json_is_integer(v) || json_integer_value(v) < 1 ||
        json_integer_value(v) > ZB_PROFILE_INT_MAX)
        return zb_field_error(c, key, expected, v);
    *out = (int)json_integer_value(v);
    return ZB_OK;
}

/* A finite number > 0 (or >= 0 when zero_ok). */
static zb_status zb_field_number(const zb_field_ctx *c, const char *key, bool zero_ok,
                                 double *out) {
    const json_t *v;
    ZB_TRY(zb_field_get(c, key, &v));
    double x = json_is_number(v) ? json_number_value(v) : NAN;
    bool ok = isfinite(x) && (zero_ok ? x >= 0.0 : x > 0.0);
    if (!ok) return zb_field_error(c, key, zero_ok ? "a number >= 0" : "a positive number", v);
    *out = x;
    return ZB_OK;
}

/* An optional field: absent is fine, present must be a string. */
static zb_status zb_field_opt_string(const zb_field_ctx *c, const char *key) {
    const json_t *v = json_object_get(c->obj, key);
    if (v != NULL && !json_is_string(v)) return zb_field_error(c, key, "a string", v);
    return ZB_OK;
}

static zb_status zb_field_opt_bool(const zb_field_ctx *c, const char *key, bool *out) {
    const json_t *v = json_object_get(c->obj, key);
    *out = false;
    if (v == NULL) return ZB_OK;
    if (!json_is_boolean(v)) return zb_field_error(c, key, "true or false", v);
    *out = json_is_true(v);
    return ZB_OK;
}

/* ---- JSON text to a root object ------------------------------------------------ */

static const char *zb_display_name(const char *filename) {
    return (filename != NULL && filename[0] != '\0') ? filename : "<profile>";
}

static zb_status zb_parse_root(const char *text, size_t len, const char *file, json_t **out) {
    json_error_t err;
    *out = NULL;
    if (text == NULL && len > 0) return ZB_FAIL(ZB_ERR_INVALID, "%s: no text given", file);
    json_t *root = json_loadb(text != NULL ? text : "", len, JSON_REJECT_DUPLICATES, &err);
    if (root == NULL) {
        char why[96];
        zb_escape(err.text, 80, why, sizeof why);
        return ZB_FAIL(ZB_ERR_INVALID, "%s:%d:%d: invalid JSON: %s", file, err.line, err.column,
                       why);
    }
    if (!json_is_object(root)) {
        json_decref(root);
        return ZB_FAIL(ZB_ERR_INVALID, "%s: expected a JSON object at the top level", file);
    }
    *out = root;
    return ZB_OK;
}

static zb_status zb_copy_path(const char *file, const char *filename, char *path, size_t n) {
    const char *p = filename != NULL ? filename : "";
    if (strlen(p) >= n)
        return ZB_FAIL(ZB_ERR_INVALID, "%s: file name longer than %zu bytes", file, n - 1);
    snprintf(path, n, "%s", p);
    return ZB_OK;
}

/* ---- hardware profiles ----------------------------------------------------------- */

/* The numeric fields of a hardware profile, in file order. */
typedef struct zb_hw_number_field {
    const char *key;
    size_t value_off;   /* offset of the double in zb_hw_profile */
    size_t measure_off; /* offset of the bool flag; 0 when "measure" is not allowed */
    bool zero_ok_gpu;   /* 0 allowed on a GPU (a link it may not have) */
} zb_hw_number_field;

static const zb_hw_number_field zb_hw_numbers[] = {
    {"bf16_flops", offsetof(zb_hw_profile, bf16_flops),
     offsetof(zb_hw_profile, bf16_flops_measure), false},
    {"fp32_flops", offsetof(zb_hw_profile, fp32_flops),
     offsetof(zb_hw_profile, fp32_flops_measure), false},
    {"mem_bytes", offsetof(zb_hw_profile, mem_bytes), offsetof(zb_hw_profile, mem_bytes_measure),
     false},
    {"hbm_bytes_per_s", offsetof(zb_hw_profile, hbm_bytes_per_s), 0, false},
    {"nvlink_bytes_per_s", offsetof(zb_hw_profile, nvlink_bytes_per_s), 0, true},
    {"nic_bytes_per_s", offsetof(zb_hw_profile, nic_bytes_per_s), 0, true},
};
#define ZB_HW_N_NUMBERS (sizeof zb_hw_numbers / sizeof zb_hw_numbers[0])

static zb_status zb_hw_kind(const zb_field_ctx *c, bool *is_cpu) {
    const json_t *v;
    ZB_TRY(zb_field_get(c, "kind", &v));
    const char *s = json_is_string(v) ? json_string_value(v) : "";
    if (strcmp(s, "cpu") != 0 && strcmp(s, "gpu") != 0)
        return zb_field_error(c, "kind", "\"cpu\" or \"gpu\"", v);
    *is_cpu = strcmp(s, "cpu") == 0;
    return ZB_OK;
}

/* The string "measure" in a field that allows it on this kind of device. */
static zb_status zb_hw_measure(const zb_field_ctx *c, const zb_hw_number_field *f, bool is_cpu,
                               const json_t *v, zb_hw_profile *hw) {
    bool is_measure = strcmp(json_string_value(v), "measure") == 0;
    bool zero_ok = f->zero_ok_gpu || is_cpu;
    if (f->measure_off == 0)
        return zb_field_error(c, f->key, zero_ok ? "a number >= 0" : "a positive number", v);
    if (!is_cpu)
        return zb_field_error(c, f->key,
                              "a positive number (\"measure\" is accepted only when kind is \"cpu\")",
                              v);
    if (!is_measure) return zb_field_error(c, f->key, "a positive number or \"measure\"", v);
    *(bool *)((char *)hw + f->measure_off) = true;
    *(double *)((char *)hw + f->value_off) = 0.0;
    return ZB_OK;
}

static zb_status zb_hw_number(const zb_field_ctx *c, const zb_hw_number_field *f, bool is_cpu,
                              zb_hw_profile *hw) {
    const json_t *v;
    ZB_TRY(zb_field_get(c, f->key, &v));
    if (json_is_string(v)) return zb_hw_measure(c, f, is_cpu, v, hw);
    bool zero_ok = f->zero_ok_gpu || (is_cpu && f->measure_off == 0);
    return zb_field_number(c, f->key, zero_ok, (double *)((char *)hw + f->value_off));
}

/* Every numeric field must name its source with a non-empty string. */
static zb_status zb_hw_sources(const zb_field_ctx *top) {
    const json_t *obj;
    ZB_TRY(zb_field_get(top, "sources", &obj));
    if (!json_is_object(obj))
        return zb_field_error(top, "sources", "an object mapping each numeric field to its source",
                              obj);
    zb_field_ctx c = {top->file, obj, "sources."};
    for (size_t i = 0; i <= ZB_HW_N_NUMBERS; i++) {
        const char *key = i < ZB_HW_N_NUMBERS ? zb_hw_numbers[i].key : "gpus_per_node";
        const json_t *v;
        ZB_TRY(zb_field_get(&c, key, &v));
        if (!json_is_string(v) || json_string_length(v) == 0)
            return zb_field_error(&c, key, "a non-empty string naming the source", v);
    }
    if (json_object_get(top->obj, "nics_per_node") != NULL) {
        const json_t *v;
        ZB_TRY(zb_field_get(&c, "nics_per_node", &v));
        if (!json_is_string(v) || json_string_length(v) == 0)
            return zb_field_error(&c, "nics_per_node", "a non-empty string naming the source", v);
    }
    return ZB_OK;
}

static zb_status zb_hw_fill(const json_t *root, const char *file, zb_hw_profile *hw) {
    zb_field_ctx c = {file, root, ""};
    ZB_TRY(zb_field_name(&c, "name", hw->name, sizeof hw->name));
    ZB_TRY(zb_hw_kind(&c, &hw->is_cpu));
    for (size_t i = 0; i < ZB_HW_N_NUMBERS; i++)
        ZB_TRY(zb_hw_number(&c, &zb_hw_numbers[i], hw->is_cpu, hw));
    ZB_TRY(zb_field_pos_int(&c, "gpus_per_node", &hw->gpus_per_node));
    hw->nics_per_node = 1;
    if (json_object_get(root, "nics_per_node") != NULL)
        ZB_TRY(zb_field_pos_int(&c, "nics_per_node", &hw->nics_per_node));
    ZB_TRY(zb_hw_sources(&c));
    return zb_hw_sim_parse(root, file, &hw->sim);
}

double zb_hw_inter_node_bw(const zb_hw_profile *hw, int gpus_per_node) {
    int rails = hw->nics_per_node < gpus_per_node ? hw->nics_per_node : gpus_per_node;
    if (rails < 1) rails = 1;
    return hw->nic_bytes_per_s * rails;
}

zb_status zb_hw_profile_parse(const char *json_text, size_t len, const char *filename,
                              zb_hw_profile *out) {
    const char *file = zb_display_name(filename);
    zb_hw_profile hw;
    json_t *root = NULL;
    memset(&hw, 0, sizeof hw);
    if (out == NULL) return ZB_FAIL(ZB_ERR_INVALID, "%s: no output profile given", file);
    memset(out, 0, sizeof *out);
    zb_status s = zb_copy_path(file, filename, hw.path, sizeof hw.path);
    if (s == ZB_OK) s = zb_parse_root(json_text, len, file, &root);
    if (s == ZB_OK) s = zb_hw_fill(root, file, &hw);
    json_decref(root);
    if (s == ZB_OK) *out = hw;
    return s;
}

/* ---- model profiles ------------------------------------------------------------- */

typedef struct zb_model_int_field {
    const char *key;
    size_t off;
} zb_model_int_field;

static const zb_model_int_field zb_model_ints[] = {
    {"layers", offsetof(zb_model_profile, layers)},
    {"dim", offsetof(zb_model_profile, dim)},
    {"heads", offsetof(zb_model_profile, heads)},
    {"kv_heads", offsetof(zb_model_profile, kv_heads)},
    {"head_dim", offsetof(zb_model_profile, head_dim)},
    {"ffn_dim", offsetof(zb_model_profile, ffn_dim)},
    {"vocab", offsetof(zb_model_profile, vocab)},
    {"seq", offsetof(zb_model_profile, seq)},
    {"batch", offsetof(zb_model_profile, batch)},
};

/* Grouped-query attention: kv_heads divides heads. */
static zb_status zb_model_check_gqa(const zb_field_ctx *c, const zb_model_profile *m) {
    if (m->kv_heads <= m->heads && m->heads % m->kv_heads == 0) return ZB_OK;
    char expected[64];
    snprintf(expected, sizeof expected, "a divisor of heads (%d)", m->heads);
    return zb_field_error(c, "kv_heads", expected, json_object_get(c->obj, "kv_heads"));
}

static zb_status zb_model_fill(const json_t *root, const char *file, zb_model_profile *m) {
    zb_field_ctx c = {file, root, ""};
    ZB_TRY(zb_field_name(&c, "name", m->name, sizeof m->name));
    for (size_t i = 0; i < sizeof zb_model_ints / sizeof zb_model_ints[0]; i++)
        ZB_TRY(zb_field_pos_int(&c, zb_model_ints[i].key, (int *)((char *)m + zb_model_ints[i].off)));
    ZB_TRY(zb_model_check_gqa(&c, m));
    ZB_TRY(zb_field_number(&c, "norm_eps", false, &m->norm_eps));
    ZB_TRY(zb_field_number(&c, "rope_theta", false, &m->rope_theta));
    ZB_TRY(zb_field_opt_bool(&c, "tied_embeddings", &m->tied_embeddings));
    return zb_field_opt_string(&c, "source");
}

zb_status zb_model_profile_parse(const char *json_text, size_t len, const char *filename,
                                 zb_model_profile *out) {
    const char *file = zb_display_name(filename);
    zb_model_profile m;
    json_t *root = NULL;
    memset(&m, 0, sizeof m);
    if (out == NULL) return ZB_FAIL(ZB_ERR_INVALID, "%s: no output profile given", file);
    memset(out, 0, sizeof *out);
    zb_status s = zb_copy_path(file, filename, m.path, sizeof m.path);
    if (s == ZB_OK) s = zb_parse_root(json_text, len, file, &root);
    if (s == ZB_OK) s = zb_model_fill(root, file, &m);
    json_decref(root);
    if (s == ZB_OK) *out = m;
    return s;
}

/* ---- the profiles directory and its listing -------------------------------------- */

zb_status zb_profile_dir(char *out, size_t n) {
    const char *dir = getenv("ZB_PROFILES");
    if (dir == NULL || dir[0] == '\0') {
#ifdef ZB_PROFILE_DIR
        dir = ZB_PROFILE_DIR;
#else
        return ZB_FAIL(ZB_ERR_INVALID, "profiles directory unknown: set ZB_PROFILES");
#endif
    }
    if (out == NULL || strlen(dir) >= n)
        return ZB_FAIL(ZB_ERR_INVALID, "profiles directory path too long (%zu bytes): %s",
                       strlen(dir), dir);
    snprintf(out, n, "%s", dir);
    return ZB_OK;
}

static bool zb_ends_with(const char *s, const char *suffix) {
    size_t ls = strlen(s), lx = strlen(suffix);
    return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

static bool zb_is_profile_kind(const char *kind) {
    return kind != NULL && (strcmp(kind, "hw") == 0 || strcmp(kind, "models") == 0 || strcmp(kind, "accept") == 0);
}

static zb_status zb_kind_dir(const char *kind, char *out, size_t n) {
    char dir[512];
    if (!zb_is_profile_kind(kind))
        return ZB_FAIL(ZB_ERR_INVALID, "profile kind \"%s\": expected \"hw\", \"models\" or \"accept\"",
                       kind != NULL ? kind : "(null)");
    ZB_TRY(zb_profile_dir(dir, sizeof dir));
    if ((size_t)snprintf(out, n, "%s/%s", dir, kind) >= n)
        return ZB_FAIL(ZB_ERR_INVALID, "profiles directory path too long: %s", dir);
    return ZB_OK;
}

/* A stem when `entry` in `dir` is a regular, visible *.json file. */
static char *zb_profile_stem(const char *dir, const char *entry) {
    char full[1024];
    struct stat st;
    if (entry[0] == '.' || !zb_ends_with(entry, ".json") || strlen(entry) == 5) return NULL;
    if ((size_t)snprintf(full, sizeof full, "%s/%s", dir, entry) >= sizeof full) return NULL;
    if (stat(full, &st) != 0 || !S_ISREG(st.st_mode)) return NULL;
    size_t len = strlen(entry) - 5;
    char *stem = (char *)malloc(len + 1);
    if (stem != NULL) {
        memcpy(stem, entry, len);
        stem[len] = '\0';
    }
    return stem;
}

static int zb_cmp_names(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

typedef struct zb_name_list {
    char **names;
    size_t count, cap;
} zb_name_list;

static void zb_name_list_free(zb_name_list *l) {
    for (size_t i = 0; i < l->count; i++) free(l->names[i]);
    free(l->names);
}

static zb_status zb_name_list_push(zb_name_list *l, char *name) {
    if (l->count == l->cap) {
        size_t cap = l->cap == 0 ? 16 : 2 * l->cap;
        char **grown = (char **)realloc(l->names, cap * sizeof *grown);
        if (grown == NULL) {
            free(name);
            return ZB_FAIL(ZB_ERR_NOMEM, "listing profiles: out of memory");
        }
        l->names = grown;
        l->cap = cap;
    }
    l->names[l->count++] = name;
    return ZB_OK;
}

static zb_status zb_read_names(const char *dir, zb_name_list *l) {
    DIR *d = opendir(dir);
    if (d == NULL)
        return ZB_FAIL(ZB_ERR_IO, "cannot read profiles folder %s: %s (set ZB_PROFILES)", dir,
                       strerror(errno));
    zb_status s = ZB_OK;
    struct dirent *e;
    while (s == ZB_OK && (e = readdir(d)) != NULL) {
        char *stem = zb_profile_stem(dir, e->d_name);
        if (stem != NULL) s = zb_name_list_push(l, stem);
    }
    closedir(d);
    return s;
}

static zb_status zb_join_names(const zb_name_list *l, char *out, size_t n) {
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < l->count; i++) {
        int w = snprintf(out + used, n - used, "%s%s", i > 0 ? ", " : "", l->names[i]);
        if (w < 0 || (size_t)w >= n - used)
            return ZB_FAIL(ZB_ERR_INVALID, "listing profiles: %zu-byte buffer too small", n);
        used += (size_t)w;
    }
    return ZB_OK;
}

zb_status zb_profile_list(const char *kind, char *out, size_t n) {
    char dir[600];
    zb_name_list l = {NULL, 0, 0};
    if (out == NULL || n == 0) return ZB_FAIL(ZB_ERR_INVALID, "listing profiles: no buffer given");
    out[0] = '\0';
    ZB_TRY(zb_kind_dir(kind, dir, sizeof dir));
    zb_status s = zb_read_names(dir, &l);
    if (s == ZB_OK) {
        if (l.count > 0) qsort(l.names, l.count, sizeof l.names[0], zb_cmp_names);
        s = zb_join_names(&l, out, n);
    }
    zb_name_list_free(&l);
    return s;
}

/* ---- loading from files ---------------------------------------------------------- */

/* "hw" or "model", for messages. */
static const char *zb_kind_label(const char *kind) {
    return strcmp(kind, "hw") == 0 ? "hw" : "model";
}

/* A bare name (no '/', no ".json") names <dir>/<kind>/NAME.json. */
static zb_status zb_resolve(const char *kind, const char *name_or_path, char *out, size_t n) {
    if (name_or_path == NULL || name_or_path[0] == '\0')
        return ZB_FAIL(ZB_ERR_INVALID, "%s profile: empty name", zb_kind_label(kind));
    if (strchr(name_or_path, '/') != NULL || zb_ends_with(name_or_path, ".json")) {
        if (strlen(name_or_path) >= n)
            return ZB_FAIL(ZB_ERR_INVALID, "%s profile path longer than %zu bytes: %s",
                           zb_kind_label(kind), n - 1, name_or_path);
        snprintf(out, n, "%s", name_or_path);
        return ZB_OK;
    }
    char dir[600];
    ZB_TRY(zb_kind_dir(kind, dir, sizeof dir));
    if ((size_t)snprintf(out, n, "%s/%s.json", dir, name_or_path) >= n)
        return ZB_FAIL(ZB_ERR_INVALID, "%s profile \"%s\": path too long", zb_kind_label(kind),
                       name_or_path);
    return ZB_OK;
}

static zb_status zb_not_found(const char *kind, const char *name, const char *path) {
    char names[256];
    if (zb_profile_list(kind, names, sizeof names) != ZB_OK)
        snprintf(names, sizeof names, "(none: %s)", zb_error_message());
    else if (names[0] == '\0')
        snprintf(names, sizeof names, "(none)");
    if (strcmp(name, path) == 0)
        return ZB_FAIL(ZB_ERR_INVALID, "%s profile file %s not found; available names: %s",
                       zb_kind_label(kind), path, names);
    return ZB_FAIL(ZB_ERR_INVALID, "%s profile \"%s\": %s not found; available: %s",
                   zb_kind_label(kind), name, path, names);
}

/* Reads the whole file into a NUL-terminated buffer the caller frees; a
 * FIFO, a folder or an oversized file is refused before it is read. */
static zb_status zb_read_file(const char *kind, const char *name, const char *path, char **text,
                              size_t *len) {
    int open_errno = 0;
    zb_status s = zb_input_read(path, ZB_PROFILE_MAX_BYTES, text, len, &open_errno);
    if (s != ZB_OK && (open_errno == ENOENT || open_errno == ENOTDIR)) return zb_not_found(kind, name, path);
    return s;
}

zb_status zb_hw_profile_load(const char *name_or_path, zb_hw_profile *out) {
    char path[512];
    char *text = NULL;
    size_t len = 0;
    ZB_TRY(zb_resolve("hw", name_or_path, path, sizeof path));
    ZB_TRY(zb_read_file("hw", name_or_path, path, &text, &len));
    zb_status s = zb_hw_profile_parse(text, len, path, out);
    free(text);
    return s;
}

zb_status zb_model_profile_load(const char *name_or_path, zb_model_profile *out) {
    char path[512];
    char *text = NULL;
    size_t len = 0;
    ZB_TRY(zb_resolve("models", name_or_path, path, sizeof path));
    ZB_TRY(zb_read_file("models", name_or_path, path, &text, &len));
    zb_status s = zb_model_profile_parse(text, len, path, out);
    free(text);
    return s;
}
