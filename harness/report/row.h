/* One description per output row: a plug-in describes each row once, as a
 * list of fields, and the text tables, the JSON runs and (through them) the
 * CSV are all written from that list.
 *
 * A field is one value with where it shows:
 *   - text tables: `tables` (bit t: a column of table t), the column's
 *     header, unit, group title (consecutive columns with the same title
 *     share one), alignment and number format (decimals, sign, a divisor);
 *   - JSON: `key`, at the run's top level or under "metrics", optionally
 *     inside one nested object (`parent`); `runs` says which of the row's
 *     JSON runs carry it (a collective's table row is two runs: out of place
 *     and in place);
 *   - CSV: the report flattens each JSON run (report.h), so a JSON field's
 *     column is its dotted path, "metrics.time_us" (zb_field_csv_column);
 *     every field's column, an `absent` one's too, is declared to the
 *     report (zb_report_csv_declare), so the CSV's columns are the row
 *     description's whatever a run holds.
 * JSON keys follow the list order; table columns too, except a field that
 * pins its place (`at`) where a table orders its columns differently.
 *
 *   zb_rows *rows = zb_rows_new(report, 1);
 *   zb_field f[] = {
 *       {.key = "size_bytes", .tables = 1, .header = "size", .unit = "B", .kind = ZB_FIELD_INT, .i = n},
 *       {.key = "time_us", .metric = true, .tables = 1, .header = "time", .unit = "us",
 *        .kind = ZB_FIELD_REAL, .decimals = 1, .d = us},
 *   };
 *   zb_rows_add(rows, f, 2, 1);
 *   zb_rows_print(rows, 0, stdout, "#");
 *
 * Every row of a table must describe the same columns. Library code: errors
 * are returned, never printed. */
#ifndef ZB_ROW_H
#define ZB_ROW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "report.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ZB_FIELD_JSON: any JSON value (`j`, borrowed: each JSON run takes its own
 * reference; NULL is JSON null), for arrays such as a run's per-rank
 * figures; it shows in no table. */
typedef enum zb_field_kind { ZB_FIELD_INT = 0, ZB_FIELD_REAL, ZB_FIELD_TEXT, ZB_FIELD_BOOL, ZB_FIELD_JSON } zb_field_kind;

#define ZB_ROWS_MAX_TABLES 4

typedef struct zb_field {
    /* JSON, and so CSV */
    const char *key;    /* NULL: not in the JSON */
    bool metric;        /* under the run's "metrics" */
    const char *parent; /* inside this object (under the run or metrics); NULL: none */
    unsigned runs;      /* bit i: in the row's JSON run i; 0: in every run */
    bool absent;        /* not in the JSON (what this backend or mode does not
                         * have), but a CSV column all the same, its cells empty:
                         * the CSVs of every backend share one column set */
    /* text tables */
    unsigned tables;    /* bit t: a column of table t; 0: in no table */
    const char *header, *unit, *group;
    bool left;          /* left-aligned (else right) */
    int at;             /* 1-based column in its tables; 0: the next free one */
    int decimals;       /* a real's digits after the point */
    bool sign;          /* a real's sign also when positive ("%+.1f") */
    double div;         /* the table shows the value divided by this (0: as is) */
    const char *na;     /* the table's text for a null or NaN value (NULL: as printf prints NaN) */
    const char *cell;   /* the table's text instead of the value (NULL: the value) */
    /* the value */
    zb_field_kind kind;
    bool null;          /* no value: JSON null */
    int64_t i;
    double d;           /* NaN and infinity are JSON null */
    const char *s;
    bool b;
    json_t *j;
} zb_field;

typedef struct zb_rows zb_rows;

/* A set of rows with n_tables text tables (at most ZB_ROWS_MAX_TABLES);
 * JSON runs go to `report` (NULL: none). NULL when out of memory. */
zb_rows *zb_rows_new(zb_report *report, int n_tables);
void zb_rows_free(zb_rows *rows);

/* Adds one row: a row to every table a field shows in, and n_runs JSON runs
 * to the report. ZB_ERR_INVALID when the fields do not describe the columns
 * an earlier row gave a table, or a pinned column does not fit. */
zb_status zb_rows_add(zb_rows *rows, const zb_field *fields, int n_fields, int n_runs);

/* Prints table `table` (table.h layout, `prefix` before header lines). */
zb_status zb_rows_print(const zb_rows *rows, int table, FILE *f, const char *prefix);

/* Rows added so far. */
int zb_rows_count(const zb_rows *rows);

/* The CSV column of a field's JSON key ("metrics.parent.key") into out;
 * false when the field is not in the JSON. */
bool zb_field_csv_column(const zb_field *f, char *out, size_t n);

/* The table text of a field's value into out (what a cell shows). */
void zb_field_cell_text(const zb_field *f, char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
