/* The MPI comm backend: Open MPI collectives run on the issuing stream's thread.
 *
 * Each stream gets its own duplicate of MPI_COMM_WORLD (MPI_THREAD_MULTIPLE;
 * a communicator is only ever used from one thread). A collective is started
 * non-blocking (all-gather as point-to-point sends and receives,
 * reduce-scatter as a ring of them (mpi_ring_rs.h), all-reduce and the
 * barrier as MPI's non-blocking collectives) and polled with MPI_Test until
 * it completes or the timeout passes: the poll is the only place MPI makes
 * progress (Open MPI has no progress thread), and it is what lets a comm
 * stream overlap a compute stream. bf16 sums add in fp32 and round to
 * nearest even (the ring's own adds; for all-reduce a user-defined MPI_Op). The comm's wait
 * (zb_comm_wait) is a sync of the stream those host ops run on, bounded by
 * the comm's timeout; a collective's own timeout names it in any case.
 *
 * Device memory that is not host memory (cuda; zb_dev_mem_is_host false):
 * Open MPI here is not CUDA-aware, so each collective is staged through a
 * pinned host buffer, all in the issuing stream's order: memcpy_async of the
 * input into the buffer, the MPI collective on the buffer as a host op (in
 * place), memcpy_async of the result back (comm_stage.h has the layout; the
 * copy back writes only what the collective owns). One buffer per stream
 * (ops on a stream run in order), grow-only: growing first waits, bounded,
 * for the stream's earlier work, then frees the old buffer. The buffers are
 * freed at destroy, after the same bounded wait on every stream. On a
 * device whose memory is host memory (cpu) nothing is staged or copied.
 * The device's launch_host must run host ops of different streams
 * independently (each MPI communicator is polled by its own stream's host
 * thread); the cuda device's does (harness/device/cuda/device_cuda_host.c). */
#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bf16.h"
#include "comm.h"
#include "comm_mpi.h"
#include "comm_stage.h"
#include "mpi_ring_rs.h"
#include "mpi_wait.h"

#define ZB_MPI_MAX_STREAMS 8

typedef struct mpi_comm {
    zb_comm base;
    int n_streams;
    zb_stream *streams[ZB_MPI_MAX_STREAMS];
    MPI_Comm comms[ZB_MPI_MAX_STREAMS];
    MPI_Op bf16_sum;
    bool staged;                        /* device memory is not host memory */
    bool oversubscribed;                /* more ranks on this node than cores */
    zb_event *quiet[ZB_MPI_MAX_STREAMS]; /* staged: marks "the stream's work so far" */
    void *stage[ZB_MPI_MAX_STREAMS];    /* staged: pinned host buffer per stream */
    size_t stage_bytes[ZB_MPI_MAX_STREAMS];
} mpi_comm;

typedef struct mpi_coll_op {
    mpi_comm *comm;
    MPI_Comm mpi;
    zb_coll kind;
    const void *send;
    void *recv;
    size_t count;
    zb_dtype dtype;
    int unit;
    char label[ZB_LABEL_MAX];
} mpi_coll_op;

static void bf16_sum_fn(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)type;
    const zb_bf16 *a = (const zb_bf16 *)in;
    zb_bf16 *b = (zb_bf16 *)inout;
    for (int i = 0; i < *len; i++) {
        b[i] = zb_f32_to_bf16(zb_bf16_to_f32(a[i]) + zb_bf16_to_f32(b[i]));
    }
}

static MPI_Datatype mpi_type(zb_dtype t) { return t == ZB_DTYPE_BF16 ? MPI_UINT16_T : MPI_FLOAT; }

static MPI_Op mpi_sum(const mpi_comm *c, zb_dtype t) {
    return t == ZB_DTYPE_BF16 ? c->bf16_sum : MPI_SUM;
}

static zb_status mpi_fail(int rc, int rank, const char *call, const char *label) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    return ZB_FAIL(ZB_ERR_MPI, "rank %d: %s for '%s' failed: %s", rank, call, label, text);
}

/* Starts the all-reduce or the barrier (all-gather: allgather_start,
 * reduce-scatter: the ring). */
