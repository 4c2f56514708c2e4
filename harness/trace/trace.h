/* Trace records: one record per executed op, the same for every backend.
 *
 * {rank, stream, kind, label, unit, bytes, flops, start_ns, end_ns, seq,
 * coll} on the harness clock (CLOCK_MONOTONIC, zb_now_ns). Stream threads
 * append concurrently; appends take a mutex only when tracing is on, so a run
 * with tracing off pays one branch per op. Metrics (overlap, exposed comm,
 * the wait/transfer split) are computed from these records. Beside them a
 * trace keeps what its export shows around the ops: the step benchmark's
 * runs (phases) and step marks, and live-memory samples from the memory
 * accounting (docs/design.md §3, §7). */
#ifndef ZB_TRACE_H
#define ZB_TRACE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum zb_op_kind {
    ZB_OP_COMPUTE = 0,
    ZB_OP_COMM,
    ZB_OP_COPY,
    ZB_OP_KIND_COUNT
} zb_op_kind;

const char *zb_op_kind_name(zb_op_kind k);

#define ZB_LABEL_MAX 48
/* Memory tags a sample holds (device.h's zb_mem_tag, which this layer does
 * not see; device.h checks that they fit). */
#define ZB_TRACE_MEM_TAGS 12

/* What the issuer says about an op; the backend adds stream and times. */
typedef struct zb_op_info {
    zb_op_kind kind;
    const char *label; /* copied into the record; NULL reads as "" */
    int unit;          /* model unit (layer) or -1 */
    uint64_t bytes;    /* payload bytes the op moves */
    double flops;      /* floating-point operations it performs */
    /* The collective this op is, by the comm layer's name ("allgather",
     * "reducescatter", "allreduce", "barrier"), a static string; NULL: not a
     * collective (compute, copies, a collective's staging copies). The
     * records of one collective instance on every rank are matched by it
     * (zb_trace_collectives). */
    const char *coll;
} zb_op_info;

#define ZB_COLL_NAME_MAX 16

typedef struct zb_trace_record {
    int rank;
    int stream;
    zb_op_kind kind;
    int unit;
    uint64_t bytes;
    double flops;
    int64_t start_ns;
    int64_t end_ns;
    char label[ZB_LABEL_MAX];
    uint64_t seq; /* issue order on this rank's device: dependency order
                     checks use it, never timing */
    char coll[ZB_COLL_NAME_MAX]; /* zb_op_info.coll; "" when not a collective */
} zb_trace_record;

/* A step of a training run, as the trace export shows it: its own slice on
 * a track of its own, and the window [start_ns, end_ns] (this rank's clock)
 * that assigns every record starting inside it to the step. */
typedef struct zb_trace_step {
    int index;        /* 1-based over warm-up then measured steps, as the progress lines count */
    bool warmup;
    int phase;        /* index into zb_trace.phases */
    int64_t start_ns, end_ns;
} zb_trace_step;

/* One run of steps (a mode and stage of the step benchmark), for the trace's
 * metadata: which of its steps were written and which left out. */
typedef struct zb_trace_phase {
    char name[40];    /* e.g. "stage 3 prefetch" */
    char mode[16];    /* "sync", "prefetch" */
    int stage;
    int warmup_steps, steps;     /* warm-up and measured steps it ran */
    int first_written, last_written; /* 1-based, inclusive; first > last: none */
} zb_trace_phase;

#define ZB_TRACE_MAX_PHASES 16

/* Live memory after an allocation or a free (the per-tag accounting's view):
 * each tag's live bytes at time_ns. */
typedef struct zb_trace_mem_sample {
    int64_t time_ns;
    uint64_t live_bytes[ZB_TRACE_MEM_TAGS];
} zb_trace_mem_sample;

typedef struct zb_trace {
    bool enabled;
    int rank;
    pthread_mutex_t lock;
    zb_trace_record *records;
    size_t n_records;
    size_t capacity;
    size_t n_dropped; /* appends that found no memory: counted, never silent */
    char stream_names[16][32];
    /* Steps and phases (the step benchmark marks them; empty otherwise). */
    zb_trace_step *steps;
    size_t n_steps, cap_steps;
    zb_trace_phase phases[ZB_TRACE_MAX_PHASES];
    int n_phases;
    /* Live-memory samples; at most ZB_TRACE_MAX_MEM_SAMPLES, the rest counted. */
    zb_trace_mem_sample *mem;
    size_t n_mem, cap_mem, n_mem_dropped;
    /* The memory tags' names (static strings, the same in every rank's
     * binary) and which are host memory (bit t), set by the device layer
     * (zb_mem_trace_names); NULL names: no counter. */
    const char *mem_tag_names[ZB_TRACE_MEM_TAGS];
    unsigned mem_host_mask;
    /* What the steps written obey, for the trace's metadata ("" when no
     * step was marked), e.g. "--trace-steps 3-5". */
    char steps_rule[160];
    /* The records are in virtual time (set by a simulated device, the
     * sim): the export says so and marks the trace simulated. */
    bool virtual_time;
} zb_trace;

