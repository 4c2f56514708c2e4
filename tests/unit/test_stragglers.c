/* The per-rank statistics (harness/metrics/stragglers.h): the median over
 * ranks leaving NaN out, signed deviations (relative for times, points for
 * percentages), straggler selection in rank order with its threshold
 * exclusive, NaN never flagged, fewer than 2 ranks flagging no one, the cap;
 * and the test hook's parser (harness/core/test_hook.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stragglers.h"
#include "test_hook.h"
#include "zb_test.h"

static void test_median(void) {
    const double two[] = {42.0, 86.0};
    ZB_CHECK(zb_rank_median(two, 2) == 64.0); /* an even count describes no rank */
    const double odd[] = {3.0, NAN, 1.0, 2.0};
    ZB_CHECK(zb_rank_median(odd, 4) == 2.0);
    ZB_CHECK(odd[0] == 3.0 && isnan(odd[1])); /* unchanged */
    const double none[] = {NAN, NAN};
    ZB_CHECK(isnan(zb_rank_median(none, 2)));
    ZB_CHECK(isnan(zb_rank_median(two, 0)));
    /* More ranks than fit on the stack. */
    double *big = (double *)malloc(sizeof(double) * 1001);
    for (int i = 0; i < 1001; i++) big[i] = (double)(1000 - i);
    ZB_CHECK(zb_rank_median(big, 1001) == 500.0);
    ZB_CHECK(big[0] == 1000.0);
    free(big);
}

static void test_deviation(void) {
    ZB_CHECK(zb_deviation_of(11.0, 10.0, ZB_DEVIATION_RELATIVE) > 9.999 &&
             zb_deviation_of(11.0, 10.0, ZB_DEVIATION_RELATIVE) < 10.001);
    ZB_CHECK(zb_deviation_of(5.0, 10.0, ZB_DEVIATION_RELATIVE) == -50.0);
    ZB_CHECK(zb_deviation_of(42.0, 64.0, ZB_DEVIATION_POINTS) == -22.0);
    ZB_CHECK(isnan(zb_deviation_of(1.0, 0.0, ZB_DEVIATION_RELATIVE)));
    ZB_CHECK(zb_deviation_of(1.0, 0.0, ZB_DEVIATION_POINTS) == 1.0);
    ZB_CHECK(isnan(zb_deviation_of(NAN, 1.0, ZB_DEVIATION_POINTS)));
}

