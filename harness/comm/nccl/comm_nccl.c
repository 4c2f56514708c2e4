/* The NCCL comm backend (GPU only; one GPU per rank).
 *
 * Rank 0 makes the ncclUniqueId and MPI broadcasts it (nccl_boot.c); every
 * rank then joins one NON-BLOCKING communicator (ncclConfig_t.blocking = 0).
 * In that mode any NCCL call may return ncclInProgress, after which the
 * communicator's state (ncclCommGetAsyncError) is polled until it leaves
 * ncclInProgress, under the --timeout, before anything else is issued.
 *
 * Collectives are enqueued on the CUDA stream of the zb_stream they are
 * issued on (zb_cuda_stream_handle), between the device's op hooks
 * (zb_cuda_op_begin/end) so the CUPTI tracer names their kernels by label
 * and unit; one communicator serves every stream the
 * comm was created for, since NCCL orders the operations of a communicator
 * itself. Buffers follow comm.h's conventions, which are NCCL's (in place
 * included); sums; float -> ncclFloat32, bf16 -> ncclBfloat16. The barrier is
 * an all-reduce of one float on the GPU.
 *
 * After each collective an event is recorded and kept, with the collective's
 * name, label and unit, in the stream's ring (nccl_wait.h), so the bounded
 * wait (zb_comm_nccl_wait, the comm's wait op) names the first collective
 * that never completed.
 * Every wait polls with a deadline and aborts the communicator on expiry or
 * on an asynchronous error (the logic is plain C in nccl_wait.c; this file
 * only supplies the CUDA and NCCL calls). A comm is used from one host thread. */
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "comm_nccl.h"
#include "cuda_backend.h"
#include "nccl_boot.h"
#include "nccl_wait.h"

_Static_assert(sizeof(ncclUniqueId) == ZB_NCCL_ID_BYTES, "ncclUniqueId is not ZB_NCCL_ID_BYTES");

#define ZB_NCCL_MAX_STREAMS 8

typedef struct nccl_stream {
    zb_stream *stream;
    cudaStream_t cuda;
    cudaEvent_t sync_event; /* recorded by zb_comm_nccl_wait */
    zb_nccl_pending pending;
} nccl_stream;

typedef struct nccl_comm {
    zb_comm base;
    ncclComm_t nccl; /* NULL once aborted */
    bool aborted;
    int n_streams;
    nccl_stream streams[ZB_NCCL_MAX_STREAMS];
    float *barrier_buf; /* one float on the GPU */
    zb_nccl_wait_ops wait_ops;
} nccl_comm;

static const zb_comm_ops nccl_ops;

/* ---- the calls the waits poll (nccl_wait.h) ------------------------------ */

static void comm_abort(nccl_comm *c) {
    if (c->aborted) return;
    c->aborted = true;
    if (c->nccl) ncclCommAbort(c->nccl); /* blocking even on a non-blocking communicator */
    c->nccl = NULL;
}

static void nccl_why(const nccl_comm *c, ncclResult_t r, char *why, size_t n) {
    const char *last = ncclGetLastError(c->nccl);
    snprintf(why, n, "NCCL error: %s%s%s%s", ncclGetErrorString(r), last && last[0] ? " (" : "",
             last && last[0] ? last : "", last && last[0] ? ")" : "");
}

static zb_nccl_query q_async(void *ctx, char *why, size_t n) {
    nccl_comm *c = (nccl_comm *)ctx;
    if (c->aborted || !c->nccl) {
        snprintf(why, n, "the NCCL communicator was already aborted");
        return ZB_NCCL_Q_ERROR;
    }
    ncclResult_t state = ncclSuccess;
    ncclResult_t rc = ncclCommGetAsyncError(c->nccl, &state);
    if (rc != ncclSuccess) {
        snprintf(why, n, "ncclCommGetAsyncError: %s", ncclGetErrorString(rc));
        return ZB_NCCL_Q_ERROR;
    }
    if (state == ncclSuccess) return ZB_NCCL_Q_DONE;
    if (state == ncclInProgress) return ZB_NCCL_Q_PENDING;
    nccl_why(c, state, why, n);
    return ZB_NCCL_Q_ERROR;
}

