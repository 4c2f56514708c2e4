/* CUPTI Activity API tracer (see cupti_tracer.h for the life cycle).
 *
 * libcupti is loaded with dlopen at zb_cupti_start, so a machine without it
 * (a runtime-only CUDA install) still runs zerobench, without GPU traces.
 * Record layouts are those of the CUPTI headers this file is built with
 * (CUDA 13, CUPTI_API_VERSION 130001): CUpti_ActivityKernel10 (kinds
 * CONCURRENT_KERNEL and KERNEL), CUpti_ActivityMemcpy6, CUpti_ActivityMemset4,
 * CUpti_ActivityAPI (RUNTIME, DRIVER), CUpti_ActivityExternalCorrelation,
 * CUpti_ActivitySynchronization2, CUpti_ActivityOverhead3. CUPTI writes the
 * layout of its own major version, so a libcupti whose major version differs
 * from the headers' is refused (the records would be misread).
 *
 * Enabled kinds: CONCURRENT_KERNEL (never KERNEL, which serializes kernels),
 * MEMCPY, MEMSET, RUNTIME, DRIVER (NCCL launches through the driver API),
 * EXTERNAL_CORRELATION, SYNCHRONIZATION, OVERHEAD. Records of the polling
 * calls (cudaStreamQuery, cudaEventQuery, cuStreamQuery, cuEventQuery) are
 * switched off: the timeout loops call them thousands of times per wait and
 * they launch nothing. Every record goes through cupti_map.c. */
#include "cupti_tracer.h"

#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_paths.h"

#define ZB_CUPTI_BUFFER_BYTES ((size_t)8 << 20)
#define ZB_CUPTI_BUFFER_ALIGN 64 /* CUPTI needs 8 */
#define ZB_CUPTI_CLOCK_SAMPLES 16
#define ZB_CUPTI_START_PAIRS 3 /* at start: enough to see a clock that does not advance or steps */
#define ZB_CUPTI_EXT_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0

/* The CUPTI entry points zerobench uses, resolved from libcupti. */
typedef struct zb_cupti_api {
    CUptiResult (*GetVersion)(uint32_t *);
    CUptiResult (*GetResultString)(CUptiResult, const char **);
    CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                             CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc);
    CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
    CUptiResult (*ActivityDisable)(CUpti_ActivityKind);
    CUptiResult (*ActivityEnableRuntimeApi)(CUpti_CallbackId, uint8_t);
    CUptiResult (*ActivityEnableDriverApi)(CUpti_CallbackId, uint8_t);
    CUptiResult (*ActivityFlushAll)(uint32_t);
    CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
    CUptiResult (*ActivityPushExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t);
    CUptiResult (*ActivityPopExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t *);
    CUptiResult (*GetTimestamp)(uint64_t *);
    CUptiResult (*GetStreamIdEx)(CUcontext, CUstream, uint8_t, uint32_t *);
    CUptiResult (*Finalize)(void);
} zb_cupti_api;

static const CUpti_ActivityKind zb_cupti_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,   CUPTI_ACTIVITY_KIND_OVERHEAD};
#define ZB_CUPTI_N_KINDS (sizeof zb_cupti_kinds / sizeof zb_cupti_kinds[0])

static struct {
    void *lib;
    bool loaded;
    zb_cupti_api api;
    zb_cupti_map map;
    zb_trace *trace;
    size_t n_enabled; /* a prefix of zb_cupti_kinds */
    zb_cupti_stats final_stats;
    bool have_final_stats;
    char reason[256];
    char clock_note[320]; /* "" when records are on the harness clock as read */
} zb_cupti_g;

static atomic_bool zb_cupti_running;
static atomic_bool zb_cupti_map_ready; /* the buffer thread may use the map */
static atomic_uint_fast64_t zb_cupti_next_id = 1;
static _Thread_local int zb_cupti_depth; /* ids this thread pushed and not popped */

