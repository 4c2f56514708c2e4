/* The memory ledger predicts a device's per-stream GEMM workspace (cuda's
 * cuBLASLt workspace, which a cuda step allocated under the workspace tag
 * unpredicted, so its ledger read DIFFERS): a sim device whose GEMM takes
 * a workspace per stream at its first GEMM, as the cuda device does
 * (device_cuda_ops.c), and says so in gemm_stream_workspace_bytes; the
 * measured per-tag peaks of a step equal zb_engine_expected_peaks, stages
 * 0-3, both schedules; the prediction grows by exactly the workspace. */
#include <string.h>

#include "device_sim.h"
#include "engine.h"
#include "registry.h"
#include "zb_test.h"

#define WS_BYTES ((size_t)3 << 20)
#define MAX_STREAMS 8

static zb_device_ops ws_ops;        /* the sim's ops with the workspace-taking GEMM */
static const zb_device_ops *sim_ops; /* the sim's own */
static const zb_stream *ws_streams[MAX_STREAMS];
static void *ws_bufs[MAX_STREAMS];
static int n_ws;

static zb_status ws_gemm(zb_stream *s, const zb_gemm_desc *g, const zb_op_info *info) {
    int i = 0;
    while (i < n_ws && ws_streams[i] != s) i++;
    if (i == n_ws && n_ws < MAX_STREAMS) { /* first GEMM on this stream */
        ZB_TRY(zb_dev_alloc(s->dev, WS_BYTES, ZB_MEM_WORKSPACE, &ws_bufs[n_ws]));
        ws_streams[n_ws++] = s;
    }
    return sim_ops->gemm(s, g, info);
}

static zb_hw_profile profile(void) {
    const char *text =
        "{\"name\": \"test\", \"kind\": \"gpu\", \"bf16_flops\": 1e12, \"fp32_flops\": 1e12, \"mem_bytes\": 1e12,"
        " \"hbm_bytes_per_s\": 1e11, \"nvlink_bytes_per_s\": 1e11, \"nic_bytes_per_s\": 1e10, \"gpus_per_node\": 8,"
        " \"sources\": {\"bf16_flops\": \"t\", \"fp32_flops\": \"t\", \"mem_bytes\": \"t\", \"hbm_bytes_per_s\":"
        " \"t\", \"nvlink_bytes_per_s\": \"t\", \"nic_bytes_per_s\": \"t\", \"gpus_per_node\": \"t\"},"
        " \"sim\": {\"gemm_efficiency\": [[0, 1.0]], \"mem_efficiency\": 1.0, \"attention_fwd_efficiency\": 1.0, \"attention_bwd_efficiency\": 1.0,"
        " \"link_latency_s\": {\"intra_node\": 0, \"inter_node\": 0}, \"interference\": 0, \"op_overhead_s\": 0,"
        " \"sources\": {\"gemm_efficiency\": \"t\", \"mem_efficiency\": \"t\", \"attention_fwd_efficiency\": \"t\", \"attention_bwd_efficiency\": \"t\","
        " \"link_latency_s\": \"t\", \"interference\": \"t\", \"op_overhead_s\": \"t\"}}}";
    zb_hw_profile hw;
    memset(&hw, 0, sizeof hw);
    ZB_CHECK_OK(zb_hw_profile_parse(text, strlen(text), "test-profile.json", &hw));
    return hw;
}

static void check(int stage, zb_step_mode mode) {
    zb_hw_profile hw = profile();
    zb_trace t;
    ZB_CHECK_OK(zb_trace_init(&t, 0, true));
    zb_device_config dc = {0, 0, 1, 30.0, &t, &hw};
    zb_device *dev = NULL;
    ZB_CHECK_OK(zb_device_sim_create(&dc, &dev));
    if (!dev) return;
    zb_stream *cs = NULL, *ms = NULL;
    zb_comm *comm = NULL;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "compute", &cs));
    ZB_CHECK_OK(dev->ops->stream_create(dev, "comm", &ms));
    zb_stream *streams[2] = {ms, cs};
    zb_comm_config cc = {30.0, 1, 4};
    ZB_CHECK_OK(zb_comm_backend_find("sim")->create(dev, streams, 2, &cc, &comm));
    if (!comm) return;
    /* After the comm, which checks that its device is the sim's. */
    sim_ops = dev->ops;
    ws_ops = *dev->ops;
    ws_ops.gemm = ws_gemm;
    ws_ops.gemm_stream_workspace_bytes = WS_BYTES;
    dev->ops = &ws_ops;
    n_ws = 0;
    zb_model_profile mp;
    ZB_CHECK_OK(zb_model_profile_load("tiny", &mp));
    zb_engine_cfg ec;
    memset(&ec, 0, sizeof ec);
    zb_model_cfg_from_profile(&mp, 1, &ec.model);
    ec.stage = stage;
    ec.mode = mode;
    ec.prefetch_depth = 1;
    zb_adamw_cfg_default(&ec.opt);
    ec.param_dtype = ec.grad_dtype = ec.act_dtype = ZB_DTYPE_BF16;
    size_t without[ZB_MEM_TAG_COUNT];
    ZB_CHECK_OK(zb_engine_predict_peaks(&ec, 4, without)); /* no device: no workspace given */

    dev->ops->mem_reset_peak(dev);
    zb_engine *e = NULL;
    ZB_CHECK_OK(zb_engine_create(&ec, dev, comm, cs, ms, &e));
    zb_step_result r;
    if (e) ZB_CHECK_OK(zb_engine_step(e, 0, &r));
    if (e) {
        zb_mem_stats m;
        dev->ops->mem_stats(dev, &m);
        size_t want[ZB_MEM_TAG_COUNT];
        zb_engine_expected_peaks(e, want);
        ZB_CHECK_MSG(n_ws == 1, "GEMMs ran on %d streams; the ledger assumes one", n_ws);
        for (int k = 0; k < ZB_MEM_TAG_COUNT; k++) {
            ZB_CHECK_MSG(m.peak_bytes[k] == want[k], "stage %d %s: tag %s measured %zu, ledger %zu", stage,
                         mode == ZB_MODE_SYNC ? "sync" : "prefetch", zb_mem_tag_name((zb_mem_tag)k),
                         m.peak_bytes[k], want[k]);
        }
        ZB_CHECK(want[ZB_MEM_WORKSPACE] == without[ZB_MEM_WORKSPACE] + WS_BYTES);
    }
    zb_engine_destroy(e);
    for (int i = 0; i < n_ws; i++) zb_dev_free(dev, ws_bufs[i]);
    dev->ops = sim_ops;
    zb_comm_destroy(comm);
    dev->ops->stream_destroy(cs);
    dev->ops->stream_destroy(ms);
    zb_dev_destroy(dev);
    zb_trace_destroy(&t);
}

int main(void) {
    for (int stage = 0; stage <= 3; stage++) {
        check(stage, ZB_MODE_SYNC);
        check(stage, ZB_MODE_PREFETCH);
    }
    return zb_test_finish("test_ledger_gemm_ws");
}
