/* The reading under the step's table (step_reading.h): which case the
 * figures fall in, then the sentence with their numbers. */
#include "step_reading.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct text {
    char *p;
    size_t n, len;
} text;

static void put(text *t, const char *fmt, ...) {
    if (t->len + 1 >= t->n) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->p + t->len, t->n - t->len, fmt, ap);
    va_end(ap);
    if (k > 0) t->len += (size_t)k < t->n - t->len ? (size_t)k : t->n - t->len - 1;
}

static double net_pct(const zb_reading_figures *s, const zb_reading_figures *p) {
    return 100.0 * (p->step_ms / s->step_ms - 1.0);
}

/* Sync against prefetch: how much of sync's exposed comm prefetch hid, what
 * compute lost beside the comm, and the net change in step time. */
static void both(text *t, const zb_reading_figures *s, const zb_reading_figures *p, double hidden,
                 double slowdown) {
    double net = net_pct(s, p);
    if (s->sent_nothing || p->sent_nothing) {
        put(t, "No bytes went between ranks (one rank), so there was no communication to hide: overlap, exposed "
               "communication and hidden %% are not measured; prefetch changed the step time by %+.1f %% against "
               "sync (%.3f -> %.3f ms). Run 2 or more ranks to see what prefetch hides.", net, s->step_ms,
            p->step_ms);
    } else if (isnan(s->exposed_comm_ms) || isnan(p->overlap_pct)) {
        put(t, "Overlap was not measured (the device's work was not traced); prefetch changed the step time by "
               "%+.1f %% against sync (%.3f -> %.3f ms).", net, s->step_ms, p->step_ms);
    } else if (!(s->exposed_comm_ms > 0)) {
        put(t, "Sync left no communication exposed, so prefetch had nothing to hide; the step time changed by "
               "%+.1f %% (%.3f -> %.3f ms).", net, s->step_ms, p->step_ms);
    } else if (p->overlap_pct < ZB_READING_NO_OVERLAP_PCT) {
        put(t, "Prefetch overlapped no communication with compute (overlap %.1f %%), so none of sync's %.3f ms of "
               "exposed communication was hidden; the step time changed by %+.1f %% (%.3f -> %.3f ms).",
            p->overlap_pct, s->exposed_comm_ms, net, s->step_ms, p->step_ms);
    } else if (net < 0) {
        put(t, "Prefetch hid %.1f %% of sync's %.3f ms of exposed communication", hidden, s->exposed_comm_ms);
        if (!isnan(slowdown)) {
            put(t, "; compute %s by %.1f %% while communication ran beside it", slowdown >= 0 ? "slowed" : "sped up",
                fabs(slowdown));
        }
        put(t, ", for a net step time change of %+.1f %% (%.3f -> %.3f ms).", net, s->step_ms, p->step_ms);
    } else {
        put(t, "Prefetch was slower than sync (%+.1f %%, %.3f -> %.3f ms) although it overlapped %.1f %% of its "
               "communication with compute", net, s->step_ms, p->step_ms, p->overlap_pct);
        if (slowdown > 0) {
            put(t, ": compute slowed by %.1f %% while communication ran beside it, which cost more than the "
                   "overlap saved.", slowdown);
        } else {
            put(t, ": the overlap did not shorten the step.");
        }
    }
}

static const char *const ONE_RANK = "No bytes went between ranks (one rank): exposed communication and overlap "
                                     "are not measured; run 2 or more ranks.";

static void sync_only(text *t, const zb_reading_figures *s) {
    if (s->sent_nothing) {
        put(t, "%s", ONE_RANK);
        return;
    }
    if (isnan(s->exposed_comm_ms)) {
        put(t, "Overlap was not measured (the device's work was not traced).");
        return;
    }
    double share = s->step_ms > 0 ? 100.0 * s->exposed_comm_ms / s->step_ms : NAN;
    put(t, "In sync, %.3f ms of the %.3f ms step (%.1f %%) was communication that compute waited for: the most "
           "prefetch could hide.", s->exposed_comm_ms, s->step_ms, share);
}

static void prefetch_only(text *t, const zb_reading_figures *p) {
    if (p->sent_nothing) {
        put(t, "%s", ONE_RANK);
        return;
    }
    if (isnan(p->overlap_pct)) {
        put(t, "Overlap was not measured (the device's work or its communication was not traced).");
        return;
    }
    double share = p->step_ms > 0 ? 100.0 * p->exposed_comm_ms / p->step_ms : NAN;
    put(t, "Prefetch overlapped %.1f %% of its %.3f ms of communication with compute; %.3f ms (%.1f %% of the "
           "%.3f ms step) stayed exposed.", p->overlap_pct, p->comm_ms, p->exposed_comm_ms, share, p->step_ms);
}

size_t zb_step_reading(const zb_reading_figures *sync, const zb_reading_figures *prefetch, double hidden_pct,
                       double slowdown_pct, bool shares_cores, char *out, size_t n) {
    if (!out || n == 0) return 0;
    out[0] = '\0';
    text t = {out, n, 0};
    if (sync && prefetch) both(&t, sync, prefetch, hidden_pct, slowdown_pct);
    else if (sync) sync_only(&t, sync);
    else if (prefetch) prefetch_only(&t, prefetch);
    bool sent = sync && prefetch && !sync->sent_nothing && !prefetch->sent_nothing;
    if (sent && shares_cores && slowdown_pct > ZB_READING_SLOWDOWN_PCT) {
        put(&t, " Compute and communication share this backend's cores: compute slowed because the comm threads "
                "ran on the cores it uses.");
    }
    return t.len;
}
