/* The measured CPU peak, once per node (peak_node.c).
 *
 * A hardware profile that asks for a measured peak (cpu.json) used to have
 * every rank time the FMA loop on its own, while the other ranks already
 * worked: the figure moved with whatever else ran (84 to 171 GFLOP/s per
 * rank between runs here), and MFU with it. Now local rank 0 of each node
 * times it before any rank has created its device or started work, while
 * the node's other ranks sleep; the best of the runs is every rank's on
 * that node, and the spread (min, median, max) goes into the JSON meta.
 *
 * Pinned: local rank 0 first looks in its host's peak cache
 * (peak_cache.h) and reuses a valid record instead of timing; a fresh
 * measurement (none cached, or `fresh`: --peak-measure) is written there
 * for later runs. A slower BLAS kernel therefore never moves the peak. */
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
    bool cached;    /* reused from the host's peak cache, not timed in this run */
    bool stored;    /* timed in this run and written to the cache */
    char date[24];  /* when it was timed (UTC, peak_cache.h) */
    char host[64];  /* the host that timed it */
    char note[384]; /* a cache ignored or not written, and why; "" none */
} zb_peak_measure;

/* Collective over MPI_COMM_WORLD: when `measure` is true on the ranks and
 * the device backend can measure, local rank 0 of each node reuses its
 * host's cached figure (unless `fresh`) or runs the FMA loop ZB_PEAK_RUNS
 * times while the node's other ranks sleep in a bounded wait, and caches
 * it; every rank gets its node's figures. `measure` and `fresh` must agree
 * on every rank (the profile and flags every rank has). Bounded by
 * timeout_s (ZB_ERR_TIMEOUT naming the rank). A cache that cannot be read
 * or written is a note, never a failure. */
zb_status zb_peak_measure_node(const zb_topology *t, const zb_device_backend *dev, bool measure, bool fresh,
                               double timeout_s, zb_peak_measure *out);

/* The meta's "peak_measure": {isa, runs, node, best/min/median/max
 * _gflops_per_core, cached, date, host, note}, or JSON null when not
 * measured. */
json_t *zb_peak_measure_json(const zb_peak_measure *m);

#ifdef __cplusplus
}
#endif
#endif
