/* Aligned text tables for stdout (see table.h for the layout). */
#include "table.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct zb_table_col {
    char *header;
    char *unit_text; /* "(unit)" or "" */
    zb_align align;
} zb_table_col;

typedef struct zb_table_group {
    char *title;
    int first, n;
} zb_table_group;

typedef struct zb_table_row {
    char **cells; /* n entries, NULL = empty */
    int n;
} zb_table_row;

struct zb_table {
    zb_table_col *cols;
    int n_cols, cap_cols;
    zb_table_group *groups;
    int n_groups, cap_groups;
    zb_table_row *rows;
    int n_rows, cap_rows;
};

/* A growable line of output text. */
typedef struct zb_line {
    char *p;
    size_t len, cap;
    bool oom;
} zb_line;

/* ---- helpers --------------------------------------------------------------------- */

/* Makes room for `need` elements of `elem` bytes in *p (capacity *cap).
 * Returns false when out of memory (and leaves *p as it was). */
static bool zb_grow(void **p, int *cap, int need, size_t elem) {
    if (need <= *cap) return true;
    int cap2 = *cap ? *cap : 8;
    while (cap2 < need) cap2 *= 2;
    void *q = realloc(*p, (size_t)cap2 * elem);
    if (!q) return false;
    *p = q;
    *cap = cap2;
    return true;
}

static char *zb_strdup_or_empty(const char *s) {
    if (!s) s = "";
    size_t n = strlen(s) + 1;
    char *d = (char *)malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* Display width: UTF-8 code points (continuation bytes do not count). */
static size_t zb_text_width(const char *s) {
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) w++;
    return w;
}

static void zb_line_putn(zb_line *l, const char *s, size_t n) {
    if (l->oom) return;
    if (l->len + n + 1 > l->cap) {
        size_t cap = l->cap ? l->cap : 128;
        while (l->len + n + 1 > cap) cap *= 2;
        char *p = (char *)realloc(l->p, cap);
        if (!p) {
            l->oom = true;
            return;
        }
        l->p = p;
        l->cap = cap;
    }
    memcpy(l->p + l->len, s, n);
    l->len += n;
    l->p[l->len] = '\0';
}

static void zb_line_spaces(zb_line *l, size_t n) {
    for (size_t i = 0; i < n; i++) zb_line_putn(l, " ", 1);
}

/* `s` padded to `width` with the given alignment. */
static void zb_line_cell(zb_line *l, const char *s, size_t width, zb_align align) {
    size_t w = zb_text_width(s);
    size_t pad = width > w ? width - w : 0;
    if (align == ZB_ALIGN_RIGHT) zb_line_spaces(l, pad);
    zb_line_putn(l, s, strlen(s));
    if (align != ZB_ALIGN_RIGHT) zb_line_spaces(l, pad);
}

/* ---- building -------------------------------------------------------------------- */

zb_table *zb_table_new(void) {
    zb_table *t = (zb_table *)calloc(1, sizeof *t);
    if (!t) ZB_FAIL(ZB_ERR_NOMEM, "table: out of memory");
    return t;
}

static void zb_table_row_free(zb_table_row *r) {
    for (int c = 0; c < r->n; c++) free(r->cells[c]);
    free(r->cells);
}

void zb_table_free(zb_table *t) {
    if (!t) return;
    for (int c = 0; c < t->n_cols; c++) {
        free(t->cols[c].header);
        free(t->cols[c].unit_text);
    }
    for (int g = 0; g < t->n_groups; g++) free(t->groups[g].title);
    for (int r = 0; r < t->n_rows; r++) zb_table_row_free(&t->rows[r]);
    free(t->cols);
    free(t->groups);
    free(t->rows);
    free(t);
}

/* "(unit)" or "" for none, malloc'ed. */
static char *zb_unit_text(const char *unit) {
    if (!unit || !unit[0]) return zb_strdup_or_empty("");
    size_t n = strlen(unit) + 3;
    char *s = (char *)malloc(n);
    if (s) snprintf(s, n, "(%s)", unit);
    return s;
}

zb_status zb_table_add_column(zb_table *t, const char *header, const char *unit, zb_align align) {
    if (!t) return ZB_FAIL(ZB_ERR_INVALID, "table: no table");
    if (align != ZB_ALIGN_LEFT && align != ZB_ALIGN_RIGHT)
        return ZB_FAIL(ZB_ERR_INVALID, "table: column '%s': alignment %d is not left or right",
                       header ? header : "", (int)align);
    if (!zb_grow((void **)&t->cols, &t->cap_cols, t->n_cols + 1, sizeof *t->cols))
        return ZB_FAIL(ZB_ERR_NOMEM, "table: out of memory adding a column");
    zb_table_col col = {zb_strdup_or_empty(header), zb_unit_text(unit), align};
    if (!col.header || !col.unit_text) {
        free(col.header);
        free(col.unit_text);
        return ZB_FAIL(ZB_ERR_NOMEM, "table: out of memory adding a column");
    }
    t->cols[t->n_cols++] = col;
    return ZB_OK;
}

