/* Metric formulas shared by every benchmark and report (DESIGN.md §4). */
#ifndef ZB_METRICS_H
#define ZB_METRICS_H

#include <stddef.h>

#include "comm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* nccl-tests conventions, GB = 1e9 bytes. `count` is per rank for
 * all-gather and reduce-scatter, the total for all-reduce. */
double zb_algbw_gbps(zb_coll c, size_t count, size_t elem_bytes, int n_ranks, double seconds);
double zb_busbw_gbps(zb_coll c, size_t count, size_t elem_bytes, int n_ranks, double seconds);
/* 2*M*N*K floating-point operations. */
double zb_gemm_flops(double m, double n, double k);

#ifdef __cplusplus
}
#endif
#endif
