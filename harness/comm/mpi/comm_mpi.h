/* The mpi comm backend: collectives run by Open MPI on the stream's host
 * thread (comm_mpi.c). */
#ifndef ZB_COMM_MPI_H
#define ZB_COMM_MPI_H

#include "comm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Collective over MPI_COMM_WORLD: duplicates one communicator per stream in
 * `streams`. Every rank must call it with the same number of streams. The
 * device must run host ops (launch_host); where its memory is not host
 * memory (cuda) every collective is staged through a pinned host buffer
 * per stream (grow-only, counted under ZB_MEM_HOST_STAGING, host memory), which destroy
 * frees after waiting for the streams: destroy the comm before its streams.
 * ZB_ERR_UNSUPPORTED for a device that can do neither. */
zb_status zb_comm_mpi_create(zb_device *dev, zb_stream *const *streams, int n_streams,
                             const zb_comm_config *cfg, zb_comm **out);

#ifdef __cplusplus
}
#endif
#endif