static const char *zb_cupti_err(CUptiResult r) {
    const char *s = NULL;
    if (zb_cupti_g.api.GetResultString && zb_cupti_g.api.GetResultString(r, &s) == CUPTI_SUCCESS &&
        s) {
        return s;
    }
    return "unknown CUPTI error";
}

/* Records the reason and returns ZB_ERR_UNSUPPORTED with a one-line message. */
static zb_status zb_cupti_unavailable(const char *what) {
    /* One line, short enough to fit zb_error_message whole. */
    snprintf(zb_cupti_g.reason, sizeof zb_cupti_g.reason,
             "CUPTI tracing unavailable (%s); trace metrics will be reported as not measured", what);
    return ZB_FAIL(ZB_ERR_UNSUPPORTED, "%s", zb_cupti_g.reason);
}

const char *zb_cupti_unavailable_reason(void) { return zb_cupti_g.reason; }

const char *zb_cupti_clock_note(void) { return zb_cupti_g.clock_note; }

static zb_status zb_cupti_load(void) {
    if (zb_cupti_g.loaded) return ZB_OK;
    static char candidates[ZB_CUPTI_MAX_CANDIDATES][ZB_CUPTI_PATH_MAX];
    int n = zb_cupti_candidates(getenv("ZB_CUPTI_LIBRARY"), getenv("CUDA_HOME"), CUDA_VERSION / 1000,
                                candidates);
    for (int i = 0; i < n && !zb_cupti_g.lib; i++) zb_cupti_g.lib = dlopen(candidates[i], RTLD_NOW);
    if (!zb_cupti_g.lib) {
        char what[160];
        snprintf(what, sizeof what, "libcupti.so.%d could not be loaded; set ZB_CUPTI_LIBRARY",
                 CUDA_VERSION / 1000);
        return zb_cupti_unavailable(what);
    }
    zb_cupti_api *a = &zb_cupti_g.api;
    void *h = zb_cupti_g.lib;
#define ZB_CUPTI_SYM(field, name) a->field = (__typeof__(a->field))dlsym(h, name)
    ZB_CUPTI_SYM(GetVersion, "cuptiGetVersion");
    ZB_CUPTI_SYM(GetResultString, "cuptiGetResultString");
    ZB_CUPTI_SYM(ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks");
    ZB_CUPTI_SYM(ActivityRegisterTimestampCallback, "cuptiActivityRegisterTimestampCallback");
    ZB_CUPTI_SYM(ActivityEnable, "cuptiActivityEnable");
    ZB_CUPTI_SYM(ActivityDisable, "cuptiActivityDisable");
    ZB_CUPTI_SYM(ActivityEnableRuntimeApi, "cuptiActivityEnableRuntimeApi");
    ZB_CUPTI_SYM(ActivityEnableDriverApi, "cuptiActivityEnableDriverApi");
    ZB_CUPTI_SYM(ActivityFlushAll, "cuptiActivityFlushAll");
    ZB_CUPTI_SYM(ActivityGetNextRecord, "cuptiActivityGetNextRecord");
    ZB_CUPTI_SYM(ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords");
    ZB_CUPTI_SYM(ActivityPushExternalCorrelationId, "cuptiActivityPushExternalCorrelationId");
    ZB_CUPTI_SYM(ActivityPopExternalCorrelationId, "cuptiActivityPopExternalCorrelationId");
    ZB_CUPTI_SYM(GetTimestamp, "cuptiGetTimestamp");
    ZB_CUPTI_SYM(GetStreamIdEx, "cuptiGetStreamIdEx");
    ZB_CUPTI_SYM(Finalize, "cuptiFinalize");
#undef ZB_CUPTI_SYM
    if (!a->GetVersion || !a->ActivityRegisterCallbacks || !a->ActivityEnable ||
        !a->ActivityDisable || !a->ActivityFlushAll || !a->ActivityGetNextRecord ||
        !a->ActivityGetNumDroppedRecords || !a->ActivityPushExternalCorrelationId ||
        !a->ActivityPopExternalCorrelationId || !a->GetTimestamp || !a->GetStreamIdEx) {
        return zb_cupti_unavailable("libcupti lacks an entry point zerobench needs");
    }
    uint32_t version = 0;
    CUptiResult r = a->GetVersion(&version);
    if (r != CUPTI_SUCCESS) return zb_cupti_unavailable(zb_cupti_err(r));
    if (version / 10000 != CUPTI_API_VERSION / 10000) {
        char what[160];
        snprintf(what, sizeof what, "libcupti API version %u, built for %d: record layouts differ",
                 (unsigned)version, CUPTI_API_VERSION);
        return zb_cupti_unavailable(what);
    }
    zb_cupti_g.loaded = true;
    return ZB_OK;
}

/* ---- records ----------------------------------------------------------------- */

static const char *zb_cupti_copy_name(uint8_t copy_kind) {
    switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "memcpy PtoP";
    default: return "memcpy";
    }
}

/* One CUPTI record -> zb_act_record (name pointers stay CUPTI's). */
static void zb_cupti_translate(CUpti_Activity *a, zb_act_record *r) {
    memset(r, 0, sizeof *r);
    switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)(void *)a;
        r->kind = ZB_ACT_KERNEL;
        r->start_ns = k->start;
        r->end_ns = k->end;
        r->stream_id = k->streamId;
        r->correlation_id = k->correlationId;
        r->name = k->name;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *c = (const CUpti_ActivityMemcpy6 *)(void *)a;
        r->kind = ZB_ACT_MEMCPY;
        r->start_ns = c->start;
        r->end_ns = c->end;
        r->stream_id = c->streamId;
        r->correlation_id = c->correlationId;
        r->runtime_correlation_id = c->runtimeCorrelationId;
        r->bytes = c->bytes;
        r->name = zb_cupti_copy_name(c->copyKind);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *s = (const CUpti_ActivityMemset4 *)(void *)a;
        r->kind = ZB_ACT_MEMSET;
        r->start_ns = s->start;
        r->end_ns = s->end;
        r->stream_id = s->streamId;
        r->correlation_id = s->correlationId;
        r->bytes = s->bytes;
        r->name = "memset";
        break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const CUpti_ActivityAPI *api = (const CUpti_ActivityAPI *)(void *)a;
        r->kind = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? ZB_ACT_RUNTIME : ZB_ACT_DRIVER;
        r->start_ns = api->start;
        r->end_ns = api->end;
        r->correlation_id = api->correlationId;
        break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const CUpti_ActivityExternalCorrelation *e =
            (const CUpti_ActivityExternalCorrelation *)(void *)a;
        r->kind = ZB_ACT_EXTERNAL_CORRELATION;
        r->correlation_id = e->correlationId;
        r->external_id = e->externalId;
        r->external_is_zb = e->externalKind == ZB_CUPTI_EXT_KIND;
        break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
        const CUpti_ActivitySynchronization2 *s = (const CUpti_ActivitySynchronization2 *)(void *)a;
        r->kind = ZB_ACT_SYNCHRONIZATION;
        r->start_ns = s->start;
        r->end_ns = s->end;
        r->correlation_id = s->correlationId;
        break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
        CUpti_ActivityOverhead3 *o = (CUpti_ActivityOverhead3 *)(void *)a;
        r->kind = ZB_ACT_OVERHEAD;
        r->start_ns = o->start;
        r->end_ns = o->end;
        r->correlation_id = o->correlationId;
        /* cupti_activity.h: the client frees overheadData with free(). */
        free(o->overheadData);
        o->overheadData = NULL;
        break;
    }
    default: r->kind = ZB_ACT_OTHER; break;
    }
}

