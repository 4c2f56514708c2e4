/* The sim device's virtual time (device_sim.h): issuing an op on a stream,
 * the slowdown of compute beside collectives, and the trace record each op
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

/* Forgets collectives that ended before the host clock: every later op
 * starts at or after it, so they cannot overlap anything to come. */
static void prune(sim_device *d) {
    size_t keep = 0;
    for (size_t i = 0; i < d->n_comm; i++) {
        if (d->comm[i].end_ns > d->host_ns) d->comm[keep++] = d->comm[i];
    }
    d->n_comm = keep;
}

static zb_status remember_comm(sim_device *d, int64_t start, int64_t end) {
    if (d->n_comm == d->cap_comm) {
        prune(d);
        if (d->n_comm == d->cap_comm) {
            size_t cap = d->cap_comm ? 2 * d->cap_comm : 256;
            sim_interval *p = (sim_interval *)realloc(d->comm, cap * sizeof *p);
            if (!p) return ZB_FAIL(ZB_ERR_NOMEM, "sim: out of host memory for the collectives' intervals");
            d->comm = p;
            d->cap_comm = cap;
        }
    }
    /* Kept sorted by start: collectives on one stream arrive in order. */
    size_t i = d->n_comm;
    while (i > 0 && d->comm[i - 1].start_ns > start) {
        d->comm[i] = d->comm[i - 1];
        i--;
    }
    d->comm[i].start_ns = start;
    d->comm[i].end_ns = end;
    d->n_comm++;
    return ZB_OK;
}

/* When compute work of `work_ns` (at full speed) starting at `start` ends:
 * inside the union of the collectives' intervals it progresses at
 * 1 / (1 + interference) of full speed. */
static int64_t compute_end(const sim_device *d, int64_t start, int64_t work_ns) {
    double f = d->hw.sim.interference;
    double t = (double)start, left = (double)work_ns;
    if (f <= 0 || d->n_comm == 0) return start + work_ns;
    size_t i = 0;
    while (left > 0 && i < d->n_comm) {
        /* The next merged busy interval [a, b) that ends after t. */
        double a = (double)d->comm[i].start_ns, b = (double)d->comm[i].end_ns;
        i++;
        while (i < d->n_comm && (double)d->comm[i].start_ns <= b) {
            if ((double)d->comm[i].end_ns > b) b = (double)d->comm[i].end_ns;
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

zb_status zb_sim_issue(zb_stream *zs, const zb_op_info *info, double seconds) {
    sim_stream *s = (sim_stream *)zs;
    sim_device *d = (sim_device *)zs->dev;
    int64_t start = zb_sim_ready_ns(s);
    int64_t work = to_ns(seconds + d->hw.sim.op_overhead_s);
    if (work < 0) work = 0;
    int64_t end = info->kind == ZB_OP_COMPUTE ? compute_end(d, start, work) : start + work;
    if (info->kind == ZB_OP_COMM) ZB_TRY(remember_comm(d, start, end));
    s->clock_ns = end;
    zb_trace_add(d->base.cfg.trace, zs->id, info, d->n_issued++, start, end);
    return ZB_OK;
}
