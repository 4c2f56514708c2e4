/* Rows described once (harness/report/row.h): every field of a description
 * shows in each output it names, and only there. For a description with
 * every kind of field (integer, real, text, bool, null, NaN, a fixed cell, a
 * divisor, a sign, a pinned column, a group, a nested object, metrics, one
 * of two JSON runs) and two rows: each table column's header and cell are in
 * the printed table, in column order; each JSON field is in the runs it names
 * with its value, and absent from the others; each JSON field's CSV column is
 * in the CSV header with the same value as the JSON; an absent field is in
 * no JSON run but keeps its CSV column (empty) in its place, after the
 * run's identity columns. Also: the exact text
 * of a small table, and rows that do not fit the first row's columns. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "row.h"
#include "zb_test.h"

#define N_RUNS 2

/* The row `k`: one of each kind of field. */
static int describe(zb_field *f, int k) {
    zb_field fields[] = {
        {.key = "bench", .kind = ZB_FIELD_TEXT, .s = "demo"},
        {.key = "mode", .tables = 3, .header = "mode", .left = true, .at = 2, .kind = ZB_FIELD_TEXT,
         .s = k ? "prefetch" : "sync"},
        {.key = "stage", .tables = 3, .header = "stage", .at = 1, .kind = ZB_FIELD_INT, .i = 3},
        {.key = "size_bytes", .tables = 1, .header = "size", .unit = "B", .kind = ZB_FIELD_INT, .i = 4096 + k},
        {.key = "layers", .parent = "shape", .kind = ZB_FIELD_INT, .i = 12},
        {.key = "in_place", .runs = 1, .kind = ZB_FIELD_BOOL, .b = false},
        {.key = "in_place", .runs = 2, .kind = ZB_FIELD_BOOL, .b = true},
        {.tables = 1, .header = "redop", .kind = ZB_FIELD_TEXT, .s = "sum"},
        {.key = "time_us", .metric = true, .runs = 1, .tables = 1, .header = "time", .unit = "us",
         .group = "out-of-place", .kind = ZB_FIELD_REAL, .decimals = 1, .d = 12.25 + k},
        {.key = "wrong", .metric = true, .runs = 1, .tables = 1, .header = "#wrong", .group = "out-of-place",
         .na = "N/A", .kind = ZB_FIELD_INT, .null = k == 1, .i = 0},
        {.key = "time_us", .metric = true, .runs = 2, .tables = 1, .header = "time", .unit = "us",
         .group = "in-place", .kind = ZB_FIELD_REAL, .decimals = 1, .d = 13.5},
        {.key = "overhead_pct", .metric = true, .tables = 1, .header = "overhead", .unit = "%",
         .kind = ZB_FIELD_REAL, .decimals = 1, .sign = true, .d = 4.0},
        {.key = "mfu_pct", .metric = true, .tables = 2, .header = "MFU", .unit = "%", .na = "n/m",
         .kind = ZB_FIELD_REAL, .decimals = 2, .d = k ? NAN : 41.5},
        {.key = "hfu_pct", .metric = true, .tables = 2, .header = "HFU", .unit = "%", .cell = "-",
         .kind = ZB_FIELD_REAL, .decimals = 2, .d = 41.5},
        {.key = "param_shard", .metric = true, .parent = "peak_mem_by_tag_bytes", .tables = 2,
         .header = "param_shard", .unit = "MiB", .div = 1048576.0, .decimals = 3, .kind = ZB_FIELD_INT,
         .i = 3 << 20},
        /* not measured here (another backend's, the other schedule's):
         * no JSON key, a CSV column all the same, before loss */
        {.key = "device_used_high_bytes", .metric = true, .absent = true, .kind = ZB_FIELD_INT, .i = 7},
        {.key = "pairs", .metric = true, .parent = "paired", .absent = k == 0, .kind = ZB_FIELD_INT, .i = 5},
        {.key = "loss", .metric = true, .kind = ZB_FIELD_REAL, .d = 2.5},
    };
    int n = (int)(sizeof fields / sizeof fields[0]);
    memcpy(f, fields, sizeof fields);
    return n;
}

static char *print_table(const zb_rows *rows, int t) {
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    ZB_CHECK_OK(zb_rows_print(rows, t, mem, "#"));
    fclose(mem);
    return text;
}

