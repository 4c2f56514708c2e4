/* The CUDA device's memory: a dedicated CUDA memory pool, per-tag accounting
 * and the device-level view (cudaMemGetInfo, the pool's high-water marks).
 *
 * Every allocation and free goes through one "allocation stream":
 *   alloc: cudaMallocFromPoolAsync + cudaMemsetAsync(0) on it, then a polled
 *          wait for it, so the buffer is ready for every stream when alloc
 *          returns (and zeroed, like the CPU pool's fresh blocks);
 *   free:  the allocation stream first waits (on the GPU, not the host) for
 *          all work issued so far on every live stream, then cudaFreeAsync;
 *          so a buffer is never handed out again while earlier work still
 *          uses it, even when the caller frees without synchronizing.
 * The pool's release threshold is UINT64_MAX: freed memory stays reserved
 * and later allocations reuse it without going back to the driver. The pool
 * is the harness's own (not the device's default pool), so its used and
 * reserved high-water marks count harness memory only; library memory
 * (context, NCCL, cuBLASLt, CUPTI) is what cudaMemGetInfo sees beyond it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_check.h"
#include "device_cuda_internal.h"

static uint64_t pool_attr(cuda_device *d, enum cudaMemPoolAttr attr) {
    uint64_t v = 0;
    if (cudaMemPoolGetAttribute(d->pool, attr, &v) != cudaSuccess) {
        (void)cudaGetLastError();
        v = 0;
    }
    return v;
}

/* Samples total - free into the high-water mark (caller holds d->lock). */
static zb_status sample_used(cuda_device *d, size_t *free_bytes, size_t *total_bytes) {
    size_t f = 0, t = 0;
    ZB_CUDA_TRY(d->base.cfg.rank, cudaMemGetInfo(&f, &t));
    if (t - f > d->used_high_bytes) d->used_high_bytes = t - f;
    if (free_bytes) *free_bytes = f;
    if (total_bytes) *total_bytes = t;
    return ZB_OK;
}

