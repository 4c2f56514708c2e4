/* The report document and its JSON and CSV writers (see report.h).
 *
 * JSON is serialized here rather than by json_dumps so that doubles print in
 * their shortest round-trip form (jansson prints 17 significant digits or
 * fewer-but-lossy ones). The CSV writer is report_csv.c. */
#include "report.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "report_impl.h"

struct zb_report {
    json_t *doc;  /* {"schema", "meta", "runs"} */
    json_t *meta; /* borrowed from doc */
    json_t *runs; /* borrowed from doc */
    json_t *csv_columns; /* declared CSV columns (report_csv.c), an ordered set */
};

/* ---- a growable output buffer ---------------------------------------------- */

void zb_sbuf_putn(zb_sbuf *b, const char *s, size_t n) {
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

void zb_sbuf_puts(zb_sbuf *b, const char *s) { zb_sbuf_putn(b, s, strlen(s)); }

void zb_sbuf_putc(zb_sbuf *b, char c) { zb_sbuf_putn(b, &c, 1); }

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

void zb_put_integer(zb_sbuf *b, json_int_t v) {
    char tmp[32];
    snprintf(tmp, sizeof tmp, "%" JSON_INTEGER_FORMAT, v);
    zb_sbuf_puts(b, tmp);
}

void zb_put_real(zb_sbuf *b, double v) {
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
    json_t *columns = json_object();
    if (r && doc && meta && runs && columns &&
        json_object_set_new(doc, "schema", json_string(ZB_REPORT_SCHEMA)) == 0 &&
        json_object_set(doc, "meta", meta) == 0 && json_object_set(doc, "runs", runs) == 0) {
        r->doc = doc;
        r->meta = meta;
        r->runs = runs;
        r->csv_columns = columns;
        json_decref(meta); /* doc holds them now */
        json_decref(runs);
        return r;
    }
    json_decref(doc);
    json_decref(meta);
    json_decref(runs);
    json_decref(columns);
    free(r);
    ZB_FAIL(ZB_ERR_NOMEM, "report: out of memory creating the document");
    return NULL;
}

void zb_report_free(zb_report *r) {
    if (!r) return;
    json_decref(r->doc);
    json_decref(r->csv_columns);
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

json_t *zb_report_csv_columns(const zb_report *r) { return r ? r->csv_columns : NULL; }

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

