/* GPU activity records -> zerobench trace records (docs/design.md).
 *
 * Plain C with no CUPTI header: the CUPTI tracer (harness/device/cuda/cupti_tracer.c)
 * copies each CUPTI activity record into a zb_act_record and hands it here;
 * the unit tests feed synthetic records the same way.
 *
 * Correlation. Around every harness op the tracer pushes an external
 * correlation id (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) and registers the
 * op under that id with zb_cupti_map_push_op (label, unit, kind, bytes,
 * flops, zerobench stream). CUPTI then emits one EXTERNAL_CORRELATION record
 * {external id, CUPTI correlation id} per runtime/driver API call made while
 * the id was pushed; kernel, memcpy and memset records carry the CUPTI
 * correlation id of the API call that launched them (memcpy also its runtime
 * correlation id). So: GPU record -> correlation id -> external id -> op.
 *
 * Buffers arrive in any order (a kernel's record can come before the
 * correlation record of its launch), so GPU records are held until
 * zb_cupti_map_flush, which resolves, converts and appends them all to the
 * trace. The id tables keep two generations: entries from the window before
 * the last flush still resolve, older ones are dropped.
 *
 * Classification of a GPU record (first rule that applies). It is made here,
 * once: the metrics (harness/metrics/overlap.c) read only the record's kind.
 *   memcpy, memset correlated to an op of kind ZB_OP_COMM -> ZB_OP_COMM (a
 *                                            one-rank NCCL collective is a
 *                                            device-to-device copy, no kernel)
 *   memcpy, memset on the designated comm CUDA stream     -> ZB_OP_COMM
 *   any other memcpy, memset                              -> ZB_OP_COPY
 *   kernel whose full name contains an NCCL kernel name (ncclDevKernel,
 *     ncclSymkDevKernel, ncclKernel, oneRankReduce)  -> ZB_OP_COMM
 *   kernel on the designated comm CUDA stream        -> ZB_OP_COMM
 *   kernel correlated to an op            -> the op's kind
 *   kernel without correlation            -> ZB_OP_COMPUTE
 * Label and unit: the op's when correlated; otherwise the kernel's short name
 * (Itanium mangling reduced to the function name, "memcpy HtoD", ...) and unit
 * -1, counted in n_uncorrelated. Except NCCL's kernels: a non-blocking NCCL
 * communicator launches them from a thread of its own, away from the
 * thread that pushed the op's external id, so they come uncorrelated. They
 * are matched by order instead: per zerobench stream, the collective ops
 * (kind comm, a `coll` name) in the order they were registered, against
 * that stream's uncorrelated NCCL kernels in the order they ran (start
 * time), skipping ops whose kernel came correlated, and an op of another
 * collective than the kernel's name says (AllGather, ReduceScatter,
 * AllReduce; a name without one matches any). Counted in n_order_matched. Bytes: memcpy/memset their own; kernels the
 * op's bytes and flops (every kernel of one op carries the op's values, so
 * never sum them over the trace). Stream: the zerobench stream registered for
 * the record's CUDA stream, else the op's stream, else
 * ZB_CUPTI_FOREIGN_STREAM_BASE + the CUPTI stream id (a library's own stream).
 * seq: the op id when correlated (ids are issued in order), else 0.
 *
 * Nothing is lost silently: a GPU record with a zero start or end timestamp
 * (CUPTI could not collect it) is counted in n_zero_timestamp and excluded;
 * end < start is counted in n_inverted and excluded; records CUPTI dropped
 * for lack of buffer space are added with zb_cupti_map_add_dropped.
 * Invariant at any time: n_gpu_records == n_emitted + n_zero_timestamp +
 * n_inverted + n_discarded + n_pending.
 *
 * Clock. CUPTI timestamps are converted to the harness clock (CLOCK_MONOTONIC,
 * zb_now_ns) by zb_clock_map, fitted to pairs (cupti_ns, monotonic_ns)
 * measured at start and at each flush. One pair: a pure offset. Two or more: a
 * least-squares line mono = ref_mono + x + a + e*x with x = cupti - ref_cupti
 * (ref = the first pair), i.e. offset a and drift e relative to slope 1,
 * computed on differences so 64-bit nanosecond values keep full precision.
 * Each new pair is first checked against the model built from the earlier
 * pairs; its residual (a clock step, or two clocks that do not agree) is kept
 * in max_residual_ns and should stay within ZB_CLOCK_MAP_TOLERANCE_NS. */
