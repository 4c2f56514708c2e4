/* CUPTI record -> trace record mapping (harness/device/cuda/cupti_map.h) on synthetic
 * activity records: correlation to op label/unit, NCCL kernel names and the
 * comm stream -> comm, NCCL kernels without correlation matched to their
 * collective op by order, copies and memsets of a collective -> comm (by
 * correlation, on any stream), other copies as their own kind, zero timestamps and
 * uncorrelated records counted, dropped-record accounting, and the overlap
 * metric on mapped records (the clock conversion: test_cupti_clock.c). Also the tracer API's
 * not-running paths and the NVTX wrappers (real NVTX3 calls in a CUDA build:
 * without a tool attached they do nothing). Needs no GPU.
 *
 * CUDA streams (CUPTI ids): 3 = compute (zerobench stream 0), 7 = comm
 * (zerobench stream 1), 42 = unregistered. */
#include <string.h>

#include "cupti_map.h"
#include "cupti_tracer.h"
#include "nvtx.h"
#include "overlap.h"
#include "zb_test.h"

#define CS_COMPUTE 3u
#define CS_COMM 7u
#define ZS_COMPUTE 0
#define ZS_COMM 1
#define OFFSET 4000 /* harness clock = CUPTI clock + OFFSET in most cases */

static zb_act_record gpu(zb_act_kind kind, uint32_t stream, uint32_t corr, uint64_t s, uint64_t e,
                         const char *name) {
    zb_act_record r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.stream_id = stream;
    r.correlation_id = corr;
    r.start_ns = s;
    r.end_ns = e;
    r.name = name;
    return r;
}

static zb_act_record ext(uint32_t corr, uint64_t id, bool ours) {
    zb_act_record r;
    memset(&r, 0, sizeof r);
    r.kind = ZB_ACT_EXTERNAL_CORRELATION;
    r.correlation_id = corr;
    r.external_id = id;
    r.external_is_zb = ours;
    return r;
}

static void push(zb_cupti_map *m, uint64_t id, const char *label, int unit, zb_op_kind kind,
                 uint64_t bytes, double flops, int stream) {
    zb_op_info info = {kind, label, unit, bytes, flops};
    ZB_CHECK_OK(zb_cupti_map_push_op(m, id, &info, stream));
}

static void setup(zb_cupti_map *m, zb_trace *t) {
    ZB_CHECK_OK(zb_cupti_map_init(m, CS_COMM));
    ZB_CHECK_OK(zb_cupti_map_set_stream(m, CS_COMPUTE, ZS_COMPUTE, false));
    ZB_CHECK_OK(zb_cupti_map_set_stream(m, CS_COMM, ZS_COMM, true));
    zb_cupti_map_add_clock_pair(m, 1000, 1000 + OFFSET, NULL);
    ZB_CHECK_OK(zb_trace_init(t, 3, true));
}

static const zb_trace_record *find(const zb_trace *t, const char *label) {
    for (size_t i = 0; i < t->n_records; i++) {
        if (strcmp(t->records[i].label, label) == 0) return &t->records[i];
    }
    return NULL;
}

static void check_invariant(zb_cupti_map *m) {
    zb_cupti_stats s;
    zb_cupti_map_get_stats(m, &s);
    ZB_CHECK_MSG(s.n_gpu_records == s.n_emitted + s.n_zero_timestamp + s.n_inverted +
                                        s.n_discarded + s.n_pending,
                 "GPU records %zu != emitted %zu + zero %zu + inverted %zu + discarded %zu + "
                 "pending %zu",
                 s.n_gpu_records, s.n_emitted, s.n_zero_timestamp, s.n_inverted, s.n_discarded,
                 s.n_pending);
}