static bool zb_groups_overlap(const zb_table *t, int first, int n) {
    for (int g = 0; g < t->n_groups; g++) {
        const zb_table_group *o = &t->groups[g];
        if (first < o->first + o->n && o->first < first + n) return true;
    }
    return false;
}

zb_status zb_table_add_group(zb_table *t, const char *title, int first_col, int n_cols) {
    if (!t) return ZB_FAIL(ZB_ERR_INVALID, "table: no table");
    if (first_col < 0 || n_cols < 1 || first_col >= t->n_cols || n_cols > t->n_cols - first_col)
        return ZB_FAIL(ZB_ERR_INVALID,
                       "table: group '%s' spans columns %d..%d; the table has columns 0..%d",
                       title ? title : "", first_col, first_col + n_cols - 1, t->n_cols - 1);
    if (zb_groups_overlap(t, first_col, n_cols))
        return ZB_FAIL(ZB_ERR_INVALID, "table: group '%s' overlaps another group", title ? title : "");
    if (!zb_grow((void **)&t->groups, &t->cap_groups, t->n_groups + 1, sizeof *t->groups))
        return ZB_FAIL(ZB_ERR_NOMEM, "table: out of memory adding a group");
    zb_table_group g = {zb_strdup_or_empty(title), first_col, n_cols};
    if (!g.title) return ZB_FAIL(ZB_ERR_NOMEM, "table: out of memory adding a group");
    t->groups[t->n_groups++] = g;
    return ZB_OK;
}

zb_status zb_table_add_row(zb_table *t) {
    if (!t) return ZB_FAIL(ZB_ERR_INVALID, "table: no table");
    if (!zb_grow((void **)&t->rows, &t->cap_rows, t->n_rows + 1, sizeof *t->rows))
        return ZB_FAIL(ZB_ERR_NOMEM, "table: out of memory adding a row");
    t->rows[t->n_rows].cells = NULL;
    t->rows[t->n_rows].n = 0;
    t->n_rows++;
    return ZB_OK;
}

/* printf into a new malloc'ed string; NULL when out of memory. */
static char *zb_vformat(const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) return NULL;
    char *s = (char *)malloc((size_t)n + 1);
    if (s) vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

/* Makes row `r` hold at least `n` cells (new ones empty). */
static bool zb_row_reserve(zb_table_row *r, int n) {
    if (n <= r->n) return true;
    char **cells = (char **)realloc(r->cells, (size_t)n * sizeof *cells);
    if (!cells) return false;
    for (int c = r->n; c < n; c++) cells[c] = NULL;
    r->cells = cells;
    r->n = n;
    return true;
}

zb_status zb_table_set(zb_table *t, int col, const char *fmt, ...) {
    if (!t || t->n_rows == 0) return ZB_FAIL(ZB_ERR_INVALID, "table: set cell %d before any row", col);
    if (col < 0 || col >= t->n_cols)
        return ZB_FAIL(ZB_ERR_INVALID, "table: column %d does not exist (the table has %d)", col, t->n_cols);
    zb_table_row *r = &t->rows[t->n_rows - 1];
    if (!zb_row_reserve(r, t->n_cols)) return ZB_FAIL(ZB_ERR_NOMEM, "table: out of memory setting a cell");
    va_list ap;
    va_start(ap, fmt);
    char *s = zb_vformat(fmt ? fmt : "", ap);
    va_end(ap);
    if (!s) return ZB_FAIL(ZB_ERR_NOMEM, "table: cannot format cell %d", col);
    free(r->cells[col]);
    r->cells[col] = s;
    return ZB_OK;
}

int zb_table_n_cols(const zb_table *t) { return t ? t->n_cols : 0; }

int zb_table_n_rows(const zb_table *t) { return t ? t->n_rows : 0; }

/* ---- printing -------------------------------------------------------------------- */

static const char *zb_cell_text(const zb_table_row *r, int c) {
    return c < r->n && r->cells[c] ? r->cells[c] : "";
}

static size_t zb_span_width(const size_t *w, int first, int n) {
    size_t s = (size_t)(n - 1) * ZB_TABLE_GAP;
    for (int c = first; c < first + n; c++) s += w[c];
    return s;
}

/* Column widths: widest of header, "(unit)" and cells, then widened so
 * every group title fits over its span. */
