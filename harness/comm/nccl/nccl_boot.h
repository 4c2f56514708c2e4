/* NCCL bootstrap helpers that need no CUDA: the ncclUniqueId broadcast over
 * MPI (the id as ZB_NCCL_ID_BYTES opaque bytes) and the NCCL version as text.
 * harness/comm/nccl/comm_nccl.c supplies ncclGetUniqueId and ncclGetVersion; the
 * broadcast is tested under MPI with a fake id (tests/mpi/test_nccl_bootstrap.c). */
#ifndef ZB_NCCL_BOOT_H
#define ZB_NCCL_BOOT_H

#include <stddef.h>

#include <jansson.h>
#include <mpi.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* sizeof(ncclUniqueId) (NCCL_UNIQUE_ID_BYTES); comm_nccl.c asserts it. */
#define ZB_NCCL_ID_BYTES 128

/* Makes the id on the root (ncclGetUniqueId). On failure it records a
 * message (ZB_FAIL) and returns the status. */
typedef zb_status (*zb_nccl_make_id_fn)(void *ctx, unsigned char id[ZB_NCCL_ID_BYTES]);

/* COLLECTIVE over `comm`: rank 0 of `comm` calls make_id, and one broadcast
 * hands every rank the id together with the root's status and message, so
 * all ranks return the same status: ZB_OK with the same bytes in `id`, or
 * the root's failure ("rank R: rank 0 could not create the NCCL unique id:
 * <root's message>"), or ZB_ERR_MPI when the broadcast fails. No rank is
 * left waiting when the root fails; a broadcast the root never joins ends
 * after timeout_s (--timeout; <= 0: the default of mpi_wait.h) with
 * ZB_ERR_TIMEOUT, which must end the job. */
zb_status zb_nccl_bcast_id(MPI_Comm comm, zb_nccl_make_id_fn make_id, void *ctx, double timeout_s,
                           unsigned char id[ZB_NCCL_ID_BYTES]);

#define ZB_NCCL_GPU_ID_BYTES 64

/* COLLECTIVE over `comm`: gathers every rank's GPU id (`gpu_id`, a string:
 * the UUID; "" when unknown, which matches nothing) and refuses, on every
 * rank alike, a job in which two ranks hold the same GPU, which NCCL
 * cannot run: ZB_ERR_UNSUPPORTED, "rank R: ranks A and B share GPU <id>;
 * NCCL needs one GPU per rank (--comm mpi lets ranks share a GPU)", A < B
 * the first such pair. ZB_ERR_TIMEOUT after timeout_s when a rank never
 * joins (the job must end). Checked before NCCL's own init, whose refusal
 * would differ from rank to rank. */
zb_status zb_nccl_check_gpus(MPI_Comm comm, const char *gpu_id, double timeout_s);

/* NCCL_VERSION_CODE (or ncclGetVersion's result) as "major.minor.patch":
 * codes below 10000 are major*1000 + minor*100 + patch (NCCL <= 2.8), others
 * major*10000 + minor*100 + patch. A negative code reads "unknown". */
void zb_nccl_version_text(int code, char *out, size_t out_size);

/* Adds "nccl_version" (the library loaded at run time, ncclGetVersion) and
 * "nccl_version_built" (the nccl.h compiled against) to `meta`.
 * ZB_ERR_NOMEM, or ZB_ERR_MPI when ncclGetVersion fails. CUDA builds only
 * (comm_nccl.c); the nccl registry entry's meta. */
zb_status zb_nccl_meta(json_t *meta);

#ifdef __cplusplus
}
#endif
#endif
