/* The engine on the sim device and comm (harness/device/sim, harness/comm/
 * sim): small hardware profiles written here make each case exact.
 *   - determinism: two runs leave identical trace records;
 *   - sync: overlap 0, and step time = compute + exposed comm + copies;
 *   - prefetch with every unit's compute longer than its collectives: only
 *     the first unit's gather and the last reduce-scatter stay exposed
 *     (derived below from the unit sizes and the link bandwidth);
 *   - comm twice as slow as compute: the step follows comm (doubling the
 *     comm time adds what it added to comm);
 *   - memory per tag equals the ledger's prediction exactly, stages 0-3,
 *     both schedules, 4 and 32 virtual ranks;
 *   - the cost formulas, and a profile without a sim parameter refused by
 *     name (the collectives' costs: test_sim_coll.c; the "sim" object's
 *     parsing: test_profile_sim.c);
 *   - sim.elementwise "eager": PyTorch eager's bytes and kernels a block;
 *   - comm_hold_s: compute held at a collective's start. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "device_sim.h"
#include "engine.h"
#include "kernel_bytes.h"
#include "kernels.h"
#include "overlap.h"
#include "registry.h"
#include "sim_coll.h"
#include "sim_cost.h"
#include "zb_test.h"

/* flops F, HBM H, NVLink L bytes/s; every efficiency 1, no latency, no
 * overhead, no interference unless asked. */
static zb_hw_profile profile(double flops, double hbm, double nvlink, double interference) {
    char text[2048];
    snprintf(text, sizeof text,
             "{\"name\": \"test\", \"kind\": \"gpu\", \"bf16_flops\": %g, \"fp32_flops\": %g, \"mem_bytes\": 1e12,"
             " \"hbm_bytes_per_s\": %g, \"nvlink_bytes_per_s\": %g, \"nic_bytes_per_s\": %g, \"gpus_per_node\": 8,"
             " \"sources\": {\"bf16_flops\": \"t\", \"fp32_flops\": \"t\", \"mem_bytes\": \"t\", \"hbm_bytes_per_s\":"
             " \"t\", \"nvlink_bytes_per_s\": \"t\", \"nic_bytes_per_s\": \"t\", \"gpus_per_node\": \"t\"},"
             " \"sim\": {\"gemm_efficiency\": [[0, 1.0]], \"mem_efficiency\": 1.0, \"attention_fwd_efficiency\": 1.0, \"attention_bwd_efficiency\": 1.0,"
             " \"link_latency_s\": {\"intra_node\": 0, \"inter_node\": 0}, \"interference\": %g, \"op_overhead_s\": 0,"
             " \"sources\": {\"gemm_efficiency\": \"t\", \"mem_efficiency\": \"t\", \"attention_fwd_efficiency\": \"t\", \"attention_bwd_efficiency\": \"t\","
             " \"link_latency_s\": \"t\", \"interference\": \"t\", \"op_overhead_s\": \"t\"}}}",
             flops, flops, hbm, nvlink, nvlink / 8, interference);
    zb_hw_profile hw;
    memset(&hw, 0, sizeof hw);
    ZB_CHECK_OK(zb_hw_profile_parse(text, strlen(text), "test-profile.json", &hw));
    return hw;
}

typedef struct run_out {
    zb_overlap ov;
    int64_t step_ns, copy_ns;
    uint64_t sent_bytes;
    size_t peak[ZB_MEM_TAG_COUNT], expected[ZB_MEM_TAG_COUNT];
    zb_trace_record *recs; /* the measured step's, copied */
    size_t n_recs;
} run_out;

static zb_engine_cfg engine_cfg(int stage, zb_step_mode mode) {
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
    return ec;
}

