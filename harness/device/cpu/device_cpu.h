/* The cpu device backend: a worker thread per stream running a FIFO of host
 * ops, events with CUDA's semantics, a caching memory pool, GEMM through
 * OpenBLAS, and the CPU kernel table (dispatch.c). */
#ifndef ZB_DEVICE_CPU_H
#define ZB_DEVICE_CPU_H

#include "device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Creates the CPU device (worker-thread streams, OpenBLAS GEMM). */
zb_status zb_device_cpu_create(const zb_device_config *cfg, zb_device **out);

/* The CPU backend's kernel table (dispatch.c): every op runs the fp32
 * reference kernel (kernels/cpu/) as a host function in stream order
 * (launch_host); with bf16 storage it widens the inputs into fp32 scratch,
 * runs the same reference kernel and rounds the outputs (the bf16
 * reference). */
const struct zb_kernels *zb_kernels_cpu(void);

#ifdef __cplusplus
}
#endif
#endif
