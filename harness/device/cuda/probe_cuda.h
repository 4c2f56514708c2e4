/* The CUDA runtime's answer to zb_cuda_probe (harness/device/cuda/backend_probe.c). */
#ifndef ZB_PROBE_CUDA_H
#define ZB_PROBE_CUDA_H

#include <stddef.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* cudaGetDeviceCount: ZB_OK with n >= 1, or ZB_ERR_UNSUPPORTED and one line
 * in `why` (and in the thread's error message). */
zb_status zb_cuda_probe_runtime(int *n_devices, char *why, size_t n);

#ifdef __cplusplus
}
#endif
#endif
