/* Command-line parsing driven by one table of flags (see cli.h).
 *
 * Accepted spellings: `--name VALUE`, `--name=VALUE`, `-x VALUE`, `-xVALUE`.
 * A flag given to a subcommand it does not apply to is an error, so a typo
 * never silently falls back to a default. */
#include "cli.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "parse.h"
#include "registry.h"

typedef enum { OPT_SIZE, OPT_INT, OPT_REAL, OPT_TEXT, OPT_FLAG, OPT_ONOFF, OPT_DTYPE, OPT_SHAPE, OPT_CHOICE } opt_kind;

enum {
    CMD_STEP = 1u << ZB_CMD_STEP,
    CMD_COLL = (1u << ZB_CMD_ALLGATHER) | (1u << ZB_CMD_REDUCESCATTER) | (1u << ZB_CMD_ALLREDUCE),
    CMD_GEMM = 1u << ZB_CMD_GEMM,
    CMD_BENCH = CMD_COLL | CMD_GEMM,
    CMD_ALL = CMD_STEP | CMD_COLL | CMD_GEMM,
};

typedef struct opt_spec {
    const char *name; /* long name without "--" */
    char short_name;  /* 0 when none */
    opt_kind kind;
    size_t offset; /* into zb_config */
    size_t size;   /* of a text field */
    double min, max;
    unsigned commands;
    const char *help;
    const char *choices; /* OPT_CHOICE: "a|b|c", stored as the index (int) */
} opt_spec;

#define F(field) offsetof(zb_config, field), sizeof(((zb_config *)0)->field)
#define TB 1099511627776.0 /* 1T: the largest size a flag takes */

