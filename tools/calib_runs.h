/* calibrate's child runs (calib_runs.c) and its sweeps, each a child run
 * fitted into zb_calib: the compute side (calib_sweep_compute.c) and the
 * communication side (calib_sweep_comm.c). */
#ifndef ZB_CALIB_RUNS_H
#define ZB_CALIB_RUNS_H

#include <jansson.h>
#include <stdbool.h>

#include "calib.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where the children write, and how long each may run. */
typedef struct calib_run {
    char dir[256];
    double timeout_s;
} calib_run;

/* Calls of a few microseconds run in one of two modes on the cpu backend
 * (the stream's thread kept busy by the host, or woken for each op), and
 * the first dozens after a size change mostly in the slow one: six runs of
 * the 64^3 GEMM gave medians of 2.8-3.0 us over 200 calls after 20 warm-up,
 * 6.4-13.1 us over 10 after 1. So the GEMM sweep times at least
 * ZB_CALIB_MIN_ITERS calls a size, after ZB_CALIB_WARMUP (the large sizes'
 * calls are milliseconds: a few seconds in all). */
#define ZB_CALIB_MIN_ITERS 200
#define ZB_CALIB_WARMUP "20"

/* Runs `zerobench args...` with --json DIR/NAME.json and loads that file;
 * traced: with --trace DIR/NAME.trace.json too, so that the child reports
 * its calls' device time from their records (op_records.h). A child that
 * fails is an error with its log's last line. */
zb_status zb_calib_run_child(const calib_run *r, const char *name, const char **args, int n_args, bool traced,
                             json_t **doc);
/* Removes the children's files and the folder. */
void zb_calib_remove_dir(const char *dir);

const char *zb_calib_str_or(const char *s, const char *dflt);
/* The job's layout for a child: --backend, --comm, --nodes NODES, the
 * ranks a node, and when it spans nodes the hosts given (or emulated).
 * Each appends to args and returns the new count. */
int zb_calib_job_args(const calib_args *a, const char *nodes, const char **args, int n);
/* A rank's threads and hardware profile, as the step's ranks run. */
int zb_calib_rank_args(const calib_args *a, const char **args, int n);
/* The compute runs': the whole job (every rank timing at once, -a 1), each rank as the step's. */
int zb_calib_layout_args(const calib_args *a, const char **args, int n);
/* How the first run ran (host, date, backends, threads) and the base profile loaded. */
zb_status zb_calib_take_meta(const calib_args *a, const json_t *doc, zb_calib *c);
/* A fit not made: why, from the error just set. */
void zb_calib_say_not(zb_calib_try *t);
/* A metric's per-iteration samples of one run, times scale, into v (at most cap); how many. */
int zb_calib_samples_of(const json_t *run, const char *key, double scale, double *v, int cap);
/* One op's time: the median of its samples, else the run's mean. */
double zb_calib_op_time_s(const json_t *run);
/* A traced run's device time per call, else zb_calib_op_time_s; *device says which. */
double zb_calib_device_time_s(const json_t *run, bool *device);
/* -n for the GEMM sweeps: at least ZB_CALIB_MIN_ITERS. */
void zb_calib_min_iters(const calib_args *a, char *out, size_t n);

/* The sweeps, in the order calibrate runs them; each fills its part of c.
 * A fit that fails is said in its zb_calib_try (not an error); a child run
 * that fails is. */
zb_status zb_calib_mem_sweep(const calib_args *a, const calib_run *r, zb_calib *c);
zb_status zb_calib_kern_sweep(const calib_args *a, const calib_run *r, zb_calib *c);
zb_status zb_calib_gemm_sweep(const calib_args *a, const calib_run *r, zb_calib *c);
zb_status zb_calib_gemm_model_sweep(const calib_args *a, const calib_run *r, zb_calib *c);
zb_status zb_calib_attn_sweep(const calib_args *a, const calib_run *r, zb_calib *c);
zb_status zb_calib_step_sweep(const calib_args *a, const calib_run *r, zb_calib *c);
/* One placement's (ZB_CALIB_INTRA / INTER) sweeps of the three collectives over `nodes` nodes. */
zb_status zb_calib_coll_sweeps(const calib_args *a, const calib_run *r, int placement, const char *nodes,
                               zb_calib *c);

#ifdef __cplusplus
}
#endif
#endif
