/* The sim device's memory, streams, events, copies and GEMM (device_sim.h).
 * Memory is an address range with per-tag accounting; every op is costed
 * (sim_cost.h) and issued in virtual time (sim_time.c). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sim_cost.h"
#include "sim_internal.h"

#define SIM_ALIGN 256

static sim_device *sim_dev(zb_device *d) { return (sim_device *)d; }

static bool in_region(const sim_device *d, const void *p) {
    return (const char *)p >= d->region && (const char *)p < d->region + d->region_bytes;
}

/* Live memory into the trace's counter, at the host's virtual time (the
 * records' clock): the accounting's own sampling would read the wall clock. */
static void sample_memory(sim_device *d) {
    zb_trace *t = d->base.cfg.trace;
    if (!t || !t->enabled) return;
    zb_mem_stats s;
    zb_mem_account_stats(&d->acct, &s);
    zb_trace_mem_sample_at(t, d->host_ns, s.live_bytes, ZB_MEM_TAG_COUNT);
}

/* ---- memory ---------------------------------------------------------------- */

static zb_status sim_alloc(zb_device *zd, size_t n_bytes, zb_mem_tag tag, void **out) {
    sim_device *d = sim_dev(zd);
    *out = NULL;
    if ((int)tag < 0 || tag >= ZB_MEM_TAG_COUNT) {
        return ZB_FAIL(ZB_ERR_INVALID, "sim: allocation with an unknown memory tag %d", (int)tag);
    }
    if (zb_mem_tag_is_host(tag)) {
        return ZB_FAIL(ZB_ERR_INVALID, "sim: tag %s is host memory; the sim device has none", zb_mem_tag_name(tag));
    }
    size_t room = d->region_bytes - d->next; /* a multiple of SIM_ALIGN */
    if (n_bytes >= room) {
        return ZB_FAIL(ZB_ERR_NOMEM, "sim: %zu bytes do not fit the sim's address range (%zu bytes left of %zu)",
                       n_bytes, room, d->region_bytes);
    }
    void *p = d->region + d->next;
    ZB_TRY(zb_mem_account_add(&d->acct, p, n_bytes, tag));
    sample_memory(d);
    size_t span = n_bytes ? n_bytes : 1;
    d->next += (span + SIM_ALIGN - 1) / SIM_ALIGN * SIM_ALIGN;
    *out = p;
    return ZB_OK;
}

static void sim_free(zb_device *zd, void *p) {
    sim_device *d = sim_dev(zd);
    if (!p) return;
    if (zb_mem_account_remove(&d->acct, p, NULL, NULL) != ZB_OK) return;
    sample_memory(d);
    /* Nothing live: the range starts over (engines come and go in one run). */
    if (zb_mem_account_count(&d->acct) == 0) d->next = 0;
}

/* The sim reserves exactly what is live: no pool, no fragmentation. */
static void sim_mem_stats(zb_device *zd, zb_mem_stats *out) {
    zb_mem_account_stats(&sim_dev(zd)->acct, out);
    out->reserved_bytes = out->live_total_bytes;
    out->peak_reserved_bytes = out->peak_total_bytes;
}
static void sim_mem_reset_peak(zb_device *zd) { zb_mem_account_reset_peak(&sim_dev(zd)->acct); }
static bool sim_mem_is_host(const zb_device *zd) {
    (void)zd;
    return false;
}

/* ---- streams and events ------------------------------------------------------ */

static zb_status sim_stream_create(zb_device *zd, const char *name, zb_stream **out) {
    sim_device *d = sim_dev(zd);
    sim_stream *s = (sim_stream *)calloc(1, sizeof *s);
    if (!s) return ZB_FAIL(ZB_ERR_NOMEM, "sim: out of memory creating stream '%s'", name ? name : "stream");
    s->base.dev = zd;
    s->base.id = d->n_streams++;
    strncpy(s->base.name, name ? name : "stream", sizeof s->base.name - 1);
    s->clock_ns = d->host_ns;
    zb_trace_name_stream(zd->cfg.trace, s->base.id, s->base.name);
    *out = &s->base;
    return ZB_OK;
}

static void sim_stream_destroy(zb_stream *s) {
    zb_sim_forget(sim_dev(s->dev), (const sim_stream *)s, NULL);
    free(s);
}

/* The host waits until the stream's work is done: its clock catches up. */
static zb_status sim_stream_sync(zb_stream *zs) {
    sim_stream *s = (sim_stream *)zs;
    sim_device *d = sim_dev(zs->dev);
    if (s->clock_ns > d->host_ns) d->host_ns = s->clock_ns;
    return ZB_OK;
}

