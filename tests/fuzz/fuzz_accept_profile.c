/* Fuzz target for the acceptance-profile parser (tools/accept_profile.c):
 * any bytes go to zb_accept_profile_parse, which must never crash or leak,
 * must refuse with ZB_ERR_INVALID and a message, and must only accept
 * profiles whose checks satisfy the rules (checked here; a violation
 * aborts). Replayed over tests/fuzz/corpus/fuzz_accept_profile/ by CTest;
 * with -DZB_FUZZ=ON (clang) it builds as a libFuzzer binary. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "accept.h"
#include "status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void zb_fuzz_check_check(const zb_accept_profile *p, const zb_accept_check *c) {
    if (!c->name || !c->name[0] || !c->source || !c->source[0]) abort();
    if (c->repeat < 1 || c->repeat > ZB_ACCEPT_MAX_REPEAT || !(c->timeout_s >= 1)) abort();
    if (c->n_args < 0 || p->n_args + c->n_args > ZB_ACCEPT_MAX_ARGS - 4) abort();
    if (c->kind == ZB_CHECK_DEVICES) {
        if (!c->backend || c->per_node < 1) abort();
        return;
    }
    if (!c->bench || !c->metric || c->min_size_bytes < 0 || !isfinite(c->threshold)) abort();
    if (c->kind == ZB_CHECK_METRIC && !c->def) abort();
    if (c->kind == ZB_CHECK_STRAGGLER && c->threshold < 0) abort();
    /* every threshold fraction x a positive reference, on the right side of it */
    bool is_min = c->kind == ZB_CHECK_METRIC && c->is_min;
    if (!(c->reference > 0) || !c->unit || c->threshold != c->fraction * c->reference) abort();
    if (is_min ? !(c->fraction > 0 && c->fraction <= 1) : !(c->fraction >= 1)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    zb_accept_profile p;
    zb_status s = zb_accept_profile_parse((const char *)data, size, "fuzz.json", &p);
    if (s != ZB_OK) {
        if ((s != ZB_ERR_INVALID && s != ZB_ERR_NOMEM) || zb_error_message()[0] == '\0') abort();
        return 0;
    }
    if (p.n_checks < 1 || !p.name[0]) abort();
    for (size_t i = 0; i < p.n_checks; i++) zb_fuzz_check_check(&p, &p.checks[i]);
    zb_accept_profile_free(&p);
    return 0;
}
