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

double zb_sim_coll_s(const zb_hw_profile *hw, zb_coll kind, uint64_t sent_bytes, int nodes, int gpus_per_node) {
    int n = nodes * gpus_per_node;
    if (n <= 1) return 0.0;
    /* The slowest link crossed sets both: the NIC across nodes, NVLink
     * inside one (a ring over several nodes crosses both). */
    double latency = 0, bw = 0;
    if (gpus_per_node > 1) {
        latency = hw->sim.latency_intra_s;
        bw = hw->nvlink_bytes_per_s;
    }
    if (nodes > 1) {
        if (hw->sim.latency_inter_s > latency) latency = hw->sim.latency_inter_s;
        if (bw == 0 || hw->nic_bytes_per_s < bw) bw = hw->nic_bytes_per_s;
    }
    return (double)zb_sim_coll_steps(kind, n) * latency + (double)sent_bytes / bw;
}

unsigned zb_sim_coll_needs(int nodes, int gpus_per_node) {
    unsigned needs = 0;
    if (nodes > 1) needs |= ZB_SIM_LATENCY_INTER | ZB_SIM_NEEDS_NIC;
    if (gpus_per_node > 1) needs |= ZB_SIM_LATENCY_INTRA | ZB_SIM_NEEDS_NVLINK;
    return needs;
}
