/* zerobench plan: the per-GPU memory ledger and comm volume of ZeRO stages
 * 0-3 for a model (or a bare parameter count) over one or more cluster
 * sizes, against a hardware profile's memory; no run, no MPI. This file
 * reads the options and builds the plan; plan_report.c prints and writes it.
 *
 *   zerobench plan --model llama3_70b --nodes 1,2,4 --hw h100_sxm
 *   zerobench plan --model llama3_8b --layers 16 --seq 8192 --gpus 8
 *   zerobench plan --params 7.5B --gpus 64
 *
 * The model's flags are the step's, parsed by their descriptions
 * (bench/model_opts.h): the shape flags override the --model profile's
 * fields (default tiny), as in the step.
 *
 * Exit codes: 0 whether or not a configuration fits (a planner answers the
 * question, fits = false is an answer), 2 bad input, 1 a JSON file that
 * cannot be written. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_config.h"
#include "model_opts.h"
#include "flops.h"
#include "parse.h"
#include "plan.h"
#include "out_path.h"
#include "results.h"
#include "tool.h"
#include "tool_args.h"

#define PLAN_DEFAULT_HW "h100_sxm"
/* What plan assumes without --param-dtype: the step's default on GPUs. */
#define PLAN_DEFAULT_PARAM_DTYPE ZB_DTYPE_BF16

/* The step's flags plan takes: --model, the shape flags, recompute, prefetch
 * depth and the dtypes it sizes buffers by. They are parsed by the step's own
 * descriptions (model_opts.h, zb_opt_set) into a zb_config with the step's
 * defaults, so plan accepts what the step accepts and says the same. */
#define PLAN_N_RUN_OPTS 4
#define PLAN_N_STEP_OPTS (1 + ZB_N_SHAPE_OPTS + PLAN_N_RUN_OPTS)
/* The dtypes last: --params takes them and none of the others. */
static const zb_opt *const plan_run_opts[PLAN_N_RUN_OPTS] = {&zb_opt_recompute, &zb_opt_prefetch_depth,
                                                             &zb_opt_param_dtype, &zb_opt_grad_reduce_dtype};

static const zb_opt *step_opt_at(int i) {
    if (i == 0) return &zb_opt_model;
    if (i <= ZB_N_SHAPE_OPTS) return zb_shape_opts[i - 1].opt;
    return plan_run_opts[i - 1 - ZB_N_SHAPE_OPTS];
}

/* The raw option values, before they are checked together. */
typedef struct plan_args {
    const char *params, *gpus, *nodes, *gpus_per_node, *hw, *json;
    const char *step_val[PLAN_N_STEP_OPTS]; /* step_opt_at(i)'s value as given, NULL when not */
    char step_flag[PLAN_N_STEP_OPTS][32];   /* "--layers" */
    zb_config cfg;                          /* the step's flags, parsed (parse_step_opts) */
} plan_args;

/* The usage line of a step flag, from its description (the dtypes: plan's own,
 * its default differs from the step's on cpu). */
static void usage_step_opt(FILE *f, const zb_opt *o) {
    char flag[40];
    snprintf(flag, sizeof flag, "--%s %s", o->name,
             o->kind == ZB_OPT_TEXT ? "NAME" : o->kind == ZB_OPT_CHOICE ? "none|full" : "N");
    fprintf(f, "  %-22s %s\n", flag, o->help);
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: zerobench plan ([--model NAME] [SHAPE FLAGS] | --params N) [--gpus N[,N...] | --nodes N[,N...]]\n"
            "                      [--gpus-per-node G] [--hw PROFILE] [--recompute none|full] [--prefetch-depth K]\n"
            "                      [--param-dtype bf16|float] [--grad-reduce-dtype bf16|float] [--json FILE]\n"
            "Per-GPU memory at ZeRO stages 0-3 (parameters, gradients, optimizer states, activations,\n"
            "gathered buffers), whether it fits the device, and the bytes each rank sends per step.\n"
            "The model: a profile (--model), its fields overridden by the shape flags given, as for step\n"
            "(without --model the profile is step's default, " ZB_MODEL_DEFAULT "); or a bare --params count.\n");
    usage_step_opt(f, &zb_opt_model);
    for (int i = 0; i < ZB_N_SHAPE_OPTS; i++) usage_step_opt(f, zb_shape_opts[i].opt);
    fprintf(f, "  --params N             a bare parameter count (7.5e9, 7.5B, 70B): model states only;\n"
               "                         not with --model or the shape flags\n"
               "  --gpus N[,N...]        GPUs in total, one column each\n"
               "  --nodes N[,N...]       nodes of --gpus-per-node GPUs, one column each (default 1)\n"
               "  --gpus-per-node G      GPUs per node (default: the hardware profile's)\n"
               "  --hw PROFILE           hardware profile (profiles/hw/NAME.json; default " PLAN_DEFAULT_HW ")\n");
    usage_step_opt(f, &zb_opt_recompute);
    usage_step_opt(f, &zb_opt_prefetch_depth);
    fprintf(f, "  --param-dtype D        parameters as gathered (default bf16: p = 2)\n"
               "  --grad-reduce-dtype D  gradients as reduced (default: the --param-dtype: g = 2)\n"
               "  --json FILE            write the plan as JSON (zerobench/1 schema, runs with bench \"plan\")\n"
               "Values are checked as step checks them. Exit code 0 whether or not it fits (see fits in the\n"
               "output), 2 for bad input.\n");
}

