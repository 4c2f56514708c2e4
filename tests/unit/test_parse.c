/* Unit tests of the flag value parsers (harness/core/parse.c): sizes with K/M/G/T
 * suffixes, int64, double, MxNxK shapes, and zb_format_size round trips.
 * Every rejection must return ZB_ERR_INVALID, leave `*out` untouched and
 * record a message that quotes the text. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "parse.h"
#include "zb_test.h"

#define SENTINEL_U64 0xdeadbeefULL
#define SENTINEL_I64 ((int64_t)-777)

static void size_ok(const char *text, uint64_t want) {
    uint64_t v = SENTINEL_U64;
    zb_status s = zb_parse_size(text, &v);
    ZB_CHECK_MSG(s == ZB_OK && v == want, "zb_parse_size(\"%s\"): status %d value %llu, want %llu (%s)",
                 text, (int)s, (unsigned long long)v, (unsigned long long)want, zb_error_message());
}

static void size_bad(const char *text) {
    uint64_t v = SENTINEL_U64;
    zb_status s = zb_parse_size(text, &v);
    ZB_CHECK_MSG(s == ZB_ERR_INVALID, "zb_parse_size(\"%s\") should be rejected, got status %d value %llu",
                 text, (int)s, (unsigned long long)v);
    ZB_CHECK_MSG(v == SENTINEL_U64, "zb_parse_size(\"%s\") wrote %llu on failure", text, (unsigned long long)v);
    if (text[0] != '\0') {
        ZB_CHECK_MSG(strstr(zb_error_message(), text) != NULL, "message for \"%s\" does not quote it: %s",
                     text, zb_error_message());
    }
}

static void test_sizes(void) {
    size_ok("0", 0); /* parses; the CLI's range check rejects it */
    size_ok("1", 1);
    size_ok("4096", 4096);
    size_ok("4K", 4096);
    size_ok("1k", 1024);
    size_ok("64M", 64ULL << 20);
    size_ok("64m", 64ULL << 20);
    size_ok("1G", 1ULL << 30);
    size_ok("2T", 2ULL << 40);
    size_ok("64MiB", 64ULL << 20);
    size_ok("64MB", 64ULL << 20);
    size_ok("4KB", 4096);
    size_ok("4KiB", 4096);
    size_ok("512B", 512);
    size_ok("007K", 7 * 1024);
    size_ok("18446744073709551615", UINT64_MAX);
    size_ok("16777215T", (16777215ULL) << 40);

    size_bad("");
    size_bad("-1");
    size_bad("+5");
    size_bad("abc");
    size_bad("K");
    size_bad("4Q");
    size_bad("4KQ");
    size_bad("4KK");
    size_bad("4Ki");
    size_bad("4iB");
    size_bad("4BB");
    size_bad("1.5M");
    size_bad(" 4K");
    size_bad("4K ");
    size_bad("4 K");
    size_bad("0x10");
    size_bad("1e6");
    size_bad("99999999999999999999");  /* > UINT64_MAX */
    size_bad("18446744073709551616");  /* UINT64_MAX + 1 */
    size_bad("16777216T");             /* 2^24 * 2^40 = 2^64 */
    size_bad("17179869184G");          /* 2^34 * 2^30 = 2^64 */
    size_bad("18014398509481984K");    /* 2^54 * 2^10 = 2^64 */
}

static void int_ok(const char *text, int64_t want) {
    int64_t v = SENTINEL_I64;
    zb_status s = zb_parse_int64(text, &v);
    ZB_CHECK_MSG(s == ZB_OK && v == want, "zb_parse_int64(\"%s\"): status %d value %lld, want %lld (%s)", text,
                 (int)s, (long long)v, (long long)want, zb_error_message());
}

static void int_bad(const char *text) {
    int64_t v = SENTINEL_I64;
    zb_status s = zb_parse_int64(text, &v);
    ZB_CHECK_MSG(s == ZB_ERR_INVALID && v == SENTINEL_I64,
                 "zb_parse_int64(\"%s\") should be rejected, got status %d value %lld", text, (int)s,
                 (long long)v);
    if (text[0] != '\0') {
        ZB_CHECK_MSG(strstr(zb_error_message(), text) != NULL, "message for \"%s\" does not quote it: %s",
                     text, zb_error_message());
    }
}

