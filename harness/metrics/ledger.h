/* The ZeRO ledger (docs/design.md §6): static model-state bytes per rank and the
 * bytes each rank sends per step, for stages 0 (DDP) to 3.
 *
 * Φ = parameters after padding, n = ranks, p = bytes of a parameter as
 * gathered, g = bytes of a gradient as reduced, k = optimizer bytes per
 * parameter (fp32 master + m + v = 12).
 *
 *   stage | params | grads | optimizer
 *   0     | pΦ     | gΦ    | kΦ
 *   1     | pΦ     | gΦ    | kΦ/n
 *   2     | pΦ     | gΦ/n  | kΦ/n
 *   3     | pΦ/n   | gΦ/n  | kΦ/n
 *
 * Comm bytes sent per rank per step:
 *   stage 3    : (2p + g) Φ (n-1)/n  all-gather in forward and in backward,
 *                                    one reduce-scatter of gradients
 *   stage 1, 2 : (p + g) Φ (n-1)/n   reduce-scatter of gradients, all-gather
 *                                    of the updated parameters
 *   stage 0    : 2g Φ (n-1)/n        all-reduce of gradients
 *
 * The exact integer form follows the engine: one collective per unit, each
 * unit's flat buffer padded to a multiple of n, each collective counted as
 * harness/comm/comm.c's zb_coll_sent_bytes counts it:
 *   all-gather / reduce-scatter of a unit: (numel/n) * e * (n-1)
 *   all-reduce of a unit:                  2 * numel * e * (n-1) / n
 *                                          (integer division per call)
 * so the run's counted bytes can be compared for equality. */
#ifndef ZB_LEDGER_H
#define ZB_LEDGER_H

#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum zb_zero_stage {
    ZB_ZERO_STAGE_0 = 0, /* DDP: nothing sharded */
    ZB_ZERO_STAGE_1,     /* optimizer states sharded */
    ZB_ZERO_STAGE_2,     /* + gradients */
    ZB_ZERO_STAGE_3,     /* + parameters (FSDP FULL_SHARD) */
    ZB_ZERO_STAGE_COUNT
} zb_zero_stage;

/* Static model-state bytes one rank holds. A sharded term is
 * bytes * ceil(Φ/n): the largest shard; with the engine's padding Φ is a
 * multiple of n and this is exactly bytes * Φ / n. */
typedef struct zb_ledger_state {
    uint64_t params_bytes;
    uint64_t grads_bytes;
    uint64_t optim_bytes;
    uint64_t total_bytes; /* the sum of the three */
} zb_ledger_state;

/* ZB_ERR_INVALID for a stage outside 0..3, n_ranks < 1, a negative byte
 * size, or a result past 2^64. */
zb_status zb_ledger_state_bytes(zb_zero_stage stage, uint64_t phi, int n_ranks, int p_bytes,
                                int g_bytes, int k_bytes, zb_ledger_state *out);

/* Bytes one rank sends per step, by collective kind (compare each with the
 * comm's sent_bytes[ZB_COLL_*] counter). */
typedef struct zb_ledger_comm {
    uint64_t allgather_bytes;
    uint64_t reducescatter_bytes;
    uint64_t allreduce_bytes;
    uint64_t total_bytes;
} zb_ledger_comm;

/* Exact per-unit form. padded_unit_numel[0..n_units) are the units' padded
 * element counts; for stages 1-3 each must be a multiple of n_ranks
 * (stage 0 does not shard and accepts any count). ZB_ERR_INVALID, with a
 * message naming the unit, for that or any other bad input. */
zb_status zb_ledger_comm_bytes_checked(zb_zero_stage stage, const uint64_t *padded_unit_numel,
                                       int n_units, int n_ranks, int p_bytes, int g_bytes,
                                       zb_ledger_comm *out);

/* The total of zb_ledger_comm_bytes_checked; 0 on invalid input (the reason
 * is recorded, see zb_error_message). */
uint64_t zb_ledger_comm_bytes_per_step(int stage, const uint64_t *padded_unit_numel,
                                       int n_units, int n_ranks, int p_bytes, int g_bytes);

/* The closed form for reports: (2p+g), (p+g) or 2g times Φ (n-1)/n. NaN for
 * a stage outside 0..3 or n_ranks < 1. */
double zb_ledger_comm_bytes_per_step_f(int stage, double phi, int n_ranks, double p_bytes,
                                       double g_bytes);

#ifdef __cplusplus
}
#endif
#endif
