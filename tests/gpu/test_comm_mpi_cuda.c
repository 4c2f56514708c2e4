/* The MPI comm on the CUDA device (label gpu; exit 77 = skipped when no GPU
 * is usable): every collective staged through pinned host memory
 * (comm_mpi.c) with the CUDA device's host ops (device_cuda_host.c). Runs
 * with one rank under CTest; ci/gpu-check also runs it with 2 ranks sharing
 * the GPU, and again with ZB_CUDA_HOST_WAIT=callback (the fallback wait).
 * Every collective, element by element, is checked on every device by
 * tests/conformance/test_comm_conformance.c (test_comm_conformance_cuda
 * here); this test checks what the staging through pinned memory adds, on
 * buffers from the device's pool (tests/coll_check.h: guards and
 * every block of send come back untouched):
 *   - stream order with events: a compute-stream copy feeds collectives
 *     queued back to back on the comm stream (the staging buffer grows while
 *     earlier ones are queued), whose result a compute-stream copy reads;
 *   - collectives on both streams reached in opposite orders on different
 *     ranks (a host op delays one stream on even ranks, the other on odd
 *     ones): each stream's host ops run on their own thread, so this
 *     completes (with MPI run inside cudaLaunchHostFunc functions, which
 *     share one driver thread, it can hang until the timeout);
 *   - the staging bytes are counted under the comm-buffer tag and freed
 *     when the comm is destroyed. */
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm.h"
#include "comm_mpi.h"
#include "comm_stage.h"
#include "cuda_backend.h"
#include "mpi_boot.h"
#include "backend_select.h"
#include "zb_test.h"
#include "coll_check.h"

#define SKIP 77

typedef struct env {
    zb_device *dev;
    zb_stream *streams[2]; /* comm, compute */
    zb_comm *comm;
    int rank, n;
} env;

static bool cuda_ok(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return true;
    char msg[256];
    snprintf(msg, sizeof msg, "%s: %s", what, cudaGetErrorString(e));
    zb_test_fail(__FILE__, __LINE__, msg);
    return false;
}

/* Buffers (tests/coll_check.h) made and checked on the compute stream;
 * everything outside recv must come back as it was. */
static bool bufs_make(env *e, zb_coll_bufs *b, zb_coll kind, size_t count, zb_dtype t, bool in_place) {
    return zb_coll_bufs_make(e->streams[1], e->rank, e->n, b, kind, count, t, in_place);
}
static long bufs_check(env *e, zb_coll_bufs *b) { return zb_coll_bufs_check(e->streams[1], b); }
static zb_status bufs_issue(env *e, zb_stream *s, const zb_coll_bufs *b) {
    return zb_coll_bufs_issue(e->comm, s, b);
}

/* compute: copy src -> send, record; comm: wait, queued collectives (the
 * first reads send; later ones grow the staging buffer), record; compute:
 * wait, copy recv -> out. */
