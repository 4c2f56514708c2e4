/* The clock alignment's arithmetic (harness/control/clock_sync.h) on hand-made round
 * trips whose answers are worked out by hand, a randomized check that the
 * true offset always lies within the estimate's uncertainty, and the test
 * hook ZB_TEST_CLOCK_SKEW_NS (harness/trace/trace.h). No MPI is started. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock_sync.h"
#include "rng.h"
#include "trace.h"
#include "zb_test.h"

static zb_clock_sample sample(int64_t send, int64_t remote, int64_t recv) {
    zb_clock_sample s = {send, remote, recv};
    return s;
}

static int64_t raw_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + (int64_t)ts.tv_nsec;
}

/* Runs first: the hook is read once, at the process's first zb_now_ns. */
static void test_skew_hook(void) {
    setenv(ZB_TEST_CLOCK_SKEW_ENV, "-1000000000000", 1); /* -1000 s */
    int64_t before = raw_monotonic_ns();
    int64_t now = zb_now_ns();
    int64_t after = raw_monotonic_ns();
    ZB_CHECK_MSG(now >= before - 1000000000000LL && now <= after - 1000000000000LL,
                 "zb_now_ns %lld is not CLOCK_MONOTONIC [%lld, %lld] - 1000 s", (long long)now,
                 (long long)before, (long long)after);
    /* Read once: a later change does not move the clock. */
    setenv(ZB_TEST_CLOCK_SKEW_ENV, "0", 1);
    int64_t later = zb_now_ns();
    ZB_CHECK(later >= now && later < raw_monotonic_ns() - 999000000000LL);
    unsetenv(ZB_TEST_CLOCK_SKEW_ENV);
}

static void test_skew_parse(void) {
    int64_t v = 0;
    ZB_CHECK_OK(zb_clock_skew_parse("5000000000", &v));
    ZB_CHECK(v == 5000000000LL);
    ZB_CHECK_OK(zb_clock_skew_parse("-7", &v));
    ZB_CHECK(v == -7);
    ZB_CHECK_OK(zb_clock_skew_parse("+0", &v));
    ZB_CHECK(v == 0);
    ZB_CHECK_OK(zb_clock_skew_parse("1000000000000000", &v));
    ZB_CHECK(v == ZB_TEST_CLOCK_SKEW_MAX_NS);
    const char *bad[] = {"", "abc", "5s", " 5", "1e9", "5 ", "1000000000000001", "-1000000000000001",
                         "99999999999999999999", "0x10"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = 42;
        ZB_CHECK_MSG(zb_clock_skew_parse(bad[i], &v) == ZB_ERR_INVALID, "'%s' accepted", bad[i]);
        ZB_CHECK(v == 42);
        ZB_CHECK_MSG(strstr(zb_error_message(), "ZB_TEST_CLOCK_SKEW_NS") != NULL, "message: %s",
                     zb_error_message());
    }
    ZB_CHECK(zb_clock_skew_parse(NULL, &v) == ZB_ERR_INVALID);
    /* One line, however the value is spelled. */
    ZB_CHECK(zb_clock_skew_parse("1\n2", &v) == ZB_ERR_INVALID);
    ZB_CHECK(strchr(zb_error_message(), '\n') == NULL);
    setenv(ZB_TEST_CLOCK_SKEW_ENV, "soon", 1);
    ZB_CHECK(zb_clock_skew_check() == ZB_ERR_INVALID);
    setenv(ZB_TEST_CLOCK_SKEW_ENV, "12", 1);
    ZB_CHECK_OK(zb_clock_skew_check());
    unsetenv(ZB_TEST_CLOCK_SKEW_ENV);
    ZB_CHECK_OK(zb_clock_skew_check());
}

static void test_by_hand(void) {
    int64_t off = 0, unc = 0;
    /* Rank 0's clock is 1000 ahead; it read its clock at the midpoint. */
    zb_clock_sample one[] = {sample(100, 1150, 200)};
    ZB_CHECK_OK(zb_clock_offset_estimate(one, 1, &off, &unc));
    ZB_CHECK(off == 1000 && unc == 50);
    /* The smallest RTT wins, wherever it is; the others would say otherwise. */
    zb_clock_sample many[] = {sample(0, 5000, 400), sample(1000, 6050, 1020), sample(2000, 7000, 2300)};
    ZB_CHECK_OK(zb_clock_offset_estimate(many, 3, &off, &unc));
    ZB_CHECK_MSG(off == 5040 && unc == 10, "off %lld unc %lld", (long long)off, (long long)unc);
    /* Odd RTT: the midpoint rounds down, the uncertainty up, and the
     * bound holds: the true offset is in [10 - 3, 10 - 0] = [7, 10]. */
    zb_clock_sample odd[] = {sample(0, 10, 3)};
    ZB_CHECK_OK(zb_clock_offset_estimate(odd, 1, &off, &unc));
    ZB_CHECK(off == 9 && unc == 2);
    ZB_CHECK(off - unc <= 7 && off + unc >= 10);
    /* A zero RTT is exact. */
    zb_clock_sample exact[] = {sample(500, -4999999500LL, 500)};
    ZB_CHECK_OK(zb_clock_offset_estimate(exact, 1, &off, &unc));
    ZB_CHECK(off == -5000000000LL && unc == 0);
    /* Equal RTTs: the first. */
    zb_clock_sample tie[] = {sample(0, 100, 10), sample(20, 200, 30)};
    ZB_CHECK_OK(zb_clock_offset_estimate(tie, 2, &off, &unc));
    ZB_CHECK(off == 95 && unc == 5);
}

