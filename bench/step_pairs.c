/* --mode both's adaptive pairs, as hyperfine and criterion run samples: the
 * options and what they imply. The rule itself is the pure
 * zb_paired_stop (harness/metrics/paired.h); step_run.c applies it after
 * every pair. --steps given alone keeps its old meaning (exactly that many
 * pairs); with --precision, or with neither, it is the minimum. */
#include "step.h"

#define PAIRS_OPT(name, kind, field, lo, hi, help) \
    static const zb_opt opt_##field = {name, 0, kind, ZB_OPT_FIELD(field), lo, hi, help}

PAIRS_OPT("precision", ZB_OPT_REAL, precision_pct, 0, 100,
          "--mode both: after --steps pairs, run more until the 95 % interval of the step-time difference is "
          "within +-P % of sync's median step (0: exactly --steps pairs; default 5, off when --steps is given "
          "alone)");
PAIRS_OPT("max-steps", ZB_OPT_INT, max_steps, 0, 1e6,
          "--mode both with --precision: at most this many pairs (default 10 x --steps, at least 100)");
PAIRS_OPT("max-time", ZB_OPT_REAL, max_time_s, 0, 1e7,
          "--mode both with --precision: stop adding pairs once the measured steps took this many seconds "
          "(default 60)");

int zb_step_max_pairs(const zb_config *cfg) {
    if (cfg->mode != ZB_MODE_BOTH || !(cfg->precision_pct > 0)) return (int)cfg->steps;
    return (int)(cfg->max_steps > cfg->steps ? cfg->max_steps : cfg->steps);
}

static zb_status pairs_check(zb_config *cfg, const zb_opt_seen *seen) {
    bool precision = zb_opt_given(seen, &opt_precision_pct);
    if (!precision && zb_opt_given(seen, &zb_opt_steps)) cfg->precision_pct = 0.0;
    if (cfg->max_steps == 0) cfg->max_steps = cfg->steps * 10 > 100 ? cfg->steps * 10 : 100;
    if (zb_opt_given(seen, &opt_max_steps) && cfg->max_steps < cfg->steps) {
        return ZB_FAIL(ZB_ERR_INVALID, "--max-steps %lld: expected at least --steps (%lld)",
                       (long long)cfg->max_steps, (long long)cfg->steps);
    }
    return ZB_OK;
}

static const zb_opt *const pairs_opts[] = {&opt_precision_pct, &opt_max_steps, &opt_max_time_s, NULL};
const zb_opt_group zb_step_pairs_group = {pairs_opts, pairs_check};
