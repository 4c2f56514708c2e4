/* zerobench plan: the per-GPU memory ledger and comm volume of ZeRO stages
 * 0-3 for a model (or a bare parameter count) over one or more cluster
 * sizes, against a hardware profile's memory; no run, no MPI. This file
 * reads the options and builds the plan; plan_report.c prints and writes it.
 *
 *   zerobench plan --model llama3_70b --nodes 1,2,4 --hw h100_sxm
 *   zerobench plan --params 7.5B --gpus 64
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
#include "flops.h"
#include "parse.h"
#include "plan.h"
#include "out_path.h"
#include "results.h"
#include "tool.h"
#include "tool_args.h"

#define PLAN_DEFAULT_HW "h100_sxm"

/* The raw option values, before they are checked together. */
typedef struct plan_args {
    const char *model, *params, *gpus, *nodes, *gpus_per_node, *hw, *seq, *batch, *recompute, *depth;
    const char *param_dtype, *grad_dtype, *json;
} plan_args;

static void usage(FILE *f) {
    fprintf(f,
            "usage: zerobench plan (--model NAME | --params N) [--gpus N[,N...] | --nodes N[,N...]]\n"
            "                      [--gpus-per-node G] [--hw PROFILE] [--seq T] [--batch B]\n"
            "                      [--recompute none|full] [--prefetch-depth K]\n"
            "                      [--param-dtype bf16|float] [--grad-reduce-dtype bf16|float] [--json FILE]\n"
            "Per-GPU memory at ZeRO stages 0-3 (parameters, gradients, optimizer states, activations,\n"
            "gathered buffers), whether it fits the device, and the bytes each rank sends per step.\n"
            "  --model NAME           model profile (profiles/models/NAME.json)\n"
            "  --params N             a bare parameter count (7.5e9, 7.5B, 70B): model states only\n"
            "  --gpus N[,N...]        GPUs in total, one column each\n"
            "  --nodes N[,N...]       nodes of --gpus-per-node GPUs, one column each (default 1)\n"
            "  --gpus-per-node G      GPUs per node (default: the hardware profile's)\n"
            "  --hw PROFILE           hardware profile (profiles/hw/NAME.json; default " PLAN_DEFAULT_HW ")\n"
            "  --seq T, --batch B     override the model's sequence length and micro-batch per GPU\n"
            "  --recompute none|full  activation recomputation (default none)\n"
            "  --prefetch-depth K     gathered units alive ahead of use in prefetch (default 1)\n"
            "  --param-dtype D        parameters as gathered (default bf16: p = 2)\n"
            "  --grad-reduce-dtype D  gradients as reduced (default: the --param-dtype: g = 2)\n"
            "  --json FILE            write the plan as JSON (zerobench/1 schema, runs with bench \"plan\")\n"
            "Exit code 0 whether or not it fits (see fits in the output), 2 for bad input.\n");
}

