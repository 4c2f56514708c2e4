/* zerobench's entry point: parse, launch, set up the backends, run one
 * benchmark, write its outputs, and turn statuses into exit codes.
 *
 * Exit codes: 0 success, 1 a wrong result or a runtime failure, 2 bad input.
 * Everything that can be validated without MPI (flags, profiles, output
 * folders) is checked before MPI starts, so bad input never leaves a job
 * half-launched. A timeout or MPI failure ends every rank (MPI_Abort). */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "blas_core.h"
#include "clock_sync.h"
#include "config_agree.h"
#include "config_json.h"
#include "escape.h"
#include "launch.h"
#include "meta.h"
#include "mpi_wait.h"
#include "out_path.h"
#include "registry.h"
#include "peak_cache.h"
#include "peak_node.h"
#include "test_hook.h"
#include "tool.h"
#include "trace_export.h"
#include "trace_kineto.h"

/* Rank 0 of a job, or a process outside MPI: the one that prints. */
static bool is_first_rank(void) {
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    if (!r) r = getenv("PMIX_RANK");
    if (!r) r = getenv("PMI_RANK");
    return !r || !strcmp(r, "0");
}

static int fail_input(void) {
    if (is_first_rank()) fprintf(stderr, "zerobench: %s\n", zb_error_message());
    return 2;
}

/* --trace: a file (chrome) or a folder of one file per rank (kineto), in
 * which no other output may land where HTA would read it as a trace. */
static zb_status check_trace_output(const zb_config *cfg) {
    if (cfg->trace_format != ZB_TRACE_KINETO) return zb_out_path_check("--trace", cfg->trace_path);
    if (!cfg->trace_path[0]) {
        return ZB_FAIL(ZB_ERR_INVALID, "--trace-format kineto: needs --trace DIR (the folder of one trace file per "
                       "rank it writes)");
    }
    ZB_TRY(zb_kineto_dir_check("--trace", cfg->trace_path));
    if (zb_kineto_would_read(cfg->trace_path, cfg->json_path)) {
        char s1[72], s2[72];
        return ZB_FAIL(ZB_ERR_INVALID, "--json '%s': inside the --trace folder '%s', where HTA would read it as a "
                       "rank's trace; write it elsewhere", zb_shown_path(cfg->json_path, s1),
                       zb_shown_path(cfg->trace_path, s2));
    }
    return ZB_OK;
}

static zb_status validate_inputs(const zb_config *cfg, zb_hw_profile *hw) {
    char shown[72], why[ZB_ERROR_MAX];
    ZB_TRY(zb_out_path_check("--json", cfg->json_path));
    ZB_TRY(zb_out_path_check("--csv", cfg->csv_path));
    ZB_TRY(check_trace_output(cfg));
    const zb_path_use uses[] = {{"--json", cfg->json_path, true},    {"--csv", cfg->csv_path, true},
                                {"--trace", cfg->trace_path, true},  {"--hw", cfg->hw, false},
                                {"--model", cfg->model, false},      {"--hostfile", cfg->hostfile, false}};
    ZB_TRY(zb_paths_distinct(uses, (int)(sizeof uses / sizeof uses[0])));
    ZB_TRY(zb_clock_skew_check());
    int delay_rank;
    double delay_ms;
    ZB_TRY(zb_test_delay_comm(&delay_rank, &delay_ms)); /* a test hook's syntax, before any work */
    struct stat st;
    if (cfg->hostfile[0] && (stat(cfg->hostfile, &st) != 0 || !S_ISREG(st.st_mode) ||
                             access(cfg->hostfile, R_OK) != 0)) {
        return ZB_FAIL(ZB_ERR_INVALID, "--hostfile '%s': not a readable file", zb_shown_path(cfg->hostfile, shown));
    }
    /* Without --hw the device backend names its profile (choose_hw). */
    memset(hw, 0, sizeof *hw);
    if (cfg->hw[0] && zb_hw_profile_load(cfg->hw, hw) != ZB_OK) {
        return ZB_FAIL(ZB_ERR_INVALID, "--hw '%s': %s", zb_shown_path(cfg->hw, shown), zb_error_text(why, sizeof why));
    }
    if (cfg->model[0]) {
        zb_model_profile mp;
        if (zb_model_profile_load(cfg->model, &mp) != ZB_OK) {
            return ZB_FAIL(ZB_ERR_INVALID, "--model '%s': %s", zb_shown_path(cfg->model, shown),
                           zb_error_text(why, sizeof why));
        }
    }
    return ZB_OK;
}

