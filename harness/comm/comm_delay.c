/* The ZB_TEST_DELAY_COMM test hook (see comm_delay.h). */
#include "comm_delay.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The syntax alone, recording no error (the issue path reads it too). */
static bool delay_value(const char *value, int *rank, int64_t *delay_ns) {
    if (!value || !value[0]) return false;
    char *end = NULL;
    errno = 0;
    long r = strtol(value, &end, 10);
    if (errno || end == value || *end != ':' || r < 0 || r > 1 << 24 || value[0] == '-' || value[0] == '+') {
        return false;
    }
    const char *ms_text = end + 1;
    if (!ms_text[0] || ms_text[0] == ' ' || ms_text[0] == '-' || ms_text[0] == '+') return false;
    double ms = strtod(ms_text, &end);
    if (errno || *end != '\0' || !(ms > 0) || ms > ZB_TEST_DELAY_COMM_MAX_MS) return false;
    *rank = (int)r;
    *delay_ns = (int64_t)(ms * 1e6);
    return true;
}

zb_status zb_comm_delay_parse(const char *value, int *rank, int64_t *delay_ns) {
    if (delay_value(value, rank, delay_ns)) return ZB_OK;
    char shown[68] = "";
    size_t n = 0;
    for (; value && value[n] && n < 64; n++) shown[n] = (value[n] < 0x20 || value[n] == 0x7f) ? '?' : value[n];
    strcpy(shown + n, value && value[n] ? "..." : "");
    return ZB_FAIL(ZB_ERR_INVALID, "%s='%s': expected RANK:MS, a rank >= 0 and milliseconds in (0, %g] "
                   "(a test hook that delays one rank's collectives)", ZB_TEST_DELAY_COMM_ENV, shown,
                   ZB_TEST_DELAY_COMM_MAX_MS);
}

zb_status zb_comm_delay_check(void) {
    const char *v = getenv(ZB_TEST_DELAY_COMM_ENV);
    int rank;
    int64_t ns;
    return v ? zb_comm_delay_parse(v, &rank, &ns) : ZB_OK;
}

static pthread_once_t delay_once = PTHREAD_ONCE_INIT;
static int delay_rank = -1;  /* written once, under delay_once */
static int64_t delay_ns;

static void delay_read(void) {
    int r;
    int64_t ns;
    if (delay_value(getenv(ZB_TEST_DELAY_COMM_ENV), &r, &ns)) {
        delay_rank = r;
        delay_ns = ns;
    }
}

static zb_status delay_run(void *arg) {
    int64_t ns = *(const int64_t *)arg;
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    return ZB_OK;
}

zb_status zb_comm_delay_issue(zb_comm *c, zb_stream *s, const char *label, int unit) {
    pthread_once(&delay_once, delay_read);
    if (delay_rank < 0 || c->rank != delay_rank) return ZB_OK;
    if (!c->dev->ops->launch_host) {
        return ZB_FAIL(ZB_ERR_UNSUPPORTED, "%s: the %s device runs no host ops, so it cannot delay '%s'",
                       ZB_TEST_DELAY_COMM_ENV, c->dev->ops->name, label);
    }
    zb_op_info info = {ZB_OP_COPY, "test_delay_comm", unit, 0, 0.0};
    return c->dev->ops->launch_host(s, delay_run, &delay_ns, NULL, &info);
}