static zb_nccl_query q_event(void *ctx, void *work, char *why, size_t n) {
    (void)ctx;
    cudaError_t ce = cudaEventQuery((cudaEvent_t)work);
    if (ce == cudaSuccess) return ZB_NCCL_Q_DONE;
    if (ce == cudaErrorNotReady) {
        /* Not an error, but the runtime may keep it as the last error: clear
         * it so the next launch check does not report it. */
        (void)cudaGetLastError();
        return ZB_NCCL_Q_PENDING;
    }
    snprintf(why, n, "cudaEventQuery: %s: %s", cudaGetErrorName(ce), cudaGetErrorString(ce));
    return ZB_NCCL_Q_ERROR;
}

static void q_abort(void *ctx) { comm_abort((nccl_comm *)ctx); }
static int64_t q_now(void *ctx) {
    (void)ctx;
    return zb_now_ns();
}
static void q_pause(void *ctx) {
    (void)ctx;
    sched_yield();
}

/* ---- helpers ------------------------------------------------------------- */

static zb_status cuda_fail(int rank, const char *call, const char *what, cudaError_t ce) {
    return ZB_FAIL(ZB_ERR_INTERNAL, "rank %d: %s for %s failed: %s: %s", rank, call, what,
                   cudaGetErrorName(ce), cudaGetErrorString(ce));
}

static zb_status aborted_fail(const nccl_comm *c, const char *op, const char *label, int unit) {
    return ZB_FAIL(ZB_ERR_MPI, "rank %d: %s '%s' (unit %d) not issued: the NCCL communicator was "
                   "aborted after an earlier failure", c->base.rank, op, label, unit);
}

static nccl_stream *find_stream(nccl_comm *c, const zb_stream *s) {
    for (int i = 0; i < c->n_streams; i++) {
        if (c->streams[i].stream == s) return &c->streams[i];
    }
    return NULL;
}

/* After an NCCL call: ncclInProgress is polled to completion under the
 * timeout; an error aborts the communicator. */
static zb_status after_call(nccl_comm *c, ncclResult_t rc, const char *call, const char *op,
                            const char *label, int unit) {
    if (rc == ncclSuccess) return ZB_OK;
    if (rc == ncclInProgress) {
        zb_nccl_wait_what what = {c->base.rank, op, label, unit, c->base.cfg.timeout_s};
        return zb_nccl_wait(&c->wait_ops, &what, NULL);
    }
    char why[256];
    nccl_why(c, rc, why, sizeof why);
    comm_abort(c);
    return ZB_FAIL(ZB_ERR_MPI, "rank %d: %s for %s '%s' (unit %d) failed: %s; the NCCL "
                   "communicator was aborted", c->base.rank, call, op, label, unit, why);
}

/* ---- collectives --------------------------------------------------------- */

