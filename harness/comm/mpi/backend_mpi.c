/* The mpi comm backend's registry entry (comm_backend.h). */
#include "comm_backend.h"
#include "comm_mpi.h"

/* The mpi comm runs collectives as host ops, staged through pinned host
 * memory where device memory is not host memory (comm_mpi.c). */
static zb_status mpi_create(zb_device *dev, zb_stream *const *streams, int n_streams,
                            const zb_comm_config *cfg, zb_comm **out) {
    if (!zb_dev_runs_host_code(dev)) {
        *out = NULL;
        return ZB_FAIL(ZB_ERR_INVALID, "--comm mpi on --backend %s: this device cannot run MPI in "
                       "stream order (no host ops or host staging); use --comm nccl", dev->ops->name);
    }
    return zb_comm_mpi_create(dev, streams, n_streams, cfg, out);
}

const zb_comm_backend zb_comm_backend_mpi = {
    .name = "mpi",
    .create = mpi_create,
};
