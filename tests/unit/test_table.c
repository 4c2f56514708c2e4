/* Unit tests for the aligned text table (harness/report/table.c): exact output of
 * small tables, columns widened by long cells, group titles centered over
 * their columns and widening them when too long, and bad input refused. */
#include <stdlib.h>
#include <string.h>

#include "table.h"
#include "zb_test.h"

/* Prints `t` with `prefix` into a string (malloc'ed). */
static char *render(const zb_table *t, const char *prefix) {
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f) return NULL;
    zb_status s = zb_table_print(t, f, prefix);
    fclose(f);
    if (s != ZB_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

static void check_render(const zb_table *t, const char *prefix, const char *want, const char *what) {
    char *got = render(t, prefix);
    ZB_CHECK_MSG(got && strcmp(got, want) == 0, "%s: got\n%s\nwant\n%s", what, got ? got : "(null)", want);
    free(got);
}

/* Units on a second header line, a long cell widening its column, left and
 * right alignment, "#" prefix with data rows indented to match. */
static void test_simple(void) {
    zb_table *t = zb_table_new();
    ZB_CHECK(t != NULL);
    ZB_CHECK_OK(zb_table_add_column(t, "size", "B", ZB_ALIGN_RIGHT));
    ZB_CHECK_OK(zb_table_add_column(t, "name", NULL, ZB_ALIGN_LEFT));
    ZB_CHECK_OK(zb_table_add_column(t, "time", "us", ZB_ALIGN_RIGHT));
    ZB_CHECK_OK(zb_table_add_row(t));
    ZB_CHECK_OK(zb_table_set(t, 0, "%d", 1024));
    ZB_CHECK_OK(zb_table_set(t, 1, "%s", "ab"));
    ZB_CHECK_OK(zb_table_set(t, 2, "%.2f", 1.5));
    ZB_CHECK_OK(zb_table_add_row(t));
    ZB_CHECK_OK(zb_table_set(t, 0, "%d", 8));
    ZB_CHECK_OK(zb_table_set(t, 1, "%s", "longer-name"));
    ZB_CHECK_OK(zb_table_set(t, 2, "%.2f", 12.25));
    ZB_CHECK(zb_table_n_cols(t) == 3 && zb_table_n_rows(t) == 2);
    check_render(t, "#",
                 "#  size  name          time\n"
                 "#   (B)                (us)\n"
                 "   1024  ab            1.50\n"
                 "      8  longer-name  12.25\n",
                 "simple table");
    check_render(t, NULL,
                 "size  name          time\n"
                 " (B)                (us)\n"
                 "1024  ab            1.50\n"
                 "   8  longer-name  12.25\n",
                 "simple table, no prefix");
    zb_table_free(t);
}

/* nccl-tests layout: "out-of-place" and "in-place" over four columns. */
static void test_groups(void) {
    zb_table *t = zb_table_new();
    ZB_CHECK_OK(zb_table_add_column(t, "size", "B", ZB_ALIGN_RIGHT));
    for (int i = 0; i < 2; i++) {
        ZB_CHECK_OK(zb_table_add_column(t, "time", "us", ZB_ALIGN_RIGHT));
        ZB_CHECK_OK(zb_table_add_column(t, "algbw", "GB/s", ZB_ALIGN_RIGHT));
    }
    ZB_CHECK_OK(zb_table_add_group(t, "out-of-place", 1, 2));
    ZB_CHECK_OK(zb_table_add_group(t, "in-place", 3, 2));
    ZB_CHECK_OK(zb_table_add_row(t));
    ZB_CHECK_OK(zb_table_set(t, 0, "%d", 1024));
    ZB_CHECK_OK(zb_table_set(t, 1, "%.1f", 10.5));
    ZB_CHECK_OK(zb_table_set(t, 2, "%.2f", 0.1));
    ZB_CHECK_OK(zb_table_set(t, 3, "%.1f", 10.6));
    ZB_CHECK_OK(zb_table_set(t, 4, "%.2f", 0.1));
    check_render(t, "#",
                 "#        out-of-place    in-place\n"
                 "#  size  time   algbw  time   algbw\n"
                 "#   (B)  (us)  (GB/s)  (us)  (GB/s)\n"
                 "   1024  10.5    0.10  10.6    0.10\n",
                 "grouped table");
    zb_table_free(t);
}

/* A title wider than its span widens the group's columns (extra spread
 * evenly, the odd one to the first); an odd leftover centers to the left. */
static void test_wide_group(void) {
    zb_table *t = zb_table_new();
    ZB_CHECK_OK(zb_table_add_column(t, "a", NULL, ZB_ALIGN_RIGHT));
    ZB_CHECK_OK(zb_table_add_column(t, "b", NULL, ZB_ALIGN_LEFT));
    ZB_CHECK_OK(zb_table_add_column(t, "c", "", ZB_ALIGN_RIGHT));
    ZB_CHECK_OK(zb_table_add_group(t, "a-wide-title", 0, 2)); /* 12 over 1+2+1: +8 */
    ZB_CHECK_OK(zb_table_add_group(t, "xy", 2, 1));          /* 2 over 1: +1 */
    ZB_CHECK_OK(zb_table_add_row(t));
    ZB_CHECK_OK(zb_table_set(t, 0, "1"));
    ZB_CHECK_OK(zb_table_set(t, 1, "2"));
    ZB_CHECK_OK(zb_table_set(t, 2, "3"));
    check_render(t, "",
                 "a-wide-title  xy\n"
                 "    a  b       c\n"
                 "    1  2       3\n",
                 "wide group");
    zb_table_free(t);

    t = zb_table_new();
    ZB_CHECK_OK(zb_table_add_column(t, "wide", NULL, ZB_ALIGN_LEFT));
    ZB_CHECK_OK(zb_table_add_column(t, "x", NULL, ZB_ALIGN_LEFT));
    ZB_CHECK_OK(zb_table_add_group(t, "ab", 0, 1)); /* span 4: 1 left, 1 right */
    ZB_CHECK_OK(zb_table_add_group(t, "g", 1, 1));
    check_render(t, "", " ab   g\nwide  x\n", "centered group, no rows");
    zb_table_free(t);

    t = zb_table_new();
    ZB_CHECK_OK(zb_table_add_column(t, "abcde", NULL, ZB_ALIGN_LEFT));
    ZB_CHECK_OK(zb_table_add_group(t, "ab", 0, 1)); /* span 5, title 2: 1 left, 2 right */
    check_render(t, "#", "#   ab\n#  abcde\n", "odd centering");
    zb_table_free(t);
}

/* Columns added after rows; cells set twice; unset cells empty; UTF-8. */
static void test_edges(void) {
    zb_table *t = zb_table_new();
    ZB_CHECK_OK(zb_table_add_column(t, "k", NULL, ZB_ALIGN_LEFT));
    ZB_CHECK_OK(zb_table_add_row(t));
    ZB_CHECK_OK(zb_table_set(t, 0, "first"));
    ZB_CHECK_OK(zb_table_set(t, 0, "x"));
    ZB_CHECK_OK(zb_table_add_column(t, "v", "\xc2\xb5s", ZB_ALIGN_RIGHT)); /* "µs" */
    ZB_CHECK_OK(zb_table_add_row(t));
    ZB_CHECK_OK(zb_table_set(t, 1, "12345"));
    check_render(t, "",
                 "k      v\n"
                 "    (\xc2\xb5s)\n"
                 "x\n"
                 "   12345\n",
                 "edges");
    zb_table_free(t);
}

static void test_errors(void) {
    zb_table *t = zb_table_new();
    ZB_CHECK(zb_table_set(t, 0, "x") == ZB_ERR_INVALID); /* no column, no row */
    ZB_CHECK_OK(zb_table_add_column(t, "a", NULL, ZB_ALIGN_LEFT));
    ZB_CHECK_OK(zb_table_add_column(t, "b", NULL, ZB_ALIGN_LEFT));
    ZB_CHECK(zb_table_add_column(t, "c", NULL, (zb_align)7) == ZB_ERR_INVALID);
    ZB_CHECK(zb_table_set(t, 0, "x") == ZB_ERR_INVALID); /* no row yet */
    ZB_CHECK_OK(zb_table_add_row(t));
    ZB_CHECK(zb_table_set(t, 2, "x") == ZB_ERR_INVALID);
    ZB_CHECK(zb_table_set(t, -1, "x") == ZB_ERR_INVALID);
    ZB_CHECK(zb_table_add_group(t, "g", 1, 2) == ZB_ERR_INVALID);
    ZB_CHECK(zb_table_add_group(t, "g", 0, 0) == ZB_ERR_INVALID);
    ZB_CHECK(zb_table_add_group(t, "g", -1, 1) == ZB_ERR_INVALID);
    ZB_CHECK_OK(zb_table_add_group(t, "g", 0, 2));
    ZB_CHECK(zb_table_add_group(t, "h", 1, 1) == ZB_ERR_INVALID); /* overlaps */
    ZB_CHECK(zb_table_print(t, NULL, "#") == ZB_ERR_INVALID);
    ZB_CHECK(zb_table_n_cols(t) == 2);
    zb_table_free(t);
    zb_table_free(NULL);
}

int main(void) {
    test_simple();
    test_groups();
    test_wide_group();
    test_edges();
    test_errors();
    return zb_test_finish("test_table");
}