static zb_status coll_issue(zb_comm *zc, zb_stream *s, zb_coll kind, const void *send, void *recv,
                            size_t count, zb_dtype dtype, const char *label, int unit) {
    nccl_comm *c = (nccl_comm *)zc;
    const char *op = zb_coll_name(kind);
    int rank = zc->rank;
    if (!label) label = op;
    if (c->aborted) return aborted_fail(c, op, label, unit);
    nccl_stream *ns = find_stream(c, s);
    if (!ns) {
        return ZB_FAIL(ZB_ERR_INVALID, "rank %d: %s issued on stream '%s', which this comm was "
                       "not created for", rank, op, s ? s->name : "(null)");
    }
    ncclDataType_t t;
    switch (dtype) {
    case ZB_DTYPE_F32: t = ncclFloat32; break;
    case ZB_DTYPE_BF16: t = ncclBfloat16; break;
    default:
        return ZB_FAIL(ZB_ERR_UNSUPPORTED, "rank %d: %s '%s': the nccl comm takes float or bf16, "
                       "not dtype %d", rank, op, label, (int)dtype);
    }
    /* An asynchronous error from earlier work ends the comm here, naming
     * the op that found it. */
    char why[256] = "";
    if (q_async(c, why, sizeof why) == ZB_NCCL_Q_ERROR) {
        comm_abort(c);
        return ZB_FAIL(ZB_ERR_MPI, "rank %d: %s '%s' (unit %d) not issued: %s; the NCCL "
                       "communicator was aborted", rank, op, label, unit, why);
    }

    /* Keep the ring short: forget what completed; when it is still full,
     * wait (bounded) for the oldest collective. */
    zb_nccl_pending_reap(&ns->pending, &c->wait_ops);
    if (zb_nccl_pending_full(&ns->pending)) {
        zb_nccl_pending_op *old = zb_nccl_pending_oldest(&ns->pending);
        zb_nccl_wait_what what = {rank, zb_coll_name(old->kind), old->label, old->unit,
                                  zc->cfg.timeout_s};
        ZB_TRY(zb_nccl_wait(&c->wait_ops, &what, old->event));
        zb_nccl_pending_pop(&ns->pending);
    }
    zb_nccl_pending_op *slot = zb_nccl_pending_next(&ns->pending);
    if (!slot->event) {
        cudaEvent_t ev = NULL;
        cudaError_t ce = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
        if (ce != cudaSuccess) return cuda_fail(rank, "cudaEventCreateWithFlags", label, ce);
        slot->event = (void *)ev;
    }

    size_t e = zb_dtype_size(dtype);
    zb_op_info info = {ZB_OP_COMM, label, unit, 0, 0.0};
    info.coll = zb_coll_name(kind); /* matches this collective's records across ranks */
    info.bytes = kind == ZB_COLL_ALLREDUCE ? count * e : count * e * (size_t)zc->n_ranks;
    if (kind == ZB_COLL_BARRIER) info.bytes = 0;
    ncclResult_t rc = ncclSuccess;
    const char *call = "";
    (void)zb_cuda_op_begin(s, &info);
    switch (kind) {
    case ZB_COLL_ALLGATHER:
        call = "ncclAllGather";
        rc = ncclAllGather(send, recv, count, t, c->nccl, ns->cuda);
        break;
    case ZB_COLL_REDUCESCATTER:
        call = "ncclReduceScatter";
        rc = ncclReduceScatter(send, recv, count, t, ncclSum, c->nccl, ns->cuda);
        break;
    case ZB_COLL_ALLREDUCE:
        call = "ncclAllReduce";
        rc = ncclAllReduce(send, recv, count, t, ncclSum, c->nccl, ns->cuda);
        break;
    case ZB_COLL_BARRIER:
        call = "ncclAllReduce";
        rc = ncclAllReduce(c->barrier_buf, c->barrier_buf, 1, ncclFloat32, ncclSum, c->nccl,
                           ns->cuda);
        break;
    case ZB_COLL_COUNT:
        call = "unknown collective";
        rc = ncclInvalidArgument;
        break;
    }
    zb_cuda_op_end(s);
    ZB_TRY(after_call(c, rc, call, op, label, unit));

    cudaError_t ce = cudaEventRecord((cudaEvent_t)slot->event, ns->cuda);
    if (ce != cudaSuccess) return cuda_fail(rank, "cudaEventRecord", label, ce);
    zb_nccl_pending_push(&ns->pending, kind, label, unit);
    return ZB_OK;
}