static void test_ints(void) {
    int_ok("0", 0);
    int_ok("42", 42);
    int_ok("+5", 5);
    int_ok("-1", -1);
    int_ok("-0", 0);
    int_ok("0020", 20);
    int_ok("9223372036854775807", INT64_MAX);
    int_ok("-9223372036854775807", -INT64_MAX);

    int_bad("");
    int_bad("-");
    int_bad("+");
    int_bad("--1");
    int_bad("+-1");
    int_bad("abc");
    int_bad("12abc");
    int_bad("1.0");
    int_bad("1e3");
    int_bad("4K");
    int_bad(" 1");
    int_bad("1 ");
    int_bad("0x10");
    int_bad("9223372036854775808");   /* INT64_MAX + 1 */
    int_bad("-9223372036854775809");  /* below INT64_MIN */
    int_bad("99999999999999999999");
}

static void double_ok(const char *text, double want) {
    double v = -777.0;
    zb_status s = zb_parse_double(text, &v);
    ZB_CHECK_MSG(s == ZB_OK && v == want, "zb_parse_double(\"%s\"): status %d value %g, want %g (%s)", text,
                 (int)s, v, want, zb_error_message());
}

static void double_bad(const char *text) {
    double v = -777.0;
    zb_status s = zb_parse_double(text, &v);
    ZB_CHECK_MSG(s == ZB_ERR_INVALID && v == -777.0,
                 "zb_parse_double(\"%s\") should be rejected, got status %d value %g", text, (int)s, v);
    if (text[0] != '\0') {
        ZB_CHECK_MSG(strstr(zb_error_message(), text) != NULL, "message for \"%s\" does not quote it: %s",
                     text, zb_error_message());
    }
}

static void test_doubles(void) {
    double_ok("0", 0.0);
    double_ok("1.5", 1.5);
    double_ok("-3", -3.0);
    double_ok("+2.25", 2.25);
    double_ok("1e3", 1000.0);
    double_ok(".5", 0.5);
    double_ok("1e308", 1e308);

    double_bad("");
    double_bad(" 1");
    double_bad("1 ");
    double_bad("1.5x");
    double_bad("x1.5");
    double_bad("nan");
    double_bad("NaN");
    double_bad("-nan");
    double_bad("inf");
    double_bad("-inf");
    double_bad("infinity");
    double_bad("1e999");
    double_bad("-1e999");
    double_bad("1e");
    double_bad("1..2");
    double_bad("--1");
    double_bad(".");
}

static void shape_ok(const char *text, int64_t m, int64_t n, int64_t k) {
    int64_t d[3] = {-1, -1, -1};
    zb_status s = zb_parse_shape(text, d);
    ZB_CHECK_MSG(s == ZB_OK && d[0] == m && d[1] == n && d[2] == k,
                 "zb_parse_shape(\"%s\"): status %d dims %lldx%lldx%lld (%s)", text, (int)s, (long long)d[0],
                 (long long)d[1], (long long)d[2], zb_error_message());
}

static void shape_bad(const char *text) {
    int64_t d[3] = {-1, -1, -1};
    zb_status s = zb_parse_shape(text, d);
    ZB_CHECK_MSG(s == ZB_ERR_INVALID && d[0] == -1 && d[1] == -1 && d[2] == -1,
                 "zb_parse_shape(\"%s\") should be rejected and leave dims alone, got status %d", text, (int)s);
    if (text[0] != '\0') {
        ZB_CHECK_MSG(strstr(zb_error_message(), text) != NULL, "message for \"%s\" does not quote it: %s",
                     text, zb_error_message());
    }
}

static void test_shapes(void) {
    shape_ok("4096x4096x4096", 4096, 4096, 4096);
    shape_ok("1x2x3", 1, 2, 3);
    shape_ok("1X2X3", 1, 2, 3);
    shape_ok("1073741824x1x1", 1073741824, 1, 1); /* 2^30, the largest */

    shape_bad("");
    shape_bad("0x1x1");
    shape_bad("1x0x1");
    shape_bad("1x1x0");
    shape_bad("1x2");
    shape_bad("1");
    shape_bad("1x2x3x4");
    shape_bad("axbxc");
    shape_bad("1x2x");
    shape_bad("x1x2");
    shape_bad("1xx2");
    shape_bad("1x2x3 ");
    shape_bad(" 1x2x3");
    shape_bad("-1x2x3");
    shape_bad("1x-2x3");
    shape_bad("1*2*3");
    shape_bad("1x2x3K");
    shape_bad("1073741825x1x1");       /* 2^30 + 1 */
    shape_bad("1x1x99999999999999999999");
    shape_bad("99999999999999999999999999999999x1x1");
}

