/* The sim comm's collective cost (harness/comm/sim/sim_coll.c): the ring's
 * alpha-beta time over the slowest link it crosses, a node's NICs added up
 * under its ranks (NCCL's rails) and fed by NVLink, each link at its
 * link_efficiency share, and a collective's own fit in place of the link's.
 * A hand-made profile: NVLink 1e11 B/s, one NIC of 1.25e10 B/s. */
#include <math.h>
#include <string.h>

#include "profile.h"
#include "sim_coll.h"
#include "zb_test.h"

static zb_hw_profile profile(void) {
    const char *text =
        "{\"name\": \"test\", \"kind\": \"gpu\", \"bf16_flops\": 1e12, \"fp32_flops\": 1e12, \"mem_bytes\": 1e12,"
        " \"hbm_bytes_per_s\": 1e11, \"nvlink_bytes_per_s\": 1e11, \"nic_bytes_per_s\": 1.25e10, \"gpus_per_node\": 8,"
        " \"sources\": {\"bf16_flops\": \"t\", \"fp32_flops\": \"t\", \"mem_bytes\": \"t\", \"hbm_bytes_per_s\":"
        " \"t\", \"nvlink_bytes_per_s\": \"t\", \"nic_bytes_per_s\": \"t\", \"gpus_per_node\": \"t\"},"
        " \"sim\": {\"link_latency_s\": {\"intra_node\": 0, \"inter_node\": 0}, \"sources\": {\"link_latency_s\": \"t\"}}}";
    zb_hw_profile hw;
    ZB_CHECK_OK(zb_hw_profile_parse(text, strlen(text), "test-profile.json", &hw));
    return hw;
}

static void test_costs(void) {
    zb_hw_profile hw = profile();
    /* ring all-gather on 2 x 8: 15 steps x 7 us + bytes over the NIC (1.25e10) */
    hw.sim.latency_intra_s = 1e-6;
    hw.sim.latency_inter_s = 7e-6;
    double t = zb_sim_coll_s(&hw, ZB_COLL_ALLGATHER, 1250000000ull, 2, 8);
    ZB_CHECK_MSG(fabs(t - (15 * 7e-6 + 0.1)) < 1e-12, "all-gather %.9f s", t);
    /* a node's NICs, one ring through each (rails): k NICs under k ranks
     * give each rank k NICs' bandwidth, NVLink permitting; one rank per node
     * reaches one NIC */
    ZB_CHECK(hw.nics_per_node == 1 && zb_hw_inter_node_bw(&hw, 8) == hw.nic_bytes_per_s);
    hw.nics_per_node = 8;
    ZB_CHECK(zb_hw_inter_node_bw(&hw, 8) == 8 * hw.nic_bytes_per_s);
    ZB_CHECK(zb_hw_inter_node_bw(&hw, 4) == 4 * hw.nic_bytes_per_s);
    ZB_CHECK(zb_hw_inter_node_bw(&hw, 1) == hw.nic_bytes_per_s);
    double nvlink = hw.nvlink_bytes_per_s;
    hw.nvlink_bytes_per_s = 1e12; /* above 8 NICs: the NICs bound it */
    t = zb_sim_coll_s(&hw, ZB_COLL_ALLGATHER, 1250000000ull, 2, 8);
    ZB_CHECK_MSG(fabs(t - (15 * 7e-6 + 1.25e9 / (8 * hw.nic_bytes_per_s))) < 1e-12, "all-gather, 8 NICs %.9f s", t);
    t = zb_sim_coll_s(&hw, ZB_COLL_ALLGATHER, 1250000000ull, 4, 1);
    ZB_CHECK_MSG(fabs(t - (3 * 7e-6 + 0.1)) < 1e-12, "all-gather, 1 rank per node %.9f s", t);
    hw.nvlink_bytes_per_s = 5e10; /* below them: NVLink, which feeds the NICs, bounds it */
    t = zb_sim_coll_s(&hw, ZB_COLL_ALLGATHER, 1250000000ull, 2, 8);
    ZB_CHECK_MSG(fabs(t - (15 * 7e-6 + 1.25e9 / 5e10)) < 1e-12, "all-gather, NVLink-bound %.9f s", t);
    hw.nvlink_bytes_per_s = nvlink;
    hw.nics_per_node = 1;
    /* link_efficiency: the share of each link's line rate the data moves at;
     * 1 when not given; a collective's own fit is measured and keeps its rate */
    ZB_CHECK(hw.sim.link_eff[0] == 1.0 && hw.sim.link_eff[1] == 1.0);
    hw.sim.link_eff[0] = 0.5;
    hw.sim.link_eff[1] = 0.25;
    t = zb_sim_coll_s(&hw, ZB_COLL_ALLGATHER, 1250000000ull, 2, 1);
    ZB_CHECK_MSG(fabs(t - (7e-6 + 0.4)) < 1e-12, "all-gather at a quarter of the NIC %.9f s", t);
    t = zb_sim_coll_s(&hw, ZB_COLL_REDUCESCATTER, 1000000, 1, 8);
    ZB_CHECK_MSG(fabs(t - (7e-6 + 2e-5)) < 1e-12, "reduce-scatter at half of NVLink %.9f s", t);
    hw.sim.link_eff[0] = hw.sim.link_eff[1] = 1.0;
    ZB_CHECK(zb_sim_coll_steps(ZB_COLL_ALLREDUCE, 8) == 14 && zb_sim_coll_steps(ZB_COLL_BARRIER, 5) == 3);
    ZB_CHECK(fabs(zb_sim_coll_s(&hw, ZB_COLL_REDUCESCATTER, 1000000, 1, 8) - (7e-6 + 1e-5)) < 1e-12);
    ZB_CHECK(zb_sim_coll_s(&hw, ZB_COLL_ALLGATHER, 0, 1, 1) == 0.0);
    /* a collective's own fit (sim.collectives) replaces the link's for it alone */
    hw.sim.coll_latency_s[1][0] = 2e-6; /* reduce-scatter inside a node */
    hw.sim.coll_bw[1][0] = 5e10;
    ZB_CHECK(fabs(zb_sim_coll_s(&hw, ZB_COLL_REDUCESCATTER, 1000000, 1, 8) - (7 * 2e-6 + 2e-5)) < 1e-12);
    ZB_CHECK(fabs(zb_sim_coll_s(&hw, ZB_COLL_ALLGATHER, 1000000, 1, 8) - (7e-6 + 1e-5)) < 1e-12);
    hw.sim.coll_bw[1][0] = 0;
}

int main(void) {
    test_costs();
    return zb_test_finish("test_sim_coll");
}
