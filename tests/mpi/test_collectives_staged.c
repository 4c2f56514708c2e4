/* The mpi comm's staged path (device memory that is not host memory, as on
 * cuda) run on CPU ranks: the CPU device with its ops table wrapped so that
 * mem_is_host answers false and alloc_host hands out "pinned" buffers that
 * the wrapper tracks. Every collective is checked element by element,
 * out of place and in place, float and bf16, on both streams, with guard
 * elements around every buffer (and, for reduce-scatter, the blocks of send
 * the rank does not own) that must stay untouched (tests/coll_check.h,
 * which checks everything outside recv); the copies the comm
 * issues are counted against comm_stage.h's plan (input bytes into a
 * staging buffer, result bytes out of one); several collectives are queued
 * before one sync, so the staging buffer grows while earlier ops still use
 * it; the staging bytes are counted under the host-staging tag (host memory:
 * out of the device totals, and asked for with that tag) and freed when the
 * comm is destroyed. Run with 2 and 4 ranks. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "dtype_access.h"
#include "comm.h"
#include "comm_mpi.h"
#include "comm_stage.h"
#include "mpi_boot.h"
#include "zb_test.h"
#include "coll_check.h"
#include "device_cpu.h"

#define MAX_STAGES 16


/* ---- the wrapped device ---------------------------------------------------------- */

static zb_device_ops staged_ops;
static const zb_device_ops *cpu_ops;
static struct { char *p; size_t n; } stages[MAX_STAGES];
static size_t bytes_in, bytes_out, other_copies; /* counted on the issuing thread */
static int n_alloc_host, n_free_host;

static bool not_host(const zb_device *d) {
    (void)d;
    return false;
}

static int n_wrong_tag; /* alloc_host asked under a device tag */

static zb_status alloc_host(zb_device *d, size_t n, zb_mem_tag tag, void **out) {
    if (tag != ZB_MEM_HOST_STAGING) n_wrong_tag++;
    ZB_TRY(cpu_ops->alloc(d, n, tag, out));
    for (int i = 0; i < MAX_STAGES; i++) {
        if (!stages[i].p) {
            stages[i].p = (char *)*out;
            stages[i].n = n;
            n_alloc_host++;
            return ZB_OK;
        }
    }
    return ZB_FAIL(ZB_ERR_INTERNAL, "test: more than %d staging buffers", MAX_STAGES);
}

static void free_host(zb_device *d, void *p) {
    for (int i = 0; i < MAX_STAGES; i++) {
        if (stages[i].p == p) stages[i].p = NULL;
    }
    n_free_host++;
    cpu_ops->free(d, p);
}

static bool in_stage(const void *p, size_t n) {
    const char *c = (const char *)p;
    for (int i = 0; i < MAX_STAGES; i++) {
        if (stages[i].p && c >= stages[i].p && c + n <= stages[i].p + stages[i].n) return true;
    }
    return false;
}

static zb_status counting_memcpy(zb_stream *s, void *dst, const void *src, size_t n,
                                 const zb_op_info *info) {
    if (in_stage(dst, n)) bytes_in += n;
    else if (in_stage(src, n)) bytes_out += n;
    else other_copies++;
    return cpu_ops->memcpy_async(s, dst, src, n, info);
}

/* ---- the comm and its streams ----------------------------------------------------- */

typedef struct env {
    zb_device *dev;
    zb_stream *streams[2];
    zb_comm *comm;
    int rank, n;
} env;

/* Buffers (tests/coll_check.h) made and checked on the compute stream. */
static bool bufs_make(env *e, zb_coll_bufs *b, zb_coll kind, size_t count, zb_dtype t, bool in_place) {
    return zb_coll_bufs_make(e->streams[1], e->rank, e->n, b, kind, count, t, in_place);
}
/* Every element outside recv comes back as it was (coll_check.h). */
static long bufs_check(env *e, zb_coll_bufs *b) { return zb_coll_bufs_check(e->streams[1], b); }
static zb_status bufs_issue(env *e, zb_stream *s, const zb_coll_bufs *b) {
    return zb_coll_bufs_issue(e->comm, s, b);
}

