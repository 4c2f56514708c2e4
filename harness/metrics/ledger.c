/* ZeRO ledger: model-state bytes per rank and comm bytes per step, exact
 * integer and closed forms (formulas in ledger.h). Integer arithmetic checks
 * every product and sum for overflow. */
#include "ledger.h"

#include <math.h>
#include <string.h>

static int zb_mul_ok(uint64_t a, uint64_t b, uint64_t *out) {
    if (a != 0 && b > UINT64_MAX / a) return 0;
    *out = a * b;
    return 1;
}

static int zb_add_ok(uint64_t a, uint64_t b, uint64_t *out) {
    if (b > UINT64_MAX - a) return 0;
    *out = a + b;
    return 1;
}

static zb_status zb_ledger_check_common(int stage, int n_ranks, int p_bytes, int g_bytes) {
    if (stage < 0 || stage >= ZB_ZERO_STAGE_COUNT)
        return ZB_FAIL(ZB_ERR_INVALID, "ZeRO stage %d: accepted values are 0, 1, 2, 3", stage);
    if (n_ranks < 1) return ZB_FAIL(ZB_ERR_INVALID, "ranks = %d: must be >= 1", n_ranks);
    if (p_bytes < 0 || g_bytes < 0)
        return ZB_FAIL(ZB_ERR_INVALID, "parameter bytes %d, gradient bytes %d: must be >= 0",
                       p_bytes, g_bytes);
    return ZB_OK;
}

zb_status zb_ledger_state_bytes(zb_zero_stage stage, uint64_t phi, int n_ranks, int p_bytes,
                                int g_bytes, int k_bytes, zb_ledger_state *out) {
    ZB_TRY(zb_ledger_check_common((int)stage, n_ranks, p_bytes, g_bytes));
    if (k_bytes < 0) return ZB_FAIL(ZB_ERR_INVALID, "optimizer bytes %d: must be >= 0", k_bytes);
    uint64_t n = (uint64_t)n_ranks;
    uint64_t shard = phi / n + (phi % n != 0); /* ceil(Φ/n), the largest shard */
    uint64_t p_numel = stage >= ZB_ZERO_STAGE_3 ? shard : phi;
    uint64_t g_numel = stage >= ZB_ZERO_STAGE_2 ? shard : phi;
    uint64_t k_numel = stage >= ZB_ZERO_STAGE_1 ? shard : phi;
    zb_ledger_state s;
    memset(&s, 0, sizeof s);
    if (!zb_mul_ok(p_numel, (uint64_t)p_bytes, &s.params_bytes) ||
        !zb_mul_ok(g_numel, (uint64_t)g_bytes, &s.grads_bytes) ||
        !zb_mul_ok(k_numel, (uint64_t)k_bytes, &s.optim_bytes) ||
        !zb_add_ok(s.params_bytes, s.grads_bytes, &s.total_bytes) ||
        !zb_add_ok(s.total_bytes, s.optim_bytes, &s.total_bytes)) {
        return ZB_FAIL(ZB_ERR_INVALID, "model-state bytes for %llu parameters overflow 64 bits",
                       (unsigned long long)phi);
    }
    *out = s;
    return ZB_OK;
}

/* Bytes one rank sends in an all-gather or reduce-scatter of a unit of
 * `numel` elements (numel/n per rank): (numel/n) * e * (n-1). */
static int zb_shard_coll_bytes(uint64_t numel, uint64_t e, uint64_t n, uint64_t *out) {
    uint64_t b;
    return zb_mul_ok(numel / n, e, &b) && zb_mul_ok(b, n - 1, out);
}

/* Bytes one rank sends in an all-reduce of `numel` elements:
 * 2 * numel * e * (n-1) / n, the division last, as zb_coll_sent_bytes. */
static int zb_allreduce_bytes(uint64_t numel, uint64_t e, uint64_t n, uint64_t *out) {
    uint64_t b;
    if (!zb_mul_ok(numel, e, &b) || !zb_mul_ok(b, 2, &b) || !zb_mul_ok(b, n - 1, &b)) return 0;
    *out = b / n;
    return 1;
}

