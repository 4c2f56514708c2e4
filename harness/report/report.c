/* The report document and its JSON and CSV writers (see report.h).
 *
 * JSON is serialized here rather than by json_dumps so that doubles print in
 * their shortest round-trip form (jansson prints 17 significant digits or
 * fewer-but-lossy ones). CSV flattens each run object into "a.b" columns. */
#include "report.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"

/* Deeper documents are refused rather than risking the stack. */
#define ZB_JSON_MAX_DEPTH 256

struct zb_report {
    json_t *doc;  /* {"schema", "meta", "runs"} */
    json_t *meta; /* borrowed from doc */
    json_t *runs; /* borrowed from doc */
};

/* ---- a growable output buffer ---------------------------------------------- */

typedef struct zb_sbuf {
    char *p;
    size_t len, cap;
    zb_status err; /* first error; later appends are ignored */
} zb_sbuf;

static void zb_sbuf_putn(zb_sbuf *b, const char *s, size_t n) {
    if (b->err != ZB_OK) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (b->len + n + 1 > cap) cap *= 2;
        char *p = (char *)realloc(b->p, cap);
        if (!p) {
            b->err = ZB_FAIL(ZB_ERR_NOMEM, "report: out of memory growing a %zu-byte buffer", cap);
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void zb_sbuf_puts(zb_sbuf *b, const char *s) { zb_sbuf_putn(b, s, strlen(s)); }

static void zb_sbuf_putc(zb_sbuf *b, char c) { zb_sbuf_putn(b, &c, 1); }

/* ---- numbers ----------------------------------------------------------------- */

/* Replaces a locale's decimal comma with '.'; %g never emits ',' otherwise. */
static void zb_c_decimal_point(char *s) {
    for (; *s; s++)
        if (*s == ',') *s = '.';
}

int zb_format_double(char *buf, size_t size, double v) {
    char tmp[48];
    if (!isfinite(v)) return snprintf(buf, size, "null");
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v) break; /* same locale both ways */
    }
    zb_c_decimal_point(tmp);
    if (!strpbrk(tmp, ".e")) strcat(tmp, ".0"); /* keep it a real */
    return snprintf(buf, size, "%s", tmp);
}

json_t *zb_json_real_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static void zb_put_integer(zb_sbuf *b, json_int_t v) {
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%" JSON_INTEGER_FORMAT, v);
    zb_sbuf_puts(b, tmp);
}

static void zb_put_real(zb_sbuf *b, double v) {
    char tmp[48];
    zb_format_double(tmp, sizeof tmp, v);
    zb_sbuf_puts(b, tmp);
}

/* ---- JSON serialization ------------------------------------------------------ */

/* A JSON string literal: quotes, backslashes and control bytes escaped;
 * other bytes (valid UTF-8, jansson checks on input) copied as they are. */
static void zb_put_json_string(zb_sbuf *b, const char *s, size_t n) {
    zb_sbuf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        switch (c) {
        case '"': zb_sbuf_puts(b, "\\\""); break;
        case '\\': zb_sbuf_puts(b, "\\\\"); break;
        case '\b': zb_sbuf_puts(b, "\\b"); break;
        case '\f': zb_sbuf_puts(b, "\\f"); break;
        case '\n': zb_sbuf_puts(b, "\\n"); break;
        case '\r': zb_sbuf_puts(b, "\\r"); break;
        case '\t': zb_sbuf_puts(b, "\\t"); break;
        default:
            if (c < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", (unsigned)c);
                zb_sbuf_puts(b, esc);
            } else {
                zb_sbuf_putc(b, (char)c);
            }
        }
    }
    zb_sbuf_putc(b, '"');
}

static void zb_put_newline_indent(zb_sbuf *b, int indent, int depth) {
    if (indent <= 0) return;
    zb_sbuf_putc(b, '\n');
    for (int i = 0; i < indent * depth; i++) zb_sbuf_putc(b, ' ');
}

static void zb_put_json(zb_sbuf *b, const json_t *v, int indent, int depth);

