/* Control interface of the fake libcupti (tests/unit/fake_cupti.c), which
 * lets tests/unit/test_cupti_fake.c drive the real CUPTI tracer
 * (harness/device/cuda/cupti_tracer.c) without a GPU.
 *
 * The fake exports CUPTI's entry points under their real names and
 * signatures, plus one function, fake_cupti_control, that returns the
 * table below. The test loads the same file the tracer loads
 * ($ZB_CUPTI_LIBRARY) with dlopen: the loader hands both the same copy, so
 * what the test steers is what the tracer calls.
 *
 * What the fake models of CUPTI (the documented behaviour in cupti_activity.h):
 *   - records reach the client only through the buffer callbacks it
 *     registered, on a thread of the fake (joined before
 *     cuptiActivityFlushAll returns), and are walked with
 *     cuptiActivityGetNextRecord;
 *   - the queued records sit in a buffer that holds an incomplete record, so
 *     only a forced flush (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) returns it;
 *   - the dropped count is reset to zero by each cuptiActivityGetNumDroppedRecords;
 *   - the timestamp is CLOCK_MONOTONIC + an offset, or frozen; with
 *     honor_callback a registered timestamp callback replaces it, for
 *     cuptiGetTimestamp as for the records;
 *   - external correlation ids are a stack per thread. */
#ifndef ZB_FAKE_CUPTI_H
#define ZB_FAKE_CUPTI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#define FAKE_CUPTI_MAX_KIND 128
#define FAKE_CUPTI_LOG_MAX 64

typedef struct fake_cupti_corr_event {
    bool push; /* else a pop */
    CUpti_ExternalCorrelationKind kind;
    uint64_t id; /* pushed, or returned by the pop */
    CUptiResult result;
} fake_cupti_corr_event;

/* What the fake was asked, since the last reset. */
typedef struct fake_cupti_log {
    bool enabled[FAKE_CUPTI_MAX_KIND]; /* activity kinds enabled now */
    int n_enable_calls;
    int n_register_callbacks;
    CUpti_BuffersCallbackRequestFunc buffer_requested;
    CUpti_BuffersCallbackCompleteFunc buffer_completed;
    CUpti_TimestampCallbackFunc timestamp_cb; /* NULL: none registered */
    uint32_t flush_flags[FAKE_CUPTI_LOG_MAX];
    int n_flushes;
    fake_cupti_corr_event corr[FAKE_CUPTI_LOG_MAX];
    int n_corr;
    int corr_depth; /* ids pushed and not popped (all threads) */
    CUpti_CallbackId runtime_off[FAKE_CUPTI_LOG_MAX]; /* cbids switched off */
    int n_runtime_off;
    CUpti_CallbackId driver_off[FAKE_CUPTI_LOG_MAX];
    int n_driver_off;
    int n_finalize;
    int n_buffers_delivered;
    size_t n_records_delivered;
    int n_dropped_queries;
} fake_cupti_log;

typedef struct fake_cupti_ctl {
    /* Forgets the log and the queue; clock CLOCK_MONOTONIC (offset 0, not
     * frozen, callback ignored), the headers' API version, no failure. */
    void (*reset)(void);
    void (*set_clock)(int64_t offset_ns, bool honor_callback, bool frozen);
    /* The fake's timestamp now, as cuptiGetTimestamp would give it. */
    uint64_t (*now)(void);
    void (*set_version)(uint32_t version);
    /* cuptiActivityEnable(kind) returns r (kind -1: no failure). */
    void (*fail_enable)(int kind, CUptiResult r);
    /* Records delivered at the next forced flush, in this order. */
    void (*queue_kernel)(uint32_t stream, uint32_t corr, uint64_t start, uint64_t end,
                         const char *name);
    void (*queue_memcpy)(uint32_t stream, uint32_t corr, uint32_t runtime_corr, uint64_t start,
                         uint64_t end, uint64_t bytes, uint8_t copy_kind);
    void (*queue_memset)(uint32_t stream, uint32_t corr, uint64_t start, uint64_t end,
                         uint64_t bytes);
    void (*queue_external)(uint32_t corr, uint64_t external_id, CUpti_ExternalCorrelationKind kind);
    void (*queue_runtime)(uint32_t corr, uint64_t start, uint64_t end);
    void (*queue_sync)(uint32_t corr, uint64_t start, uint64_t end);
    void (*queue_overhead)(uint64_t start, uint64_t end); /* with malloc'd overheadData */
    /* Adds to the dropped count of the global queue. */
    void (*add_dropped)(size_t n);
    const fake_cupti_log *(*log)(void);
} fake_cupti_ctl;

/* cuptiGetStreamIdEx's answer for a stream handle (not the handle itself,
 * so a tracer that used the handle would be caught). */
#define FAKE_CUPTI_STREAM_ID(handle) ((uint32_t)(uintptr_t)(handle) * 10u + 1u)

typedef const fake_cupti_ctl *(*fake_cupti_control_fn)(void);
#define FAKE_CUPTI_CONTROL_SYMBOL "fake_cupti_control"

#endif
