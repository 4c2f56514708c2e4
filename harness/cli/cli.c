/* Command-line parsing over the benchmark registry (see cli.h): the
 * commands are the registry's entries, each command's flags its entry's
 * option groups (bench.h, bench_opts.h) followed by the options every
 * command takes (below); the entry's defaults and combination check run
 * around the flags.
 *
 * Accepted spellings: `--name VALUE`, `--name=VALUE`, `-x VALUE`, `-xVALUE`.
 * A value is parsed by its option's description (zb_opt_set, bench_opts.c),
 * which the plan tool also uses for the step's flags it takes.
 * A flag given to a subcommand it does not apply to is an error, so a typo
 * never silently falls back to a default. */
#include "cli.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "blas_core.h"
#include "escape.h"
#include "parse.h"
#include "registry.h"
#include "tool.h"

typedef zb_opt opt_spec;

#define F(field) ZB_OPT_FIELD(field)

/* The options every command takes, after its benchmark's own (bench.h). */
static const opt_spec opt_common[] = {
    /* --help appends the registry's names to these two (print_usage_line). */
    {"backend", 0, ZB_OPT_TEXT, F(backend), 0, 0, "device backend: auto (cuda when a usable GPU is found)"},
    {"comm", 0, ZB_OPT_TEXT, F(comm), 0, 0, "comm backend: auto (nccl on cuda, mpi on cpu)"},
    {"hw", 0, ZB_OPT_TEXT, F(hw), 0, 0, "hardware profile (profiles/hw/NAME.json) for peak figures"},
    {"peak-gflops", 0, ZB_OPT_REAL, F(peak_gflops), 1e-3, 1e12,
     "peak GFLOP/s per rank for %-of-peak and MFU (default: profile, or on cpu the host's measurement, cached)"},
    {"peak-measure", 0, ZB_OPT_FLAG, F(peak_measure), 0, 0,
     "cpu: time the FMA peak again and replace the host's cached figure (ZB_PEAK_CACHE; off: no cache)"},
    {"threads", 0, ZB_OPT_INT, F(threads), 1, 4096, "BLAS threads per rank (default: cores / ranks on the machine)"},
    {"malloc-keep", 0, ZB_OPT_ONOFF, F(malloc_keep), 0, 0,
     "on: glibc keeps freed memory (no mmap for big blocks, no trim), off: glibc defaults"},
    {"blas-core", 0, ZB_OPT_TEXT, F(blas_core), 0, 0,
     "OpenBLAS kernels: auto (the strongest the CPU supports when OpenBLAS chose weaker), keep, or a core "
     "name (SkylakeX, Haswell, Prescott, ...); OPENBLAS_CORETYPE set by the user wins"},
    {"gpu-trace", 0, ZB_OPT_ONOFF, F(gpu_trace), 0, 0,
     "on: trace GPU work with CUPTI (cuda); off: no tracer, trace metrics not measured (to see its overhead)"},
    {"nodes", 0, ZB_OPT_INT_LIST, F(nodes_list), 1, 1e6,
     "nodes; outside MPI zerobench relaunches itself with mpirun (--backend sim: the nodes it models; scale: a "
     "list, 1,2,4)"},
    {"gpus-per-node", 0, ZB_OPT_INT, F(gpus_per_node), 1, 1024, "ranks per node (GPUs on cuda)"},
    {"hostfile", 0, ZB_OPT_TEXT, F(hostfile), 0, 0, "hostfile passed to mpirun"},
    {"emulate-nodes", 0, ZB_OPT_FLAG, F(emulate_nodes), 0, 0,
     "run all --nodes on this machine, node identity from ZB_NODE_ID (testing)"},
    /* -T: nccl-tests' short form of the same flag (bench/coll_compat.c). */
    {"timeout", 'T', ZB_OPT_REAL, F(timeout_s), 0.1, 1e6, "seconds before a stuck collective ends the job"},
    {"json", 0, ZB_OPT_TEXT, F(json_path), 0, 0, "write results as JSON (zerobench/1 schema)"},
    {"csv", 0, ZB_OPT_TEXT, F(csv_path), 0, 0, "write results as CSV"},
    {"trace", 0, ZB_OPT_TEXT, F(trace_path), 0, 0,
     "write a trace of every op: a Chrome/Perfetto file, or with --trace-format kineto a folder of one file per "
     "rank"},
    {"trace-format", 0, ZB_OPT_CHOICE, F(trace_format), 0, 0,
     "chrome: one Chrome trace-event file (Perfetto); kineto: PyTorch profiler's layout, a file per rank in the "
     "--trace folder, for Holistic Trace Analysis", "chrome|kineto"},
    {"help", 'h', ZB_OPT_FLAG, F(help), 0, 0, "show this help"},
};
#define ZB_N_COMMON (sizeof opt_common / sizeof opt_common[0])

