/* The CUPTI clock -> harness clock conversion (harness/device/cuda/cupti_map.h,
 * cupti_clock.c) on synthetic pairs: conversion exactness, the decision at
 * tracer start on synthetic clock offsets (same clock within 1 ms,
 * converted and said so beyond, refused without a pair, with a clock that
 * does not advance or a pair off the model), and pair measurement against
 * a reader that is offset or fails. Needs no GPU. */
#include <stdint.h>
#include <string.h>

#include "cupti_map.h"
#include "zb_test.h"

static void test_clock(void) {
    const int64_t c0 = 1700000000123456789LL, m0 = 86400123456789LL; /* realtime vs monotonic */
    zb_clock_map c;
    zb_clock_map_init(&c);
    ZB_CHECK(zb_clock_map_convert(&c, 42) == 42); /* no pair: unchanged */
    int64_t res = -1;
    zb_clock_map_add(&c, c0, m0, &res);
    ZB_CHECK(res == 0);
    ZB_CHECK(zb_clock_map_convert(&c, c0 + 987654321) == m0 + 987654321); /* pure offset */
    zb_clock_map_add(&c, c0 + 3600000000000LL, m0 + 3600000000000LL, &res);
    ZB_CHECK(res == 0 && c.drift == 0.0);
    ZB_CHECK(zb_clock_map_convert(&c, c0 + 7) == m0 + 7);
    ZB_CHECK(zb_clock_map_convert(&c, c0 - 5000) == m0 - 5000);

    /* Drift of 1000 ppm, pairs exactly on the line: conversion exact. The
     * second pair shows the drift the offset-only model missed (2 ms over
     * 2 s); from the third on the line is known and residuals are 0. */
    zb_clock_map_init(&c);
    for (int64_t i = 0; i < 5; i++) {
        int64_t x = i * 2000000000LL;
        zb_clock_map_add(&c, c0 + x, m0 + x + x / 1000, &res);
        int64_t want = i == 1 ? 2000000 : 0;
        ZB_CHECK_MSG(res == want, "pair %lld residual %lld", (long long)i, (long long)res);
    }
    ZB_CHECK(c.max_residual_ns == 2000000);
    ZB_CHECK(zb_clock_map_convert(&c, c0 + 5000000000LL) == m0 + 5005000000LL);
    ZB_CHECK(zb_clock_map_convert(&c, c0 + 123000) == m0 + 123123);

    /* A pair 5 us off the line shows as its residual. */
    zb_clock_map_add(&c, c0 + 10000000000LL, m0 + 10010000000LL + 5000, &res);
    ZB_CHECK(res == 5000 && c.max_residual_ns == 2000000);

    /* More pairs than slots: the reference stays, conversion stays exact. */
    zb_clock_map_init(&c);
    for (int64_t i = 0; i < 3 * ZB_CLOCK_MAP_MAX_PAIRS; i++) {
        zb_clock_map_add(&c, c0 + i * 1000000, m0 + i * 1000000 - 17, NULL);
    }
    ZB_CHECK(c.n_pairs == ZB_CLOCK_MAP_MAX_PAIRS && c.pairs[0].cupti_ns == c0);
    ZB_CHECK(zb_clock_map_convert(&c, c0 + 1) == m0 - 16 && c.max_residual_ns == 0);
}

/* Three pairs 1 ms apart with CUPTI `ahead` ns ahead of CLOCK_MONOTONIC. */
static void offset_pairs(zb_clock_map *c, int64_t ahead) {
    const int64_t m0 = 86400123456789LL;
    zb_clock_map_init(c);
    for (int64_t i = 0; i < 3; i++) zb_clock_map_add(c, m0 + ahead + i * 1000000, m0 + i * 1000000, NULL);
}