static void zb_put_json_object(zb_sbuf *b, const json_t *v, int indent, int depth) {
    const char *key;
    json_t *val;
    bool first = true;
    if (json_object_size(v) == 0) {
        zb_sbuf_puts(b, "{}");
        return;
    }
    zb_sbuf_putc(b, '{');
    json_object_foreach((json_t *)v, key, val) {
        if (!first) zb_sbuf_putc(b, ',');
        first = false;
        zb_put_newline_indent(b, indent, depth + 1);
        zb_put_json_string(b, key, strlen(key));
        zb_sbuf_puts(b, indent > 0 ? ": " : ":");
        zb_put_json(b, val, indent, depth + 1);
    }
    zb_put_newline_indent(b, indent, depth);
    zb_sbuf_putc(b, '}');
}

static void zb_put_json_array(zb_sbuf *b, const json_t *v, int indent, int depth) {
    size_t n = json_array_size(v);
    if (n == 0) {
        zb_sbuf_puts(b, "[]");
        return;
    }
    zb_sbuf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i > 0) zb_sbuf_putc(b, ',');
        zb_put_newline_indent(b, indent, depth + 1);
        zb_put_json(b, json_array_get(v, i), indent, depth + 1);
    }
    zb_put_newline_indent(b, indent, depth);
    zb_sbuf_putc(b, ']');
}

static void zb_put_json(zb_sbuf *b, const json_t *v, int indent, int depth) {
    if (b->err != ZB_OK) return;
    if (depth > ZB_JSON_MAX_DEPTH) {
        b->err = ZB_FAIL(ZB_ERR_INVALID, "report: JSON nested deeper than %d levels", ZB_JSON_MAX_DEPTH);
        return;
    }
    switch (json_typeof(v)) {
    case JSON_OBJECT: zb_put_json_object(b, v, indent, depth); break;
    case JSON_ARRAY: zb_put_json_array(b, v, indent, depth); break;
    case JSON_STRING: zb_put_json_string(b, json_string_value(v), json_string_length(v)); break;
    case JSON_INTEGER: zb_put_integer(b, json_integer_value(v)); break;
    case JSON_REAL: zb_put_real(b, json_real_value(v)); break;
    case JSON_TRUE: zb_sbuf_puts(b, "true"); break;
    case JSON_FALSE: zb_sbuf_puts(b, "false"); break;
    case JSON_NULL: zb_sbuf_puts(b, "null"); break;
    }
}

char *zb_json_dump(const json_t *v, int indent, size_t *len) {
    zb_sbuf b = {NULL, 0, 0, ZB_OK};
    if (!v) {
        ZB_FAIL(ZB_ERR_INVALID, "report: no JSON value to dump");
        return NULL;
    }
    zb_put_json(&b, v, indent, 0);
    zb_sbuf_putn(&b, "", 0); /* an empty value still gets a buffer */
    if (b.err != ZB_OK) {
        free(b.p);
        return NULL;
    }
    if (len) *len = b.len;
    return b.p;
}

/* ---- the report object ------------------------------------------------------- */

zb_report *zb_report_new(void) {
    zb_report *r = (zb_report *)calloc(1, sizeof *r);
    json_t *doc = json_object();
    json_t *meta = json_object();
    json_t *runs = json_array();
    if (r && doc && meta && runs &&
        json_object_set_new(doc, "schema", json_string(ZB_REPORT_SCHEMA)) == 0 &&
        json_object_set(doc, "meta", meta) == 0 && json_object_set(doc, "runs", runs) == 0) {
        r->doc = doc;
        r->meta = meta;
        r->runs = runs;
        json_decref(meta); /* doc holds them now */
        json_decref(runs);
        return r;
    }
    json_decref(doc);
    json_decref(meta);
    json_decref(runs);
    free(r);
    ZB_FAIL(ZB_ERR_NOMEM, "report: out of memory creating the document");
    return NULL;
}

void zb_report_free(zb_report *r) {
    if (!r) return;
    json_decref(r->doc);
    free(r);
}

json_t *zb_report_meta(zb_report *r) { return r ? r->meta : NULL; }