static zb_status parse_args(int argc, char **argv, plan_args *a) {
    memset(a, 0, sizeof *a);
    zb_tool_opt opts[PLAN_N_STEP_OPTS + 6];
    size_t n = 0;
    for (int i = 0; i < PLAN_N_STEP_OPTS; i++) {
        snprintf(a->step_flag[i], sizeof a->step_flag[i], "--%s", step_opt_at(i)->name);
        opts[n++] = (zb_tool_opt){a->step_flag[i], &a->step_val[i]};
    }
    const zb_tool_opt own[] = {{"--params", &a->params},
                               {"--gpus", &a->gpus},
                               {"--nodes", &a->nodes},
                               {"--gpus-per-node", &a->gpus_per_node},
                               {"--hw", &a->hw},
                               {"--json", &a->json}};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) opts[n++] = own[i];
    return zb_tool_parse_args("plan", argc, argv, opts, n, NULL, 0);
}

/* The step's flags given, into a->cfg over the step's defaults. */
static zb_status parse_step_opts(plan_args *a) {
    zb_config_defaults(&a->cfg);
    for (int i = 0; i < PLAN_N_STEP_OPTS; i++) {
        if (a->step_val[i]) ZB_TRY(zb_opt_set(step_opt_at(i), a->step_val[i], &a->cfg));
    }
    return ZB_OK;
}

/* The step flag given first among step_opt_at(from .. to-1); NULL when none. */
static const char *step_flag_given(const plan_args *a, int from, int to) {
    for (int i = from; i < to; i++) {
        if (a->step_val[i]) return a->step_flag[i];
    }
    return NULL;
}

/* A positive integer option up to `max`. */
static zb_status parse_pos(const char *flag, const char *text, int64_t max, int *out) {
    int64_t v;
    if (zb_parse_int64(text, &v) != ZB_OK || v < 1 || v > max) {
        char shown[72];
        return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': accepted: an integer from 1 to %lld", flag,
                       zb_results_shown_path(text, shown), (long long)max);
    }
    *out = (int)v;
    return ZB_OK;
}

/* "1,2,4": positive integers, at most ZB_PLAN_MAX_COLS of them. */
static zb_status parse_list(const char *flag, const char *text, int *vals, int *n) {
    char buf[256], shown[72];
    if (strlen(text) >= sizeof buf || !text[0]) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': accepted: a positive integer or a comma-separated list (1,2,4)",
                       flag, zb_results_shown_path(text, shown));
    }
    strcpy(buf, text);
    *n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*n == ZB_PLAN_MAX_COLS) {
            return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': at most %d values", flag, zb_results_shown_path(text, shown),
                           ZB_PLAN_MAX_COLS);
        }
        int64_t v;
        if (zb_parse_int64(tok, &v) != ZB_OK || v < 1 || v > (1 << 20)) {
            return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': '%s' is not an integer from 1 to %d (a list: 1,2,4)", flag,
                           zb_results_shown_path(text, shown), tok, 1 << 20);
        }
        vals[(*n)++] = (int)v;
    }
    if (*n == 0 || text[strlen(text) - 1] == ',' || strstr(text, ",,")) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': accepted: a positive integer or a comma-separated list (1,2,4)",
                       flag, zb_results_shown_path(text, shown));
    }
    return ZB_OK;
}