/* Line `i` (from 0) of text, into out. */
static void line_of(const char *text, int i, char *out, size_t n) {
    for (; i > 0 && text; i--) {
        text = strchr(text, '\n');
        if (text) text++;
    }
    size_t len = text ? strcspn(text, "\n") : 0;
    snprintf(out, n, "%.*s", (int)len, text ? text : "");
}

/* The table's columns, in order, on the header and row lines. */
static void check_table(const zb_rows *rows, int t, int header_line, int first_row_line) {
    char *text = print_table(rows, t);
    char head[512], line[512];
    line_of(text, header_line, head, sizeof head);
    for (int k = 0; k < 2; k++) {
        zb_field f[32];
        int n = describe(f, k);
        line_of(text, first_row_line + k, line, sizeof line);
        const char *ph = head, *pl = line;
        /* pinned columns lead: stage, mode */
        int order[32], m = 0;
        for (int i = 0; i < n; i++) if ((f[i].tables >> t & 1u) && f[i].at == 1) order[m++] = i;
        for (int i = 0; i < n; i++) if ((f[i].tables >> t & 1u) && f[i].at == 2) order[m++] = i;
        for (int i = 0; i < n; i++) if ((f[i].tables >> t & 1u) && f[i].at == 0) order[m++] = i;
        for (int c = 0; c < m; c++) {
            char cell[64];
            zb_field_cell_text(&f[order[c]], cell, sizeof cell);
            const char *h = strstr(ph, f[order[c]].header);
            ZB_CHECK_MSG(h != NULL, "table %d lacks column '%s' (or out of order): %s", t, f[order[c]].header, head);
            if (h) ph = h + strlen(f[order[c]].header);
            const char *v = cell[0] ? strstr(pl, cell) : pl;
            ZB_CHECK_MSG(v != NULL, "table %d row %d lacks '%s' of '%s': %s", t, k, cell, f[order[c]].header, line);
            if (v) pl = v + strlen(cell);
        }
        for (int i = 0; i < n; i++) { /* a field of no table is in none */
            if ((f[i].tables >> t & 1u) || !f[i].header) continue;
            ZB_CHECK_MSG(strstr(head, f[i].header) == NULL, "table %d shows '%s'", t, f[i].header);
        }
    }
    free(text);
}

static const json_t *json_at(const json_t *run, const zb_field *f) {
    const json_t *o = f->metric ? json_object_get(run, "metrics") : run;
    if (o && f->parent) o = json_object_get(o, f->parent);
    return o ? json_object_get(o, f->key) : NULL;
}

static bool json_matches(const json_t *v, const zb_field *f) {
    if (!v) return false;
    if (f->null || (f->kind == ZB_FIELD_REAL && !isfinite(f->d))) return json_is_null(v);
    switch (f->kind) {
    case ZB_FIELD_INT: return json_is_integer(v) && json_integer_value(v) == f->i;
    case ZB_FIELD_REAL: return json_is_real(v) && json_real_value(v) == f->d;
    case ZB_FIELD_TEXT: return json_is_string(v) && !strcmp(json_string_value(v), f->s);
    case ZB_FIELD_BOOL: return json_is_boolean(v) && json_is_true(v) == f->b;
    case ZB_FIELD_JSON: return f->j ? json_equal(v, f->j) : json_is_null(v);
    }
    return false;
}

/* The CSV text a field's value is written as (report.h). */
static void csv_text(const zb_field *f, char *out, size_t n) {
    if (f->null || (f->kind == ZB_FIELD_REAL && !isfinite(f->d))) snprintf(out, n, "%s", "");
    else if (f->kind == ZB_FIELD_INT) snprintf(out, n, "%lld", (long long)f->i);
    else if (f->kind == ZB_FIELD_REAL) zb_format_double(out, n, f->d);
    else if (f->kind == ZB_FIELD_TEXT) snprintf(out, n, "%s", f->s);
    else snprintf(out, n, "%s", f->b ? "1" : "0");
}

/* Cell `col` (by name) of CSV line `row` (0 = header). */
static bool csv_cell(const char *csv, const char *col, int row, char *out, size_t n) {
    char head[2048], line[2048];
    line_of(csv, 0, head, sizeof head);
    line_of(csv, row, line, sizeof line);
    int idx = -1, i = 0;
    for (char *save = NULL, *tok = strtok_r(head, ",", &save); tok; tok = strtok_r(NULL, ",", &save), i++) {
        if (!strcmp(tok, col)) idx = i;
    }
    if (idx < 0) return false;
    const char *p = line;
    for (int c = 0; c < idx && p; c++) {
        p = strchr(p, ',');
        if (p) p++;
    }
    if (!p) return false;
    snprintf(out, n, "%.*s", (int)strcspn(p, ",\n"), p);
    return true;
}

