/* Rows described once, written to text tables and JSON runs (see row.h). */
#include "row.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

#define ZB_ROW_MAX_COLS 64

struct zb_rows {
    zb_report *report;
    int n_tables, n_rows;
    zb_table *tables[ZB_ROWS_MAX_TABLES];
    bool made[ZB_ROWS_MAX_TABLES]; /* columns made (from the first row) */
    char heads[ZB_ROWS_MAX_TABLES][ZB_ROW_MAX_COLS][48]; /* their headers, to check later rows */
};

zb_rows *zb_rows_new(zb_report *report, int n_tables) {
    if (n_tables < 0 || n_tables > ZB_ROWS_MAX_TABLES) {
        ZB_FAIL(ZB_ERR_INVALID, "rows: %d tables, at most %d", n_tables, ZB_ROWS_MAX_TABLES);
        return NULL;
    }
    zb_rows *r = (zb_rows *)calloc(1, sizeof *r);
    if (!r) {
        ZB_FAIL(ZB_ERR_NOMEM, "rows: out of memory");
        return NULL;
    }
    r->report = report;
    r->n_tables = n_tables;
    for (int t = 0; t < n_tables; t++) {
        r->tables[t] = zb_table_new();
        if (!r->tables[t]) {
            zb_rows_free(r);
            return NULL;
        }
    }
    return r;
}

void zb_rows_free(zb_rows *rows) {
    if (!rows) return;
    for (int t = 0; t < rows->n_tables; t++) zb_table_free(rows->tables[t]);
    free(rows);
}

int zb_rows_count(const zb_rows *rows) { return rows ? rows->n_rows : 0; }

/* ---- values ------------------------------------------------------------------ */

void zb_field_cell_text(const zb_field *f, char *out, size_t n) {
    if (f->cell) {
        snprintf(out, n, "%s", f->cell);
        return;
    }
    if (f->null) {
        snprintf(out, n, "%s", f->na ? f->na : "");
        return;
    }
    switch (f->kind) {
    case ZB_FIELD_INT:
        if (f->div == 0) {
            snprintf(out, n, "%lld", (long long)f->i);
            return;
        }
        break;
    case ZB_FIELD_REAL: break;
    case ZB_FIELD_TEXT: snprintf(out, n, "%s", f->s ? f->s : ""); return;
    case ZB_FIELD_BOOL: snprintf(out, n, "%s", f->b ? "true" : "false"); return;
    case ZB_FIELD_JSON: snprintf(out, n, "%s", ""); return;
    }
    double v = f->kind == ZB_FIELD_INT ? (double)f->i : f->d;
    if (f->div != 0) v /= f->div;
    if (isnan(v) && f->na) snprintf(out, n, "%s", f->na);
    else if (f->sign) snprintf(out, n, "%+.*f", f->decimals, v);
    else snprintf(out, n, "%.*f", f->decimals, v);
}

static json_t *json_value(const zb_field *f) {
    if (f->null) return json_null();
    switch (f->kind) {
    case ZB_FIELD_INT: return json_integer((json_int_t)f->i);
    case ZB_FIELD_REAL: return zb_json_real_or_null(f->d);
    case ZB_FIELD_TEXT: return json_string(f->s ? f->s : "");
    case ZB_FIELD_BOOL: return json_boolean(f->b);
    case ZB_FIELD_JSON: return f->j ? json_incref(f->j) : json_null();
    }
    return json_null();
}

bool zb_field_csv_column(const zb_field *f, char *out, size_t n) {
    if (!f->key) return false;
    snprintf(out, n, "%s%s%s%s", f->metric ? "metrics." : "", f->parent ? f->parent : "", f->parent ? "." : "",
             f->key);
    return true;
}

/* ---- tables ------------------------------------------------------------------ */

/* The fields of table t in column order: cols[c] = index into fields. */
static zb_status columns_of(const zb_field *fields, int n_fields, int t, int *cols, int *n_cols) {
    int n = 0;
    for (int i = 0; i < n_fields; i++) n += (fields[i].tables >> t) & 1u;
    if (n > ZB_ROW_MAX_COLS) return ZB_FAIL(ZB_ERR_INVALID, "rows: table %d has %d columns, at most %d", t, n, ZB_ROW_MAX_COLS);
    for (int c = 0; c < n; c++) cols[c] = -1;
    for (int i = 0; i < n_fields; i++) { /* pinned first */
        if (!((fields[i].tables >> t) & 1u) || fields[i].at == 0) continue;
        int c = fields[i].at - 1;
        if (c < 0 || c >= n || cols[c] >= 0) {
            return ZB_FAIL(ZB_ERR_INVALID, "rows: column %d of table %d ('%s') is taken or out of range", fields[i].at,
                           t, fields[i].header ? fields[i].header : "");
        }
        cols[c] = i;
    }
    int next = 0;
    for (int i = 0; i < n_fields; i++) {
        if (!((fields[i].tables >> t) & 1u) || fields[i].at != 0) continue;
        while (cols[next] >= 0) next++;
        cols[next] = i;
    }
    *n_cols = n;
    return ZB_OK;
}

static const char *text_or_empty(const char *s) { return s ? s : ""; }

