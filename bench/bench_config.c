/* The run configuration's defaults (bench_config.h). */
#include "bench_config.h"

#include <stdio.h>
#include <string.h>

void zb_config_defaults(zb_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->command = ZB_CMD_STEP;
    strcpy(cfg->backend, "auto");
    strcpy(cfg->comm, "auto");
    cfg->min_bytes = 32u << 20; /* nccl-tests' defaults */
    cfg->max_bytes = 32u << 20;
    cfg->step_factor = 2;
    cfg->iters = 20;
    cfg->warmup_iters = 5;
    cfg->check = 1;
    cfg->dtype = ZB_DTYPE_F32;
    cfg->average = ZB_AVERAGE_MEAN;
    cfg->direct_rounds = 3;
    cfg->malloc_keep = true;
    snprintf(cfg->blas_core, sizeof cfg->blas_core, "auto");
    cfg->gpu_trace = true;
    cfg->timeout_s = 300.0;
    cfg->straggler_pct = 10.0; /* ZB_STRAGGLER_PCT_DEFAULT */
    cfg->mode = ZB_MODE_BOTH;
    cfg->stage = 3;
    cfg->steps = 10;
    cfg->warmup_steps = 2;
    cfg->precision_pct = 5.0; /* off when --steps is given alone (step_pairs.c) */
    cfg->max_time_s = 60.0;
    cfg->prefetch_depth = 1;
    cfg->param_dtype = ZB_DTYPE_UNSET;
    cfg->act_dtype = ZB_DTYPE_UNSET;
    cfg->grad_reduce_dtype = ZB_DTYPE_UNSET;
    cfg->lr = 3e-3;
    cfg->seed = 1234;
}

void zb_config_step_dtypes(const zb_config *cfg, zb_dtype device_default, zb_dtype *param,
                           zb_dtype *act, zb_dtype *grad) {
    *param = cfg->param_dtype != ZB_DTYPE_UNSET ? cfg->param_dtype : device_default;
    *act = cfg->act_dtype != ZB_DTYPE_UNSET ? cfg->act_dtype : *param;
    *grad = cfg->grad_reduce_dtype != ZB_DTYPE_UNSET ? cfg->grad_reduce_dtype : *param;
}