static void check_stream_order(env *e) {
    const zb_device_ops *d = e->dev->ops;
    zb_stream *comm = e->streams[0], *compute = e->streams[1];
    enum { N_OPS = 4 };
    static const size_t sizes[N_OPS] = {1000003, 3, (size_t)5 << 20, 7};
    static const zb_coll kinds[N_OPS] = {ZB_COLL_ALLREDUCE, ZB_COLL_REDUCESCATTER, ZB_COLL_ALLGATHER,
                                         ZB_COLL_ALLGATHER};
    zb_coll_bufs b[N_OPS];
    bool ok = true;
    for (int i = 0; i < N_OPS; i++) ok = bufs_make(e, &b[i], kinds[i], sizes[i], ZB_DTYPE_F32, i == 1) && ok;
    /* op 0's input arrives by a compute-stream copy from `src`; its send
     * region on the device is first zeroed, so an early collective sees 0s. */
    size_t bytes0 = b[0].send_n * b[0].es;
    void *src = NULL, *out = NULL;
    ZB_CHECK_OK(zb_dev_alloc(e->dev, bytes0, ZB_MEM_BENCH_BUFFER, &src));
    ZB_CHECK_OK(zb_dev_alloc(e->dev, b[0].recv_n * b[0].es, ZB_MEM_BENCH_BUFFER, &out));
    zb_event *fed = NULL, *reduced = NULL;
    ZB_CHECK_OK(d->event_create(e->dev, &fed));
    ZB_CHECK_OK(d->event_create(e->dev, &reduced));
    if (ok && src && out && fed && reduced) {
        char *send0 = b[0].mem + b[0].send_at * b[0].es;
        ok = cuda_ok(cudaMemcpy(src, send0, bytes0, cudaMemcpyDeviceToDevice), "copy") &&
             cuda_ok(cudaMemset(send0, 0, bytes0), "memset") && cuda_ok(cudaDeviceSynchronize(), "sync");
        /* a large compute-side copy first, so the comm stream must really wait */
        for (int k = 0; k < 8 && ok; k++) ZB_CHECK_OK(d->memcpy_async(compute, send0, src, bytes0, NULL));
        ZB_CHECK_OK(d->event_record(fed, compute));
        ZB_CHECK_OK(d->stream_wait_event(comm, fed));
        for (int i = 0; i < N_OPS; i++) ZB_CHECK_OK(bufs_issue(e, comm, &b[i]));
        ZB_CHECK_OK(d->event_record(reduced, comm));
        ZB_CHECK_OK(d->stream_wait_event(compute, reduced));
        ZB_CHECK_OK(d->memcpy_async(compute, out, b[0].mem + b[0].recv_at * b[0].es, b[0].recv_n * b[0].es, NULL));
        ZB_CHECK_OK(d->stream_sync(compute));
        ZB_CHECK_OK(d->stream_sync(comm));
        /* `out` must equal op 0's result (and so did every later op) */
        float *h = (float *)malloc(b[0].recv_n * sizeof(float));
        long wrong = -1;
        if (h && cuda_ok(cudaMemcpy(h, out, b[0].recv_n * sizeof(float), cudaMemcpyDeviceToHost), "download")) {
            wrong = 0;
            for (size_t j = 0; j < b[0].recv_n; j++) {
                float want = zb_coll_expected(ZB_COLL_ALLREDUCE, b[0].count, e->rank, e->n, j);
                wrong += !(h[j] == want);
            }
        }
        free(h);
        ZB_CHECK_MSG(wrong == 0, "rank %d: the compute stream read %ld wrong elements of the queued all-reduce",
                     e->rank, wrong);
    }
    for (int i = 0; i < N_OPS; i++) {
        long w = bufs_check(e, &b[i]);
        ZB_CHECK_MSG(w == 0, "rank %d queued op %d (%s of %zu): %ld wrong", e->rank, i, zb_coll_name(kinds[i]),
                     sizes[i], w);
    }
    if (src) zb_dev_free(e->dev, src);
    if (out) zb_dev_free(e->dev, out);
    if (fed) d->event_destroy(fed);
    if (reduced) d->event_destroy(reduced);
}

static zb_status sleep_op(void *arg) {
    int ms = *(const int *)arg;
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    return ZB_OK;
}

/* Even ranks delay the comm stream, odd ranks the compute stream, so the
 * ranks reach X (comm stream) and Y (compute stream) in opposite orders. */
static void check_opposite_orders(env *e) {
    static int delay_ms = 300;
    zb_stream *comm = e->streams[0], *compute = e->streams[1];
    zb_stream *late = e->rank % 2 == 0 ? comm : compute;
    for (int round = 0; round < 3; round++) {
        zb_coll_bufs x, y;
        bool ok = bufs_make(e, &x, ZB_COLL_ALLGATHER, 4099, ZB_DTYPE_BF16, false);
        ok = bufs_make(e, &y, ZB_COLL_ALLREDUCE, 70001, ZB_DTYPE_F32, true) && ok;
        if (ok) {
            ZB_CHECK_OK(e->dev->ops->launch_host(late, sleep_op, &delay_ms, NULL, NULL));
            ZB_CHECK_OK(bufs_issue(e, comm, &x));
            ZB_CHECK_OK(bufs_issue(e, compute, &y));
            ZB_CHECK_OK(e->dev->ops->stream_sync(comm));
            ZB_CHECK_OK(e->dev->ops->stream_sync(compute));
        }
        long wx = bufs_check(e, &x), wy = bufs_check(e, &y);
        ZB_CHECK_MSG(wx == 0 && wy == 0, "rank %d round %d: %ld wrong in X, %ld in Y", e->rank, round, wx, wy);
    }
}