static void test_clock_decide(void) {
    zb_clock_map c;
    char msg[256];
    /* The timestamp callback took effect: the same clock, nothing to say. */
    offset_pairs(&c, 0);
    ZB_CHECK(zb_clock_map_decide(&c, msg, sizeof msg) == ZB_CLOCK_SAME && msg[0] == '\0');
    offset_pairs(&c, 500000); /* 500 us: within the bound */
    ZB_CHECK(zb_clock_map_decide(&c, msg, sizeof msg) == ZB_CLOCK_SAME && msg[0] == '\0');
    offset_pairs(&c, -ZB_CLOCK_AGREE_NS);
    ZB_CHECK(zb_clock_map_decide(&c, msg, sizeof msg) == ZB_CLOCK_SAME);
    offset_pairs(&c, ZB_CLOCK_AGREE_NS + 1);
    ZB_CHECK(zb_clock_map_decide(&c, msg, sizeof msg) == ZB_CLOCK_CONVERT);
    ZB_CHECK_MSG(strstr(msg, "ahead of CLOCK_MONOTONIC: records converted"), "%s", msg);
    /* CLOCK_REALTIME against CLOCK_MONOTONIC: converted, exactly, and said. */
    const int64_t realtime = 1700000000000000000LL;
    offset_pairs(&c, realtime);
    ZB_CHECK(zb_clock_map_decide(&c, msg, sizeof msg) == ZB_CLOCK_CONVERT);
    ZB_CHECK_MSG(strcmp(msg, "CUPTI clock is 1.7e+09 s ahead of CLOCK_MONOTONIC: records converted through "
                             "fitted clock pairs") == 0, "%s", msg);
    ZB_CHECK(zb_clock_map_convert(&c, 86400123456789LL + realtime + 42) == 86400123456789LL + 42);
    offset_pairs(&c, -2500000);
    ZB_CHECK(zb_clock_map_decide(&c, msg, sizeof msg) == ZB_CLOCK_CONVERT);
    ZB_CHECK_MSG(strstr(msg, "is 0.0025 s behind CLOCK_MONOTONIC"), "%s", msg);
    /* A pair 5 ms off the model of the earlier ones: refused. */
    offset_pairs(&c, realtime);
    zb_clock_map_add(&c, 86400123456789LL + realtime + 3000000, 86400123456789LL + 3000000 + 5000000, NULL);
    ZB_CHECK(zb_clock_map_decide(&c, msg, sizeof msg) == ZB_CLOCK_REFUSE);
    ZB_CHECK_MSG(strstr(msg, "disagree by 5000000 ns") && !strchr(msg, '\n'), "%s", msg);
    /* Off by just the tolerance: still converted. */
    offset_pairs(&c, realtime);
    zb_clock_map_add(&c, 86400123456789LL + realtime + 3000000,
                     86400123456789LL + 3000000 + ZB_CLOCK_MAP_TOLERANCE_NS, NULL);
    ZB_CHECK(zb_clock_map_decide(&c, msg, sizeof msg) == ZB_CLOCK_CONVERT);
    /* A CUPTI clock that steps back, or stands still, while CLOCK_MONOTONIC advances. */
    zb_clock_map_init(&c);
    zb_clock_map_add(&c, 5000000, 1000, NULL);
    zb_clock_map_add(&c, 4999990, 2000, NULL); /* 10 ns back: within the residual tolerance */
    ZB_CHECK(zb_clock_map_decide(&c, msg, sizeof msg) == ZB_CLOCK_REFUSE);
    ZB_CHECK_MSG(strstr(msg, "does not advance with CLOCK_MONOTONIC (5000000 then 4999990 ns)"), "%s", msg);
    zb_clock_map_init(&c);
    zb_clock_map_add(&c, 5000000, 1000, NULL);
    zb_clock_map_add(&c, 5000000, 2000, NULL);
    ZB_CHECK(zb_clock_map_decide(&c, msg, sizeof msg) == ZB_CLOCK_REFUSE);
    /* No pair at all. */
    zb_clock_map_init(&c);
    ZB_CHECK(zb_clock_map_decide(&c, msg, sizeof msg) == ZB_CLOCK_REFUSE && msg[0] != '\0');
    /* One pair: an offset, decided by its size. */
    zb_clock_map_add(&c, 100, 100 + 200000, NULL);
    ZB_CHECK(zb_clock_map_decide(&c, msg, sizeof msg) == ZB_CLOCK_SAME);
}

static int64_t fake_clock(void *ctx) { return zb_now_ns() + *(const int64_t *)ctx; }
static int64_t broken_clock(void *ctx) {
    (void)ctx;
    return -1;
}

static void test_clock_measure(void) {
    int64_t off = 1700000000000000000LL;
    zb_clock_map c;
    zb_clock_map_init(&c);
    ZB_CHECK_OK(zb_clock_map_measure(&c, fake_clock, &off, 8, NULL));
    int64_t res = 0;
    ZB_CHECK_OK(zb_clock_map_measure(&c, fake_clock, &off, 8, &res));
    ZB_CHECK_MSG(res > -1000000 && res < 1000000, "residual %lld ns", (long long)res);
    int64_t before = zb_now_ns();
    int64_t reading = fake_clock(&off);
    int64_t after = zb_now_ns();
    int64_t conv = zb_clock_map_convert(&c, reading);
    ZB_CHECK_MSG(conv >= before - 1000000 && conv <= after + 1000000,
                 "converted %lld outside [%lld, %lld] +- 1 ms", (long long)conv, (long long)before,
                 (long long)after);
    ZB_CHECK(zb_clock_map_measure(&c, broken_clock, NULL, 4, NULL) == ZB_ERR_INVALID);
    ZB_CHECK(zb_clock_map_measure(&c, NULL, NULL, 4, NULL) == ZB_ERR_INVALID);
}

int main(void) {
    test_clock();
    test_clock_measure();
    test_clock_decide();
    return zb_test_finish("test_cupti_clock");
}