static void format_is(uint64_t bytes, const char *want) {
    char out[32];
    memset(out, 'z', sizeof out);
    zb_format_size(bytes, out, (int)sizeof out);
    ZB_CHECK_MSG(!strcmp(out, want), "zb_format_size(%llu) = \"%s\", want \"%s\"", (unsigned long long)bytes,
                 out, want);
}

static void round_trip(uint64_t bytes) {
    char out[32];
    uint64_t back = SENTINEL_U64;
    zb_format_size(bytes, out, (int)sizeof out);
    zb_status s = zb_parse_size(out, &back);
    ZB_CHECK_MSG(s == ZB_OK && back == bytes, "round trip %llu -> \"%s\" -> status %d %llu",
                 (unsigned long long)bytes, out, (int)s, (unsigned long long)back);
}

static void test_format(void) {
    format_is(0, "0");
    format_is(1, "1");
    format_is(1000, "1000");
    format_is(1024, "1K");
    format_is(1536, "1536");
    format_is(4096, "4K");
    format_is(1ULL << 20, "1M");
    format_is(3ULL << 20, "3M");
    format_is((1ULL << 20) + 1024, "1025K");
    format_is(1ULL << 30, "1G");
    format_is(1ULL << 40, "1T");
    format_is(1024ULL << 40, "1024T");
    format_is(UINT64_MAX, "18446744073709551615");

    /* A small buffer truncates but stays terminated. */
    char tiny[3];
    zb_format_size(123456, tiny, (int)sizeof tiny);
    ZB_CHECK(tiny[2] == '\0' && !strcmp(tiny, "12"));

    const uint64_t samples[] = {0, 1, 7, 1023, 1024, 1025, 4096, 65536, 1ULL << 20, 5ULL << 30,
                                (1ULL << 40) - 1, 1ULL << 40, 16777215ULL << 40, UINT64_MAX};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) round_trip(samples[i]);
    for (int shift = 0; shift < 64; shift++) {
        round_trip(1ULL << shift);
        round_trip(3ULL << (shift > 62 ? 62 : shift));
        round_trip((1ULL << shift) - 1);
    }
}

static void count_ok(const char *text, uint64_t want) {
    uint64_t v = 0;
    ZB_CHECK_MSG(zb_parse_count(text, &v) == ZB_OK && v == want, "zb_parse_count(\"%s\") = %llu, want %llu", text,
                 (unsigned long long)v, (unsigned long long)want);
}

static void count_bad(const char *text) {
    uint64_t v = 77;
    zb_status s = zb_parse_count(text, &v);
    ZB_CHECK_MSG(s == ZB_ERR_INVALID && v == 77, "zb_parse_count(\"%s\") should be rejected, got status %d", text,
                 (int)s);
    if (text[0] != '\0') {
        ZB_CHECK_MSG(strstr(zb_error_message(), text) != NULL, "message for \"%s\" does not quote it: %s", text,
                     zb_error_message());
    }
}

static void test_counts(void) {
    count_ok("7500000000", 7500000000ull);
    count_ok("7.5e9", 7500000000ull);
    count_ok("7.5B", 7500000000ull);
    count_ok("70B", 70000000000ull);
    count_ok("70b", 70000000000ull);
    count_ok("405G", 405000000000ull);
    count_ok("125M", 125000000ull);
    count_ok("1.5T", 1500000000000ull);
    count_ok("4K", 4000ull);
    count_ok("1", 1ull);
    count_ok("9007199254740992", 9007199254740992ull); /* 2^53, the largest */
    const char *bad[] = {"", "abc", "-5", "+5", "0", "0B", " 7B", "7B ", "7.5 B", "7.5X", "7.5BB", "1e400",
                         "nan", "inf", "0x10", "1e", "B", "1e16", "-7.5e9", "7,5B"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) count_bad(bad[i]);
}

int main(void) {
    test_sizes();
    test_counts();
    test_ints();
    test_doubles();
    test_shapes();
    test_format();
    return zb_test_finish("test_parse");
}