/* Calls visit(o, arg) for every option of `bench` in --help order (its
 * groups, then the common ones) until it returns true; returns that option. */
static const opt_spec *each_option(const zb_bench *bench, bool (*visit)(const opt_spec *, const void *),
                                   const void *arg) {
    for (const zb_opt_group *const *g = bench->groups; g && *g; g++) {
        for (const zb_opt *const *o = (*g)->opts; *o; o++) {
            if (visit(*o, arg)) return *o;
        }
    }
    for (size_t i = 0; i < ZB_N_COMMON; i++) {
        if (visit(&opt_common[i], arg)) return &opt_common[i];
    }
    return NULL;
}

typedef struct long_key {
    const char *name;
    size_t len;
} long_key;

static bool has_long(const opt_spec *o, const void *arg) {
    const long_key *k = (const long_key *)arg;
    return strlen(o->name) == k->len && !strncmp(o->name, k->name, k->len);
}

static bool has_short(const opt_spec *o, const void *arg) { return o->short_name == *(const char *)arg; }

static bool is_option(const opt_spec *o, const void *arg) { return o == (const opt_spec *)arg; }

/* An option of any command, so that one given to the wrong command is told
 * apart from an unknown one. */
static const opt_spec *find_any(bool (*match)(const opt_spec *, const void *), const void *arg) {
    for (int c = 0; c < ZB_CMD_COUNT; c++) {
        const opt_spec *o = each_option(zb_bench_find((zb_command)c), match, arg);
        if (o) return o;
    }
    return NULL;
}

static const opt_spec *find_long(const char *name, size_t len) {
    long_key k = {name, len};
    return find_any(has_long, &k);
}

static const opt_spec *find_short(char c) { return find_any(has_short, &c); }

/* At most 64 bytes of a value, escaped, as zb_opt_set shows values
 * (bench_opts.c), so that every message of the command line reads alike. */
static const char *shown(const char *value, char out[72]) { return zb_escape(value, 64, out, 72); }

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
    if (o->kind == ZB_OPT_FLAG) {
        if (inline_value) return ZB_FAIL(ZB_ERR_INVALID, "option '%s' takes no value", shown(arg, v));
        *value = "";
    } else if (inline_value) {
        *value = inline_value;
    } else if (*i + 1 < argc) {
        *value = argv[++*i];
    } else {
        char flag[64];
        zb_opt_flag_display(o, flag, sizeof flag);
        return ZB_FAIL(ZB_ERR_INVALID, "%s needs a value (see --help)", flag);
    }
    *opt = o;
    return ZB_OK;
}

/* Checks between flags, once all are read: the benchmark's groups', then
 * its own, then those of the options every command takes. */
