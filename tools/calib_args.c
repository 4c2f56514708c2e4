/* zerobench calibrate's options (calib.h): the usage text, parsing and
 * every check that can be made before a child runs (bad input is exit 2
 * with nothing run), with the --quick and default sweep sizes filled in. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "model.h"
#include "dtype.h"
#include "out_path.h"
#include "parse.h"
#include "profile.h"
#include "results.h"
#include "tool_args.h"

void zb_calib_usage(FILE *f) {
    fprintf(f,
            "usage: zerobench calibrate -o PROFILE.json [--backend B] [--comm C] [--nodes N] [--gpus-per-node G]\n"
            "                           [--emulate-nodes] [--hostfile FILE] [--hw HW] [--base BASE] [--dtype float|bf16]\n"
            "                           [--threads T] [--model M] [--steps N]\n"
            "                           [--gemm-min D] [--gemm-max D] [--coll-min BYTES] [--coll-max BYTES]\n"
            "                           [--iters N] [--timeout S] [--quick]\n"
            "Runs the GEMM and collective sweeps here and writes a hardware profile fitted to them.\n"
            "  -o FILE              the profile to write (atomically)\n"
            "  --backend, --comm    passed to every run (default auto)\n"
            "  --nodes, --gpus-per-node, --emulate-nodes, --hostfile\n"
            "                       the job the collectives run on (default 1 node of 2 ranks); the links inside a\n"
            "                       node are fitted on one node, across nodes on the whole job; the GEMM, memory,\n"
            "                       attention runs use one node of G ranks, as the step's ranks run, the step run the job\n"
            "  --hw HW              the hardware profile the runs take (peaks; default: the backend's)\n"
            "  --base BASE          the profile what calibrate cannot fit comes from, each such parameter\n"
            "                       marked so (default: --hw, else the one the runs use)\n"
            "  --threads T          BLAS threads per rank in the runs (default: as the step: cores / G)\n"
            "  --model M            the shape of the attention and step runs (default: the step's, tiny)\n"
            "  --steps N            measured steps of the sync-vs-prefetch step run (default 40)\n"
            "  --dtype D            GEMM and collective dtype (default float; bf16 on GPUs)\n"
            "  --gemm-min/-max D    square GEMM sizes, doubling (default 8 .. 1024)\n"
            "  --coll-min/-max B    collective sizes, x4 (default: the step's, the model's largest unit rounded up to a\n"
            "                       power of two and down 256x, at least 4K; the memory sweep: 4K .. 16M)\n"
            "  --iters N            timed iterations per size (default 10; GEMM and element-wise: at least 200)\n"
            "  --timeout S          seconds each child run may take (default 600)\n"
            "  --quick              a short sweep (GEMM 8 .. 128, collectives 1K .. 64K, 3 iterations, 4 steps)\n");
}

zb_status zb_calib_parse_args(int argc, char **argv, calib_args *a) {
    memset(a, 0, sizeof *a);
    const zb_tool_opt opts[] = {
        {"-o", &a->out}, {"--output", &a->out}, {"--backend", &a->backend}, {"--comm", &a->comm},
        {"--nodes", &a->nodes}, {"--gpus-per-node", &a->gpn}, {"--hostfile", &a->hostfile}, {"--hw", &a->hw},
        {"--base", &a->base}, {"--threads", &a->threads}, {"--model", &a->model}, {"--steps", &a->steps},
        {"--dtype", &a->dtype}, {"--gemm-min", &a->gemm_min}, {"--gemm-max", &a->gemm_max},
        {"--coll-min", &a->coll_min}, {"--coll-max", &a->coll_max}, {"--iters", &a->iters},
        {"--timeout", &a->timeout}};
    const zb_tool_switch switches[] = {{"--emulate-nodes", &a->emulate}, {"--quick", &a->quick}};
    ZB_TRY(zb_tool_parse_args("calibrate", argc, argv, opts, sizeof opts / sizeof opts[0], switches,
                              sizeof switches / sizeof switches[0]));
    if (!a->out) return ZB_FAIL(ZB_ERR_INVALID, "calibrate: -o PROFILE.json is required (the profile to write)");
    return ZB_OK;
}

static zb_status check_int(const char *flag, const char *text, int64_t lo, int64_t hi) {
    int64_t v;
    char shown[72];
    if (zb_parse_int64(text, &v) != ZB_OK || v < lo || v > hi) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': accepted: an integer from %lld to %lld", flag,
                       zb_results_shown_path(text, shown), (long long)lo, (long long)hi);
    }
    return ZB_OK;
}

static zb_status check_size(const char *flag, const char *text) {
    uint64_t v;
    char shown[72];
    if (zb_parse_size(text, &v) != ZB_OK || v == 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': accepted: a size such as 4096, 4K, 16M",
                       flag, zb_results_shown_path(text, shown));
    }
    return ZB_OK;
}

/* The collective sizes not given: the span of the step's own collectives,
 * from the model's largest unit (its all-gather's output and its
 * reduce-scatter's input, in the sweep's dtype) rounded up to a power of
 * two, down 256x in four x4 steps (at least 4K). One alpha-beta line
 * does not hold from 4K to megabytes on every link: the cluster in a box's
 * shaper (ci/cluster, tbf with a 1 ms burst) passes a 64K all-gather at
 * 0.18 GB/s busbw and the megabyte ones at its 0.12 rate, and a fit over
 * 4K .. 16M said 0.16 GB/s, 25 % fast at the medium model's 12-17 MB
 * units. Over the step's span the fit answers for what the step sends. */