void zb_report_add_run(zb_report *r, json_t *run) {
    if (!r || !json_is_object(run)) {
        json_decref(run);
        return;
    }
    json_array_append_new(r->runs, run);
}

size_t zb_report_n_runs(const zb_report *r) { return r ? json_array_size(r->runs) : 0; }

const json_t *zb_report_run(const zb_report *r, size_t i) {
    return r ? json_array_get(r->runs, i) : NULL;
}

json_t *zb_report_last_run(zb_report *r) {
    size_t n = r ? json_array_size(r->runs) : 0;
    return n ? json_array_get(r->runs, n - 1) : NULL;
}

const json_t *zb_report_doc(const zb_report *r) { return r ? r->doc : NULL; }

zb_status zb_report_write_json(const zb_report *r, const char *path) {
    if (!r) return ZB_FAIL(ZB_ERR_INVALID, "report: no report to write to %s", path ? path : "(null)");
    zb_sbuf b = {NULL, 0, 0, ZB_OK};
    zb_put_json(&b, r->doc, 2, 0);
    zb_sbuf_putc(&b, '\n');
    zb_status s = b.err;
    if (s == ZB_OK) s = zb_atomic_write(path, b.p, b.len);
    free(b.p);
    return s;
}

/* ---- CSV ------------------------------------------------------------------------ */

/* "prefix.key", malloc'ed (NULL when out of memory). */
static char *zb_join_key(const char *prefix, const char *key) {
    size_t n = strlen(prefix) + strlen(key) + 2;
    char *s = (char *)malloc(n);
    if (s) snprintf(s, n, "%s.%s", prefix, key);
    return s;
}

/* An array of objects (a run's per_rank, its stragglers) is a table of its
 * own, and an empty array holds nothing: neither fits one CSV row. */
static bool zb_csv_json_only(const json_t *v) {
    return json_is_array(v) && (json_array_size(v) == 0 || json_is_object(json_array_get(v, 0)));
}

/* Adds every leaf of object `obj` to `flat` under "prefix.key" names,
 * recursing into nested objects. Returns ZB_OK or an error. */
static zb_status zb_flatten(json_t *flat, const char *prefix, const json_t *obj, int depth) {
    const char *key;
    json_t *val;
    if (depth > ZB_JSON_MAX_DEPTH)
        return ZB_FAIL(ZB_ERR_INVALID, "report: run nested deeper than %d levels", ZB_JSON_MAX_DEPTH);
    json_object_foreach((json_t *)obj, key, val) {
        char *name = prefix ? zb_join_key(prefix, key) : NULL;
        const char *col = prefix ? name : key;
        zb_status s = ZB_OK;
        if (!col) return ZB_FAIL(ZB_ERR_NOMEM, "report: out of memory flattening a run");
        if (zb_csv_json_only(val))
            ; /* a table of its own (per-rank figures): JSON only */
        else if (json_is_object(val))
            s = zb_flatten(flat, col, val, depth + 1);
        else if (!json_object_get(flat, col) && json_object_set(flat, col, val) != 0)
            s = ZB_FAIL(ZB_ERR_NOMEM, "report: out of memory flattening a run");
        free(name);
        if (s != ZB_OK) return s;
    }
    return ZB_OK;
}

/* Records the columns of one flattened run, in first-seen order, into the
 * ordered sets `top` and `metrics` (JSON objects used as ordered sets). */
static zb_status zb_collect_columns(const json_t *flat, json_t *top, json_t *metrics) {
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)flat, key, val) {
        json_t *set = strncmp(key, "metrics.", 8) == 0 ? metrics : top;
        if (json_object_set_new(set, key, json_true()) != 0)
            return ZB_FAIL(ZB_ERR_NOMEM, "report: out of memory collecting CSV columns");
    }
    return ZB_OK;
}

static bool zb_csv_needs_quotes(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r') return true;
    return false;
}