/* One warm-up step and one measured step on nodes x per_node virtual ranks. */
static void run(const zb_hw_profile *hw, int stage, zb_step_mode mode, int nodes, int per_node, run_out *out) {
    memset(out, 0, sizeof *out);
    zb_trace t;
    ZB_CHECK_OK(zb_trace_init(&t, 0, true));
    zb_device_config dc = {0, 0, 1, 30.0, &t, hw};
    zb_device *dev = NULL;
    zb_stream *cs = NULL, *ms = NULL;
    zb_comm *comm = NULL;
    ZB_CHECK_OK(zb_device_sim_create(&dc, &dev));
    if (!dev) return;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "compute", &cs));
    ZB_CHECK_OK(dev->ops->stream_create(dev, "comm", &ms));
    zb_stream *streams[2] = {ms, cs};
    zb_comm_config cc = {30.0, nodes, per_node};
    ZB_CHECK_OK(zb_comm_backend_find("sim")->create(dev, streams, 2, &cc, &comm));
    zb_engine_cfg ec = engine_cfg(stage, mode);
    zb_engine *e = NULL;
    dev->ops->mem_reset_peak(dev);
    ZB_CHECK_OK(zb_engine_create(&ec, dev, comm, cs, ms, &e));
    zb_step_result r;
    if (e) ZB_CHECK_OK(zb_engine_step(e, 0, &r));
    size_t first = t.n_records;
    if (e) ZB_CHECK_OK(zb_engine_step(e, 1, &r));
    if (e) {
        ZB_CHECK_OK(zb_overlap_compute(t.records + first, t.n_records - first, r.start_ns, r.end_ns + 1, &out->ov));
        out->step_ns = r.end_ns - r.start_ns;
        out->sent_bytes = r.sent_bytes;
        for (size_t i = first; i < t.n_records; i++) {
            if (t.records[i].kind == ZB_OP_COPY) out->copy_ns += t.records[i].end_ns - t.records[i].start_ns;
        }
        out->n_recs = t.n_records - first;
        out->recs = (zb_trace_record *)malloc(out->n_recs * sizeof *out->recs + 1);
        memcpy(out->recs, t.records + first, out->n_recs * sizeof *out->recs);
        zb_mem_stats ms_;
        dev->ops->mem_stats(dev, &ms_);
        memcpy(out->peak, ms_.peak_bytes, sizeof out->peak);
        zb_engine_expected_peaks(e, out->expected);
    }
    zb_engine_destroy(e);
    zb_comm_destroy(comm);
    dev->ops->stream_destroy(cs);
    dev->ops->stream_destroy(ms);
    zb_dev_destroy(dev);
    zb_trace_destroy(&t);
}

static void test_deterministic(void) {
    zb_hw_profile hw = profile(1e11, 1e10, 1e12, 0.15);
    run_out a, b;
    run(&hw, 3, ZB_MODE_PREFETCH, 2, 4, &a);
    run(&hw, 3, ZB_MODE_PREFETCH, 2, 4, &b);
    bool same = a.n_recs == b.n_recs && a.n_recs > 0 && a.step_ns == b.step_ns;
    for (size_t i = 0; same && i < a.n_recs; i++) {
        same = a.recs[i].start_ns == b.recs[i].start_ns && a.recs[i].end_ns == b.recs[i].end_ns &&
               a.recs[i].kind == b.recs[i].kind && !strcmp(a.recs[i].label, b.recs[i].label);
    }
    ZB_CHECK_MSG(same, "two sim runs differ (%zu vs %zu records, step %lld vs %lld ns)", a.n_recs, b.n_recs,
                 (long long)a.step_ns, (long long)b.step_ns);
    free(a.recs), free(b.recs);
}

/* sync: nothing overlaps and nothing waits idle, so the step is the sum of
 * compute, comm (all exposed) and the copies (tokens in, loss out). */
static void test_sync(void) {
    zb_hw_profile hw = profile(1e11, 1e10, 1e12, 0.15);
    run_out s;
    run(&hw, 3, ZB_MODE_SYNC, 1, 4, &s);
    ZB_CHECK_MSG(s.ov.comm_measured && s.ov.overlap_ns == 0, "sync overlap %lld ns of %lld", (long long)s.ov.overlap_ns,
                 (long long)s.ov.comm_ns);
    ZB_CHECK(s.ov.exposed_comm_ns == s.ov.comm_ns);
    int64_t sum = s.ov.compute_ns + s.ov.exposed_comm_ns + s.copy_ns;
    ZB_CHECK_MSG(s.step_ns == sum, "sync step %lld ns, compute %lld + exposed comm %lld + copies %lld = %lld",
                 (long long)s.step_ns, (long long)s.ov.compute_ns, (long long)s.ov.exposed_comm_ns,
                 (long long)s.copy_ns, (long long)sum);
    printf("sync: step %lld ns = compute %lld + exposed %lld + copies %lld; overlap 0\n", (long long)s.step_ns,
           (long long)s.ov.compute_ns, (long long)s.ov.exposed_comm_ns, (long long)s.copy_ns);
    free(s.recs);
}