zb_status zb_cuda_mem_init(cuda_device *d) {
    int rank = d->base.cfg.rank;
    ZB_TRY(zb_mem_account_init(&d->acct));
    d->acct.trace = d->base.cfg.trace; /* the trace's live-memory counter */
    zb_mem_trace_names(d->base.cfg.trace);
    d->acct_ready = true;
    struct cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = d->ordinal;
    ZB_CUDA_TRY(rank, cudaMemPoolCreate(&d->pool, &props));
    d->pool_created = true;
    uint64_t keep_all = UINT64_MAX;
    ZB_CUDA_TRY(rank, cudaMemPoolSetAttribute(d->pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
    ZB_CUDA_TRY(rank, cudaStreamCreateWithFlags(&d->alloc_stream, cudaStreamNonBlocking));
    ZB_CUDA_TRY(rank, cudaEventCreateWithFlags(&d->alloc_ev, cudaEventDisableTiming));
    size_t f = 0, t = 0;
    pthread_mutex_lock(&d->lock);
    zb_status st = sample_used(d, &f, &t);
    pthread_mutex_unlock(&d->lock);
    ZB_TRY(st);
    d->total_bytes = t;
    d->used_at_create_bytes = t - f;
    return ZB_OK;
}

static void warn_leak(void *arg, const zb_mem_entry *e) {
    int *n = (int *)arg;
    if ((*n)++ < 4) {
        fprintf(stderr, "zerobench: warning: cuda device destroyed with %zu bytes (%s) still "
                "allocated at %p\n", e->n_bytes, zb_mem_tag_name(e->tag), e->ptr);
    }
}

void zb_cuda_mem_destroy(cuda_device *d) {
    int rank = d->base.cfg.rank;
    if (d->alloc_stream) {
        /* Let pending frees complete before the pool goes. */
        if (d->alloc_ev && cudaEventRecord(d->alloc_ev, d->alloc_stream) == cudaSuccess) {
            if (zb_cuda_wait_event(d, d->alloc_ev, "the allocation stream's frees") != ZB_OK) {
                fprintf(stderr, "zerobench: warning: %s\n", zb_error_message());
            }
        }
        if (d->alloc_ev) cudaEventDestroy(d->alloc_ev);
        cudaStreamDestroy(d->alloc_stream);
        (void)cudaGetLastError();
        d->alloc_stream = NULL;
    }
    if (d->n_free_failures) {
        fprintf(stderr, "zerobench: warning: rank %d: %d device frees failed; the first: %s\n", rank,
                d->n_free_failures, d->first_free_failure);
    }
    if (d->acct_ready) {
        int n = 0;
        zb_mem_account_each(&d->acct, warn_leak, &n);
        zb_mem_account_destroy(&d->acct);
        d->acct_ready = false;
    }
    if (d->pool_created) {
        /* With allocations still live CUDA releases the pool once they are freed. */
        cudaMemPoolDestroy(d->pool);
        (void)cudaGetLastError();
        d->pool_created = false;
    }
}

zb_status zb_cuda_alloc(zb_device *zd, size_t n_bytes, zb_mem_tag tag, void **out) {
    cuda_device *d = cuda_dev(zd);
    int rank = zd->cfg.rank;
    *out = NULL;
    if ((int)tag < 0 || tag >= ZB_MEM_TAG_COUNT) {
        return ZB_FAIL(ZB_ERR_INVALID, "memory tag %d out of range", (int)tag);
    }
    if (zb_mem_tag_is_host(tag)) { /* device memory under a host tag would leave the totals */
        return ZB_FAIL(ZB_ERR_INVALID, "rank %d: tag %s is host memory: allocate it with alloc_host", rank,
                       zb_mem_tag_name(tag));
    }
    ZB_CUDA_TRY(rank, cudaSetDevice(d->ordinal));
    void *p = NULL;
    size_t bytes = n_bytes ? n_bytes : 1;
    cudaError_t e = cudaMallocFromPoolAsync(&p, bytes, d->pool, d->alloc_stream);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return ZB_FAIL(zb_cuda_status_of(e), "rank %d: allocating %zu bytes (%s) on GPU %d: "
                       "cudaMallocFromPoolAsync failed: %s (%s)", rank, n_bytes,
                       zb_mem_tag_name(tag), d->ordinal, cudaGetErrorString(e), cudaGetErrorName(e));
    }
    zb_status st = ZB_CUDA_CHECK(rank, cudaMemsetAsync(p, 0, bytes, d->alloc_stream));
    if (st == ZB_OK) st = ZB_CUDA_CHECK(rank, cudaEventRecord(d->alloc_ev, d->alloc_stream));
    if (st == ZB_OK) st = zb_cuda_wait_event(d, d->alloc_ev, "a device allocation");
    if (st == ZB_OK) st = zb_mem_account_add(&d->acct, p, n_bytes, tag);
    if (st != ZB_OK) {
        cudaFreeAsync(p, d->alloc_stream);
        (void)cudaGetLastError();
        return st;
    }
    pthread_mutex_lock(&d->lock);
    zb_status sampled = sample_used(d, NULL, NULL);
    pthread_mutex_unlock(&d->lock);
    (void)sampled; /* a failed sample only loses a high-water point */
    *out = p;
    return ZB_OK;
}

static void note_free_failure(cuda_device *d) {
    if (d->n_free_failures++ == 0) {
        snprintf(d->first_free_failure, sizeof d->first_free_failure, "%s", zb_error_message());
    }
}

void zb_cuda_free(zb_device *zd, void *ptr) {
    if (!ptr) return;
    cuda_device *d = cuda_dev(zd);
    int rank = zd->cfg.rank;
    if (zb_mem_account_remove(&d->acct, ptr, NULL, NULL) != ZB_OK) {
        /* A double free or a foreign pointer is a bug in the caller (as on cpu). */
        fprintf(stderr, "zerobench: internal error: rank %d: %s\n", rank, zb_error_message());
        abort();
    }
    pthread_mutex_lock(&d->lock);
    zb_status st = ZB_CUDA_CHECK(rank, cudaSetDevice(d->ordinal));
    for (cuda_stream *s = d->streams; s && st == ZB_OK; s = s->next) {
        st = ZB_CUDA_CHECK(rank, cudaEventRecord(s->fence_ev, s->stream));
        if (st == ZB_OK) st = ZB_CUDA_CHECK(rank, cudaStreamWaitEvent(d->alloc_stream, s->fence_ev, 0));
    }
    /* Even when a fence failed (a broken context), hand the block back. */
    zb_status freed = ZB_CUDA_CHECK(rank, cudaFreeAsync(ptr, d->alloc_stream));
    if (st != ZB_OK || freed != ZB_OK) note_free_failure(d);
    pthread_mutex_unlock(&d->lock);
}

void zb_cuda_mem_stats(zb_device *zd, zb_mem_stats *out) {
    cuda_device *d = cuda_dev(zd);
    zb_mem_account_stats(&d->acct, out);
    out->reserved_bytes = (size_t)pool_attr(d, cudaMemPoolAttrReservedMemCurrent);
    out->peak_reserved_bytes = (size_t)pool_attr(d, cudaMemPoolAttrReservedMemHigh);
}

void zb_cuda_mem_reset_peak(zb_device *zd) {
    cuda_device *d = cuda_dev(zd);
    zb_mem_account_reset_peak(&d->acct);
    uint64_t zero = 0; /* CUDA resets a high-water mark to the current value */
    if (cudaMemPoolSetAttribute(d->pool, cudaMemPoolAttrReservedMemHigh, &zero) != cudaSuccess ||
        cudaMemPoolSetAttribute(d->pool, cudaMemPoolAttrUsedMemHigh, &zero) != cudaSuccess) {
        (void)cudaGetLastError();
    }
    pthread_mutex_lock(&d->lock);
    size_t f = 0, t = 0;
    if (cudaMemGetInfo(&f, &t) == cudaSuccess) {
        d->used_high_bytes = t - f;
    } else {
        (void)cudaGetLastError();
    }
    pthread_mutex_unlock(&d->lock);
}

zb_status zb_device_cuda_meminfo(zb_device *zd, zb_cuda_meminfo *out) {
    memset(out, 0, sizeof *out);
    if (!zb_device_is_cuda(zd)) {
        return ZB_FAIL(ZB_ERR_INVALID, "CUDA memory asked of device '%s', which is not a CUDA device",
                       zd ? zd->ops->name : "(none)");
    }
    cuda_device *d = cuda_dev(zd);
    ZB_CUDA_TRY(zd->cfg.rank, cudaSetDevice(d->ordinal));
    size_t f = 0, t = 0;
    pthread_mutex_lock(&d->lock);
    zb_status st = sample_used(d, &f, &t);
    out->used_high_bytes = d->used_high_bytes;
    pthread_mutex_unlock(&d->lock);
    ZB_TRY(st);
    out->free_bytes = f;
    out->total_bytes = t;
    out->used_at_create_bytes = d->used_at_create_bytes;
    out->pool_reserved_bytes = (size_t)pool_attr(d, cudaMemPoolAttrReservedMemCurrent);
    out->pool_used_bytes = (size_t)pool_attr(d, cudaMemPoolAttrUsedMemCurrent);
    out->pool_reserved_high_bytes = (size_t)pool_attr(d, cudaMemPoolAttrReservedMemHigh);
    out->pool_used_high_bytes = (size_t)pool_attr(d, cudaMemPoolAttrUsedMemHigh);
    size_t used = t - f;
    out->other_bytes = used > out->pool_reserved_bytes ? used - out->pool_reserved_bytes : 0;
    /* cudaMemGetInfo is device-wide: the UUID lets the caller find the
     * other ranks on this GPU (docs/design.md §9). */
    struct cudaDeviceProp prop;
    ZB_CUDA_TRY(zd->cfg.rank, cudaGetDeviceProperties(&prop, d->ordinal));
    const unsigned char *u = (const unsigned char *)prop.uuid.bytes;
    snprintf(out->uuid, sizeof out->uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    return ZB_OK;
}
