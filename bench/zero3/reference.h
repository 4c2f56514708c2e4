/* The unsharded reference trainer: the same per-unit forward/backward
 * (unit.h) and AdamW (optim.h) as the ZeRO-3 engine, on full flat vectors,
 * in one process, with no communication. Tests compare the sharded engine
 * against it (equal up to summation order).
 *
 * Shapes: global_batch sequences of cfg->seq tokens per step, N =
 * global_batch * T. Step s trains on samples s*global_batch + i, i in
 * [0, global_batch) (data.h): with global_batch = n*B these are exactly
 * the samples the engine's n ranks take at step s. losses[s] is the mean
 * over all N tokens of step s, computed before the update of step s. */
#ifndef ZB_ZERO3_REFERENCE_H
#define ZB_ZERO3_REFERENCE_H

#include "device.h"
#include "model.h"
#include "optim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs `steps` steps on `dev` (its own stream; dev's memory must be host
 * memory, as on the cpu device: initialization and the final copy rely on
 * it; the caller creates and destroys the device).
 * cfg->batch is ignored (global_batch replaces it). losses [steps] may be
 * NULL. final_params, when not NULL, is an array of zb_model_n_units(cfg)
 * pointers that receives a malloc'd copy of each unit's flat parameters
 * after the last step (the caller frees each); on error every entry is
 * NULL. */
zb_status zb_reference_train(zb_device *dev, const zb_model_cfg *cfg, int global_batch,
                             int steps, const zb_adamw_cfg *opt, float *losses,
                             float **final_params);

#ifdef __cplusplus
}
#endif
#endif
