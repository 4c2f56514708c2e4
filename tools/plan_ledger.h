/* The arithmetic behind `zerobench plan`: one cell of its tables, the
 * per-GPU memory and the bytes each rank sends per step for one cluster
 * size, ZeRO stage and schedule. It adds nothing of its own: with a model
 * every figure is the engine's ledger (zb_engine_predict_peaks and
 * zb_engine_predict_comm, bench/zero3/engine_ledger.c: the code the step's
 * memory check and its ledger column use); with a bare parameter count only
 * the model states (zb_ledger_state_bytes) and the closed-form comm volume
 * (zb_ledger_comm_bytes_per_step_f) are known. */
#ifndef ZB_PLAN_LEDGER_H
#define ZB_PLAN_LEDGER_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zb_plan_input {
    bool have_model;      /* shapes known (--model): the engine's full ledger */
    zb_engine_cfg engine; /* with a model: its shapes, recompute, prefetch depth, dtypes */
    uint64_t params;      /* without one (--params): Ψ, the parameter count */
    zb_dtype param_dtype; /* p: parameters as gathered */
    zb_dtype grad_dtype;  /* g: gradients as reduced */
} zb_plan_input;

/* Bytes per GPU (one rank) and bytes it sends per step. Without a model the
 * terms that need shapes are unknown: `shapes_known` false and those terms 0. */
typedef struct zb_plan_cell {
    int stage, ranks;
    zb_step_mode mode;
    bool shapes_known;
    uint64_t phi;               /* parameters the ledger counts (padded units with a model) */
    uint64_t params_bytes;      /* param_shard */
    uint64_t grads_bytes;       /* grad_shard */
    uint64_t optim_bytes;       /* optim_state: fp32 master + m + v (k = 12) */
    uint64_t model_state_bytes; /* the three above */
    uint64_t activation_bytes;  /* activation: saved activations for the recompute policy */
    uint64_t workspace_bytes;   /* workspace: backward and recompute buffers, fp32 copies */
    uint64_t gathered_bytes;    /* gathered_param + gathered_grad the schedule keeps alive */
    uint64_t total_bytes;       /* every device tag (the model states alone without shapes) */
    uint64_t comm_bytes;        /* sent per rank per step, all collectives */
} zb_plan_cell;

/* One cell. ZB_ERR_INVALID (one line) for stage outside 0..3, ranks < 1, a
 * model that does not validate, a unit smaller than the ranks it would be
 * sharded over, or byte counts past 2^64. */
zb_status zb_plan_cell_compute(const zb_plan_input *in, int stage, zb_step_mode mode, int ranks,
                               zb_plan_cell *out);

#ifdef __cplusplus
}
#endif
#endif
