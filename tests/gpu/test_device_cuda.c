/* What only the CUDA device promises (label gpu; exit 77 = skipped when no
 * GPU is usable), next to the device contract that
 * tests/conformance/test_device_conformance.c checks on every device (FIFO,
 * events, sticky errors, the timeout, per-tag accounting, copies, GEMM):
 * fresh memory is zeroed, bad copies (NULL, overlapping) are refused; a
 * GEMM chain that accumulates read by another stream after an event sees
 * every sum; frees are fenced after in-flight work (a buffer freed while a
 * GEMM still reads it, then handed out again and zeroed, must not change
 * the result); host ops leave trace records on the harness clock (CUPTI
 * does not see them), their cleanups all run; a kernel's error word
 * surfaces at stream_sync; the pool / cudaMemGetInfo view and reuse of
 * freed pool memory; the op hooks. GEMM numerics: test_gemm_cuda.c. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"
#include "backend_select.h"
#include "device.h"
#include "zb_test.h"

#define SKIP 77

static zb_device *dev;

static void test_copies(void) {
    zb_stream *s = NULL;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "copies", &s));
    const size_t n = (1u << 20) + 3;
    float *h_in = (float *)malloc(n * sizeof *h_in), *h_out = (float *)malloc(n * sizeof *h_out);
    for (size_t i = 0; i < n; i++) h_in[i] = (float)i * 0.5f - 7.0f;
    void *d1 = NULL, *d2 = NULL;
    ZB_CHECK_OK(zb_dev_alloc(dev, n * sizeof(float), ZB_MEM_ACTIVATION, &d1));
    ZB_CHECK_OK(zb_dev_alloc(dev, n * sizeof(float), ZB_MEM_ACTIVATION, &d2));
    memset(h_out, 0xff, n * sizeof *h_out);
    ZB_CHECK_OK(dev->ops->memcpy_async(s, h_out, d2, n * sizeof(float), NULL));
    ZB_CHECK_OK(dev->ops->stream_sync(s));
    size_t nonzero = 0;
    for (size_t i = 0; i < n; i++) nonzero += h_out[i] != 0.0f;
    ZB_CHECK_MSG(nonzero == 0, "%zu elements of a fresh allocation are not zero", nonzero);
    ZB_CHECK_OK(dev->ops->memcpy_async(s, d1, h_in, n * sizeof(float), NULL));
    ZB_CHECK_OK(dev->ops->memcpy_async(s, d2, d1, n * sizeof(float), NULL));
    ZB_CHECK_OK(dev->ops->memcpy_async(s, h_out, d2, n * sizeof(float), NULL));
    ZB_CHECK_OK(dev->ops->stream_sync(s));
    ZB_CHECK(memcmp(h_in, h_out, n * sizeof(float)) == 0);
    /* Bad copies are refused with a message, not run. */
    ZB_CHECK(dev->ops->memcpy_async(s, (char *)d1 + 4, d1, 64, NULL) == ZB_ERR_UNSUPPORTED);
    ZB_CHECK(dev->ops->memcpy_async(s, NULL, d1, 64, NULL) == ZB_ERR_INVALID);
    ZB_CHECK_OK(dev->ops->memcpy_async(s, d1, d1, 64, NULL)); /* same range: nothing to do */
    zb_dev_free(dev, d1);
    zb_dev_free(dev, d2);
    free(h_in);
    free(h_out);
    dev->ops->stream_destroy(s);
}

/* C += A B, `reps` times on s (n x n fp32): long enough to outlast issuing. */
static void gemm_chain(zb_stream *s, const void *A, const void *B, void *C, int n, int reps) {
    zb_gemm_desc g = {false, false, n, n, n, 1.0f, 1.0f, A, n, B, n, C, n, ZB_DTYPE_F32};
    for (int r = 0; r < reps; r++) ZB_CHECK_OK(dev->ops->gemm(s, &g, NULL));
}

static float *host_ramp(size_t n, float scale) {
    float *h = (float *)malloc(n * sizeof *h);
    for (size_t i = 0; i < n; i++) h[i] = scale * (float)((int)(i % 17) - 8) / 8.0f;
    return h;
}

