/* zb_config -> JSON (see config_json.h). */
#include "config_json.h"

static json_t *shapes_json(const zb_config *cfg) {
    json_t *a = json_array();
    for (int i = 0; i < cfg->n_shapes; i++) {
        json_array_append_new(a, json_pack("[I,I,I]", (json_int_t)cfg->shapes[i][0],
                                           (json_int_t)cfg->shapes[i][1], (json_int_t)cfg->shapes[i][2]));
    }
    return a;
}

json_t *zb_config_to_json(const zb_config *cfg) {
    json_t *o = json_object();
    json_object_set_new(o, "command", json_string(zb_command_name(cfg->command)));
    json_object_set_new(o, "backend", json_string(cfg->backend));
    json_object_set_new(o, "comm", json_string(cfg->comm));
    json_object_set_new(o, "minbytes", json_integer((json_int_t)cfg->min_bytes));
    json_object_set_new(o, "maxbytes", json_integer((json_int_t)cfg->max_bytes));
    json_object_set_new(o, "stepfactor", json_integer((json_int_t)cfg->step_factor));
    json_object_set_new(o, "stepbytes", json_integer((json_int_t)cfg->step_bytes));
    json_object_set_new(o, "iters", json_integer((json_int_t)cfg->iters));
    json_object_set_new(o, "warmup_iters", json_integer((json_int_t)cfg->warmup_iters));
    json_object_set_new(o, "check", json_integer(cfg->check));
    json_object_set_new(o, "datatype", json_string(zb_dtype_name(cfg->dtype)));
    json_object_set_new(o, "average", json_integer((json_int_t)cfg->average));
    json_object_set_new(o, "compare_direct", json_boolean(cfg->compare_direct));
    json_object_set_new(o, "direct_rounds", json_integer((json_int_t)cfg->direct_rounds));
    json_object_set_new(o, "straggler_pct", json_real(cfg->straggler_pct));
    json_object_set_new(o, "force", json_boolean(cfg->force));
    json_object_set_new(o, "shapes", shapes_json(cfg));
    json_object_set_new(o, "model", json_string(cfg->model));
    json_object_set_new(o, "tokens", json_integer((json_int_t)cfg->tokens));
    /* --hw as given; main replaces it with the profile in use. */
    json_object_set_new(o, "hw", cfg->hw[0] ? json_string(cfg->hw) : json_null());
    json_object_set_new(o, "peak_gflops", json_real(cfg->peak_gflops));
    json_object_set_new(o, "peak_measure", json_boolean(cfg->peak_measure));
    json_object_set_new(o, "threads", json_integer((json_int_t)cfg->threads));
    json_object_set_new(o, "blas_core", json_string(cfg->blas_core));
    json_object_set_new(o, "malloc_keep", json_boolean(cfg->malloc_keep));
    json_object_set_new(o, "gpu_trace", json_boolean(cfg->gpu_trace));
    json_object_set_new(o, "nodes", json_integer((json_int_t)cfg->nodes));
    json_t *counts = json_array(); /* --nodes as given: several for scale */
    for (int i = 0; i < cfg->nodes_list.n; i++) json_array_append_new(counts, json_integer((json_int_t)cfg->nodes_list.v[i]));
    json_object_set_new(o, "nodes_list", counts);
    json_object_set_new(o, "gpus_per_node", json_integer((json_int_t)cfg->gpus_per_node));
    json_object_set_new(o, "hostfile", json_string(cfg->hostfile));
    json_object_set_new(o, "emulate_nodes", json_boolean(cfg->emulate_nodes));
    json_object_set_new(o, "timeout_s", json_real(cfg->timeout_s));
    return o;
}
