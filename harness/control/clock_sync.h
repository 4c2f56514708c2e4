/* Aligns the ranks' harness clocks for the trace (docs/design.md §3, §7).
 *
 * Each machine's CLOCK_MONOTONIC has its own origin, so records of ranks on
 * different nodes cannot be compared as they are. At startup
 * zb_clock_sync_run measures, for every rank,
 *
 *   offset_ns = rank 0's clock - this rank's clock
 *
 * (t + offset_ns is t on rank 0's clock) and an uncertainty: the true offset
 * lies within offset_ns +- uncertainty_ns.
 *
 * Method (Cristian's algorithm, as NTP and PTP's software mode): the lowest
 * rank of every node other than rank 0's sends K pings to rank 0, stamping
 * t_send and t_recv on its own clock; rank 0 answers each with its own clock
 * reading t_remote. Rank 0 read its clock somewhere between t_send and
 * t_recv, so of the K round trips the one with the smallest RTT bounds the
 * offset most tightly: offset = t_remote - (t_send + t_recv)/2, uncertainty
 * = RTT/2 (rounded up). CLOCK_MONOTONIC is one clock per machine, so every
 * rank of a node takes its node's result; ranks on rank 0's node share rank
 * 0's clock: offset exactly 0, uncertainty 0, nothing measured.
 *
 * The offset is measured once: drift between the nodes' clocks during the
 * run (ppm-scale) is not corrected. Only the trace's presentation uses the
 * offsets (trace_export.h); metrics use each rank's own clock. */
#ifndef ZB_CLOCK_SYNC_H
#define ZB_CLOCK_SYNC_H

#include <stdint.h>

#include <jansson.h>

#include "mpi_boot.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Round trips per measured node. */
#define ZB_CLOCK_SYNC_ROUND_TRIPS 16

/* One round trip: t_send and t_recv on this rank's clock, t_remote on rank 0's. */
typedef struct zb_clock_sample {
    int64_t t_send_ns;
    int64_t t_remote_ns;
    int64_t t_recv_ns;
} zb_clock_sample;

/* Pure arithmetic (no MPI): the offset and uncertainty of the usable sample
 * with the smallest RTT (the first of equals). A sample is unusable when
 * t_recv < t_send. ZB_ERR_INVALID when n <= 0 or no sample is usable. */
zb_status zb_clock_offset_estimate(const zb_clock_sample *samples, int n, int64_t *offset_ns,
                                   int64_t *uncertainty_ns);

typedef struct zb_clock_sync {
    int n_ranks;
    int n_nodes;
    int round_trips;         /* per measured node; 0 when the job is one node */
    int *node;               /* [n_ranks] each rank's node */
    int64_t *offset_ns;      /* [n_ranks] rank 0's clock - the rank's clock */
    int64_t *uncertainty_ns; /* [n_ranks] */
} zb_clock_sync;

/* Collective over MPI_COMM_WORLD, after zb_topology_discover and before
 * any measured work. Every rank gets every rank's result. A one-node job
 * sends nothing. Each MPI wait gives up after timeout_s (ZB_ERR_TIMEOUT,
 * "... did not complete within T s (--timeout)"); a rank waits for its first
 * reply while rank 0 serves the nodes before it, within the same bound. */
zb_status zb_clock_sync_run(const zb_topology *t, double timeout_s, zb_clock_sync *out);
void zb_clock_sync_free(zb_clock_sync *s);

/* The offset to add to `rank`'s timestamps; 0 when s is NULL or rank is
 * out of range. */
int64_t zb_clock_sync_offset(const zb_clock_sync *s, int rank);

/* {"method", "reference_rank": 0, "round_trips", "ranks": [{"rank", "node",
 * "offset_ns", "uncertainty_ns"}, ...]}: a new reference, NULL when out of
 * memory. */
json_t *zb_clock_sync_json(const zb_clock_sync *s);

#ifdef __cplusplus
}
#endif
#endif
