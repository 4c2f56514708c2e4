/* The report's CSV writer (report.h): the run's identity from the meta,
 * then each run object flattened into "a.b" columns, over one column set
 * that the runs' writers declare (zb_report_csv_declare) so that it does
 * not depend on what one backend measured. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "report.h"
#include "report_impl.h"

/* The identity of the run every line belongs to, from the meta: its
 * column and the meta key it shows (an array of strings joined by spaces). */
static const struct {
    const char *column, *key;
} zb_csv_meta_columns[] = {
    {"meta.date_utc", "date_utc"},         {"meta.git_describe", "git_describe"}, {"meta.hosts", "hosts"},
    {"meta.command_line", "command_line"}, {"meta.backend", "backend"},           {"meta.comm", "comm"},
};

#define ZB_CSV_N_META ((int)(sizeof zb_csv_meta_columns / sizeof zb_csv_meta_columns[0]))

/* "prefix.key", malloc'ed (NULL when out of memory). */
static char *zb_join_key(const char *prefix, const char *key) {
    size_t n = strlen(prefix) + strlen(key) + 2;
    char *s = (char *)malloc(n);
    if (s) snprintf(s, n, "%s.%s", prefix, key);
    return s;
}

/* Arrays do not fit one cell of one line: a run's per_rank and stragglers
 * (tables of their own), the samples behind a figure (up to 1,000 numbers)
 * and the rounds of --compare-direct are JSON only. */
static bool zb_csv_json_only(const json_t *v) { return json_is_array(v); }

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
            ; /* JSON only */
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
        if (!json_object_get(set, key) && json_object_set_new(set, key, json_true()) != 0)
            return ZB_FAIL(ZB_ERR_NOMEM, "report: out of memory collecting CSV columns");
    }
    return ZB_OK;
}

zb_status zb_report_csv_declare(zb_report *r, const json_t *skeleton) {
    json_t *set = zb_report_csv_columns(r), *flat = json_object();
    if (!json_is_object(skeleton)) {
        json_decref(flat);
        return ZB_FAIL(ZB_ERR_INVALID, "report: a CSV skeleton must be an object");
    }
    zb_status s = set && flat ? zb_flatten(flat, NULL, skeleton, 0)
                              : ZB_FAIL(ZB_ERR_NOMEM, "report: out of memory declaring CSV columns");
    const char *key;
    json_t *val;
    if (s == ZB_OK) {
        json_object_foreach(flat, key, val) {
            if (!json_object_get(set, key) && json_object_set_new(set, key, json_true()) != 0) {
                s = ZB_FAIL(ZB_ERR_NOMEM, "report: out of memory declaring CSV columns");
                break;
            }
        }
    }
    json_decref(flat);
    return s;
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

/* A leaf's cell. Booleans are 1 and 0, so that a column with empty cells
 * (a figure the sync run does not have) still reads as numbers. */
static void zb_put_csv_cell(zb_sbuf *b, const json_t *v) {
    char *text;
    size_t n = 0;
    switch (json_typeof(v)) {
    case JSON_STRING: zb_put_csv_text(b, json_string_value(v), json_string_length(v)); break;
    case JSON_INTEGER: zb_put_integer(b, json_integer_value(v)); break;
    case JSON_REAL: zb_put_real(b, json_real_value(v)); break;
    case JSON_TRUE: zb_sbuf_putc(b, '1'); break;
    case JSON_FALSE: zb_sbuf_putc(b, '0'); break;
    case JSON_NULL: break;
    case JSON_ARRAY:
    case JSON_OBJECT: /* not a leaf of a flattened run; kept for completeness */
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

/* The meta's cell for identity column i: a string as is, an array of
 * strings (the hosts) joined by spaces, anything else empty. */
static void zb_put_meta_cell(zb_sbuf *b, const json_t *meta, int i) {
    const json_t *v = json_object_get(meta, zb_csv_meta_columns[i].key);
    if (json_is_string(v)) {
        zb_put_csv_text(b, json_string_value(v), json_string_length(v));
        return;
    }
    if (!json_is_array(v)) return;
    zb_sbuf joined = {NULL, 0, 0, ZB_OK};
    for (size_t k = 0; k < json_array_size(v); k++) {
        const char *s = json_string_value(json_array_get(v, k));
        if (!s) continue;
        if (joined.len) zb_sbuf_putc(&joined, ' ');
        zb_sbuf_puts(&joined, s);
    }
    if (joined.err != ZB_OK && b->err == ZB_OK) b->err = joined.err;
    if (joined.p) zb_put_csv_text(b, joined.p, joined.len);
    free(joined.p);
}

/* Appends one line: the header names when `flat` is NULL, else the cells of
 * that flattened run, over the identity columns, then `top`, then `metrics`. */
static void zb_put_csv_line(zb_sbuf *b, const json_t *meta, const json_t *top, const json_t *metrics,
                            const json_t *flat) {
    for (int i = 0; i < ZB_CSV_N_META; i++) {
        if (i) zb_sbuf_putc(b, ',');
        if (!flat) zb_sbuf_puts(b, zb_csv_meta_columns[i].column);
        else zb_put_meta_cell(b, meta, i);
    }
    const json_t *sets[2] = {top, metrics};
    for (int i = 0; i < 2; i++) {
        const char *key;
        json_t *unused;
        json_object_foreach((json_t *)sets[i], key, unused) {
            zb_sbuf_putc(b, ',');
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

/* Flattens every run into `flats` and gathers the column sets: the declared
 * columns first, in their order, then any other a run has, first seen first. */
static zb_status zb_csv_prepare(const zb_report *r, json_t *flats, json_t *top, json_t *metrics) {
    ZB_TRY(zb_collect_columns(zb_report_csv_columns(r), top, metrics));
    for (size_t i = 0; i < zb_report_n_runs(r); i++) {
        json_t *flat = json_object();
        if (!flat || json_array_append_new(flats, flat) != 0)
            return ZB_FAIL(ZB_ERR_NOMEM, "report: out of memory flattening run %zu", i);
        ZB_TRY(zb_flatten(flat, NULL, zb_report_run(r, i), 0));
        ZB_TRY(zb_collect_columns(flat, top, metrics));
    }
    return ZB_OK;
}

/* Renders the whole CSV text into `b`. */
static zb_status zb_csv_render(const zb_report *r, zb_sbuf *b) {
    json_t *flats = json_array();
    json_t *top = json_object();
    json_t *metrics = json_object();
    const json_t *meta = json_object_get(zb_report_doc(r), "meta");
    zb_status s = ZB_OK;
    if (!flats || !top || !metrics)
        s = ZB_FAIL(ZB_ERR_NOMEM, "report: out of memory preparing CSV");
    if (s == ZB_OK) s = zb_csv_prepare(r, flats, top, metrics);
    if (s == ZB_OK && json_array_size(flats) > 0) {
        zb_put_csv_line(b, meta, top, metrics, NULL);
        for (size_t i = 0; i < json_array_size(flats); i++)
            zb_put_csv_line(b, meta, top, metrics, json_array_get(flats, i));
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