int main(int argc, char **argv) {
    int n_gpus = 0;
    char why[256] = "";
    if (zb_cuda_probe(&n_gpus, why, sizeof why) != ZB_OK || n_gpus < 1) {
        printf("test_comm_mpi_cuda: skipped: %s\n", why[0] ? why : "no GPU");
        return SKIP;
    }
    if (zb_mpi_init(&argc, &argv) != ZB_OK) {
        fprintf(stderr, "test_comm_mpi_cuda: %s\n", zb_error_message());
        return 1;
    }
    env e;
    memset(&e, 0, sizeof e);
    MPI_Comm_rank(MPI_COMM_WORLD, &e.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &e.n);
    const char *wait_mode = getenv("ZB_CUDA_HOST_WAIT");
    if (e.rank == 0) {
        printf("test_comm_mpi_cuda: %d rank(s) on %d GPU(s); stream waits: %s\n", e.n, n_gpus,
               wait_mode && !strcmp(wait_mode, "callback") ? "host function (fallback)" : "cuStreamWaitValue32");
    }
    zb_device_config dc = {e.rank, e.rank, 0, 120.0, NULL};
    ZB_CHECK_OK(zb_device_create("cuda", &dc, &e.dev));
    if (!e.dev) return zb_test_finish("test_comm_mpi_cuda");
    ZB_CHECK(!zb_dev_mem_is_host(e.dev) && zb_dev_runs_host_code(e.dev));
    ZB_CHECK_OK(e.dev->ops->stream_create(e.dev, "comm", &e.streams[0]));
    ZB_CHECK_OK(e.dev->ops->stream_create(e.dev, "compute", &e.streams[1]));
    zb_comm_config cc = {60.0};
    ZB_CHECK_OK(zb_comm_mpi_create(e.dev, e.streams, 2, &cc, &e.comm));
    if (e.comm) {
        ZB_CHECK(!strcmp(e.comm->ops->name, "mpi") && e.comm->rank == e.rank && e.comm->n_ranks == e.n);
        check_stream_order(&e);
        check_opposite_orders(&e);
        zb_mem_stats ms;
        e.dev->ops->mem_stats(e.dev, &ms);
        ZB_CHECK_MSG(ms.live_bytes[ZB_MEM_HOST_STAGING] >= ((size_t)5 << 20) * sizeof(float) * (size_t)e.n &&
                     ms.live_bytes[ZB_MEM_HOST_STAGING] % ZB_STAGE_GRANULE_BYTES == 0,
                     "staging bytes counted: %zu", ms.live_bytes[ZB_MEM_HOST_STAGING]);
        zb_comm_destroy(e.comm);
        e.dev->ops->mem_stats(e.dev, &ms);
        ZB_CHECK_MSG(ms.live_bytes[ZB_MEM_HOST_STAGING] == 0, "staging left after destroy: %zu bytes",
                     ms.live_bytes[ZB_MEM_HOST_STAGING]);
    }
    e.dev->ops->stream_destroy(e.streams[0]);
    e.dev->ops->stream_destroy(e.streams[1]);
    zb_dev_destroy(e.dev);
    int failures = zb_test_failures, all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    zb_mpi_finalize();
    if (e.rank != 0) return failures ? 1 : 0;
    int rc = zb_test_finish("test_comm_mpi_cuda");
    return all ? 1 : rc;
}
