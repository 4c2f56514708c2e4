/* A fake libcupti: the CUPTI entry points the tracer (harness/device/cuda/
 * cupti_tracer.c) resolves with dlsym, with CUPTI's real signatures from
 * <cupti.h>, and no GPU behind them. Built as a shared library in CUDA
 * builds that have CUPTI's headers; tests/unit/test_cupti_fake.c loads it
 * through ZB_CUPTI_LIBRARY (cupti_tracer.h) and steers it through
 * fake_cupti_control (fake_cupti.h, which also says what of CUPTI is
 * modelled). It records what it is asked and delivers synthetic activity
 * records, in the record structs of the headers' CUPTI version, through the
 * buffer callbacks the tracer registered. */
#include "fake_cupti.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAKE_QUEUE_MAX 256
#define FAKE_FROZEN_NS 1000000000000ull /* a frozen clock: non-zero, never moves */

typedef union fake_rec {
    CUpti_Activity a;
    CUpti_ActivityKernel10 k;
    CUpti_ActivityMemcpy6 c;
    CUpti_ActivityMemset4 s;
    CUpti_ActivityExternalCorrelation e;
    CUpti_ActivityAPI api;
    CUpti_ActivitySynchronization2 y;
    CUpti_ActivityOverhead3 o;
} fake_rec;

static struct {
    pthread_mutex_t lock;
    fake_cupti_log log;
    int64_t offset_ns;
    bool honor_callback, frozen;
    uint32_t version;
    int fail_kind;
    CUptiResult fail_result;
    fake_rec queue[FAKE_QUEUE_MAX];
    size_t n_queue;
    size_t dropped;
} fake = {.lock = PTHREAD_MUTEX_INITIALIZER, .version = CUPTI_API_VERSION, .fail_kind = -1};

static _Thread_local uint64_t fake_stack[FAKE_CUPTI_LOG_MAX];
static _Thread_local int fake_depth;

/* Bytes a record of this kind takes in a buffer (0: a kind the fake does not write). */
static size_t fake_record_size(CUpti_ActivityKind kind) {
    size_t n = 0;
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: n = sizeof(CUpti_ActivityKernel10); break;
    case CUPTI_ACTIVITY_KIND_MEMCPY: n = sizeof(CUpti_ActivityMemcpy6); break;
    case CUPTI_ACTIVITY_KIND_MEMSET: n = sizeof(CUpti_ActivityMemset4); break;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: n = sizeof(CUpti_ActivityExternalCorrelation); break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: n = sizeof(CUpti_ActivityAPI); break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: n = sizeof(CUpti_ActivitySynchronization2); break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD: n = sizeof(CUpti_ActivityOverhead3); break;
    default: return 0;
    }
    return (n + 7) & ~(size_t)7; /* records are 8-byte aligned */
}

static uint64_t fake_own_clock(void) {
    if (fake.frozen) return FAKE_FROZEN_NS;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)((int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec + fake.offset_ns);
}

static uint64_t fake_timestamp(void) {
    pthread_mutex_lock(&fake.lock);
    CUpti_TimestampCallbackFunc cb = fake.honor_callback ? fake.log.timestamp_cb : NULL;
    uint64_t own = fake_own_clock();
    pthread_mutex_unlock(&fake.lock);
    return cb ? cb() : own;
}

/* ---- control (fake_cupti.h) ---------------------------------------------- */

static void ctl_reset(void) {
    pthread_mutex_lock(&fake.lock);
    for (size_t i = 0; i < fake.n_queue; i++) {
        if (fake.queue[i].a.kind == CUPTI_ACTIVITY_KIND_OVERHEAD) free(fake.queue[i].o.overheadData);
    }
    memset(&fake.log, 0, sizeof fake.log);
    fake.offset_ns = 0;
    fake.honor_callback = false;
    fake.frozen = false;
    fake.version = CUPTI_API_VERSION;
    fake.fail_kind = -1;
    fake.fail_result = CUPTI_SUCCESS;
    fake.n_queue = 0;
    fake.dropped = 0;
    pthread_mutex_unlock(&fake.lock);
}

static void ctl_set_clock(int64_t offset_ns, bool honor_callback, bool frozen) {
    pthread_mutex_lock(&fake.lock);
    fake.offset_ns = offset_ns;
    fake.honor_callback = honor_callback;
    fake.frozen = frozen;
    pthread_mutex_unlock(&fake.lock);
}

static void ctl_set_version(uint32_t v) {
    pthread_mutex_lock(&fake.lock);
    fake.version = v;
    pthread_mutex_unlock(&fake.lock);
}