static void CUPTIAPI zb_cupti_buffer_requested(uint8_t **buffer, size_t *size,
                                               size_t *max_records) {
    void *p = NULL;
    if (posix_memalign(&p, ZB_CUPTI_BUFFER_ALIGN, ZB_CUPTI_BUFFER_BYTES) != 0) p = NULL;
    if (!p && atomic_load(&zb_cupti_map_ready)) zb_cupti_map_add_buffer_error(&zb_cupti_g.map);
    *buffer = (uint8_t *)p;
    *size = p ? ZB_CUPTI_BUFFER_BYTES : 0;
    *max_records = 0; /* as many as fit */
}

static void CUPTIAPI zb_cupti_buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
                                               size_t size, size_t valid_size) {
    (void)size;
    if (!buffer) return;
    if (atomic_load(&zb_cupti_map_ready)) {
        CUpti_Activity *a = NULL;
        for (;;) {
            CUptiResult r = zb_cupti_g.api.ActivityGetNextRecord(buffer, valid_size, &a);
            if (r != CUPTI_SUCCESS) {
                if (r != CUPTI_ERROR_MAX_LIMIT_REACHED) {
                    zb_cupti_map_add_buffer_error(&zb_cupti_g.map); /* rest of buffer unread */
                }
                break;
            }
            zb_act_record rec;
            zb_cupti_translate(a, &rec);
            zb_cupti_map_record(&zb_cupti_g.map, &rec);
        }
        size_t dropped = 0;
        if (zb_cupti_g.api.ActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS &&
            dropped > 0) {
            zb_cupti_map_add_dropped(&zb_cupti_g.map, dropped);
        }
    }
    free(buffer);
}

