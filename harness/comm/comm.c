/* The comm front end (comm.h): names, the sent-bytes formula, and the one
 * place every collective and every wait goes through, whatever the backend:
 * argument checks, the sent-bytes count, the last collective per stream (so
 * any backend's timeout can name it), and the default bounded wait. */
#include "comm.h"

#include "comm_delay.h"

#include <stdint.h>
#include <string.h>

const char *zb_coll_name(zb_coll c) {
    switch (c) {
    case ZB_COLL_ALLGATHER: return "allgather";
    case ZB_COLL_REDUCESCATTER: return "reducescatter";
    case ZB_COLL_ALLREDUCE: return "allreduce";
    case ZB_COLL_BARRIER: return "barrier";
    case ZB_COLL_COUNT: break;
    }
    return "unknown";
}

uint64_t zb_coll_sent_bytes(zb_coll c, size_t count, size_t elem_bytes, int n_ranks) {
    uint64_t n = (uint64_t)(n_ranks > 0 ? n_ranks : 1);
    uint64_t bytes = (uint64_t)count * elem_bytes;
    switch (c) {
    case ZB_COLL_ALLGATHER:
    case ZB_COLL_REDUCESCATTER: return bytes * (n - 1);
    case ZB_COLL_ALLREDUCE: return 2 * bytes * (n - 1) / n;
    case ZB_COLL_BARRIER:
    case ZB_COLL_COUNT: break;
    }
    return 0;
}

const zb_comm_last *zb_comm_last_issued(const zb_comm *c, const zb_stream *s) {
    if (!c || !s) return NULL;
    for (int i = 0; i < ZB_COMM_MAX_STREAMS; i++) {
        if (c->last[i].stream == s) return &c->last[i];
    }
    return NULL;
}

/* A stream beyond ZB_COMM_MAX_STREAMS is not remembered: its timeouts then
 * name the wait instead (no backend takes that many streams). */
static void remember(zb_comm *c, const zb_stream *s, zb_coll kind, const char *label, int unit) {
    zb_comm_last *slot = NULL;
    for (int i = 0; i < ZB_COMM_MAX_STREAMS && !slot; i++) {
        if (c->last[i].stream == s || !c->last[i].stream) slot = &c->last[i];
    }
    if (!slot) return;
    slot->stream = s;
    slot->kind = kind;
    slot->unit = unit;
    memset(slot->label, 0, sizeof slot->label);
    strncpy(slot->label, label, sizeof slot->label - 1);
}

/* Elements of the larger of a rank's two buffers. */
static size_t big_side(zb_coll kind, size_t count, int n_ranks, bool *overflow) {
    size_t n = (size_t)(n_ranks > 0 ? n_ranks : 1);
    *overflow = false;
    if (kind == ZB_COLL_ALLREDUCE || kind == ZB_COLL_BARRIER) return count;
    if (count > SIZE_MAX / n) {
        *overflow = true;
        return 0;
    }
    return count * n;
}

static zb_status check_coll(const zb_comm *c, const zb_stream *s, zb_coll kind, const void *send,
                            const void *recv, size_t count, zb_dtype dtype, const char *label,
                            int unit) {
    const char *op = zb_coll_name(kind);
    if (!c) return ZB_FAIL(ZB_ERR_INVALID, "%s '%s' (unit %d): no comm given", op, label, unit);
    if (!s) {
        return ZB_FAIL(ZB_ERR_INVALID, "rank %d: %s '%s' (unit %d): no stream given", c->rank, op,
                       label, unit);
    }
    if (kind == ZB_COLL_BARRIER) return ZB_OK;
    if (dtype != ZB_DTYPE_F32 && dtype != ZB_DTYPE_BF16) {
        return ZB_FAIL(ZB_ERR_UNSUPPORTED, "rank %d: %s '%s': the comm takes float or bf16, not "
                       "dtype %d", c->rank, op, label, (int)dtype);
    }
    if (count > 0 && (!send || !recv)) {
        return ZB_FAIL(ZB_ERR_INVALID, "rank %d: %s '%s' (unit %d): the %s buffer is NULL for %zu "
                       "elements", c->rank, op, label, unit, !send ? "send" : "recv", count);
    }
    bool overflow = false;
    size_t elems = big_side(kind, count, c->n_ranks, &overflow);
    if (overflow || elems > SIZE_MAX / zb_dtype_size(dtype)) {
        return ZB_FAIL(ZB_ERR_INVALID, "rank %d: %s '%s' (unit %d): %zu elements per rank on %d "
                       "ranks overflow a byte count", c->rank, op, label, unit, count, c->n_ranks);
    }
    return ZB_OK;
}

