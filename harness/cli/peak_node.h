/* The measured CPU peak, once per node (peak_node.c).
 *
 * A hardware profile that asks for a measured peak (cpu.json) used to have
 * every rank time the FMA loop on its own, while the other ranks already
 * worked: the figure moved with whatever else ran (84 to 171 GFLOP/s per
 * rank between runs here), and MFU with it. Now local rank 0 of each node
 * times it before any rank has created its device or started work, while
 * the node's other ranks sleep; the best of the runs is every rank's on
 * that node, and the spread (min, median, max) goes into the JSON meta. */
#ifndef ZB_PEAK_NODE_H
#define ZB_PEAK_NODE_H

#include <stdbool.h>

#include <jansson.h>

#include "device_backend.h"
#include "mpi_boot.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_PEAK_RUNS 7           /* timed runs of the FMA loop */
#define ZB_PEAK_SECONDS 0.35     /* about this long for all of them */

typedef struct zb_peak_measure {
    bool measured;  /* false: no measurement asked for (or possible) */
    char isa[16];   /* the instructions used ("avx512f", ...) */
    int runs;
    int node;       /* the node that measured it (this rank's) */
    /* GFLOP/s of one core: the best run (the peak used), and the spread. */
    double best_gflops, min_gflops, median_gflops, max_gflops;
} zb_peak_measure;

/* Collective over MPI_COMM_WORLD: when `measure` is true on the ranks and
 * the device backend can measure, local rank 0 of each node runs the FMA
 * loop ZB_PEAK_RUNS times while the node's other ranks sleep in a bounded
 * wait; every rank gets its node's figures. `measure` must agree on every
 * rank (it comes from the profile every rank loaded). Bounded by timeout_s
 * (ZB_ERR_TIMEOUT naming the rank). */
zb_status zb_peak_measure_node(const zb_topology *t, const zb_device_backend *dev, bool measure,
                               double timeout_s, zb_peak_measure *out);

/* The meta's "peak_measure": {isa, runs, node, best/min/median/max
 * _gflops_per_core}, or JSON null when not measured. */
json_t *zb_peak_measure_json(const zb_peak_measure *m);

#ifdef __cplusplus
}
#endif
#endif