/* CLOCK_MONOTONIC as CUPTI's timestamp source: records land on the harness
 * clock directly and a wall-clock step cannot move them. */
static uint64_t CUPTIAPI zb_cupti_monotonic(void) { return (uint64_t)zb_now_ns(); }

static int64_t zb_cupti_read_clock(void *ctx) {
    (void)ctx;
    uint64_t ts = 0;
    if (zb_cupti_g.api.GetTimestamp(&ts) != CUPTI_SUCCESS || ts == 0) return -1;
    return (int64_t)ts;
}

static zb_status zb_cupti_clock_pair(void) {
    zb_clock_map tmp;
    zb_clock_map_init(&tmp);
    ZB_TRY(zb_clock_map_measure(&tmp, zb_cupti_read_clock, NULL, ZB_CUPTI_CLOCK_SAMPLES, NULL));
    zb_cupti_map_add_clock_pair(&zb_cupti_g.map, tmp.pairs[0].cupti_ns, tmp.pairs[0].mono_ns, NULL);
    return ZB_OK;
}

/* Measures ZB_CUPTI_START_PAIRS pairs, decides (zb_clock_map_decide) and,
 * unless refused, hands them to the map; a conversion is noted with why
 * CUPTI's clock is not CLOCK_MONOTONIC (`why_other`). */
static zb_clock_decision zb_cupti_start_clock(const char *why_other, char *msg, size_t n) {
    zb_clock_map tmp;
    zb_clock_map_init(&tmp);
    for (int i = 0; i < ZB_CUPTI_START_PAIRS; i++) {
        if (zb_clock_map_measure(&tmp, zb_cupti_read_clock, NULL, ZB_CUPTI_CLOCK_SAMPLES, NULL) != ZB_OK) break;
    }
    zb_clock_decision d = zb_clock_map_decide(&tmp, msg, n);
    if (d == ZB_CLOCK_REFUSE) return d;
    for (size_t i = 0; i < tmp.n_pairs; i++) {
        zb_cupti_map_add_clock_pair(&zb_cupti_g.map, tmp.pairs[i].cupti_ns, tmp.pairs[i].mono_ns, NULL);
    }
    if (d == ZB_CLOCK_CONVERT) {
        snprintf(zb_cupti_g.clock_note, sizeof zb_cupti_g.clock_note, "%s (%s)", msg, why_other);
    }
    return d;
}

static void zb_cupti_disable_all(void) {
    while (zb_cupti_g.n_enabled > 0) {
        zb_cupti_g.api.ActivityDisable(zb_cupti_kinds[--zb_cupti_g.n_enabled]);
    }
}

/* ---- public API ---------------------------------------------------------- */

