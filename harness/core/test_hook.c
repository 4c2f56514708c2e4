/* The test hooks' one reader (test_hook.h). */
#include "test_hook.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parse.h"

/* "R:MS" for the variable `var` (its name in the message). */
static zb_status parse_rank_ms(const char *var, const char *value, int *rank, double *ms) {
    char head[32];
    const char *colon = value ? strchr(value, ':') : NULL;
    int64_t r = -1;
    double d = 0;
    bool ok = colon && (size_t)(colon - value) < sizeof head;
    if (ok) {
        memcpy(head, value, (size_t)(colon - value));
        head[colon - value] = '\0';
        ok = zb_parse_int64(head, &r) == ZB_OK && r >= 0 && r <= INT32_MAX &&
             zb_parse_double(colon + 1, &d) == ZB_OK && d > 0 && d <= ZB_TEST_DELAY_MAX_MS;
    }
    zb_error_clear(); /* the parsers' own messages: this one names the variable */
    if (!ok) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s='%.64s': expected RANK:MS, a rank >= 0 and milliseconds in (0, %g]",
                       var, value ? value : "", ZB_TEST_DELAY_MAX_MS);
    }
    *rank = (int)r;
    *ms = d;
    return ZB_OK;
}

zb_status zb_test_delay_parse(const char *value, int *rank, double *ms) {
    return parse_rank_ms(ZB_TEST_DELAY_ENV, value, rank, ms);
}

zb_status zb_test_delay_comm(int *rank, double *ms) {
    *rank = -1;
    *ms = 0;
    const char *v = getenv(ZB_TEST_DELAY_COMM_ENV);
    if (!v || !v[0]) return ZB_OK;
    return parse_rank_ms(ZB_TEST_DELAY_COMM_ENV, v, rank, ms);
}

zb_status zb_test_delay_ms(int rank, double *ms) {
    *ms = 0;
    const char *v = getenv(ZB_TEST_DELAY_ENV);
    if (!v || !v[0]) return ZB_OK;
    int r = 0;
    double d = 0;
    ZB_TRY(zb_test_delay_parse(v, &r, &d));
    if (r == rank) *ms = d;
    return ZB_OK;
}

zb_status zb_test_delay_sleep(void *ms_ptr) {
    double ms = *(const double *)ms_ptr;
    struct timespec ts = {(time_t)(ms / 1e3), (long)(fmod(ms, 1e3) * 1e6)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    return ZB_OK;
}