static void test_correlation_and_classification(void) {
    zb_cupti_map m;
    zb_trace t;
    setup(&m, &t);
    push(&m, 11, "unit 2 forward gemm", 2, ZB_OP_COMPUTE, 0, 1e9, ZS_COMPUTE);
    zb_op_info coll_info = {ZB_OP_COMM, "unit 2 all-gather", 2, 4096, 0, "allgather"};
    ZB_CHECK_OK(zb_cupti_map_push_op(&m, 12, &coll_info, ZS_COMM));
    push(&m, 13, "unit 1 backward gemm", 1, ZB_OP_COMPUTE, 0, 2e9, ZS_COMPUTE);

    /* Op 11: the correlation record comes first. */
    zb_act_record r = ext(100, 11, true);
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_KERNEL, CS_COMPUTE, 100, 2000, 2500, "_Z11gemm_kernelPKfPf");
    zb_cupti_map_record(&m, &r);
    /* Op 12: the NCCL kernel arrives before its correlation record. */
    r = gpu(ZB_ACT_KERNEL, CS_COMM, 101, 2100, 2900,
            "_Z29ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE");
    zb_cupti_map_record(&m, &r);
    r = ext(101, 12, true);
    zb_cupti_map_record(&m, &r);
    /* A copy inside op 12 on the comm stream: comm (part of the collective),
     * with its own bytes. */
    r = gpu(ZB_ACT_MEMCPY, CS_COMM, 102, 3000, 3100, "memcpy DtoD");
    r.bytes = 512;
    zb_cupti_map_record(&m, &r);
    r = ext(102, 12, true);
    zb_cupti_map_record(&m, &r);
    /* Op 13 via the memcpy's runtime correlation id (driver id has no ext). */
    r = gpu(ZB_ACT_MEMCPY, CS_COMPUTE, 500, 3200, 3300, "memcpy HtoD");
    r.runtime_correlation_id = 501;
    r.bytes = 64;
    zb_cupti_map_record(&m, &r);
    r = ext(501, 13, true);
    zb_cupti_map_record(&m, &r);

    zb_cupti_stats s;
    zb_cupti_map_get_stats(&m, &s);
    ZB_CHECK(s.n_pending == 4 && t.n_records == 0); /* held until the flush */
    ZB_CHECK_OK(zb_cupti_map_flush(&m, &t));
    ZB_CHECK(t.n_records == 4);

    const zb_trace_record *g = find(&t, "unit 2 forward gemm");
    ZB_CHECK(g && g->kind == ZB_OP_COMPUTE && g->unit == 2 && g->stream == ZS_COMPUTE);
    ZB_CHECK(g && g->start_ns == 2000 + OFFSET && g->end_ns == 2500 + OFFSET);
    ZB_CHECK(g && g->flops == 1e9 && g->seq == 11 && g->rank == 3);
    const zb_trace_record *ag = NULL, *cp = NULL;
    for (size_t i = 0; i < t.n_records; i++) {
        if (strcmp(t.records[i].label, "unit 2 all-gather") != 0) continue;
        if (t.records[i].bytes == 512) cp = &t.records[i];
        else ag = &t.records[i];
    }
    ZB_CHECK(ag && ag->kind == ZB_OP_COMM && ag->unit == 2 && ag->stream == ZS_COMM);
    ZB_CHECK(ag && ag->bytes == 4096 && ag->seq == 12);
    ZB_CHECK(cp && cp->kind == ZB_OP_COMM && cp->stream == ZS_COMM && cp->unit == 2);
    /* The collective's name on its kernel only: one record per instance. */
    ZB_CHECK(ag && !strcmp(ag->coll, "allgather") && cp && cp->coll[0] == '\0');
    ZB_CHECK(g && g->coll[0] == '\0');
    const zb_trace_record *h = find(&t, "unit 1 backward gemm");
    ZB_CHECK(h && h->kind == ZB_OP_COPY && h->bytes == 64 && h->unit == 1);

    zb_cupti_map_get_stats(&m, &s);
    ZB_CHECK(s.n_uncorrelated == 0 && s.n_emitted == 4 && s.n_ops == 3);
    ZB_CHECK(s.n_emitted_by_kind[ZB_OP_COMM] == 2 && s.n_emitted_by_kind[ZB_OP_COPY] == 1);
    ZB_CHECK(s.n_by_kind[ZB_ACT_EXTERNAL_CORRELATION] == 4 && s.n_by_kind[ZB_ACT_KERNEL] == 2);
    check_invariant(&m);
    zb_trace_destroy(&t);
    zb_cupti_map_free(&m);
}