static zb_status load_hw(const plan_args *a, zb_plan *p) {
    char why[ZB_ERROR_MAX], shown[72];
    const char *name = a->hw ? a->hw : PLAN_DEFAULT_HW;
    snprintf(p->hw_name, sizeof p->hw_name, "%s", name);
    if (zb_hw_profile_load(name, &p->hw) != ZB_OK) {
        return ZB_FAIL(ZB_ERR_INVALID, "--hw '%s': %s", zb_results_shown_path(name, shown), zb_error_text(why, sizeof why));
    }
    return ZB_OK;
}

/* The columns: --gpus values, or --nodes values times --gpus-per-node. */
static zb_status make_cols(const plan_args *a, zb_plan *p) {
    int vals[ZB_PLAN_MAX_COLS], n = 0, gpn = p->hw.gpus_per_node;
    if (a->gpus && a->nodes) {
        return ZB_FAIL(ZB_ERR_INVALID, "--gpus and --nodes: give one of them (--nodes counts nodes of "
                       "--gpus-per-node GPUs)");
    }
    if (a->gpus_per_node) ZB_TRY(parse_pos("--gpus-per-node", a->gpus_per_node, 1 << 16, &gpn));
    if (a->gpus) ZB_TRY(parse_list("--gpus", a->gpus, vals, &n));
    else if (a->nodes) ZB_TRY(parse_list("--nodes", a->nodes, vals, &n));
    else vals[n++] = 1; /* one node */
    p->from_gpus = a->gpus != NULL;
    for (int i = 0; i < n; i++) {
        zb_plan_col *c = &p->cols[i];
        if (p->from_gpus) {
            c->ranks = vals[i];
            c->gpus_per_node = vals[i] < gpn ? vals[i] : gpn;
            c->nodes = (vals[i] + c->gpus_per_node - 1) / c->gpus_per_node;
            snprintf(c->label, sizeof c->label, "%d GPU%s", vals[i], vals[i] > 1 ? "s" : "");
        } else {
            if ((int64_t)vals[i] * gpn > (1 << 20)) {
                return ZB_FAIL(ZB_ERR_INVALID, "--nodes %d x --gpus-per-node %d: more than %d GPUs", vals[i], gpn,
                               1 << 20);
            }
            c->nodes = vals[i];
            c->gpus_per_node = gpn;
            c->ranks = vals[i] * gpn;
            snprintf(c->label, sizeof c->label, "%dx%d", vals[i], gpn);
        }
    }
    p->n_cols = n;
    return ZB_OK;
}

/* A bare parameter count: no shapes, so of the step's flags only the dtypes
 * (the last two of step_opt_at); --model with it is make_input's error. */
static zb_status make_params_input(const plan_args *a, zb_plan_input *in) {
    char why[ZB_ERROR_MAX];
    const char *shaped = step_flag_given(a, 1, PLAN_N_STEP_OPTS - 2);
    if (shaped) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s with --params: a bare parameter count has no shapes to size "
                       "activations and gathered buffers from (use --model NAME and/or the shape flags "
                       "instead of --params)", shaped);
    }
    if (zb_parse_count(a->params, &in->params) != ZB_OK) {
        return ZB_FAIL(ZB_ERR_INVALID, "--params: %s", zb_error_text(why, sizeof why));
    }
    return ZB_OK;
}

/* The model as the step makes it: the profile, the shape flags over its
 * fields (zb_model_apply_shape), the label naming both; then the engine's
 * configuration for its ledger. */
static zb_status make_model_input(const plan_args *a, zb_plan *p) {
    char why[ZB_ERROR_MAX], shown[72];
    const zb_config *cfg = &a->cfg;
    const char *profile = cfg->model[0] ? cfg->model : ZB_MODEL_DEFAULT;
    zb_model_profile mp;
    if (zb_model_profile_load(profile, &mp) != ZB_OK) {
        return ZB_FAIL(ZB_ERR_INVALID, "--model '%s': %s", zb_results_shown_path(profile, shown),
                       zb_error_text(why, sizeof why));
    }
    zb_step_model_label(profile, cfg, p->model, sizeof p->model);
    zb_plan_input *in = &p->in;
    in->have_model = true;
    zb_engine_cfg *ec = &in->engine;
    zb_model_cfg_from_profile(&mp, (uint64_t)cfg->seed, &ec->model);
    zb_model_apply_shape(cfg, &ec->model);
    ec->recompute = cfg->recompute == 1;
    ec->prefetch_depth = (int)cfg->prefetch_depth;
    /* As the step: activations in the parameters' dtype (engine.h). */
    ec->param_dtype = in->param_dtype;
    ec->act_dtype = in->param_dtype;
    ec->grad_dtype = in->grad_dtype;
    if (zb_model_cfg_validate(&ec->model) != ZB_OK) {
        return ZB_FAIL(ZB_ERR_INVALID, "model '%s': %s", zb_results_shown_path(p->model, shown),
                       zb_error_text(why, sizeof why));
    }
    const zb_model_cfg *m = &ec->model;
    zb_flops_shape fs = {m->layers, m->dim, m->heads, m->kv_heads, m->head_dim, m->ffn_dim, m->vocab, m->seq};
    p->model_flops_per_token = zb_model_flops_per_token(&fs, ZB_FLOPS_FULL);
    return ZB_OK;
}

