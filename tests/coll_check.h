/* One collective's buffers and their element-by-element check, shared by
 * the collective tests (tests/conformance/test_comm_conformance.c,
 * tests/mpi/test_collectives_staged.c).
 *
 * Values: every input and every expected result comes from
 * zb_coll_input / zb_coll_expected below, over the benchmarks' own
 * generator of exact collective values (zb_coll_value, bench/coll.h):
 * small integers, so sums over ranks are exact in float and bf16 whatever
 * order the library adds in.
 *
 * Layout: one device allocation per collective, send and recv placed per
 * comm.h (in place or not), GUARD elements around them. Before the op the
 * allocation holds SENTINEL, recv NaN (0xff bytes: every element must be
 * written) and send the rank's inputs (over recv where they overlap). After
 * it, recv must hold the results, and everything else what was uploaded:
 * guards, and send outside recv (comm.h: a collective writes only recv).
 * Data moves through the device's memcpy_async on the given stream, so the
 * same code serves host and device memory. */
#ifndef ZB_COLL_CHECK_H
#define ZB_COLL_CHECK_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "comm.h"
#include "device.h"
#include "dtype_access.h"
#include "zb_test.h"

#define ZB_COLL_GUARD 5
/* Not an input and not a sum of inputs over <= 128 ranks (|v| <= 2 each). */
#define ZB_COLL_SENTINEL 999.0f
/* The seed of every test's values. */
#define ZB_COLL_TEST_SEED 0x7e57ULL

/* Rank r's input element j (of its send buffer). */
static inline float zb_coll_input(int rank, size_t j) { return zb_coll_value(ZB_COLL_TEST_SEED, rank, j); }

/* Element j of rank `rank`'s recv buffer after `kind` over n ranks with
 * per-rank (all-gather, reduce-scatter) or total (all-reduce) `count`. */
static inline float zb_coll_expected(zb_coll kind, size_t count, int rank, int n, size_t j) {
    if (kind == ZB_COLL_ALLGATHER) return zb_coll_input((int)(j / count), j % count);
    size_t at = kind == ZB_COLL_REDUCESCATTER ? (size_t)rank * count + j : j;
    return zb_coll_sum_value(ZB_COLL_TEST_SEED, n, at);
}

/* The collective tests' sweep: every kind, float and bf16, these counts (1
 * and odd ones among them), out of place and in place, alternating between
 * two streams. Case i of ZB_COLL_N_CASES (zb_coll_case_at). */
static const size_t zb_coll_test_counts[] = {1, 7, 1000, 1023, 65537};
#define ZB_COLL_N_COUNTS (sizeof zb_coll_test_counts / sizeof zb_coll_test_counts[0])
#define ZB_COLL_N_CASES (3 * 2 * 2 * ZB_COLL_N_COUNTS)

typedef struct zb_coll_case {
    zb_coll kind;
    zb_dtype t;
    size_t count;
    bool in_place;
    int stream; /* 0 or 1: which of the test's two streams */
} zb_coll_case;

static inline zb_coll_case zb_coll_case_at(size_t i) {
    static const zb_coll kinds[3] = {ZB_COLL_ALLGATHER, ZB_COLL_REDUCESCATTER, ZB_COLL_ALLREDUCE};
    size_t ci = (i / 6) % ZB_COLL_N_COUNTS, ip = (i / 3) % 2;
    zb_coll_case k;
    k.kind = kinds[i % 3];
    k.in_place = ip != 0;
    k.count = zb_coll_test_counts[ci];
    k.t = i / (6 * ZB_COLL_N_COUNTS) == 0 ? ZB_DTYPE_F32 : ZB_DTYPE_BF16;
    k.stream = (int)((ci + ip) % 2);
    return k;
}

typedef struct zb_coll_bufs {
    zb_coll kind;
    size_t count, send_n, recv_n, len, es;
    zb_dtype t;
    int rank, n;
    bool in_place;
    char *mem;               /* the device allocation */
    char *img;               /* its host image as uploaded */
    size_t send_at, recv_at; /* element offsets in the allocation */
} zb_coll_bufs;

static inline void *zb_coll_send(const zb_coll_bufs *b) { return b->mem + b->send_at * b->es; }
static inline void *zb_coll_recv(const zb_coll_bufs *b) { return b->mem + b->recv_at * b->es; }

