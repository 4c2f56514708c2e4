/* The sim comm's collective cost (sim_coll.h). */
#include "sim_coll.h"

int zb_sim_coll_steps(zb_coll kind, int n_ranks) {
    if (n_ranks <= 1) return 0;
    if (kind == ZB_COLL_ALLGATHER || kind == ZB_COLL_REDUCESCATTER) return n_ranks - 1;
    if (kind == ZB_COLL_ALLREDUCE) return 2 * (n_ranks - 1);
    int steps = 0;
    for (int reach = 1; reach < n_ranks; reach *= 2) steps++;
    return steps;
}

/* The latency and bandwidth of one link class (0 inside a node, 1 across):
 * the collective's own fit when the profile has one, else the link's. */
static void link_of(const zb_hw_profile *hw, zb_coll kind, int pl, int gpus_per_node, double *latency,
                    double *bw) {
    int k = kind == ZB_COLL_ALLGATHER ? 0 : kind == ZB_COLL_REDUCESCATTER ? 1 : kind == ZB_COLL_ALLREDUCE ? 2 : -1;
    if (k >= 0 && hw->sim.coll_bw[k][pl] > 0) {
        *latency = hw->sim.coll_latency_s[k][pl];
        *bw = hw->sim.coll_bw[k][pl];
        return;
    }
    *latency = pl == 0 ? hw->sim.latency_intra_s : hw->sim.latency_inter_s;
    double eff = hw->sim.link_eff[pl] > 0 ? hw->sim.link_eff[pl] : 1.0; /* 0: a profile built by hand */
    *bw = eff * (pl == 0 ? hw->nvlink_bytes_per_s : zb_hw_inter_node_bw(hw, gpus_per_node));
}

double zb_sim_coll_s(const zb_hw_profile *hw, zb_coll kind, uint64_t sent_bytes, int nodes, int gpus_per_node) {
    int n = nodes * gpus_per_node;
    if (n <= 1) return 0.0;
    /* The slowest link crossed sets both: the NIC across nodes, NVLink
     * inside one (a ring over several nodes crosses both). */
    double latency = 0, bw = 0;
    if (gpus_per_node > 1) link_of(hw, kind, 0, gpus_per_node, &latency, &bw);
    if (nodes > 1) {
        double lat_x = 0, bw_x = 0;
        link_of(hw, kind, 1, gpus_per_node, &lat_x, &bw_x);
        if (lat_x > latency) latency = lat_x;
        if (bw == 0 || bw_x < bw) bw = bw_x;
    }
    return (double)zb_sim_coll_steps(kind, n) * latency + (double)sent_bytes / bw;
}

unsigned zb_sim_coll_needs(int nodes, int gpus_per_node) {
    unsigned needs = 0;
    if (nodes > 1) needs |= ZB_SIM_LATENCY_INTER | ZB_SIM_NEEDS_NIC;
    if (gpus_per_node > 1) needs |= ZB_SIM_LATENCY_INTRA | ZB_SIM_NEEDS_NVLINK;
    return needs;
}