#ifndef ZB_CUPTI_MAP_H
#define ZB_CUPTI_MAP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- clock conversion --------------------------------------------------- */

#define ZB_CLOCK_MAP_MAX_PAIRS 64
/* A pair further than this from the model fitted to the earlier pairs means
 * the two clocks do not move together (for example a wall-clock step). */
#define ZB_CLOCK_MAP_TOLERANCE_NS 100000

typedef struct zb_clock_pair {
    int64_t cupti_ns;
    int64_t mono_ns;
} zb_clock_pair;

typedef struct zb_clock_map {
    zb_clock_pair pairs[ZB_CLOCK_MAP_MAX_PAIRS]; /* [0] is the reference; when
                                                    full, the oldest after it goes */
    size_t n_pairs;
    double offset_ns;        /* a: fitted (mono - ref_mono) - x at x = 0 */
    double drift;            /* e: slope - 1 */
    int64_t max_residual_ns; /* largest |residual| of a pair when it was added */
} zb_clock_map;

void zb_clock_map_init(zb_clock_map *m);
/* Adds a pair and refits. *residual_ns (may be NULL) gets the pair's distance
 * from the model of the earlier pairs (0 for the first pair). */
void zb_clock_map_add(zb_clock_map *m, int64_t cupti_ns, int64_t mono_ns, int64_t *residual_ns);
/* CUPTI nanoseconds -> harness nanoseconds. Needs at least one pair (with none
 * it returns cupti_ns unchanged). */
int64_t zb_clock_map_convert(const zb_clock_map *m, int64_t cupti_ns);
/* Two clocks closer than this at tracer start are taken as one clock (the
 * tracer's CLOCK_MONOTONIC timestamp callback took effect). */
#define ZB_CLOCK_AGREE_NS 1000000

typedef enum zb_clock_decision {
    ZB_CLOCK_SAME = 0, /* within ZB_CLOCK_AGREE_NS: records are on the harness clock */
    ZB_CLOCK_CONVERT,  /* another clock: records are converted through the pairs, and the run says so */
    ZB_CLOCK_REFUSE    /* no conversion can be trusted: the tracer must not start */
} zb_clock_decision;

/* What to do with CUPTI's clock, from the pairs measured at tracer start
 * (in the order measured; docs/design.md §9): REFUSE with no pair, when
 * the CUPTI clock does not advance while CLOCK_MONOTONIC does, or when a
 * pair lies further than ZB_CLOCK_MAP_TOLERANCE_NS from the model of the
 * earlier ones; else SAME when the last pair's offset is within
 * ZB_CLOCK_AGREE_NS, CONVERT beyond. msg gets one line: CONVERT's note, the
 * reason to REFUSE, "" for SAME. */
zb_clock_decision zb_clock_map_decide(const zb_clock_map *m, char *msg, size_t n);

/* Measures one pair: n_samples times reads zb_now_ns, read_other(ctx),
 * zb_now_ns and keeps the sample with the narrowest bracket, pairing its
 * reading with the bracket's midpoint. Returns ZB_ERR_INVALID if read_other
 * fails (returns < 0) every time. */
zb_status zb_clock_map_measure(zb_clock_map *m, int64_t (*read_other)(void *ctx), void *ctx,
                               int n_samples, int64_t *residual_ns);

/* ---- activity records --------------------------------------------------- */

