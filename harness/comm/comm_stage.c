/* Host staging arithmetic of the mpi comm (see comm_stage.h). */
#include "comm_stage.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static bool mul_ok(size_t a, size_t b, size_t *out) {
    if (a != 0 && b > SIZE_MAX / a) return false;
    *out = a * b;
    return true;
}

zb_status zb_stage_plan_make(zb_coll kind, size_t count, size_t elem_bytes, int rank, int n_ranks,
                             zb_stage_plan *out) {
    memset(out, 0, sizeof *out);
    if (n_ranks < 1 || rank < 0 || rank >= n_ranks) {
        return ZB_FAIL(ZB_ERR_INVALID, "staging %s: rank %d is not in [0, %d)", zb_coll_name(kind),
                       rank, n_ranks);
    }
    size_t block = 0, all = 0, mine = 0;
    if (!mul_ok(count, elem_bytes, &block) || !mul_ok(block, (size_t)n_ranks, &all)) {
        return ZB_FAIL(ZB_ERR_INVALID, "staging %s of %zu elements of %zu bytes on %d ranks: the size "
                       "overflows", zb_coll_name(kind), count, elem_bytes, n_ranks);
    }
    mine = block * (size_t)rank; /* <= all, so no overflow */
    switch (kind) {
    case ZB_COLL_ALLGATHER:
        out->host_bytes = all;
        out->host_send_offset = mine;
        out->host_recv_offset = 0;
        out->in_host_offset = mine;
        out->in_bytes = block;
        out->out_host_offset = 0;
        out->out_bytes = all;
        return ZB_OK;
    case ZB_COLL_REDUCESCATTER:
        out->host_bytes = all;
        out->host_send_offset = 0;
        out->host_recv_offset = mine;
        out->in_host_offset = 0;
        out->in_bytes = all;
        out->out_host_offset = mine;
        out->out_bytes = block;
        return ZB_OK;
    case ZB_COLL_ALLREDUCE:
        out->host_bytes = block;
        out->in_bytes = block;
        out->out_bytes = block;
        return ZB_OK;
    case ZB_COLL_BARRIER:
        return ZB_OK;
    case ZB_COLL_COUNT: break;
    }
    return ZB_FAIL(ZB_ERR_INVALID, "staging: unknown collective %d", (int)kind);
}

size_t zb_stage_capacity(size_t have, size_t need) {
    if (need <= have) return have;
    size_t g = ZB_STAGE_GRANULE_BYTES;
    size_t rem = need % g;
    if (rem == 0) return need;
    if (need > SIZE_MAX - (g - rem)) return SIZE_MAX;
    return need + (g - rem);
}