static zb_status check_combination(zb_config *cfg, const zb_bench *bench, const zb_opt_seen *seen) {
    cfg->nodes = cfg->nodes_list.n > 0 ? cfg->nodes_list.v[0] : 0;
    for (const zb_opt_group *const *g = bench->groups; g && *g; g++) {
        if ((*g)->check) ZB_TRY((*g)->check(cfg, seen));
    }
    if (bench->check) ZB_TRY(bench->check(cfg, seen));
    if (cfg->nodes_list.n > 1 && !(bench->flags & ZB_BENCH_NODE_LIST)) {
        return ZB_FAIL(ZB_ERR_INVALID, "--nodes: a list of %d node counts is taken by the scale command only; "
                       "%s takes one", cfg->nodes_list.n, zb_command_name(cfg->command));
    }
    if (cfg->emulate_nodes && cfg->nodes == 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "--emulate-nodes needs --nodes N");
    }
    /* --peak-gflops replaces the measurement: timing it would be for nothing. */
    if (cfg->peak_measure && cfg->peak_gflops > 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "--peak-measure: not with --peak-gflops %g, which replaces the measured peak",
                       cfg->peak_gflops);
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

/* The registry's command names joined by `sep`. */
static void command_names(const char *sep, char *out, size_t n) {
    size_t used = 0;
    out[0] = '\0';
    for (int c = 0; c < ZB_CMD_COUNT && used < n; c++) {
        used += (size_t)snprintf(out + used, n - used, "%s%s", c ? sep : "", zb_command_name((zb_command)c));
    }
}

static zb_status parse_command(int argc, char *const *argv, zb_config *cfg, int *first) {
    *first = 1;
    if (argc < 2 || argv[1][0] == '-') return ZB_OK; /* no subcommand: the registry's first */
    for (int c = 0; c < ZB_CMD_COUNT; c++) {
        if (!strcmp(argv[1], zb_command_name((zb_command)c))) {
            cfg->command = (zb_command)c;
            *first = 2;
            return ZB_OK;
        }
    }
    char v[72], names[256], tools[256];
    command_names(", ", names, sizeof names);
    zb_tool_names(", ", tools, sizeof tools);
    return ZB_FAIL(ZB_ERR_INVALID, "unknown subcommand '%s' (accepted: %s%s%s)", shown(argv[1], v), names,
                   tools[0] ? ", " : "", tools);
}

static void note_given(zb_opt_seen *seen, const opt_spec *o) {
    if (!zb_opt_given(seen, o) && seen->n < ZB_OPT_SEEN_MAX) seen->given[seen->n++] = o;
}

zb_status zb_cli_parse(int argc, char *const *argv, zb_config *cfg) {
    zb_config_defaults(cfg);
    int first;
    ZB_TRY(parse_command(argc, argv, cfg, &first));
    const zb_bench *bench = zb_bench_find(cfg->command);
    if (bench->defaults) bench->defaults(cfg);
    zb_opt_seen seen;
    seen.n = 0;
    for (int i = first; i < argc; i++) {
        const opt_spec *o = NULL;
        const char *value = NULL;
        ZB_TRY(next_option(argc, argv, &i, &o, &value));
        if (!each_option(bench, is_option, o)) {
            char flag[64];
            zb_opt_flag_display(o, flag, sizeof flag);
            return ZB_FAIL(ZB_ERR_INVALID, "%s is not an option of '%s' (see %s --help)", flag,
                           zb_command_name(cfg->command), zb_command_name(cfg->command));
        }
        ZB_TRY(zb_opt_set(o, value, cfg));
        note_given(&seen, o);
    }
    if (cfg->help) return ZB_OK;
    zb_blas_core_mode core_mode;
    const char *core_name;
    ZB_TRY(zb_blas_core_parse(cfg->blas_core, &core_mode, &core_name));
    return check_combination(cfg, bench, &seen);
}

typedef struct usage_out {
    char *p;
    size_t n, used;
} usage_out;

static bool print_usage_line(const opt_spec *o, const void *arg) {
    usage_out *u = (usage_out *)arg;
    if (u->used >= u->n) return true; /* full: stop */
    char flag[64], names[256] = "";
    zb_opt_flag_display(o, flag, sizeof flag);
    /* The backends a build knows come from the registry, built or not. */
    if (o->offset == offsetof(zb_config, backend)) zb_device_backend_names(names, sizeof names, false);
    if (o->offset == offsetof(zb_config, comm)) zb_comm_backend_names(names, sizeof names, false);
    /* A flag kept for nccl-tests' command lines says what zerobench does instead. */
    if (o->kind == ZB_OPT_ACCEPT) snprintf(names, sizeof names, "%s", o->instead);
    u->used += (size_t)snprintf(u->p + u->used, u->n - u->used, "  %-22s %s%s%s\n", flag, o->help,
                                names[0] ? (o->kind != ZB_OPT_ACCEPT ? ", " : o->choices ? "; else: " : ": ") : "", names);
    return false;
}

