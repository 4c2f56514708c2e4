/* The one generator of exact collective values, and the buffer shape every
 * collective record derives its sizes and in-place layout from (coll.h). */
#include <math.h>

#include "coll.h"
#include "dtype_access.h"
#include "rng.h"

float zb_coll_value(uint64_t seed, int rank, size_t j) {
    uint64_t h = zb_mix64(seed ^ ((uint64_t)(rank + 1) * 0xC2B2AE3D27D4EB4FULL) ^
                          ((uint64_t)(j + 1) * ZB_GOLDEN_GAMMA));
    return (float)((int)(h % 5u) - 2);
}

float zb_coll_sum_value(uint64_t seed, int n_ranks, size_t j) {
    float sum = 0.0f;
    for (int r = 0; r < n_ranks; r++) sum += zb_coll_value(seed, r, j);
    return sum;
}

size_t zb_coll_send_elems(const zb_coll_def *def, size_t count, int n_ranks) {
    return def->send_per_rank ? count * (size_t)n_ranks : count;
}

size_t zb_coll_recv_elems(const zb_coll_def *def, size_t count, int n_ranks) {
    return def->recv_per_rank ? count * (size_t)n_ranks : count;
}

/* Blocks of `count` in the larger buffer. */
static uint64_t blocks(const zb_coll_def *def, int n_ranks) {
    return def->send_per_rank || def->recv_per_rank ? (uint64_t)n_ranks : 1;
}

uint64_t zb_coll_size_bytes(const zb_coll_def *def, size_t count, size_t elem_bytes, int n_ranks) {
    return (uint64_t)count * elem_bytes * blocks(def, n_ranks);
}

size_t zb_coll_count_for(const zb_coll_def *def, uint64_t size_bytes, size_t elem_bytes, int n_ranks) {
    return (size_t)(size_bytes / ((uint64_t)elem_bytes * blocks(def, n_ranks)));
}

void zb_coll_place(const zb_coll_def *def, zb_coll_args *a, void *buf_a, void *buf_b) {
    if (!a->in_place) {
        a->send = buf_a;
        a->recv = buf_b;
        return;
    }
    size_t block = (size_t)a->rank * a->count * zb_dtype_size(a->dtype);
    if (def->send_per_rank) { /* recv is this rank's block of send */
        a->send = buf_a;
        a->recv = (char *)buf_a + block;
    } else { /* send is this rank's block of recv, or recv itself */
        a->recv = buf_b;
        a->send = def->recv_per_rank ? (char *)buf_b + block : buf_b;
    }
}

zb_coll_slots zb_coll_slots_for(const zb_coll_def *def, const zb_coll_args *a, size_t buffer_bytes) {
    size_t e = zb_dtype_size(a->dtype);
    size_t send = zb_coll_send_elems(def, a->count, a->n_ranks) * e, recv = zb_coll_recv_elems(def, a->count, a->n_ranks) * e;
    size_t used = (send > recv ? send : recv) + 4095;
    used -= used % 4096;
    zb_coll_slots sl = {1, used};
    if (used > 0 && buffer_bytes / used > 1) sl.n = (int64_t)(buffer_bytes / used);
    return sl;
}

zb_coll_args zb_coll_slot_args(const zb_coll_args *a, const zb_coll_slots *sl, int64_t i) {
    zb_coll_args x = *a;
    size_t off = sl->n > 1 ? (size_t)(i % sl->n) * sl->stride : 0;
    x.send = (char *)a->send + off;
    x.recv = (char *)a->recv + off;
    return x;
}

void zb_coll_fill_input(const zb_coll_def *def, const zb_coll_args *a) {
    size_t n = zb_coll_send_elems(def, a->count, a->n_ranks);
    for (size_t j = 0; j < n; j++) zb_dtype_store(a->send, j, a->dtype, zb_coll_value(a->seed, a->rank, j));
}

static bool matches(float got, float want, const zb_coll_args *a) {
    if (a->dtype == ZB_DTYPE_BF16 && a->n_ranks > 128) {
        return fabsf(got - want) <= fabsf(want) * (1.0f / 128.0f);
    }
    return got == want;
}

int64_t zb_coll_count_wrong(const zb_coll_def *def, const zb_coll_args *a) {
    int64_t wrong = 0;
    size_t n = zb_coll_recv_elems(def, a->count, a->n_ranks);
    for (size_t j = 0; j < n; j++) wrong += !matches(zb_dtype_load(a->recv, j, a->dtype), def->expected(a, j), a);
    return wrong;
}