/* The ns of one all-gather or reduce-scatter of unit u on n ranks at bw
 * (latency 0): its shard times (n-1) bf16 elements over the link. */
static int64_t coll_ns(const zb_model_cfg *m, int u, int n, double bw) {
    size_t numel = zb_model_unit_numel(m, u);
    size_t padded = (numel + (size_t)n - 1) / (size_t)n * (size_t)n;
    double bytes = (double)(padded / (size_t)n) * (double)(n - 1) * 2.0;
    return (int64_t)llround(bytes / bw * 1e9);
}

/* Prefetch, compute-bound (HBM 1e10 B/s against NVLink 1e11: the smallest
 * unit's compute, the embedding, moves N (2 C e + 4) = 16.6 KB, 1.66 us,
 * while the largest gather, a layer's, moves 69 KB, 0.69 us; the token
 * copies before the embedding, 2 x 51 ns, end inside the first gather,
 * 0.25 us). By hand: the gather of use 0 (unit 0) has nothing before it to
 * hide behind; every other gather runs beside the compute of the use before
 * it, every reduce-scatter beside the next unit's backward, except the last
 * (unit 0's), which only the optimizer could hide and the optimizer needs
 * it. So
 *   exposed = G(0) + RS(0) = 2 t_0,   comm = sum over units of 3 t_u
 * (gather forward, gather backward, reduce-scatter; p = g = 2 bytes), and
 * overlap = 100 (1 - 2 t_0 / (3 sum t_u)), margin 0.01 points (rounding). */
static void test_prefetch_hides(void) {
    const double bw = 1e11;
    zb_hw_profile hw = profile(1e11, 1e10, bw, 0.0);
    run_out p;
    run(&hw, 3, ZB_MODE_PREFETCH, 1, 4, &p);
    zb_engine_cfg ec = engine_cfg(3, ZB_MODE_PREFETCH);
    int units = zb_model_n_units(&ec.model);
    int64_t total = 0;
    for (int u = 0; u < units; u++) total += 3 * coll_ns(&ec.model, u, 4, bw);
    int64_t exposed = 2 * coll_ns(&ec.model, 0, 4, bw);
    double want = 100.0 * (1.0 - (double)exposed / (double)total);
    ZB_CHECK_MSG(llabs(p.ov.comm_ns - total) <= 3 * units, "prefetch comm %lld ns, by hand %lld",
                 (long long)p.ov.comm_ns, (long long)total);
    ZB_CHECK_MSG(fabs(p.ov.overlap_pct - want) <= 0.01, "prefetch overlap %.4f%%, by hand %.4f%%", p.ov.overlap_pct,
                 want);
    ZB_CHECK_MSG(llabs(p.ov.exposed_comm_ns - exposed) <= 2, "exposed %lld ns, by hand %lld",
                 (long long)p.ov.exposed_comm_ns, (long long)exposed);
    printf("prefetch: overlap %.4f%% (by hand %.4f%%), exposed %lld ns (by hand %lld)\n", p.ov.overlap_pct, want,
           (long long)p.ov.exposed_comm_ns, (long long)exposed);
    free(p.recs);
}

/* Comm twice as slow as compute: the link chosen so that the step's bytes
 * take twice its compute time. The comm stream then hardly waits for
 * compute, so the step is comm plus what cannot overlap it (the optimizer
 * after the last reduction, less than half the compute); doubling the comm
 * time again adds to the step what it adds to comm, within 2% (the comm
 * stream still waits for the first units' compute). A compute-bound step
 * would grow by its exposed comm only. */
