/* The reading under the step's table (bench/step_reading.h), over synthetic
 * figures: each case says what its numbers mean and carries them; the
 * shared-cores sentence appears only where compute and comm share cores
 * and compute slowed; with one rank (nothing sent) nothing about hiding is
 * said; with pairs every conclusion follows its interval (test_paired). */
#include <math.h>
#include <string.h>

#include "step_reading.h"
#include "zb_test.h"

static char text[1024];

static const char *reading(const zb_reading_figures *s, const zb_reading_figures *p, double hidden, double slow,
                           bool shares) {
    size_t n = zb_step_reading(s, p, hidden, slow, shares, text, sizeof text);
    ZB_CHECK(n == strlen(text));
    return text;
}

#define HAS(t, sub) ZB_CHECK_MSG(strstr((t), (sub)) != NULL, "'%s' not in: %s", (sub), (t))
#define HASNT(t, sub) ZB_CHECK_MSG(strstr((t), (sub)) == NULL, "'%s' in: %s", (sub), (t))

/* With pairs, the conclusions follow the intervals (zb_step_reading_paired). */
static void test_paired(void) {
    zb_reading_figures sync = {20.0, 0.0, 10.0, 8.0, 10.0, false};
    zb_reading_figures pre = {18.0, 60.0, 4.0, 8.4, 10.0, false};
    char buf[1024];
    /* Step time within noise: no direction, no hiding, no slowdown claimed. */
    zb_reading_pair q = {{8, 0.3, -0.1, 0.4, 0.93, false}, {8, 90.0, -20.0, 150.0, 0.93, false},
                         {8, 6.0, -2.0, 9.0, 0.93, false}};
    zb_step_reading_paired(&sync, &pre, &q, true, buf, sizeof buf);
    HAS(buf, "No difference in step time is detectable at this noise");
    HAS(buf, "+0.300 ms [-0.100, 0.400]");
    HAS(buf, "half-width 0.250 ms");
    HAS(buf, "20.000 -> 18.000 ms");
    /* n (hw / |median|)^2 = 8 (0.25 / 0.3)^2 < 8: at least one more pair */
    HAS(buf, "about 1 more pair would resolve a difference of this size (+0.300 ms)");
    HASNT(buf, "faster");
    HASNT(buf, "hid ");
    HASNT(buf, "slowed");
    HASNT(buf, "share this backend's cores");
    /* A wide interval: 8 (2 / 0.5)^2 = 128 pairs in all, 120 more. */
    zb_reading_pair wide = {{8, 0.5, -1.5, 2.5, 0.93, false}, {8, 90.0, -20.0, 150.0, 0.93, false},
                            {8, 6.0, -2.0, 9.0, 0.93, false}};
    zb_step_reading_paired(&sync, &pre, &wide, false, buf, sizeof buf);
    HAS(buf, "about 120 more pairs would resolve a difference of this size (+0.500 ms)");
    /* Faster, hidden over 100 % said as it is, slowdown within noise. */
    zb_reading_pair f = {{8, -2.0, -2.5, -1.5, 0.93, true}, {8, 261.0, 200.0, 300.0, 0.93, true},
                         {8, 3.0, -1.0, 6.0, 0.93, false}};
    zb_step_reading_paired(&sync, &pre, &f, true, buf, sizeof buf);
    HAS(buf, "Prefetch was faster than sync: -2.000 ms [-2.500, -1.500]");
    HAS(buf, "hid 261.0 %");
    HAS(buf, "over 100 %");
    HAS(buf, "compute time did not change detectably");
    HASNT(buf, "share this backend's cores");
    /* Slower, with a compute slowdown whose interval excludes 0, on shared cores. */
    zb_reading_pair w = {{8, 1.5, 1.0, 2.0, 0.93, true}, {8, -15.0, -20.0, -10.0, 0.93, true},
                         {8, 20.0, 10.0, 30.0, 0.93, true}};
    zb_step_reading_paired(&sync, &pre, &w, true, buf, sizeof buf);
    HAS(buf, "Prefetch was slower than sync: +1.500 ms [1.000, 2.000]");
    HAS(buf, "although it overlapped 60.0 %");
    HAS(buf, "compute slowed by 20.0 % [10.0, 30.0]");
    HAS(buf, "share this backend's cores");
    HASNT(buf, "hid ");
    /* Too few pairs for an interval. */
    zb_reading_pair few = {{3, -2.0, NAN, NAN, NAN, false}, {3, 50.0, NAN, NAN, NAN, false},
                           {3, 1.0, NAN, NAN, NAN, false}};
    zb_step_reading_paired(&sync, &pre, &few, false, buf, sizeof buf);
    HAS(buf, "Too few pairs (3; a 95 % interval needs 6)");
    HASNT(buf, "faster");
    /* One rank: the pairs decide nothing about hiding. */
    zb_reading_figures one_s = {2.0, NAN, NAN, 1.0, 0.1, true}, one_p = {1.5, NAN, NAN, 1.0, 0.1, true};
    zb_step_reading_paired(&one_s, &one_p, &f, false, buf, sizeof buf);
    HAS(buf, "No bytes went between ranks (one rank)");
    HASNT(buf, "faster");
}

