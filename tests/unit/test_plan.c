/* zerobench plan's ledger (tools/plan_ledger.h): the ZeRO paper's Figure 1
 * from a bare parameter count, the stage formulas of docs/design.md §6 for
 * other sizes and dtypes, and with a model the same figures as the engine's
 * own ledger (the step's memory check and ledger column), term by term. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ledger.h"
#include "plan_ledger.h"
#include "zb_test.h"

static zb_plan_input params_input(uint64_t phi, zb_dtype p, zb_dtype g) {
    zb_plan_input in;
    memset(&in, 0, sizeof in);
    in.params = phi;
    in.param_dtype = p;
    in.grad_dtype = g;
    return in;
}

static void test_figure1(void) {
    /* 7.5B parameters on 64 GPUs, p = g = 2, k = 12: 120, 31.4, 16.6, 1.9 GB. */
    const double want_gb[4] = {120.0, 31.4, 16.6, 1.9};
    zb_plan_input in = params_input(7500000000ull, ZB_DTYPE_BF16, ZB_DTYPE_BF16);
    for (int st = 0; st < 4; st++) {
        zb_plan_cell c;
        ZB_CHECK_OK(zb_plan_cell_compute(&in, st, ZB_MODE_SYNC, 64, &c));
        double gb = round((double)c.model_state_bytes / 1e8) / 10.0;
        ZB_CHECK_MSG(gb == want_gb[st], "stage %d: %.4f GB, paper %.1f", st, (double)c.model_state_bytes / 1e9,
                     want_gb[st]);
        ZB_CHECK(!c.shapes_known && c.activation_bytes == 0 && c.gathered_bytes == 0);
        ZB_CHECK(c.total_bytes == c.model_state_bytes);
        printf("plan, 7.5B on 64 GPUs, stage %d: %.4f GB per GPU (paper %.1f)\n", st,
               (double)c.model_state_bytes / 1e9, want_gb[st]);
    }
}

/* (p+g+k)Ψ, pΨ+gΨ+kΨ/n, pΨ+(g+k)Ψ/n, (p+g+k)Ψ/n with ceil(Ψ/n) shards. */
static void test_stage_formulas(void) {
    const uint64_t phis[] = {1000003ull, 1300000000ull, 70000000000ull, 405000000000ull};
    const int ns[] = {1, 2, 8, 64, 1000};
    const zb_dtype dts[] = {ZB_DTYPE_BF16, ZB_DTYPE_F32};
    for (size_t a = 0; a < 4; a++) {
        for (size_t b = 0; b < 5; b++) {
            for (size_t d = 0; d < 4; d++) {
                zb_dtype pd = dts[d & 1], gd = dts[d >> 1];
                uint64_t phi = phis[a], n = (uint64_t)ns[b], sh = (phi + n - 1) / n;
                uint64_t p = zb_dtype_size(pd), g = zb_dtype_size(gd), k = 12;
                const uint64_t want[4] = {(p + g + k) * phi, p * phi + g * phi + k * sh, p * phi + (g + k) * sh,
                                          (p + g + k) * sh};
                zb_plan_input in = params_input(phi, pd, gd);
                for (int st = 0; st < 4; st++) {
                    zb_plan_cell c;
                    ZB_CHECK_OK(zb_plan_cell_compute(&in, st, ZB_MODE_PREFETCH, ns[b], &c));
                    ZB_CHECK_MSG(c.model_state_bytes == want[st], "Ψ %llu n %d p %d g %d stage %d: %llu, want %llu",
                                 (unsigned long long)phi, ns[b], (int)p, (int)g, st,
                                 (unsigned long long)c.model_state_bytes, (unsigned long long)want[st]);
                    double comm = zb_ledger_comm_bytes_per_step_f(st, (double)phi, ns[b], (double)p, (double)g);
                    ZB_CHECK(fabs((double)c.comm_bytes - comm) <= 0.5);
                }
            }
        }
    }
}

static zb_plan_input model_input(const char *name, zb_dtype p, zb_dtype g, bool recompute, int depth) {
    zb_plan_input in;
    zb_model_profile mp;
    memset(&in, 0, sizeof in);
    ZB_CHECK_OK(zb_model_profile_load(name, &mp));
    zb_model_cfg_from_profile(&mp, 1, &in.engine.model);
    in.have_model = true;
    in.param_dtype = in.engine.param_dtype = in.engine.act_dtype = p;
    in.grad_dtype = in.engine.grad_dtype = g;
    in.engine.recompute = recompute;
    in.engine.prefetch_depth = depth;
    return in;
}