static void test_comm_bound(void) {
    zb_hw_profile probe = profile(1e11, 1e10, 1e12, 0.0);
    run_out base;
    run(&probe, 3, ZB_MODE_PREFETCH, 1, 4, &base);
    double bw = (double)base.sent_bytes / (2.0 * (double)base.ov.compute_ns * 1e-9);
    zb_hw_profile slow = profile(1e11, 1e10, bw, 0.0), slower = profile(1e11, 1e10, bw / 2, 0.0);
    run_out a, b;
    run(&slow, 3, ZB_MODE_PREFETCH, 1, 4, &a);
    run(&slower, 3, ZB_MODE_PREFETCH, 1, 4, &b);
    double ratio = (double)a.ov.comm_ns / (double)a.ov.compute_ns;
    ZB_CHECK_MSG(fabs(ratio - 2.0) < 0.01, "comm / compute %.4f, meant 2", ratio);
    ZB_CHECK_MSG(a.step_ns >= a.ov.comm_ns && a.step_ns - a.ov.comm_ns < a.ov.compute_ns / 2,
                 "comm-bound step %lld ns against comm %lld, compute %lld", (long long)a.step_ns,
                 (long long)a.ov.comm_ns, (long long)a.ov.compute_ns);
    double d_step = (double)(b.step_ns - a.step_ns), d_comm = (double)(b.ov.comm_ns - a.ov.comm_ns);
    ZB_CHECK_MSG(fabs(d_step / d_comm - 1.0) < 0.02, "doubling comm added %.0f ns to comm, %.0f to the step", d_comm,
                 d_step);
    printf("comm-bound: comm %lld ns = %.3f x compute, step %lld ns; doubling comm: +%.0f comm, +%.0f step\n",
           (long long)a.ov.comm_ns, ratio, (long long)a.step_ns, d_comm, d_step);
    free(base.recs), free(a.recs), free(b.recs);
}

/* Interference f: compute beside a collective runs 1 + f times slower, so
 * compute grows by f / (1 + f) of the time it overlapped comm (every
 * collective the engine overlaps is issued before the compute beside it). */
static void test_interference(void) {
    const double f = 0.5;
    zb_hw_profile plain = profile(1e11, 1e10, 1e11, 0.0), slowed = profile(1e11, 1e10, 1e11, f);
    run_out a, b;
    run(&plain, 3, ZB_MODE_PREFETCH, 1, 4, &a);
    run(&slowed, 3, ZB_MODE_PREFETCH, 1, 4, &b);
    double grew = (double)(b.ov.compute_ns - a.ov.compute_ns), want = (double)b.ov.overlap_ns * f / (1.0 + f);
    ZB_CHECK_MSG(grew > 0 && fabs(grew - want) <= 0.01 * want + 50, "interference %.2f: compute grew %.0f ns, "
                 "overlap %lld ns says %.0f", f, grew, (long long)b.ov.overlap_ns, want);
    printf("interference %.2f: compute +%.0f ns, f/(1+f) x overlap %.0f ns\n", f, grew, want);
    free(a.recs), free(b.recs);
}

/* comm_interference f on the device itself, exact: a 100 us collective
 * then a copy and an event on the comm stream; compute over [0, 40) us
 * leaves 40 us of the collective's work done at half speed (f = 1): it ends
 * at 40 + (100 - 20) = 120, and the event and the copy move with it; a
 * second compute over [40, 80) moves it to 140. Compute issued after the
 * compute stream waited for that event starts after it and moves nothing;
 * without comm_interference nothing moves. The trace records follow. */
