/* The ZeRO engine on real MPI ranks (run with 1, 2 and 4):
 *  - sync and prefetch give bit-identical losses and parameters (stages 0-3,
 *    prefetch depth 1 and 2, with and without recomputation);
 *  - every stage matches an unsharded single-process reference that trains
 *    on the same global batch, within the tolerance stated below;
 *  - the comm bytes counted per step equal docs/design.md §6's formula;
 *  - the peak bytes per memory tag equal what the sharding says;
 *  - in the trace, prefetch issues unit l+1's all-gather before unit l's
 *    forward compute, while sync issues it after and starts it only once
 *    unit l's compute has ended (event order, not timing);
 *  - the loss falls over 50 steps;
 *  - with bf16 parameters and activations (and bf16 or float gradient
 *    reduction), and with bf16 parameters behind float activations, at
 *    every stage: sync and prefetch agree bit for bit, the comm bytes equal the
 *    formula with p = 2 and g = 2 or 4, the per-tag peaks equal the ledger
 *    (p, g from the dtypes, k = 12), the losses stay within a stated bf16
 *    tolerance of the fp32 reference, and the loss falls over 50 steps. */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "comm_mpi.h"
#include "engine.h"
#include "ledger.h"
#include "mpi_boot.h"
#include "reference.h"
#include "device_cpu.h"
#include "zb_test.h"

#define STEPS 3
#define MAX_UNITS 8

typedef struct run_cfg {
    int stage;
    zb_step_mode mode;
    int depth;
    bool recompute;
    int steps;
    bool trace;
    zb_dtype param_dtype, grad_dtype, act_dtype; /* 0 (float) when not given */
    /* Interleave the schedules on one state, as the step's paired A/B does:
     * steps in the order sync, prefetch, prefetch, sync, ... (ABBA). */
    bool interleave;
} run_cfg;

typedef struct run_out {
    float loss[64];                 /* global mean loss per step */
    float *shard[MAX_UNITS];        /* this rank's master shard after the run */
    size_t begin[MAX_UNITS], count[MAX_UNITS], padded[MAX_UNITS];
    uint64_t sent[64], expected_sent;
    zb_mem_stats mem;
    size_t expected_peak[ZB_MEM_TAG_COUNT];
    zb_trace trace;
    int n_units;
} run_out;

static int g_rank, g_n;

static zb_model_cfg tiny_model(void) {
    zb_model_cfg m;
    memset(&m, 0, sizeof m);
    m.layers = 2;
    m.dim = 16;
    m.heads = 4;
    m.kv_heads = 2;
    m.head_dim = 4;
    m.ffn_dim = 24;
    m.vocab = 37; /* odd sizes: units do not divide by the ranks */
    m.seq = 8;
    m.batch = 2;
    m.norm_eps = 1e-5;
    m.rope_theta = 10000.0;
    m.seed = 99;
    return m;
}

static zb_adamw_cfg test_opt(void) {
    zb_adamw_cfg o;
    zb_adamw_cfg_default(&o);
    o.lr = 3e-3f;
    return o;
}

