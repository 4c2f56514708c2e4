/* Unit tests for the report writers (harness/report/report.c, atomic_file.c):
 * JSON written and read back, exact pretty text, exact CSV (header, column
 * order, flattening, RFC 4180 quoting, empty cells), shortest round-trip
 * doubles, NaN as null, and atomic replacement: a failed write leaves no
 * file and no temporary behind, and an existing file is replaced whole. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "report.h"
#include "zb_test.h"

static char g_dir[256];

/* The identity columns every CSV starts with (report.h). */
#define META "meta.date_utc,meta.git_describe,meta.hosts,meta.command_line,meta.backend,meta.comm,"

static void path_in(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", g_dir, name); }

/* The whole file as a malloc'ed string (NULL if unreadable). */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, len = 0;
    char *buf = (char *)malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            char *b2 = (char *)realloc(buf, cap *= 2);
            if (!b2) free(buf);
            buf = b2;
        }
    }
    fclose(f);
    if (buf) buf[len] = '\0';
    return buf;
}

static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(d);
    return n;
}

static zb_report *sample_report(void) {
    zb_report *r = zb_report_new();
    json_t *meta = zb_report_meta(r);
    json_object_set_new(meta, "date_utc", json_string("2026-12-05T12:55:05Z"));
    json_object_set_new(meta, "hosts", json_pack("[s, s]", "vm1", "vm2"));
    json_object_set_new(meta, "command_line", json_string("zerobench step --csv \"a,b.csv\""));
    json_object_set_new(meta, "backend", json_string("cpu"));
    json_t *run = json_pack("{s:s, s:I, s:s, s:b, s:{s:f, s:f, s:i}}", "bench", "allgather", "size_bytes",
                            (json_int_t)1048576, "dtype", "float", "in_place", 0, "metrics", "time_us", 12.3,
                            "algbw_gbps", 85.0, "wrong", 0);
    zb_report_add_run(r, run);
    run = json_pack("{s:s, s:I, s:{s:i, s:i}, s:[i, s], s:{s:o, s:f, s:i}, s:s}", "bench",
                    "all,\"reduce\"\nx", "size_bytes", (json_int_t)8, "shape", "m", 2, "n", 3, "tags", 1, "a", "metrics",
                    "time_us", zb_json_real_or_null(NAN), "busbw_gbps", 1.5, "wrong", 0, "mode", "sync");
    zb_report_add_run(r, run);
    return r;
}

static void test_numbers(void) {
    char buf[64];
    zb_format_double(buf, sizeof buf, 12.3);
    ZB_CHECK_MSG(strcmp(buf, "12.3") == 0, "12.3 -> %s", buf);
    zb_format_double(buf, sizeof buf, 2.0);
    ZB_CHECK_MSG(strcmp(buf, "2.0") == 0, "2.0 -> %s", buf);
    zb_format_double(buf, sizeof buf, -0.0);
    ZB_CHECK_MSG(strcmp(buf, "-0.0") == 0, "-0.0 -> %s", buf);
    zb_format_double(buf, sizeof buf, 0.1 + 0.2);
    ZB_CHECK_MSG(strcmp(buf, "0.30000000000000004") == 0, "0.1+0.2 -> %s", buf);
    zb_format_double(buf, sizeof buf, 1e300);
    ZB_CHECK_MSG(strcmp(buf, "1e+300") == 0, "1e300 -> %s", buf);
    zb_format_double(buf, sizeof buf, NAN);
    ZB_CHECK(strcmp(buf, "null") == 0);
    zb_format_double(buf, sizeof buf, -INFINITY);
    ZB_CHECK(strcmp(buf, "null") == 0);
    /* Random finite bit patterns read back exactly. */
    uint64_t x = 0x9E3779B97F4A7C15ull;
    int bad = 0;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double v;
        memcpy(&v, &x, sizeof v);
        if (!isfinite(v)) continue;
        zb_format_double(buf, sizeof buf, v);
        if (strtod(buf, NULL) != v || strlen(buf) > 25) bad++;
    }
    ZB_CHECK_MSG(bad == 0, "%d doubles did not round-trip", bad);
    json_t *j = zb_json_real_or_null(INFINITY);
    ZB_CHECK(json_is_null(j));
    json_decref(j);
    j = zb_json_real_or_null(1.5);
    ZB_CHECK(json_is_real(j) && json_real_value(j) == 1.5);
    json_decref(j);
}