static void test_comm_stretch(void) {
    for (int with = 0; with < 2; with++) {
        zb_hw_profile hw = profile(1e11, 1e10, 1e11, 0.0);
        hw.sim.comm_interference = with ? 1.0 : 0.0;
        zb_trace t;
        ZB_CHECK_OK(zb_trace_init(&t, 0, true));
        zb_device_config dc = {0, 0, 1, 30.0, &t, &hw};
        zb_device *dev = NULL;
        zb_stream *cs = NULL, *ms = NULL;
        zb_event *before = NULL, *after = NULL;
        ZB_CHECK_OK(zb_device_sim_create(&dc, &dev));
        if (!dev) return;
        ZB_CHECK_OK(dev->ops->stream_create(dev, "compute", &cs));
        ZB_CHECK_OK(dev->ops->stream_create(dev, "comm", &ms));
        ZB_CHECK_OK(dev->ops->event_create(dev, &before));
        ZB_CHECK_OK(dev->ops->event_create(dev, &after));
        zb_op_info coll = {ZB_OP_COMM, "allgather", -1, 0, 0}, copy = {ZB_OP_COPY, "copy", -1, 0, 0},
                   comp = {ZB_OP_COMPUTE, "compute", -1, 0, 0};
        ZB_CHECK_OK(dev->ops->event_record(before, ms));
        ZB_CHECK_OK(zb_sim_issue(ms, &coll, 100e-6));
        ZB_CHECK_OK(dev->ops->event_record(after, ms));
        ZB_CHECK_OK(zb_sim_issue(ms, &copy, 10e-6));
        ZB_CHECK_OK(zb_sim_issue(cs, &comp, 40e-6));
        double ms1 = 0, ms2 = 0;
        ZB_CHECK_OK(dev->ops->event_elapsed_ms(before, after, &ms1));
        ZB_CHECK_OK(zb_sim_issue(cs, &comp, 40e-6));
        ZB_CHECK_OK(dev->ops->event_elapsed_ms(before, after, &ms2));
        double want1 = with ? 0.120 : 0.100, want2 = with ? 0.140 : 0.100;
        ZB_CHECK_MSG(fabs(ms1 - want1) < 1e-9 && fabs(ms2 - want2) < 1e-9,
                     "comm_interference %d: the event after the collective at %.6f then %.6f ms", with, ms1, ms2);
        ZB_CHECK_OK(dev->ops->stream_wait_event(cs, after));
        ZB_CHECK_OK(zb_sim_issue(cs, &comp, 40e-6));
        ZB_CHECK_OK(dev->ops->stream_sync(ms));
        ZB_CHECK_OK(dev->ops->stream_sync(cs));
        int64_t ends[5] = {0};
        for (size_t i = 0; i < t.n_records && i < 5; i++) ends[i] = t.records[i].end_ns;
        /* records: collective, copy, compute, compute, compute */
        int64_t w[5] = {with ? 140000 : 100000, with ? 150000 : 110000, 40000, 80000, with ? 180000 : 140000};
        ZB_CHECK_MSG(t.n_records == 5 && !memcmp(ends, w, sizeof w) && t.records[1].start_ns == w[0],
                     "comm_interference %d: record ends %lld %lld %lld %lld %lld, copy from %lld", with,
                     (long long)ends[0], (long long)ends[1], (long long)ends[2], (long long)ends[3],
                     (long long)ends[4], (long long)t.records[1].start_ns);
        ZB_CHECK(dev->ops->now_ns(dev) == w[4] && w[4] >= w[1]);
        dev->ops->event_destroy(before);
        dev->ops->event_destroy(after);
        dev->ops->stream_destroy(cs);
        dev->ops->stream_destroy(ms);
        zb_dev_destroy(dev);
        zb_trace_destroy(&t);
    }
}

/* comm_hold_s h on the device itself, exact: a 100 us collective begun at
 * 0 on the comm stream holds compute issued after it: with h = 30 us two
 * 40 us compute ops run over [30, 70) and [70, 110); with h = 300 us (more
 * than the collective) the first waits for the collective's end, [100,
 * 140); without a hold it starts at 0. A compute op issued before the
 * collective is not held. */