static const opt_spec zb_opts[] = {
    {"minbytes", 'b', OPT_SIZE, F(min_bytes), 1, TB, CMD_BENCH,
     "smallest size in bytes (gemm: smallest M=N=K); K, M, G, T suffixes"},
    {"maxbytes", 'e', OPT_SIZE, F(max_bytes), 1, TB, CMD_BENCH, "largest size (gemm: largest M=N=K)"},
    {"stepfactor", 'f', OPT_INT, F(step_factor), 2, 1024, CMD_BENCH, "multiply the size by this each step"},
    {"stepbytes", 'i', OPT_SIZE, F(step_bytes), 1, TB, CMD_COLL, "add this many bytes each step instead of -f"},
    {"iters", 'n', OPT_INT, F(iters), 1, 1e7, CMD_BENCH, "timed iterations per size"},
    {"warmup_iters", 'w', OPT_INT, F(warmup_iters), 0, 1e6, CMD_BENCH, "untimed warm-up iterations per size"},
    {"check", 'c', OPT_INT, F(check), 0, 1, CMD_BENCH, "1: check results from seeded data (outside the timed loop), 0: skip"},
    {"datatype", 'd', OPT_DTYPE, F(dtype), 0, 0, CMD_BENCH, "float or bf16 (gemm: bf16 on GPUs only)"},
    {"average", 'a', OPT_INT, F(average), 0, 3, CMD_BENCH, "time across ranks: 0 rank 0, 1 mean, 2 min, 3 max"},
    {"compare-direct", 0, OPT_FLAG, F(compare_direct), 0, 0, CMD_BENCH,
     "also time the library called directly on the same buffers (MPI; gemm: BLAS on cpu, cuBLASLt on cuda)"},
    {"shape", 0, OPT_SHAPE, 0, 0, 0, 0, CMD_GEMM, "MxNxK; repeat for several shapes"},
    {"model", 0, OPT_TEXT, F(model), 0, 0, CMD_GEMM | CMD_STEP, "model profile (profiles/models/NAME.json)"},
    {"tokens", 0, OPT_INT, F(tokens), 1, 1e9, CMD_GEMM, "M of the --model GEMMs (default batch*seq of the profile)"},
    {"mode", 0, OPT_CHOICE, F(mode), 0, 0, CMD_STEP, "sync, prefetch, or both side by side", "sync|prefetch|both"},
    {"stage", 0, OPT_CHOICE, F(stage), 0, 0, CMD_STEP,
     "ZeRO stage: 0 (DDP), 1, 2, 3, or all (side by side)", "0|1|2|3|all"},
    {"recompute", 0, OPT_CHOICE, F(recompute), 0, 0, CMD_STEP,
     "none, or full (keep each unit's input, recompute its forward in backward)", "none|full"},
    {"param-dtype", 0, OPT_DTYPE, F(param_dtype), 0, 0, CMD_STEP,
     "float or bf16: compute-dtype parameters, gathered as such (default: bf16 on cuda, float "
     "on cpu); master weights and AdamW states stay float"},
    {"act-dtype", 0, OPT_DTYPE, F(act_dtype), 0, 0, CMD_STEP,
     "float or bf16: activations, and the dtype the kernels and GEMMs read and write (math and "
     "accumulation stay float; default: the --param-dtype; bf16 needs bf16 params)"},
    {"grad-reduce-dtype", 0, OPT_DTYPE, F(grad_reduce_dtype), 0, 0, CMD_STEP,
     "float or bf16: gradients as reduced across ranks (default: the --param-dtype)"},
    {"prefetch-depth", 0, OPT_INT, F(prefetch_depth), 1, 64, CMD_STEP,
     "gathered units alive ahead of use in prefetch mode"},
    {"steps", 0, OPT_INT, F(steps), 1, 1e6, CMD_STEP, "measured training steps"},
    {"warmup", 0, OPT_INT, F(warmup_steps), 0, 1e6, CMD_STEP, "untimed steps before the measured ones"},
    {"layers", 0, OPT_INT, F(layers), 1, 1 << 20, CMD_STEP, "override the model's number of layers"},
    {"dim", 0, OPT_INT, F(dim), 1, 1 << 20, CMD_STEP, "override the model dimension"},
    {"heads", 0, OPT_INT, F(heads), 1, 1 << 16, CMD_STEP, "override the number of attention heads"},
    {"kv-heads", 0, OPT_INT, F(kv_heads), 1, 1 << 16, CMD_STEP, "override the number of key/value heads"},
    {"head-dim", 0, OPT_INT, F(head_dim), 1, 1 << 16, CMD_STEP, "override the head dimension"},
    {"ffn-dim", 0, OPT_INT, F(ffn_dim), 1, 1 << 22, CMD_STEP, "override the SwiGLU hidden dimension"},
    {"vocab", 0, OPT_INT, F(vocab), 2, 1 << 24, CMD_STEP, "override the vocabulary size"},
    {"seq", 0, OPT_INT, F(seq), 1, 1 << 22, CMD_STEP, "override the sequence length"},
    {"batch", 0, OPT_INT, F(batch), 1, 1 << 20, CMD_STEP, "override the micro-batch per rank"},
    {"lr", 0, OPT_REAL, F(lr), 1e-12, 1e30, CMD_STEP, "AdamW learning rate (any positive number)"},
    {"seed", 0, OPT_INT, F(seed), 0, 9e15, CMD_STEP, "seed of the initialization and the data"},
    {"flops", 0, OPT_CHOICE, F(flops_causal), 0, 0, CMD_STEP,
     "attention FLOPs convention for MFU: full (torchtitan, PaLM) or causal (Megatron)", "full|causal"},
    {"backend", 0, OPT_TEXT, F(backend), 0, 0, CMD_ALL, "device backend: auto (cuda when a usable GPU is found), cpu, cuda"},
    {"comm", 0, OPT_TEXT, F(comm), 0, 0, CMD_ALL, "comm backend: auto (nccl on cuda, mpi on cpu), mpi, nccl"},
    {"hw", 0, OPT_TEXT, F(hw), 0, 0, CMD_ALL, "hardware profile (profiles/hw/NAME.json) for peak figures"},
    {"peak-gflops", 0, OPT_REAL, F(peak_gflops), 1e-3, 1e12, CMD_ALL,
     "peak GFLOP/s per rank for %-of-peak and MFU (default: profile, or measured on cpu)"},
    {"threads", 0, OPT_INT, F(threads), 1, 4096, CMD_ALL, "BLAS threads per rank (default: cores / ranks per node)"},
    {"malloc-keep", 0, OPT_ONOFF, F(malloc_keep), 0, 0, CMD_ALL,
     "on: glibc keeps freed memory (no mmap for big blocks, no trim), off: glibc defaults"},
    {"gpu-trace", 0, OPT_ONOFF, F(gpu_trace), 0, 0, CMD_ALL,
     "on: trace GPU work with CUPTI (cuda); off: no tracer, trace metrics not measured (to see its overhead)"},
    {"nodes", 0, OPT_INT, F(nodes), 1, 1e6, CMD_ALL, "nodes; outside MPI zerobench relaunches itself with mpirun"},
    {"gpus-per-node", 0, OPT_INT, F(gpus_per_node), 1, 1024, CMD_ALL, "ranks per node (GPUs on cuda)"},
    {"hostfile", 0, OPT_TEXT, F(hostfile), 0, 0, CMD_ALL, "hostfile passed to mpirun"},
    {"emulate-nodes", 0, OPT_FLAG, F(emulate_nodes), 0, 0, CMD_ALL,
     "run all --nodes on this machine, node identity from ZB_NODE_ID (testing)"},
    {"timeout", 0, OPT_REAL, F(timeout_s), 0.1, 1e6, CMD_ALL, "seconds before a stuck collective ends the job"},
    {"json", 0, OPT_TEXT, F(json_path), 0, 0, CMD_ALL, "write results as JSON (zerobench/1 schema)"},
    {"csv", 0, OPT_TEXT, F(csv_path), 0, 0, CMD_ALL, "write results as CSV"},
    {"trace", 0, OPT_TEXT, F(trace_path), 0, 0, CMD_ALL, "write a Chrome/Perfetto trace of every op"},
    {"help", 'h', OPT_FLAG, F(help), 0, 0, CMD_ALL, "show this help"},
};
#define ZB_N_OPTS (sizeof zb_opts / sizeof zb_opts[0])