static void run(const run_cfg *rc, run_out *out) {
    memset(out, 0, sizeof *out);
    zb_trace_init(&out->trace, g_rank, rc->trace);
    zb_device_config dc = {g_rank, g_rank, 1, 60, &out->trace};
    zb_device *dev = NULL;
    zb_stream *cs = NULL, *ms = NULL;
    zb_comm *comm = NULL;
    zb_engine *e = NULL;
    ZB_CHECK_OK(zb_device_cpu_create(&dc, &dev));
    ZB_CHECK_OK(dev->ops->stream_create(dev, "compute", &cs));
    ZB_CHECK_OK(dev->ops->stream_create(dev, "comm", &ms));
    zb_stream *streams[2] = {ms, cs};
    zb_comm_config cc = {60};
    ZB_CHECK_OK(zb_comm_mpi_create(dev, streams, 2, &cc, &comm));
    zb_engine_cfg ec = {tiny_model(), rc->stage, rc->mode, rc->recompute, rc->depth, test_opt(),
                        rc->param_dtype, rc->grad_dtype, rc->act_dtype};
    ZB_CHECK_OK(zb_engine_create(&ec, dev, comm, cs, ms, &e));
    if (!e) return;
    for (int s = 0; s < rc->steps; s++) {
        zb_step_result r;
        if (rc->interleave) {
            bool sync_first = (s / 2) % 2 == 0;
            zb_step_mode mode = (s % 2 == 0) == sync_first ? ZB_MODE_SYNC : ZB_MODE_PREFETCH;
            ZB_CHECK_OK(zb_engine_set_mode(e, mode));
            dev->ops->mem_reset_peak(dev);
        }
        ZB_CHECK_OK(zb_engine_step(e, s, &r));
        if (rc->interleave) { /* each step's peaks are its own schedule's ledger */
            zb_mem_stats ms_now;
            size_t want[ZB_MEM_TAG_COUNT];
            dev->ops->mem_stats(dev, &ms_now);
            zb_engine_expected_peaks(e, want);
            for (int t = 0; t < ZB_MEM_TAG_COUNT; t++) {
                ZB_CHECK_MSG(ms_now.peak_bytes[t] == want[t], "interleaved stage %d step %d: tag %s peak %zu, "
                             "ledger %zu", rc->stage, s, zb_mem_tag_name((zb_mem_tag)t), ms_now.peak_bytes[t],
                             want[t]);
            }
        }
        float sum = 0;
        MPI_Allreduce(&r.loss, &sum, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        out->loss[s] = sum / (float)g_n;
        out->sent[s] = r.sent_bytes;
    }
    out->n_units = zb_engine_n_units(e);
    for (int u = 0; u < out->n_units && u < MAX_UNITS; u++) {
        zb_engine_unit_shard(e, u, &out->padded[u], &out->begin[u], &out->count[u]);
        out->shard[u] = (float *)malloc(out->count[u] * sizeof(float));
        ZB_CHECK_OK(zb_engine_read_shard(e, u, out->shard[u]));
    }
    out->expected_sent = zb_engine_expected_comm_bytes(e);
    zb_engine_expected_peaks(e, out->expected_peak);
    dev->ops->mem_stats(dev, &out->mem);
    zb_engine_destroy(e);
    zb_comm_destroy(comm);
    dev->ops->stream_destroy(cs);
    dev->ops->stream_destroy(ms);
    zb_dev_destroy(dev);
}

static void free_out(run_out *o) {
    for (int u = 0; u < MAX_UNITS; u++) free(o->shard[u]);
    zb_trace_destroy(&o->trace);
}

static bool same_bits(const run_out *a, const run_out *b, int steps) {
    if (memcmp(a->loss, b->loss, (size_t)steps * sizeof(float)) != 0) return false;
    for (int u = 0; u < a->n_units; u++) {
        if (memcmp(a->shard[u], b->shard[u], a->count[u] * sizeof(float)) != 0) return false;
    }
    return true;
}

/* Sync and prefetch (and recompute, and deeper prefetch) change only the
 * schedule, so every bit must agree. */
static void test_schedules_agree(int stage) {
    run_cfg base = {stage, ZB_MODE_SYNC, 1, false, STEPS, false};
    run_out sync_out, other;
    run(&base, &sync_out);
    run_cfg variants[] = {
        {stage, ZB_MODE_PREFETCH, 1, false, STEPS, false},
        {stage, ZB_MODE_PREFETCH, 2, false, STEPS, false},
        {stage, ZB_MODE_PREFETCH, 1, true, STEPS, false},
        {stage, ZB_MODE_SYNC, 1, true, STEPS, false},
    };
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        run(&variants[v], &other);
        ZB_CHECK_MSG(same_bits(&sync_out, &other, STEPS),
                     "stage %d: mode %d depth %d recompute %d differs from sync", stage,
                     (int)variants[v].mode, variants[v].depth, (int)variants[v].recompute);
        for (int s = 0; s < STEPS; s++) {
            ZB_CHECK_MSG(other.sent[s] == other.expected_sent, "stage %d step %d: sent %llu bytes, formula %llu",
                         stage, s, (unsigned long long)other.sent[s], (unsigned long long)other.expected_sent);
        }
        free_out(&other);
    }
    free_out(&sync_out);
}