/* The model (a profile with the shape flags over it, or --params) and the
 * dtypes its buffers are sized in. */
static zb_status make_input(const plan_args *a, zb_plan *p) {
    zb_plan_input *in = &p->in;
    zb_dtype act;
    zb_config_step_dtypes(&a->cfg, PLAN_DEFAULT_PARAM_DTYPE, &in->param_dtype, &act, &in->grad_dtype);
    p->model_flops_per_token = NAN;
    if (a->params && a->step_val[0]) {
        return ZB_FAIL(ZB_ERR_INVALID, "plan: give --model NAME or --params N (one of them), not both");
    }
    if (!a->params && !a->step_val[0] && !zb_model_shape_given(&a->cfg)) {
        return ZB_FAIL(ZB_ERR_INVALID, "plan: give --model NAME or --params N (one of them), or shape flags "
                       "(--layers, --dim, ...) over the " ZB_MODEL_DEFAULT " profile as for step");
    }
    return a->params ? make_params_input(a, in) : make_model_input(a, p);
}

/* Device memory per GPU: the profile's, or where it says "measure" (cpu)
 * this machine's physical memory shared by the ranks of a node, as the
 * step's own check counts it. */
static void device_memory(zb_plan *p) {
    if (!p->hw.mem_bytes_measure) {
        p->mem_per_gpu_bytes = p->hw.mem_bytes;
        p->mem_source = "the profile's mem_bytes";
        return;
    }
    double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    int gpn = p->n_cols ? p->cols[0].gpus_per_node : 1;
    p->mem_per_gpu_bytes = phys / gpn;
    p->mem_source = "this machine's physical memory / ranks per node";
}

/* Every cell computes: a unit smaller than the GPUs it is sharded over is bad input. */
static zb_status check_cells(const zb_plan *p) {
    char why[ZB_ERROR_MAX];
    for (int i = 0; i < p->n_cols; i++) {
        zb_plan_cell c;
        if (zb_plan_cell_compute(&p->in, 3, ZB_MODE_PREFETCH, p->cols[i].ranks, &c) != ZB_OK) {
            return ZB_FAIL(ZB_ERR_INVALID, "%s %s: %s", p->from_gpus ? "--gpus" : "--nodes", p->cols[i].label,
                           zb_error_text(why, sizeof why));
        }
    }
    return ZB_OK;
}

static zb_status build(plan_args *a, zb_plan *p) {
    memset(p, 0, sizeof *p);
    ZB_TRY(parse_step_opts(a));
    if (a->json) {
        if (!a->json[0] || strlen(a->json) >= sizeof p->json_path) {
            char shown[72];
            return ZB_FAIL(ZB_ERR_INVALID, "--json '%s': expected a file path", zb_shown_path(a->json, shown));
        }
        ZB_TRY(zb_out_path_check("--json", a->json));
        const zb_path_use uses[] = {
            {"--json", a->json, true}, {"--hw", a->hw, false}, {"--model", a->step_val[0], false}};
        ZB_TRY(zb_paths_distinct(uses, 3));
        snprintf(p->json_path, sizeof p->json_path, "%s", a->json);
    }
    ZB_TRY(load_hw(a, p));
    ZB_TRY(make_cols(a, p));
    ZB_TRY(make_input(a, p));
    device_memory(p);
    return check_cells(p);
}

static int plan_main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        }
    }
    plan_args a;
    static zb_plan plan; /* large: off the stack */
    if (parse_args(argc, argv, &a) != ZB_OK || build(&a, &plan) != ZB_OK) {
        fprintf(stderr, "zerobench: %s\n", zb_error_message());
        return 2;
    }
    return zb_plan_report(&plan, argc, argv);
}

const zb_tool zb_tool_plan = {
    .name = "plan",
    .summary = "per-GPU memory and comm volume of ZeRO stages 0-3 for a model over cluster sizes (no run)",
    .main = plan_main,
};