static void test_uncorrelated_and_streams(void) {
    zb_cupti_map m;
    zb_trace t;
    setup(&m, &t);
    /* An op registered as compute whose kernel is NCCL's: the name wins. */
    push(&m, 20, "unit 0 mislabelled", 0, ZB_OP_COMPUTE, 0, 0, ZS_COMPUTE);
    zb_act_record r = ext(200, 20, true);
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_KERNEL, CS_COMPUTE, 200, 1500, 1600, "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL");
    zb_cupti_map_record(&m, &r);
    /* Uncorrelated kernels: NCCL by name (pattern beyond the label length),
     * any kernel on the comm stream, a plain kernel, a foreign external id. */
    const char *long_name =
        "_ZN38a_namespace_long_enough_to_push_it_out10ncclKernelEv"; /* ncclKernel at byte 40+ */
    r = gpu(ZB_ACT_KERNEL, 42, 201, 1100, 1200, long_name);
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_KERNEL, CS_COMM, 202, 1200, 1300, "_Z11cast_to_f32PKtPf");
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_KERNEL, CS_COMPUTE, 203, 1300, 1400, "rmsnorm_kernel(float*, int)");
    zb_cupti_map_record(&m, &r);
    r = ext(203, 999, false); /* another tool's id: ignored, counted */
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_MEMSET, 42, 204, 1400, 1450, NULL);
    r.bytes = 128;
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_MEMCPY, CS_COMM, 205, 1450, 1460, "memcpy HtoD");
    zb_cupti_map_record(&m, &r);
    ZB_CHECK_OK(zb_cupti_map_flush(&m, &t));

    const zb_trace_record *x = find(&t, "unit 0 mislabelled");
    ZB_CHECK(x && x->kind == ZB_OP_COMM && x->unit == 0);
    x = find(&t, "a_namespace_long_enough_to_push_it_out::ncclKer");
    ZB_CHECK_MSG(x && x->kind == ZB_OP_COMM && x->unit == -1 &&
                     x->stream == ZB_CUPTI_FOREIGN_STREAM_BASE + 42 && x->seq == 0,
                 "long NCCL kernel name: %s", x ? "wrong fields" : "not found");
    x = find(&t, "cast_to_f32");
    ZB_CHECK(x && x->kind == ZB_OP_COMM && x->stream == ZS_COMM && x->unit == -1);
    x = find(&t, "rmsnorm_kernel");
    ZB_CHECK(x && x->kind == ZB_OP_COMPUTE && x->stream == ZS_COMPUTE && x->unit == -1);
    x = find(&t, "memset");
    ZB_CHECK(x && x->kind == ZB_OP_COPY && x->bytes == 128 &&
             x->stream == ZB_CUPTI_FOREIGN_STREAM_BASE + 42);
    x = find(&t, "memcpy HtoD");
    ZB_CHECK(x && x->kind == ZB_OP_COMM && x->stream == ZS_COMM); /* on the comm stream */

    zb_cupti_stats s;
    zb_cupti_map_get_stats(&m, &s);
    ZB_CHECK(s.n_uncorrelated == 5 && s.n_foreign_external == 1 && s.n_emitted == 6);
    check_invariant(&m);
    zb_trace_destroy(&t);
    zb_cupti_map_free(&m);
}