static const opt_spec *find_long(const char *name, size_t len) {
    for (size_t i = 0; i < ZB_N_OPTS; i++) {
        if (strlen(zb_opts[i].name) == len && !strncmp(zb_opts[i].name, name, len)) {
            return &zb_opts[i];
        }
    }
    return NULL;
}

static const opt_spec *find_short(char c) {
    for (size_t i = 0; i < ZB_N_OPTS; i++) {
        if (zb_opts[i].short_name == c) return &zb_opts[i];
    }
    return NULL;
}

/* "-b/--minbytes" or "--json": how messages name a flag. */
static void flag_display(const opt_spec *o, char *out, size_t n) {
    if (o->short_name) {
        snprintf(out, n, "-%c/--%s", o->short_name, o->name);
    } else {
        snprintf(out, n, "--%s", o->name);
    }
}

/* At most 64 characters of a value, so that a long one never pushes what is
 * accepted out of the one-line message (ZB_ERROR_MAX); control characters
 * (a newline inside an argument) become '?' so the message stays one line. */
static const char *shown(const char *value, char out[72]) {
    size_t len = strlen(value);
    snprintf(out, 72, "%.*s%s", 64, value, len > 64 ? "..." : "");
    for (char *p = out; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    }
    return out;
}

static zb_status bad_value(const opt_spec *o, const char *value, const char *accepted) {
    char flag[64], v[72];
    flag_display(o, flag, sizeof flag);
    return ZB_FAIL(ZB_ERR_INVALID, "%s '%s': %s", flag, shown(value, v), accepted);
}

static zb_status set_number(const opt_spec *o, const char *value, zb_config *cfg) {
    char accepted[160];
    char *field = (char *)cfg + o->offset;
    if (o->kind == OPT_SIZE) {
        uint64_t v;
        char lo[32], hi[32];
        zb_format_size((uint64_t)o->min, lo, sizeof lo);
        zb_format_size((uint64_t)o->max, hi, sizeof hi);
        snprintf(accepted, sizeof accepted, "expected a size from %s to %s bytes (e.g. 4K, 64M, 1G)", lo, hi);
        if (zb_parse_size(value, &v) != ZB_OK || (double)v < o->min || (double)v > o->max) {
            return bad_value(o, value, accepted);
        }
        memcpy(field, &v, sizeof v);
        return ZB_OK;
    }
    if (o->kind == OPT_INT) {
        int64_t v;
        snprintf(accepted, sizeof accepted, "expected an integer from %.0f to %.0f", o->min, o->max);
        if (zb_parse_int64(value, &v) != ZB_OK || (double)v < o->min || (double)v > o->max) {
            return bad_value(o, value, accepted);
        }
        if (o->size == sizeof(int64_t)) {
            memcpy(field, &v, sizeof v);
        } else { /* int-sized fields: check, average (enum) */
            int small = (int)v;
            memcpy(field, &small, sizeof small);
        }
        return ZB_OK;
    }
    double v;
    snprintf(accepted, sizeof accepted, "expected a number from %g to %g", o->min, o->max);
    if (zb_parse_double(value, &v) != ZB_OK || v < o->min || v > o->max) {
        return bad_value(o, value, accepted);
    }
    memcpy(field, &v, sizeof v);
    return ZB_OK;
}