int main(void) {
    test_paired();
    zb_reading_figures sync = {20.0, 0.0, 10.0, 8.0, 10.0};
    zb_reading_figures pre = {18.0, 60.0, 4.0, 8.4, 10.0};

    /* Prefetch faster: hidden, compute slowdown and the net change, with their numbers. */
    const char *t = reading(&sync, &pre, 80.0, 5.0, false);
    HAS(t, "hid 80.0 %");
    HAS(t, "10.000 ms of exposed communication");
    HAS(t, "compute slowed by 5.0 %");
    HAS(t, "-10.0 %");
    HAS(t, "20.000 -> 18.000 ms");
    HASNT(t, "share");
    /* The same on a backend whose compute and comm share cores: the second sentence. */
    t = reading(&sync, &pre, 80.0, 5.0, true);
    HAS(t, "hid 80.0 %");
    HAS(t, "share this backend's cores");
    /* ... but not when compute did not slow. */
    t = reading(&sync, &pre, 80.0, -2.0, true);
    HAS(t, "compute sped up by 2.0 %");
    HASNT(t, "share");

    /* One rank: nothing went between ranks, so nothing about hiding is said,
     * whatever the (local) figures; the step-time change still is. */
    zb_reading_figures one_s = {2.0, NAN, NAN, 1.0, 0.1, true};
    zb_reading_figures one_p = {1.5, NAN, NAN, 1.0, 0.1, true};
    t = reading(&one_s, &one_p, NAN, NAN, true);
    HAS(t, "No bytes went between ranks (one rank)");
    HAS(t, "not measured");
    HAS(t, "-25.0 %");
    HAS(t, "2.000 -> 1.500 ms");
    HASNT(t, "hid ");
    HASNT(t, "share this backend's cores");
    /* ... even with figures that would read as hiding (one-rank copies overlapped). */
    zb_reading_figures copy_s = {2.0, 0.0, 0.5, 1.0, 0.5, true};
    zb_reading_figures copy_p = {1.5, 60.0, 0.2, 1.0, 0.5, true};
    t = reading(&copy_s, &copy_p, 100.0, 5.0, true);
    HAS(t, "No bytes went between ranks");
    HASNT(t, "hid ");
    HASNT(t, "share this backend's cores");
    t = reading(&one_s, NULL, NAN, NAN, false);
    HAS(t, "No bytes went between ranks (one rank)");
    t = reading(NULL, &copy_p, NAN, NAN, false);
    HAS(t, "No bytes went between ranks (one rank)");
    HASNT(t, "overlapped 60.0");

    /* No overlap: says so, and that nothing of sync's exposed comm was hidden. */
    zb_reading_figures none = {20.4, 0.2, 10.0, 8.0, 10.0};
    t = reading(&sync, &none, 0.0, 0.0, false);
    HAS(t, "overlapped no communication");
    HAS(t, "0.2 %");
    HAS(t, "+2.0 %");

    /* Prefetch slower: says so, with the compute slowdown that outweighed the overlap. */
    zb_reading_figures slow = {23.0, 50.0, 5.0, 12.0, 10.0};
    t = reading(&sync, &slow, 0.0, 50.0, false);
    HAS(t, "slower than sync");
    HAS(t, "+15.0 %");
    HAS(t, "overlapped 50.0 %");
    HAS(t, "compute slowed by 50.0 %");
    t = reading(&sync, &slow, 0.0, -1.0, false);
    HAS(t, "did not shorten the step");

    /* Not measured (no trace), and nothing exposed to hide. */
    zb_reading_figures untraced = {20.0, NAN, NAN, NAN, NAN};
    t = reading(&untraced, &untraced, NAN, NAN, true);
    HAS(t, "not measured");
    HAS(t, "+0.0 %");
    zb_reading_figures quiet = {20.0, NAN, 0.0, 20.0, 0.0};
    t = reading(&quiet, &pre, NAN, 0.0, false);
    HAS(t, "nothing to hide");

    /* One schedule alone. */
    t = reading(&sync, NULL, NAN, NAN, false);
    HAS(t, "10.000 ms of the 20.000 ms step (50.0 %)");
    t = reading(NULL, &pre, NAN, NAN, false);
    HAS(t, "overlapped 60.0 % of its 10.000 ms");
    HAS(t, "4.000 ms (22.2 % of the 18.000 ms step)");

    /* A short buffer is cut, never overrun. */
    char small[16];
    size_t n = zb_step_reading(&sync, &pre, 80.0, 5.0, true, small, sizeof small);
    ZB_CHECK(n == strlen(small) && n < sizeof small);
    return zb_test_finish("test_step_reading");
}