static void test_comm_hold(void) {
    const double holds[3] = {0, 30e-6, 300e-6};
    const int64_t want[3] = {0, 30000, 100000};
    for (int k = 0; k < 3; k++) {
        zb_hw_profile hw = profile(1e11, 1e10, 1e11, 0.0);
        hw.sim.comm_hold_s = holds[k];
        zb_trace t;
        ZB_CHECK_OK(zb_trace_init(&t, 0, true));
        zb_device_config dc = {0, 0, 1, 30.0, &t, &hw};
        zb_device *dev = NULL;
        zb_stream *cs = NULL, *ms = NULL, *other = NULL;
        ZB_CHECK_OK(zb_device_sim_create(&dc, &dev));
        if (!dev) return;
        ZB_CHECK_OK(dev->ops->stream_create(dev, "compute", &cs));
        ZB_CHECK_OK(dev->ops->stream_create(dev, "comm", &ms));
        ZB_CHECK_OK(dev->ops->stream_create(dev, "other", &other));
        zb_op_info coll = {ZB_OP_COMM, "allgather", -1, 0, 0}, comp = {ZB_OP_COMPUTE, "compute", -1, 0, 0};
        ZB_CHECK_OK(zb_sim_issue(other, &comp, 40e-6)); /* issued before the collective: runs from 0 */
        ZB_CHECK_OK(zb_sim_issue(ms, &coll, 100e-6));
        ZB_CHECK_OK(zb_sim_issue(cs, &comp, 40e-6));
        ZB_CHECK_OK(zb_sim_issue(cs, &comp, 40e-6));
        ZB_CHECK_OK(dev->ops->stream_sync(ms));
        ZB_CHECK_OK(dev->ops->stream_sync(cs));
        ZB_CHECK_OK(dev->ops->stream_sync(other));
        /* records: compute (other), collective, compute, compute */
        ZB_CHECK_MSG(t.n_records == 4 && t.records[0].start_ns == 0 && t.records[1].start_ns == 0 &&
                     t.records[2].start_ns == want[k] && t.records[3].start_ns == want[k] + 40000,
                     "comm_hold_s %g: compute from %lld then %lld (want %lld), the first from %lld", holds[k],
                     (long long)t.records[2].start_ns, (long long)t.records[3].start_ns, (long long)want[k],
                     (long long)t.records[0].start_ns);
        dev->ops->stream_destroy(cs);
        dev->ops->stream_destroy(ms);
        dev->ops->stream_destroy(other);
        zb_dev_destroy(dev);
        zb_trace_destroy(&t);
    }
}

/* In the step: comm grows by f / (1 + f) of the time it overlapped compute
 * (the engine issues a gather before the compute beside it: before this
 * mechanism, comm_interference changed nothing there). */
static void test_comm_interference(void) {
    const double f = 0.5;
    zb_hw_profile plain = profile(1e11, 1e10, 1e11, 0.0), slowed = profile(1e11, 1e10, 1e11, 0.0);
    slowed.sim.comm_interference = f;
    run_out a, b;
    run(&plain, 3, ZB_MODE_PREFETCH, 1, 4, &a);
    run(&slowed, 3, ZB_MODE_PREFETCH, 1, 4, &b);
    double grew = (double)(b.ov.comm_ns - a.ov.comm_ns), want = (double)b.ov.overlap_ns * f / (1.0 + f);
    ZB_CHECK_MSG(grew > 0 && a.ov.compute_ns == b.ov.compute_ns && fabs(grew - want) <= 0.02 * want + 50,
                 "comm_interference %.2f: comm grew %.0f ns, overlap %lld ns says %.0f; compute %lld -> %lld", f,
                 grew, (long long)b.ov.overlap_ns, want, (long long)a.ov.compute_ns, (long long)b.ov.compute_ns);
    printf("comm_interference %.2f: comm +%.0f ns, f/(1+f) x overlap %.0f ns\n", f, grew, want);
    free(a.recs), free(b.recs);
}

/* The sim's per-tag peaks are the engine's own accounting: the ledger's. */
static void test_memory_ledger(void) {
    zb_hw_profile hw = profile(1e11, 1e10, 1e12, 0.15);
    const int shapes[2][2] = {{1, 4}, {4, 8}};
    for (int sh = 0; sh < 2; sh++) {
        for (int stage = 0; stage <= 3; stage++) {
            for (int m = 0; m < 2; m++) {
                run_out r;
                run(&hw, stage, (zb_step_mode)m, shapes[sh][0], shapes[sh][1], &r);
                for (int k = 0; k < ZB_MEM_TAG_COUNT; k++) {
                    ZB_CHECK_MSG(r.peak[k] == r.expected[k], "%d ranks stage %d %s: %s peak %zu, ledger %zu",
                                 shapes[sh][0] * shapes[sh][1], stage, m ? "prefetch" : "sync",
                                 zb_mem_tag_name((zb_mem_tag)k), r.peak[k], r.expected[k]);
                }
                free(r.recs);
            }
        }
    }
}