/* glibc keeps freed memory when asked: Open MPI's reduction temporaries then
 * stop costing page faults on every call. Reported in meta. One arena: the
 * collectives run on the comm stream's thread, and a thread's own arena
 * serves a block that does not fit its 64 MiB heap with a fresh mmap
 * whatever M_MMAP_MAX says, unmapped again on free, so every reduction of
 * 64 MiB or more faulted its temporary in anew (docs/design.md §10). */
static void apply_malloc_policy(bool keep) {
    if (!keep) return;
    mallopt(M_ARENA_MAX, 1);
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
}

/* The BLAS core this process runs and why (blas_core.h); main decides it
 * before MPI starts, the header and the meta report it. */
static zb_blas_core_state blas_core;

/* Decides the BLAS core; when another must run, executes this program again
 * with OPENBLAS_CORETYPE set (the library reads it only when it is loaded).
 * Runs before MPI_Init, so a rank under mpirun can do it too: the process
 * keeps its pid and its environment, and connects to the job only in the
 * MPI_Init of the new image. Returns -1 to go on, else the exit code. */
static int choose_blas_core(const zb_config *cfg, char **argv) {
    zb_blas_core_mode mode;
    const char *name;
    if (zb_blas_core_parse(cfg->blas_core, &mode, &name) != ZB_OK) return fail_input();
    if (zb_blas_core_decide_here(mode, name, &blas_core) != ZB_OK) return fail_input();
    if (blas_core.exec_core[0]) {
        char self[ZB_PATH_MAX];
        if (zb_launch_self_exe(argv[0], self, sizeof self) != ZB_OK) return fail_input();
        setenv(ZB_BLAS_CORE_ENV, blas_core.exec_core, 1);
        setenv(ZB_BLAS_CORE_MARKER_ENV, blas_core.marker, 1);
        fflush(NULL);
        execv(self, argv);
        fprintf(stderr, "zerobench: running %s again with %s=%s: %s\n", self, ZB_BLAS_CORE_ENV,
                blas_core.exec_core, strerror(errno));
        return 1;
    }
    /* Kernels zerobench chose are checked before anything is measured. */
    if (blas_core.changed && zb_blas_core_check(blas_core.ran) != ZB_OK) {
        if (is_first_rank()) fprintf(stderr, "zerobench: %s\n", zb_error_message());
        return 1;
    }
    return -1;
}

static int relaunch(const zb_config *cfg, int argc, char **argv) {
    zb_launch_opts o = {(int)(cfg->nodes ? cfg->nodes : 1), (int)cfg->gpus_per_node,
                        cfg->hostfile[0] ? cfg->hostfile : NULL, cfg->emulate_nodes, NULL};
    char **cmd = NULL;
    if (zb_launch_build_argv(&o, argc, argv, &cmd) != ZB_OK) return fail_input();
    int rc = zb_launch_run(cmd);
    zb_launch_argv_free(cmd);
    return rc;
}

/* The peak in the dtype the benchmark computes in (its entry says); a
 * measured one is the node's (zb_peak_measure_node), taken before setup or
 * reused from the host's cache. `basis` is what the figure rests on, the
 * same for every run that reuses one measurement, so that compare can tell
 * runs measured against one peak from runs measured against two. */