static void test_json_text(void) {
    json_t *v = json_pack("{s:s, s:[i, f, f], s:{}, s:[], s:n, s:b, s:s}", "z", "q\"\\\n\x01", "a", 1, 2.0, 0.5,
                          "e", "l", "n", "t", 1, "u", "\xc2\xb5");
    size_t n = 0;
    char *s = zb_json_dump(v, 2, &n);
    const char *want = "{\n"
                       "  \"z\": \"q\\\"\\\\\\n\\u0001\",\n"
                       "  \"a\": [\n"
                       "    1,\n"
                       "    2.0,\n"
                       "    0.5\n"
                       "  ],\n"
                       "  \"e\": {},\n"
                       "  \"l\": [],\n"
                       "  \"n\": null,\n"
                       "  \"t\": true,\n"
                       "  \"u\": \"\xc2\xb5\"\n"
                       "}";
    ZB_CHECK_MSG(s && strcmp(s, want) == 0 && n == strlen(want), "pretty JSON:\n%s", s ? s : "(null)");
    free(s);
    s = zb_json_dump(v, 0, NULL);
    want = "{\"z\":\"q\\\"\\\\\\n\\u0001\",\"a\":[1,2.0,0.5],\"e\":{},\"l\":[],\"n\":null,\"t\":true,\"u\":\"\xc2\xb5\"}";
    ZB_CHECK_MSG(s && strcmp(s, want) == 0, "compact JSON: %s", s ? s : "(null)");
    /* What we print, jansson reads back equal. */
    json_t *back = s ? json_loads(s, 0, NULL) : NULL;
    ZB_CHECK(back && json_equal(back, v));
    json_decref(back);
    free(s);
    json_decref(v);
}

static void test_write_json(void) {
    char path[512];
    path_in(path, sizeof path, "out.json");
    zb_report *r = sample_report();
    ZB_CHECK(zb_report_n_runs(r) == 2);
    zb_report_add_run(r, json_integer(3)); /* not an object: ignored */
    zb_report_add_run(r, NULL);
    ZB_CHECK(zb_report_n_runs(r) == 2);
    ZB_CHECK(zb_report_run(r, 2) == NULL);
    ZB_CHECK_OK(zb_report_write_json(r, path));

    json_error_t err;
    json_t *doc = json_load_file(path, 0, &err);
    ZB_CHECK_MSG(doc != NULL, "reading %.200s back: %.200s", path, err.text);
    ZB_CHECK(json_equal(doc, zb_report_doc(r)));
    ZB_CHECK(strcmp(json_string_value(json_object_get(doc, "schema")), "zerobench/1") == 0);
    ZB_CHECK(strcmp(json_string_value(json_object_get(json_object_get(doc, "meta"), "backend")), "cpu") == 0);
    json_t *runs = json_object_get(doc, "runs");
    ZB_CHECK(json_array_size(runs) == 2);
    json_t *m0 = json_object_get(json_array_get(runs, 0), "metrics");
    ZB_CHECK(json_real_value(json_object_get(m0, "time_us")) == 12.3);
    json_t *m1 = json_object_get(json_array_get(runs, 1), "metrics");
    ZB_CHECK(json_is_null(json_object_get(m1, "time_us")));
    /* Key order is insertion order, and the file ends in a newline. */
    const char *keys[3] = {"schema", "meta", "runs"};
    int i = 0, in_order = 1;
    const char *key;
    json_t *val;
    json_object_foreach(doc, key, val) in_order &= i < 3 && strcmp(key, keys[i++]) == 0;
    ZB_CHECK(in_order && i == 3);
    char *text = slurp(path);
    ZB_CHECK(text && strncmp(text, "{\n  \"schema\": \"zerobench/1\",\n  \"meta\": {\n    \"date_utc\"", 54) == 0);
    ZB_CHECK(text && strstr(text, "\"time_us\": 12.3,\n") != NULL);
    ZB_CHECK(text && text[strlen(text) - 1] == '\n');
    free(text);
    json_decref(doc);
    zb_report_free(r);
    unlink(path);
}