static zb_status sim_event_create(zb_device *zd, zb_event **out) {
    sim_event *e = (sim_event *)calloc(1, sizeof *e);
    if (!e) return ZB_FAIL(ZB_ERR_NOMEM, "sim: out of memory creating an event");
    e->base.dev = zd;
    *out = &e->base;
    return ZB_OK;
}

static void sim_event_destroy(zb_event *e) {
    zb_sim_forget(sim_dev(e->dev), NULL, (const sim_event *)e);
    free(e);
}

/* The stamp moves if a collective before it on the stream is stretched
 * later (comm_interference): the event is on the device's open list. */
static zb_status sim_event_record(zb_event *ze, zb_stream *zs) {
    sim_event *e = (sim_event *)ze;
    e->recorded = true;
    e->stamp_ns = zb_sim_ready_ns((sim_stream *)zs);
    return zb_sim_open_event(sim_dev(zs->dev), (sim_stream *)zs, e);
}

/* Later work on s starts no earlier than the event's latest record. */
static zb_status sim_stream_wait_event(zb_stream *zs, zb_event *ze) {
    sim_stream *s = (sim_stream *)zs;
    sim_event *e = (sim_event *)ze;
    if (e->recorded && e->stamp_ns > s->clock_ns) s->clock_ns = e->stamp_ns;
    return ZB_OK;
}

static zb_status sim_event_sync(zb_event *ze) {
    sim_event *e = (sim_event *)ze;
    sim_device *d = sim_dev(ze->dev);
    if (e->recorded && e->stamp_ns > d->host_ns) d->host_ns = e->stamp_ns;
    return ZB_OK;
}

/* Nothing runs behind the host: recorded work is complete in host time. */
static zb_status sim_event_query(zb_event *ze) {
    (void)ze;
    return ZB_OK;
}

static zb_status sim_event_elapsed_ms(zb_event *zs, zb_event *ze, double *ms) {
    sim_event *a = (sim_event *)zs, *b = (sim_event *)ze;
    if (!a->recorded || !b->recorded) {
        return ZB_FAIL(ZB_ERR_NOT_READY, "sim: elapsed time between events that were not both recorded");
    }
    *ms = (double)(b->stamp_ns - a->stamp_ns) / 1e6;
    return ZB_OK;
}

static int64_t sim_now_ns(zb_device *zd) { return sim_dev(zd)->host_ns; }

/* ---- copies and GEMM ---------------------------------------------------------- */

/* A copy reads and writes its bytes at memory bandwidth; only host memory
 * holds data: host to host is copied, device to host leaves NaN bytes. */
static zb_status sim_memcpy_async(zb_stream *zs, void *dst, const void *src, size_t n_bytes,
                                  const zb_op_info *info) {
    sim_device *d = sim_dev(zs->dev);
    zb_op_info op = {ZB_OP_COPY, "memcpy", -1, 0, 0};
    if (info) op = *info;
    op.kind = ZB_OP_COPY;
    op.bytes = n_bytes;
    if (!op.label) op.label = "memcpy";
    if (n_bytes && dst && src) {
        bool dst_dev = in_region(d, dst), src_dev = in_region(d, src);
        if (!dst_dev && !src_dev) memmove(dst, src, n_bytes);
        else if (!dst_dev) memset(dst, 0xff, n_bytes);
    }
    return zb_sim_issue(zs, &op, zb_sim_mem_s(&d->hw, 2.0 * (double)n_bytes));
}