static void ctl_fail_enable(int kind, CUptiResult r) {
    pthread_mutex_lock(&fake.lock);
    fake.fail_kind = kind;
    fake.fail_result = r;
    pthread_mutex_unlock(&fake.lock);
}

static fake_rec *fake_slot(CUpti_ActivityKind kind) {
    static fake_rec overflow; /* the test queues far fewer than FAKE_QUEUE_MAX */
    fake_rec *r = fake.n_queue < FAKE_QUEUE_MAX ? &fake.queue[fake.n_queue++] : &overflow;
    memset(r, 0, sizeof *r);
    r->a.kind = kind;
    return r;
}

static void ctl_queue_kernel(uint32_t stream, uint32_t corr, uint64_t start, uint64_t end,
                             const char *name) {
    pthread_mutex_lock(&fake.lock);
    fake_rec *r = fake_slot(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    r->k.streamId = stream;
    r->k.correlationId = corr;
    r->k.start = start;
    r->k.end = end;
    r->k.name = name;
    pthread_mutex_unlock(&fake.lock);
}

static void ctl_queue_memcpy(uint32_t stream, uint32_t corr, uint32_t runtime_corr, uint64_t start,
                             uint64_t end, uint64_t bytes, uint8_t copy_kind) {
    pthread_mutex_lock(&fake.lock);
    fake_rec *r = fake_slot(CUPTI_ACTIVITY_KIND_MEMCPY);
    r->c.streamId = stream;
    r->c.correlationId = corr;
    r->c.runtimeCorrelationId = runtime_corr;
    r->c.start = start;
    r->c.end = end;
    r->c.bytes = bytes;
    r->c.copyKind = copy_kind;
    pthread_mutex_unlock(&fake.lock);
}

static void ctl_queue_memset(uint32_t stream, uint32_t corr, uint64_t start, uint64_t end,
                             uint64_t bytes) {
    pthread_mutex_lock(&fake.lock);
    fake_rec *r = fake_slot(CUPTI_ACTIVITY_KIND_MEMSET);
    r->s.streamId = stream;
    r->s.correlationId = corr;
    r->s.start = start;
    r->s.end = end;
    r->s.bytes = bytes;
    pthread_mutex_unlock(&fake.lock);
}

static void ctl_queue_external(uint32_t corr, uint64_t external_id,
                               CUpti_ExternalCorrelationKind kind) {
    pthread_mutex_lock(&fake.lock);
    fake_rec *r = fake_slot(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    r->e.correlationId = corr;
    r->e.externalId = external_id;
    r->e.externalKind = kind;
    pthread_mutex_unlock(&fake.lock);
}

static void ctl_queue_runtime(uint32_t corr, uint64_t start, uint64_t end) {
    pthread_mutex_lock(&fake.lock);
    fake_rec *r = fake_slot(CUPTI_ACTIVITY_KIND_RUNTIME);
    r->api.correlationId = corr;
    r->api.start = start;
    r->api.end = end;
    pthread_mutex_unlock(&fake.lock);
}

static void ctl_queue_sync(uint32_t corr, uint64_t start, uint64_t end) {
    pthread_mutex_lock(&fake.lock);
    fake_rec *r = fake_slot(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    r->y.correlationId = corr;
    r->y.start = start;
    r->y.end = end;
    pthread_mutex_unlock(&fake.lock);
}

static void ctl_queue_overhead(uint64_t start, uint64_t end) {
    pthread_mutex_lock(&fake.lock);
    fake_rec *r = fake_slot(CUPTI_ACTIVITY_KIND_OVERHEAD);
    r->o.start = start;
    r->o.end = end;
    r->o.overheadData = malloc(16); /* the client frees it (cupti_activity.h) */
    pthread_mutex_unlock(&fake.lock);
}

static void ctl_add_dropped(size_t n) {
    pthread_mutex_lock(&fake.lock);
    fake.dropped += n;
    pthread_mutex_unlock(&fake.lock);
}

static const fake_cupti_log *ctl_log(void) { return &fake.log; }

static const fake_cupti_ctl fake_ctl = {
    .reset = ctl_reset,
    .set_clock = ctl_set_clock,
    .now = fake_timestamp,
    .set_version = ctl_set_version,
    .fail_enable = ctl_fail_enable,
    .queue_kernel = ctl_queue_kernel,
    .queue_memcpy = ctl_queue_memcpy,
    .queue_memset = ctl_queue_memset,
    .queue_external = ctl_queue_external,
    .queue_runtime = ctl_queue_runtime,
    .queue_sync = ctl_queue_sync,
    .queue_overhead = ctl_queue_overhead,
    .add_dropped = ctl_add_dropped,
    .log = ctl_log,
};

const fake_cupti_ctl *fake_cupti_control(void);
const fake_cupti_ctl *fake_cupti_control(void) { return &fake_ctl; }

/* ---- CUPTI entry points --------------------------------------------------- */

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version) {
    if (!version) return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&fake.lock);
    *version = fake.version;
    pthread_mutex_unlock(&fake.lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str) {
    if (!str) return CUPTI_ERROR_INVALID_PARAMETER;
    switch (result) {
    case CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
        break;
    case CUPTI_ERROR_INVALID_KIND: *str = "CUPTI_ERROR_INVALID_KIND"; break;
    default: *str = "CUPTI_ERROR (fake)"; break;
    }
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                    CUpti_BuffersCallbackCompleteFunc completed) {
    if (!requested || !completed) return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&fake.lock);
    fake.log.n_register_callbacks++;
    fake.log.buffer_requested = requested;
    fake.log.buffer_completed = completed;
    pthread_mutex_unlock(&fake.lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f) {
    if (!f) return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&fake.lock);
    fake.log.timestamp_cb = f;
    pthread_mutex_unlock(&fake.lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
    if ((int)kind <= 0 || (int)kind >= FAKE_CUPTI_MAX_KIND) return CUPTI_ERROR_INVALID_KIND;
    pthread_mutex_lock(&fake.lock);
    fake.log.n_enable_calls++;
    CUptiResult r = (int)kind == fake.fail_kind ? fake.fail_result : CUPTI_SUCCESS;
    if (r == CUPTI_SUCCESS) fake.log.enabled[kind] = true;
    pthread_mutex_unlock(&fake.lock);
    return r;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
    if ((int)kind <= 0 || (int)kind >= FAKE_CUPTI_MAX_KIND) return CUPTI_ERROR_INVALID_KIND;
    pthread_mutex_lock(&fake.lock);
    fake.log.enabled[kind] = false;
    pthread_mutex_unlock(&fake.lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
    pthread_mutex_lock(&fake.lock);
    if (!enable && fake.log.n_runtime_off < FAKE_CUPTI_LOG_MAX) {
        fake.log.runtime_off[fake.log.n_runtime_off++] = cbid;
    }
    pthread_mutex_unlock(&fake.lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
    pthread_mutex_lock(&fake.lock);
    if (!enable && fake.log.n_driver_off < FAKE_CUPTI_LOG_MAX) {
        fake.log.driver_off[fake.log.n_driver_off++] = cbid;
    }
    pthread_mutex_unlock(&fake.lock);
    return CUPTI_SUCCESS;
}

typedef struct fake_delivery {
    CUpti_BuffersCallbackCompleteFunc completed;
    uint8_t *buffer;
    size_t size, valid;
} fake_delivery;

static void *fake_buffer_thread(void *arg) {
    fake_delivery *d = arg;
    d->completed(NULL, 0, d->buffer, d->size, d->valid);
    return NULL;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag) {
    pthread_mutex_lock(&fake.lock);
    if (fake.log.n_flushes < FAKE_CUPTI_LOG_MAX) fake.log.flush_flags[fake.log.n_flushes] = flag;
    fake.log.n_flushes++;
    CUpti_BuffersCallbackRequestFunc requested = fake.log.buffer_requested;
    CUpti_BuffersCallbackCompleteFunc completed = fake.log.buffer_completed;
    if (!requested || !completed) {
        pthread_mutex_unlock(&fake.lock);
        return CUPTI_ERROR_INVALID_OPERATION;
    }
    /* The queued records share a buffer with an incomplete one: only a
     * forced flush returns it (cuptiActivityFlushAll in cupti_activity.h). */
    if (!(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) || fake.n_queue == 0) {
        pthread_mutex_unlock(&fake.lock);
        return CUPTI_SUCCESS;
    }
    size_t n = fake.n_queue;
    fake_rec *recs = malloc(n * sizeof *recs);
    if (!recs) {
        pthread_mutex_unlock(&fake.lock);
        return CUPTI_ERROR_OUT_OF_MEMORY;
    }
    memcpy(recs, fake.queue, n * sizeof *recs);
    fake.n_queue = 0;
    pthread_mutex_unlock(&fake.lock);

    uint8_t *buffer = NULL;
    size_t size = 0, max_records = 0, valid = 0, written = 0;
    requested(&buffer, &size, &max_records);
    for (size_t i = 0; buffer && i < n; i++) {
        size_t sz = fake_record_size(recs[i].a.kind);
        if (valid + sz > size || (max_records && written == max_records)) break;
        memcpy(buffer + valid, &recs[i], sz < sizeof recs[i] ? sz : sizeof recs[i]);
        valid += sz;
        written++;
    }
    for (size_t i = written; i < n; i++) { /* no room: CUPTI drops them */
        if (recs[i].a.kind == CUPTI_ACTIVITY_KIND_OVERHEAD) free(recs[i].o.overheadData);
    }
    free(recs);
    pthread_mutex_lock(&fake.lock);
    fake.dropped += n - written;
    fake.log.n_records_delivered += written;
    if (buffer) fake.log.n_buffers_delivered++;
    pthread_mutex_unlock(&fake.lock);
    if (!buffer) return CUPTI_SUCCESS;
    fake_delivery d = {completed, buffer, size, valid};
    pthread_t th;
    if (pthread_create(&th, NULL, fake_buffer_thread, &d) != 0) {
        fake_buffer_thread(&d);
    } else {
        pthread_join(th, NULL);
    }
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid_size,
                                                CUpti_Activity **record) {
    if (!buffer || !record) return CUPTI_ERROR_INVALID_PARAMETER;
    size_t pos = 0;
    if (*record) {
        pos = (size_t)((uint8_t *)*record - buffer) + fake_record_size((*record)->kind);
    }
    if (pos >= valid_size) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    CUpti_Activity *a = (CUpti_Activity *)(void *)(buffer + pos);
    size_t sz = fake_record_size(a->kind);
    if (sz == 0 || pos + sz > valid_size) return CUPTI_ERROR_INVALID_KIND;
    *record = a;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t stream_id,
                                                       size_t *dropped) {
    (void)context;
    (void)stream_id;
    if (!dropped) return CUPTI_ERROR_INVALID_PARAMETER;
    pthread_mutex_lock(&fake.lock);
    fake.log.n_dropped_queries++;
    *dropped = fake.dropped;
    fake.dropped = 0; /* reset by each call (cupti_activity.h) */
    pthread_mutex_unlock(&fake.lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                            uint64_t id) {
    CUptiResult r = fake_depth < FAKE_CUPTI_LOG_MAX ? CUPTI_SUCCESS : CUPTI_ERROR_MAX_LIMIT_REACHED;
    if (r == CUPTI_SUCCESS) fake_stack[fake_depth++] = id;
    pthread_mutex_lock(&fake.lock);
    if (fake.log.n_corr < FAKE_CUPTI_LOG_MAX) {
        fake.log.corr[fake.log.n_corr++] = (fake_cupti_corr_event){true, kind, id, r};
    }
    if (r == CUPTI_SUCCESS) fake.log.corr_depth++;
    pthread_mutex_unlock(&fake.lock);
    return r;
}

CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                           uint64_t *last_id) {
    CUptiResult r = fake_depth > 0 ? CUPTI_SUCCESS : CUPTI_ERROR_QUEUE_EMPTY;
    uint64_t id = r == CUPTI_SUCCESS ? fake_stack[--fake_depth] : 0;
    if (last_id) *last_id = id;
    pthread_mutex_lock(&fake.lock);
    if (fake.log.n_corr < FAKE_CUPTI_LOG_MAX) {
        fake.log.corr[fake.log.n_corr++] = (fake_cupti_corr_event){false, kind, id, r};
    }
    if (r == CUPTI_SUCCESS) fake.log.corr_depth--;
    pthread_mutex_unlock(&fake.lock);
    return r;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp) {
    if (!timestamp) return CUPTI_ERROR_INVALID_PARAMETER;
    *timestamp = fake_timestamp();
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetStreamIdEx(CUcontext context, CUstream stream, uint8_t per_thread,
                                        uint32_t *stream_id) {
    (void)context;
    (void)per_thread;
    if (!stream_id) return CUPTI_ERROR_INVALID_PARAMETER;
    *stream_id = FAKE_CUPTI_STREAM_ID(stream);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiFinalize(void) {
    pthread_mutex_lock(&fake.lock);
    fake.log.n_finalize++; /* the enabled kinds stay as the tracer left them, for the test to see */
    fake.log.buffer_requested = NULL;
    fake.log.buffer_completed = NULL;
    fake.log.timestamp_cb = NULL;
    pthread_mutex_unlock(&fake.lock);
    return CUPTI_SUCCESS;
}