static zb_status make_columns(zb_rows *rows, int t, const zb_field *fields, const int *cols, int n) {
    zb_table *tb = rows->tables[t];
    for (int c = 0; c < n; c++) {
        const zb_field *f = &fields[cols[c]];
        snprintf(rows->heads[t][c], sizeof rows->heads[t][c], "%s", text_or_empty(f->header));
        ZB_TRY(zb_table_add_column(tb, text_or_empty(f->header), f->unit, f->left ? ZB_ALIGN_LEFT : ZB_ALIGN_RIGHT));
    }
    for (int c = 0; c < n;) {
        const char *g = fields[cols[c]].group;
        int span = 1;
        while (g && c + span < n && fields[cols[c + span]].group && !strcmp(fields[cols[c + span]].group, g)) span++;
        if (g) ZB_TRY(zb_table_add_group(tb, g, c, span));
        c += span;
    }
    return ZB_OK;
}

/* The same columns as the first row's: count and headers. */
static zb_status same_columns(const zb_rows *rows, int t, const zb_field *fields, const int *cols, int n) {
    if (n != zb_table_n_cols(rows->tables[t])) {
        return ZB_FAIL(ZB_ERR_INVALID, "rows: a row gives table %d %d columns, the first row %d", t, n,
                       zb_table_n_cols(rows->tables[t]));
    }
    for (int c = 0; c < n; c++) {
        const char *h = text_or_empty(fields[cols[c]].header);
        if (strncmp(h, rows->heads[t][c], sizeof rows->heads[t][c] - 1)) {
            return ZB_FAIL(ZB_ERR_INVALID, "rows: column %d of table %d is '%s' in a row, '%s' in the first", c, t, h,
                           rows->heads[t][c]);
        }
    }
    return ZB_OK;
}

static zb_status add_table_row(zb_rows *rows, int t, const zb_field *fields, int n_fields) {
    int cols[ZB_ROW_MAX_COLS], n = 0;
    ZB_TRY(columns_of(fields, n_fields, t, cols, &n));
    if (n == 0) return ZB_OK;
    zb_table *tb = rows->tables[t];
    if (!rows->made[t]) {
        ZB_TRY(make_columns(rows, t, fields, cols, n));
        rows->made[t] = true;
    } else {
        ZB_TRY(same_columns(rows, t, fields, cols, n));
    }
    ZB_TRY(zb_table_add_row(tb));
    for (int c = 0; c < n; c++) {
        char text[128];
        zb_field_cell_text(&fields[cols[c]], text, sizeof text);
        ZB_TRY(zb_table_set(tb, c, "%s", text));
    }
    return ZB_OK;
}

zb_status zb_rows_print(const zb_rows *rows, int table, FILE *f, const char *prefix) {
    if (!rows || table < 0 || table >= rows->n_tables) return ZB_FAIL(ZB_ERR_INVALID, "rows: no table %d", table);
    return zb_table_print(rows->tables[table], f, prefix);
}

/* ---- JSON runs ----------------------------------------------------------------- */

/* Object `key` of `o`, made (at the end) when missing. */
static json_t *child(json_t *o, const char *key) {
    json_t *c = json_object_get(o, key);
    if (!c) {
        c = json_object();
        json_object_set_new(o, key, c);
    }
    return c;
}

/* The JSON run `run` of a row; a skeleton (values null but JSON ones) also holds the
 * absent fields, and declares the CSV columns of all of them instead of
 * becoming a run. */
static zb_status add_json_run(zb_rows *rows, const zb_field *fields, int n_fields, int run, bool skeleton) {
    json_t *o = json_object();
    if (!o) return ZB_FAIL(ZB_ERR_NOMEM, "rows: out of memory for a JSON run");
    for (int i = 0; i < n_fields; i++) {
        const zb_field *f = &fields[i];
        if (!f->key || (f->runs && !((f->runs >> run) & 1u)) || (f->absent && !skeleton)) continue;
        json_t *at = f->metric ? child(o, "metrics") : o;
        if (at && f->parent) at = child(at, f->parent);
        /* a skeleton's JSON values keep their shape: an array has no column */
        json_t *v = skeleton && f->kind != ZB_FIELD_JSON ? json_null() : json_value(f);
        if (!at || json_object_set_new(at, f->key, v) != 0) {
            json_decref(o);
            return ZB_FAIL(ZB_ERR_NOMEM, "rows: out of memory setting '%s'", f->key);
        }
    }
    if (!skeleton) {
        zb_report_add_run(rows->report, o);
        return ZB_OK;
    }
    zb_status s = zb_report_csv_declare(rows->report, o);
    json_decref(o);
    return s;
}

zb_status zb_rows_add(zb_rows *rows, const zb_field *fields, int n_fields, int n_runs) {
    if (!rows) return ZB_FAIL(ZB_ERR_INVALID, "rows: no row set");
    for (int i = 0; i < n_fields; i++) {
        if (fields[i].tables >> rows->n_tables) {
            return ZB_FAIL(ZB_ERR_INVALID, "rows: field '%s' names a table past the %d there are",
                           fields[i].key ? fields[i].key : text_or_empty(fields[i].header), rows->n_tables);
        }
    }
    for (int t = 0; t < rows->n_tables; t++) ZB_TRY(add_table_row(rows, t, fields, n_fields));
    for (int k = 0; rows->report && k < n_runs; k++) {
        ZB_TRY(add_json_run(rows, fields, n_fields, k, true));
        ZB_TRY(add_json_run(rows, fields, n_fields, k, false));
    }
    rows->n_rows++;
    return ZB_OK;
}