/* Stores the index of `value` in o->choices ("a|b|c") as an int. */
static zb_status set_choice(const opt_spec *o, const char *value, char *field) {
    const char *p = o->choices;
    size_t len = strlen(value);
    for (int index = 0; p && *p; index++) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && !strncmp(p, value, n)) {
            memcpy(field, &index, sizeof index);
            return ZB_OK;
        }
        p = bar ? bar + 1 : NULL;
    }
    char accepted[160] = "accepted: ";
    size_t used = strlen(accepted);
    for (const char *c = o->choices; *c && used + 3 < sizeof accepted; c++) {
        if (*c == '|') {
            accepted[used++] = ',';
            accepted[used++] = ' ';
        } else {
            accepted[used++] = *c;
        }
    }
    accepted[used] = '\0';
    return bad_value(o, value, accepted);
}

static zb_status set_value(const opt_spec *o, const char *value, zb_config *cfg) {
    char *field = (char *)cfg + o->offset;
    switch (o->kind) {
    case OPT_SIZE:
    case OPT_INT:
    case OPT_REAL: return set_number(o, value, cfg);
    case OPT_TEXT:
        if (value[0] == '\0' || strlen(value) >= o->size) {
            char accepted[96];
            snprintf(accepted, sizeof accepted, "expected a non-empty value shorter than %zu characters", o->size);
            return bad_value(o, value, accepted);
        }
        strcpy(field, value);
        return ZB_OK;
    case OPT_ONOFF:
        if (strcmp(value, "on") && strcmp(value, "off")) return bad_value(o, value, "expected on or off");
        *(bool *)field = !strcmp(value, "on");
        return ZB_OK;
    case OPT_DTYPE: { /* every OPT_DTYPE field is a zb_dtype */
        zb_dtype t;
        if (zb_dtype_parse(value, &t) != ZB_OK) {
            return bad_value(o, value, "accepted: float, bf16 (or fp32, bfloat16)");
        }
        memcpy(field, &t, sizeof t);
        return ZB_OK;
    }
    case OPT_SHAPE:
        if (cfg->n_shapes >= ZB_MAX_SHAPES) return bad_value(o, value, "too many shapes (at most 64)");
        if (zb_parse_shape(value, cfg->shapes[cfg->n_shapes]) != ZB_OK) {
            return bad_value(o, value, "expected MxNxK with positive integers up to 2^30");
        }
        cfg->n_shapes++;
        return ZB_OK;
    case OPT_FLAG: *(bool *)field = true; return ZB_OK;
    case OPT_CHOICE: return set_choice(o, value, field);
    }
    return ZB_FAIL(ZB_ERR_INTERNAL, "unhandled option kind");
}

/* Resolves argv[*i] to an option and its value (which may be argv[*i+1]). */
static zb_status next_option(int argc, char *const *argv, int *i, const opt_spec **opt,
                             const char **value) {
    const char *arg = argv[*i];
    const char *inline_value = NULL;
    const opt_spec *o = NULL;
    if (!strncmp(arg, "--", 2) && arg[2] != '\0') {
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        o = find_long(name, eq ? (size_t)(eq - name) : strlen(name));
        if (eq) inline_value = eq + 1;
    } else if (arg[0] == '-' && arg[1] != '\0' && arg[1] != '-') {
        o = find_short(arg[1]);
        if (arg[2] != '\0') inline_value = arg + 2;
    }
    char v[72];
    if (!o) return ZB_FAIL(ZB_ERR_INVALID, "unknown option '%s' (see --help)", shown(arg, v));
    if (o->kind == OPT_FLAG) {
        if (inline_value) return ZB_FAIL(ZB_ERR_INVALID, "option '%s' takes no value", shown(arg, v));
        *value = "";
    } else if (inline_value) {
        *value = inline_value;
    } else if (*i + 1 < argc) {
        *value = argv[++*i];
    } else {
        char flag[64];
        flag_display(o, flag, sizeof flag);
        return ZB_FAIL(ZB_ERR_INVALID, "%s needs a value (see --help)", flag);
    }
    *opt = o;
    return ZB_OK;
}

