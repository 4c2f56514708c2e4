/* The run configuration every benchmark reads: the subcommand and the
 * value of every flag (the CLI fills it, cli.h; defaults below). */
#ifndef ZB_BENCH_CONFIG_H
#define ZB_BENCH_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "bench_list.h"
#include "dtype.h"
#include "engine.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A subcommand: its benchmark's index in the registry (bench_list.h);
 * ZB_CMD_STEP, the first, is the default. */
#define ZB_CMD_ENUM_ENTRY(id, name) ZB_CMD_##id,
typedef enum zb_command { ZB_BENCH_LIST(ZB_CMD_ENUM_ENTRY) ZB_CMD_COUNT } zb_command;
#undef ZB_CMD_ENUM_ENTRY

/* The subcommand's name (its benchmark's), or "unknown" (registry.c). */
const char *zb_command_name(zb_command c);

#define ZB_MAX_SHAPES 64
#define ZB_PATH_MAX 1024

/* nccl-tests' -a: how a per-rank time becomes the reported time. */
typedef enum zb_average {
    ZB_AVERAGE_RANK0 = 0,
    ZB_AVERAGE_MEAN = 1,
    ZB_AVERAGE_MIN = 2,
    ZB_AVERAGE_MAX = 3
} zb_average;

/* --mode of the step benchmark: ZB_MODE_SYNC, ZB_MODE_PREFETCH (the
 * engine's schedules, engine.h) or both side by side. */
#define ZB_MODE_BOTH 2
#define ZB_STAGE_ALL 4 /* --stage all: 0, 1, 2 and 3 side by side */
/* --trace-format, in the order of its choices (0, the default: chrome). */
#define ZB_TRACE_CHROME 0
#define ZB_TRACE_KINETO 1

/* A dtype flag not given on the command line (its default depends on the
 * device: zb_config_step_dtypes). */
#define ZB_DTYPE_UNSET ((zb_dtype)-1)

/* A flag's comma-separated integers (--nodes 1,2,4). */
#define ZB_MAX_INT_LIST 16
typedef struct zb_int_list {
    int n;
    int64_t v[ZB_MAX_INT_LIST];
} zb_int_list;

typedef struct zb_config {
    zb_command command;
    bool help;

    /* backends */
    char backend[16]; /* auto | cpu */
    char comm[16];    /* auto | mpi */

    /* collective sweep (nccl-tests meanings) */
    uint64_t min_bytes, max_bytes, step_bytes;
    int64_t step_factor; /* 0 when -i/--stepbytes is used instead */
    uint64_t rotate_bytes; /* collectives: cycle the calls over buffers this large (0: one buffer) */
    int64_t iters, warmup_iters;
    int check;
    zb_dtype dtype;
    zb_average average;
    bool compare_direct; /* also time the library called directly */
    int64_t direct_rounds; /* --compare-direct: alternated rounds of each side */
    double straggler_pct; /* a rank this far from the median rank is named (stragglers.h) */
    bool force;           /* skip the memory check before allocating (bench_mem.c) */

    /* gemm */
    int n_shapes;
    int64_t shapes[ZB_MAX_SHAPES][3];
    bool gemm_sweep_given; /* -b/-e given to gemm: sweep M=N=K */
    char model[128];
    int64_t tokens; /* M for --model shapes; 0 = the profile's batch*seq */

    /* step (the ZeRO-3 training step) */
    int mode;             /* zb_step_mode */
    int stage;            /* 0..3, or ZB_STAGE_ALL */
    int recompute;        /* 0 none, 1 full */
    int flops_causal;     /* 0: full attention matrix (torchtitan), 1: causal half */
    zb_dtype param_dtype;       /* compute-dtype params; ZB_DTYPE_UNSET: by device */
    zb_dtype act_dtype;         /* activations and the math's storage; UNSET: param's */
    zb_dtype grad_reduce_dtype; /* reduced gradients; ZB_DTYPE_UNSET: the param dtype */
    int64_t layers, dim, heads, kv_heads, head_dim, ffn_dim, vocab, seq, batch; /* 0: profile's */
    int64_t steps, warmup_steps, prefetch_depth;
    /* --mode both's adaptive pairs (step_pairs.c): --steps is the minimum;
     * more pairs run until the step-time interval's half-width is within
     * precision_pct % of sync's median step, or max_steps pairs, or
     * max_time_s seconds of measured steps. precision_pct 0: exactly --steps. */
    double precision_pct, max_time_s;
    int64_t max_steps;
    char trace_steps[32];   /* --trace-steps as given ("" = the default) */
    int64_t trace_step_first, trace_step_last; /* parsed, 1-based inclusive; 0 = the default */
    double lr;
    int64_t seed;

    /* hardware */
    char hw[128]; /* profile name; "" = the backend's default */
    double peak_gflops; /* 0 = from the profile, or measured on cpu */
    bool peak_measure;  /* time the cpu peak again, replacing the host's cache (peak_cache.h) */
    int64_t threads;    /* BLAS threads per rank; 0 = cores / ranks on the machine */
    bool malloc_keep;   /* keep freed memory in glibc (harness/cli/main.c) */
    char blas_core[32]; /* auto | keep | an OpenBLAS core (harness/control/blas_core.h) */
    bool gpu_trace;     /* CUPTI on cuda (off: trace metrics not measured) */

    /* launch */
    int64_t nodes, gpus_per_node; /* nodes: the first of nodes_list */
    zb_int_list nodes_list;       /* --nodes as given: one count, or several (scale) */
    char hostfile[ZB_PATH_MAX];
    bool emulate_nodes;
    double timeout_s;

    /* outputs */
    char json_path[ZB_PATH_MAX];
    char csv_path[ZB_PATH_MAX];
    char trace_path[ZB_PATH_MAX];
    int trace_format; /* --trace-format: ZB_TRACE_CHROME (a file) or ZB_TRACE_KINETO (a folder, one file per rank) */
} zb_config;

void zb_config_defaults(zb_config *cfg);

/* The step's dtypes once the device backend is known. Unset flags default
 * to the backend's parameter dtype (device_backend.h: bf16 on cuda, mixed
 * precision with fp32 master weights and AdamW; fp32 on cpu, whose fp32
 * math is the reference GPU runs are checked against): --param-dtype to
 * device_default, --act-dtype and --grad-reduce-dtype to the param dtype. */
void zb_config_step_dtypes(const zb_config *cfg, zb_dtype device_default, zb_dtype *param,
                           zb_dtype *act, zb_dtype *grad);

#ifdef __cplusplus
}
#endif
#endif
