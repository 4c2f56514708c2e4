/* Collective bandwidth and GEMM FLOP formulas (see metrics.h). */
#include "metrics.h"

double zb_algbw_gbps(zb_coll c, size_t count, size_t elem_bytes, int n_ranks, double seconds) {
    if (seconds <= 0.0) return 0.0;
    double bytes = (double)count * (double)elem_bytes;
    if (c == ZB_COLL_ALLGATHER || c == ZB_COLL_REDUCESCATTER) bytes *= (double)n_ranks;
    return bytes / seconds / 1e9;
}

double zb_busbw_gbps(zb_coll c, size_t count, size_t elem_bytes, int n_ranks, double seconds) {
    double algbw = zb_algbw_gbps(c, count, elem_bytes, n_ranks, seconds);
    double n = (double)n_ranks;
    switch (c) {
    case ZB_COLL_ALLGATHER:
    case ZB_COLL_REDUCESCATTER: return algbw * (n - 1.0) / n;
    case ZB_COLL_ALLREDUCE: return algbw * 2.0 * (n - 1.0) / n;
    case ZB_COLL_BARRIER:
    case ZB_COLL_COUNT: break;
    }
    return 0.0;
}

double zb_gemm_flops(double m, double n, double k) { return 2.0 * m * n * k; }