static void zb_table_widths(const zb_table *t, size_t *w) {
    for (int c = 0; c < t->n_cols; c++) {
        w[c] = zb_text_width(t->cols[c].header);
        size_t u = zb_text_width(t->cols[c].unit_text);
        if (u > w[c]) w[c] = u;
        for (int r = 0; r < t->n_rows; r++) {
            size_t x = zb_text_width(zb_cell_text(&t->rows[r], c));
            if (x > w[c]) w[c] = x;
        }
    }
    for (int g = 0; g < t->n_groups; g++) {
        const zb_table_group *gr = &t->groups[g];
        size_t title = zb_text_width(gr->title), span = zb_span_width(w, gr->first, gr->n);
        if (title <= span) continue;
        size_t extra = title - span, n = (size_t)gr->n;
        for (size_t i = 0; i < n; i++) w[gr->first + (int)i] += extra / n + (i < extra % n ? 1 : 0);
    }
}

/* Trims trailing spaces, writes the line and a newline, and empties it. */
static bool zb_line_flush(zb_line *l, FILE *f) {
    if (l->oom) return false;
    while (l->len > 0 && l->p[l->len - 1] == ' ') l->len--;
    bool ok = fwrite(l->p ? l->p : "", 1, l->len, f) == l->len && fputc('\n', f) != EOF;
    l->len = 0;
    return ok;
}

static void zb_line_gap(zb_line *l, int c, size_t lead_w) {
    if (c > 0 || lead_w > 0) zb_line_spaces(l, ZB_TABLE_GAP);
}

static const zb_table_group *zb_group_at(const zb_table *t, int c) {
    for (int g = 0; g < t->n_groups; g++)
        if (t->groups[g].first == c) return &t->groups[g];
    return NULL;
}

static void zb_line_groups(zb_line *l, const zb_table *t, const size_t *w, size_t lead_w) {
    for (int c = 0; c < t->n_cols;) {
        const zb_table_group *g = zb_group_at(t, c);
        zb_line_gap(l, c, lead_w);
        if (!g) {
            zb_line_spaces(l, w[c++]);
            continue;
        }
        size_t span = zb_span_width(w, g->first, g->n), title = zb_text_width(g->title);
        size_t left = (span - title) / 2;
        zb_line_spaces(l, left);
        zb_line_putn(l, g->title, strlen(g->title));
        zb_line_spaces(l, span - title - left);
        c += g->n;
    }
}

/* kind 0: headers, 1: units, 2: row `r`. */
static void zb_line_columns(zb_line *l, const zb_table *t, const size_t *w, size_t lead_w, int kind, int r) {
    for (int c = 0; c < t->n_cols; c++) {
        const char *s = kind == 0 ? t->cols[c].header
                        : kind == 1 ? t->cols[c].unit_text
                                    : zb_cell_text(&t->rows[r], c);
        zb_line_gap(l, c, lead_w);
        zb_line_cell(l, s, w[c], t->cols[c].align);
    }
}

static bool zb_table_has_units(const zb_table *t) {
    for (int c = 0; c < t->n_cols; c++)
        if (t->cols[c].unit_text[0]) return true;
    return false;
}

/* Renders and writes every line; false on a write or memory error. */
static bool zb_table_emit(const zb_table *t, FILE *f, const char *prefix, const size_t *w) {
    zb_line l = {NULL, 0, 0, false};
    size_t lead_w = zb_text_width(prefix);
    bool ok = true;
    if (t->n_groups > 0) {
        zb_line_putn(&l, prefix, strlen(prefix));
        zb_line_groups(&l, t, w, lead_w);
        ok = ok && zb_line_flush(&l, f);
    }
    for (int kind = 0; kind < 2; kind++) {
        if (kind == 1 && !zb_table_has_units(t)) continue;
        zb_line_putn(&l, prefix, strlen(prefix));
        zb_line_columns(&l, t, w, lead_w, kind, 0);
        ok = ok && zb_line_flush(&l, f);
    }
    for (int r = 0; r < t->n_rows; r++) {
        zb_line_spaces(&l, lead_w);
        zb_line_columns(&l, t, w, lead_w, 2, r);
        ok = ok && zb_line_flush(&l, f);
    }
    ok = ok && !l.oom;
    free(l.p);
    return ok;
}

zb_status zb_table_print(const zb_table *t, FILE *f, const char *prefix) {
    if (!t || !f) return ZB_FAIL(ZB_ERR_INVALID, "table: nothing to print or nowhere to print it");
    if (!prefix) prefix = "";
    size_t *w = (size_t *)calloc((size_t)t->n_cols + 1, sizeof *w);
    if (!w) return ZB_FAIL(ZB_ERR_NOMEM, "table: out of memory printing");
    zb_table_widths(t, w);
    errno = 0;
    bool ok = zb_table_emit(t, f, prefix, w);
    int err = errno;
    free(w);
    if (!ok) return ZB_FAIL(ZB_ERR_IO, "table: cannot write the table: %s", err ? strerror(err) : "write error");
    return ZB_OK;
}