zb_status zb_cupti_start(zb_trace *t, int comm_cuda_stream_id) {
    if (atomic_load(&zb_cupti_running)) {
        return ZB_FAIL(ZB_ERR_INVALID, "zb_cupti_start: the CUPTI tracer is already running");
    }
    zb_cupti_g.reason[0] = '\0';
    ZB_TRY(zb_cupti_load());
    zb_cupti_api *a = &zb_cupti_g.api;
    if (atomic_load(&zb_cupti_map_ready)) zb_cupti_map_free(&zb_cupti_g.map);
    ZB_TRY(zb_cupti_map_init(&zb_cupti_g.map, comm_cuda_stream_id));
    atomic_store(&zb_cupti_map_ready, true);
    zb_cupti_g.have_final_stats = false;
    zb_cupti_g.trace = t;

    /* Why records may come on CUPTI's own clock: said when they do. */
    const char *clock = getenv("ZB_CUPTI_CLOCK");
    char why_other[128];
    snprintf(why_other, sizeof why_other, "although CLOCK_MONOTONIC was registered as its timestamp source");
    zb_cupti_g.clock_note[0] = '\0';
    if (clock && strcmp(clock, "cupti") == 0) {
        snprintf(why_other, sizeof why_other, "ZB_CUPTI_CLOCK=cupti keeps CUPTI's own clock");
    } else if (!a->ActivityRegisterTimestampCallback) {
        snprintf(why_other, sizeof why_other, "libcupti lacks cuptiActivityRegisterTimestampCallback");
    } else {
        CUptiResult tr = a->ActivityRegisterTimestampCallback(zb_cupti_monotonic);
        if (tr != CUPTI_SUCCESS) {
            snprintf(why_other, sizeof why_other, "cuptiActivityRegisterTimestampCallback: %.80s", zb_cupti_err(tr));
        }
    }
    const char *call = "cuptiActivityRegisterCallbacks";
    CUptiResult r = a->ActivityRegisterCallbacks(zb_cupti_buffer_requested, zb_cupti_buffer_completed);
    for (size_t i = 0; r == CUPTI_SUCCESS && i < ZB_CUPTI_N_KINDS; i++) {
        r = a->ActivityEnable(zb_cupti_kinds[i]);
        if (r == CUPTI_SUCCESS) zb_cupti_g.n_enabled = i + 1;
        else call = "cuptiActivityEnable";
    }
    if (r != CUPTI_SUCCESS) {
        char what[200];
        snprintf(what, sizeof what, "%s: %s%s", call, zb_cupti_err(r),
                 r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                     ? ": another profiler, such as Nsight Systems, holds CUPTI"
                     : "");
        zb_cupti_disable_all();
        atomic_store(&zb_cupti_map_ready, false);
        zb_cupti_map_free(&zb_cupti_g.map);
        return zb_cupti_unavailable(what);
    }
    if (a->ActivityEnableRuntimeApi) {
        a->ActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020, 0);
        a->ActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_ptsz_v7000, 0);
        a->ActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020, 0);
    }
    if (a->ActivityEnableDriverApi) {
        a->ActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuStreamQuery, 0);
        a->ActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuStreamQuery_ptsz, 0);
        a->ActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuEventQuery, 0);
    }
    /* Never export shifted records silently: converted and said, or refused. */
    char msg[160];
    if (zb_cupti_start_clock(why_other, msg, sizeof msg) == ZB_CLOCK_REFUSE) {
        zb_cupti_disable_all();
        atomic_store(&zb_cupti_map_ready, false);
        zb_cupti_map_free(&zb_cupti_g.map);
        zb_cupti_g.clock_note[0] = '\0';
        return zb_cupti_unavailable(msg);
    }
    atomic_store(&zb_cupti_running, true);
    return ZB_OK;
}

bool zb_cupti_active(void) { return atomic_load(&zb_cupti_running); }

zb_status zb_cupti_register_stream(const void *cuda_stream, int zb_stream, bool is_comm) {
    if (!zb_cupti_active()) return ZB_ERR_UNSUPPORTED;
    uint32_t id = 0;
    CUptiResult r = zb_cupti_g.api.GetStreamIdEx(NULL, (CUstream)(uintptr_t)cuda_stream, 0, &id);
    if (r != CUPTI_SUCCESS) {
        return ZB_FAIL(ZB_ERR_INVALID, "cuptiGetStreamIdEx for zerobench stream %d: %s", zb_stream,
                       zb_cupti_err(r));
    }
    return zb_cupti_map_set_stream(&zb_cupti_g.map, id, zb_stream, is_comm);
}