/* Sync and prefetch interleaved on one training state (ABBA, as the step's
 * paired A/B runs them) give the same bits as either schedule alone. */
static void test_interleaved_agrees(int stage) {
    enum { STEPS_I = 4 };
    run_cfg s = {stage, ZB_MODE_SYNC, 1, false, STEPS_I, false};
    run_cfg p = {stage, ZB_MODE_PREFETCH, 2, false, STEPS_I, false};
    run_cfg i = {stage, ZB_MODE_SYNC, 2, false, STEPS_I, false};
    i.interleave = true;
    run_out so, po, io;
    run(&s, &so);
    run(&p, &po);
    run(&i, &io);
    ZB_CHECK_MSG(same_bits(&so, &io, STEPS_I), "stage %d: interleaved differs from sync alone", stage);
    ZB_CHECK_MSG(same_bits(&po, &io, STEPS_I), "stage %d: interleaved differs from prefetch alone", stage);
    free_out(&so);
    free_out(&po);
    free_out(&io);
}

/* Against the unsharded reference on the same global batch. Sharding changes
 * only the order of the gradient sums (over ranks, then within a rank), so
 * losses agree to 1e-5 relative and parameters to 1e-5 + 1e-3 relative after
 * 3 AdamW steps (Adam normalizes tiny gradient differences up to lr scale
 * only where the gradient itself is ~0, which the absolute term covers). */
static void test_matches_reference(int stage, float **ref, const float *ref_loss) {
    run_cfg rc = {stage, ZB_MODE_PREFETCH, 1, false, STEPS, false};
    run_out o;
    run(&rc, &o);
    for (int s = 0; s < STEPS; s++) {
        ZB_CHECK_MSG(fabsf(o.loss[s] - ref_loss[s]) <= 1e-5f * fabsf(ref_loss[s]),
                     "stage %d step %d: loss %.9g vs reference %.9g", stage, s, o.loss[s], ref_loss[s]);
    }
    zb_model_cfg m = tiny_model();
    double worst = 0;
    for (int u = 0; u < o.n_units; u++) {
        size_t numel = zb_model_unit_numel(&m, u);
        for (size_t i = 0; i < o.count[u]; i++) {
            size_t g = o.begin[u] + i;
            if (g >= numel) {
                ZB_CHECK_MSG(o.shard[u][i] == 0.0f, "stage %d unit %d: padding element %zu is %g",
                             stage, u, g, o.shard[u][i]);
                continue;
            }
            double err = fabs((double)o.shard[u][i] - ref[u][g]) / (1e-5 + 1e-3 * fabs(ref[u][g]));
            if (err > worst) worst = err;
        }
    }
    ZB_CHECK_MSG(worst <= 1.0, "stage %d: parameters differ from the reference by %.3g x the tolerance",
                 stage, worst);
    free_out(&o);
}

static void test_memory_ledger(int stage, zb_step_mode mode, int depth) {
    run_cfg rc = {stage, mode, depth, false, 1, false};
    run_out o;
    run(&rc, &o);
    for (int t = 0; t < ZB_MEM_TAG_COUNT; t++) {
        ZB_CHECK_MSG(o.mem.peak_bytes[t] == o.expected_peak[t], "stage %d mode %d: tag %s peak %zu, expected %zu",
                     stage, (int)mode, zb_mem_tag_name((zb_mem_tag)t), o.mem.peak_bytes[t], o.expected_peak[t]);
    }
    /* The model-state tags against the ledger of docs/design.md §6 (p = g = 4, k = 12). */
    uint64_t phi = 0;
    for (int u = 0; u < o.n_units; u++) phi += o.padded[u];
    zb_ledger_state ls;
    ZB_CHECK_OK(zb_ledger_state_bytes((zb_zero_stage)stage, phi, g_n, 4, 4, 12, &ls));
    ZB_CHECK(o.mem.peak_bytes[ZB_MEM_PARAM_SHARD] == ls.params_bytes);
    ZB_CHECK(o.mem.peak_bytes[ZB_MEM_GRAD_SHARD] == ls.grads_bytes);
    ZB_CHECK(o.mem.peak_bytes[ZB_MEM_OPTIM_STATE] == ls.optim_bytes);
    free_out(&o);
}