/* ---- tests ----------------------------------------------------------------------- */

static void test_all(env *e) {
    for (size_t i = 0; i < ZB_COLL_N_CASES; i++) {
        zb_coll_case k = zb_coll_case_at(i);
        zb_stream *s = e->streams[k.stream];
        zb_coll_bufs b;
        bufs_make(e, &b, k.kind, k.count, k.t, k.in_place);
        zb_stage_plan plan;
        ZB_CHECK_OK(zb_stage_plan_make(k.kind, k.count, zb_dtype_size(k.t), e->rank, e->n, &plan));
        bytes_in = bytes_out = other_copies = 0;
        ZB_CHECK_OK(bufs_issue(e, s, &b));
        ZB_CHECK_OK(e->dev->ops->stream_sync(s));
        ZB_CHECK_MSG(bytes_in == plan.in_bytes && bytes_out == plan.out_bytes && other_copies == 0,
                     "%s %s count %zu in_place %d: copied %zu in, %zu out, %zu other (plan: %zu in, "
                     "%zu out)", zb_coll_name(k.kind), zb_dtype_name(k.t), k.count, (int)k.in_place,
                     bytes_in, bytes_out, other_copies, plan.in_bytes, plan.out_bytes);
        long w = bufs_check(e, &b);
        ZB_CHECK_MSG(w == 0, "rank %d %s %s count %zu in_place %d: %ld wrong", e->rank, zb_coll_name(k.kind),
                     zb_dtype_name(k.t), k.count, (int)k.in_place, w);
    }
}

/* Queued back to back on one stream, one sync: small ops first, so the
 * staging buffer grows while the earlier ops are still queued (the cpu
 * stream's worker may not have reached them). */
static void test_queued_growth(env *e) {
    enum { N_OPS = 6 };
    static const size_t sizes[N_OPS] = {3, 5000, 7, 300001, 1, 1000003}; /* past test_all's */
    static const zb_coll kinds[N_OPS] = {ZB_COLL_ALLREDUCE, ZB_COLL_ALLGATHER, ZB_COLL_REDUCESCATTER,
                                         ZB_COLL_REDUCESCATTER, ZB_COLL_ALLGATHER, ZB_COLL_ALLREDUCE};
    zb_coll_bufs b[N_OPS];
    int allocs_before = n_alloc_host;
    for (int i = 0; i < N_OPS; i++) {
        bufs_make(e, &b[i], kinds[i], sizes[i], i % 2 ? ZB_DTYPE_BF16 : ZB_DTYPE_F32, i % 3 == 0);
        ZB_CHECK_OK(bufs_issue(e, e->streams[0], &b[i]));
    }
    ZB_CHECK_OK(e->dev->ops->stream_sync(e->streams[0]));
    for (int i = 0; i < N_OPS; i++) {
        long w = bufs_check(e, &b[i]);
        ZB_CHECK_MSG(w == 0, "rank %d queued op %d (%s of %zu): %ld wrong", e->rank, i, zb_coll_name(kinds[i]),
                     sizes[i], w);
    }
    ZB_CHECK(n_alloc_host > allocs_before); /* it did grow */
    ZB_CHECK(n_free_host == n_alloc_host - 2); /* grow-only: one live buffer per stream */
}

static void test_barrier_and_bytes(env *e) {
    memset(e->comm->sent_bytes, 0, sizeof e->comm->sent_bytes);
    bytes_in = bytes_out = other_copies = 0;
    ZB_CHECK_OK(zb_comm_barrier(e->comm, e->streams[1]));
    ZB_CHECK_OK(zb_comm_wait(e->comm, e->streams[1], "barrier", -1));
    ZB_CHECK(bytes_in == 0 && bytes_out == 0 && other_copies == 0); /* nothing staged */
    zb_coll_bufs b;
    bufs_make(e, &b, ZB_COLL_ALLREDUCE, 100, ZB_DTYPE_F32, true);
    ZB_CHECK_OK(bufs_issue(e, e->streams[1], &b));
    ZB_CHECK_OK(e->dev->ops->stream_sync(e->streams[1]));
    ZB_CHECK(bufs_check(e, &b) == 0);
    ZB_CHECK(e->comm->sent_bytes[ZB_COLL_ALLREDUCE] == 2ull * 400 * (uint64_t)(e->n - 1) / (uint64_t)e->n);
}