static void test_cross_stream_events(void) {
    const int n = 2048, reps = 8;
    const size_t bytes = (size_t)n * n * sizeof(float);
    zb_stream *s1 = NULL, *s2 = NULL;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "producer", &s1));
    ZB_CHECK_OK(dev->ops->stream_create(dev, "consumer", &s2));
    zb_event *start = NULL, *done = NULL, *never = NULL;
    ZB_CHECK_OK(dev->ops->event_create(dev, &start));
    ZB_CHECK_OK(dev->ops->event_create(dev, &done));
    ZB_CHECK_OK(dev->ops->event_create(dev, &never));
    double ms = -1;

    void *A = NULL, *B = NULL, *C = NULL, *D = NULL;
    ZB_CHECK_OK(zb_dev_alloc(dev, bytes, ZB_MEM_BENCH_BUFFER, &A));
    ZB_CHECK_OK(zb_dev_alloc(dev, bytes, ZB_MEM_BENCH_BUFFER, &B));
    ZB_CHECK_OK(zb_dev_alloc(dev, bytes, ZB_MEM_BENCH_BUFFER, &C));
    ZB_CHECK_OK(zb_dev_alloc(dev, bytes, ZB_MEM_BENCH_BUFFER, &D));
    float *ha = host_ramp((size_t)n * n, 1.0f), *hc = (float *)malloc(bytes);
    float *hd = (float *)malloc(bytes);
    ZB_CHECK_OK(dev->ops->memcpy_async(s1, A, ha, bytes, NULL));
    ZB_CHECK_OK(dev->ops->memcpy_async(s1, B, ha, bytes, NULL));
    ZB_CHECK_OK(dev->ops->event_record(start, s1));
    gemm_chain(s1, A, B, C, n, reps);
    ZB_CHECK_OK(dev->ops->event_record(done, s1));
    zb_status q = dev->ops->event_query(done);
    ZB_CHECK(q == ZB_OK || q == ZB_ERR_NOT_READY);
    ZB_CHECK_OK(dev->ops->stream_wait_event(s2, done));
    ZB_CHECK_OK(dev->ops->memcpy_async(s2, D, C, bytes, NULL)); /* must see all reps */
    ZB_CHECK_OK(dev->ops->stream_sync(s2));
    ZB_CHECK_OK(dev->ops->event_sync(done));
    ZB_CHECK_OK(dev->ops->event_query(done));
    ZB_CHECK_OK(dev->ops->event_elapsed_ms(start, done, &ms));
    ZB_CHECK_MSG(ms > 0.0, "elapsed %g ms over %d GEMMs", ms, reps);
    ZB_CHECK_OK(dev->ops->memcpy_async(s1, hc, C, bytes, NULL));
    ZB_CHECK_OK(dev->ops->memcpy_async(s2, hd, D, bytes, NULL));
    ZB_CHECK_OK(dev->ops->stream_sync(s1));
    ZB_CHECK_OK(dev->ops->stream_sync(s2));
    ZB_CHECK(memcmp(hc, hd, bytes) == 0);
    /* And C is reps x (A B): element (0,0) = reps * sum_p A[0,p] B[p,0]. */
    double c00 = 0;
    for (int p = 0; p < n; p++) c00 += (double)ha[p] * (double)ha[(size_t)p * n];
    ZB_CHECK_MSG(fabs(hd[0] - reps * c00) <= 1e-4 * fabs(reps * c00) + 1e-3,
                 "C[0,0] = %g, expected %g", hd[0], reps * c00);

    /* A buffer freed while the GEMMs still read it, then handed out again
     * (and zeroed) at once: the free is fenced after the work in flight. */
    ZB_CHECK_OK(dev->ops->memcpy_async(s1, C, hd, bytes, NULL)); /* C = reps*AB again */
    ZB_CHECK_OK(dev->ops->stream_sync(s1));
    gemm_chain(s1, A, B, C, n, reps); /* C = 2*reps*AB */
    zb_dev_free(dev, A);
    void *A2 = NULL;
    ZB_CHECK_OK(zb_dev_alloc(dev, bytes, ZB_MEM_BENCH_BUFFER, &A2));
    ZB_CHECK_OK(dev->ops->memcpy_async(s1, hc, C, bytes, NULL));
    ZB_CHECK_OK(dev->ops->stream_sync(s1));
    /* Had A been zeroed under the GEMMs, C would hold fewer than 2*reps sums. */
    double worst = 0, scale = 0;
    for (size_t i = 0; i < (size_t)n * n; i++) {
        worst = fmax(worst, fabs((double)hc[i] - 2.0 * hd[i]));
        scale = fmax(scale, fabs(2.0 * hd[i]));
    }
    ZB_CHECK_MSG(scale > 0 && worst <= 1e-5 * scale, "after a fenced free C differs from 2x the "
                 "first chain's by %g (of %g)", worst, scale);
    zb_dev_free(dev, A2);
    zb_dev_free(dev, B);
    zb_dev_free(dev, C);
    zb_dev_free(dev, D);
    free(ha);
    free(hc);
    free(hd);
    dev->ops->event_destroy(start);
    dev->ops->event_destroy(done);
    dev->ops->event_destroy(never);
    dev->ops->stream_destroy(s1);
    dev->ops->stream_destroy(s2);
}

