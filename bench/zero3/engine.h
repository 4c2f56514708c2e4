/* The ZeRO engine: one sharded data-parallel training step of the model in
 * bench/zero3/model.h, at ZeRO stage 0 (DDP), 1, 2 or 3, issued on a compute
 * stream and a comm stream in one of two schedules.
 *
 *   sync      every collective waits for the compute issued before it, and
 *             the compute issued after it waits for the collective: nothing
 *             can overlap (ordered by events, no host synchronization).
 *   prefetch  the comm stream gathers the next unit (forward: l+1, backward:
 *             l-1) while the compute stream runs unit l, and reduce-scatters
 *             unit l's gradients while unit l-1's backward runs. At most
 *             prefetch_depth gathered units are alive ahead of use (FSDP's
 *             rate limiter), enforced by events on a ring of gathered
 *             buffers.
 *
 * Dtypes: the compute-dtype parameters (param_shard, gathered_param) are
 * param_dtype (p = 4 or 2 bytes); the fp32 master copy, m and v stay fp32
 * (k = 12); parameter gradients are computed in fp32 (the weight GEMMs
 * accumulate and write fp32 behind bf16 inputs) and, with grad_dtype bf16,
 * cast to bf16 for the reduction and kept so (grad_shard, gathered_grad:
 * g = 2). act_dtype is the storage of activations and of the parameters as
 * the math reads them (unit.h): bf16 needs bf16 params, which the kernels
 * and GEMMs then read in place (mixed precision as on GPUs: bf16 storage,
 * fp32 math and accumulation). float activations with bf16 params cast
 * each use's unit into one fp32 working buffer (bf16 comm, fp32 math).
 *
 * Memory per rank (tags of device.h; Φ_u = unit u padded to a multiple of n;
 * sizes in elements, times p, g or 4 bytes):
 *   param_shard    p x: stage 3: Φ_u/n per unit; stages 0-2: Φ_u (full params)
 *   grad_shard     g x: stages 2-3: Φ_u/n; stages 0-1: Φ_u (full gradients)
 *   optim_state    fp32 master + m + v: 3 Φ_u/n (stage 0: 3 Φ_u)
 *   gathered_param p x, stage 3 only: a ring of S buffers of max Φ_u
 *                  (S = 1 in sync, 1 + prefetch_depth in prefetch)
 *   gathered_grad  g x, stages 2-3: a ring of G full-gradient buffers of max
 *                  Φ_u (G = 1 in sync, 2 in prefetch: one written, one reduced)
 *   activation     each unit's saved activations, the two backward
 *                  gradient buffers [B*T, C] (act_dtype), the loss, the
 *                  tokens and targets
 *   workspace      the backward/recompute workspace (act_dtype); with bf16
 *                  params and float activations, the fp32 working copy of
 *                  one unit (max Φ_u); with bf16 gradients,
 *                  the fp32 gradient the backward writes (max Φ_u) and the
 *                  fp32 reduced shard AdamW reads (max Φ_u/n; stage 0 max Φ_u)
 * Forward and backward read the gathered buffer (stage 3) or the full
 * parameters (stages 0-2), through the fp32 working copy when the params
 * are bf16 and the activations float. The
 * engine keeps fp32 master weights apart from the compute-dtype parameters
 * even when both are fp32 (CPU), so the memory ledger has docs/design.md §6's
 * shape (p = g = 4, k = 12 for float; p = g = 2 for bf16). After AdamW the
 * master is copied (fp32) or cast (bf16) into the compute-dtype params. */
#ifndef ZB_ZERO3_ENGINE_H
#define ZB_ZERO3_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "comm.h"
#include "device.h"
#include "kernels.h"
#include "ledger.h"
#include "model.h"
#include "optim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The two schedules (docs/design.md, "The engine"). */
typedef enum zb_step_mode { ZB_MODE_SYNC = 0, ZB_MODE_PREFETCH = 1 } zb_step_mode;

