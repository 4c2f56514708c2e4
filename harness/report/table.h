/* Aligned text tables for stdout, in the style of nccl-tests.
 *
 *   zb_table *t = zb_table_new();
 *   zb_table_add_column(t, "size", "B", ZB_ALIGN_RIGHT);
 *   zb_table_add_column(t, "time", "us", ZB_ALIGN_RIGHT);
 *   zb_table_add_group(t, "out-of-place", 1, 1);
 *   zb_table_add_row(t);
 *   zb_table_set(t, 0, "%zu", size);
 *   zb_table_set(t, 1, "%.2f", time_us);
 *   zb_table_print(t, stdout, "#");
 *   zb_table_free(t);
 *
 * prints
 *
 *   #         out-of-place
 *   #   size          time
 *   #    (B)          (us)
 *      65536         12.30
 *
 * Layout: every line starts with the prefix (header lines) or as many spaces
 * (data rows); columns are separated by ZB_TABLE_GAP spaces (also between the
 * prefix and the first column when the prefix is not empty); each column is
 * as wide as its widest cell, header or "(unit)"; a cell, header and unit
 * take the column's alignment. Header lines, top to bottom: group titles
 * (only when there are groups), column names, units in parentheses (only
 * when some column has a unit). A group title is centered over the span of
 * its columns (an odd space goes to the right); when it is wider than the
 * span, the extra width is spread over the group's columns. Trailing spaces
 * are trimmed from every line. Widths count UTF-8 code points, so "µs"
 * is two wide; ASCII is advised. */
#ifndef ZB_TABLE_H
#define ZB_TABLE_H

#include <stdio.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_TABLE_GAP 2

typedef enum zb_align { ZB_ALIGN_LEFT = 0, ZB_ALIGN_RIGHT = 1 } zb_align;

typedef struct zb_table zb_table;

/* A new empty table, or NULL when out of memory (error recorded). */
zb_table *zb_table_new(void);
void zb_table_free(zb_table *t);

/* Appends a column; its index is the number of columns before the call.
 * `unit` may be NULL or "" for none. Columns may be added after rows: the
 * earlier rows read as empty in them. */
zb_status zb_table_add_column(zb_table *t, const char *header, const char *unit, zb_align align);

/* A title over columns first_col .. first_col + n_cols - 1, which must
 * exist already; groups must not overlap (ZB_ERR_INVALID otherwise). */
zb_status zb_table_add_group(zb_table *t, const char *title, int first_col, int n_cols);

/* Starts a new row; zb_table_set then fills its cells. Unset cells are empty. */
zb_status zb_table_add_row(zb_table *t);

/* Sets cell `col` of the current (last added) row, printf-style; setting a
 * cell again replaces it. ZB_ERR_INVALID without a row or for a bad column. */
zb_status zb_table_set(zb_table *t, int col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Prints the header lines with `prefix` (NULL reads as "") and then the rows
 * (see the layout above). ZB_ERR_IO when the stream reports a write error. */
zb_status zb_table_print(const zb_table *t, FILE *f, const char *prefix);

int zb_table_n_cols(const zb_table *t);
int zb_table_n_rows(const zb_table *t);

#ifdef __cplusplus
}
#endif
#endif
