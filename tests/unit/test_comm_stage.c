/* The mpi comm's host-staging arithmetic (harness/comm/comm_stage.h): for every
 * collective, rank and size, the plan's copies and the MPI call's in-place
 * layout, checked by simulating a staged collective on plain arrays (a
 * "device" buffer per rank, the staging buffer, the in-place MPI semantics
 * written out here) against the comm.h result, in place and out of place,
 * with guard elements around every device buffer that must stay untouched;
 * plus the grow-only capacity rule and the refusals (bad rank, overflow). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "comm_stage.h"
#include "zb_test.h"

#define GUARD 3
#define SENTINEL -777.0f

static float value(int rank, size_t j) { return (float)(rank * 1000) + (float)j; }

/* One simulated rank: its device buffer (send and recv live in it, with
 * guards) and its staging buffer. */
typedef struct sim_rank {
    float *dev;      /* GUARD + payload + GUARD */
    size_t dev_len;  /* elements in total */
    float *send, *recv;
    float *host;
    zb_stage_plan plan;
} sim_rank;

static void fill(float *p, size_t n, float v) {
    for (size_t i = 0; i < n; i++) p[i] = v;
}

/* Lays out send and recv in the device buffer per comm.h's conventions. */
static void layout(sim_rank *r, zb_coll kind, size_t count, int rank, int n, bool in_place) {
    size_t all = count * (size_t)n;
    size_t send_n = kind == ZB_COLL_REDUCESCATTER ? all : count;
    size_t recv_n = kind == ZB_COLL_ALLGATHER ? all : count;
    size_t payload = in_place ? (send_n > recv_n ? send_n : recv_n) : send_n + GUARD + recv_n;
    r->dev_len = GUARD + payload + GUARD;
    r->dev = (float *)malloc(r->dev_len * sizeof(float));
    fill(r->dev, r->dev_len, SENTINEL);
    float *base = r->dev + GUARD;
    if (!in_place) {
        r->send = base;
        r->recv = base + send_n + GUARD;
    } else if (kind == ZB_COLL_ALLGATHER) {
        r->recv = base;
        r->send = base + (size_t)rank * count;
    } else if (kind == ZB_COLL_REDUCESCATTER) {
        r->send = base;
        r->recv = base + (size_t)rank * count;
    } else {
        r->send = r->recv = base;
    }
    for (size_t j = 0; j < send_n; j++) r->send[j] = value(rank, j);
}