static void step_coll_range(calib_args *a, zb_dtype d) {
    zb_model_profile mp;
    zb_model_cfg cfg;
    double largest = 0;
    if (zb_model_profile_load(a->model ? a->model : "tiny", &mp) == ZB_OK) {
        zb_model_cfg_from_profile(&mp, 0, &cfg);
        for (int u = 0; u < zb_model_n_units(&cfg); u++) {
            double b = (double)zb_model_unit_numel(&cfg, u) * (double)zb_dtype_size(d);
            if (b > largest) largest = b;
        }
    }
    uint64_t hi = 16 * 1024, lo;
    while ((double)hi < largest && hi < (1ull << 40)) hi *= 2;
    lo = hi / 256 > 4096 ? hi / 256 : 4096;
    snprintf(a->coll_range[0], sizeof a->coll_range[0], "%llu", (unsigned long long)lo);
    snprintf(a->coll_range[1], sizeof a->coll_range[1], "%llu", (unsigned long long)hi);
    if (!a->coll_min) a->coll_min = a->coll_range[0];
    if (!a->coll_max) a->coll_max = a->coll_range[1];
}

/* Everything that can be checked before anything runs. */
zb_status zb_calib_validate(calib_args *a) {
    char why[ZB_ERROR_MAX], shown[72];
    if (!a->out[0]) return ZB_FAIL(ZB_ERR_INVALID, "-o '': expected a file path");
    ZB_TRY(zb_out_path_check("-o", a->out));
    const zb_path_use uses[] = {{"-o", a->out, true}, {"--hw", a->hw, false}, {"--hostfile", a->hostfile, false},
                                {"--base", a->base, false}};
    ZB_TRY(zb_paths_distinct(uses, 4));
    if (a->quick) {
        if (!a->steps) a->steps = "4";
        if (!a->gemm_min) a->gemm_min = "8";
        if (!a->gemm_max) a->gemm_max = "128";
        if (!a->coll_min) a->coll_min = "1K";
        if (!a->coll_max) a->coll_max = "64K";
        if (!a->iters) a->iters = "3";
    }
    if (!a->gemm_min) a->gemm_min = "8";
    if (!a->steps) a->steps = "40"; /* pairs for the paired slowdown fits: 10 left them unstable (issue 21) */
    ZB_TRY(check_int("--steps", a->steps, 2, 100000));
    if (a->threads) ZB_TRY(check_int("--threads", a->threads, 1, 4096));
    if (a->model) {
        zb_model_profile mp;
        if (zb_model_profile_load(a->model, &mp) != ZB_OK) {
            return ZB_FAIL(ZB_ERR_INVALID, "--model '%s': %s", zb_results_shown_path(a->model, shown),
                           zb_error_text(why, sizeof why));
        }
    }
    if (!a->gemm_max) a->gemm_max = "1024";
    if (!a->iters) a->iters = "10";
    if (!a->timeout) a->timeout = "600";
    if (!a->dtype) a->dtype = "float";
    if (!a->backend) a->backend = "auto";
    if (!a->comm) a->comm = "auto";
    if (a->nodes) ZB_TRY(check_int("--nodes", a->nodes, 1, 1 << 16));
    if (a->gpn) ZB_TRY(check_int("--gpus-per-node", a->gpn, 1, 1 << 10));
    ZB_TRY(check_int("--gemm-min", a->gemm_min, 1, 1 << 16));
    ZB_TRY(check_int("--gemm-max", a->gemm_max, 1, 1 << 16));
    if (atoi(a->gemm_max) < 2 * atoi(a->gemm_min)) {
        return ZB_FAIL(ZB_ERR_INVALID, "--gemm-max %s: at least twice --gemm-min %s (two sizes to fit)", a->gemm_max,
                       a->gemm_min);
    }
    int n_gemm = 0;
    for (long d = atol(a->gemm_min); d <= atol(a->gemm_max); d *= 2) n_gemm++;
    if (n_gemm > ZB_SIM_MAX_GEMM_EFF) {
        return ZB_FAIL(ZB_ERR_INVALID, "--gemm-min %s --gemm-max %s: %d doubling sizes; a profile's gemm_efficiency "
                       "table holds at most %d", a->gemm_min, a->gemm_max, n_gemm, ZB_SIM_MAX_GEMM_EFF);
    }
    zb_dtype d;
    if (zb_dtype_parse(a->dtype, &d) != ZB_OK) {
        return ZB_FAIL(ZB_ERR_INVALID, "--dtype '%s': accepted: float, bf16", zb_results_shown_path(a->dtype, shown));
    }
    if (!a->coll_min || !a->coll_max) step_coll_range(a, d);
    ZB_TRY(check_size("--coll-min", a->coll_min));
    ZB_TRY(check_size("--coll-max", a->coll_max));
    uint64_t lo = 0, hi = 0;
    zb_parse_size(a->coll_min, &lo);
    zb_parse_size(a->coll_max, &hi);
    if (hi < 4 * lo) {
        return ZB_FAIL(ZB_ERR_INVALID, "--coll-max %s: at least 4 times --coll-min %s (two sizes to fit)",
                       a->coll_max, a->coll_min);
    }
    ZB_TRY(check_int("--iters", a->iters, 1, 1000000));
    double t;
    if (zb_parse_double(a->timeout, &t) != ZB_OK || !(t > 0)) {
        return ZB_FAIL(ZB_ERR_INVALID, "--timeout '%s': accepted: a positive number of seconds",
                       zb_results_shown_path(a->timeout, shown));
    }
    const char *const flags[2] = {"--hw", "--base"};
    const char *const names[2] = {a->hw, a->base};
    for (int i = 0; i < 2; i++) {
        zb_hw_profile hw;
        if (names[i] && zb_hw_profile_load(names[i], &hw) != ZB_OK) {
            return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': %s", flags[i], zb_results_shown_path(names[i], shown),
                           zb_error_text(why, sizeof why));
        }
    }
    return ZB_OK;
}