#define ZB_TRACE_MAX_MEM_SAMPLES (1u << 20)

/* Nanoseconds on CLOCK_MONOTONIC: the harness clock. Every harness
 * timestamp comes from here, so this is the one place the test hook below
 * applies. */
int64_t zb_now_ns(void);

/* Test hook, for tests only: when the environment variable
 * ZB_TEST_CLOCK_SKEW_NS is set to an integer S, zb_now_ns returns
 * CLOCK_MONOTONIC + S in this process. Set the same S on every rank of an
 * emulated node to give that node a clock origin of its own, as a real node
 * has (tests/mpi/test_trace_align_nodes.sh). Read once, at the first zb_now_ns. */
#define ZB_TEST_CLOCK_SKEW_ENV "ZB_TEST_CLOCK_SKEW_NS"
#define ZB_TEST_CLOCK_SKEW_MAX_NS 1000000000000000LL /* 1e15 ns, about 11.6 days */

/* Parses a ZB_TEST_CLOCK_SKEW_NS value: a decimal integer (optional sign)
 * within +-ZB_TEST_CLOCK_SKEW_MAX_NS, nothing else. ZB_ERR_INVALID naming
 * the variable and the value. */
zb_status zb_clock_skew_parse(const char *value, int64_t *out);
/* Checks the environment's ZB_TEST_CLOCK_SKEW_NS, if set (main refuses a
 * bad value before any work; zb_now_ns alone would ignore it). */
zb_status zb_clock_skew_check(void);

zb_status zb_trace_init(zb_trace *t, int rank, bool enabled);
void zb_trace_destroy(zb_trace *t);
/* Forgets the records (keeps the buffer and the dropped count). */
void zb_trace_clear(zb_trace *t);
/* Remembers a stream's name for reports (ids >= 16 keep no name). */
void zb_trace_name_stream(zb_trace *t, int stream, const char *name);
/* Appends one record; a no-op when t is NULL or tracing is off. */
void zb_trace_add(zb_trace *t, int stream, const zb_op_info *info, uint64_t seq,
                  int64_t start_ns, int64_t end_ns);

/* Moves the record of issue order `seq` (zb_trace_add's) to [start_ns,
 * end_ns): a simulated op whose end changed after it was issued. Searched
 * from the newest record back; a no-op when it is gone (cleared). */
void zb_trace_retime(zb_trace *t, uint64_t seq, int64_t start_ns, int64_t end_ns);

/* Forgets the records from index `first` on (the records of a step that is
 * not written; first >= n_records: nothing). */
void zb_trace_truncate(zb_trace *t, size_t first);

/* Starts a phase (a run of steps) and returns its index, or -1 when
 * tracing is off or ZB_TRACE_MAX_PHASES are taken. */
int zb_trace_phase_begin(zb_trace *t, const char *mode, int stage, int warmup_steps, int steps);
/* Marks a written step of phase `phase` (from zb_trace_phase_begin). */
void zb_trace_mark_step(zb_trace *t, int phase, int index, bool warmup, int64_t start_ns, int64_t end_ns);

/* Samples live memory: n_tags (<= ZB_TRACE_MEM_TAGS) live byte counts, now.
 * A no-op when t is NULL or tracing is off. Called by the memory accounting
 * under its own lock, so samples are in order. */
void zb_trace_mem_sample_add(zb_trace *t, const size_t *live_bytes, int n_tags);
/* The same at time_ns: a device with a clock of its own (the sim's virtual
 * time, which its records use) samples on that clock. */
void zb_trace_mem_sample_at(zb_trace *t, int64_t time_ns, const size_t *live_bytes, int n_tags);

/* The indices of the collective records (coll set) of `rank` in recs[0..n)
 * that start inside [t0_ns, t1_ns], in issue order (seq), into idx (room
 * for n); returns how many. The k-th collective record of every rank in the
 * same window is the same collective instance: every rank issues the same
 * collectives in the same order on one comm. */
size_t zb_trace_collectives(const zb_trace_record *recs, size_t n, int rank, int64_t t0_ns, int64_t t1_ns,
                            size_t *idx);

#ifdef __cplusplus
}
#endif
#endif