/* A CSV field: as is, or quoted with inner quotes doubled (RFC 4180). */
static void zb_put_csv_text(zb_sbuf *b, const char *s, size_t n) {
    if (!zb_csv_needs_quotes(s, n)) {
        zb_sbuf_putn(b, s, n);
        return;
    }
    zb_sbuf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"') zb_sbuf_putc(b, '"');
        zb_sbuf_putc(b, s[i]);
    }
    zb_sbuf_putc(b, '"');
}

static void zb_put_csv_cell(zb_sbuf *b, const json_t *v) {
    char *text;
    size_t n = 0;
    switch (json_typeof(v)) {
    case JSON_STRING: zb_put_csv_text(b, json_string_value(v), json_string_length(v)); break;
    case JSON_INTEGER: zb_put_integer(b, json_integer_value(v)); break;
    case JSON_REAL: zb_put_real(b, json_real_value(v)); break;
    case JSON_TRUE: zb_sbuf_puts(b, "true"); break;
    case JSON_FALSE: zb_sbuf_puts(b, "false"); break;
    case JSON_NULL: break;
    case JSON_ARRAY:
    case JSON_OBJECT:
        text = zb_json_dump(v, 0, &n);
        if (!text) {
            if (b->err == ZB_OK) b->err = ZB_ERR_NOMEM; /* message already recorded */
            return;
        }
        zb_put_csv_text(b, text, n);
        free(text);
        break;
    }
}

/* Appends one line: the header names when `flat` is NULL, else the cells of
 * that flattened run, over the columns of `top` then `metrics`. */
static void zb_put_csv_line(zb_sbuf *b, const json_t *top, const json_t *metrics, const json_t *flat) {
    const json_t *sets[2] = {top, metrics};
    bool first = true;
    for (int i = 0; i < 2; i++) {
        const char *key;
        json_t *unused;
        json_object_foreach((json_t *)sets[i], key, unused) {
            if (!first) zb_sbuf_putc(b, ',');
            first = false;
            if (!flat) {
                zb_put_csv_text(b, key, strlen(key));
            } else {
                const json_t *v = json_object_get(flat, key);
                if (v) zb_put_csv_cell(b, v);
            }
        }
    }
    zb_sbuf_putc(b, '\n');
}

/* Flattens every run into `flats` and gathers the column sets. */
static zb_status zb_csv_prepare(const zb_report *r, json_t *flats, json_t *top, json_t *metrics) {
    for (size_t i = 0; i < json_array_size(r->runs); i++) {
        json_t *flat = json_object();
        if (!flat || json_array_append_new(flats, flat) != 0)
            return ZB_FAIL(ZB_ERR_NOMEM, "report: out of memory flattening run %zu", i);
        ZB_TRY(zb_flatten(flat, NULL, json_array_get(r->runs, i), 0));
        ZB_TRY(zb_collect_columns(flat, top, metrics));
    }
    return ZB_OK;
}

/* Renders the whole CSV text into `b`. */
static zb_status zb_csv_render(const zb_report *r, zb_sbuf *b) {
    json_t *flats = json_array();
    json_t *top = json_object();
    json_t *metrics = json_object();
    zb_status s = ZB_OK;
    if (!flats || !top || !metrics)
        s = ZB_FAIL(ZB_ERR_NOMEM, "report: out of memory preparing CSV");
    if (s == ZB_OK) s = zb_csv_prepare(r, flats, top, metrics);
    if (s == ZB_OK && json_object_size(top) + json_object_size(metrics) > 0) {
        zb_put_csv_line(b, top, metrics, NULL);
        for (size_t i = 0; i < json_array_size(flats); i++)
            zb_put_csv_line(b, top, metrics, json_array_get(flats, i));
        s = b->err;
    }
    json_decref(flats);
    json_decref(top);
    json_decref(metrics);
    return s;
}

zb_status zb_report_write_csv(const zb_report *r, const char *path) {
    if (!r) return ZB_FAIL(ZB_ERR_INVALID, "report: no report to write to %s", path ? path : "(null)");
    zb_sbuf b = {NULL, 0, 0, ZB_OK};
    zb_status s = zb_csv_render(r, &b);
    if (s == ZB_OK) s = zb_atomic_write(path, b.p ? b.p : "", b.len);
    free(b.p);
    return s;
}
