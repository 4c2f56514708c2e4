/* The NCCL comm's waits, as plain C: a poll loop with a deadline that aborts
 * the communicator on expiry or on an asynchronous error, and the per-stream
 * ring of collectives still in flight, so a timeout names the collective that
 * never completed. No CUDA or NCCL here: the calls come in as function
 * pointers (ncclCommGetAsyncError, cudaEventQuery, ncclCommAbort, the clock),
 * so every path is unit tested with fakes (tests/unit/test_nccl_wait.c) and
 * harness/comm/nccl/comm_nccl.c only supplies the real calls.
 *
 * One poll (zb_nccl_waiter_poll), in this order:
 *   1. the communicator's state: an error -> abort, ZB_ERR_MPI; in progress
 *      -> not done yet;
 *   2. the awaited work (an event), when there is one: an error -> abort,
 *      ZB_ERR_MPI; not complete -> not done yet;
 *   3. done when both are complete; otherwise, past the deadline -> abort,
 *      ZB_ERR_TIMEOUT.
 * Completion wins over the deadline (work found complete is never reported
 * as timed out), and abort is called at most once per waiter. Messages:
 *   "rank R: <op> '<label>' (unit U) did not complete within T s (--timeout);
 *    the NCCL communicator was aborted"
 *   "rank R: <op> '<label>' (unit U) failed: <why>; the NCCL communicator was
 *    aborted"
 * (the first part is the MPI comm's timeout message, word for word). */
#ifndef ZB_NCCL_WAIT_H
#define ZB_NCCL_WAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "comm.h"
#include "status.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What one query found. */
typedef enum zb_nccl_query {
    ZB_NCCL_Q_DONE = 0, /* complete (ncclSuccess, cudaSuccess) */
    ZB_NCCL_Q_PENDING,  /* not yet (ncclInProgress, cudaErrorNotReady) */
    ZB_NCCL_Q_ERROR     /* failed; `why` says how */
} zb_nccl_query;

typedef struct zb_nccl_wait_ops {
    /* The communicator's state (ncclCommGetAsyncError). Required. */
    zb_nccl_query (*async_state)(void *ctx, char *why, size_t why_size);
    /* The awaited work (cudaEventQuery on `work`). Only called for waiters
     * given work; may be NULL when no waiter is. */
    zb_nccl_query (*work_state)(void *ctx, void *work, char *why, size_t why_size);
    /* Aborts the communicator (ncclCommAbort). Required. */
    void (*abort)(void *ctx);
    /* The clock, in ns (zb_now_ns). Required. */
    int64_t (*now_ns)(void *ctx);
    /* Called between polls (sched_yield); may be NULL. */
    void (*pause)(void *ctx);
    void *ctx;
} zb_nccl_wait_ops;

/* What is waited for, for the messages. */
typedef struct zb_nccl_wait_what {
    int rank;
    const char *op;    /* "allgather", "init", ... */
    const char *label; /* "layer3.allgather"; NULL reads as "" */
    int unit;
    double timeout_s;  /* only printed: the deadline is given separately */
} zb_nccl_wait_what;

typedef enum zb_nccl_wait_state {
    ZB_NCCL_WAIT_PENDING = 0,
    ZB_NCCL_WAIT_DONE,
    ZB_NCCL_WAIT_TIMED_OUT,
    ZB_NCCL_WAIT_FAILED
} zb_nccl_wait_state;

typedef struct zb_nccl_waiter {
    const zb_nccl_wait_ops *ops;
    zb_nccl_wait_what what;
    void *work;          /* NULL: done when the communicator is ready */
    int64_t deadline_ns;
    zb_nccl_wait_state state;
    zb_status status;    /* ZB_OK until the wait fails */
    int n_polls;
    bool aborted;
} zb_nccl_waiter;

/* Starts a wait for `work` (NULL: for the communicator's state alone) that
 * gives up at `deadline_ns` on the ops' clock. */
void zb_nccl_waiter_init(zb_nccl_waiter *w, const zb_nccl_wait_ops *ops,
                         const zb_nccl_wait_what *what, void *work, int64_t deadline_ns);

/* One poll (see the top of the file). On TIMED_OUT and FAILED the message is
 * recorded (zb_error_message) and w->status set; a finished waiter stays as
 * it is and calls nothing more. */
zb_nccl_wait_state zb_nccl_waiter_poll(zb_nccl_waiter *w);

/* Polls (pausing in between) until the waiter finishes: ZB_OK,
 * ZB_ERR_TIMEOUT or ZB_ERR_MPI. */
zb_status zb_nccl_waiter_run(zb_nccl_waiter *w);

/* zb_nccl_waiter_init with deadline now + what->timeout_s, then run. */
zb_status zb_nccl_wait(const zb_nccl_wait_ops *ops, const zb_nccl_wait_what *what, void *work);

/* ---- collectives in flight on one stream ---------------------------------
 * After each collective the comm records an event on the stream and pushes
 * it here with the collective's name, label and unit. Events belong to their
 * slot and are reused, so a ring creates at most ZB_NCCL_PENDING_MAX events.
 * Stream order makes the ring FIFO: the oldest entry completes first. */
#define ZB_NCCL_PENDING_MAX 64

typedef struct zb_nccl_pending_op {
    void *event; /* owned by the slot: created once, reused, destroyed at the end */
    zb_coll kind;
    int unit;
    char label[ZB_LABEL_MAX];
} zb_nccl_pending_op;

typedef struct zb_nccl_pending {
    zb_nccl_pending_op slots[ZB_NCCL_PENDING_MAX];
    int head;  /* index of the oldest entry */
    int count; /* entries in flight */
} zb_nccl_pending;

void zb_nccl_pending_init(zb_nccl_pending *p);
static inline bool zb_nccl_pending_full(const zb_nccl_pending *p) {
    return p->count == ZB_NCCL_PENDING_MAX;
}
/* The oldest entry, or NULL when the ring is empty. */
zb_nccl_pending_op *zb_nccl_pending_oldest(zb_nccl_pending *p);
/* The slot the next push fills (its event may be NULL: create it), or NULL
 * when the ring is full. */
zb_nccl_pending_op *zb_nccl_pending_next(zb_nccl_pending *p);
/* Makes the slot zb_nccl_pending_next returned an entry (after the event was
 * recorded), with this name, label and unit. */
void zb_nccl_pending_push(zb_nccl_pending *p, zb_coll kind, const char *label, int unit);
/* Forgets the oldest entry (its event stays with the slot). */
void zb_nccl_pending_pop(zb_nccl_pending *p);
/* Pops every entry from the oldest on whose event is complete, stopping at
 * the first that is not (or whose query fails; a failure is reported by the
 * next wait). Returns how many were popped. No abort, no waiting. */
int zb_nccl_pending_reap(zb_nccl_pending *p, const zb_nccl_wait_ops *ops);
/* Waits for every entry, oldest first, each named in the messages by its own
 * collective, label and unit, all under one `deadline_ns`; pops each as it
 * completes. On failure the entry that failed stays oldest. */
zb_status zb_nccl_pending_drain(zb_nccl_pending *p, const zb_nccl_wait_ops *ops, int rank,
                                double timeout_s, int64_t deadline_ns);

#ifdef __cplusplus
}
#endif
#endif
