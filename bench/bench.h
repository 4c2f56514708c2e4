/* What every benchmark plug-in gets, and the registry they plug into.
 *
 * main builds one zb_bench_ctx (config, device, streams, comm, topology,
 * peak FLOP/s, the report) and calls the plug-in registered for the
 * subcommand (bench_list.h). A plug-in prints its table on rank 0, adds one
 * JSON run per row to the report, and counts wrong elements; it returns a
 * status and never exits. */
#ifndef ZB_BENCH_H
#define ZB_BENCH_H

#include <stdint.h>
#include <stdio.h>

#include "backend_select.h"
#include "bench_config.h"
#include "bench_list.h"
#include "bench_opts.h"
#include "clock_sync.h"
#include "comm.h"
#include "device.h"
#include "mpi_boot.h"
#include "profile.h"
#include "report.h"

#ifdef __cplusplus
extern "C" {
#endif

struct zb_bench;
struct zb_coll_def;

typedef struct zb_bench_ctx {
    const struct zb_bench *bench; /* the plug-in being run */
    const zb_config *cfg;
    zb_topology topo;
    zb_device *dev;
    zb_stream *compute; /* compute stream */
    zb_stream *comm_stream;
    zb_comm *comm;      /* created for {comm_stream, compute} */
    zb_backends backends; /* which device and comm, and whether CUPTI runs */
    zb_hw_profile hw;
    double peak_flops;       /* per rank, the dtype the bench runs in */
    char peak_source[256];   /* where peak_flops came from */
    int blas_threads;
    zb_report *report;
    FILE *out;               /* rank 0: stdout; other ranks: NULL */
    int64_t wrong;           /* wrong elements over all checks, all ranks */
    const zb_clock_sync *clock_sync; /* every rank's clock offset to rank 0's (NULL: none) */
    /* The data-parallel world the benchmarks run over: the job's ranks and
     * nodes, or, on a simulated backend, the cluster its comm models
     * (world_ranks = comm->n_ranks). */
    bool simulated;
    int world_ranks, world_nodes;
    /* Ranks of this job on this rank's device, itself included (its memory
     * view's device id, gathered: zb_bench_find_device_sharing); 1 when
     * alone or unknown. Above 1, the device's memory and FLOP peak are
     * shared: a rank's share is 1/device_sharing of each. */
    int device_sharing;
} zb_bench_ctx;

/* The step's --param-dtype when not given: the device backend's, except on
 * a CPU hardware profile (kind "cpu", as calibrate writes for this machine),
 * where the step runs fp32 on every backend: the sim on a calibrated CPU
 * profile then models the step the cpu backend ran, not a bf16 one with
 * half its bytes. */
static inline zb_dtype zb_bench_default_param_dtype(const zb_bench_ctx *ctx) {
    return ctx->hw.is_cpu ? ZB_DTYPE_F32 : ctx->backends.device->default_param_dtype;
}

/* zb_bench.flags */
enum {
    ZB_BENCH_ALWAYS_TRACE = 1u << 0, /* traces every op even without --trace (measures from the trace) */
    ZB_BENCH_SWEEP_HEADER = 1u << 1, /* the header prints the sweep line (dtype, iters, warmup, ...) */
    ZB_BENCH_NODE_LIST = 1u << 2,    /* takes a list of node counts, --nodes 1,2,4 (a simulated backend) */
};

/* The largest buffers a benchmark holds at once, per rank, and the flag
 * that sized them: what the memory check (bench_mem.c) compares with the
 * memory a rank has before anything is allocated. */
typedef struct zb_mem_need {
    double device_bytes; /* from the device's allocator (host memory on cpu) */
    double host_bytes;   /* host copies beside them: staging, check inputs */
    char flag[48];       /* the flag that sized them: "-e/--maxbytes" */
    char value[80];      /* its value: "16G" */
    char device_what[96]; /* what the device bytes are: "send and receive buffers of 16G each" */
    char host_what[96];   /* what the host bytes are: "a host staging copy of 16G" */
} zb_mem_need;

/* A benchmark: everything the CLI and main need to know about a command. */
typedef struct zb_bench {
    const char *name; /* the subcommand */
    /* Its option groups, NULL-terminated, in --help order; the options
     * every command takes follow them (harness/cli/cli.c). */
    const zb_opt_group *const *groups;
    /* Its defaults over zb_config_defaults, set before the flags; NULL: none. */
    void (*defaults)(zb_config *cfg);
    /* Its combination check, after its groups' (bench_opts.h); NULL: none. */
    zb_status (*check)(zb_config *cfg, const zb_opt_seen *seen);
    unsigned flags; /* ZB_BENCH_* */
    /* Needs a FLOP peak (NULL: does not): the dtype it computes in, given
     * the device's default parameter dtype. */
    zb_dtype (*peak_dtype)(const zb_config *cfg, zb_dtype device_default);
    zb_status (*run)(zb_bench_ctx *ctx);
    /* Its largest buffers per rank (zb_mem_need), for zb_bench_check_memory
     * before run; NULL: it checks its own (the step) or allocates little. */
    zb_status (*memory_need)(const zb_bench_ctx *ctx, zb_mem_need *out);
    const struct zb_coll_def *coll; /* a collective's record (coll.h); NULL otherwise */
} zb_bench;

/* The plug-in for a subcommand, or NULL. */
const zb_bench *zb_bench_find(zb_command cmd);

/* Per-rank times reduced across ranks as -a says, into *out (collective;
 * the wait ends after --timeout with ZB_ERR_TIMEOUT, see mpi_wait.h). */
zb_status zb_bench_reduce_time(const zb_bench_ctx *ctx, double seconds, double *out);
/* Sum of a per-rank count over ranks, into *out (collective, as above). */
zb_status zb_bench_sum(const zb_bench_ctx *ctx, int64_t v, int64_t *out);

/* Host memory a rank may use: the node's physical memory shared by the
 * ranks on it (bench_mem.c). */
double zb_bench_host_memory_per_rank(const zb_bench_ctx *ctx);
/* Sets ctx->device_sharing from the ranks' device ids (collective, bounded
 * by --timeout, where the device backend has a memory view; 1 elsewhere). */
zb_status zb_bench_find_device_sharing(zb_bench_ctx *ctx);
/* A rank's share of a device figure (memory, FLOP peak). */
double zb_bench_device_share(const zb_bench_ctx *ctx, double whole);

/* Refuses (ZB_ERR_INVALID, one line naming the flag, the bytes needed and
 * the memory a rank has) a run whose memory_need does not fit, unless
 * --force; collective (the ranks agree on the smallest memory, bounded by
 * --timeout), before the benchmark allocates anything. */
zb_status zb_bench_check_memory(const zb_bench_ctx *ctx);

/* Every benchmark's plug-in, defined in its own file. */
#define ZB_BENCH_DECLARE(id, name) extern const zb_bench zb_bench_##name;
ZB_BENCH_LIST(ZB_BENCH_DECLARE)
#undef ZB_BENCH_DECLARE

#ifdef __cplusplus
}
#endif
#endif