static int coll_start(const mpi_coll_op *op, MPI_Request *req, const char **call) {
    const mpi_comm *c = op->comm;
    MPI_Datatype t = mpi_type(op->dtype);
    int n = (int)op->count;
    switch (op->kind) {
    case ZB_COLL_ALLREDUCE:
        *call = "MPI_Iallreduce";
        return MPI_Iallreduce(op->send == op->recv ? MPI_IN_PLACE : op->send, op->recv, n, t,
                              mpi_sum(c, op->dtype), op->mpi, req);
    case ZB_COLL_BARRIER:
        *call = "MPI_Ibarrier";
        return MPI_Ibarrier(op->mpi, req);
    case ZB_COLL_ALLGATHER: /* allgather_start */
    case ZB_COLL_REDUCESCATTER: /* zb_ring_rs_start */
    case ZB_COLL_COUNT: break;
    }
    *call = "unknown collective";
    return MPI_ERR_OTHER;
}

/* All-gather by point-to-point: each peer's block received straight into
 * recv, this rank's sent to each peer straight from send, and the own
 * block's local copy made while they move (Open MPI's blocking all-gather
 * works so; its non-blocking one spends a schedule round, and a poll, on
 * the copy first: docs/design.md §10). reqs holds 2 (n - 1) requests. The
 * comm's communicator is this stream's alone and its all-gathers run in
 * order, so messages of one tag match call by call. */
#define ZB_MPI_ALLGATHER_TAG 0x7a67
static int allgather_start(const mpi_coll_op *op, MPI_Request *reqs, int *n_reqs, const char **call) {
    const mpi_comm *c = op->comm;
    int n = c->base.n_ranks, rank = c->base.rank, count = (int)op->count, rc = MPI_SUCCESS;
    MPI_Datatype t = mpi_type(op->dtype);
    size_t block = op->count * zb_dtype_size(op->dtype);
    char *recv = (char *)op->recv;
    *n_reqs = 0;
    *call = "MPI_Irecv";
    for (int k = 1; k < n && rc == MPI_SUCCESS; k++) {
        int from = (rank - k + n) % n;
        rc = MPI_Irecv(recv + (size_t)from * block, count, t, from, ZB_MPI_ALLGATHER_TAG, op->mpi, &reqs[(*n_reqs)++]);
    }
    if (rc == MPI_SUCCESS) *call = "MPI_Isend";
    for (int k = 1; k < n && rc == MPI_SUCCESS; k++) {
        int to = (rank + k) % n;
        rc = MPI_Isend(op->send, count, t, to, ZB_MPI_ALLGATHER_TAG, op->mpi, &reqs[(*n_reqs)++]);
    }
    char *own = recv + (size_t)rank * block;
    if (rc == MPI_SUCCESS && op->send != own) memcpy(own, op->send, block);
    return rc;
}

/* The longest a poll spins without yielding once: long enough for a
 * shared-memory collective to progress fragment after fragment (every
 * yield can hand the core to another process for a whole time slice), short
 * enough that a host thread of this rank waiting for a core (prefetch
 * issuing its next gather) gets one within it. */
#define ZB_MPI_SPIN_NS 50000

/* Polls the requests until all complete or the deadline passes. Between
 * tests it yields the core when another stream of this rank works (compute
 * to overlap), when ranks outnumber the node's cores (a peer to let run),
 * and otherwise after every ZB_MPI_SPIN_NS of spinning. Yielding at every
 * test handed the core to other processes on a loaded machine and made a
 * 1 MiB all-gather take milliseconds; never yielding while compute was idle
 * kept the host thread off both cores of a 2-core machine, so prefetch
 * could not issue its next gather before the running collective ended and
 * its overlap fell to 0 % (docs/design.md §10). poll_pause is that yield. */
static void poll_pause(const mpi_comm *c, int64_t now, int64_t *spin_from) {
    /* This poll runs on a stream thread: it is one of the busy ones. */
    if (c->oversubscribed || zb_dev_host_busy_streams(c->base.dev) > 1 || now - *spin_from > ZB_MPI_SPIN_NS) {
        sched_yield();
        *spin_from = zb_now_ns();
    }
}

static zb_mpi_poll poll_all(const mpi_comm *c, int n, MPI_Request *reqs, int64_t deadline_ns, int *mpi_rc) {
    int64_t spin_from = zb_now_ns();
    for (;;) {
        int done = 0;
        int rc = MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS) {
            *mpi_rc = rc;
            return ZB_MPI_POLL_FAILED;
        }
        if (done) return ZB_MPI_POLL_DONE;
        int64_t now = zb_now_ns();
        if (now > deadline_ns) return ZB_MPI_POLL_TIMED_OUT;
        poll_pause(c, now, &spin_from);
    }
}

