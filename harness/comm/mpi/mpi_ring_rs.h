/* Reduce-scatter as a ring of point-to-point steps, for the mpi comm.
 *
 * Open MPI 4.1's non-blocking reduce-scatter (libnbc) reduces the whole
 * vector to rank 0 on a binomial tree and then scatters it, so on 2 ranks
 * rank 1 sends all n blocks and rank 0 adds all of them alone; the ring
 * sends each rank (n - 1) blocks and shares the adding out, the traffic the
 * bus-bandwidth formula assumes (docs/design.md §10).
 *
 * Step s (0 .. n-2): rank r sends block (r - s - 1) mod n to rank r + 1
 * (its own input at step 0, else the partial sum it finished the step
 * before) and receives block (r - s - 2) mod n from rank r - 1 into a
 * scratch block, then adds its own input of that block. The last step's
 * block is r: its sum goes straight to recv. Each block's sum runs in the
 * same order on every call (rank b + 1's input first, rank b's last), so
 * results are deterministic. Only recv is written: in place (recv = this
 * rank's block of send) the other blocks of send keep their values. */
#ifndef ZB_MPI_RING_RS_H
#define ZB_MPI_RING_RS_H

#include <stdbool.h>
#include <stddef.h>

#include <mpi.h>

#include "comm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zb_ring_rs {
    const char *send;  /* n blocks */
    char *recv;        /* one block */
    char *scratch;     /* two blocks: zb_ring_rs_scratch_bytes */
    size_t count;      /* elements per block */
    zb_dtype dtype;
    MPI_Datatype type;
    MPI_Comm comm;
    int rank, n, step;
    MPI_Request req[2]; /* this step's receive and send */
} zb_ring_rs;

/* The scratch a ring of `count` elements per block needs. */
size_t zb_ring_rs_scratch_bytes(size_t count, zb_dtype dtype);

/* Fills r and posts step 0 (n >= 2); returns MPI's code, *call the MPI
 * call that failed. */
int zb_ring_rs_start(zb_ring_rs *r, const void *send, void *recv, void *scratch, size_t count, zb_dtype dtype,
                     MPI_Datatype type, MPI_Comm comm, int rank, int n, const char **call);

/* Once both of r->req have completed: adds the received block and posts
 * the next step, or writes recv and sets *done after the last. */
int zb_ring_rs_advance(zb_ring_rs *r, bool *done, const char **call);

#ifdef __cplusplus
}
#endif
#endif