/* With a model every term is the engine's ledger for that stage and schedule. */
static void test_model_is_engine_ledger(void) {
    const char *models[] = {"tiny", "llama3_8b"};
    for (int mi = 0; mi < 2; mi++) {
        for (int v = 0; v < 4; v++) {
            zb_dtype pd = v & 1 ? ZB_DTYPE_F32 : ZB_DTYPE_BF16;
            zb_plan_input in = model_input(models[mi], pd, pd, v & 2, 1 + v);
            const int ns[] = {1, 2, 8, 24};
            for (int b = 0; b < 4; b++) {
                for (int st = 0; st < 4; st++) {
                    for (int mode = 0; mode < 2; mode++) {
                        zb_plan_cell c;
                        ZB_CHECK_OK(zb_plan_cell_compute(&in, st, (zb_step_mode)mode, ns[b], &c));
                        zb_engine_cfg ec = in.engine;
                        ec.stage = st;
                        ec.mode = (zb_step_mode)mode;
                        size_t peak[ZB_MEM_TAG_COUNT], total = 0;
                        ZB_CHECK_OK(zb_engine_predict_peaks(&ec, ns[b], peak));
                        ZB_CHECK_OK(zb_engine_predict_bytes(&ec, ns[b], &total));
                        ZB_CHECK(c.shapes_known);
                        ZB_CHECK(c.params_bytes == peak[ZB_MEM_PARAM_SHARD]);
                        ZB_CHECK(c.grads_bytes == peak[ZB_MEM_GRAD_SHARD]);
                        ZB_CHECK(c.optim_bytes == peak[ZB_MEM_OPTIM_STATE]);
                        ZB_CHECK(c.activation_bytes == peak[ZB_MEM_ACTIVATION]);
                        ZB_CHECK(c.workspace_bytes == peak[ZB_MEM_WORKSPACE]);
                        ZB_CHECK(c.gathered_bytes == peak[ZB_MEM_GATHERED_PARAM] + peak[ZB_MEM_GATHERED_GRAD]);
                        ZB_CHECK(c.total_bytes == total);
                        ZB_CHECK(c.total_bytes == c.model_state_bytes + c.activation_bytes + c.workspace_bytes +
                                                      c.gathered_bytes);
                        /* The model states are the ledger's formula over the padded Φ. */
                        zb_ledger_state ls;
                        ZB_CHECK_OK(zb_ledger_state_bytes((zb_zero_stage)st, c.phi, ns[b], (int)zb_dtype_size(pd),
                                                          (int)zb_dtype_size(pd), 12, &ls));
                        ZB_CHECK(ls.total_bytes == c.model_state_bytes);
                        ZB_CHECK(c.phi % (uint64_t)ns[b] == 0);
                        ZB_CHECK(c.phi >= (uint64_t)zb_model_total_params(&in.engine.model));
                        /* The exact comm volume sits within the padding of the closed form. */
                        double comm = zb_ledger_comm_bytes_per_step_f(st, (double)c.phi, ns[b],
                                                                      (double)zb_dtype_size(pd),
                                                                      (double)zb_dtype_size(pd));
                        ZB_CHECK_MSG(fabs((double)c.comm_bytes - comm) <= 1e-9 * comm + 64.0 * ns[b],
                                     "%s n %d stage %d: comm %llu, closed form %.0f", models[mi], ns[b], st,
                                     (unsigned long long)c.comm_bytes, comm);
                    }
                }
            }
        }
    }
    /* Prefetch keeps depth + 1 gathered parameter units at stage 3, sync one. */
    zb_plan_input in = model_input("tiny", ZB_DTYPE_F32, ZB_DTYPE_F32, false, 3);
    zb_plan_cell sync, pre;
    ZB_CHECK_OK(zb_plan_cell_compute(&in, 3, ZB_MODE_SYNC, 2, &sync));
    ZB_CHECK_OK(zb_plan_cell_compute(&in, 3, ZB_MODE_PREFETCH, 2, &pre));
    ZB_CHECK(pre.gathered_bytes > sync.gathered_bytes);
    ZB_CHECK(pre.total_bytes - sync.total_bytes == pre.gathered_bytes - sync.gathered_bytes);
    /* Recomputation keeps fewer activations. */
    zb_plan_input re = model_input("llama3_8b", ZB_DTYPE_BF16, ZB_DTYPE_BF16, true, 1);
    zb_plan_input keep = model_input("llama3_8b", ZB_DTYPE_BF16, ZB_DTYPE_BF16, false, 1);
    zb_plan_cell a, b;
    ZB_CHECK_OK(zb_plan_cell_compute(&re, 3, ZB_MODE_SYNC, 8, &a));
    ZB_CHECK_OK(zb_plan_cell_compute(&keep, 3, ZB_MODE_SYNC, 8, &b));
    ZB_CHECK(a.activation_bytes < b.activation_bytes);
}

static void test_bad(void) {
    zb_plan_input in = params_input(7500000000ull, ZB_DTYPE_BF16, ZB_DTYPE_BF16);
    zb_plan_cell c;
    ZB_CHECK(zb_plan_cell_compute(&in, 4, ZB_MODE_SYNC, 8, &c) == ZB_ERR_INVALID);
    ZB_CHECK(zb_plan_cell_compute(&in, -1, ZB_MODE_SYNC, 8, &c) == ZB_ERR_INVALID);
    ZB_CHECK(zb_plan_cell_compute(&in, 3, ZB_MODE_SYNC, 0, &c) == ZB_ERR_INVALID);
    ZB_CHECK(zb_plan_cell_compute(&in, 3, ZB_MODE_SYNC, -8, &c) == ZB_ERR_INVALID);
    /* tiny's norm-only units are smaller than 100000 ranks: refused as the step refuses it. */
    zb_plan_input t = model_input("tiny", ZB_DTYPE_BF16, ZB_DTYPE_BF16, false, 1);
    ZB_CHECK(zb_plan_cell_compute(&t, 3, ZB_MODE_SYNC, 100000, &c) == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "fewer than the 100000 ranks") != NULL);
}

int main(void) {
    test_figure1();
    test_stage_formulas();
    test_model_is_engine_ledger();
    test_bad();
    return zb_test_finish("test_plan");
}
