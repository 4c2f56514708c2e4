/* The reading under the step's table (bench/step_reading.h), over synthetic
 * figures: each case says what its numbers mean and carries them; the
 * shared-cores sentence appears only where compute and comm share cores
 * and compute slowed; with one rank (nothing sent) nothing about hiding is
 * said. */
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

int main(void) {
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