void zb_cupti_op_begin_info(const zb_op_info *info, int stream_id) {
    if (!info || !zb_cupti_active()) return;
    uint64_t id = atomic_fetch_add(&zb_cupti_next_id, 1);
    if (zb_cupti_map_push_op(&zb_cupti_g.map, id, info, stream_id) != ZB_OK) {
        zb_cupti_map_add_buffer_error(&zb_cupti_g.map); /* its records stay uncorrelated */
        return;
    }
    if (zb_cupti_g.api.ActivityPushExternalCorrelationId(ZB_CUPTI_EXT_KIND, id) == CUPTI_SUCCESS) {
        zb_cupti_depth++;
    }
}

void zb_cupti_op_begin(const char *label, int unit, zb_op_kind kind, double flops, int stream_id) {
    zb_op_info info;
    memset(&info, 0, sizeof info);
    info.label = label;
    info.unit = unit;
    info.kind = kind;
    info.flops = flops;
    zb_cupti_op_begin_info(&info, stream_id);
}

void zb_cupti_op_end(void) {
    if (zb_cupti_depth <= 0) return;
    uint64_t last = 0;
    zb_cupti_depth--;
    if (zb_cupti_active()) {
        (void)zb_cupti_g.api.ActivityPopExternalCorrelationId(ZB_CUPTI_EXT_KIND, &last);
    }
}

static zb_status zb_cupti_deliver(uint32_t flag) {
    zb_status s = zb_cupti_clock_pair();
    CUptiResult r = zb_cupti_g.api.ActivityFlushAll(flag);
    size_t dropped = 0;
    if (zb_cupti_g.api.ActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped) {
        zb_cupti_map_add_dropped(&zb_cupti_g.map, dropped);
    }
    zb_status m = zb_cupti_map_flush(&zb_cupti_g.map, zb_cupti_g.trace);
    if (r != CUPTI_SUCCESS) return ZB_FAIL(ZB_ERR_INTERNAL, "cuptiActivityFlushAll: %s", zb_cupti_err(r));
    return s != ZB_OK ? s : m;
}

zb_status zb_cupti_flush(void) {
    if (!zb_cupti_active()) return ZB_FAIL(ZB_ERR_UNSUPPORTED, "CUPTI tracer is not running");
    /* Forced: a plain flush keeps back buffers holding incomplete records,
     * which would then land in the next window and be clipped there. The
     * caller flushes after both streams are synchronized, so every record
     * of the window is complete. */
    return zb_cupti_deliver(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

zb_status zb_cupti_stop(void) {
    if (!zb_cupti_active()) return ZB_OK;
    zb_status s = zb_cupti_deliver(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    atomic_store(&zb_cupti_running, false);
    zb_cupti_disable_all();
    if (zb_cupti_g.api.Finalize) (void)zb_cupti_g.api.Finalize();
    zb_cupti_map_get_stats(&zb_cupti_g.map, &zb_cupti_g.final_stats);
    zb_cupti_g.have_final_stats = true;
    atomic_store(&zb_cupti_map_ready, false);
    zb_cupti_map_free(&zb_cupti_g.map);
    zb_cupti_g.trace = NULL;
    return s;
}

zb_status zb_cupti_get_stats(zb_cupti_stats *out) {
    if (atomic_load(&zb_cupti_map_ready)) {
        zb_cupti_map_get_stats(&zb_cupti_g.map, out);
        return ZB_OK;
    }
    if (zb_cupti_g.have_final_stats) {
        *out = zb_cupti_g.final_stats;
        return ZB_OK;
    }
    return ZB_FAIL(ZB_ERR_UNSUPPORTED, "the CUPTI tracer never ran");
}