static void set_peak(zb_bench_ctx *ctx, const zb_peak_measure *pm, char *basis, size_t n) {
    const zb_config *cfg = ctx->cfg;
    bool bf16 = ctx->bench->peak_dtype(cfg, zb_bench_default_param_dtype(ctx)) == ZB_DTYPE_BF16;
    if (cfg->peak_gflops > 0) {
        ctx->peak_flops = cfg->peak_gflops * 1e9;
        snprintf(ctx->peak_source, sizeof ctx->peak_source, "--peak-gflops");
    } else if (pm->measured) {
        /* A rank computes on its threads' cores, and on no more than its
         * share of the machine's when its ranks x threads exceed its
         * cores (4 ranks on 2 cores: half a core each; emulated nodes on
         * one machine count together), so that the ranks' peaks add up to
         * the machine's and MFU is against the cores the job has (the CPU's
         * form of a shared device's share). */
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        int local = ctx->topo.host_size > 0 ? ctx->topo.host_size : 1;
        double per_rank = ctx->blas_threads;
        char share[96] = "";
        if (cores > 0 && (long)local * ctx->blas_threads > cores) {
            per_rank = (double)cores / local;
            snprintf(share, sizeof share, ", %d ranks on %ld cores: %.3g core(s) each", local, cores, per_rank);
        }
        ctx->peak_flops = pm->best_gflops * 1e9 * per_rank;
        char when[128];
        if (pm->cached) snprintf(when, sizeof when, "cached measurement of %s on host %s", pm->date, pm->host);
        else snprintf(when, sizeof when, "measured once on node %d before work", pm->node);
        snprintf(ctx->peak_source, sizeof ctx->peak_source,
                 "%s: %s FMA loop, best of %d runs %.1f (min %.1f, median %.1f) GFLOP/s per core x %d thread(s)%s",
                 when, pm->isa, pm->runs, pm->best_gflops, pm->min_gflops, pm->median_gflops, ctx->blas_threads,
                 share);
        snprintf(basis, n, "measurement of %s on host %s x %d thread(s)%s", pm->date, pm->host, ctx->blas_threads,
                 share);
        return;
    } else {
        /* A device shared by several ranks: each rank's share of its peak,
         * so MFU is against the GPUs the job has, not n whole GPUs. */
        ctx->peak_flops = zb_bench_device_share(ctx, bf16 ? ctx->hw.bf16_flops : ctx->hw.fp32_flops);
        if (ctx->peak_flops > 0 && ctx->device_sharing > 1) {
            snprintf(ctx->peak_source, sizeof ctx->peak_source, "profile %s %s / %d ranks sharing the device",
                     ctx->hw.name, bf16 ? "bf16_flops" : "fp32_flops", ctx->device_sharing);
        } else if (ctx->peak_flops > 0) {
            snprintf(ctx->peak_source, sizeof ctx->peak_source, "profile %s %s", ctx->hw.name,
                     bf16 ? "bf16_flops" : "fp32_flops");
        } else {
            snprintf(ctx->peak_source, sizeof ctx->peak_source, "unknown: pass --hw or --peak-gflops");
        }
    }
    snprintf(basis, n, "%s", ctx->peak_source);
}

/* The meta's "peak": the per-rank figure used, its source and its basis
 * (compare judges MFU and % of peak only between runs with equal ones). */
static json_t *peak_json(const zb_bench_ctx *ctx, const char *basis) {
    json_t *o = json_object();
    json_object_set_new(o, "gflops_per_rank", ctx->peak_flops > 0 ? json_real(ctx->peak_flops / 1e9) : json_null());
    json_object_set_new(o, "source", json_string(ctx->peak_source));
    json_object_set_new(o, "basis", json_string(basis));
    return o;
}

/* Rank 0: where a measured peak came from and what became of the cache. */
static void print_peak_cache(const zb_bench_ctx *ctx, const zb_peak_measure *pm) {
    if (!ctx->out || !pm->measured) return;
    char path[PATH_MAX], shown[PATH_MAX + 64] = "the host's peak cache";
    bool cache = zb_peak_cache_path(pm->host, path, sizeof path);
    if (cache) zb_escape(path, 0, shown, sizeof shown);
    const char *env = getenv(ZB_PEAK_CACHE_ENV);
    if (pm->cached) {
        fprintf(ctx->out, "# peak: the cached measurement of %s from %s (--peak-measure times it again)\n",
                pm->date, shown);
    } else if (pm->stored) {
        fprintf(ctx->out, "# peak: measured now and cached in %s: later runs on this host reuse it\n", shown);
    } else if (!cache) {
        bool off = env && !strcmp(env, "off");
        fprintf(ctx->out, "# peak: measured now, not cached (%s)\n",
                off ? ZB_PEAK_CACHE_ENV "=off" : "no cache path: set HOME or " ZB_PEAK_CACHE_ENV);
    }
    if (pm->note[0]) fprintf(ctx->out, "# peak: %s\n", pm->note);
}

/* A simulated device backend (the sim) named by --backend: --nodes and
 * --gpus-per-node then describe the cluster it models in this process. */
static bool simulated_backend(const zb_config *cfg) {
    const zb_device_backend *b = zb_device_backend_find(cfg->backend);
    return b && b->simulated && !b->not_built;
}