static void test_unusable(void) {
    int64_t off = 7, unc = 7;
    /* Time running backwards is skipped, not taken as a tiny RTT. */
    zb_clock_sample back[] = {sample(100, 0, 50), sample(0, 1000, 100)};
    ZB_CHECK_OK(zb_clock_offset_estimate(back, 2, &off, &unc));
    ZB_CHECK(off == 950 && unc == 50);
    off = unc = 7;
    ZB_CHECK(zb_clock_offset_estimate(back, 1, &off, &unc) == ZB_ERR_INVALID);
    ZB_CHECK(off == 7 && unc == 7);
    ZB_CHECK(zb_clock_offset_estimate(back, 0, &off, &unc) == ZB_ERR_INVALID);
    ZB_CHECK(zb_clock_offset_estimate(NULL, 0, &off, &unc) == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "clock sync") != NULL);
    /* An RTT beyond int64 and an offset beyond int64 are unusable, not wrapped. */
    zb_clock_sample huge[] = {sample(INT64_MIN, 0, INT64_MAX), sample(-4000000000000000000LL, INT64_MAX, -4000000000000000000LL)};
    ZB_CHECK(zb_clock_offset_estimate(huge, 2, &off, &unc) == ZB_ERR_INVALID);
    /* Large but representable values work exactly. */
    zb_clock_sample big[] = {sample(-4000000000000000000LL, 0, 4000000000000000000LL)};
    ZB_CHECK_OK(zb_clock_offset_estimate(big, 1, &off, &unc));
    ZB_CHECK(off == 0 && unc == 4000000000000000000LL);
}

/* Simulated exchanges: rank 0's clock = this rank's + theta; the ping and
 * the reply take random, unequal times; rank 0 reads its clock anywhere in
 * between. The estimate must always bracket theta. */
static void test_random_bound(void) {
    uint64_t rng = 12345;
    int misses = 0;
    for (int trial = 0; trial < 2000; trial++) {
        int64_t theta = (int64_t)(zb_splitmix_next(&rng) % 20000000001ULL) - 10000000000LL; /* +-10 s */
        int64_t clock = 1000000000000LL + (int64_t)(zb_splitmix_next(&rng) % 1000000000ULL);
        zb_clock_sample s[ZB_CLOCK_SYNC_ROUND_TRIPS];
        for (int i = 0; i < ZB_CLOCK_SYNC_ROUND_TRIPS; i++) {
            int64_t there = (int64_t)(zb_splitmix_next(&rng) % 200001ULL);
            int64_t turn = (int64_t)(zb_splitmix_next(&rng) % 3ULL);
            int64_t back = (int64_t)(zb_splitmix_next(&rng) % 200001ULL);
            s[i] = sample(clock, clock + there + theta, clock + there + turn + back);
            clock += there + turn + back + 1000;
        }
        int64_t off = 0, unc = 0;
        ZB_CHECK_OK(zb_clock_offset_estimate(s, ZB_CLOCK_SYNC_ROUND_TRIPS, &off, &unc));
        int64_t err = off - theta;
        if (err > unc || err < -unc) misses++;
    }
    ZB_CHECK_MSG(misses == 0, "%d of 2000 estimates miss the true offset by more than their uncertainty", misses);
}

static void test_offsets_and_json(void) {
    int node[3] = {0, 0, 1};
    int64_t offset[3] = {0, 0, -5000000123LL}, unc[3] = {0, 0, 4000};
    zb_clock_sync s = {3, 2, ZB_CLOCK_SYNC_ROUND_TRIPS, node, offset, unc};
    ZB_CHECK(zb_clock_sync_offset(&s, 2) == -5000000123LL);
    ZB_CHECK(zb_clock_sync_offset(&s, 0) == 0);
    ZB_CHECK(zb_clock_sync_offset(&s, 3) == 0 && zb_clock_sync_offset(&s, -1) == 0);
    ZB_CHECK(zb_clock_sync_offset(NULL, 2) == 0);
    json_t *j = zb_clock_sync_json(&s);
    ZB_CHECK(j != NULL);
    if (!j) return;
    ZB_CHECK(strcmp(json_string_value(json_object_get(j, "method")), "ping_pong_min_rtt") == 0);
    ZB_CHECK(json_integer_value(json_object_get(j, "reference_rank")) == 0);
    ZB_CHECK(json_integer_value(json_object_get(j, "round_trips")) == ZB_CLOCK_SYNC_ROUND_TRIPS);
    json_t *ranks = json_object_get(j, "ranks");
    ZB_CHECK(json_array_size(ranks) == 3);
    json_t *r2 = json_array_get(ranks, 2);
    ZB_CHECK(json_integer_value(json_object_get(r2, "rank")) == 2);
    ZB_CHECK(json_integer_value(json_object_get(r2, "node")) == 1);
    ZB_CHECK(json_integer_value(json_object_get(r2, "offset_ns")) == -5000000123LL);
    ZB_CHECK(json_integer_value(json_object_get(r2, "uncertainty_ns")) == 4000);
    json_decref(j);
    s.n_nodes = 1;
    s.round_trips = 0;
    j = zb_clock_sync_json(&s);
    ZB_CHECK(j && strcmp(json_string_value(json_object_get(j, "method")), "single_node") == 0);
    json_decref(j);
}

int main(void) {
    test_skew_hook();
    test_skew_parse();
    test_by_hand();
    test_unusable();
    test_random_bound();
    test_offsets_and_json();
    return zb_test_finish("test_clock_sync");
}
