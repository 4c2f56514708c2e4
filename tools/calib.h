/* zerobench calibrate (calibrate.c: options and the child runs;
 * calib_profile.c: the profile it writes): what it measured and fitted. */
#ifndef ZB_CALIB_H
#define ZB_CALIB_H

#include <jansson.h>

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

typedef struct zb_calib {
    /* how it ran */
    char host[256], date_utc[32], backend[32], comm[32], dtype[16];
    int nodes, gpus_per_node;
    char base_path[512]; /* the profile the unmeasured fields come from */
    json_t *base;        /* its JSON (owned) */
    char gemm_command[512], coll_command[512];
    /* what it measured */
    double peak_flops;
    char peak_source[256];
    zb_calib_gemm gemm;
    zb_calib_coll_fit coll[2][ZB_CALIB_N_COLLS]; /* [placement][allgather, reducescatter, allreduce] */
    zb_calib_coll_fit pooled[2];                 /* the three together: the sim's one link model */
} zb_calib;

extern const char *const zb_calib_colls[ZB_CALIB_N_COLLS];

/* Builds the hardware profile: the base profile's JSON with the measured
 * and fitted values put in (one mapping, calib_profile.c), their sources
 * saying where they came from, and a "calibration" object with every fit
 * and its residuals. Checks that it loads (zb_hw_profile_parse) and writes
 * it atomically to `path`; `missing` gets the sim parameters neither
 * measured nor in the base, joined with ", " ("" when none). */
zb_status zb_calib_write_profile(const zb_calib *c, const char *path, char *missing, size_t n);

#ifdef __cplusplus
}
#endif
#endif