typedef enum zb_act_kind {
    ZB_ACT_KERNEL = 0,
    ZB_ACT_MEMCPY,
    ZB_ACT_MEMSET,
    ZB_ACT_RUNTIME,
    ZB_ACT_DRIVER,
    ZB_ACT_EXTERNAL_CORRELATION,
    ZB_ACT_SYNCHRONIZATION,
    ZB_ACT_OVERHEAD,
    ZB_ACT_OTHER, /* a kind zerobench does not use: counted only */
    ZB_ACT_KIND_COUNT
} zb_act_kind;

const char *zb_act_kind_name(zb_act_kind k);

/* One activity record, backend-neutral. Fields a kind lacks are 0. */
typedef struct zb_act_record {
    zb_act_kind kind;
    uint64_t start_ns; /* CUPTI clock; 0 means "not collected" */
    uint64_t end_ns;
    uint32_t stream_id;              /* CUPTI stream id (kernel, memcpy, memset) */
    uint32_t correlation_id;         /* CUPTI correlation id (driver-level for memcpy) */
    uint32_t runtime_correlation_id; /* memcpy: the runtime call's id, else 0 */
    uint64_t external_id;            /* EXTERNAL_CORRELATION: the pushed id */
    bool external_is_zb;             /* EXTERNAL_CORRELATION: pushed by zerobench (CUSTOM0) */
    const char *name;                /* kernel name (may be mangled), or e.g. "memcpy HtoD";
                                        read during zb_cupti_map_record only */
    uint64_t bytes;                  /* memcpy, memset */
} zb_act_record;

/* Records on a CUDA stream that no one registered get this + the CUPTI id. */
#define ZB_CUPTI_FOREIGN_STREAM_BASE 100
#define ZB_CUPTI_MAX_STREAMS 64

typedef struct zb_cupti_stats {
    size_t n_by_kind[ZB_ACT_KIND_COUNT]; /* records received, by kind */
    size_t n_gpu_records;     /* kernel + memcpy + memset received */
    size_t n_emitted;         /* trace records appended */
    size_t n_emitted_by_kind[ZB_OP_KIND_COUNT];
    size_t n_uncorrelated;    /* emitted with the kernel name as label, unit -1 */
    size_t n_order_matched;   /* NCCL kernels given their collective op by order */
    size_t n_zero_timestamp;  /* start or end 0: excluded */
    size_t n_inverted;        /* end < start: excluded */
    size_t n_discarded;       /* flushed into no trace (NULL or tracing off),
                                 or no memory to hold them */
    size_t n_pending;         /* GPU records waiting for the next flush */
    size_t n_dropped;         /* records CUPTI dropped (no buffer space) */
    size_t n_buffer_errors;   /* buffers the tracer could not allocate or read */
    size_t n_foreign_external;/* external correlations of another tool's kind */
    size_t n_ops;             /* ops registered with zb_cupti_map_push_op */
    int64_t sync_ns;          /* host time in synchronization records */
    int64_t overhead_ns;      /* CUPTI's own overhead records */
    size_t n_clock_pairs;
    int64_t clock_max_residual_ns;
} zb_cupti_stats;

/* An op registered under an external id (internal). */
typedef struct zb_cupti_op {
    char label[ZB_LABEL_MAX];
    int unit;
    zb_op_kind kind;
    uint64_t bytes;
    double flops;
    int stream; /* zerobench stream id */
    char coll[ZB_COLL_NAME_MAX]; /* zb_op_info.coll, "" when none */
} zb_cupti_op;

/* uint64 -> uint64 open-addressing table; key 0 marks an empty slot (internal). */
typedef struct zb_u64_table {
    uint64_t *keys;
    uint64_t *vals;
    size_t cap; /* a power of two, or 0 */
    size_t n;
} zb_u64_table;

/* One generation of id tables (internal). */
typedef struct zb_cupti_gen {
    zb_u64_table corr_to_ext; /* CUPTI correlation id -> external id */
    zb_u64_table ext_to_op;   /* external id -> index into ops */
    zb_cupti_op *ops;
    size_t n_ops, cap_ops;
} zb_cupti_gen;