/* Prefetch's extra peak over sync is exactly the extra ring buffers. */
static void test_prefetch_extra_memory(void) {
    run_cfg s = {3, ZB_MODE_SYNC, 1, false, 1, false}, p = {3, ZB_MODE_PREFETCH, 2, false, 1, false};
    run_out a, b;
    run(&s, &a);
    run(&p, &b);
    size_t max_padded = 0;
    for (int u = 0; u < a.n_units; u++) max_padded = a.padded[u] > max_padded ? a.padded[u] : max_padded;
    ZB_CHECK(b.mem.peak_bytes[ZB_MEM_GATHERED_PARAM] - a.mem.peak_bytes[ZB_MEM_GATHERED_PARAM] ==
             2 * max_padded * sizeof(float));
    ZB_CHECK(b.mem.peak_bytes[ZB_MEM_GATHERED_GRAD] - a.mem.peak_bytes[ZB_MEM_GATHERED_GRAD] ==
             max_padded * sizeof(float));
    ZB_CHECK(b.mem.peak_total_bytes - a.mem.peak_total_bytes == 3 * max_padded * sizeof(float));
    free_out(&a);
    free_out(&b);
}

/* The first record with this label and unit. */
static const zb_trace_record *find_gather(const zb_trace *t, const char *label, int unit) {
    for (size_t i = 0; i < t->n_records; i++) {
        const zb_trace_record *r = &t->records[i];
        if (r->unit == unit && !strcmp(r->label, label)) return r;
    }
    return NULL;
}

/* The first compute record of unit u's forward in the step (lowest issue
 * number after the step's batch was loaded; setup ops come before it). */
static const zb_trace_record *first_compute(const zb_trace *t, int unit) {
    const zb_trace_record *best = NULL, *load = find_gather(t, "load_batch", -1);
    for (size_t i = 0; load && i < t->n_records; i++) {
        const zb_trace_record *r = &t->records[i];
        if (r->unit == unit && r->kind == ZB_OP_COMPUTE && r->seq > load->seq && (!best || r->seq < best->seq)) {
            best = r;
        }
    }
    return best;
}

static void test_trace_order(void) {
    run_cfg p = {3, ZB_MODE_PREFETCH, 1, false, 1, true}, s = {3, ZB_MODE_SYNC, 1, false, 1, true};
    run_out a, b;
    run(&p, &a);
    run(&s, &b);
    for (int l = 0; l + 1 < a.n_units; l++) {
        const zb_trace_record *ag = find_gather(&a.trace, "allgather.fwd", l + 1), *c = first_compute(&a.trace, l);
        ZB_CHECK_MSG(ag && c && ag->seq < c->seq, "prefetch: all-gather of unit %d not issued before unit %d's compute",
                     l + 1, l);
        ag = find_gather(&b.trace, "allgather.fwd", l + 1);
        c = first_compute(&b.trace, l);
        ZB_CHECK_MSG(ag && c && ag->seq > c->seq, "sync: all-gather of unit %d issued before unit %d's compute", l + 1, l);
        for (size_t i = 0; ag && i < b.trace.n_records; i++) {
            const zb_trace_record *r = &b.trace.records[i];
            if (r->unit == l && r->kind == ZB_OP_COMPUTE && r->seq < ag->seq) {
                ZB_CHECK_MSG(ag->start_ns >= r->end_ns, "sync: all-gather of unit %d started before %s of unit %d ended",
                             l + 1, r->label, l);
            }
        }
    }
    free_out(&a);
    free_out(&b);
}

static void test_loss_falls(void) {
    run_cfg rc = {3, ZB_MODE_PREFETCH, 1, false, 50, false};
    run_out o;
    run(&rc, &o);
    /* Measured: about 3.6 -> 2.0 with this seed and lr; assert a margin well inside. */
    ZB_CHECK_MSG(o.loss[49] < 0.8f * o.loss[0], "loss went from %g to %g over 50 steps", o.loss[0], o.loss[49]);
    if (g_rank == 0) printf("loss over 50 steps: %.4f -> %.4f\n", o.loss[0], o.loss[49]);
    free_out(&o);
}