typedef struct zb_engine_cfg {
    zb_model_cfg model;
    int stage;            /* 0..3 */
    zb_step_mode mode;    /* ZB_MODE_SYNC or ZB_MODE_PREFETCH */
    bool recompute;       /* full activation recomputation */
    int prefetch_depth;   /* >= 1; used in prefetch mode */
    zb_adamw_cfg opt;
    zb_dtype param_dtype; /* compute-dtype params: ZB_DTYPE_F32 (0) or ZB_DTYPE_BF16 */
    zb_dtype grad_dtype;  /* gradients as reduced: ZB_DTYPE_F32 or ZB_DTYPE_BF16 */
    zb_dtype act_dtype;   /* activations (and params as read): float, or bf16
                             with param_dtype bf16 */
    double test_delay_ms; /* test hook (harness/core/test_hook.h): compute added to each step; 0: none */
    /* The device's per-GEMM-stream workspace (zb_device_ops), which the
     * ledger adds once: the engine runs GEMMs on its compute stream only.
     * zb_engine_create sets it from the device; 0 where none is given. */
    size_t gemm_stream_workspace_bytes;
} zb_engine_cfg;

typedef struct zb_engine zb_engine;

/* What one step left behind on this rank. */
typedef struct zb_step_result {
    float loss;              /* this rank's mean loss over its B*T tokens */
    int64_t start_ns, end_ns; /* device clock (zb_dev_now_ns) around issue ... all streams done */
    uint64_t sent_bytes;     /* by the comm-volume formula, all collectives */
} zb_step_result;

/* Allocates and initializes everything (collective: the stage 0-2
 * parameters are initialized identically on every rank without comm). */
zb_status zb_engine_create(const zb_engine_cfg *cfg, zb_device *dev, zb_comm *comm,
                           zb_stream *compute, zb_stream *comm_stream, zb_engine **out);
void zb_engine_destroy(zb_engine *e);

/* Runs training step `step` (0-based; it selects the data) and waits for it. */
zb_status zb_engine_step(zb_engine *e, int step, zb_step_result *out);

/* Switches the schedule of the next steps, on the same training state
 * (parameters, optimizer state, step count): sync and prefetch compute the
 * same values, so a run may interleave them (the step's paired A/B). The
 * gathered rings take the new schedule's size (slots freed to the pool or
 * allocated), so memory and the ledger are the new schedule's. Call
 * between steps. */
zb_status zb_engine_set_mode(zb_engine *e, zb_step_mode mode);

int zb_engine_n_units(const zb_engine *e);
/* Unit u's padded size and this rank's shard range [begin, begin + count). */
void zb_engine_unit_shard(const zb_engine *e, int unit, size_t *padded, size_t *begin,
                          size_t *count);
/* Copies this rank's shard of unit u's fp32 master parameters to host
 * memory `dst` (count elements, see zb_engine_unit_shard); stream-synced. */
zb_status zb_engine_read_shard(zb_engine *e, int unit, float *dst);

/* The bytes the formulas of docs/design.md §6 say each tag must peak at, and the comm
 * bytes per step, for this configuration (engine_ledger.c). */
void zb_engine_expected_peaks(const zb_engine *e, size_t peak_bytes[ZB_MEM_TAG_COUNT]);
uint64_t zb_engine_expected_comm_bytes(const zb_engine *e);

/* The same from a configuration alone, before any engine exists (the
 * step's "does it fit" check, zerobench plan): the per-tag peaks on each of
 * n_ranks ranks, and the comm bytes each rank sends per step by collective
 * kind. ZB_ERR_INVALID for a model that does not validate, n_ranks < 1, a
 * stage outside 0..3, or model states past 2^64 bytes. */
zb_status zb_engine_predict_peaks(const zb_engine_cfg *cfg, int n_ranks, size_t peak_bytes[ZB_MEM_TAG_COUNT]);
zb_status zb_engine_predict_comm(const zb_engine_cfg *cfg, int n_ranks, zb_ledger_comm *out);

/* Predicted peak bytes per rank before anything is allocated (for the
 * "does it fit" check): the sum of the predicted per-tag peaks of device
 * memory (host staging excluded). */
zb_status zb_engine_predict_bytes(const zb_engine_cfg *cfg, int n_ranks, size_t *bytes);

#ifdef __cplusplus
}
#endif
#endif