static zb_status nccl_allgather(zb_comm *c, zb_stream *s, const void *send, void *recv,
                                size_t count, zb_dtype dtype, const char *label, int unit) {
    return coll_issue(c, s, ZB_COLL_ALLGATHER, send, recv, count, dtype, label, unit);
}
static zb_status nccl_reducescatter(zb_comm *c, zb_stream *s, const void *send, void *recv,
                                    size_t count, zb_dtype dtype, const char *label, int unit) {
    return coll_issue(c, s, ZB_COLL_REDUCESCATTER, send, recv, count, dtype, label, unit);
}
static zb_status nccl_allreduce(zb_comm *c, zb_stream *s, const void *send, void *recv,
                                size_t count, zb_dtype dtype, const char *label, int unit) {
    return coll_issue(c, s, ZB_COLL_ALLREDUCE, send, recv, count, dtype, label, unit);
}
static zb_status nccl_barrier(zb_comm *c, zb_stream *s) {
    return coll_issue(c, s, ZB_COLL_BARRIER, NULL, NULL, 1, ZB_DTYPE_F32, "barrier", -1);
}

/* ---- the bounded wait ---------------------------------------------------- */

zb_status zb_comm_nccl_wait(zb_comm *zc, zb_stream *s, const char *op, int unit) {
    if (!zc || zc->ops != &nccl_ops) {
        return ZB_FAIL(ZB_ERR_INVALID, "zb_comm_nccl_wait: the comm is '%s', not nccl",
                       zc ? zc->ops->name : "(null)");
    }
    nccl_comm *c = (nccl_comm *)zc;
    if (!op) op = "wait";
    nccl_stream *ns = find_stream(c, s);
    if (!ns) {
        return ZB_FAIL(ZB_ERR_INVALID, "rank %d: %s on stream '%s', which this comm was not "
                       "created for", zc->rank, op, s ? s->name : "(null)");
    }
    if (c->aborted) return aborted_fail(c, op, s->name, unit);
    double timeout_s = zc->cfg.timeout_s;
    int64_t deadline = zb_now_ns() + (int64_t)(timeout_s * 1e9);
    /* Recorded first, so it covers everything issued to the stream so far. */
    cudaError_t ce = cudaEventRecord(ns->sync_event, ns->cuda);
    if (ce != cudaSuccess) return cuda_fail(zc->rank, "cudaEventRecord", op, ce);
    ZB_TRY(zb_nccl_pending_drain(&ns->pending, &c->wait_ops, zc->rank, timeout_s, deadline));
    zb_nccl_wait_what what = {zc->rank, op, s->name, unit, timeout_s};
    zb_nccl_waiter w;
    zb_nccl_waiter_init(&w, &c->wait_ops, &what, (void *)ns->sync_event, deadline);
    return zb_nccl_waiter_run(&w);
}

/* The comm interface's wait (zb_comm_wait): the named wait above. */
static zb_status nccl_wait_op(zb_comm *zc, zb_stream *s, const char *op, int unit) {
    return zb_comm_nccl_wait(zc, s, op, unit);
}

/* ---- create and destroy -------------------------------------------------- */

static void nccl_destroy(zb_comm *zc) {
    nccl_comm *c = (nccl_comm *)zc;
    if (!c->aborted && c->nccl) {
        /* Non-blocking: finalize (flushes outstanding work) is polled under
         * the timeout, then destroy; a finalize that fails or hangs aborts. */
        ncclResult_t rc = ncclCommFinalize(c->nccl);
        if (rc == ncclSuccess || rc == ncclInProgress) {
            zb_nccl_wait_what what = {zc->rank, "finalize", "ncclCommFinalize", -1,
                                      zc->cfg.timeout_s};
            (void)zb_nccl_wait(&c->wait_ops, &what, NULL); /* the message stays recorded */
        } else {
            comm_abort(c);
        }
        if (!c->aborted) ncclCommDestroy(c->nccl);
        c->nccl = NULL;
    }
    for (int i = 0; i < c->n_streams; i++) {
        nccl_stream *ns = &c->streams[i];
        for (int k = 0; k < ZB_NCCL_PENDING_MAX; k++) {
            if (ns->pending.slots[k].event) cudaEventDestroy((cudaEvent_t)ns->pending.slots[k].event);
        }
        if (ns->sync_event) cudaEventDestroy(ns->sync_event);
    }
    if (c->barrier_buf) cudaFree(c->barrier_buf);
    free(c);
}