/* The cluster a simulated comm models: --nodes (1) x --gpus-per-node (the
 * profile's GPUs per node, 1 without a profile); 0 x 0 for real backends. */
static void virtual_cluster(const zb_bench_ctx *ctx, zb_comm_config *cc) {
    if (!ctx->backends.device->simulated) return;
    cc->virtual_nodes = ctx->cfg->nodes > 0 ? (int)ctx->cfg->nodes : 1;
    cc->virtual_gpus_per_node = ctx->cfg->gpus_per_node > 0 ? (int)ctx->cfg->gpus_per_node
                                : ctx->hw.gpus_per_node > 0 ? ctx->hw.gpus_per_node : 1;
}

static void print_simulated(const zb_bench_ctx *ctx) {
    zb_comm_config cc = {0, 0, 0};
    virtual_cluster(ctx, &cc);
    const zb_int_list *l = &ctx->cfg->nodes_list;
    char nodes[160] = "";
    size_t used = 0;
    for (int i = 0; i < l->n && used < sizeof nodes; i++) {
        used += (size_t)snprintf(nodes + used, sizeof nodes - used, "%s%lld", i ? "," : "", (long long)l->v[i]);
    }
    if (l->n < 2) snprintf(nodes, sizeof nodes, "%d", cc.virtual_nodes);
    fprintf(ctx->out, "# SIMULATED (%s): %s node(s) x %d GPU(s) of %s modelled in this process; times, overlap "
            "and MFU are predictions, the loss is not computed\n", ctx->backends.device->simulated, nodes,
            cc.virtual_gpus_per_node, ctx->hw.name);
}

/* Collective: rank 0 prints the run's header, with one line per rank. */
static zb_status print_header(const zb_bench_ctx *ctx) {
    const zb_config *cfg = ctx->cfg;
    const zb_topology *t = &ctx->topo;
    char line[224];
    int at = snprintf(line, sizeof line, "#  rank %3d: host %s node %d local rank %d device %s, BLAS core %s",
                      t->rank, t->hostname, t->node, t->local_rank, ctx->backends.device->name, blas_core.ran);
    /* Each rank's own peak, so a reader sees that they agree. */
    if (ctx->peak_flops > 0 && at > 0 && (size_t)at < sizeof line) {
        snprintf(line + at, sizeof line - (size_t)at, " peak %.2f GFLOP/s", ctx->peak_flops / 1e9);
    }
    char *all = ctx->out ? (char *)calloc((size_t)t->n_ranks, sizeof line) : NULL;
    /* Not agreed on: rank 0's failure ends the job (main aborts). */
    if (ctx->out && !all) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory for %d header lines", t->n_ranks);
    zb_status st = zb_mpi_gather_bounded(line, all, (int)sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD,
                                         "gathering the header lines", cfg->timeout_s);
    if (st != ZB_OK || !ctx->out) {
        free(all);
        return st;
    }
    char layout[160];
    zb_topology_describe(t, layout, sizeof layout);
    fprintf(ctx->out, "# zerobench %s (%s) %s\n", ZB_VERSION, ZB_GIT_DESCRIBE, zb_command_name(cfg->command));
    /* On the sim the MPI job is only the process that runs the model: say
     * so, so that its "1 ranks" is not read as the modelled cluster's. */
    const char *job = ctx->backends.device->simulated ? "the MPI job running the simulation: " : "";
    fprintf(ctx->out, "# backend %s, comm %s: %s%s\n", ctx->backends.device->name, ctx->backends.comm->name, job,
            layout);
    if (ctx->backends.device->simulated) print_simulated(ctx);
    if (ctx->backends.note[0]) fprintf(ctx->out, "# %s\n", ctx->backends.note);
    fprintf(ctx->out, "# %sranks %d nodes %d ranks-per-node %d, %d BLAS thread(s) per rank\n", job, t->n_ranks,
            t->n_nodes, t->local_size, ctx->blas_threads);
    if (ctx->bench->flags & ZB_BENCH_SWEEP_HEADER) {
        fprintf(ctx->out, "# dtype %s, iters %lld, warmup %lld, check %d, average %d, timeout %g s\n",
                zb_dtype_name(cfg->dtype), (long long)cfg->iters, (long long)cfg->warmup_iters, cfg->check,
                (int)cfg->average, cfg->timeout_s);
    }
    fprintf(ctx->out, "# BLAS core %s: %s\n", blas_core.ran, blas_core.reason);
    fprintf(ctx->out, "# malloc-keep %s\n", cfg->malloc_keep
            ? "on: glibc keeps freed memory (M_ARENA_MAX=1, M_MMAP_MAX=0, M_TRIM_THRESHOLD=INT_MAX)" : "off: glibc defaults");
    for (int r = 0; r < t->n_ranks; r++) fprintf(ctx->out, "%s\n", all + (size_t)r * sizeof line);
    free(all);
    return ZB_OK;
}

