/* The option groups shared by several benchmarks (bench_opts.h). */
#include "bench_opts.h"

#include "parse.h"

#define TB 1099511627776.0 /* 1T: the largest size a flag takes */

bool zb_opt_given(const zb_opt_seen *seen, const zb_opt *o) {
    for (int i = 0; i < seen->n; i++) {
        if (seen->given[i] == o) return true;
    }
    return false;
}

const zb_opt zb_opt_minbytes = {"minbytes", 'b', ZB_OPT_SIZE, ZB_OPT_FIELD(min_bytes), 1, TB,
                                "smallest size in bytes (gemm: smallest M=N=K); K, M, G, T suffixes"};
const zb_opt zb_opt_maxbytes = {"maxbytes", 'e', ZB_OPT_SIZE, ZB_OPT_FIELD(max_bytes), 1, TB,
                                "largest size (gemm: largest M=N=K)"};
const zb_opt zb_opt_stepfactor = {"stepfactor", 'f', ZB_OPT_INT, ZB_OPT_FIELD(step_factor), 2, 1024,
                                  "multiply the size by this each step"};

static zb_status check_range(zb_config *cfg, const zb_opt_seen *seen) {
    (void)seen;
    if (cfg->min_bytes > cfg->max_bytes) {
        char lo[32], hi[32];
        zb_format_size(cfg->min_bytes, lo, sizeof lo);
        zb_format_size(cfg->max_bytes, hi, sizeof hi);
        return ZB_FAIL(ZB_ERR_INVALID, "-b/--minbytes %s is larger than -e/--maxbytes %s", lo, hi);
    }
    return ZB_OK;
}

static const zb_opt *const sweep_range[] = {&zb_opt_minbytes, &zb_opt_maxbytes, &zb_opt_stepfactor, NULL};
const zb_opt_group zb_opts_sweep_range = {sweep_range, check_range};

static const zb_opt opt_iters = {"iters", 'n', ZB_OPT_INT, ZB_OPT_FIELD(iters), 1, 1e7, "timed iterations per size"};
static const zb_opt opt_warmup = {"warmup_iters", 'w', ZB_OPT_INT, ZB_OPT_FIELD(warmup_iters), 0, 1e6,
                                  "untimed warm-up iterations per size"};
static const zb_opt opt_check = {"check", 'c', ZB_OPT_INT, ZB_OPT_FIELD(check), 0, 1,
                                 "1: check results from seeded data (outside the timed loop), 0: skip"};
static const zb_opt opt_dtype = {"datatype", 'd', ZB_OPT_DTYPE, ZB_OPT_FIELD(dtype), 0, 0,
                                 "float or bf16 (gemm: bf16 on GPUs only)"};
static const zb_opt opt_average = {"average", 'a', ZB_OPT_INT, ZB_OPT_FIELD(average), 0, 3,
                                   "time across ranks: 0 rank 0, 1 mean, 2 min, 3 max"};
static const zb_opt opt_direct = {
    "compare-direct", 0, ZB_OPT_FLAG, ZB_OPT_FIELD(compare_direct), 0, 0,
    "also time the library called directly on the same buffers (MPI; gemm: BLAS on cpu, cuBLASLt on cuda)"};

static const zb_opt opt_direct_rounds = {
    "direct-rounds", 0, ZB_OPT_INT, ZB_OPT_FIELD(direct_rounds), 1, 1000,
    "with --compare-direct: time the harness and the direct call alternately, this many rounds in rotated "
    "order, and report each side's best round (collectives: also the median paired overhead)"};

static const zb_opt opt_force = {
    "force", 0, ZB_OPT_FLAG, ZB_OPT_FIELD(force), 0, 0,
    "allocate even when the largest buffers per rank exceed the memory a rank has (else refused, exit 2)"};

static const zb_opt *const sweep_run[] = {&opt_iters,   &opt_warmup, &opt_check,         &opt_dtype,
                                          &opt_average, &opt_direct, &opt_direct_rounds, &opt_force, NULL};
const zb_opt_group zb_opts_sweep_run = {sweep_run, NULL};

const zb_opt zb_opt_straggler_pct = {
    "straggler-pct", 0, ZB_OPT_REAL, ZB_OPT_FIELD(straggler_pct), 0, 1e6,
    "name the ranks whose figures deviate from the median rank by more than this % (percentages: points)"};

const zb_opt zb_opt_model = {"model", 0, ZB_OPT_TEXT, ZB_OPT_FIELD(model), 0, 0,
                             "model profile (profiles/models/NAME.json)"};