static void test_costs(void) {
    zb_hw_profile hw = profile(1e12, 1e11, 1e11, 0.0);
    hw.sim.n_gemm_eff = 3;
    const double dims[3] = {0, 100, 1000}, effs[3] = {0.25, 0.5, 1.0};
    memcpy(hw.sim.gemm_min_dim, dims, sizeof dims);
    memcpy(hw.sim.gemm_eff, effs, sizeof effs);
    ZB_CHECK(zb_hw_sim_gemm_eff(&hw.sim, 99) == 0.25 && zb_hw_sim_gemm_eff(&hw.sim, 100) == 0.5);
    ZB_CHECK(zb_hw_sim_gemm_eff(&hw.sim, 5000) == 1.0);
    /* 2 x 1000 x 1000 x 50 FLOPs at 1e12 x 0.25 (min dim 50) */
    ZB_CHECK(fabs(zb_sim_gemm_s(&hw, 1000, 1000, 50, ZB_DTYPE_BF16) - 4e-4) < 1e-12);
    ZB_CHECK(fabs(zb_sim_mem_s(&hw, 1e9) - 1e-2) < 1e-15);
    /* a kernel's own efficiency (sim.kernel_efficiency) prices it alone; the others keep mem_efficiency */
    hw.sim.kernel_eff[zb_sim_kernel_index("rope_fwd")] = 0.25;
    ZB_CHECK(fabs(zb_sim_kernel_s(&hw, "rope_fwd", 1e9) - 4e-2) < 1e-15);
    ZB_CHECK(fabs(zb_sim_kernel_s(&hw, "rope_bwd", 1e9) - 1e-2) < 1e-15);
    ZB_CHECK(fabs(zb_sim_kernel_s(&hw, "not_a_kernel", 1e9) - 1e-2) < 1e-15);
    ZB_CHECK(zb_sim_kernel_index("cast") == ZB_SIM_N_KERNELS - 1 && zb_sim_kernel_index("gemm") < 0);
    hw.sim.kernel_eff[zb_sim_kernel_index("rope_fwd")] = 0;
    /* a profile without one of them: named with its file */
    hw.sim.have &= ~(unsigned)ZB_SIM_INTERFERENCE;
    ZB_CHECK(zb_hw_sim_require(&hw, ZB_SIM_DEVICE_NEEDS) == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "sim.interference") && strstr(zb_error_message(), "test-profile.json"));
    zb_error_clear();
    hw.nic_bytes_per_s = 0;
    ZB_CHECK(zb_hw_sim_require(&hw, zb_sim_coll_needs(2, 8)) == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "nic_bytes_per_s") != NULL);
    zb_error_clear();
}

/* sim.elementwise "eager": each block priced as PyTorch eager runs it (the
 * byte counts of kernel_bytes_eager.c, checked here by hand at small
 * shapes) over mem_efficiency, plus the overhead of each kernel after the
 * first inside its record; blocks eager runs as one op keep the fused
 * price. */