static const zb_comm_ops nccl_ops = {
    .name = "nccl",
    .destroy = nccl_destroy,
    .allgather = nccl_allgather,
    .reducescatter = nccl_reducescatter,
    .allreduce = nccl_allreduce,
    .barrier = nccl_barrier,
    .wait = nccl_wait_op,
};

static zb_status make_unique_id(void *ctx, unsigned char id[ZB_NCCL_ID_BYTES]) {
    (void)ctx;
    ncclUniqueId uid;
    ncclResult_t rc = ncclGetUniqueId(&uid);
    if (rc != ncclSuccess) {
        const char *last = ncclGetLastError(NULL);
        return ZB_FAIL(ZB_ERR_MPI, "ncclGetUniqueId failed: %s%s%s", ncclGetErrorString(rc),
                       last && last[0] ? ": " : "", last ? last : "");
    }
    memcpy(id, &uid, ZB_NCCL_ID_BYTES);
    return ZB_OK;
}

/* Everything local that can fail before the collective steps, so a bad
 * argument never leaves the other ranks waiting in the broadcast. */
static zb_status create_local(zb_device *dev, zb_stream *const *streams, int n_streams,
                              const zb_comm_config *cfg, nccl_comm **out) {
    if (!dev || !streams || !cfg || !out) {
        return ZB_FAIL(ZB_ERR_INVALID, "zb_comm_nccl_create: NULL argument");
    }
    if (n_streams < 1 || n_streams > ZB_NCCL_MAX_STREAMS) {
        return ZB_FAIL(ZB_ERR_INVALID, "an nccl comm takes 1 to %d streams, not %d",
                       ZB_NCCL_MAX_STREAMS, n_streams);
    }
    if (!zb_device_is_cuda(dev)) {
        return ZB_FAIL(ZB_ERR_UNSUPPORTED, "--comm nccl needs the cuda device, not '%s' "
                       "(use --comm mpi)", dev->ops->name);
    }
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        return ZB_FAIL(ZB_ERR_INVALID, "the nccl comm needs MPI initialized: it broadcasts the "
                       "NCCL unique id over MPI_COMM_WORLD");
    }
    nccl_comm *c = (nccl_comm *)calloc(1, sizeof *c);
    if (!c) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory creating the nccl comm");
    c->base.ops = &nccl_ops;
    c->base.dev = dev;
    c->base.cfg = *cfg;
    if (c->base.cfg.timeout_s <= 0) c->base.cfg.timeout_s = 300.0;
    MPI_Comm_rank(MPI_COMM_WORLD, &c->base.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->base.n_ranks);
    c->wait_ops.async_state = q_async;
    c->wait_ops.work_state = q_event;
    c->wait_ops.abort = q_abort;
    c->wait_ops.now_ns = q_now;
    c->wait_ops.pause = q_pause;
    c->wait_ops.ctx = c;
    c->aborted = true; /* no communicator yet: nothing to abort, nothing to finalize */
    *out = c;
    for (int i = 0; i < n_streams; i++) {
        nccl_stream *ns = &c->streams[i];
        ns->stream = streams[i];
        ns->cuda = (cudaStream_t)zb_cuda_stream_handle(streams[i]);
        zb_nccl_pending_init(&ns->pending);
        c->n_streams = i + 1;
        cudaError_t ce = cudaEventCreateWithFlags(&ns->sync_event, cudaEventDisableTiming);
        if (ce != cudaSuccess) return cuda_fail(c->base.rank, "cudaEventCreateWithFlags", "the nccl comm", ce);
    }
    cudaError_t ce = cudaMalloc((void **)&c->barrier_buf, sizeof(float));
    if (ce == cudaSuccess) ce = cudaMemset(c->barrier_buf, 0, sizeof(float));
    if (ce != cudaSuccess) return cuda_fail(c->base.rank, "cudaMalloc", "the barrier buffer", ce);
    return ZB_OK;
}

