/* --trace-steps and the step marks of the step benchmark (see step_trace.h). */
#include "step_trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

static zb_status bad_steps(const char *text) {
    char shown[72];
    zb_escape(text, 32, shown, sizeof shown);
    return ZB_FAIL(ZB_ERR_INVALID, "--trace-steps '%s': expected A-B (step numbers from 1, warm-up steps first, "
                   "A <= B), A, or all", shown);
}

/* A positive decimal step number without sign or spaces; *end after it. */
static bool step_number(const char *s, const char **end, int64_t *out) {
    if (*s < '0' || *s > '9') return false;
    errno = 0;
    char *e = NULL;
    long long v = strtoll(s, &e, 10);
    if (errno || v < 1) return false;
    *end = e;
    *out = v;
    return true;
}

zb_status zb_trace_steps_parse(const char *text, int64_t *first, int64_t *last) {
    if (!strcmp(text, "all")) {
        *first = 1;
        *last = INT64_MAX;
        return ZB_OK;
    }
    const char *p = text;
    int64_t a, b;
    if (!step_number(p, &p, &a)) return bad_steps(text);
    if (*p == '\0') {
        *first = *last = a;
        return ZB_OK;
    }
    if (*p != '-' || !step_number(p + 1, &p, &b) || *p != '\0' || b < a) return bad_steps(text);
    *first = a;
    *last = b;
    return ZB_OK;
}

zb_status zb_step_trace_check(zb_config *cfg, const zb_opt_seen *seen) {
    (void)seen;
    cfg->trace_step_first = cfg->trace_step_last = 0;
    if (!cfg->trace_steps[0]) return ZB_OK;
    ZB_TRY(zb_trace_steps_parse(cfg->trace_steps, &cfg->trace_step_first, &cfg->trace_step_last));
    if (!cfg->trace_path[0]) {
        return ZB_FAIL(ZB_ERR_INVALID, "--trace-steps %s: needs --trace FILE (it chooses the steps that file "
                       "writes)", cfg->trace_steps);
    }
    int64_t total = cfg->warmup_steps + cfg->steps;
    if (cfg->trace_step_first > total) {
        return ZB_FAIL(ZB_ERR_INVALID, "--trace-steps %s: the run has %lld steps per schedule (%lld warm-up, then "
                       "%lld measured), numbered from 1", cfg->trace_steps, (long long)total,
                       (long long)cfg->warmup_steps, (long long)cfg->steps);
    }
    return ZB_OK;
}

void zb_step_trace_begin(zb_bench_ctx *ctx, zb_step_mode mode, int stage, zb_step_trace *st) {
    const zb_config *cfg = ctx->cfg;
    zb_trace *t = ctx->dev->cfg.trace;
    memset(st, 0, sizeof *st);
    st->phase = -1;
    st->to_file = cfg->trace_path[0] != '\0';
    if (!st->to_file) return;
    int64_t warm = cfg->warmup_steps, total = warm + cfg->steps;
    if (cfg->trace_step_first > 0) {
        st->first = cfg->trace_step_first;
        st->last = cfg->trace_step_last < total ? cfg->trace_step_last : total;
        snprintf(t->steps_rule, sizeof t->steps_rule, "--trace-steps %s", cfg->trace_steps);
    } else {
        int64_t n = cfg->steps < ZB_TRACE_STEPS_DEFAULT ? cfg->steps : ZB_TRACE_STEPS_DEFAULT;
        st->first = warm + 1;
        st->last = warm + n;
        snprintf(t->steps_rule, sizeof t->steps_rule, "default: each run's first %d measured steps (warm-up "
                 "steps and later measured steps left out; --trace-steps A-B or all chooses)",
                 ZB_TRACE_STEPS_DEFAULT);
    }
    st->phase = zb_trace_phase_begin(t, mode == ZB_MODE_SYNC ? "sync" : "prefetch", stage, (int)warm,
                                     (int)cfg->steps);
}

void zb_step_trace_end_step(zb_bench_ctx *ctx, const zb_step_trace *st, int index, bool warmup,
                            size_t first_record, const zb_step_result *r) {
    if (!st->to_file) return;
    zb_trace *t = ctx->dev->cfg.trace;
    /* The device tracer's records of this step, before keeping or dropping them. */
    zb_backends_flush_trace(&ctx->backends);
    if (index >= st->first && index <= st->last) {
        zb_trace_mark_step(t, st->phase, index, warmup, r->start_ns, r->end_ns);
    } else {
        zb_trace_truncate(t, first_record);
    }
}