/* Creates device, streams and comm; the caller tears them down. */
static zb_status setup_backends(zb_bench_ctx *ctx, zb_trace *trace) {
    /* Default threads: the machine's cores over the ranks on it (emulated
     * nodes on one machine share its cores). */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int on_host = ctx->topo.host_size > 0 ? ctx->topo.host_size : 1;
    ctx->blas_threads = ctx->cfg->threads ? (int)ctx->cfg->threads : (int)(cores / on_host > 0 ? cores / on_host : 1);
    zb_device_config dc = {ctx->topo.rank, ctx->topo.local_rank, ctx->blas_threads,
                           ctx->cfg->timeout_s + 5.0, trace, ctx->hw.name[0] ? &ctx->hw : NULL};
    zb_comm_config cc = {ctx->cfg->timeout_s, 0, 0};
    virtual_cluster(ctx, &cc);
    ZB_TRY(zb_backends_create(&ctx->backends, &dc, &cc, ctx->cfg->gpu_trace, &ctx->dev, &ctx->compute,
                              &ctx->comm_stream, &ctx->comm));
    ctx->simulated = ctx->backends.device->simulated != NULL;
    ctx->world_ranks = ctx->comm->n_ranks;
    ctx->world_nodes = ctx->simulated ? cc.virtual_nodes : ctx->topo.n_nodes;
    return ZB_OK;
}

/* Every rank resolves --backend/--comm on its own machine; the job then
 * agrees: auto falls back to the backend every rank can use (cpu unless
 * every rank has a GPU), and an explicit choice one rank cannot honour
 * fails everywhere (collective). */
static zb_status agree_on_backends(zb_bench_ctx *ctx) {
    zb_status st = zb_backends_resolve(ctx->cfg->backend, ctx->cfg->comm, &ctx->backends);
    int bad = st != ZB_OK, any_bad = 0;
    /* A wait that succeeds records nothing: this rank's message survives it. */
    ZB_TRY(zb_mpi_allreduce_bounded(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD,
                                    "agreeing on the backends", ctx->cfg->timeout_s));
    if (bad) {
        /* Rank 0's message is printed by main; another rank names itself. */
        if (ctx->topo.rank != 0) fprintf(stderr, "zerobench: rank %d: %s\n", ctx->topo.rank, zb_error_message());
        return st;
    }
    if (any_bad) return ZB_FAIL(ZB_ERR_INVALID, "another rank could not use the requested backend");
    int mine = ctx->backends.device->auto_priority, lowest = 0;
    ZB_TRY(zb_mpi_allreduce_bounded(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD,
                                    "agreeing on the device backend", ctx->cfg->timeout_s));
    return zb_backends_fall_back(&ctx->backends, lowest, ctx->cfg->comm);
}

/* Without --hw the device backend names the profile of this rank's device;
 * unknown hardware (a GPU zerobench has no profile for) has no peaks, so
 * MFU is not measured. Found alike on every rank. */
static zb_status choose_hw(zb_bench_ctx *ctx, const char **chosen) {
    *chosen = ctx->cfg->hw;
    if (ctx->cfg->hw[0]) return ZB_OK;
    const char *name = zb_backends_default_hw(&ctx->backends, ctx->topo.local_rank);
    *chosen = name;
    if (!name) return ZB_OK; /* validate_inputs left the peaks at zero */
    char why[ZB_ERROR_MAX];
    if (zb_hw_profile_load(name, &ctx->hw) != ZB_OK) {
        return ZB_FAIL(ZB_ERR_INVALID, "--hw '%s' (the default of --backend %s): %s", name,
                       ctx->backends.device->name, zb_error_text(why, sizeof why));
    }
    return ZB_OK;
}