/* The same shape checks as a real device, at issue; then the cost. */
static zb_status sim_gemm(zb_stream *zs, const zb_gemm_desc *g, const zb_op_info *info) {
    sim_device *d = sim_dev(zs->dev);
    if (g->dtype != ZB_DTYPE_F32 && g->dtype != ZB_DTYPE_BF16) {
        return ZB_FAIL(ZB_ERR_INVALID, "GEMM dtype %d (%s) is neither float nor bf16", (int)g->dtype,
                       zb_dtype_name(g->dtype));
    }
    if (g->m <= 0 || g->n <= 0 || g->k <= 0 || g->m > INT_MAX || g->n > INT_MAX || g->k > INT_MAX) {
        return ZB_FAIL(ZB_ERR_INVALID, "GEMM shape %lldx%lldx%lld: each dimension must be 1 to %d",
                       (long long)g->m, (long long)g->n, (long long)g->k, INT_MAX);
    }
    int64_t a_cols = g->trans_a ? g->m : g->k, b_cols = g->trans_b ? g->k : g->n;
    if (g->lda < a_cols || g->ldb < b_cols || g->ldc < g->n) {
        return ZB_FAIL(ZB_ERR_INVALID, "GEMM %lldx%lldx%lld: a row stride is shorter than its row "
                       "(need lda >= %lld, ldb >= %lld, ldc >= %lld)", (long long)g->m, (long long)g->n,
                       (long long)g->k, (long long)a_cols, (long long)b_cols, (long long)g->n);
    }
    zb_op_info op = {ZB_OP_COMPUTE, "gemm", -1, 0, 2.0 * (double)g->m * (double)g->n * (double)g->k};
    if (info) op = *info;
    if (!op.label) op.label = "gemm";
    return zb_sim_issue(zs, &op, zb_sim_gemm_s(&d->hw, g->m, g->n, g->k, g->dtype));
}

static const zb_kernels *sim_kernels(void) { return zb_kernels_sim(); }

/* ---- the device ------------------------------------------------------------------ */

static void sim_destroy(zb_device *zd) {
    sim_device *d = sim_dev(zd);
    if (d->region) munmap(d->region, d->region_bytes);
    zb_mem_account_destroy(&d->acct);
    free(d->open);
    free(d->compute);
    free(d);
}

static const zb_device_ops sim_ops = {
    .name = "sim",
    .destroy = sim_destroy,
    .alloc = sim_alloc,
    .free = sim_free,
    .mem_stats = sim_mem_stats,
    .mem_reset_peak = sim_mem_reset_peak,
    .stream_create = sim_stream_create,
    .stream_destroy = sim_stream_destroy,
    .stream_sync = sim_stream_sync,
    .event_create = sim_event_create,
    .event_destroy = sim_event_destroy,
    .event_record = sim_event_record,
    .stream_wait_event = sim_stream_wait_event,
    .event_sync = sim_event_sync,
    .event_query = sim_event_query,
    .event_elapsed_ms = sim_event_elapsed_ms,
    .memcpy_async = sim_memcpy_async,
    .gemm = sim_gemm,
    .mem_is_host = sim_mem_is_host,
    .kernels = sim_kernels,
    .now_ns = sim_now_ns,
    .no_data = true,
};

bool zb_sim_is_device(const zb_device *dev) { return dev && dev->ops == &sim_ops; }
const zb_hw_profile *zb_sim_hw(const zb_device *dev) { return &((const sim_device *)dev)->hw; }

/* The largest range the kernel lets us reserve, from 16 TiB down: enough
 * for the model states of any profile's stage 0 on one rank. */
static zb_status reserve(sim_device *d) {
    for (int shift = 44; shift >= 32; shift--) {
        size_t bytes = (size_t)1 << shift;
        void *p = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED) {
            d->region = (char *)p;
            d->region_bytes = bytes;
            return ZB_OK;
        }
    }
    return ZB_FAIL(ZB_ERR_NOMEM, "sim: could not reserve an address range for the simulated memory");
}

zb_status zb_device_sim_create(const zb_device_config *cfg, zb_device **out) {
    *out = NULL;
    /* Without a profile (tests create devices bare): the backend's default. */
    zb_hw_profile fallback;
    const zb_hw_profile *hw = cfg->hw;
    if (!hw) {
        ZB_TRY(zb_hw_profile_load(ZB_SIM_DEFAULT_HW, &fallback));
        hw = &fallback;
    }
    ZB_TRY(zb_hw_sim_require(hw, ZB_SIM_DEVICE_NEEDS));
    sim_device *d = (sim_device *)calloc(1, sizeof *d);
    if (!d) return ZB_FAIL(ZB_ERR_NOMEM, "sim: out of memory creating the device");
    d->base.ops = &sim_ops;
    d->base.cfg = *cfg;
    d->base.cfg.hw = &d->hw;
    d->hw = *hw;
    zb_status st = zb_mem_account_init(&d->acct);
    if (st != ZB_OK) {
        free(d);
        return st;
    }
    if (cfg->trace) cfg->trace->virtual_time = true;
    zb_mem_trace_names(cfg->trace); /* the live-memory counter's series */
    st = reserve(d);
    if (st != ZB_OK) {
        sim_destroy(&d->base);
        return st;
    }
    *out = &d->base;
    return ZB_OK;
}
