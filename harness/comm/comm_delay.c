/* The ZB_TEST_DELAY_COMM test hook's delay (see comm_delay.h). */
#include "comm_delay.h"

#include <pthread.h>

#include "test_hook.h"

static pthread_once_t delay_once = PTHREAD_ONCE_INIT;
static int delay_rank = -1; /* written once, under delay_once */
static double delay_ms;

static void delay_read(void) {
    int r = -1;
    double ms = 0;
    if (zb_test_delay_comm(&r, &ms) != ZB_OK) {
        zb_error_clear(); /* main refused it already; here it reads as unset */
        r = -1;
    }
    delay_rank = r;
    delay_ms = ms;
}

zb_status zb_comm_delay_issue(zb_comm *c, zb_stream *s, const char *label, int unit) {
    pthread_once(&delay_once, delay_read);
    if (delay_rank < 0 || c->rank != delay_rank) return ZB_OK;
    if (!c->dev->ops->launch_host) {
        return ZB_FAIL(ZB_ERR_UNSUPPORTED, "%s: the %s device runs no host ops, so it cannot delay '%s'",
                       ZB_TEST_DELAY_COMM_ENV, c->dev->ops->name, label);
    }
    zb_op_info info = {ZB_OP_COPY, "test_delay_comm", unit, 0, 0.0};
    return c->dev->ops->launch_host(s, zb_test_delay_sleep, &delay_ms, NULL, &info);
}
