/* The sim backend's registry entry (device_backend.h): the simulated device.
 * Never chosen by --backend auto; its default hardware is the H100 SXM
 * profile, whose sim parameters name their sources. */
#include <stdio.h>

#include "device_backend.h"
#include "device_sim.h"

static zb_status sim_probe(char *why, size_t n) {
    if (why && n) snprintf(why, n, "the sim needs no hardware");
    return ZB_OK;
}

static const char *sim_default_hw(int local_rank) {
    (void)local_rank;
    return ZB_SIM_DEFAULT_HW;
}

const zb_device_backend zb_device_backend_sim = {
    .name = "sim",
    .probe = sim_probe,
    .create = zb_device_sim_create,
    .kernels = zb_kernels_sim,
    .default_comm = "sim",
    .default_param_dtype = ZB_DTYPE_BF16, /* mixed precision, as the GPUs it models run */
    .auto_priority = 0,
    .default_hw = sim_default_hw,
    .simulated = "virtual time on the sim device, every op costed from the hardware profile",
};
