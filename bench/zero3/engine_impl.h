/* The engine's state, shared by engine_state.c (allocation, init),
 * engine_step.c (the schedules) and engine_ledger.c (expected memory). Not
 * a public header: use engine.h. */
#ifndef ZB_ZERO3_ENGINE_IMPL_H
#define ZB_ZERO3_ENGINE_IMPL_H

#include "engine.h"
#include "unit.h"

#define ZB_ENGINE_MAX_PSLOTS 65 /* 1 + the largest --prefetch-depth */
#define ZB_ENGINE_GSLOTS 2

struct zb_engine {
    zb_engine_cfg cfg;
    zb_device *dev;
    zb_comm *comm;
    zb_stream *cs; /* compute stream */
    zb_stream *ms; /* comm stream */
    const zb_kernels *k;
    int rank, n, n_units;
    int B, N; /* micro-batch, tokens per rank (B*T) */

    zb_unit_layout *layouts; /* [n_units] */
    size_t *padded;          /* [n_units] numel rounded up to a multiple of n */
    size_t *shard;           /* [n_units] padded / n */
    size_t max_padded;

    /* Per unit (docs/design.md §6 ledger; see engine.h for which are full).
     * param and the pslot ring hold cfg.param_dtype elements, grad and the
     * gslot ring cfg.grad_dtype elements; master, m, v are fp32. */
    void **param, **grad;
    float **master, **m, **v;
    size_t psize, gsize, asize; /* bytes of a param, gradient, activation element */

    int n_pslots, n_gslots; /* gathered param / gathered grad rings */
    void *pslot[ZB_ENGINE_MAX_PSLOTS];
    void *gslot[ZB_ENGINE_GSLOTS];
    /* ZB_MEM_WORKSPACE, only when the dtype is bf16 (else NULL):
     * wparam [max_padded] the fp32 copy of the unit in use (param bf16,
     * activations float),
     * wgrad [max_padded] the fp32 gradient the backward writes, and
     * wred [max shard] the reduced shard widened for AdamW (grad bf16). */
    float *wparam, *wgrad, *wred;

    zb_unit_acts *acts; /* [n_units] */
    zb_unit_workspace ws;
    void *dx[2];         /* backward gradient ping-pong [N, C], act dtype */
    float *loss_dev;     /* [1] */
    int32_t *tokens_dev, *targets_dev;
    int32_t *tokens_host, *targets_host;
    float loss_host;

    zb_event **ev_gathered;                    /* [2 * n_units]: per gather use */
    zb_event *ev_pslot_free[ZB_ENGINE_MAX_PSLOTS];
    zb_event *ev_gslot_free[ZB_ENGINE_GSLOTS];
    zb_event **ev_bwd_done, **ev_reduced, **ev_updated; /* [n_units] */
    zb_event *ev_compute, *ev_comm; /* sync mode's serialization */
    int opt_step;                   /* AdamW's t */
};

/* True when stage s keeps full parameters (0-2) or full gradients (0-1). */
static inline bool zb_engine_full_params(int stage) { return stage < 3; }
static inline bool zb_engine_full_grads(int stage) { return stage < 2; }
/* Elements of this rank's optimizer range (and reduced gradient) of a unit. */
static inline size_t zb_engine_opt_count(int stage, size_t padded, size_t shard) {
    return stage == 0 ? padded : shard;
}

#endif
