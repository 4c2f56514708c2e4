/* The step benchmark's part of --trace: which steps the trace file writes
 * (--trace-steps) and the marks that make each written step a slice of its
 * own (trace.h: phases and step marks; docs/design.md §7).
 *
 * Steps are numbered 1-based within each run (a stage and schedule), warm-up
 * steps first; with --mode both the schedules' steps interleave and each
 * schedule numbers its own (the progress lines count both together). By default a trace writes
 * each run's first ZB_TRACE_STEPS_DEFAULT measured steps, so a long run does
 * not write gigabytes; the records of a step left out are dropped when the
 * step ends, and the trace's otherData names what was left out. */
#ifndef ZB_STEP_TRACE_H
#define ZB_STEP_TRACE_H

#include <stdint.h>

#include "bench.h"
#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_TRACE_STEPS_DEFAULT 10

/* "A-B" (1 <= A <= B), "A" (A-A) or "all" (1 to the last step: *last =
 * INT64_MAX). ZB_ERR_INVALID naming --trace-steps, the value and what is
 * accepted. */
zb_status zb_trace_steps_parse(const char *text, int64_t *first, int64_t *last);

/* The step options' combination check: parses --trace-steps into
 * cfg->trace_step_first/last, which needs --trace and a first step the run
 * reaches (warm-up + measured steps). */
zb_status zb_step_trace_check(zb_config *cfg, const zb_opt_seen *seen);

/* One run's trace state: its phase and the steps it writes (1-based, inclusive). */
typedef struct zb_step_trace {
    bool to_file; /* --trace given: marks and drops apply */
    int phase;
    int64_t first, last;
} zb_step_trace;

/* Starts a run's phase in the trace (every rank alike). */
void zb_step_trace_begin(zb_bench_ctx *ctx, zb_step_mode mode, int stage, zb_step_trace *st);

/* After the run's step `index` (from 1, warm-up steps first), whose
 * records start at index first_record: marks the step when it is written,
 * else drops its records. Measurements that read the step's records run
 * before this. */
void zb_step_trace_end_step(zb_bench_ctx *ctx, const zb_step_trace *st, int index, bool warmup,
                            size_t first_record, const zb_step_result *r);

#ifdef __cplusplus
}
#endif
#endif
