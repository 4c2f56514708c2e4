/* Trace records: one record per executed op, the same for every backend.
 *
 * {rank, stream, kind, label, unit, bytes, flops, start_ns, end_ns} on the
 * harness clock (CLOCK_MONOTONIC, zb_now_ns). Stream threads append
 * concurrently; appends take a mutex only when tracing is on, so a run with
 * tracing off pays one branch per op. Metrics (overlap, exposed comm) are
 * computed from these records. */
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

/* What the issuer says about an op; the backend adds stream and times. */
typedef struct zb_op_info {
    zb_op_kind kind;
    const char *label; /* copied into the record; NULL reads as "" */
    int unit;          /* model unit (layer) or -1 */
    uint64_t bytes;    /* payload bytes the op moves */
    double flops;      /* floating-point operations it performs */
} zb_op_info;

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
} zb_trace_record;

typedef struct zb_trace {
    bool enabled;
    int rank;
    pthread_mutex_t lock;
    zb_trace_record *records;
    size_t n_records;
    size_t capacity;
    size_t n_dropped; /* appends that found no memory: counted, never silent */
    char stream_names[16][32];
    /* The records are in virtual time (set by a simulated device, the
     * sim): the export says so and marks the trace simulated. */
    bool virtual_time;
} zb_trace;

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

#ifdef __cplusplus
}
#endif
#endif
