/* The sim device's virtual time (device_sim.h): issuing an op on a stream,
 * the slowdown of compute beside collectives and of collectives beside
 * compute, and the trace record each op
 * leaves. Times are integer nanoseconds, so a run is exact and repeatable. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

/* The ns an op of `seconds` takes: rounded to the nearest ns. */
static int64_t to_ns(double seconds) { return (int64_t)llround(seconds * 1e9); }

int64_t zb_sim_ready_ns(const sim_stream *s) {
    const sim_device *d = (const sim_device *)s->base.dev;
    return s->clock_ns > d->host_ns ? s->clock_ns : d->host_ns;
}

/* Forgets intervals that ended before the host clock: every later op
 * starts at or after it, so they cannot overlap anything to come. */
static void prune(const sim_device *d, sim_interval *iv, size_t *n) {
    size_t keep = 0;
    for (size_t i = 0; i < *n; i++) {
        if (iv[i].end_ns > d->host_ns) iv[keep++] = iv[i];
    }
    *n = keep;
}

/* Adds [start, end) to a list kept sorted by start (ops on one stream
 * arrive in order; the few streams interleave near the end). */
static zb_status remember(const sim_device *d, sim_interval **iv, size_t *n, size_t *cap, int64_t start,
                          int64_t end) {
    if (*n == *cap) {
        prune(d, *iv, n);
        if (*n == *cap) {
            size_t c = *cap ? 2 * *cap : 256;
            sim_interval *p = (sim_interval *)realloc(*iv, c * sizeof *p);
            if (!p) return ZB_FAIL(ZB_ERR_NOMEM, "sim: out of host memory for the ops' intervals");
            *iv = p;
            *cap = c;
        }
    }
    size_t i = *n;
    while (i > 0 && (*iv)[i - 1].start_ns > start) {
        (*iv)[i] = (*iv)[i - 1];
        i--;
    }
    (*iv)[i].start_ns = start;
    (*iv)[i].end_ns = end;
    (*n)++;
    return ZB_OK;
}

/* When work of `work_ns` (at full speed) starting at `start` ends: inside
 * the union of the intervals iv[0..n) (the other kind of op, issued
 * before) it progresses at 1 / (1 + f) of full speed. */
static int64_t slowed_end(const sim_interval *iv, size_t n, double f, int64_t start, int64_t work_ns) {
    double t = (double)start, left = (double)work_ns;
    if (f <= 0 || n == 0) return start + work_ns;
    size_t i = 0;
    while (left > 0 && i < n) {
        /* The next merged busy interval [a, b) that ends after t. */
        double a = (double)iv[i].start_ns, b = (double)iv[i].end_ns;
        i++;
        while (i < n && (double)iv[i].start_ns <= b) {
            if ((double)iv[i].end_ns > b) b = (double)iv[i].end_ns;
            i++;
        }
        if (b <= t) continue;
        if (a > t) { /* full speed up to a */
            double run = a - t < left ? a - t : left;
            t += run;
            left -= run;
            if (left <= 0) break;
        }
        double slow_cap = (b - t) / (1.0 + f); /* work that fits before b */
        if (left <= slow_cap) {
            t += left * (1.0 + f);
            left = 0;
        } else {
            left -= slow_cap;
            t = b;
        }
    }
    return (int64_t)llround(t + left);
}

/* ---- the open list: what a later stretch may move --------------------------- */

/* Forgets what ended before the host clock (nothing issued later can start
 * before it, so nothing can move it), then appends `item`. */
static zb_status open_add(sim_device *d, sim_open item) {
    size_t keep = 0;
    for (size_t i = 0; i < d->n_open; i++) {
        if (d->open[i].end_ns >= d->host_ns) d->open[keep++] = d->open[i];
    }
    d->n_open = keep;
    if (d->n_open == d->cap_open) {
        size_t c = d->cap_open ? 2 * d->cap_open : 256;
        sim_open *p = (sim_open *)realloc(d->open, c * sizeof *p);
        if (!p) return ZB_FAIL(ZB_ERR_NOMEM, "sim: out of host memory for the open ops");
        d->open = p;
        d->cap_open = c;
    }
    d->open[d->n_open++] = item;
    return ZB_OK;
}

void zb_sim_forget(sim_device *d, const sim_stream *s, const sim_event *e) {
    size_t keep = 0;
    for (size_t i = 0; i < d->n_open; i++) {
        bool gone = (e && d->open[i].ev == e) || (s && d->open[i].s == s);
        if (!gone) d->open[keep++] = d->open[i];
    }
    d->n_open = keep;
}

zb_status zb_sim_open_event(sim_device *d, sim_stream *s, sim_event *e) {
    zb_sim_forget(d, NULL, e);
    return open_add(d, (sim_open){s, e, ZB_OP_COPY, 0, e->stamp_ns, e->stamp_ns});
}

/* The open collectives' intervals, sorted by start, into a fresh array
 * (*iv, NULL when none): what a compute op is slowed inside. */