int main(int argc, char **argv) {
    if (zb_mpi_init(&argc, &argv) != ZB_OK) {
        fprintf(stderr, "%s\n", zb_error_message());
        return 1;
    }
    env e;
    memset(&e, 0, sizeof e);
    MPI_Comm_rank(MPI_COMM_WORLD, &e.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &e.n);
    zb_device_config dc = {e.rank, e.rank, 1, 60, NULL};
    ZB_CHECK_OK(zb_device_cpu_create(&dc, &e.dev));
    cpu_ops = e.dev->ops;
    staged_ops = *cpu_ops;
    staged_ops.name = "cpu-staged";
    staged_ops.mem_is_host = not_host;
    staged_ops.alloc_host = alloc_host;
    staged_ops.free_host = free_host;
    staged_ops.memcpy_async = counting_memcpy;
    e.dev->ops = &staged_ops;
    ZB_CHECK(!zb_dev_mem_is_host(e.dev) && zb_dev_runs_host_code(e.dev));
    ZB_CHECK_OK(e.dev->ops->stream_create(e.dev, "comm", &e.streams[0]));
    ZB_CHECK_OK(e.dev->ops->stream_create(e.dev, "compute", &e.streams[1]));
    zb_comm_config cc = {30};
    ZB_CHECK_OK(zb_comm_mpi_create(e.dev, e.streams, 2, &cc, &e.comm));
    zb_mem_stats ms;
    test_all(&e);
    test_queued_growth(&e);
    test_barrier_and_bytes(&e);
    e.dev->ops->mem_stats(e.dev, &ms);
    size_t staged = ms.live_bytes[ZB_MEM_HOST_STAGING];
    ZB_CHECK_MSG(n_wrong_tag == 0, "%d staging buffers asked for under a device tag", n_wrong_tag);
    ZB_CHECK(staged > 0 && ms.peak_bytes[ZB_MEM_HOST_STAGING] >= staged);
    ZB_CHECK(staged % ZB_STAGE_GRANULE_BYTES == 0);
    ZB_CHECK(ms.live_bytes[ZB_MEM_COMM_BUFFER] == 0 && ms.peak_bytes[ZB_MEM_COMM_BUFFER] == 0);
    /* Destroying the comm frees only its staging: the device totals must
     * not move (host memory is out of them, device.h). */
    zb_comm_destroy(e.comm);
    zb_mem_stats md;
    e.dev->ops->mem_stats(e.dev, &md);
    ZB_CHECK(md.live_bytes[ZB_MEM_HOST_STAGING] == 0 && n_free_host == n_alloc_host);
    ZB_CHECK_MSG(md.live_total_bytes == ms.live_total_bytes, "freeing %zu bytes of host staging moved the "
                 "device live total from %zu to %zu: staging counted as device memory", staged,
                 ms.live_total_bytes, md.live_total_bytes);
    /* A device with neither host memory nor staging is refused, naming it. */
    staged_ops.alloc_host = NULL;
    zb_comm *none = NULL;
    ZB_CHECK(zb_comm_mpi_create(e.dev, e.streams, 2, &cc, &none) == ZB_ERR_UNSUPPORTED);
    ZB_CHECK(strstr(zb_error_message(), "cpu-staged") != NULL);
    e.dev->ops = cpu_ops;
    e.dev->ops->stream_destroy(e.streams[0]);
    e.dev->ops->stream_destroy(e.streams[1]);
    zb_dev_destroy(e.dev);
    int failures = zb_test_failures, all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    zb_mpi_finalize();
    if (e.rank != 0) return failures ? 1 : 0;
    int rc = zb_test_finish("test_collectives_staged");
    return all ? 1 : rc;
}
