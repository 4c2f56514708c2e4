/* The nccl comm backend (CUDA builds): one non-blocking NCCL communicator
 * over MPI_COMM_WORLD (comm_nccl.c). */
#ifndef ZB_COMM_NCCL_H
#define ZB_COMM_NCCL_H

#include "comm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Collective over MPI_COMM_WORLD (MPI must be initialized): rank 0 makes the
 * ncclUniqueId, MPI broadcasts it, and every rank joins one non-blocking NCCL
 * communicator, waiting at most cfg->timeout_s. The device must be the cuda
 * device (one GPU per rank; NCCL refuses two ranks on one GPU). A collective
 * may be issued on any stream in `streams`: NCCL orders the ops of one
 * communicator itself. Collectives only enqueue; zb_comm_nccl_wait (the
 * comm's wait op, so zb_comm_wait reaches it) is the bounded wait for them. Built without CUDA: ZB_ERR_UNSUPPORTED. */
zb_status zb_comm_nccl_create(zb_device *dev, zb_stream *const *streams, int n_streams,
                              const zb_comm_config *cfg, zb_comm **out);

/* Waits for all work issued to `s` so far (collectives and anything else),
 * polling the stream and the communicator's asynchronous error until the
 * timeout. On expiry or an error it aborts the communicator and returns
 * ZB_ERR_TIMEOUT or ZB_ERR_MPI with a message naming the rank and the first
 * collective that did not complete (its name, label and unit), or `op` and
 * `unit` when the stuck work is not a collective. After an abort every later
 * call on the comm fails at once. ZB_ERR_INVALID when `c` is not an nccl
 * comm or `s` is not one of its streams; ZB_ERR_UNSUPPORTED without CUDA. */
zb_status zb_comm_nccl_wait(zb_comm *c, zb_stream *s, const char *op, int unit);

#ifdef __cplusplus
}
#endif
#endif
