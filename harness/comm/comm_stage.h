/* Host staging for the mpi comm on a device whose memory is not host memory
 * (cuda): plain arithmetic, no MPI and no device calls, so it is unit-tested
 * on its own (tests/unit/test_comm_stage.c).
 *
 * A staged collective runs, in the issuing stream's order:
 *   1. memcpy_async device `send` -> host + in_host_offset (in_bytes);
 *   2. the MPI collective on the host buffer, always in place in comm.h's
 *      sense: send = host + host_send_offset, recv = host + host_recv_offset;
 *   3. memcpy_async host + out_host_offset -> device `recv` (out_bytes).
 * The result copy writes only what the collective owns on the device: the
 * whole recv buffer for all-gather and all-reduce, and only the `count`
 * elements of recv for reduce-scatter (in place, the rest of send is left as
 * it was). The layout is the same whether the device call was in place or
 * not, so comm.h's in-place conventions need nothing more:
 *   all-gather      host [count*n]: own block in at rank*count, all out
 *   reduce-scatter  host [count*n]: all in, own block out from rank*count
 *   all-reduce      host [count]:   all in, all out
 *   barrier         nothing staged
 * Staging buffers are per stream and grow-only (zb_stage_capacity): ops on
 * one stream run in order, so one buffer serves them all. */
#ifndef ZB_COMM_STAGE_H
#define ZB_COMM_STAGE_H

#include <stddef.h>

#include "comm.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zb_stage_plan {
    size_t host_bytes;       /* staging bytes this collective needs */
    size_t host_send_offset; /* the MPI call's send and recv on the host buffer */
    size_t host_recv_offset;
    size_t in_host_offset; /* device send -> host + in_host_offset */
    size_t in_bytes;
    size_t out_host_offset; /* host + out_host_offset -> device recv */
    size_t out_bytes;
} zb_stage_plan;

/* The plan for one collective of `count` elements (per rank for all-gather
 * and reduce-scatter, total for all-reduce; comm.h) of elem_bytes each.
 * ZB_ERR_INVALID when a size overflows size_t or rank is not in
 * [0, n_ranks). */
zb_status zb_stage_plan_make(zb_coll kind, size_t count, size_t elem_bytes, int rank, int n_ranks,
                             zb_stage_plan *out);

/* Bytes a grow-only staging buffer of `have` bytes should hold to serve a
 * collective needing `need`: `have` when it is enough, else `need` rounded
 * up to a multiple of ZB_STAGE_GRANULE_BYTES (saturating at SIZE_MAX). */
#define ZB_STAGE_GRANULE_BYTES ((size_t)64 << 10)
size_t zb_stage_capacity(size_t have, size_t need);

#ifdef __cplusplus
}
#endif
#endif
