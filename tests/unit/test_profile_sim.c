/* The "sim" object of a hardware profile (harness/core/profile_sim.c). */
#include <string.h>

#include "profile.h"
#include "zb_test.h"

/* The "sim" object is checked when the profile loads: types, ranges, order,
 * and a source for each parameter given; absent, the profile still loads. */
static void test_profile_sim(void) {
    const char *base = "{\"name\": \"p\", \"kind\": \"gpu\", \"bf16_flops\": 1, \"fp32_flops\": 1, \"mem_bytes\": 1,"
                       " \"hbm_bytes_per_s\": 1, \"nvlink_bytes_per_s\": 0, \"nic_bytes_per_s\": 0, \"gpus_per_node\": 1,"
                       " \"sources\": {\"bf16_flops\": \"t\", \"fp32_flops\": \"t\", \"mem_bytes\": \"t\","
                       " \"hbm_bytes_per_s\": \"t\", \"nvlink_bytes_per_s\": \"t\", \"nic_bytes_per_s\": \"t\","
                       " \"gpus_per_node\": \"t\"}";
    static const struct {
        const char *sim, *needle; /* needle NULL: loads */
    } cases[] = {
        {"", NULL},
        {", \"sim\": {\"interference\": 0.2, \"sources\": {\"interference\": \"x\"}}", NULL},
        {", \"sim\": {\"interference\": 0.2}", "sim.sources"},
        {", \"sim\": {\"interference\": 0.2, \"sources\": {}}", "sim.sources.interference"},
        {", \"sim\": {\"gemm_efficiency\": [[0, 0.5], [0, 0.6]], \"sources\": {\"gemm_efficiency\": \"x\"}}",
         "sim.gemm_efficiency[1]"},
        {", \"sim\": {\"gemm_efficiency\": [[0, 1.5]], \"sources\": {\"gemm_efficiency\": \"x\"}}",
         "sim.gemm_efficiency[0]"},
        {", \"sim\": {\"mem_efficiency\": 0, \"sources\": {\"mem_efficiency\": \"x\"}}", "sim.mem_efficiency"},
        {", \"sim\": {\"link_latency_s\": {\"intra_node\": -1}, \"sources\": {\"link_latency_s\": \"x\"}}",
         "sim.link_latency_s.intra_node"},
        {", \"sim\": [1]", "\"sim\""},
        {", \"sim\": {\"link_efficiency\": {\"intra_node\": 0.8, \"inter_node\": 1}, \"sources\": "
         "{\"link_efficiency\": \"x\"}}", NULL},
        {", \"sim\": {\"link_efficiency\": {\"intra_node\": 0}, \"sources\": {\"link_efficiency\": \"x\"}}",
         "sim.link_efficiency.intra_node"},
        {", \"sim\": {\"link_efficiency\": {\"inter_node\": 1.2}, \"sources\": {\"link_efficiency\": \"x\"}}",
         "sim.link_efficiency.inter_node"},
        {", \"sim\": {\"link_efficiency\": 0.8, \"sources\": {\"link_efficiency\": \"x\"}}",
         "sim.link_efficiency"},
        {", \"sim\": {\"link_efficiency\": {\"inter_node\": 0.9}}", "sim.sources"},
        {", \"sim\": {\"kernel_efficiency\": {\"rope_fwd\": 0.1, \"cast\": 10}, \"sources\": {\"kernel_efficiency\": "
         "\"x\"}}", NULL},
        {", \"sim\": {\"kernel_efficiency\": {\"rope_fwd\": 0.1}}", "sim.sources"},
        {", \"sim\": {\"kernel_efficiency\": {\"rope_fwd\": 0.1}, \"sources\": {\"mem_efficiency\": \"x\"}}",
         "sim.sources.kernel_efficiency"},
        {", \"sim\": {\"kernel_efficiency\": {\"gemm\": 0.5}, \"sources\": {\"kernel_efficiency\": \"x\"}}",
         "sim.kernel_efficiency.gemm"},
        {", \"sim\": {\"kernel_efficiency\": {\"fill\": 0}, \"sources\": {\"kernel_efficiency\": \"x\"}}",
         "sim.kernel_efficiency.fill"},
        {", \"sim\": {\"kernel_efficiency\": {\"fill\": 11}, \"sources\": {\"kernel_efficiency\": \"x\"}}",
         "sim.kernel_efficiency.fill"},
        {", \"sim\": {\"kernel_efficiency\": [0.5], \"sources\": {\"kernel_efficiency\": \"x\"}}",
         "sim.kernel_efficiency"},
        {", \"sim\": {\"elementwise\": \"eager\", \"sources\": {\"elementwise\": \"x\"}}", NULL},
        {", \"sim\": {\"comm_hold_s\": 0.001, \"sources\": {\"comm_hold_s\": \"x\"}}", NULL},
        {", \"sim\": {\"comm_hold_s\": -1e-6, \"sources\": {\"comm_hold_s\": \"x\"}}", "sim.comm_hold_s"},
        {", \"sim\": {\"comm_hold_s\": 2, \"sources\": {\"comm_hold_s\": \"x\"}}", "sim.comm_hold_s"},
        {", \"sim\": {\"comm_hold_s\": 0.001}", "sim.sources"},
        {", \"sim\": {\"elementwise\": \"fused\", \"sources\": {\"elementwise\": \"x\"}}", NULL},
        {", \"sim\": {\"elementwise\": \"eager\", \"sources\": {\"mem_efficiency\": \"x\"}}",
         "sim.sources.elementwise"},
        {", \"sim\": {\"elementwise\": \"lazy\\n\", \"sources\": {\"elementwise\": \"x\"}}",
         "got 'lazy\\n'"},
        {", \"sim\": {\"elementwise\": 1, \"sources\": {\"elementwise\": \"x\"}}", "sim.elementwise"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[2048];
        snprintf(text, sizeof text, "%s%s}", base, cases[i].sim);
        zb_hw_profile hw;
        zb_status st = zb_hw_profile_parse(text, strlen(text), "p.json", &hw);
        if (!cases[i].needle) {
            ZB_CHECK_MSG(st == ZB_OK, "case %zu: %s", i, zb_error_message());
        } else {
            ZB_CHECK_MSG(st == ZB_ERR_INVALID && strstr(zb_error_message(), cases[i].needle) &&
                             strstr(zb_error_message(), "p.json"),
                         "case %zu: %s: '%s', want '%s'", i, zb_status_name(st), zb_error_message(), cases[i].needle);
        }
        zb_error_clear();
    }
}

int main(void) {
    test_profile_sim();
    return zb_test_finish("test_profile_sim");
}