/* Allocates on s's device and uploads on s (waited for); false on failure
 * (recorded). */
static inline bool zb_coll_bufs_make(zb_stream *s, int rank, int n, zb_coll_bufs *b, zb_coll kind,
                                     size_t count, zb_dtype t, bool in_place) {
    memset(b, 0, sizeof *b);
    size_t all = count * (size_t)n, G = ZB_COLL_GUARD;
    b->kind = kind, b->count = count, b->t = t, b->rank = rank, b->n = n, b->in_place = in_place;
    b->es = zb_dtype_size(t);
    b->send_n = kind == ZB_COLL_REDUCESCATTER ? all : count;
    b->recv_n = kind == ZB_COLL_ALLGATHER ? all : count;
    size_t payload = in_place ? (b->send_n > b->recv_n ? b->send_n : b->recv_n)
                              : b->send_n + G + b->recv_n;
    b->len = G + payload + G;
    if (!in_place) {
        b->send_at = G, b->recv_at = G + b->send_n + G;
    } else if (kind == ZB_COLL_ALLGATHER) {
        b->recv_at = G, b->send_at = G + (size_t)rank * count;
    } else if (kind == ZB_COLL_REDUCESCATTER) {
        b->send_at = G, b->recv_at = G + (size_t)rank * count;
    } else {
        b->send_at = b->recv_at = G;
    }
    b->img = (char *)malloc(b->len * b->es);
    void *p = NULL;
    ZB_CHECK_OK(zb_dev_alloc(s->dev, b->len * b->es, ZB_MEM_BENCH_BUFFER, &p));
    b->mem = (char *)p;
    if (!b->img || !b->mem) return false;
    for (size_t i = 0; i < b->len; i++) zb_dtype_store(b->img, i, t, ZB_COLL_SENTINEL);
    memset(b->img + b->recv_at * b->es, 0xff, b->recv_n * b->es);
    for (size_t j = 0; j < b->send_n; j++) zb_dtype_store(b->img, b->send_at + j, t, zb_coll_input(rank, j));
    zb_status st = s->dev->ops->memcpy_async(s, b->mem, b->img, b->len * b->es, NULL);
    if (st == ZB_OK) st = s->dev->ops->stream_sync(s);
    ZB_CHECK_OK(st);
    return st == ZB_OK;
}

static inline zb_status zb_coll_bufs_issue(zb_comm *c, zb_stream *s, const zb_coll_bufs *b) {
    void *send = zb_coll_send(b), *recv = zb_coll_recv(b);
    switch (b->kind) {
    case ZB_COLL_ALLGATHER: return zb_comm_allgather(c, s, send, recv, b->count, b->t, "ag", 1);
    case ZB_COLL_REDUCESCATTER:
        return zb_comm_reducescatter(c, s, send, recv, b->count, b->t, "rs", 2);
    default: return zb_comm_allreduce(c, s, send, recv, b->count, b->t, "ar", 3);
    }
}

/* Downloads on s (after the op's stream was synchronized), compares every
 * element of the allocation, frees. Returns the wrong elements, -1 when there was nothing to compare. */
static inline long zb_coll_bufs_check(zb_stream *s, zb_coll_bufs *b) {
    long wrong = -1;
    char *got = b->mem ? (char *)malloc(b->len * b->es) : NULL;
    zb_status st = got ? s->dev->ops->memcpy_async(s, got, b->mem, b->len * b->es, NULL) : ZB_OK;
    if (got && st == ZB_OK) st = s->dev->ops->stream_sync(s);
    ZB_CHECK_OK(st);
    if (got && b->img && st == ZB_OK) {
        wrong = 0;
        for (size_t i = 0; i < b->len; i++) {
            float want = zb_dtype_load(b->img, i, b->t); /* outside recv: as uploaded */
            if (i >= b->recv_at && i < b->recv_at + b->recv_n) {
                want = zb_coll_expected(b->kind, b->count, b->rank, b->n, i - b->recv_at);
            }
            wrong += !(zb_dtype_load(got, i, b->t) == want); /* NaN counts as wrong */
        }
    }
    free(got);
    free(b->img);
    if (b->mem) zb_dev_free(s->dev, b->mem);
    b->img = b->mem = NULL;
    return wrong;
}

#endif