static zb_status issue(zb_comm *c, zb_stream *s, zb_coll kind, const void *send, void *recv,
                       size_t count, zb_dtype dtype, const char *label, int unit) {
    if (!label) label = zb_coll_name(kind);
    ZB_TRY(check_coll(c, s, kind, send, recv, count, dtype, label, unit));
    if (kind != ZB_COLL_BARRIER) ZB_TRY(zb_comm_delay_issue(c, s, label, unit)); /* a test hook: nothing unless set */
    zb_status st = ZB_ERR_INTERNAL;
    switch (kind) {
    case ZB_COLL_ALLGATHER:
        st = c->ops->allgather(c, s, send, recv, count, dtype, label, unit);
        break;
    case ZB_COLL_REDUCESCATTER:
        st = c->ops->reducescatter(c, s, send, recv, count, dtype, label, unit);
        break;
    case ZB_COLL_ALLREDUCE:
        st = c->ops->allreduce(c, s, send, recv, count, dtype, label, unit);
        break;
    case ZB_COLL_BARRIER: st = c->ops->barrier(c, s); break;
    case ZB_COLL_COUNT: return ZB_FAIL(ZB_ERR_INTERNAL, "no collective %d", (int)kind);
    }
    if (st != ZB_OK) return st;
    c->sent_bytes[kind] += zb_coll_sent_bytes(kind, count, zb_dtype_size(dtype), c->n_ranks);
    remember(c, s, kind, label, unit);
    return ZB_OK;
}

zb_status zb_comm_allgather(zb_comm *c, zb_stream *s, const void *send, void *recv, size_t count,
                            zb_dtype dtype, const char *label, int unit) {
    return issue(c, s, ZB_COLL_ALLGATHER, send, recv, count, dtype, label, unit);
}

zb_status zb_comm_reducescatter(zb_comm *c, zb_stream *s, const void *send, void *recv,
                                size_t count, zb_dtype dtype, const char *label, int unit) {
    return issue(c, s, ZB_COLL_REDUCESCATTER, send, recv, count, dtype, label, unit);
}

zb_status zb_comm_allreduce(zb_comm *c, zb_stream *s, const void *send, void *recv, size_t count,
                            zb_dtype dtype, const char *label, int unit) {
    return issue(c, s, ZB_COLL_ALLREDUCE, send, recv, count, dtype, label, unit);
}

zb_status zb_comm_barrier(zb_comm *c, zb_stream *s) {
    return issue(c, s, ZB_COLL_BARRIER, NULL, NULL, 0, ZB_DTYPE_F32, "barrier", -1);
}

zb_status zb_comm_wait_stream(zb_comm *c, zb_stream *s, const char *op, int unit) {
    if (!op) op = "wait";
    zb_status st = zb_dev_stream_sync_within(s, c->cfg.timeout_s);
    if (st != ZB_ERR_NOT_READY) return st;
    const zb_comm_last *last = zb_comm_last_issued(c, s);
    if (last) {
        op = zb_coll_name(last->kind);
        unit = last->unit;
    }
    return ZB_FAIL(ZB_ERR_TIMEOUT, "rank %d: %s '%s' (unit %d) did not complete within %g s "
                   "(--timeout)", c->rank, op, last ? last->label : s->name, unit,
                   c->cfg.timeout_s);
}

zb_status zb_comm_wait(zb_comm *c, zb_stream *s, const char *op, int unit) {
    if (!op) op = "wait";
    if (!c) return ZB_FAIL(ZB_ERR_INVALID, "%s (unit %d): no comm given", op, unit);
    if (!s) {
        return ZB_FAIL(ZB_ERR_INVALID, "rank %d: %s (unit %d): no stream given", c->rank, op, unit);
    }
    if (c->ops->wait) return c->ops->wait(c, s, op, unit);
    return zb_comm_wait_stream(c, s, op, unit);
}