static void test_counted_never_lost(void) {
    zb_cupti_map m;
    zb_trace t;
    setup(&m, &t);
    zb_act_record r = gpu(ZB_ACT_KERNEL, CS_COMPUTE, 1, 0, 500, "k_no_start");
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_MEMCPY, CS_COMPUTE, 2, 500, 0, "memcpy DtoH");
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_MEMSET, CS_COMPUTE, 3, 900, 800, "memset");
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_KERNEL, CS_COMPUTE, 4, 1000, 1000, "_Z5emptyv"); /* zero length: kept */
    zb_cupti_map_record(&m, &r);
    /* Host-side kinds: counted and summed, never turned into trace records. */
    r = gpu(ZB_ACT_SYNCHRONIZATION, 0, 5, 100, 350, NULL);
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_OVERHEAD, 0, 0, 10, 30, NULL);
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_RUNTIME, 0, 6, 10, 30, NULL);
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_DRIVER, 0, 7, 10, 30, NULL);
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_OTHER, 0, 0, 0, 0, NULL);
    zb_cupti_map_record(&m, &r);
    r.kind = (zb_act_kind)77; /* out of range reads as other */
    zb_cupti_map_record(&m, &r);
    zb_cupti_map_add_dropped(&m, 3);
    zb_cupti_map_add_dropped(&m, 2);
    zb_cupti_map_add_buffer_error(&m);
    ZB_CHECK_OK(zb_cupti_map_flush(&m, &t));
    ZB_CHECK(t.n_records == 1 && find(&t, "empty") != NULL);

    zb_cupti_stats s;
    zb_cupti_map_get_stats(&m, &s);
    ZB_CHECK(s.n_zero_timestamp == 2 && s.n_inverted == 1 && s.n_emitted == 1);
    ZB_CHECK(s.n_dropped == 5 && s.n_buffer_errors == 1);
    ZB_CHECK(s.sync_ns == 250 && s.overhead_ns == 20);
    ZB_CHECK(s.n_by_kind[ZB_ACT_RUNTIME] == 1 && s.n_by_kind[ZB_ACT_DRIVER] == 1);
    ZB_CHECK(s.n_by_kind[ZB_ACT_OTHER] == 2 && s.n_gpu_records == 4);
    check_invariant(&m);

    /* A NULL trace discards, counted; a flush without a clock pair refuses. */
    r = gpu(ZB_ACT_KERNEL, CS_COMPUTE, 8, 2000, 2100, "_Z1kv");
    zb_cupti_map_record(&m, &r);
    ZB_CHECK_OK(zb_cupti_map_flush(&m, NULL));
    zb_cupti_map_get_stats(&m, &s);
    ZB_CHECK(s.n_discarded == 1 && s.n_pending == 0);
    check_invariant(&m);
    zb_cupti_map_free(&m);

    ZB_CHECK_OK(zb_cupti_map_init(&m, -1));
    zb_cupti_map_record(&m, &r);
    ZB_CHECK(zb_cupti_map_flush(&m, &t) == ZB_ERR_INVALID);
    zb_cupti_map_get_stats(&m, &s);
    ZB_CHECK(s.n_pending == 1);
    zb_cupti_map_add_clock_pair(&m, 0, 0, NULL);
    ZB_CHECK_OK(zb_cupti_map_flush(&m, &t));
    ZB_CHECK(t.n_records == 2 && find(&t, "k") != NULL);
    ZB_CHECK(zb_cupti_map_push_op(&m, 0, NULL, 0) == ZB_ERR_INVALID);
    zb_cupti_map_free(&m);
    zb_trace_destroy(&t);
}

static void test_generations(void) {
    zb_cupti_map m;
    zb_trace t;
    setup(&m, &t);
    push(&m, 30, "unit 5 reduce-scatter", 5, ZB_OP_COMM, 100, 0, ZS_COMM);
    ZB_CHECK_OK(zb_cupti_map_flush(&m, &t)); /* op 30 moves to the previous generation */
    zb_act_record r = ext(300, 30, true);
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_KERNEL, CS_COMM, 300, 5000, 5100, "_Z1kv");
    zb_cupti_map_record(&m, &r);
    ZB_CHECK_OK(zb_cupti_map_flush(&m, &t)); /* still resolves */
    ZB_CHECK(t.n_records == 1 && find(&t, "unit 5 reduce-scatter") != NULL);
    ZB_CHECK_OK(zb_cupti_map_flush(&m, &t)); /* op 30 and correlation 300 age out */
    r = gpu(ZB_ACT_KERNEL, CS_COMM, 300, 6000, 6100, "_Z1kv");
    zb_cupti_map_record(&m, &r);
    ZB_CHECK_OK(zb_cupti_map_flush(&m, &t));
    ZB_CHECK(t.n_records == 2 && t.records[1].unit == -1 && strcmp(t.records[1].label, "k") == 0);
    zb_trace_destroy(&t);
    zb_cupti_map_free(&m);
}