/* ---- bf16 parameters / gradients ---------------------------------------- */

/* Losses of bf16 runs against the fp32 unsharded reference over STEPS steps.
 * Measured on this model (np 1, 2, 4, every stage, bf16 or float gradient
 * reduction): relative differences up to 9e-5 with float activations and
 * 1.3e-4 with bf16 ones. The bound, 2e-3, is 15x that noise yet catches a
 * wrong cast: with the master -> param cast after AdamW
 * skipped (the bf16 params never move) the loss is 1.0e-2 to 1.9e-2 away at
 * step 2 and 2.7e-2 to 3.6e-2 at step 3 (measured, np 1, 2, 4). */
#define BF16_LOSS_RTOL 2e-3f

static void check_bf16_loss(const run_out *o, const float *ref_loss, const char *what, int stage) {
    for (int s = 0; s < STEPS; s++) {
        float rel = fabsf(o->loss[s] - ref_loss[s]) / fabsf(ref_loss[s]);
        if (getenv("ZB_TEST_VERBOSE") && g_rank == 0) {
            printf("%s stage %d step %d: loss %.7g ref %.7g rel %.3g\n", what, stage, s, o->loss[s], ref_loss[s],
                   (double)rel);
        }
        ZB_CHECK_MSG(rel <= BF16_LOSS_RTOL, "%s stage %d step %d: loss %.9g vs reference %.9g (rel %.3g > %.3g)",
                     what, stage, s, o->loss[s], ref_loss[s], (double)rel, (double)BF16_LOSS_RTOL);
    }
}

/* Comm bytes against docs/design.md §6 with explicit p and g, per-tag peaks
 * against the engine's ledger and the model-state tags against
 * zb_ledger_state_bytes (p, g, k = 12). */
static void check_bf16_ledger(const run_out *o, int stage, int p, int g, const char *what) {
    uint64_t padded[MAX_UNITS], phi = 0;
    for (int u = 0; u < o->n_units; u++) {
        padded[u] = o->padded[u];
        phi += o->padded[u];
    }
    uint64_t formula = zb_ledger_comm_bytes_per_step(stage, padded, o->n_units, g_n, p, g);
    double closed = zb_ledger_comm_bytes_per_step_f(stage, (double)phi, g_n, p, g);
    ZB_CHECK_MSG(o->expected_sent == formula && fabs(closed - (double)formula) < 0.5,
                 "%s stage %d: engine formula %llu, p=%d g=%d formula %llu (closed form %.1f)", what, stage,
                 (unsigned long long)o->expected_sent, p, g, (unsigned long long)formula, closed);
    for (int s = 0; s < STEPS; s++) {
        ZB_CHECK_MSG(o->sent[s] == formula, "%s stage %d step %d: sent %llu bytes, formula %llu", what, stage, s,
                     (unsigned long long)o->sent[s], (unsigned long long)formula);
    }
    for (int t = 0; t < ZB_MEM_TAG_COUNT; t++) {
        ZB_CHECK_MSG(o->mem.peak_bytes[t] == o->expected_peak[t], "%s stage %d: tag %s peak %zu, expected %zu", what,
                     stage, zb_mem_tag_name((zb_mem_tag)t), o->mem.peak_bytes[t], o->expected_peak[t]);
    }
    zb_ledger_state ls;
    ZB_CHECK_OK(zb_ledger_state_bytes((zb_zero_stage)stage, phi, g_n, p, g, 12, &ls));
    ZB_CHECK_MSG(o->mem.peak_bytes[ZB_MEM_PARAM_SHARD] == ls.params_bytes &&
                     o->mem.peak_bytes[ZB_MEM_GRAD_SHARD] == ls.grads_bytes &&
                     o->mem.peak_bytes[ZB_MEM_OPTIM_STATE] == ls.optim_bytes,
                 "%s stage %d: model-state tags differ from the ledger (p=%d g=%d k=12)", what, stage, p, g);
}

