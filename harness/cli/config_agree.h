/* The ranks of a job agree on their configuration before any work.
 *
 * Each rank parses its own command line, and an MPMD mpirun
 * (`mpirun -np 1 zerobench A : -np 1 zerobench B`) or a wrapper script can
 * give ranks different ones; their collectives would then disagree in
 * size or number and fail much later with an MPI error (MPI_ERR_IN_STATUS)
 * or a timeout. Instead the job ends at start-up with one line naming the
 * first rank whose configuration differs from rank 0's and the first flag
 * it differs in. */
#ifndef ZB_CONFIG_AGREE_H
#define ZB_CONFIG_AGREE_H

#include "cli.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ZB_OK when every rank's parsed configuration is rank 0's; else
 * ZB_ERR_INVALID on every rank, with the same message. Collective over
 * MPI_COMM_WORLD, each wait bounded by this rank's --timeout (mpi_wait.h):
 * one small allreduce when the ranks agree. */
zb_status zb_config_agree(const zb_config *cfg);

#ifdef __cplusplus
}
#endif
#endif