zb_status zb_comm_nccl_create(zb_device *dev, zb_stream *const *streams, int n_streams,
                              const zb_comm_config *cfg, zb_comm **out) {
    if (out) *out = NULL;
    nccl_comm *c = NULL;
    zb_status st = create_local(dev, streams, n_streams, cfg, &c);
    if (st != ZB_OK) {
        if (c) nccl_destroy(&c->base);
        return st;
    }
    int rank = c->base.rank, n = c->base.n_ranks;

    zb_cuda_meminfo mi;
    memset(&mi, 0, sizeof mi);
    if (zb_device_cuda_meminfo(dev, &mi) != ZB_OK) {
        mi.uuid[0] = '\0'; /* unknown: the check passes it, NCCL's init judges */
        zb_error_clear();
    }
    st = zb_nccl_check_gpus(MPI_COMM_WORLD, mi.uuid, c->base.cfg.timeout_s);
    if (st != ZB_OK) {
        char msg[ZB_ERROR_MAX];
        snprintf(msg, sizeof msg, "%s", zb_error_message());
        nccl_destroy(&c->base);
        zb_error_adopt(st, msg);
        return st;
    }

    unsigned char id_bytes[ZB_NCCL_ID_BYTES];
    st = zb_nccl_bcast_id(MPI_COMM_WORLD, make_unique_id, NULL, c->base.cfg.timeout_s, id_bytes);
    if (st != ZB_OK) {
        nccl_destroy(&c->base);
        return st;
    }
    ncclUniqueId id;
    memcpy(&id, id_bytes, sizeof id);

    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t comm = NULL;
    ncclResult_t rc = ncclCommInitRankConfig(&comm, n, id, rank, &config);
    c->nccl = comm;
    c->aborted = false;
    st = after_call(c, rc, "ncclCommInitRankConfig", "communicator init", "MPI_COMM_WORLD", -1);
    if (st != ZB_OK) {
        char msg[ZB_ERROR_MAX];
        snprintf(msg, sizeof msg, "%s", zb_error_message());
        nccl_destroy(&c->base);
        if (strstr(msg, "Duplicate GPU")) {
            return ZB_FAIL(st, "%s; NCCL needs one GPU per rank (--comm mpi lets ranks share a "
                           "GPU)", msg);
        }
        zb_error_adopt(st, msg);
        return st;
    }
    *out = &c->base;
    return ZB_OK;
}

/* ---- meta ---------------------------------------------------------------- */

zb_status zb_nccl_meta(json_t *meta) {
    if (!json_is_object(meta)) return ZB_FAIL(ZB_ERR_INVALID, "zb_nccl_meta: meta is not an object");
    int code = -1;
    ncclResult_t rc = ncclGetVersion(&code);
    if (rc != ncclSuccess) {
        return ZB_FAIL(ZB_ERR_MPI, "ncclGetVersion failed: %s", ncclGetErrorString(rc));
    }
    char run[32], built[32];
    zb_nccl_version_text(code, run, sizeof run);
    zb_nccl_version_text(NCCL_VERSION_CODE, built, sizeof built);
    if (json_object_set_new(meta, "nccl_version", json_string(run)) != 0 ||
        json_object_set_new(meta, "nccl_version_built", json_string(built)) != 0) {
        return ZB_FAIL(ZB_ERR_NOMEM, "out of memory adding the NCCL version to the meta");
    }
    return ZB_OK;
}