/* The staged collective over n simulated ranks; returns wrong elements. */
static long simulate(zb_coll kind, size_t count, int n, bool in_place) {
    sim_rank *r = (sim_rank *)calloc((size_t)n, sizeof *r);
    const size_t e = sizeof(float);
    long wrong = 0;
    for (int k = 0; k < n; k++) {
        layout(&r[k], kind, count, k, n, in_place);
        ZB_CHECK_OK(zb_stage_plan_make(kind, count, e, k, n, &r[k].plan));
        const zb_stage_plan *p = &r[k].plan;
        r[k].host = (float *)malloc(p->host_bytes + e);
        fill(r[k].host, p->host_bytes / e + 1, NAN);
        /* every offset and size is whole elements, inside the buffer */
        ZB_CHECK(p->in_host_offset + p->in_bytes <= p->host_bytes);
        ZB_CHECK(p->out_host_offset + p->out_bytes <= p->host_bytes);
        ZB_CHECK(p->host_send_offset % e == 0 && p->host_recv_offset % e == 0);
        /* 1. device send -> host */
        memcpy((char *)r[k].host + p->in_host_offset, r[k].send, p->in_bytes);
    }
    /* 2. the MPI call, in place on the host buffers (MPI's semantics; the
     *    comm moves the reduce-scatter result from the start to recv). */
    for (int k = 0; k < n; k++) {
        const zb_stage_plan *p = &r[k].plan;
        float *hs = (float *)((char *)r[k].host + p->host_send_offset);
        float *hr = (float *)((char *)r[k].host + p->host_recv_offset);
        if (kind == ZB_COLL_ALLGATHER) {
            ZB_CHECK(hs == hr + (size_t)k * count); /* comm.h in place */
            for (int q = 0; q < n; q++) {
                const zb_stage_plan *pq = &r[q].plan;
                const float *mine = (const float *)((char *)r[q].host + pq->host_send_offset);
                memcpy(hr + (size_t)q * count, mine, count * e);
            }
        } else if (kind == ZB_COLL_REDUCESCATTER) {
            ZB_CHECK(hr == hs + (size_t)k * count);
        } else if (kind == ZB_COLL_ALLREDUCE) {
            ZB_CHECK(hs == hr);
        }
    }
    if (kind == ZB_COLL_REDUCESCATTER || kind == ZB_COLL_ALLREDUCE) {
        /* Every rank's sums first (in place, results overwrite inputs). */
        float *sums = (float *)calloc((size_t)n * (count ? count : 1), sizeof(float));
        for (int k = 0; k < n; k++) {
            for (size_t j = 0; j < count; j++) {
                size_t at = kind == ZB_COLL_REDUCESCATTER ? (size_t)k * count + j : j;
                float sum = 0;
                for (int q = 0; q < n; q++) {
                    sum += ((const float *)((char *)r[q].host + r[q].plan.host_send_offset))[at];
                }
                sums[(size_t)k * count + j] = sum;
            }
        }
        for (int k = 0; k < n; k++) { /* written where the comm leaves it: recv */
            float *hr = (float *)((char *)r[k].host + r[k].plan.host_recv_offset);
            memcpy(hr, sums + (size_t)k * count, count * e);
        }
        free(sums);
    }
    /* 3. host -> device recv, then check against comm.h's result */
    for (int k = 0; k < n; k++) {
        const zb_stage_plan *p = &r[k].plan;
        memcpy(r[k].recv, (char *)r[k].host + p->out_host_offset, p->out_bytes);
        size_t recv_n = kind == ZB_COLL_ALLGATHER ? count * (size_t)n : count;
        for (size_t j = 0; j < recv_n && kind != ZB_COLL_BARRIER; j++) {
            float want;
            if (kind == ZB_COLL_ALLGATHER) {
                want = value((int)(j / (count ? count : 1)), j % (count ? count : 1));
            } else {
                size_t at = kind == ZB_COLL_REDUCESCATTER ? (size_t)k * count + j : j;
                want = 0;
                for (int q = 0; q < n; q++) want += value(q, at);
            }
            wrong += r[k].recv[j] != want;
        }
        /* Nothing outside what the collective owns changed: guards, and
         * (reduce-scatter) the other blocks of send, in place or not. */
        for (size_t i = 0; i < r[k].dev_len; i++) {
            float *x = &r[k].dev[i];
            bool in_recv = x >= r[k].recv && x < r[k].recv + recv_n;
            if (in_recv) continue;
            size_t send_n = kind == ZB_COLL_REDUCESCATTER ? count * (size_t)n : count;
            bool in_send = x >= r[k].send && x < r[k].send + send_n;
            float want = in_send ? value(k, (size_t)(x - r[k].send)) : SENTINEL;
            wrong += *x != want;
        }
        free(r[k].dev);
        free(r[k].host);
    }
    free(r);
    return wrong;
}

