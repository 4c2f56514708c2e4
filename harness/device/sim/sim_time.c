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

zb_status zb_sim_issue(zb_stream *zs, const zb_op_info *info, double seconds) {
    sim_stream *s = (sim_stream *)zs;
    sim_device *d = (sim_device *)zs->dev;
    int64_t start = zb_sim_ready_ns(s);
    int64_t work = to_ns(seconds + d->hw.sim.op_overhead_s);
    if (work < 0) work = 0;
    int64_t end = start + work;
    if (info->kind == ZB_OP_COMPUTE) {
        end = slowed_end(d->comm, d->n_comm, d->hw.sim.interference, start, work);
        if (d->hw.sim.comm_interference > 0)
            ZB_TRY(remember(d, &d->compute, &d->n_compute, &d->cap_compute, start, end));
    } else if (info->kind == ZB_OP_COMM) {
        end = slowed_end(d->compute, d->n_compute, d->hw.sim.comm_interference, start, work);
        ZB_TRY(remember(d, &d->comm, &d->n_comm, &d->cap_comm, start, end));
    }
    s->clock_ns = end;
    zb_trace_add(d->base.cfg.trace, zs->id, info, d->n_issued++, start, end);
    return ZB_OK;
}