static zb_status parse_args(int argc, char **argv, plan_args *a) {
    memset(a, 0, sizeof *a);
    const zb_tool_opt opts[] = {
        {"--model", &a->model}, {"--params", &a->params}, {"--gpus", &a->gpus}, {"--nodes", &a->nodes},
        {"--gpus-per-node", &a->gpus_per_node}, {"--hw", &a->hw}, {"--seq", &a->seq}, {"--batch", &a->batch},
        {"--recompute", &a->recompute}, {"--prefetch-depth", &a->depth}, {"--param-dtype", &a->param_dtype},
        {"--grad-reduce-dtype", &a->grad_dtype}, {"--json", &a->json}};
    return zb_tool_parse_args("plan", argc, argv, opts, sizeof opts / sizeof opts[0], NULL, 0);
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

static zb_status parse_dtype(const char *flag, const char *text, zb_dtype *out) {
    char shown[72];
    if (zb_dtype_parse(text, out) != ZB_OK) {
        return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': accepted: bf16, float", flag, zb_results_shown_path(text, shown));
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

/* The model and what overrides it; the engine's configuration for its ledger. */
static zb_status make_input(const plan_args *a, zb_plan *p) {
    char why[ZB_ERROR_MAX], shown[72];
    zb_plan_input *in = &p->in;
    zb_dtype param = ZB_DTYPE_BF16, grad;
    if (a->param_dtype) ZB_TRY(parse_dtype("--param-dtype", a->param_dtype, &param));
    grad = param;
    if (a->grad_dtype) ZB_TRY(parse_dtype("--grad-reduce-dtype", a->grad_dtype, &grad));
    in->param_dtype = param;
    in->grad_dtype = grad;
    p->model_flops_per_token = NAN;
    if (!!a->model == !!a->params) {
        return ZB_FAIL(ZB_ERR_INVALID, "plan: give --model NAME or --params N (one of them)%s",
                       a->model ? ", not both" : "");
    }
    if (a->params) {
        if (zb_parse_count(a->params, &in->params) != ZB_OK) {
            return ZB_FAIL(ZB_ERR_INVALID, "--params: %s", zb_error_text(why, sizeof why));
        }
        const char *shaped = a->seq ? "--seq" : a->batch ? "--batch" : a->recompute ? "--recompute"
                             : a->depth ? "--prefetch-depth" : NULL;
        if (shaped) {
            return ZB_FAIL(ZB_ERR_INVALID, "%s needs --model: a bare --params count has no shapes to size "
                           "activations and gathered buffers from", shaped);
        }
        return ZB_OK;
    }
    zb_model_profile mp;
    if (zb_model_profile_load(a->model, &mp) != ZB_OK) {
        return ZB_FAIL(ZB_ERR_INVALID, "--model '%s': %s", zb_results_shown_path(a->model, shown),
                       zb_error_text(why, sizeof why));
    }
    snprintf(p->model, sizeof p->model, "%s", a->model);
    in->have_model = true;
    zb_engine_cfg *ec = &in->engine;
    zb_model_cfg_from_profile(&mp, 1234, &ec->model);
    if (a->seq) ZB_TRY(parse_pos("--seq", a->seq, 1 << 22, &ec->model.seq));
    if (a->batch) ZB_TRY(parse_pos("--batch", a->batch, 1 << 20, &ec->model.batch));
    ec->recompute = false;
    if (a->recompute) {
        if (strcmp(a->recompute, "none") && strcmp(a->recompute, "full")) {
            return ZB_FAIL(ZB_ERR_INVALID, "--recompute '%s': accepted: none, full",
                           zb_results_shown_path(a->recompute, shown));
        }
        ec->recompute = !strcmp(a->recompute, "full");
    }
    ec->prefetch_depth = 1;
    if (a->depth) ZB_TRY(parse_pos("--prefetch-depth", a->depth, 64, &ec->prefetch_depth));
    /* As the step: activations in the parameters' dtype (engine.h). */
    ec->param_dtype = param;
    ec->act_dtype = param;
    ec->grad_dtype = grad;
    if (zb_model_cfg_validate(&ec->model) != ZB_OK) {
        return ZB_FAIL(ZB_ERR_INVALID, "--model '%s': %s", zb_results_shown_path(a->model, shown),
                       zb_error_text(why, sizeof why));
    }
    const zb_model_cfg *m = &ec->model;
    zb_flops_shape fs = {m->layers, m->dim, m->heads, m->kv_heads, m->head_dim, m->ffn_dim, m->vocab, m->seq};
    p->model_flops_per_token = zb_model_flops_per_token(&fs, ZB_FLOPS_FULL);
    return ZB_OK;
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

static zb_status build(const plan_args *a, zb_plan *p) {
    memset(p, 0, sizeof *p);
    if (a->json) {
        if (!a->json[0] || strlen(a->json) >= sizeof p->json_path) {
            char shown[72];
            return ZB_FAIL(ZB_ERR_INVALID, "--json '%s': expected a file path", zb_shown_path(a->json, shown));
        }
        ZB_TRY(zb_out_path_check("--json", a->json));
        const zb_path_use uses[] = {{"--json", a->json, true}, {"--hw", a->hw, false}, {"--model", a->model, false}};
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