static void test_plans(void) {
    static const size_t counts[] = {0, 1, 7, 1000, 1023};
    static const zb_coll kinds[] = {ZB_COLL_ALLGATHER, ZB_COLL_REDUCESCATTER, ZB_COLL_ALLREDUCE};
    for (int n = 1; n <= 5; n++) {
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
            for (int ki = 0; ki < 3; ki++) {
                for (int ip = 0; ip < 2; ip++) {
                    long w = simulate(kinds[ki], counts[ci], n, ip);
                    ZB_CHECK_MSG(w == 0, "%s count %zu n %d in_place %d: %ld wrong", zb_coll_name(kinds[ki]),
                                 counts[ci], n, ip, w);
                }
            }
        }
    }
    /* The exact numbers for one case, as comm_stage.h documents them. */
    zb_stage_plan p;
    ZB_CHECK_OK(zb_stage_plan_make(ZB_COLL_ALLGATHER, 10, 2, 3, 4, &p));
    ZB_CHECK(p.host_bytes == 80 && p.in_host_offset == 60 && p.in_bytes == 20 && p.out_host_offset == 0 &&
             p.out_bytes == 80 && p.host_send_offset == 60 && p.host_recv_offset == 0);
    ZB_CHECK_OK(zb_stage_plan_make(ZB_COLL_REDUCESCATTER, 10, 2, 3, 4, &p));
    ZB_CHECK(p.host_bytes == 80 && p.in_host_offset == 0 && p.in_bytes == 80 && p.out_host_offset == 60 &&
             p.out_bytes == 20 && p.host_send_offset == 0 && p.host_recv_offset == 60);
    ZB_CHECK_OK(zb_stage_plan_make(ZB_COLL_ALLREDUCE, 10, 2, 3, 4, &p));
    ZB_CHECK(p.host_bytes == 20 && p.in_bytes == 20 && p.out_bytes == 20 && p.in_host_offset == 0 &&
             p.out_host_offset == 0 && p.host_send_offset == 0 && p.host_recv_offset == 0);
    ZB_CHECK_OK(zb_stage_plan_make(ZB_COLL_BARRIER, 0, 4, 0, 2, &p));
    ZB_CHECK(p.host_bytes == 0 && p.in_bytes == 0 && p.out_bytes == 0);
}

static void test_refusals(void) {
    zb_stage_plan p;
    ZB_CHECK(zb_stage_plan_make(ZB_COLL_ALLGATHER, 4, 4, 2, 2, &p) == ZB_ERR_INVALID);
    ZB_CHECK(zb_stage_plan_make(ZB_COLL_ALLGATHER, 4, 4, -1, 2, &p) == ZB_ERR_INVALID);
    ZB_CHECK(zb_stage_plan_make(ZB_COLL_ALLGATHER, 4, 4, 0, 0, &p) == ZB_ERR_INVALID);
    ZB_CHECK(zb_stage_plan_make(ZB_COLL_REDUCESCATTER, SIZE_MAX / 2, 4, 0, 2, &p) == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "overflows") != NULL);
    ZB_CHECK(zb_stage_plan_make(ZB_COLL_ALLGATHER, SIZE_MAX / 6, 4, 0, 2, &p) == ZB_ERR_INVALID);
    ZB_CHECK(zb_stage_plan_make(ZB_COLL_COUNT, 1, 4, 0, 2, &p) == ZB_ERR_INVALID);
}

static void test_capacity(void) {
    const size_t g = ZB_STAGE_GRANULE_BYTES;
    ZB_CHECK(zb_stage_capacity(0, 0) == 0);     /* a barrier needs nothing */
    ZB_CHECK(zb_stage_capacity(0, 1) == g);
    ZB_CHECK(zb_stage_capacity(0, g) == g);
    ZB_CHECK(zb_stage_capacity(0, g + 1) == 2 * g);
    ZB_CHECK(zb_stage_capacity(2 * g, 5) == 2 * g);     /* grow-only: never shrinks */
    ZB_CHECK(zb_stage_capacity(2 * g, 2 * g) == 2 * g); /* enough: kept as is */
    ZB_CHECK(zb_stage_capacity(2 * g, 2 * g + 1) == 3 * g);
    ZB_CHECK(zb_stage_capacity(0, SIZE_MAX - 3) == SIZE_MAX);
    /* A sequence of needs: grows only when one exceeds what is held, and
     * what is held always covers the need. */
    size_t have = 0, grows = 0;
    const size_t needs[] = {4, 100, g, 7, 3 * g + 9, 2 * g, 3 * g + 10, 40};
    for (size_t i = 0; i < sizeof needs / sizeof needs[0]; i++) {
        size_t next = zb_stage_capacity(have, needs[i]);
        ZB_CHECK(next >= needs[i] && next >= have && next % g == 0);
        grows += next != have;
        have = next;
    }
    ZB_CHECK(grows == 2 && have == 4 * g);
}

int main(void) {
    test_plans();
    test_refusals();
    test_capacity();
    return zb_test_finish("test_comm_stage");
}