static void test_write_csv(void) {
    char path[512];
    path_in(path, sizeof path, "out.csv");
    zb_report *r = sample_report();
    ZB_CHECK_OK(zb_report_write_csv(r, path));
    char *text = slurp(path);
    /* the run's identity from the meta: the hosts joined, a missing key empty */
    const char *want = META
        "bench,size_bytes,dtype,in_place,shape.m,shape.n,mode,"
        "metrics.time_us,metrics.algbw_gbps,metrics.wrong,metrics.busbw_gbps\n"
        "2026-12-05T12:55:05Z,,vm1 vm2,\"zerobench step --csv \"\"a,b.csv\"\"\",cpu,,allgather,1048576,float,0,,,,12.3,85.0,0,\n"
        "2026-12-05T12:55:05Z,,vm1 vm2,\"zerobench step --csv \"\"a,b.csv\"\"\",cpu,,\"all,\"\"reduce\"\"\nx\",8,,,2,3,sync,,,0,1.5\n";
    ZB_CHECK_MSG(text && strcmp(text, want) == 0, "CSV:\n%s\nwant:\n%s", text ? text : "(null)", want);
    free(text);
    zb_report_free(r);

    /* A header with a comma is quoted; a scalar "metrics" stays a column. */
    r = zb_report_new();
    zb_report_add_run(r, json_pack("{s:i, s:s}", "a,b", 1, "metrics", "none"));
    ZB_CHECK_OK(zb_report_write_csv(r, path));
    text = slurp(path);
    ZB_CHECK_MSG(text && strcmp(text, META "\"a,b\",metrics\n,,,,,,1,none\n") == 0, "CSV: %s", text ? text : "(null)");
    free(text);
    zb_report_free(r);

    /* Arrays (per_rank, no stragglers, samples) are JSON only: no column;
     * declared columns come first in their group, whether or not a run has
     * them; a true is 1. */
    r = zb_report_new();
    json_t *skeleton = json_pack("{s:n, s:{s:n, s:{s:n}}}", "fits", "metrics", "device_used_high_bytes", "paired",
                                 "pairs");
    ZB_CHECK_OK(zb_report_csv_declare(r, skeleton));
    json_decref(skeleton);
    json_t *not_object = json_integer(1);
    ZB_CHECK(zb_report_csv_declare(r, not_object) == ZB_ERR_INVALID);
    json_decref(not_object);
    zb_report_add_run(r, json_pack("{s:i, s:[{s:i}], s:[], s:[i], s:{s:f, s:{s:[f]}}, s:b}", "ranks", 2, "per_rank",
                                   "rank", 0, "stragglers", "dims", 4, "metrics", "overlap_worst_pct", 42.0,
                                   "samples", "overlap_pct", 1.0, "fits", 1));
    ZB_CHECK_OK(zb_report_write_csv(r, path));
    text = slurp(path);
    ZB_CHECK_MSG(text && strcmp(text, META "fits,ranks,metrics.device_used_high_bytes,metrics.paired.pairs,"
                                           "metrics.overlap_worst_pct\n,,,,,,1,2,,,42.0\n") == 0,
                 "CSV: %s", text ? text : "(null)");
    free(text);
    zb_report_free(r);

    /* No runs: an empty file. */
    r = zb_report_new();
    ZB_CHECK_OK(zb_report_write_csv(r, path));
    text = slurp(path);
    ZB_CHECK(text && text[0] == '\0');
    free(text);
    zb_report_free(r);
    unlink(path);
}

static void test_atomic_failures(void) {
    char path[512];
    zb_report *r = sample_report();

    /* A directory that does not exist: ZB_ERR_IO naming the path, no file. */
    path_in(path, sizeof path, "missing/out.json");
    int before = count_entries(g_dir);
    ZB_CHECK(zb_report_write_json(r, path) == ZB_ERR_IO);
    ZB_CHECK_MSG(strstr(zb_error_message(), path) != NULL, "message: %s", zb_error_message());
    ZB_CHECK(strstr(zb_error_message(), strerror(ENOENT)) != NULL);
    ZB_CHECK(zb_report_write_csv(r, path) == ZB_ERR_IO);
    ZB_CHECK(access(path, F_OK) != 0);
    ZB_CHECK(count_entries(g_dir) == before);

    /* The target is a directory: refused before any temporary is made. */
    path_in(path, sizeof path, "adir");
    ZB_CHECK(mkdir(path, 0755) == 0);
    before = count_entries(g_dir);
    ZB_CHECK(zb_report_write_json(r, path) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "a folder") != NULL, "message: %s", zb_error_message());
    ZB_CHECK(count_entries(g_dir) == before);
    struct stat st;
    ZB_CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
    rmdir(path);

    ZB_CHECK(zb_atomic_write("", "x", 1) == ZB_ERR_INVALID);
    ZB_CHECK(zb_atomic_write(NULL, "x", 1) == ZB_ERR_INVALID);
    zb_report_free(r);
}

static void test_replace_whole(void) {
    char path[512];
    path_in(path, sizeof path, "replace.csv");
    size_t big = 100000;
    char *junk = (char *)malloc(big);
    ZB_CHECK(junk != NULL);
    if (!junk) return;
    memset(junk, 'x', big);
    ZB_CHECK_OK(zb_atomic_write(path, junk, big));
    struct stat st;
    ZB_CHECK(stat(path, &st) == 0 && (size_t)st.st_size == big);
    free(junk);

    zb_report *r = zb_report_new();
    zb_report_add_run(r, json_pack("{s:s, s:{s:f}}", "bench", "gemm", "metrics", "tflops", 0.25));
    ZB_CHECK_OK(zb_report_write_csv(r, path));
    char *text = slurp(path);
    const char *want = META "bench,metrics.tflops\n,,,,,,gemm,0.25\n";
    ZB_CHECK_MSG(text && strcmp(text, want) == 0, "replaced file: %.60s", text ? text : "(null)");
    ZB_CHECK(stat(path, &st) == 0 && (size_t)st.st_size == strlen(want));
    free(text);
    ZB_CHECK_OK(zb_atomic_write(path, "", 0));
    ZB_CHECK(stat(path, &st) == 0 && st.st_size == 0);
    ZB_CHECK(count_entries(g_dir) == 1); /* no temporaries left */
    zb_report_free(r);
    unlink(path);
}

int main(void) {
    const char *base = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/zb_test_report.XXXXXX", base && base[0] ? base : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_numbers();
    test_json_text();
    test_write_json();
    test_write_csv();
    test_atomic_failures();
    test_replace_whole();
    ZB_CHECK_MSG(count_entries(g_dir) == 0, "%d files left in %s", count_entries(g_dir), g_dir);
    rmdir(g_dir);
    return zb_test_finish("test_report");
}