static void test_names(void) {
    char out[ZB_LABEL_MAX];
    zb_cupti_short_name("_Z13gemm_kernel_2PfS_", out, sizeof out);
    ZB_CHECK(strcmp(out, "gemm_kernel_2") == 0);
    zb_cupti_short_name("_ZN7cutlass6KernelINS_4gemmEEEvT_", out, sizeof out);
    ZB_CHECK(strcmp(out, "cutlass::Kernel") == 0);
    zb_cupti_short_name("_ZL9my_staticv", out, sizeof out);
    ZB_CHECK(strcmp(out, "my_static") == 0);
    zb_cupti_short_name("softmax(float const*, int)", out, sizeof out);
    ZB_CHECK(strcmp(out, "softmax") == 0);
    zb_cupti_short_name("_Z99short", out, sizeof out); /* bad length: copied */
    ZB_CHECK(strcmp(out, "_Z99short") == 0);
    zb_cupti_short_name(NULL, out, sizeof out);
    ZB_CHECK(out[0] == '\0');
    char tiny[4];
    zb_cupti_short_name("_Z10abcdefghijv", tiny, sizeof tiny);
    ZB_CHECK(strcmp(tiny, "abc") == 0);

    /* NCCL's kernel names, matched on the full name. */
    const char *nccl[] = {"ncclDevKernel_AllGather", "ncclSymkDevKernel_x", "ncclKernel_y",
                          "oneRankReduce"};
    for (size_t i = 0; i < 4; i++) ZB_CHECK(zb_cupti_is_nccl_kernel(nccl[i]));
    ZB_CHECK(!zb_cupti_is_nccl_kernel("_Z4gemmv") && !zb_cupti_is_nccl_kernel(NULL));
    ZB_CHECK(strcmp(zb_act_kind_name(ZB_ACT_EXTERNAL_CORRELATION), "external-correlation") == 0);
}

/* Copies and memsets that belong to a collective are comm by correlation
 * alone, on a stream nobody designated the comm stream: with one rank NCCL
 * launches no kernel, only a device-to-device copy, and the step must still
 * show its comm. Other copies stay copies; the overlap metric, which reads
 * only the kind, then measures the collective. */
