/* The NCCL comm's poll-with-deadline waits and its ring of collectives in
 * flight, as plain C over function pointers (see nccl_wait.h). */
#include "nccl_wait.h"

#include <string.h>

#define ZB_NCCL_WHY_MAX 256

void zb_nccl_waiter_init(zb_nccl_waiter *w, const zb_nccl_wait_ops *ops,
                         const zb_nccl_wait_what *what, void *work, int64_t deadline_ns) {
    memset(w, 0, sizeof *w);
    w->ops = ops;
    w->what = *what;
    if (!w->what.op) w->what.op = "";
    if (!w->what.label) w->what.label = "";
    w->work = work;
    w->deadline_ns = deadline_ns;
    w->state = ZB_NCCL_WAIT_PENDING;
    w->status = ZB_OK;
}

static void waiter_abort(zb_nccl_waiter *w) {
    if (w->aborted) return;
    w->aborted = true;
    w->ops->abort(w->ops->ctx);
}

static zb_nccl_wait_state waiter_fail(zb_nccl_waiter *w, const char *why) {
    waiter_abort(w);
    const zb_nccl_wait_what *q = &w->what;
    w->status = ZB_FAIL(ZB_ERR_MPI,
                        "rank %d: %s '%s' (unit %d) failed: %s; the NCCL communicator was aborted",
                        q->rank, q->op, q->label, q->unit, why[0] ? why : "unknown error");
    w->state = ZB_NCCL_WAIT_FAILED;
    return w->state;
}

static zb_nccl_wait_state waiter_timeout(zb_nccl_waiter *w) {
    waiter_abort(w);
    const zb_nccl_wait_what *q = &w->what;
    w->status = ZB_FAIL(ZB_ERR_TIMEOUT,
                        "rank %d: %s '%s' (unit %d) did not complete within %g s (--timeout); "
                        "the NCCL communicator was aborted",
                        q->rank, q->op, q->label, q->unit, q->timeout_s);
    w->state = ZB_NCCL_WAIT_TIMED_OUT;
    return w->state;
}

zb_nccl_wait_state zb_nccl_waiter_poll(zb_nccl_waiter *w) {
    if (w->state != ZB_NCCL_WAIT_PENDING) return w->state;
    const zb_nccl_wait_ops *ops = w->ops;
    char why[ZB_NCCL_WHY_MAX];
    w->n_polls++;

    why[0] = '\0';
    zb_nccl_query comm = ops->async_state(ops->ctx, why, sizeof why);
    if (comm == ZB_NCCL_Q_ERROR) return waiter_fail(w, why);

    zb_nccl_query work = ZB_NCCL_Q_DONE;
    if (comm == ZB_NCCL_Q_DONE && w->work) {
        why[0] = '\0';
        work = ops->work_state ? ops->work_state(ops->ctx, w->work, why, sizeof why)
                               : ZB_NCCL_Q_ERROR;
        if (!ops->work_state) strcpy(why, "no way to query the awaited work (internal error)");
        if (work == ZB_NCCL_Q_ERROR) return waiter_fail(w, why);
    }
    if (comm == ZB_NCCL_Q_DONE && work == ZB_NCCL_Q_DONE) {
        w->state = ZB_NCCL_WAIT_DONE;
        return w->state;
    }
    if (ops->now_ns(ops->ctx) > w->deadline_ns) return waiter_timeout(w);
    return w->state;
}

zb_status zb_nccl_waiter_run(zb_nccl_waiter *w) {
    while (zb_nccl_waiter_poll(w) == ZB_NCCL_WAIT_PENDING) {
        if (w->ops->pause) w->ops->pause(w->ops->ctx);
    }
    return w->status;
}

static int64_t deadline_after(const zb_nccl_wait_ops *ops, double timeout_s) {
    /* Beyond ~292 years the ns count would overflow: clamp. */
    double ns = timeout_s * 1e9;
    if (ns > 9.0e18) ns = 9.0e18;
    if (ns < 0) ns = 0;
    return ops->now_ns(ops->ctx) + (int64_t)ns;
}

zb_status zb_nccl_wait(const zb_nccl_wait_ops *ops, const zb_nccl_wait_what *what, void *work) {
    zb_nccl_waiter w;
    zb_nccl_waiter_init(&w, ops, what, work, deadline_after(ops, what->timeout_s));
    return zb_nccl_waiter_run(&w);
}

/* ---- the ring ------------------------------------------------------------ */

void zb_nccl_pending_init(zb_nccl_pending *p) { memset(p, 0, sizeof *p); }

zb_nccl_pending_op *zb_nccl_pending_oldest(zb_nccl_pending *p) {
    return p->count > 0 ? &p->slots[p->head] : NULL;
}

zb_nccl_pending_op *zb_nccl_pending_next(zb_nccl_pending *p) {
    if (zb_nccl_pending_full(p)) return NULL;
    return &p->slots[(p->head + p->count) % ZB_NCCL_PENDING_MAX];
}

void zb_nccl_pending_push(zb_nccl_pending *p, zb_coll kind, const char *label, int unit) {
    zb_nccl_pending_op *op = zb_nccl_pending_next(p);
    if (!op) return;
    op->kind = kind;
    op->unit = unit;
    memset(op->label, 0, sizeof op->label);
    strncpy(op->label, label ? label : zb_coll_name(kind), sizeof op->label - 1);
    p->count++;
}

void zb_nccl_pending_pop(zb_nccl_pending *p) {
    if (p->count == 0) return;
    p->head = (p->head + 1) % ZB_NCCL_PENDING_MAX;
    p->count--;
}

int zb_nccl_pending_reap(zb_nccl_pending *p, const zb_nccl_wait_ops *ops) {
    int n = 0;
    char why[ZB_NCCL_WHY_MAX];
    zb_nccl_pending_op *op;
    while ((op = zb_nccl_pending_oldest(p)) != NULL && ops->work_state) {
        if (ops->work_state(ops->ctx, op->event, why, sizeof why) != ZB_NCCL_Q_DONE) break;
        zb_nccl_pending_pop(p);
        n++;
    }
    return n;
}

zb_status zb_nccl_pending_drain(zb_nccl_pending *p, const zb_nccl_wait_ops *ops, int rank,
                                double timeout_s, int64_t deadline_ns) {
    zb_nccl_pending_op *op;
    while ((op = zb_nccl_pending_oldest(p)) != NULL) {
        zb_nccl_wait_what what = {rank, zb_coll_name(op->kind), op->label, op->unit, timeout_s};
        zb_nccl_waiter w;
        zb_nccl_waiter_init(&w, ops, &what, op->event, deadline_ns);
        ZB_TRY(zb_nccl_waiter_run(&w));
        zb_nccl_pending_pop(p);
    }
    return ZB_OK;
}