static void teardown_backends(zb_bench_ctx *ctx) {
    zb_comm_destroy(ctx->comm);
    if (ctx->dev) {
        if (ctx->comm_stream) ctx->dev->ops->stream_destroy(ctx->comm_stream);
        if (ctx->compute) ctx->dev->ops->stream_destroy(ctx->compute);
        zb_dev_destroy(ctx->dev);
    }
}

static zb_status write_outputs(zb_bench_ctx *ctx, const zb_trace *trace, const zb_clock_sync *sync) {
    const zb_config *cfg = ctx->cfg;
    if (cfg->trace_path[0]) {
        /* What the trace is of: the command and, for the step, the model label. */
        json_t *info = json_object();
        json_t *model = json_object_get(zb_report_meta(ctx->report), "model");
        json_object_set_new(info, "command", json_string(zb_command_name(cfg->command)));
        if (model) json_object_set(info, "model", model);
        zb_status st = cfg->trace_format == ZB_TRACE_KINETO
                           ? zb_trace_export_kineto(trace, sync, cfg->trace_path, cfg->timeout_s,
                                                    ctx->backends.comm ? ctx->backends.comm->name : NULL, info)
                           : zb_trace_export_chrome_info(trace, sync, cfg->trace_path, cfg->timeout_s, info);
        json_decref(info);
        ZB_TRY(st);
    }
    if (ctx->topo.rank != 0) return ZB_OK;
    if (cfg->json_path[0]) ZB_TRY(zb_report_write_json(ctx->report, cfg->json_path));
    if (cfg->csv_path[0]) ZB_TRY(zb_report_write_csv(ctx->report, cfg->csv_path));
    return ZB_OK;
}