static void test_copies_of_collectives(void) {
    zb_cupti_map m;
    zb_trace t;
    ZB_CHECK_OK(zb_cupti_map_init(&m, -1));
    ZB_CHECK_OK(zb_cupti_map_set_stream(&m, CS_COMPUTE, ZS_COMPUTE, false));
    ZB_CHECK_OK(zb_cupti_map_set_stream(&m, CS_COMM, ZS_COMM, false));
    zb_cupti_map_add_clock_pair(&m, 1000, 1000 + OFFSET, NULL);
    ZB_CHECK_OK(zb_trace_init(&t, 0, true));
    push(&m, 60, "unit 1 forward", 1, ZB_OP_COMPUTE, 0, 1e6, ZS_COMPUTE);
    push(&m, 61, "allgather.fwd", 2, ZB_OP_COMM, 4096, 0, ZS_COMM);
    push(&m, 62, "load_batch", -1, ZB_OP_COPY, 64, 0, ZS_COMPUTE);
    zb_act_record r = ext(600, 60, true);
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_KERNEL, CS_COMPUTE, 600, 2000, 2100, "_Z4gemmv"); /* [6000, 6100) */
    zb_cupti_map_record(&m, &r);
    /* The one-rank all-gather: a D2D copy, and a memset, of op 61. */
    r = ext(601, 61, true);
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_MEMCPY, CS_COMM, 601, 2050, 2130, "memcpy DtoD");
    r.bytes = 4096;
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_MEMSET, CS_COMM, 602, 2130, 2140, NULL);
    r.bytes = 16;
    zb_cupti_map_record(&m, &r);
    r = ext(602, 61, true);
    zb_cupti_map_record(&m, &r);
    /* A copy of a copy op, and an uncorrelated one: copies. */
    r = ext(603, 62, true);
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_MEMCPY, CS_COMPUTE, 603, 1900, 1950, "memcpy HtoD");
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_MEMCPY, CS_COMM, 604, 2200, 2210, "memcpy DtoH");
    zb_cupti_map_record(&m, &r);
    ZB_CHECK_OK(zb_cupti_map_flush(&m, &t));
    ZB_CHECK(t.n_records == 5);

    size_t n_comm = 0;
    for (size_t i = 0; i < t.n_records; i++) {
        const zb_trace_record *x = &t.records[i];
        if (strcmp(x->label, "allgather.fwd") != 0) continue;
        n_comm++;
        ZB_CHECK_MSG(x->kind == ZB_OP_COMM && x->unit == 2 && x->stream == ZS_COMM,
                     "collective's copy: kind %s unit %d stream %d", zb_op_kind_name(x->kind),
                     x->unit, x->stream);
    }
    ZB_CHECK(n_comm == 2);
    const zb_trace_record *x = find(&t, "load_batch");
    ZB_CHECK(x && x->kind == ZB_OP_COPY);
    x = find(&t, "memcpy DtoH");
    ZB_CHECK(x && x->kind == ZB_OP_COPY && x->unit == -1);

    zb_overlap o;
    ZB_CHECK_OK(zb_overlap_compute(t.records, t.n_records, 0, 10000, &o));
    ZB_CHECK_MSG(o.comm_measured && o.comm_ns == 90 && o.compute_ns == 100 && o.overlap_ns == 50,
                 "comm %lld compute %lld overlap %lld", (long long)o.comm_ns,
                 (long long)o.compute_ns, (long long)o.overlap_ns);
    check_invariant(&m);
    zb_trace_destroy(&t);
    zb_cupti_map_free(&m);
}

/* Mapped records feed the overlap metric (harness/metrics/overlap.h). */
static void test_overlap_on_mapped(void) {
    zb_cupti_map m;
    zb_trace t;
    setup(&m, &t);
    push(&m, 40, "unit 0 forward", 0, ZB_OP_COMPUTE, 0, 1e6, ZS_COMPUTE);
    zb_act_record r = ext(400, 40, true);
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_KERNEL, CS_COMPUTE, 400, 1000, 1100, "_Z4gemmv"); /* [5000, 5100) */
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_KERNEL, CS_COMM, 401, 1050, 1150, "ncclDevKernel_AllGather_RING_LL");
    zb_cupti_map_record(&m, &r);
    ZB_CHECK_OK(zb_cupti_map_flush(&m, &t));
    zb_overlap o;
    ZB_CHECK_OK(zb_overlap_compute(t.records, t.n_records, 0, 10000, &o));
    ZB_CHECK(o.comm_ns == 100 && o.compute_ns == 100 && o.overlap_ns == 50);
    ZB_CHECK(o.overlap_pct == 50.0 && o.exposed_comm_ns == 50);
    zb_trace_destroy(&t);
    zb_cupti_map_free(&m);
}

/* The tracer API when it is not running (either build): all no-ops. */
static void test_tracer_not_running(void) {
    ZB_CHECK(!zb_cupti_active());
    zb_cupti_op_begin("unit 0 forward", 0, ZB_OP_COMPUTE, 1.0, 0);
    zb_cupti_op_end();
    zb_cupti_op_end(); /* unbalanced: ignored */
    ZB_CHECK(zb_cupti_flush() == ZB_ERR_UNSUPPORTED);
    ZB_CHECK(zb_cupti_register_stream(NULL, 0, false) == ZB_ERR_UNSUPPORTED);
    ZB_CHECK_OK(zb_cupti_stop());
    zb_cupti_stats s;
    ZB_CHECK(zb_cupti_get_stats(&s) == ZB_ERR_UNSUPPORTED);
    ZB_CHECK(zb_cupti_unavailable_reason() != NULL);
}