static void test_find(void) {
    /* Rank 2 is 50 % slow; rank 3 exactly 10 % fast (not beyond 10 %); rank 4 not measured. */
    const double t[] = {10.0, 10.0, 15.0, 9.0, NAN};
    zb_straggler s[8];
    int n = 0;
    int found = zb_stragglers_find("step_time_ms", t, 5, ZB_DEVIATION_RELATIVE, ZB_WORSE_HIGHER, 10.0, s, 8, &n);
    ZB_CHECK_MSG(found == 1 && n == 1, "found %d stored %d", found, n);
    ZB_CHECK(s[0].rank == 2 && s[0].value == 15.0 && s[0].median == 10.0 && s[0].deviation_pct == 50.0);
    ZB_CHECK(!strcmp(s[0].metric, "step_time_ms"));
    /* A lower threshold also names the fast rank, after the slow one's entry, in rank order. */
    found = zb_stragglers_find("step_time_ms", t, 5, ZB_DEVIATION_RELATIVE, ZB_WORSE_HIGHER, 5.0, s, 8, &n);
    ZB_CHECK(found == 2 && n == 3 && s[1].rank == 2 && s[2].rank == 3 && s[2].deviation_pct < 0);
    /* Two ranks at 42 % and 86 % overlap: both 22 points from their
     * median, and only the lower overlap is named; of two times, only the
     * slower, whichever rank it is. */
    const double ov[] = {42.0, 86.0};
    n = 0;
    found = zb_stragglers_find("overlap_pct", ov, 2, ZB_DEVIATION_POINTS, ZB_WORSE_LOWER, 10.0, s, 8, &n);
    ZB_CHECK(found == 1 && n == 1 && s[0].rank == 0 && s[0].deviation_pct == -22.0 && s[0].median == 64.0);
    const double t2[] = {13.0, 10.0};
    n = 0;
    found = zb_stragglers_find("time_us", t2, 2, ZB_DEVIATION_RELATIVE, ZB_WORSE_HIGHER, 10.0, s, 8, &n);
    ZB_CHECK_MSG(found == 1 && n == 1 && s[0].rank == 0 && s[0].deviation_pct > 10.0, "found %d", found);
    const double t2b[] = {10.0, 13.0};
    n = 0;
    found = zb_stragglers_find("time_us", t2b, 2, ZB_DEVIATION_RELATIVE, ZB_WORSE_HIGHER, 10.0, s, 8, &n);
    ZB_CHECK(found == 1 && n == 1 && s[0].rank == 1);
    /* The cap stores, the count counts (three ranks: both sides named). */
    const double ov3[] = {42.0, 64.0, 86.0};
    n = 0;
    found = zb_stragglers_find("overlap_pct", ov3, 3, ZB_DEVIATION_POINTS, ZB_WORSE_LOWER, 10.0, s, 1, &n);
    ZB_CHECK(found == 2 && n == 1 && s[0].rank == 0);
    /* One rank, or none measured: no one. */
    n = 0;
    ZB_CHECK(zb_stragglers_find("time_us", t, 1, ZB_DEVIATION_RELATIVE, ZB_WORSE_HIGHER, 0.0, s, 8, &n) == 0 && n == 0);
    const double nan2[] = {NAN, NAN};
    ZB_CHECK(zb_stragglers_find("time_us", nan2, 2, ZB_DEVIATION_RELATIVE, ZB_WORSE_HIGHER, 0.0, s, 8, &n) == 0 && n == 0);
}

static void test_delay_hook(void) {
    int r = -1;
    double ms = 0;
    ZB_CHECK_OK(zb_test_delay_parse("2:40", &r, &ms));
    ZB_CHECK(r == 2 && ms == 40.0);
    ZB_CHECK_OK(zb_test_delay_parse("0:0.5", &r, &ms));
    ZB_CHECK(r == 0 && ms == 0.5);
    const char *bad[] = {"", "2", ":40", "2:", "-1:40", "a:40", "2:0", "2:-5", "2:1e9", "2:40ms", "2:nan"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = 7;
        ms = 9;
        zb_status st = zb_test_delay_parse(bad[i], &r, &ms);
        ZB_CHECK_MSG(st == ZB_ERR_INVALID && strstr(zb_error_message(), "ZB_TEST_DELAY_RANK") && r == 7 && ms == 9,
                     "'%s': %s", bad[i], zb_error_message());
        zb_error_clear();
    }
    /* From the environment: this rank's delay, another rank's is 0, unset is 0. */
    setenv(ZB_TEST_DELAY_ENV, "1:30", 1);
    ZB_CHECK_OK(zb_test_delay_ms(1, &ms));
    ZB_CHECK(ms == 30.0);
    ZB_CHECK_OK(zb_test_delay_ms(0, &ms));
    ZB_CHECK(ms == 0.0);
    setenv(ZB_TEST_DELAY_ENV, "1:x", 1);
    ZB_CHECK(zb_test_delay_ms(0, &ms) == ZB_ERR_INVALID); /* a bad value is bad on every rank */
    zb_error_clear();
    unsetenv(ZB_TEST_DELAY_ENV);
    ZB_CHECK_OK(zb_test_delay_ms(1, &ms));
    ZB_CHECK(ms == 0.0);
}

int main(void) {
    test_median();
    test_deviation();
    test_find();
    test_delay_hook();
    return zb_test_finish("test_stragglers");
}