/* Runs the benchmark inside an initialized MPI job; returns the exit code. */
static int run_in_job(const zb_config *cfg, const zb_hw_profile *hw, int argc, char **argv) {
    zb_bench_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.cfg = cfg;
    ctx.bench = zb_bench_find(cfg->command);
    ctx.hw = *hw;
    /* First: ranks given different flags would disagree in every collective. */
    zb_status st = zb_config_agree(cfg);
    if (st == ZB_OK) st = zb_topology_discover(&ctx.topo, cfg->timeout_s);
    /* Under the sim the flags describe the modelled cluster, not this job. */
    if (st == ZB_OK && !simulated_backend(cfg)) {
        st = zb_topology_check(&ctx.topo, (int)cfg->nodes, (int)cfg->gpus_per_node);
    }
    if (st != ZB_OK && st != ZB_ERR_INVALID) {
        /* A timeout or MPI failure: other ranks may be inside a collective. */
        fprintf(stderr, "zerobench: %s\n", zb_error_message());
        zb_mpi_abort(1);
    }
    if (st != ZB_OK) { /* bad input, found alike on every rank */
        int code = fail_input();
        zb_mpi_finalize();
        return code;
    }
    ctx.out = ctx.topo.rank == 0 ? stdout : NULL;
    zb_trace trace;
    zb_trace_init(&trace, ctx.topo.rank,
                  cfg->trace_path[0] != '\0' || (ctx.bench->flags & ZB_BENCH_ALWAYS_TRACE));
    ctx.report = zb_report_new();
    zb_clock_sync sync;
    memset(&sync, 0, sizeof sync);
    ctx.clock_sync = &sync;
    st = agree_on_backends(&ctx);
    /* Before any measured work, while the ranks are otherwise idle. */
    if (st == ZB_OK) st = zb_clock_sync_run(&ctx.topo, cfg->timeout_s, &sync);
    const char *hw_name = NULL; /* the profile used; NULL: none (unknown hardware) */
    if (st == ZB_OK) st = choose_hw(&ctx, &hw_name);
    /* Before any rank creates its device (threads) or starts work. */
    zb_peak_measure pm;
    memset(&pm, 0, sizeof pm);
    bool measure = ctx.bench->peak_dtype && cfg->peak_gflops <= 0 && ctx.hw.fp32_flops_measure;
    if (st == ZB_OK) {
        st = zb_peak_measure_node(&ctx.topo, ctx.backends.device, measure, cfg->peak_measure, cfg->timeout_s, &pm);
    }
    if (st == ZB_OK) st = setup_backends(&ctx, &trace);
    /* Who shares a device: the memory checks and the peak take each rank's share. */
    if (st == ZB_OK) st = zb_bench_find_device_sharing(&ctx);
    /* Before the header and any buffer: a size too big is bad input. */
    if (st == ZB_OK) st = zb_bench_check_memory(&ctx);
    if (st == ZB_OK) {
        json_t *config = zb_config_to_json(cfg);
        json_object_set_new(config, "blas_threads", json_integer(ctx.blas_threads));
        /* The profile in use: --hw, or the device backend's default. */
        json_object_set_new(config, "hw", hw_name ? json_string(hw_name) : json_null());
        st = zb_meta_collect(zb_report_meta(ctx.report), argc, argv, config, cfg->timeout_s);
        json_decref(config);
        zb_backends_meta(&ctx.backends, ctx.topo.local_rank, zb_report_meta(ctx.report));
        json_object_set_new(zb_report_meta(ctx.report), "clock_sync", zb_clock_sync_json(&sync));
        json_object_set_new(zb_report_meta(ctx.report), "simulated",
                            json_boolean(ctx.backends.device->simulated != NULL));
        json_object_set_new(zb_report_meta(ctx.report), "blas_core", zb_blas_core_json(&blas_core));
        json_object_set_new(zb_report_meta(ctx.report), "peak_measure", zb_peak_measure_json(&pm));
    }
    if (st == ZB_OK && ctx.bench->peak_dtype) {
        char basis[384];
        set_peak(&ctx, &pm, basis, sizeof basis);
        json_object_set_new(zb_report_meta(ctx.report), "peak", peak_json(&ctx, basis));
    }
    if (st == ZB_OK) st = print_header(&ctx);
    if (st == ZB_OK) print_peak_cache(&ctx, &pm);
    if (st == ZB_OK) st = ctx.bench->run(&ctx);
    if (st == ZB_OK) st = write_outputs(&ctx, &trace, &sync);
    /* Bad input and a non-finite loss are found alike on every rank: end
     * normally. Anything else may have left ranks inside a collective. */
    bool agreed = st == ZB_ERR_INVALID || st == ZB_ERR_WRONG;
    if (st != ZB_OK && !agreed) {
        /* Other ranks may be inside a collective: end them all. */
        fprintf(stderr, "zerobench: %s\n", zb_error_message());
        fflush(stdout);
        zb_mpi_abort(1);
    }
    int code = st == ZB_ERR_INVALID ? fail_input() : 0;
    if (st == ZB_ERR_WRONG) {
        if (ctx.out) fprintf(stderr, "zerobench: %s\n", zb_error_message());
        code = 1;
    }
    if (st == ZB_OK && ctx.wrong > 0) {
        if (ctx.out) fprintf(stderr, "zerobench: %lld wrong element(s)\n", (long long)ctx.wrong);
        code = 1;
    }
    teardown_backends(&ctx);
    zb_backends_finish(&ctx.backends);
    zb_report_free(ctx.report);
    zb_trace_destroy(&trace);
    zb_clock_sync_free(&sync);
    zb_mpi_finalize();
    return code;
}

int main(int argc, char **argv) {
    /* A tool (plot, compare, ...) runs outside MPI and parses its own flags. */
    const zb_tool *tool = argc > 1 ? zb_tool_find(argv[1]) : NULL;
    if (tool) return tool->main(argc - 1, argv + 1);
    zb_config cfg;
    if (zb_cli_parse(argc, argv, &cfg) != ZB_OK) return fail_input();
    if (cfg.help) {
        char usage[8192];
        zb_cli_usage(cfg.command, usage, sizeof usage);
        fputs(usage, stdout);
        return 0;
    }
    zb_hw_profile hw;
    if (validate_inputs(&cfg, &hw) != ZB_OK) return fail_input();
    if (!zb_under_mpi() && (cfg.nodes > 0 || cfg.gpus_per_node > 0) && !simulated_backend(&cfg)) {
        return relaunch(&cfg, argc, argv);
    }
    int code = choose_blas_core(&cfg, argv);
    if (code >= 0) return code;
    apply_malloc_policy(cfg.malloc_keep);
    if (zb_mpi_init(&argc, &argv) != ZB_OK) {
        fprintf(stderr, "zerobench: %s\n", zb_error_message());
        return 1;
    }
    return run_in_job(&cfg, &hw, argc, argv);
}