static void test_bf16(int stage, const float *ref_loss) {
    run_cfg sync = {stage, ZB_MODE_SYNC, 1, false, STEPS, false, ZB_DTYPE_BF16, ZB_DTYPE_BF16,
                    ZB_DTYPE_BF16};
    run_cfg pre = sync, pre_r = sync, mixed = sync, f32_acts = sync;
    pre.mode = ZB_MODE_PREFETCH;
    pre_r.mode = ZB_MODE_PREFETCH, pre_r.depth = 2, pre_r.recompute = true;
    mixed.mode = ZB_MODE_PREFETCH, mixed.grad_dtype = ZB_DTYPE_F32;
    f32_acts.mode = ZB_MODE_PREFETCH, f32_acts.act_dtype = ZB_DTYPE_F32;
    run_out a, b, c, d, f;
    run(&sync, &a);
    run(&pre, &b);
    run(&pre_r, &c);
    run(&mixed, &d);
    run(&f32_acts, &f);
    ZB_CHECK_MSG(same_bits(&a, &b, STEPS), "bf16 stage %d: prefetch differs from sync", stage);
    ZB_CHECK_MSG(same_bits(&a, &c, STEPS), "bf16 stage %d: prefetch depth 2 + recompute differs from sync", stage);
    /* float activations round nothing but the params: never the same bits */
    ZB_CHECK_MSG(memcmp(b.loss, f.loss, sizeof b.loss) != 0,
                 "bf16 stage %d: bf16 activations train exactly like float ones", stage);
    check_bf16_ledger(&a, stage, 2, 2, "bf16/bf16 sync");
    check_bf16_ledger(&b, stage, 2, 2, "bf16/bf16 prefetch");
    check_bf16_ledger(&d, stage, 2, 4, "bf16/float prefetch");
    check_bf16_ledger(&f, stage, 2, 2, "bf16 params, float activations, prefetch");
    if (ref_loss) {
        check_bf16_loss(&b, ref_loss, "bf16/bf16", stage);
        check_bf16_loss(&d, ref_loss, "bf16/float", stage);
        check_bf16_loss(&f, ref_loss, "bf16 params/float acts", stage);
    }
    free_out(&a);
    free_out(&b);
    free_out(&c);
    free_out(&d);
    free_out(&f);
}

static void test_bf16_loss_falls(void) {
    run_cfg rc = {3, ZB_MODE_PREFETCH, 1, false, 50, false, ZB_DTYPE_BF16, ZB_DTYPE_BF16,
                  ZB_DTYPE_BF16};
    run_out o;
    run(&rc, &o);
    ZB_CHECK_MSG(o.loss[49] < 0.8f * o.loss[0], "bf16: loss went from %g to %g over 50 steps", o.loss[0], o.loss[49]);
    if (g_rank == 0) printf("bf16 loss over 50 steps: %.4f -> %.4f\n", o.loss[0], o.loss[49]);
    free_out(&o);
}

int main(int argc, char **argv) {
    if (zb_mpi_init(&argc, &argv) != ZB_OK) return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_n);
    zb_model_cfg m = tiny_model();
    zb_adamw_cfg opt = test_opt();
    int n_units = zb_model_n_units(&m);
    float *ref[MAX_UNITS] = {0};
    float ref_loss[STEPS];
    ZB_CHECK_OK(zb_test_reference_train(&m, m.batch * g_n, STEPS, &opt, ref_loss, ref));
    for (int stage = 0; stage <= 3; stage++) {
        test_schedules_agree(stage);
        test_interleaved_agrees(stage);
        if (ref[0]) test_matches_reference(stage, ref, ref_loss);
        test_memory_ledger(stage, ZB_MODE_SYNC, 1);
        test_memory_ledger(stage, ZB_MODE_PREFETCH, 1);
        test_bf16(stage, ref[0] ? ref_loss : NULL);
    }
    test_prefetch_extra_memory();
    test_trace_order();
    test_loss_falls();
    test_bf16_loss_falls();
    for (int u = 0; u < n_units; u++) free(ref[u]);
    int failures = zb_test_failures, all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    zb_mpi_finalize();
    if (g_rank != 0) return failures ? 1 : 0;
    int rc = zb_test_finish("test_zero3_engine");
    return all ? 1 : rc;
}
