/* The sim comm's cost of a collective (docs/design.md §6): the alpha-beta
 * model of a ring over the modelled cluster. */
#ifndef ZB_SIM_COLL_H
#define ZB_SIM_COLL_H

#include <stdint.h>

#include "comm.h"
#include "profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The algorithm's steps on n ranks: all-gather and reduce-scatter n-1
 * (ring), all-reduce 2(n-1) (ring: reduce-scatter then all-gather), barrier
 * ceil(log2 n) (dissemination); 0 on one rank. */
int zb_sim_coll_steps(zb_coll kind, int n_ranks);

/* steps x latency + sent_bytes / bandwidth for one collective on nodes x
 * gpus_per_node ranks, each rank sending sent_bytes (zb_coll_sent_bytes);
 * latency and bandwidth of the slowest link the ring crosses: NVLink
 * (link_latency_s.intra_node, nvlink_bytes_per_s) when a node has several
 * GPUs, the node's NICs (link_latency_s.inter_node, zb_hw_inter_node_bw)
 * when there are several nodes, each rate times its sim.link_efficiency;
 * the larger latency and the smaller bandwidth of the two. A collective with its own fit for a link class
 * (sim.collectives) uses that fit's latency and bandwidth for it instead:
 * a fit is the bus bandwidth measured, NICs included. */
double zb_sim_coll_s(const zb_hw_profile *hw, zb_coll kind, uint64_t sent_bytes, int nodes, int gpus_per_node);

/* The ZB_SIM_* parameters that model needs for this cluster. */
unsigned zb_sim_coll_needs(int nodes, int gpus_per_node);

#ifdef __cplusplus
}
#endif
#endif