zb_status zb_ledger_comm_bytes_checked(zb_zero_stage stage, const uint64_t *padded_unit_numel,
                                       int n_units, int n_ranks, int p_bytes, int g_bytes,
                                       zb_ledger_comm *out) {
    ZB_TRY(zb_ledger_check_common((int)stage, n_ranks, p_bytes, g_bytes));
    if (n_units < 0 || (n_units > 0 && !padded_unit_numel))
        return ZB_FAIL(ZB_ERR_INVALID, "ledger: %d units at %p", n_units,
                       (const void *)padded_unit_numel);
    uint64_t n = (uint64_t)n_ranks, p = (uint64_t)p_bytes, g = (uint64_t)g_bytes;
    /* Collectives per unit per step: all-gathers of parameters and
     * reduce-scatters / all-reduces of gradients. */
    uint64_t n_ag = stage == ZB_ZERO_STAGE_3 ? 2 : (stage == ZB_ZERO_STAGE_0 ? 0 : 1);
    uint64_t n_rs = stage == ZB_ZERO_STAGE_0 ? 0 : 1;
    uint64_t n_ar = stage == ZB_ZERO_STAGE_0 ? 1 : 0;
    zb_ledger_comm c;
    memset(&c, 0, sizeof c);
    for (int u = 0; u < n_units; u++) {
        uint64_t numel = padded_unit_numel[u];
        if (stage != ZB_ZERO_STAGE_0 && numel % n != 0) {
            return ZB_FAIL(ZB_ERR_INVALID,
                           "ledger: unit %d has %llu elements, not a multiple of %d ranks "
                           "(stages 1-3 shard padded units)",
                           u, (unsigned long long)numel, n_ranks);
        }
        uint64_t ag = 0, rs = 0, ar = 0;
        int ok = zb_shard_coll_bytes(numel, p, n, &ag) && zb_mul_ok(ag, n_ag, &ag) &&
                 zb_shard_coll_bytes(numel, g, n, &rs) && zb_mul_ok(rs, n_rs, &rs) &&
                 zb_allreduce_bytes(numel, g, n, &ar) && zb_mul_ok(ar, n_ar, &ar) &&
                 zb_add_ok(c.allgather_bytes, ag, &c.allgather_bytes) &&
                 zb_add_ok(c.reducescatter_bytes, rs, &c.reducescatter_bytes) &&
                 zb_add_ok(c.allreduce_bytes, ar, &c.allreduce_bytes);
        if (!ok) {
            return ZB_FAIL(ZB_ERR_INVALID, "ledger: comm bytes overflow 64 bits at unit %d", u);
        }
    }
    if (!zb_add_ok(c.allgather_bytes, c.reducescatter_bytes, &c.total_bytes) ||
        !zb_add_ok(c.total_bytes, c.allreduce_bytes, &c.total_bytes))
        return ZB_FAIL(ZB_ERR_INVALID, "ledger: comm bytes overflow 64 bits");
    *out = c;
    return ZB_OK;
}

uint64_t zb_ledger_comm_bytes_per_step(int stage, const uint64_t *padded_unit_numel,
                                       int n_units, int n_ranks, int p_bytes, int g_bytes) {
    zb_ledger_comm c;
    if (zb_ledger_comm_bytes_checked((zb_zero_stage)stage, padded_unit_numel, n_units, n_ranks,
                                     p_bytes, g_bytes, &c) != ZB_OK)
        return 0;
    return c.total_bytes;
}

double zb_ledger_comm_bytes_per_step_f(int stage, double phi, int n_ranks, double p_bytes,
                                       double g_bytes) {
    if (n_ranks < 1) return NAN;
    double frac = (double)(n_ranks - 1) / (double)n_ranks;
    switch (stage) {
    case ZB_ZERO_STAGE_0: return 2.0 * g_bytes * phi * frac;
    case ZB_ZERO_STAGE_1:
    case ZB_ZERO_STAGE_2: return (p_bytes + g_bytes) * phi * frac;
    case ZB_ZERO_STAGE_3: return (2.0 * p_bytes + g_bytes) * phi * frac;
    default: break;
    }
    return NAN;
}