/* The message of a collective that did not complete within --timeout. */
static zb_status coll_timed_out(const mpi_coll_op *op) {
    const mpi_comm *c = op->comm;
    return ZB_FAIL(ZB_ERR_TIMEOUT, "rank %d: %s '%s' (unit %d) did not complete within %g s (--timeout)",
                   c->base.rank, zb_coll_name(op->kind), op->label, op->unit, c->base.cfg.timeout_s);
}

/* The ring reduce-scatter to its end: each step's pair polled as above,
 * then the next step posted. *call names the MPI call that failed. */
static zb_mpi_poll poll_ring(const mpi_comm *c, zb_ring_rs *r, int64_t deadline_ns, int *mpi_rc,
                             const char **call) {
    for (;;) {
        *call = "MPI_Test";
        zb_mpi_poll p = poll_all(c, 2, r->req, deadline_ns, mpi_rc);
        if (p != ZB_MPI_POLL_DONE) return p;
        bool done = false;
        int rc = zb_ring_rs_advance(r, &done, call);
        if (rc != MPI_SUCCESS) {
            *mpi_rc = rc;
            return ZB_MPI_POLL_FAILED;
        }
        if (done) return ZB_MPI_POLL_DONE;
    }
}

/* A reduce-scatter: the ring on two or more ranks (its scratch freed only
 * when it completed: on a failure MPI may still write it, and the job
 * ends), the copy of block 0 on one. */
static zb_status reducescatter_run(const mpi_coll_op *op) {
    const mpi_comm *c = op->comm;
    int rank = c->base.rank;
    size_t block = op->count * zb_dtype_size(op->dtype);
    if (c->base.n_ranks == 1) {
        if (op->send != op->recv) memcpy(op->recv, op->send, block);
        return ZB_OK;
    }
    void *scratch = malloc(zb_ring_rs_scratch_bytes(op->count, op->dtype) + 1);
    if (!scratch) return ZB_FAIL(ZB_ERR_NOMEM, "rank %d: out of memory for the scratch of '%s'", rank, op->label);
    zb_ring_rs ring;
    const char *call = "";
    int rc = zb_ring_rs_start(&ring, op->send, op->recv, scratch, op->count, op->dtype, mpi_type(op->dtype),
                              op->mpi, rank, c->base.n_ranks, &call);
    if (rc != MPI_SUCCESS) return mpi_fail(rc, rank, call, op->label);
    zb_mpi_poll p = poll_ring(c, &ring, zb_mpi_deadline_ns(c->base.cfg.timeout_s), &rc, &call);
    if (p == ZB_MPI_POLL_DONE) free(scratch);
    if (p == ZB_MPI_POLL_FAILED) return mpi_fail(rc, rank, call, op->label);
    if (p == ZB_MPI_POLL_TIMED_OUT) return coll_timed_out(op);
    return ZB_OK;
}

static zb_status coll_run(void *arg) {
    mpi_coll_op *op = (mpi_coll_op *)arg;
    const mpi_comm *c = op->comm;
    int rank = c->base.rank;
    MPI_Request one = MPI_REQUEST_NULL, *reqs = &one;
    int n_reqs = 1;
    const char *call = "";
    int rc = MPI_SUCCESS;
    if (op->kind == ZB_COLL_REDUCESCATTER) return reducescatter_run(op);
    if (op->kind == ZB_COLL_ALLGATHER && c->base.n_ranks > 1) {
        reqs = (MPI_Request *)malloc(2 * (size_t)(c->base.n_ranks - 1) * sizeof *reqs);
        if (!reqs) return ZB_FAIL(ZB_ERR_NOMEM, "rank %d: out of memory for the requests of '%s'", rank, op->label);
        rc = allgather_start(op, reqs, &n_reqs, &call);
    } else if (op->kind == ZB_COLL_ALLGATHER) { /* one rank: the copy is all there is */
        if (op->send != op->recv) memcpy(op->recv, op->send, op->count * zb_dtype_size(op->dtype));
        return ZB_OK;
    } else {
        rc = coll_start(op, &one, &call);
    }
    /* Failed or timed out, requests may still be active: the job ends
     * (main aborts), so `reqs` is left to it. */
    if (rc != MPI_SUCCESS) return mpi_fail(rc, rank, call, op->label);
    /* The messages are formatted only on failure: this is the hot path. */
    zb_mpi_poll p = poll_all(c, n_reqs, reqs, zb_mpi_deadline_ns(c->base.cfg.timeout_s), &rc);
    if (p == ZB_MPI_POLL_DONE && reqs != &one) free(reqs);
    if (p == ZB_MPI_POLL_FAILED) return mpi_fail(rc, rank, "MPI_Test", op->label);
    if (p == ZB_MPI_POLL_TIMED_OUT) return coll_timed_out(op);
    return ZB_OK;
}