/* ---- host ops ---------------------------------------------------------------- */

typedef struct host_log {
    atomic_int next;
    int order[256];
    atomic_int cleanups;
} host_log;

typedef struct host_arg {
    host_log *log;
    int id;
} host_arg;

static zb_status host_op(void *p) {
    host_arg *a = (host_arg *)p;
    int slot = atomic_fetch_add(&a->log->next, 1);
    if (slot < 256) a->log->order[slot] = a->id;
    return ZB_OK;
}

static void host_cleanup(void *p) { atomic_fetch_add(&((host_arg *)p)->log->cleanups, 1); }

static void test_host_ops(void) {
    zb_trace trace;
    ZB_CHECK_OK(zb_trace_init(&trace, 0, true));
    zb_device_config cfg = {0, 0, 1, 60.0, &trace};
    zb_device *d = NULL;
    ZB_CHECK_OK(zb_device_create("cuda", &cfg, &d));
    if (!d) return;
    ZB_CHECK(d->ops->launch_host != NULL && d->ops->alloc_host && !zb_dev_mem_is_host(d));
    zb_stream *s = NULL;
    ZB_CHECK_OK(d->ops->stream_create(d, "hostops", &s));
    host_log log;
    memset(&log, 0, sizeof log);
    host_arg args[100];
    for (int i = 0; i < 100; i++) {
        args[i] = (host_arg){&log, i};
        zb_op_info info = {ZB_OP_COMM, "hop", i, 8, 0.0};
        ZB_CHECK_OK(zb_device_cuda_launch_host(s, host_op, &args[i], host_cleanup, &info));
    }
    ZB_CHECK_OK(d->ops->stream_sync(s));
    ZB_CHECK(atomic_load(&log.next) == 100 && atomic_load(&log.cleanups) == 100);
    /* Host ops leave host-timed records (CUPTI does not see them). */
    ZB_CHECK(trace.n_records == 100);
    int good = 0;
    for (size_t i = 0; i < trace.n_records; i++) {
        const zb_trace_record *r = &trace.records[i];
        good += r->stream == s->id && r->kind == ZB_OP_COMM && !strcmp(r->label, "hop") &&
                r->end_ns >= r->start_ns && r->unit == (int)i;
    }
    ZB_CHECK(good == 100);

    d->ops->stream_destroy(s);

    /* A kernel's error word (written here by a copy, as a kernel would). */
    ZB_CHECK_OK(d->ops->stream_create(d, "kernels", &s));
    int32_t *word = zb_cuda_stream_error_word(s);
    ZB_CHECK(word != NULL);
    int32_t report[2] = {(int32_t)ZB_ERR_INVALID, 42};
    ZB_CHECK_OK(d->ops->memcpy_async(s, word, report, sizeof report, NULL));
    ZB_CHECK(d->ops->stream_sync(s) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "detail 42") != NULL, "'%s'", zb_error_message());
    d->ops->stream_destroy(s);
    zb_dev_destroy(d);
    zb_trace_destroy(&trace);
}

/* ---- memory ------------------------------------------------------------------- */

static void test_memory(void) {
    const size_t mib = (size_t)1 << 20;
    zb_mem_stats s0, s1;
    dev->ops->mem_stats(dev, &s0);
    void *p = NULL, *a1 = NULL, *a2 = NULL;
    ZB_CHECK_OK(zb_dev_alloc(dev, 1 * mib, ZB_MEM_PARAM_SHARD, &p));
    ZB_CHECK_OK(zb_dev_alloc(dev, 3 * mib, ZB_MEM_ACTIVATION, &a1));
    ZB_CHECK_OK(zb_dev_alloc(dev, 2 * mib + 5, ZB_MEM_ACTIVATION, &a2));
    dev->ops->mem_stats(dev, &s1);
    ZB_CHECK(s1.live_total_bytes - s0.live_total_bytes == 6 * mib + 5);
    zb_cuda_meminfo mi;
    ZB_CHECK_OK(zb_device_cuda_meminfo(dev, &mi));
    ZB_CHECK(mi.total_bytes > mi.free_bytes && mi.used_at_create_bytes > 0);
    ZB_CHECK(mi.used_high_bytes >= mi.total_bytes - mi.free_bytes);
    ZB_CHECK(mi.pool_used_bytes >= s1.live_total_bytes && mi.pool_used_high_bytes >= mi.pool_used_bytes);
    ZB_CHECK(mi.pool_reserved_high_bytes >= mi.pool_used_high_bytes);
    ZB_CHECK(mi.other_bytes > 0); /* the context at least */

    zb_dev_free(dev, a1);
    /* Freed memory stays reserved and is reused. */
    ZB_CHECK_OK(zb_dev_alloc(dev, 3 * mib, ZB_MEM_ACTIVATION, &a1));
    zb_mem_stats s3;
    dev->ops->mem_stats(dev, &s3);
    ZB_CHECK_MSG(s3.reserved_bytes <= s1.reserved_bytes, "reserved grew from %zu to %zu on reuse",
                 s1.reserved_bytes, s3.reserved_bytes);
    zb_dev_free(dev, a1);
    zb_dev_free(dev, a2);
    zb_dev_free(dev, p);
    void *big = NULL; /* far beyond any GPU: a clean NOMEM */
    zb_status st = zb_dev_alloc(dev, (size_t)1 << 50, ZB_MEM_ACTIVATION, &big);
    ZB_CHECK_MSG(st != ZB_OK && big == NULL && strstr(zb_error_message(), "allocating"),
                 "1 PiB allocation: %s: %s", zb_status_name(st), zb_error_message());
    void *ok = NULL; /* and the device still works */
    ZB_CHECK_OK(zb_dev_alloc(dev, 4096, ZB_MEM_ACTIVATION, &ok));
    zb_dev_free(dev, ok);
}

