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

/* A paired statistic's median and interval, "+1.234 [0.500, 2.000]". */
static void put_ci(text *t, const zb_paired *q, const char *fmt_unit) {
    put(t, "%+.3f %s [%.3f, %.3f]", q->median, fmt_unit, q->lo, q->hi);
}

/* Compute beside the communication: said only as its interval allows. */
static void put_slowdown(text *t, const zb_paired *sl) {
    if (sl->n < ZB_PAIRED_MIN_PAIRS) return;
    if (!sl->significant) {
        put(t, "; compute time did not change detectably beside it");
        return;
    }
    put(t, "; compute %s by %.1f %% [%.1f, %.1f] while communication ran beside it",
        sl->median > 0 ? "slowed" : "sped up", fabs(sl->median), sl->lo, sl->hi);
}

/* Sync against prefetch from the pairs: the step time's verdict first, the
 * figures that explain it after, none beyond what its interval says. */
static void paired_both(text *t, const zb_reading_figures *s, const zb_reading_figures *p, const zb_reading_pair *q) {
    const zb_paired *d = &q->step_diff;
    if (d->n < ZB_PAIRED_MIN_PAIRS) {
        put(t, "Too few pairs (%zu; a 95 %% interval needs %d) to tell whether prefetch changed the step time: the "
               "median difference was %+.3f ms (%.3f -> %.3f ms); run more --steps.", d->n, ZB_PAIRED_MIN_PAIRS,
            d->median, s->step_ms, p->step_ms);
        return;
    }
    if (!d->significant) {
        put(t, "No difference in step time is detectable at this noise: prefetch - sync ");
        put_ci(t, d, "ms");
        put(t, " over %zu pairs (half-width %.3f ms; medians %.3f -> %.3f ms)", d->n, 0.5 * (d->hi - d->lo),
            s->step_ms, p->step_ms);
        size_t need = zb_paired_pairs_for(d, fabs(d->median));
        if (need > d->n && d->median != 0.0)
            put(t, "; about %zu more pair%s would resolve a difference of this size (%+.3f ms), if it is real "
                   "(--precision, --max-steps)", need - d->n, need - d->n == 1 ? "" : "s", d->median);
        else put(t, "; more pairs (--precision, --max-steps) would narrow the interval");
        put(t, ".");
        if (!isnan(p->overlap_pct)) put(t, " Prefetch overlapped %.1f %% of its communication.", p->overlap_pct);
        return;
    }
    bool faster = d->hi < 0;
    put(t, "Prefetch was %s than sync: ", faster ? "faster" : "slower");
    put_ci(t, d, "ms");
    put(t, " per step (%+.1f %%, %.3f -> %.3f ms, %zu pairs)", net_pct(s, p), s->step_ms, p->step_ms, d->n);
    const zb_paired *h = &q->hidden;
    if (faster && s->exposed_comm_ms > 0 && h->n > 0) {
        put(t, "; it hid %.1f %% of sync's %.3f ms of exposed communication", h->median, s->exposed_comm_ms);
        if (h->median > 100.0) {
            put(t, " (over 100 %%: the step shortened by more than sync's exposed communication, so more than "
                   "the hidden communication changed)");
        }
    } else if (!faster && !isnan(p->overlap_pct)) {
        put(t, " although it overlapped %.1f %% of its communication", p->overlap_pct);
    }
    put_slowdown(t, &q->slowdown);
    put(t, ".");
}

size_t zb_step_reading_paired(const zb_reading_figures *sync, const zb_reading_figures *prefetch,
                              const zb_reading_pair *pair, bool shares_cores, char *out, size_t n) {
    bool usable = sync && prefetch && pair && !sync->sent_nothing && !prefetch->sent_nothing &&
                  !isnan(sync->exposed_comm_ms) && !isnan(prefetch->overlap_pct);
    if (!usable) { /* one rank, not traced, or one schedule: nothing the pairs decide */
        return zb_step_reading(sync, prefetch, pair ? pair->hidden.median : NAN,
                               pair ? pair->slowdown.median : NAN, shares_cores, out, n);
    }
    if (!out || n == 0) return 0;
    out[0] = '\0';
    text t = {out, n, 0};
    paired_both(&t, sync, prefetch, pair);
    const zb_paired *sl = &pair->slowdown;
    if (shares_cores && sl->significant && sl->lo > ZB_READING_SLOWDOWN_PCT) {
        put(&t, " Compute and communication share this backend's cores: compute slowed because the comm threads "
                "ran on the cores it uses.");
    }
    return t.len;
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