static void coll_free(void *arg) { free(arg); }

/* Waits, bounded by the device's timeout, for the work issued to stream
 * `slot` so far (not its sticky error: that is the next sync's to report). */
static zb_status stream_quiesce(mpi_comm *c, int slot) {
    const zb_device_ops *d = c->base.dev->ops;
    ZB_TRY(d->event_record(c->quiet[slot], c->streams[slot]));
    return d->event_sync(c->quiet[slot]);
}

/* The stream's staging buffer, grown (grow-only) to hold `need` bytes. */
static zb_status stage_reserve(mpi_comm *c, int slot, size_t need, char **out) {
    zb_device *dev = c->base.dev;
    if (need > c->stage_bytes[slot]) {
        size_t cap = zb_stage_capacity(c->stage_bytes[slot], need);
        if (c->stage[slot]) { /* earlier ops queued on this stream may still use it */
            ZB_TRY(stream_quiesce(c, slot));
            dev->ops->free_host(dev, c->stage[slot]);
            c->stage[slot] = NULL;
            c->stage_bytes[slot] = 0;
        }
        ZB_TRY(dev->ops->alloc_host(dev, cap, ZB_MEM_HOST_STAGING, &c->stage[slot]));
        c->stage_bytes[slot] = cap;
    }
    *out = (char *)c->stage[slot];
    return ZB_OK;
}

static void stage_copy_info(zb_op_info *info, char *label, size_t n, const mpi_coll_op *op,
                            const char *what, size_t bytes) {
    snprintf(label, n, "%s.%s", op->label, what);
    zb_op_info i = {ZB_OP_COPY, label, op->unit, bytes, 0.0};
    *info = i;
}

/* Staged: input to the host buffer, the collective there, result back; the
 * op is consumed (queued or freed) either way. */
static zb_status coll_issue_staged(mpi_comm *c, int slot, mpi_coll_op *op, const zb_op_info *info) {
    zb_device *dev = c->base.dev;
    zb_stream *s = c->streams[slot];
    const void *dev_send = op->send;
    void *dev_recv = op->recv;
    zb_stage_plan plan;
    char *host = NULL;
    zb_status st = zb_stage_plan_make(op->kind, op->count, zb_dtype_size(op->dtype), c->base.rank,
                                      c->base.n_ranks, &plan);
    if (st == ZB_OK) st = stage_reserve(c, slot, plan.host_bytes, &host);
    char label[ZB_LABEL_MAX + 16];
    zb_op_info ci;
    if (st == ZB_OK && plan.in_bytes) {
        stage_copy_info(&ci, label, sizeof label, op, "stage_in", plan.in_bytes);
        st = dev->ops->memcpy_async(s, host + plan.in_host_offset, dev_send, plan.in_bytes, &ci);
    }
    if (st != ZB_OK) {
        free(op);
        return st;
    }
    op->send = host ? host + plan.host_send_offset : NULL;
    op->recv = host ? host + plan.host_recv_offset : NULL;
    stage_copy_info(&ci, label, sizeof label, op, "stage_out", plan.out_bytes);
    st = dev->ops->launch_host(s, coll_run, op, coll_free, info);
    if (st != ZB_OK) {
        free(op);
        return st;
    }
    if (!plan.out_bytes) return ZB_OK;
    return dev->ops->memcpy_async(s, dev_recv, host + plan.out_host_offset, plan.out_bytes, &ci);
}

