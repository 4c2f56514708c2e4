/* The trace in Kineto's layout (PyTorch profiler's JSON), which Holistic
 * Trace Analysis (HTA) reads: `--trace DIR --trace-format kineto` writes
 * one file per rank, DIR/rank-R.pt.trace.json, so that
 * TraceAnalysis(trace_dir=DIR) finds every rank (docs/design.md §7). A
 * trace of several runs (the step's --mode both, --stage all) writes one
 * such folder per run, DIR/stage-S-MODE/ (HTA reads a folder as one run;
 * the two schedules' steps would mix).
 *
 * Each file holds what HTA's analyses read, in the shapes HTA 0.5 parses:
 *   - "distributedInfo" first, {"backend", "rank": R, "world_size"}, with a
 *     space after each colon: HTA maps a file to its rank by the first line
 *     matching "rank":\s+N, and without it reads every file as rank 0;
 *   - every written step as a complete event ProfilerStep#I (cat
 *     user_annotation, I the step's index, 1-based over the run's warm-up
 *     and measured steps) on the rank's steps track;
 *   - every record whose start lies in a written step (clipped to the
 *     step's window, the window zerobench measures overlap in) as a complete
 *     event with cat "kernel" (compute, comm) or "gpu_memcpy" (copies) and
 *     args "stream" = stream id + 1 (an integer >= 1: HTA reads events with
 *     stream -1 as host events) and "correlation" = "External id" = that of
 *     its step's ProfilerStep, which is how HTA assigns a kernel to its
 *     iteration (the trace records no host enqueue time, so no launch
 *     events are made up); a trace without steps (the collective
 *     benchmarks) writes every record, each with a correlation of its own;
 *   - names HTA classifies as zerobench does (zb_kineto_kernel_name);
 *   - zerobench's own args (unit, op, kind, bytes, flops, coll, step) and a
 *     "zerobench" object (clock, clock_sync, trace_steps, what was left out).
 * Times are microseconds from the earliest event of any rank, on rank 0's
 * clock, as in the Chrome file. */
#ifndef ZB_TRACE_KINETO_H
#define ZB_TRACE_KINETO_H

#include <jansson.h>
#include <stddef.h>

#include "clock_sync.h"
#include "trace_events.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The file name of rank R inside the folder: "rank-R.pt.trace.json" (the
 * ending PyTorch's profiler gives its traces). */
#define ZB_KINETO_FILE_FMT "rank-%d.pt.trace.json"
/* A run's folder inside DIR when the trace holds several: stage, mode. */
#define ZB_KINETO_RUN_FMT "stage-%d-%s"

/* A record's event name, which HTA 0.5 classifies by (hta/utils/utils.py:
 * communication matches ^nccl.*Kernel, memory ^Memcpy|^Memset|^dma,
 * computation any other name holding neither "Memcpy" nor "Sync"):
 *   comm:    "ncclDevKernel_AllGather (LABEL)" (ReduceScatter, AllReduce,
 *            Barrier; "Comm" for a comm record of no collective, such as a
 *            staging copy on the comm stream);
 *   copy:    "Memcpy LABEL";
 *   compute: LABEL, or where HTA would not read LABEL as computation, "op "
 *            and LABEL with "Sync" and "Memcpy" lowered ("sync", "memcpy").
 * Truncated to n - 1 bytes. */
void zb_kineto_kernel_name(const zb_trace_record *r, char *out, size_t n);

/* Rank `rank`'s file of run `phase` (-1: every step) (pure, for tests):
 * `desc` (borrowed, NULL: none) is
 * copied into the "zerobench" object, `comm` names distributedInfo's
 * backend (NULL: "unknown"). A malloc'ed text of *len bytes, NULL when out
 * of memory. */
char *zb_kineto_rank_text(const zb_trace_export_input *in, int rank, int phase, const char *comm,
                          const json_t *desc, size_t *len);

/* Before any work: `dir` may be written (zb_out_dir_check) and holds no
 * file HTA would read as a rank's trace besides ours (a name ending in
 * .json or .gz other than rank-N.pt.trace.json). ZB_ERR_INVALID naming
 * `flag` and the file. */
zb_status zb_kineto_dir_check(const char *flag, const char *dir);

/* True when `path` ("" or NULL: no) ends in .json or .gz and lies directly
 * in `dir`: HTA would read it as a rank's trace. */
bool zb_kineto_would_read(const char *dir, const char *path);

/* Collective: gathers every rank's trace to rank 0 (trace_gather.h), which
 * creates `dir` (and a run's folder in it) when absent and writes each rank's file atomically, never
 * through a link (atomic_file.h), then removes rank-K.pt.trace.json files
 * of ranks K this job does not have (left by a larger run, HTA would read
 * them). `info`'s keys (NULL: none) go into each file's "zerobench" object.
 * Timeouts as zb_trace_export_chrome's. */
zb_status zb_trace_export_kineto(const zb_trace *t, const zb_clock_sync *sync, const char *dir, double timeout_s,
                                 const char *comm, const json_t *info);

#ifdef __cplusplus
}
#endif
#endif
