/* zerobench calibrate (calib_args.c: its options; calib_runs.h: the child runs and sweeps;
 * calib_profile.c: the profile it writes; calib_report.c: its printout):
 * what it measured and fitted. */
#ifndef ZB_CALIB_H
#define ZB_CALIB_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "calib_fit.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_CALIB_N_COLLS 3
#define ZB_CALIB_INTRA 0 /* inside one node */
#define ZB_CALIB_INTER 1 /* the whole job, across nodes */

typedef struct zb_calib_coll_fit {
    bool have;            /* fitted */
    int ranks;            /* 0: not swept */
    zb_calib_fit fit;
    char why_not[256];    /* swept but not fitted (times that do not grow with size): why */
} zb_calib_coll_fit;

/* A fit that may fail on a noisy machine: then the parameter is the base
 * profile's, and why_not says why. */
typedef struct zb_calib_try {
    bool have;
    char why_not[256];
} zb_calib_try;

typedef struct zb_calib {
    /* how it ran */
    char host[256], date_utc[32], backend[32], comm[32], dtype[16];
    int nodes, gpus_per_node;
    int threads;         /* BLAS threads per rank in the runs (as the step's ranks) */
    char base_path[512]; /* the profile the unmeasured fields come from */
    json_t *base;        /* its JSON (owned) */
    char gemm_command[512], coll_command[512], mem_command[512], attn_command[512], step_command[512],
        kern_command[512], gemm_model_command[512];
    /* what it measured */
    double peak_flops;   /* per rank, with its threads */
    char peak_source[256];
    zb_calib_try mem_try; /* element-wise: latency = per-op overhead, bandwidth */
    zb_calib_fit mem;
    zb_calib_gemm gemm;
    double gemm_rms_pct, gemm_max_pct;
    zb_calib_try gemm_model_try; /* the model's own GEMMs into the table */
    double step_mem_bytes; /* the step run's peak memory a rank: the collective sweeps rotate over it */
    bool gemm_device, kern_device; /* fitted over the calls' device records (no overhead subtracted) */
    zb_calib_try kern_try; /* the element-wise kernels one by one, at the model's shapes */
    int n_kern;
    zb_calib_kernel kern[32];
    zb_calib_try attn_try;
    zb_calib_rate attn[2]; /* forward, backward: rate = peak x efficiency */
    zb_calib_try gap_try; /* the step's host time between ops: its idle time over its ops (sync) */
    double gap_s, gap_idle_ms, gap_ops;
    zb_calib_try hold_try; /* the hold at a collective's start: prefetch's comm_hold_ms (comm_hold.h) */
    double hold_s;
    zb_calib_try slow_try[2];
    zb_calib_slowdown slow[2]; /* compute beside comm, comm beside compute */
    zb_calib_coll_fit coll[2][ZB_CALIB_N_COLLS]; /* [placement][allgather, reducescatter, allreduce] */
    zb_calib_coll_fit pooled[2];                 /* the three together: the sim's one link model */
} zb_calib;

extern const char *const zb_calib_colls[ZB_CALIB_N_COLLS];

/* The command line as given (NULL: not given; validate fills defaults). */
typedef struct calib_args {
    const char *out, *backend, *comm, *nodes, *gpn, *hostfile, *hw, *base, *dtype, *gemm_min, *gemm_max, *coll_min,
        *coll_max, *iters, *timeout, *threads, *model, *steps;
    bool emulate, quick;
    char coll_range[2][32]; /* the default collective sizes, from the model's units (validate) */
} calib_args;

/* calib_args.c: the usage text; -o and the flags into `a` (ZB_ERR_INVALID
 * with a one-line message); the checks before anything runs, defaults and
 * --quick's sizes filled in. */
void zb_calib_usage(FILE *f);
zb_status zb_calib_parse_args(int argc, char **argv, calib_args *a);
zb_status zb_calib_validate(calib_args *a);

/* Builds the hardware profile: the base profile's JSON with the measured
 * and fitted values put in (one mapping, calib_profile.c), their sources
 * saying where they came from, and a "calibration" object with every fit
 * and its residuals and, per parameter the sim reads, "calibrated",
 * "from_base" (the base's value, its source prefixed "from base profile
 * NAME") or "missing". Checks that it loads (zb_hw_profile_parse) and writes
 * it atomically to `path`; `missing` gets the parameters neither measured
 * nor in the base, `borrowed` those taken from the base, each joined with
 * ", " ("" when none; n bytes each). */
zb_status zb_calib_write_profile(const zb_calib *c, const char *path, char *missing, char *borrowed, size_t n);

/* Prints what calibrate measured and fitted (calib_report.c): each fit with
 * its residuals, the parameters taken from the base (`borrowed`) or found
 * nowhere (`missing`), and the profile written to `out`. */
void zb_calib_print_summary(const zb_calib *c, const char *out, const char *missing, const char *borrowed);

#ifdef __cplusplus
}
#endif
#endif