static void test_nvtx(void) {
    char buf[64];
    ZB_CHECK(strcmp(zb_nvtx_range_name(ZB_NVTX_FORWARD, 3, buf, sizeof buf), "unit 3 forward") == 0);
    ZB_CHECK(strcmp(zb_nvtx_range_name(ZB_NVTX_BACKWARD, 0, buf, sizeof buf), "unit 0 backward") == 0);
    ZB_CHECK(strcmp(zb_nvtx_range_name(ZB_NVTX_ALL_GATHER, 12, buf, sizeof buf),
                    "unit 12 all-gather") == 0);
    ZB_CHECK(strcmp(zb_nvtx_range_name(ZB_NVTX_REDUCE_SCATTER, 1, buf, sizeof buf),
                    "unit 1 reduce-scatter") == 0);
    ZB_CHECK(strcmp(zb_nvtx_range_name(ZB_NVTX_OPTIMIZER, 7, buf, sizeof buf), "optimizer step") == 0);
    ZB_CHECK(zb_nvtx_range_color(ZB_NVTX_ALL_GATHER) == ZB_NVTX_COLOR_COMM);
    ZB_CHECK(zb_nvtx_range_color(ZB_NVTX_FORWARD) == ZB_NVTX_COLOR_COMPUTE);
    /* Real NVTX3 calls in a CUDA build; with no tool attached they do nothing. */
    zb_nvtx_push_range(ZB_NVTX_FORWARD, 0);
    zb_nvtx_push("inner");
    zb_nvtx_pop();
    zb_nvtx_pop();
}


/* NCCL kernels launched from NCCL's own thread come without the op's
 * external id: they get their collective op by order on their stream
 * (cupti_map.h). */
static void coll(zb_cupti_map *m, uint64_t id, const char *label, int unit, const char *name) {
    zb_op_info info = {ZB_OP_COMM, label, unit, 1024, 0, name};
    ZB_CHECK_OK(zb_cupti_map_push_op(m, id, &info, ZS_COMM));
}

