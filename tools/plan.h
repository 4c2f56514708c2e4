/* zerobench plan (plan.c: options; plan_report.c: its tables and JSON):
 * what a configuration needs per GPU at ZeRO stages 0-3 before anyone runs
 * it, from the ledger (plan_ledger.h), against a hardware profile's memory. */
#ifndef ZB_PLAN_H
#define ZB_PLAN_H

#include <stdbool.h>

#include "plan_ledger.h"
#include "profile.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_PLAN_MAX_COLS 16

/* One column of the tables: a cluster size. */
typedef struct zb_plan_col {
    int nodes, gpus_per_node, ranks;
    char label[32]; /* "8 GPUs" or "2x8" */
} zb_plan_col;

typedef struct zb_plan {
    zb_plan_input in;
    char model[192];         /* as the step labels it: "llama3_8b", "tiny+dim=512,layers=4", "custom"
                              * (zb_step_model_label); "" with --params */
    zb_hw_profile hw;
    char hw_name[64];        /* as given (--hw) or the default */
    double mem_per_gpu_bytes; /* the device's, or on a "measure" profile this machine's / ranks per node */
    const char *mem_source;
    zb_plan_col cols[ZB_PLAN_MAX_COLS];
    int n_cols;
    bool from_gpus;          /* columns from --gpus (else --nodes) */
    double model_flops_per_token; /* NaN without a model */
    char json_path[1024];
} zb_plan;

/* Prints the tables on stdout and writes --json; argc/argv go in the meta.
 * Returns the exit code (0; 1 when the JSON cannot be written). */
int zb_plan_report(const zb_plan *plan, int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