static zb_status coll_issue(zb_comm *zc, zb_stream *s, zb_coll kind, const void *send, void *recv,
                            size_t count, zb_dtype dtype, const char *label, int unit) {
    mpi_comm *c = (mpi_comm *)zc;
    int slot = -1;
    for (int i = 0; i < c->n_streams; i++) {
        if (c->streams[i] == s) slot = i;
    }
    if (slot < 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "rank %d: %s issued on stream '%s', which this comm was "
                       "not created for", zc->rank, zb_coll_name(kind), s->name);
    }
    if (count > (size_t)INT_MAX) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s of %zu elements exceeds MPI's int count limit (%d)",
                       zb_coll_name(kind), count, INT_MAX);
    }
    if (!zb_dev_runs_host_code(zc->dev)) {
        return ZB_FAIL(ZB_ERR_UNSUPPORTED, "the mpi comm needs a device that runs host code in "
                       "stream order on host memory or pinned staging; device '%s' cannot",
                       zc->dev->ops->name);
    }
    mpi_coll_op *op = (mpi_coll_op *)calloc(1, sizeof *op);
    if (!op) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory issuing %s", zb_coll_name(kind));
    op->comm = c;
    op->mpi = c->comms[slot];
    op->kind = kind;
    op->send = send;
    op->recv = recv;
    op->count = count;
    op->dtype = dtype;
    op->unit = unit;
    strncpy(op->label, label ? label : zb_coll_name(kind), sizeof op->label - 1);

    size_t e = zb_dtype_size(dtype);
    size_t n = (size_t)zc->n_ranks;
    zb_op_info info = {ZB_OP_COMM, op->label, unit, 0, 0.0};
    info.coll = zb_coll_name(kind); /* matches this collective's records across ranks */
    info.bytes = kind == ZB_COLL_ALLREDUCE ? count * e : count * e * n;
    if (kind == ZB_COLL_BARRIER) info.bytes = 0;
    if (c->staged) return coll_issue_staged(c, slot, op, &info);
    zb_status st = zc->dev->ops->launch_host(s, coll_run, op, coll_free, &info);
    if (st != ZB_OK) free(op);
    return st;
}

static zb_status mpi_allgather(zb_comm *c, zb_stream *s, const void *send, void *recv, size_t count,
                               zb_dtype dtype, const char *label, int unit) {
    return coll_issue(c, s, ZB_COLL_ALLGATHER, send, recv, count, dtype, label, unit);
}
static zb_status mpi_reducescatter(zb_comm *c, zb_stream *s, const void *send, void *recv,
                                   size_t count, zb_dtype dtype, const char *label, int unit) {
    return coll_issue(c, s, ZB_COLL_REDUCESCATTER, send, recv, count, dtype, label, unit);
}
static zb_status mpi_allreduce(zb_comm *c, zb_stream *s, const void *send, void *recv, size_t count,
                               zb_dtype dtype, const char *label, int unit) {
    return coll_issue(c, s, ZB_COLL_ALLREDUCE, send, recv, count, dtype, label, unit);
}
static zb_status mpi_barrier(zb_comm *c, zb_stream *s) {
    return coll_issue(c, s, ZB_COLL_BARRIER, NULL, NULL, 0, ZB_DTYPE_F32, "barrier", -1);
}

/* Collectives are host ops on the stream's thread, so waiting for them is a
 * stream sync, bounded by the comm's timeout (the front end's wait). */
static zb_status mpi_wait(zb_comm *zc, zb_stream *s, const char *op, int unit) {
    mpi_comm *c = (mpi_comm *)zc;
    bool mine = false;
    for (int i = 0; i < c->n_streams; i++) mine = mine || c->streams[i] == s;
    if (!mine) {
        return ZB_FAIL(ZB_ERR_INVALID, "rank %d: %s on stream '%s', which this comm was not "
                       "created for", zc->rank, op, s->name);
    }
    return zb_comm_wait_stream(zc, s, op, unit);
}