static void check_json_and_csv(zb_report *report) {
    char dir[] = "/tmp/zb_test_row.XXXXXX", path[128];
    ZB_CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/rows.csv", dir);
    ZB_CHECK_OK(zb_report_write_csv(report, path));
    char *csv = NULL;
    size_t len = 0;
    FILE *in = fopen(path, "r");
    ZB_CHECK(in != NULL && getdelim(&csv, &len, '\0', in) > 0);
    if (in) fclose(in);
    ZB_CHECK(zb_report_n_runs(report) == 2 * N_RUNS);
    for (int k = 0; k < 2; k++) {
        zb_field f[32];
        int n = describe(f, k);
        for (int run = 0; run < N_RUNS; run++) {
            const json_t *o = zb_report_run(report, (size_t)(k * N_RUNS + run));
            for (int i = 0; i < n; i++) {
                if (!f[i].key) continue;
                bool here = !f[i].runs || (f[i].runs >> run & 1u);
                bool other = false; /* a same-key field of the other run */
                for (int j = 0; j < n; j++) other |= j != i && f[j].key && !strcmp(f[j].key, f[i].key) &&
                                                       f[j].metric == f[i].metric && (f[j].runs >> run & 1u);
                const json_t *v = json_at(o, &f[i]);
                if (f[i].absent) {
                    ZB_CHECK_MSG(v == NULL, "row %d run %d: absent '%s' in the JSON", k, run, f[i].key);
                } else if (here) {
                    ZB_CHECK_MSG(json_matches(v, &f[i]), "row %d run %d: JSON '%s' missing or wrong", k, run, f[i].key);
                } else if (!other) {
                    ZB_CHECK_MSG(v == NULL, "row %d run %d: JSON '%s' in a run it does not name", k, run, f[i].key);
                }
                char col[128], want[64], got[64] = "";
                ZB_CHECK(zb_field_csv_column(&f[i], col, sizeof col));
                if (!here) continue;
                if (f[i].absent) want[0] = '\0';
                else csv_text(&f[i], want, sizeof want);
                ZB_CHECK_MSG(csv && csv_cell(csv, col, 1 + k * N_RUNS + run, got, sizeof got) && !strcmp(got, want),
                             "row %d run %d: CSV column %s missing or '%s' (want '%s')", k, run, col, got, want);
            }
        }
    }
    /* The identity columns lead; the absent columns sit where the
     * description puts them, though the first run lacks them. */
    char head[2048];
    line_of(csv ? csv : "", 0, head, sizeof head);
    const char *used = strstr(head, ",metrics.device_used_high_bytes,");
    const char *pairs = strstr(head, ",metrics.paired.pairs,");
    const char *loss = strstr(head, ",metrics.loss");
    ZB_CHECK_MSG(!strncmp(head, "meta.date_utc,meta.git_describe,meta.hosts,meta.command_line,meta.backend,meta.comm,bench,",
                          90), "CSV header: %s", head);
    ZB_CHECK_MSG(used && pairs && loss && used < pairs && pairs < loss, "CSV header: %s", head);
    free(csv);
    unlink(path);
    rmdir(dir);
}

static void test_description(void) {
    zb_report *report = zb_report_new();
    zb_rows *rows = zb_rows_new(report, 2);
    for (int k = 0; k < 2; k++) {
        zb_field f[32];
        int n = describe(f, k);
        ZB_CHECK_OK(zb_rows_add(rows, f, n, N_RUNS));
    }
    ZB_CHECK(zb_rows_count(rows) == 2);
    check_table(rows, 0, 1, 3); /* group titles, headers, units, rows */
    check_table(rows, 1, 0, 2); /* headers, units, rows */
    /* The JSON keys in list order: top level, then metrics. */
    const json_t *run = zb_report_run(report, 0);
    const char *key;
    json_t *v;
    const char *order[] = {"bench", "mode", "stage", "size_bytes", "shape", "in_place", "metrics"};
    int i = 0;
    json_object_foreach((json_t *)run, key, v) {
        ZB_CHECK_MSG(i < 7 && !strcmp(key, order[i]), "JSON key %d is '%s'", i, key);
        i++;
    }
    ZB_CHECK(i == 7);
    check_json_and_csv(report);
    zb_rows_free(rows);
    zb_report_free(report);
}