/* ---- op hooks ------------------------------------------------------------------ */

typedef struct hook_log {
    int begins, ends;
    uint64_t last_seq;
    int seq_increasing;
    char last_label[48];
} hook_log;

static void hook_begin(void *arg, const zb_stream *s, const zb_op_info *info, uint64_t seq) {
    hook_log *h = (hook_log *)arg;
    (void)s;
    if (h->begins && seq <= h->last_seq) h->seq_increasing = 0;
    h->begins++;
    h->last_seq = seq;
    snprintf(h->last_label, sizeof h->last_label, "%s", info->label ? info->label : "(null)");
}
static void hook_end(void *arg, const zb_stream *s) {
    (void)s;
    ((hook_log *)arg)->ends++;
}

static void test_hooks(void) {
    hook_log h;
    memset(&h, 0, sizeof h);
    h.seq_increasing = 1;
    zb_cuda_op_hooks hooks = {hook_begin, hook_end, &h};
    zb_device_cuda_set_op_hooks(dev, &hooks);
    zb_stream *s = NULL;
    ZB_CHECK_OK(dev->ops->stream_create(dev, "hooks", &s));
    void *x = NULL;
    ZB_CHECK_OK(zb_dev_alloc(dev, 4096, ZB_MEM_WORKSPACE, &x));
    zb_op_info info = {ZB_OP_COPY, "my-copy", 3, 0, 0.0};
    ZB_CHECK_OK(dev->ops->memcpy_async(s, (char *)x + 2048, x, 2048, &info));
    ZB_CHECK(h.begins == 1 && h.ends == 1 && !strcmp(h.last_label, "my-copy"));
    zb_gemm_desc g = {false, false, 16, 16, 16, 1.0f, 0.0f, x, 16, x, 16, (char *)x + 1024, 16,
                      ZB_DTYPE_F32};
    ZB_CHECK_OK(dev->ops->gemm(s, &g, NULL));
    ZB_CHECK(h.begins == 2 && h.ends == 2 && !strcmp(h.last_label, "gemm") && h.seq_increasing);
    uint64_t prev = h.last_seq;
    ZB_CHECK(zb_cuda_op_begin(s, NULL) > prev && !strcmp(h.last_label, "kernel"));
    zb_cuda_op_end(s);
    ZB_CHECK(zb_cuda_stream_handle(s) != NULL && zb_device_cuda_ordinal(dev) >= 0);
    ZB_CHECK_OK(dev->ops->stream_sync(s));
    zb_device_cuda_set_op_hooks(dev, NULL);
    zb_dev_free(dev, x);
    dev->ops->stream_destroy(s);
}

int main(void) {
    int n = 0;
    char why[256];
    if (zb_cuda_probe(&n, why, sizeof why) != ZB_OK) {
        printf("test_device_cuda: skipped: %s\n", why);
        return SKIP;
    }
    zb_device_config cfg = {0, 0, 1, 60.0, NULL};
    ZB_CHECK_OK(zb_device_create("cuda", &cfg, &dev));
    if (!dev) return zb_test_finish("test_device_cuda");
    ZB_CHECK(zb_device_is_cuda(dev) && !strcmp(dev->ops->name, "cuda"));
    test_copies();
    test_cross_stream_events();
    test_host_ops();
    test_memory();
    test_hooks();
    zb_dev_destroy(dev);
    return zb_test_finish("test_device_cuda");
}