static void test_nccl_by_order(void) {
    zb_cupti_map m;
    zb_trace t;
    setup(&m, &t);
    coll(&m, 30, "unit 0 all-gather", 0, "allgather");
    push(&m, 31, "unit 0 forward", 0, ZB_OP_COMPUTE, 0, 1e6, ZS_COMPUTE);
    coll(&m, 32, "unit 1 all-gather", 1, "allgather");
    coll(&m, 33, "unit 1 reduce-scatter", 1, "reducescatter");
    coll(&m, 34, "unit 0 reduce-scatter", 0, "reducescatter");
    coll(&m, 35, "unit 0 all-gather again", 0, "allgather"); /* its kernel comes next window */
    /* Delivered out of order; none correlated but the third reduce-scatter's. */
    zb_act_record r = gpu(ZB_ACT_KERNEL, CS_COMM, 501, 3000, 3100, "ncclDevKernel_AllGather_RING_LL");
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_KERNEL, CS_COMM, 502, 5000, 5100, "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL");
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_KERNEL, CS_COMM, 503, 2000, 2100, "ncclDevKernel_AllGather_RING_LL");
    zb_cupti_map_record(&m, &r);
    r = ext(504, 33, true); /* this one came correlated: op 33 */
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_KERNEL, CS_COMM, 504, 4000, 4100, "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL");
    zb_cupti_map_record(&m, &r);
    /* NCCL on the compute stream, where no collective was registered: stays uncorrelated. */
    r = gpu(ZB_ACT_KERNEL, CS_COMPUTE, 505, 6000, 6100, "ncclDevKernel_Generic");
    zb_cupti_map_record(&m, &r);
    ZB_CHECK_OK(zb_cupti_map_flush(&m, &t));
    const zb_trace_record *x = find(&t, "unit 0 all-gather"); /* ran first: the first all-gather */
    ZB_CHECK(x && x->unit == 0 && x->seq == 30 && x->start_ns == 2000 + OFFSET && x->kind == ZB_OP_COMM);
    x = find(&t, "unit 1 all-gather");
    ZB_CHECK(x && x->unit == 1 && x->seq == 32 && x->start_ns == 3000 + OFFSET);
    x = find(&t, "unit 1 reduce-scatter"); /* by correlation */
    ZB_CHECK(x && x->seq == 33 && x->start_ns == 4000 + OFFSET);
    x = find(&t, "unit 0 reduce-scatter"); /* by order, skipping the correlated op 33 */
    ZB_CHECK(x && x->unit == 0 && x->seq == 34 && x->start_ns == 5000 + OFFSET);
    ZB_CHECK(x && strcmp(x->coll, "reducescatter") == 0); /* named: the arrival figures count it */
    x = find(&t, "ncclDevKernel_Generic");
    ZB_CHECK(x && x->unit == -1 && x->kind == ZB_OP_COMM && x->stream == ZS_COMPUTE);
    zb_cupti_stats s;
    zb_cupti_map_get_stats(&m, &s);
    ZB_CHECK_MSG(s.n_order_matched == 3 && s.n_uncorrelated == 1, "order matched %zu, uncorrelated %zu",
                 s.n_order_matched, s.n_uncorrelated);

    /* Next window: a generic kernel (no collective in its name) takes the
     * op left over from the last window; the kind check skips an op of
     * another collective. */
    coll(&m, 36, "unit 1 reduce-scatter again", 1, "reducescatter");
    coll(&m, 37, "unit 1 all-gather again", 1, "allgather");
    r = gpu(ZB_ACT_KERNEL, CS_COMM, 601, 7000, 7100, "ncclDevKernel_Generic");
    zb_cupti_map_record(&m, &r);
    r = gpu(ZB_ACT_KERNEL, CS_COMM, 602, 8000, 8100, "ncclDevKernel_AllGather_RING_LL");
    zb_cupti_map_record(&m, &r);
    ZB_CHECK_OK(zb_cupti_map_flush(&m, &t));
    x = find(&t, "unit 0 all-gather again");
    ZB_CHECK(x && x->seq == 35 && x->start_ns == 7000 + OFFSET);
    x = find(&t, "unit 1 all-gather again"); /* not op 36, a reduce-scatter */
    ZB_CHECK(x && x->seq == 37 && x->start_ns == 8000 + OFFSET);
    ZB_CHECK(!find(&t, "unit 1 reduce-scatter again"));
    /* Two windows on, op 36 has aged out: a late kernel stays uncorrelated. */
    ZB_CHECK_OK(zb_cupti_map_flush(&m, &t));
    r = gpu(ZB_ACT_KERNEL, CS_COMM, 701, 9000, 9100, "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL");
    zb_cupti_map_record(&m, &r);
    ZB_CHECK_OK(zb_cupti_map_flush(&m, &t));
    ZB_CHECK(!find(&t, "unit 1 reduce-scatter again"));
    zb_cupti_map_get_stats(&m, &s);
    ZB_CHECK_MSG(s.n_order_matched == 5 && s.n_uncorrelated == 2 && m.n_colls == 0,
                 "order matched %zu, uncorrelated %zu, slots %zu", s.n_order_matched, s.n_uncorrelated, m.n_colls);
    check_invariant(&m);
    zb_trace_destroy(&t);
    zb_cupti_map_free(&m);
}

int main(void) {
    test_correlation_and_classification();
    test_uncorrelated_and_streams();
    test_counted_never_lost();
    test_generations();
    test_names();
    test_copies_of_collectives();
    test_nccl_by_order();
    test_overlap_on_mapped();
    test_tracer_not_running();
    test_nvtx();
    return zb_test_finish("test_cupti_map");
}
