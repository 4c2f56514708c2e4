/* Metric formulas shared by every benchmark and report (docs/design.md). */
#ifndef ZB_METRICS_H
#define ZB_METRICS_H

#include <stddef.h>

#include "comm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes per second in GB/s (GB = 1e9 bytes, nccl-tests' convention); 0 for
 * a time that is not positive. A collective's algorithm bandwidth is its
 * size over its time; its bus bandwidth scales that by the factor its
 * record gives (bench/coll.h). */
double zb_gbps(double bytes, double seconds);
/* 2*M*N*K floating-point operations. */
double zb_gemm_flops(double m, double n, double k);

#ifdef __cplusplus
}
#endif
#endif
