/* The ZeRO ledger (harness/metrics/ledger.h): model-state bytes against the ZeRO
 * paper's Figure 1 and the 70B example (docs/design.md §10), and
 * comm bytes per step: the closed form (3Φ vs 2Φ) and the exact per-unit form
 * against sums of zb_coll_sent_bytes, as the engine's comm counts them. */
#include <math.h>
#include <stdio.h>

#include "comm.h"
#include "ledger.h"
#include "zb_test.h"

/* Bytes in GB (1e9) rounded to one decimal, as the paper prints them. */
static double gb_1dp(uint64_t bytes) { return round((double)bytes / 1e8) / 10.0; }

static void test_zero_paper(void) {
    /* 7.5B parameters, 64 GPUs, mixed precision p = g = 2, Adam k = 12. */
    const uint64_t phi = 7500000000ull;
    const double want_gb[4] = {120.0, 31.4, 16.6, 1.9};
    zb_ledger_state s[4];
    for (int st = 0; st < 4; st++) {
        ZB_CHECK_OK(zb_ledger_state_bytes((zb_zero_stage)st, phi, 64, 2, 2, 12, &s[st]));
        ZB_CHECK(s[st].total_bytes == s[st].params_bytes + s[st].grads_bytes + s[st].optim_bytes);
        ZB_CHECK_MSG(gb_1dp(s[st].total_bytes) == want_gb[st], "stage %d: %.4f GB, paper %.1f",
                     st, (double)s[st].total_bytes / 1e9, want_gb[st]);
        printf("ZeRO paper, 7.5B on 64 GPUs, stage %d: %.4f GB per GPU (paper: %.1f)\n", st,
               (double)s[st].total_bytes / 1e9, want_gb[st]);
    }
    /* The table's terms exactly: Φ/64 = 117,187,500. */
    ZB_CHECK(s[0].total_bytes == 16 * phi);
    ZB_CHECK(s[1].params_bytes == 2 * phi && s[1].grads_bytes == 2 * phi &&
             s[1].optim_bytes == 12 * (phi / 64));
    ZB_CHECK(s[2].params_bytes == 2 * phi && s[2].grads_bytes == 2 * (phi / 64));
    ZB_CHECK(s[3].total_bytes == 16 * (phi / 64));
}

static void test_70b(void) {
    const uint64_t phi = 70000000000ull;
    zb_ledger_state s;
    ZB_CHECK_OK(zb_ledger_state_bytes(ZB_ZERO_STAGE_0, phi, 8, 2, 2, 12, &s));
    ZB_CHECK(s.total_bytes == 1120000000000ull);
    ZB_CHECK_OK(zb_ledger_state_bytes(ZB_ZERO_STAGE_3, phi, 8, 2, 2, 12, &s));
    ZB_CHECK_MSG(s.total_bytes == 140000000000ull, "70B stage 3 on 8: %llu",
                 (unsigned long long)s.total_bytes);
    ZB_CHECK(s.total_bytes > 80000000000ull); /* does not fit an 80 GB card */
    /* CPU fp32: p = g = 4, k = 12: 20 bytes per parameter unsharded. */
    ZB_CHECK_OK(zb_ledger_state_bytes(ZB_ZERO_STAGE_0, 1000, 1, 4, 4, 12, &s));
    ZB_CHECK(s.total_bytes == 20000);
    /* Φ not a multiple of n: a shard is the largest, ceil(Φ/n). */
    ZB_CHECK_OK(zb_ledger_state_bytes(ZB_ZERO_STAGE_3, 10, 4, 2, 2, 12, &s));
    ZB_CHECK(s.params_bytes == 6 && s.optim_bytes == 36);
    ZB_CHECK(zb_ledger_state_bytes((zb_zero_stage)4, phi, 8, 2, 2, 12, &s) == ZB_ERR_INVALID);
    ZB_CHECK(zb_ledger_state_bytes(ZB_ZERO_STAGE_3, phi, 0, 2, 2, 12, &s) == ZB_ERR_INVALID);
    ZB_CHECK(zb_ledger_state_bytes(ZB_ZERO_STAGE_0, UINT64_MAX / 2, 1, 2, 2, 12, &s) ==
             ZB_ERR_INVALID);
}

static void test_closed_form(void) {
    /* p = g: ZeRO-3 sends 3Φ(n-1)/n, ZeRO-1/2 and DDP 2Φ(n-1)/n. */
    double phi = 7.5e9;
    double z3 = zb_ledger_comm_bytes_per_step_f(3, phi, 64, 2, 2);
    double z2 = zb_ledger_comm_bytes_per_step_f(2, phi, 64, 2, 2);
    double z1 = zb_ledger_comm_bytes_per_step_f(1, phi, 64, 2, 2);
    double d = zb_ledger_comm_bytes_per_step_f(0, phi, 64, 2, 2);
    ZB_CHECK(z3 == 3.0 * 2 * phi * 63.0 / 64.0);
    ZB_CHECK(d == 2.0 * 2 * phi * 63.0 / 64.0 && z1 == d && z2 == d);
    ZB_CHECK(fabs(z3 / d - 1.5) < 1e-15);
    /* p != g: fp32 gradient reduction. */
    ZB_CHECK(zb_ledger_comm_bytes_per_step_f(3, 100, 4, 2, 4) == (2.0 * 2 + 4) * 100 * 0.75);
    ZB_CHECK(zb_ledger_comm_bytes_per_step_f(0, 100, 4, 2, 4) == 2.0 * 4 * 100 * 0.75);
    ZB_CHECK(zb_ledger_comm_bytes_per_step_f(3, 100, 1, 2, 2) == 0.0);
    ZB_CHECK(isnan(zb_ledger_comm_bytes_per_step_f(5, 100, 4, 2, 2)));
    ZB_CHECK(isnan(zb_ledger_comm_bytes_per_step_f(3, 100, 0, 2, 2)));
}