/* A GPU record held until the next flush (internal). */
typedef struct zb_cupti_pending {
    zb_act_kind kind;
    bool nccl_name;
    uint32_t stream_id, correlation_id, runtime_correlation_id;
    uint64_t start_ns, end_ns, bytes;
    char name[ZB_LABEL_MAX];
} zb_cupti_pending;

/* A registered collective op awaiting its NCCL kernel (internal). */
typedef struct zb_cupti_coll_slot {
    uint64_t ext;   /* the op's id */
    int stream;     /* its zerobench stream */
    bool matched;   /* its kernel has been seen */
    char coll[ZB_COLL_NAME_MAX];
} zb_cupti_coll_slot;

typedef struct zb_cupti_map {
    pthread_mutex_t lock;
    int64_t comm_stream_id; /* designated comm CUDA stream (CUPTI id) or -1 */
    struct { uint32_t cupti_id; int zb_stream; bool is_comm; } streams[ZB_CUPTI_MAX_STREAMS];
    size_t n_streams;
    zb_cupti_gen gen[2]; /* [0] current, [1] previous */
    zb_cupti_pending *pending;
    size_t n_pending, cap_pending;
    zb_cupti_coll_slot *colls; /* collective ops in registration order */
    size_t n_colls, cap_colls;
    zb_clock_map clock;
    zb_cupti_stats stats;
} zb_cupti_map;

/* comm_stream_id: the CUPTI id of the comm CUDA stream, or -1 for none. */
zb_status zb_cupti_map_init(zb_cupti_map *m, int64_t comm_stream_id);
void zb_cupti_map_free(zb_cupti_map *m);

/* Names the zerobench stream a CUDA stream (by CUPTI id) stands for; is_comm
 * designates it (too) as the comm stream. Re-registering an id replaces it. */
zb_status zb_cupti_map_set_stream(zb_cupti_map *m, uint32_t cupti_stream_id, int zb_stream,
                                  bool is_comm);

/* Registers op `id` (non-zero, unique per run): its label, unit, kind, bytes
 * and flops from info, on zerobench stream `zb_stream`. */
zb_status zb_cupti_map_push_op(zb_cupti_map *m, uint64_t id, const zb_op_info *info, int zb_stream);

/* Takes one activity record (thread-safe; CUPTI's buffer thread calls it). */
void zb_cupti_map_record(zb_cupti_map *m, const zb_act_record *r);

/* Adds a clock pair (see above); *residual_ns may be NULL. */
void zb_cupti_map_add_clock_pair(zb_cupti_map *m, int64_t cupti_ns, int64_t mono_ns,
                                 int64_t *residual_ns);
void zb_cupti_map_add_dropped(zb_cupti_map *m, size_t n_records);
void zb_cupti_map_add_buffer_error(zb_cupti_map *m);

/* Resolves, classifies, converts and appends every held GPU record to t (a
 * NULL or disabled trace counts them in n_discarded), then ages the id
 * tables. ZB_ERR_INVALID (records kept) when no clock pair was added yet. */
zb_status zb_cupti_map_flush(zb_cupti_map *m, zb_trace *t);

void zb_cupti_map_get_stats(zb_cupti_map *m, zb_cupti_stats *out);

/* The mapping's losses as the registry's backend-neutral tracer counts
 * (zb_tracer_stats, device_backend.h; cupti_stats.c): dropped,
 * zero-timestamp and inverted records, buffer errors. */
struct zb_tracer_stats;
void zb_cupti_tracer_stats(const zb_cupti_stats *s, struct zb_tracer_stats *out);

/* Short name of a kernel: "_Z12gemm_kernelPf" -> "gemm_kernel",
 * "_ZN4ns_a3fooEv" -> "ns_a::foo", "foo(int)" -> "foo"; anything else is
 * copied. Always terminated; truncated to out_size - 1. */
void zb_cupti_short_name(const char *name, char *out, size_t out_size);

/* True when the full (untruncated) name contains an NCCL kernel name. */
bool zb_cupti_is_nccl_kernel(const char *name);

#ifdef __cplusplus
}
#endif
#endif