static zb_status open_comm(const sim_device *d, sim_interval **iv, size_t *n) {
    *iv = NULL;
    *n = 0;
    size_t k = 0;
    for (size_t i = 0; i < d->n_open; i++) k += !d->open[i].ev && d->open[i].kind == ZB_OP_COMM;
    if (k == 0) return ZB_OK;
    sim_interval *v = (sim_interval *)malloc(k * sizeof *v);
    if (!v) return ZB_FAIL(ZB_ERR_NOMEM, "sim: out of host memory for the collectives' intervals");
    for (size_t i = 0; i < d->n_open; i++) {
        const sim_open *o = &d->open[i];
        if (o->ev || o->kind != ZB_OP_COMM) continue;
        size_t j = (*n)++;
        while (j > 0 && v[j - 1].start_ns > o->start_ns) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = (sim_interval){o->start_ns, o->end_ns};
    }
    *iv = v;
    return ZB_OK;
}

/* Collectives beside compute (comm_interference f): compute running over
 * [cs, ce) slows every open collective it overlaps to 1 / (1 + f) there,
 * issued before it or not; a collective that ends later pushes what
 * follows it on its stream (ops, event stamps, the stream's clock) and the
 * trace records move with them. First order: the compute's own slowdown
 * was costed against the collectives as they stood. Nothing a stream has
 * already waited for can move: anything issued after such a wait starts
 * after the stamp it waited for, so it overlaps only collectives after it. */
static void stretch_comm(sim_device *d, int64_t cs, int64_t ce, double f) {
    if (f <= 0 || ce <= cs) return;
    zb_trace *t = d->base.cfg.trace;
    for (size_t i = 0; i < d->n_open; i++) {
        sim_open *m = &d->open[i];
        if (m->ev || m->kind != ZB_OP_COMM || m->end_ns <= cs || m->start_ns >= ce) continue;
        double t0 = (double)(m->start_ns > cs ? m->start_ns : cs), left = (double)m->end_ns - t0;
        double room = (double)ce - t0;
        double end = left * (1.0 + f) <= room ? t0 + left * (1.0 + f) : (double)ce + (left - room / (1.0 + f));
        int64_t delta = (int64_t)llround(end) - m->end_ns;
        if (delta <= 0) continue;
        m->end_ns += delta;
        zb_trace_retime(t, m->seq, m->start_ns, m->end_ns);
        int64_t prev = m->end_ns;
        for (size_t j = i + 1; j < d->n_open; j++) {
            sim_open *x = &d->open[j];
            if (x->s != m->s) continue;
            if (x->ev) {
                if (x->end_ns < prev) {
                    x->start_ns = x->end_ns = prev;
                    x->ev->stamp_ns = prev;
                }
                continue;
            }
            if (x->start_ns < prev) {
                int64_t shift = prev - x->start_ns;
                x->start_ns += shift;
                x->end_ns += shift;
                zb_trace_retime(t, x->seq, x->start_ns, x->end_ns);
            }
            prev = x->end_ns;
        }
        if (m->s->clock_ns < prev) m->s->clock_ns = prev;
    }
}

/* The hold at a collective's start (comm_hold_s, comm_hold.h): where a
 * rank's compute and comm share its cores, the collective's thread takes
 * the core when it begins and compute resumes only when it lets it go. A
 * compute op that would start in an open collective's first comm_hold_s
 * (at most the collective's own span) starts when that ends. */
static int64_t held_start(const sim_device *d, int64_t start) {
    int64_t hold = to_ns(d->hw.sim.comm_hold_s);
    if (hold <= 0) return start;
    for (size_t i = 0; i < d->n_open; i++) {
        const sim_open *m = &d->open[i];
        if (m->ev || m->kind != ZB_OP_COMM) continue;
        int64_t h = m->end_ns - m->start_ns < hold ? m->end_ns - m->start_ns : hold;
        if (m->start_ns <= start && start < m->start_ns + h) start = m->start_ns + h;
    }
    return start;
}

zb_status zb_sim_issue(zb_stream *zs, const zb_op_info *info, double seconds) {
    sim_stream *s = (sim_stream *)zs;
    sim_device *d = (sim_device *)zs->dev;
    /* The per-op overhead is a gap before the op (launch, the stream's hand-off), not part of it: a trace
     * record holds the op's own span, as CUPTI's and the cpu stream's records do. */
    int64_t start = zb_sim_ready_ns(s) + to_ns(d->hw.sim.op_overhead_s);
    int64_t work = to_ns(seconds);
    if (work < 0) work = 0;
    int64_t end = start + work;
    if (info->kind == ZB_OP_COMPUTE) {
        start = held_start(d, start);
        sim_interval *comm = NULL;
        size_t n_comm = 0;
        ZB_TRY(open_comm(d, &comm, &n_comm));
        end = slowed_end(comm, n_comm, d->hw.sim.interference, start, work);
        free(comm);
        if (d->hw.sim.comm_interference > 0) {
            ZB_TRY(remember(d, &d->compute, &d->n_compute, &d->cap_compute, start, end));
            stretch_comm(d, start, end, d->hw.sim.comm_interference);
        }
    } else if (info->kind == ZB_OP_COMM) {
        end = slowed_end(d->compute, d->n_compute, d->hw.sim.comm_interference, start, work);
    }
    s->clock_ns = end;
    uint64_t seq = d->n_issued++;
    zb_trace_add(d->base.cfg.trace, zs->id, info, seq, start, end);
    return open_add(d, (sim_open){s, NULL, info->kind, seq, start, end});
}