/* Checks between flags, once all are read. */
static zb_status check_combination(const zb_config *cfg, bool gave_f, bool gave_i) {
    if (cfg->min_bytes > cfg->max_bytes) {
        char lo[32], hi[32];
        zb_format_size(cfg->min_bytes, lo, sizeof lo);
        zb_format_size(cfg->max_bytes, hi, sizeof hi);
        return ZB_FAIL(ZB_ERR_INVALID, "-b/--minbytes %s is larger than -e/--maxbytes %s", lo, hi);
    }
    if (gave_f && gave_i) {
        return ZB_FAIL(ZB_ERR_INVALID, "-f/--stepfactor and -i/--stepbytes exclude each other: give one");
    }
    if (cfg->command == ZB_CMD_GEMM) {
        int ways = (cfg->n_shapes > 0) + (cfg->model[0] != '\0') + cfg->gemm_sweep_given;
        if (ways > 1) {
            return ZB_FAIL(ZB_ERR_INVALID, "gemm takes one of -b/-e (M=N=K sweep), --shape or --model, not several");
        }
        if (cfg->max_bytes > (1u << 20)) {
            return ZB_FAIL(ZB_ERR_INVALID, "gemm -e/--maxbytes %llu: a GEMM dimension is at most 1048576",
                           (unsigned long long)cfg->max_bytes);
        }
    }
    if (cfg->emulate_nodes && cfg->nodes == 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "--emulate-nodes needs --nodes N");
    }
    /* Every backend the registry knows, built here or not: one not built
     * says so when the run resolves it. */
    char v[72], names[128];
    if (strcmp(cfg->backend, "auto") && !zb_device_backend_find(cfg->backend)) {
        zb_device_backend_names(names, sizeof names, false);
        return ZB_FAIL(ZB_ERR_INVALID, "--backend '%s': accepted: auto, %s", shown(cfg->backend, v), names);
    }
    if (strcmp(cfg->comm, "auto") && !zb_comm_backend_find(cfg->comm)) {
        zb_comm_backend_names(names, sizeof names, false);
        return ZB_FAIL(ZB_ERR_INVALID, "--comm '%s': accepted: auto, %s", shown(cfg->comm, v), names);
    }
    return ZB_OK;
}

static zb_status parse_command(int argc, char *const *argv, zb_config *cfg, int *first) {
    *first = 1;
    if (argc < 2 || argv[1][0] == '-') return ZB_OK; /* no subcommand: step */
    for (int c = 0; c < ZB_CMD_COUNT; c++) {
        if (!strcmp(argv[1], zb_command_name((zb_command)c))) {
            cfg->command = (zb_command)c;
            *first = 2;
            return ZB_OK;
        }
    }
    char v[72];
    return ZB_FAIL(ZB_ERR_INVALID, "unknown subcommand '%s' (accepted: step, allgather, "
                   "reducescatter, allreduce, gemm)", shown(argv[1], v));
}

zb_status zb_cli_parse(int argc, char *const *argv, zb_config *cfg) {
    zb_config_defaults(cfg);
    int first;
    ZB_TRY(parse_command(argc, argv, cfg, &first));
    if (cfg->command == ZB_CMD_GEMM) {
        /* gemm's default sweep M=N=K 256..2048, set before the flags so that
         * -b or -e alone keeps the other bound from this sweep, not 32M. */
        cfg->min_bytes = 256;
        cfg->max_bytes = 2048;
    }
    bool gave_f = false, gave_i = false;
    for (int i = first; i < argc; i++) {
        const opt_spec *o = NULL;
        const char *value = NULL;
        ZB_TRY(next_option(argc, argv, &i, &o, &value));
        if (!(o->commands & (1u << cfg->command))) {
            char flag[64];
            flag_display(o, flag, sizeof flag);
            return ZB_FAIL(ZB_ERR_INVALID, "%s is not an option of '%s' (see %s --help)", flag,
                           zb_command_name(cfg->command), zb_command_name(cfg->command));
        }
        ZB_TRY(set_value(o, value, cfg));
        if (o->offset == offsetof(zb_config, step_factor)) gave_f = true;
        if (o->offset == offsetof(zb_config, step_bytes)) {
            gave_i = true;
            cfg->step_factor = 0;
        }
        if (cfg->command == ZB_CMD_GEMM && (o->offset == offsetof(zb_config, min_bytes) ||
                                            o->offset == offsetof(zb_config, max_bytes))) {
            cfg->gemm_sweep_given = true;
        }
    }
    if (cfg->help) return ZB_OK;
    return check_combination(cfg, gave_f, gave_i);
}

void zb_cli_usage(zb_command cmd, char *out, size_t n) {
    size_t used = (size_t)snprintf(out, n,
        "usage: zerobench [step|allgather|reducescatter|allreduce|gemm] [options]\n"
        "options of '%s':\n", zb_command_name(cmd));
    for (size_t i = 0; i < ZB_N_OPTS && used < n; i++) {
        const opt_spec *o = &zb_opts[i];
        if (!(o->commands & (1u << cmd))) continue;
        char flag[64];
        flag_display(o, flag, sizeof flag);
        used += (size_t)snprintf(out + used, n - used, "  %-22s %s\n", flag, o->help);
    }
}