void zb_cli_usage(zb_command cmd, char *out, size_t n) {
    char names[256];
    command_names("|", names, sizeof names);
    usage_out u = {out, n, 0};
    u.used = (size_t)snprintf(out, n, "usage: zerobench [%s] [options]\n"
                              "options of '%s':\n", names, zb_command_name(cmd));
    const zb_bench *bench = zb_bench_find(cmd);
    if (bench) each_option(bench, print_usage_line, &u);
    for (int i = 0; zb_tool_at(i) && u.used < u.n; i++) {
        if (!i) u.used += (size_t)snprintf(u.p + u.used, u.n - u.used, "tools (zerobench TOOL --help):\n");
        if (u.used < u.n) {
            u.used += (size_t)snprintf(u.p + u.used, u.n - u.used, "  %-22s %s\n", zb_tool_at(i)->name,
                                       zb_tool_at(i)->summary);
        }
    }
}

/* ---- the configuration as digests, for ranks to compare (cli.h) ------------ */

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * FNV_PRIME;
    return h;
}

/* The option's value as parsed: text up to its end (the bytes after it are
 * not the value), lists and shapes as many entries as were given. */
static uint64_t option_digest(const opt_spec *o, const zb_config *cfg) {
    const char *field = (const char *)cfg + o->offset;
    uint64_t h = FNV_OFFSET;
    switch (o->kind) {
    case ZB_OPT_TEXT: return fnv1a(h, field, strlen(field));
    case ZB_OPT_SHAPE:
        h = fnv1a(h, &cfg->n_shapes, sizeof cfg->n_shapes);
        return fnv1a(h, cfg->shapes, (size_t)cfg->n_shapes * sizeof cfg->shapes[0]);
    case ZB_OPT_INT_LIST: {
        const zb_int_list *l = (const zb_int_list *)field;
        h = fnv1a(h, &l->n, sizeof l->n);
        return fnv1a(h, l->v, (size_t)l->n * sizeof l->v[0]);
    }
    default: return fnv1a(h, field, o->size);
    }
}

typedef struct digest_walk {
    const zb_config *cfg;
    uint64_t *out;
    int n, cap, want; /* want: the index whose option to stop at; -1: none */
} digest_walk;

static bool digest_one(const opt_spec *o, const void *arg) {
    digest_walk *w = (digest_walk *)arg; /* each_option passes it through */
    if (o->alias) return false; /* its field is digested, and named, under its own option */
    if (w->n == w->want) return true;
    if (w->out && w->n < w->cap) w->out[w->n] = option_digest(o, w->cfg);
    w->n++;
    return false;
}

int zb_cli_config_digests(const zb_config *cfg, uint64_t *out, int cap) {
    if (cap < 1) return 0;
    out[0] = (uint64_t)cfg->command;
    digest_walk w = {cfg, out, 1, cap, -1};
    each_option(zb_bench_find(cfg->command), digest_one, &w);
    return w.n < cap ? w.n : cap;
}

uint64_t zb_cli_digests_fold(const uint64_t *digests, int n) {
    return fnv1a(FNV_OFFSET, digests, (size_t)(n > 0 ? n : 0) * sizeof *digests);
}

void zb_cli_digest_name(zb_command cmd, int index, char *out, size_t n) {
    const zb_bench *bench = zb_bench_find(cmd);
    digest_walk w = {NULL, NULL, 1, 0, index};
    const opt_spec *o = index > 0 && bench ? each_option(bench, digest_one, &w) : NULL;
    if (o) {
        zb_opt_flag_display(o, out, n);
    } else {
        snprintf(out, n, index == 0 ? "the command" : "its configuration");
    }
}