static void test_exact_text(void) {
    zb_rows *rows = zb_rows_new(NULL, 1);
    for (int k = 0; k < 2; k++) {
        zb_field f[] = {
            {.tables = 1, .header = "size", .unit = "B", .kind = ZB_FIELD_INT, .i = k ? 65536 : 1024},
            {.tables = 1, .header = "time", .unit = "us", .group = "out-of-place", .kind = ZB_FIELD_REAL,
             .decimals = 2, .d = 12.3},
            {.tables = 1, .header = "#wrong", .group = "out-of-place", .na = "N/A", .kind = ZB_FIELD_INT, .null = k},
        };
        ZB_CHECK_OK(zb_rows_add(rows, f, 3, 1));
    }
    char *text = print_table(rows, 0);
    const char *want = "#         out-of-place\n"
                       "#   size   time  #wrong\n"
                       "#    (B)   (us)\n"
                       "    1024  12.30       0\n"
                       "   65536  12.30     N/A\n";
    ZB_CHECK_MSG(text && !strcmp(text, want), "table text:\n%s", text ? text : "(none)");
    free(text);
    zb_rows_free(rows);
}

static void test_bad_rows(void) {
    zb_rows *rows = zb_rows_new(NULL, 1);
    zb_field a[] = {{.tables = 1, .header = "x", .kind = ZB_FIELD_INT}, {.tables = 1, .header = "y"}};
    ZB_CHECK_OK(zb_rows_add(rows, a, 2, 0));
    ZB_CHECK(zb_rows_add(rows, a, 1, 0) == ZB_ERR_INVALID); /* a column missing */
    zb_field b[] = {{.tables = 1, .header = "x"}, {.tables = 1, .header = "z"}};
    ZB_CHECK(zb_rows_add(rows, b, 2, 0) == ZB_ERR_INVALID); /* another column */
    zb_field c[] = {{.tables = 1, .header = "x", .at = 3}, {.tables = 1, .header = "y"}};
    ZB_CHECK(zb_rows_add(rows, c, 2, 0) == ZB_ERR_INVALID); /* pinned past the end */
    zb_field d[] = {{.tables = 2, .header = "x"}};
    ZB_CHECK(zb_rows_add(rows, d, 1, 0) == ZB_ERR_INVALID); /* no table 1 */
    ZB_CHECK(zb_rows_count(rows) == 1);
    zb_rows_free(rows);
    ZB_CHECK(zb_rows_new(NULL, ZB_ROWS_MAX_TABLES + 1) == NULL);
}

/* A JSON field (per-rank arrays): in every JSON run as the same value, with
 * the caller's reference untouched, in no table; NULL is JSON null. */
static void test_json_field(void) {
    zb_report *rep = zb_report_new();
    zb_rows *rows = zb_rows_new(rep, 1);
    json_t *arr = json_pack("[{s:i, s:f}]", "rank", 0, "time_us", 1.5);
    zb_field f[] = {
        {.key = "size_bytes", .tables = 1, .header = "size", .kind = ZB_FIELD_INT, .i = 8},
        {.key = "per_rank", .kind = ZB_FIELD_JSON, .j = arr},
        {.key = "none", .kind = ZB_FIELD_JSON, .j = NULL},
    };
    ZB_CHECK_OK(zb_rows_add(rows, f, 3, 2));
    ZB_CHECK(zb_report_n_runs(rep) == 2);
    for (size_t i = 0; i < 2; i++) {
        const json_t *run = zb_report_run(rep, i);
        ZB_CHECK(json_equal(json_object_get(run, "per_rank"), arr));
        ZB_CHECK(json_is_null(json_object_get(run, "none")));
    }
    ZB_CHECK(arr->refcount == 3); /* ours and one per run */
    char cell[16] = "x";
    zb_field_cell_text(&f[1], cell, sizeof cell);
    ZB_CHECK(cell[0] == '\0');
    zb_rows_free(rows);
    zb_report_free(rep);
    ZB_CHECK(arr->refcount == 1);
    json_decref(arr);
}

int main(void) {
    test_json_field();
    test_description();
    test_exact_text();
    test_bad_rows();
    return zb_test_finish("test_row");
}