static void test_eager(void) {
    /* RMSNorm forward, bf16, N = 64, C = 128 (n = 8192): x.float() 6n, pow 8n, mean 4n, + eps and rsqrt 16N,
     * x * rsqrt 8n, type_as 6n, * weight 4n + 2C */
    zb_kcost k = zb_keager_rmsnorm_fwd(ZB_DTYPE_BF16, 64, 128);
    ZB_CHECK_MSG(k.bytes == 36.0 * 8192 + 16 * 64 + 2 * 128 && k.ops == 8, "rmsnorm_fwd %g B, %d ops", k.bytes, k.ops);
    /* in fp32 the casts are no kernels */
    k = zb_keager_rmsnorm_fwd(ZB_DTYPE_F32, 64, 128);
    ZB_CHECK_MSG(k.bytes == 28.0 * 8192 + 16 * 64 + 4 * 128 && k.ops == 6, "rmsnorm_fwd fp32 %g B, %d ops", k.bytes,
                 k.ops);
    k = zb_keager_swiglu_bwd(ZB_DTYPE_BF16, 1000);
    ZB_CHECK(k.bytes == 18000 && k.ops == 3);
    /* cross-entropy forward, N = 4, V = 1000: the fp32 cast 6n, log_softmax 8n, nll 8N */
    k = zb_keager_cross_entropy_fwd(ZB_DTYPE_BF16, 4, 1000);
    ZB_CHECK(k.bytes == 6.0 * 4000 + 8.0 * 4000 + 32 && k.ops == 3);
    k = zb_keager_rope(ZB_DTYPE_BF16, 2, 16, 4, 8); /* n = 1024: 6n + 8n + 4 T D + 6n */
    ZB_CHECK(k.bytes == 20.0 * 1024 + 4.0 * 16 * 8 && k.ops == 3);
    /* eager moves more than the fused kernels, block by block */
    ZB_CHECK(zb_keager_rmsnorm_bwd(ZB_DTYPE_BF16, 64, 128).bytes > zb_kbytes_rmsnorm_bwd(ZB_DTYPE_BF16, 64, 128));
    ZB_CHECK(zb_keager_adamw(1000).bytes > zb_kbytes_adamw(1000));
    ZB_CHECK(zb_keager_cross_entropy_bwd(ZB_DTYPE_BF16, 4, 1000).bytes >
             zb_kbytes_cross_entropy_bwd(ZB_DTYPE_BF16, 4, 1000));

    /* the sim device's price of one call, as its trace record */
    for (int eager = 0; eager < 2; eager++) {
        zb_hw_profile hw = profile(1e12, 1e11, 1e11, 0.0);
        hw.sim.op_overhead_s = 1e-6;
        hw.sim.mem_efficiency = 0.5;
        hw.sim.kernel_eff[zb_sim_kernel_index("rmsnorm_fwd")] = 0.25; /* the fused kernel's own: not eager's */
        hw.sim.eager_elementwise = eager;
        zb_trace t;
        ZB_CHECK_OK(zb_trace_init(&t, 0, true));
        zb_device_config dc = {0, 0, 1, 30.0, &t, &hw};
        zb_device *dev = NULL;
        zb_stream *s = NULL;
        ZB_CHECK_OK(zb_device_sim_create(&dc, &dev));
        ZB_CHECK_OK(dev->ops->stream_create(dev, "compute", &s));
        zb_kcall call = {s, NULL, -1, ZB_DTYPE_BF16, 0};
        const zb_kernels *kt = zb_kernels_sim();
        ZB_CHECK_OK(kt->rmsnorm_fwd(&call, NULL, NULL, NULL, NULL, 64, 128, 1e-5f));
        ZB_CHECK_OK(kt->residual_fwd(&call, NULL, NULL, NULL, 8192));
        ZB_CHECK_OK(dev->ops->stream_sync(s));
        ZB_CHECK(t.n_records == 2);
        if (t.n_records == 2) {
            double got = (double)(t.records[0].end_ns - t.records[0].start_ns) * 1e-9;
            k = zb_keager_rmsnorm_fwd(ZB_DTYPE_BF16, 64, 128);
            double want = eager ? k.bytes / (1e11 * 0.5) + 7 * 1e-6
                                : zb_kbytes_rmsnorm_fwd(ZB_DTYPE_BF16, 64, 128) / (1e11 * 0.25);
            ZB_CHECK_MSG(fabs(got - want) < 2e-9, "eager %d: rmsnorm_fwd %.9f s, want %.9f", eager, got, want);
            double add = (double)(t.records[1].end_ns - t.records[1].start_ns) * 1e-9;
            double add_want = zb_kbytes_residual_fwd(ZB_DTYPE_BF16, 8192) / (1e11 * 0.5);
            ZB_CHECK_MSG(fabs(add - add_want) < 2e-9, "eager %d: residual %.9f s, want %.9f", eager, add, add_want);
        }
        dev->ops->stream_destroy(s);
        zb_dev_destroy(dev);
        zb_trace_destroy(&t);
    }
}

int main(void) {
    test_costs();
    test_eager();
    test_deterministic();
    test_sync();
    test_prefetch_hides();
    test_comm_bound();
    test_interference();
    test_comm_stretch();
    test_comm_interference();
    test_comm_hold();
    test_memory_ledger();
    return zb_test_finish("test_sim_step");
}