/* What the engine's comm counts: one collective per unit, via the comm's own
 * per-call formula. */
static uint64_t coll_sum(int stage, const uint64_t *units, int n_units, int n, int p, int g,
                         uint64_t *ag, uint64_t *rs, uint64_t *ar) {
    *ag = *rs = *ar = 0;
    for (int u = 0; u < n_units; u++) {
        size_t shard = (size_t)(units[u] / (uint64_t)n);
        if (stage == 3) *ag += 2 * zb_coll_sent_bytes(ZB_COLL_ALLGATHER, shard, (size_t)p, n);
        if (stage == 1 || stage == 2) *ag += zb_coll_sent_bytes(ZB_COLL_ALLGATHER, shard, (size_t)p, n);
        if (stage >= 1) *rs += zb_coll_sent_bytes(ZB_COLL_REDUCESCATTER, shard, (size_t)g, n);
        if (stage == 0) *ar += zb_coll_sent_bytes(ZB_COLL_ALLREDUCE, (size_t)units[u], (size_t)g, n);
    }
    return *ag + *rs + *ar;
}

static void test_exact_form(void) {
    const int ranks[] = {1, 2, 3, 4, 8};
    const uint64_t raw[] = {64 * 16, 64 * 64 + 64, 176 * 64 * 3, 256 * 64, 7, 1};
    const int n_units = (int)(sizeof raw / sizeof raw[0]);
    for (size_t ri = 0; ri < sizeof ranks / sizeof ranks[0]; ri++) {
        int n = ranks[ri];
        /* Pad each unit to a multiple of n, as the engine does. */
        uint64_t units[sizeof raw / sizeof raw[0]];
        uint64_t phi = 0;
        for (int u = 0; u < n_units; u++) {
            units[u] = (raw[u] + (uint64_t)n - 1) / (uint64_t)n * (uint64_t)n;
            phi += units[u];
        }
        for (int pg = 0; pg < 2; pg++) {
            int p = 2, g = pg == 0 ? 2 : 4;
            for (int st = 0; st < 4; st++) {
                zb_ledger_comm c;
                ZB_CHECK_OK(zb_ledger_comm_bytes_checked((zb_zero_stage)st, units, n_units, n,
                                                         p, g, &c));
                uint64_t ag, rs, ar;
                uint64_t want = coll_sum(st, units, n_units, n, p, g, &ag, &rs, &ar);
                ZB_CHECK_MSG(c.total_bytes == want && c.allgather_bytes == ag &&
                                 c.reducescatter_bytes == rs && c.allreduce_bytes == ar,
                             "stage %d, n %d, p %d, g %d: ledger %llu, comm %llu", st, n, p, g,
                             (unsigned long long)c.total_bytes, (unsigned long long)want);
                ZB_CHECK(zb_ledger_comm_bytes_per_step(st, units, n_units, n, p, g) == want);
                /* Padded units make the closed form exact for stages 1-3. */
                if (st >= 1) {
                    double f = zb_ledger_comm_bytes_per_step_f(st, (double)phi, n, p, g);
                    ZB_CHECK_MSG(fabs((double)want - f) <= 1e-9 * f, "stage %d n %d: %llu vs %.1f",
                                 st, n, (unsigned long long)want, f);
                }
            }
        }
    }
    /* DDP all-reduce: integer division per call, not once over Φ. Units of
     * 5 and 5 elements, g = 1, 3 ranks: 2*5*2/3 = 6 per call, 12 in all,
     * while 2*10*2/3 = 13. */
    const uint64_t odd[] = {5, 5};
    ZB_CHECK(zb_ledger_comm_bytes_per_step(0, odd, 2, 3, 1, 1) == 12);
    ZB_CHECK(zb_ledger_comm_bytes_per_step(0, odd, 2, 3, 1, 1) ==
             2 * zb_coll_sent_bytes(ZB_COLL_ALLREDUCE, 5, 1, 3));
    /* Sharded stages refuse units that were not padded. */
    zb_ledger_comm c;
    ZB_CHECK(zb_ledger_comm_bytes_checked(ZB_ZERO_STAGE_3, odd, 2, 3, 2, 2, &c) ==
             ZB_ERR_INVALID);
    ZB_CHECK(zb_ledger_comm_bytes_per_step(3, odd, 2, 3, 2, 2) == 0);
    ZB_CHECK(zb_ledger_comm_bytes_per_step(7, odd, 2, 1, 2, 2) == 0);
    ZB_CHECK(zb_ledger_comm_bytes_per_step(3, NULL, 0, 4, 2, 2) == 0);
    ZB_CHECK(zb_ledger_comm_bytes_checked(ZB_ZERO_STAGE_3, NULL, 2, 4, 2, 2, &c) ==
             ZB_ERR_INVALID);
    /* One rank sends nothing. */
    ZB_CHECK(zb_ledger_comm_bytes_per_step(3, odd, 2, 1, 2, 2) == 0);
}

int main(void) {
    test_zero_paper();
    test_70b();
    test_closed_form();
    test_exact_form();
    return zb_test_finish("test_ledger");
}