static void mpi_destroy(zb_comm *zc) {
    mpi_comm *c = (mpi_comm *)zc;
    zb_device *dev = c->base.dev;
    for (int i = 0; i < c->n_streams; i++) {
        if (!c->stage[i]) continue;
        if (stream_quiesce(c, i) != ZB_OK) { /* still in use: leak it rather than free it */
            fprintf(stderr, "zerobench: warning: rank %d: %s; the mpi comm's staging buffer of "
                    "stream '%s' (%zu bytes) is left allocated\n", c->base.rank,
                    zb_error_message(), c->streams[i]->name, c->stage_bytes[i]);
            continue;
        }
        dev->ops->free_host(dev, c->stage[i]);
    }
    for (int i = 0; i < c->n_streams; i++) {
        if (c->quiet[i]) dev->ops->event_destroy(c->quiet[i]);
    }
    for (int i = 0; i < c->n_streams; i++) MPI_Comm_free(&c->comms[i]);
    if (c->bf16_sum != MPI_OP_NULL) MPI_Op_free(&c->bf16_sum);
    free(c);
}

static const zb_comm_ops mpi_ops = {
    .name = "mpi",
    .destroy = mpi_destroy,
    .allgather = mpi_allgather,
    .reducescatter = mpi_reducescatter,
    .allreduce = mpi_allreduce,
    .barrier = mpi_barrier,
    .wait = mpi_wait,
};

zb_status zb_comm_mpi_create(zb_device *dev, zb_stream *const *streams, int n_streams,
                             const zb_comm_config *cfg, zb_comm **out) {
    if (n_streams < 1 || n_streams > ZB_MPI_MAX_STREAMS) {
        return ZB_FAIL(ZB_ERR_INVALID, "an mpi comm takes 1 to %d streams, not %d",
                       ZB_MPI_MAX_STREAMS, n_streams);
    }
    mpi_comm *c = (mpi_comm *)calloc(1, sizeof *c);
    if (!c) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory creating the mpi comm");
    c->base.ops = &mpi_ops;
    c->base.dev = dev;
    c->base.cfg = *cfg;
    if (c->base.cfg.timeout_s <= 0) c->base.cfg.timeout_s = 300.0;
    c->bf16_sum = MPI_OP_NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &c->base.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->base.n_ranks);
    for (int i = 0; i < n_streams; i++) {
        /* Non-blocking, so that a rank that never comes cannot hang the job. */
        MPI_Request req = MPI_REQUEST_NULL;
        char what[ZB_LABEL_MAX + 64];
        snprintf(what, sizeof what, "duplicating MPI_COMM_WORLD for stream '%s'", streams[i]->name);
        int rc = MPI_Comm_idup(MPI_COMM_WORLD, &c->comms[i], &req);
        zb_status st = rc == MPI_SUCCESS ? zb_mpi_wait(&req, what, c->base.cfg.timeout_s)
                                         : mpi_fail(rc, c->base.rank, "MPI_Comm_idup", streams[i]->name);
        /* Timed out: MPI may still write c->comms[i], so c stays allocated;
         * the job ends (main aborts). */
        if (st == ZB_ERR_TIMEOUT) return st;
        if (st != ZB_OK) {
            c->n_streams = i;
            mpi_destroy(&c->base);
            return st;
        }
        MPI_Comm_set_errhandler(c->comms[i], MPI_ERRORS_RETURN);
        c->streams[i] = streams[i];
        c->n_streams = i + 1;
    }
    int rc = MPI_Op_create(bf16_sum_fn, 1, &c->bf16_sum);
    if (rc != MPI_SUCCESS) {
        mpi_destroy(&c->base);
        return mpi_fail(rc, 0, "MPI_Op_create", "bf16 sum");
    }
    c->staged = !zb_dev_mem_is_host(dev); /* the same on every rank: one device kind per job */
    /* Ranks on this node (Open MPI's launcher says) against its cores. */
    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    c->oversubscribed = !local || cores < 1 || atol(local) > cores;
    if (c->staged) {
        zb_status st = ZB_OK;
        if (!zb_dev_runs_host_code(dev)) {
            st = ZB_FAIL(ZB_ERR_UNSUPPORTED, "rank %d: the mpi comm cannot run on device '%s': its "
                         "memory is not host memory and it has no host ops or pinned host memory "
                         "to stage through", c->base.rank, dev->ops->name);
        }
        for (int i = 0; i < c->n_streams && st == ZB_OK; i++) {
            st = dev->ops->event_create(dev, &c->quiet[i]);
        }
        if (st != ZB_OK) {
            char msg[ZB_ERROR_MAX];
            snprintf(msg, sizeof msg, "%s", zb_error_message());
            mpi_destroy(&c->base);
            zb_error_adopt(st, msg);
            return st;
        }
    }
    *out = &c->base;
    return ZB_OK;
}
