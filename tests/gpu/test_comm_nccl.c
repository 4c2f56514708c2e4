/* What only the NCCL comm promises, on one GPU with one rank (label gpu;
 * exit 77 = skipped when no GPU is usable); every collective, element by
 * element, is checked on every (device, comm) pair by
 * tests/conformance/test_comm_conformance.c (test_comm_conformance_cuda).
 * Here: the meta's NCCL version; the refusals (zb_comm_nccl_wait on a
 * stream the comm does not know, a dtype NCCL is not given, a comm that is
 * not nccl); and the timeout path, twice: a stream blocked by a host
 * function makes zb_comm_nccl_wait give up after 1 s (the comm is created
 * under 60 s, which also bounds NCCL's init, then lowered to 1 s),
 * abort the communicator, name the rank and the op and unit (the pending
 * collective's when one is queued), and refuse every later collective.
 * The block is released by a thread after at most 8 s whatever happens (a
 * bound on a hang, not on speed). */
#include <cuda_runtime_api.h>
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"
#include "comm_mpi.h"
#include "comm_nccl.h"
#include "cuda_backend.h"
#include "mpi_boot.h"
#include "nccl_boot.h"
#include "zb_test.h"
#include "dtype_access.h"

#define SKIP 77

typedef struct env {
    zb_device *dev;
    zb_stream *streams[2];
    zb_comm *comm;
} env;

static bool cuda_ok(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return true;
    char msg[256];
    snprintf(msg, sizeof msg, "%s: %s", what, cudaGetErrorString(e));
    zb_test_fail(__FILE__, __LINE__, msg);
    return false;
}

static void check_refusals(env *e) {
    zb_stream *other = NULL;
    ZB_CHECK_OK(e->dev->ops->stream_create(e->dev, "other", &other));
    float *buf = NULL;
    if (!cuda_ok(cudaMalloc((void **)&buf, 64), "cudaMalloc")) return;
    ZB_CHECK(zb_comm_allreduce(e->comm, other, buf, buf, 4, ZB_DTYPE_F32, "x", 0) ==
             ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "'other'") != NULL);
    ZB_CHECK(zb_comm_nccl_wait(e->comm, other, "w", 0) == ZB_ERR_INVALID);
    ZB_CHECK(zb_comm_allreduce(e->comm, e->streams[0], buf, buf, 4, ZB_DTYPE_COUNT, "x", 0) ==
             ZB_ERR_UNSUPPORTED);
    /* The comm still works after refusals. */
    ZB_CHECK_OK(zb_comm_allreduce(e->comm, e->streams[0], buf, buf, 4, ZB_DTYPE_F32, "x", 0));
    ZB_CHECK_OK(zb_comm_nccl_wait(e->comm, e->streams[0], "w", 0));
    cudaFree(buf);
    e->dev->ops->stream_destroy(other);
}

/* ---- the timeout path ---------------------------------------------------- */

static atomic_int release_flag;

/* Runs on CUDA's callback thread and holds the stream until released. */
static void block_stream(void *arg) {
    (void)arg;
    struct timespec ms = {0, 1000000};
    while (!atomic_load(&release_flag)) nanosleep(&ms, NULL);
}

/* Releases the blocked stream after 8 s whatever happens, so a test that
 * goes wrong (an abort that waits for the stream) fails instead of hanging. */
static void *release_later(void *arg) {
    (void)arg;
    for (int i = 0; i < 800 && !atomic_load(&release_flag); i++) {
        struct timespec ms = {0, 10000000};
        nanosleep(&ms, NULL);
    }
    atomic_store(&release_flag, 1);
    return NULL;
}

static void check_timeout(env *e, bool queue_collective) {
    zb_stream *s = NULL;
    ZB_CHECK_OK(e->dev->ops->stream_create(e->dev, queue_collective ? "blocked2" : "blocked1", &s));
    if (!s) return;
    /* Created with a generous timeout: it also bounds the non-blocking
     * ncclCommInitRankConfig, which can take seconds in a VM. Only the
     * deliberately blocked wait below gets 1 s (the wait reads cfg then). */
    zb_comm_config cc = {60.0};
    zb_comm *comm = NULL;
    ZB_CHECK_OK(zb_comm_nccl_create(e->dev, &s, 1, &cc, &comm));
    if (!comm) return;
    comm->cfg.timeout_s = 1.0;
    float *buf = NULL;
    if (!cuda_ok(cudaMalloc((void **)&buf, 4096), "cudaMalloc")) return;
    cudaStream_t cs = (cudaStream_t)zb_cuda_stream_handle(s);

    atomic_store(&release_flag, 0);
    pthread_t releaser;
    pthread_create(&releaser, NULL, release_later, NULL);
    ZB_CHECK(cuda_ok(cudaLaunchHostFunc(cs, block_stream, NULL), "cudaLaunchHostFunc"));
    zb_status st = ZB_OK;
    if (queue_collective) {
        /* Either the enqueue itself stays in progress past the timeout or
         * the wait does: the message names the collective both ways. */
        st = zb_comm_allreduce(comm, s, buf, buf + 512, 512, ZB_DTYPE_F32, "blocked.allreduce",
                                  11);
    }
    if (st == ZB_OK) st = zb_comm_wait(comm, s, "blocked_wait", 9); /* the front end reaches the named wait */
    atomic_store(&release_flag, 1);
    pthread_join(releaser, NULL);

    ZB_CHECK(st == ZB_ERR_TIMEOUT);
    const char *msg = zb_error_message();
    const char *want = queue_collective
        ? "rank 0: allreduce 'blocked.allreduce' (unit 11) did not complete within 1 s (--timeout)"
        : "rank 0: blocked_wait 'blocked1' (unit 9) did not complete within 1 s (--timeout)";
    ZB_CHECK_MSG(strstr(msg, want) != NULL, "message: %s", msg);
    ZB_CHECK_MSG(strstr(msg, "aborted") != NULL, "message: %s", msg);
    /* Aborted: every later call fails at once, naming the op. */
    st = zb_comm_allgather(comm, s, buf, buf, 4, ZB_DTYPE_F32, "after", 12);
    ZB_CHECK(st == ZB_ERR_MPI);
    ZB_CHECK_MSG(strstr(zb_error_message(), "allgather 'after' (unit 12) not issued") != NULL,
                 "message: %s", zb_error_message());
    ZB_CHECK(zb_comm_nccl_wait(comm, s, "again", 13) == ZB_ERR_MPI);
    /* Released, the stream drains. */
    ZB_CHECK(cuda_ok(cudaStreamSynchronize(cs), "cudaStreamSynchronize after release"));
    zb_comm_destroy(comm);
    cudaFree(buf);
    e->dev->ops->stream_destroy(s);
}

int main(int argc, char **argv) {
    int n_gpus = 0;
    char why[256] = "";
    if (zb_cuda_probe(&n_gpus, why, sizeof why) != ZB_OK || n_gpus < 1) {
        printf("test_comm_nccl: skipped: %s\n", why[0] ? why : "no GPU");
        return SKIP;
    }
    if (zb_mpi_init(&argc, &argv) != ZB_OK) {
        fprintf(stderr, "test_comm_nccl: %s\n", zb_error_message());
        return 1;
    }
    int n_ranks = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n_ranks);
    if (n_ranks != 1) {
        printf("test_comm_nccl: skipped: runs with one rank, not %d\n", n_ranks);
        zb_mpi_finalize();
        return SKIP;
    }

    env e;
    memset(&e, 0, sizeof e);
    zb_device_config dc = {0, 0, 0, 120.0, NULL};
    ZB_CHECK_OK(zb_device_cuda_create(&dc, &e.dev));
    if (!e.dev) return zb_test_finish("test_comm_nccl");
    ZB_CHECK_OK(e.dev->ops->stream_create(e.dev, "compute", &e.streams[0]));
    ZB_CHECK_OK(e.dev->ops->stream_create(e.dev, "comm", &e.streams[1]));
    zb_comm_config cc = {60.0};
    ZB_CHECK_OK(zb_comm_nccl_create(e.dev, e.streams, 2, &cc, &e.comm));
    if (!e.comm) return zb_test_finish("test_comm_nccl");
    ZB_CHECK(strcmp(e.comm->ops->name, "nccl") == 0);
    ZB_CHECK(e.comm->rank == 0 && e.comm->n_ranks == 1);

    json_t *meta = json_object();
    ZB_CHECK_OK(zb_nccl_meta(meta));
    const char *v = json_string_value(json_object_get(meta, "nccl_version"));
    printf("test_comm_nccl: NCCL %s (built with %s)\n", v ? v : "?",
           json_string_value(json_object_get(meta, "nccl_version_built")));
    json_decref(meta);

    check_refusals(&e);
    zb_comm_destroy(e.comm);

    /* A comm that is not nccl is refused by the nccl wait. */
    zb_comm *mpi = NULL;
    ZB_CHECK_OK(zb_comm_mpi_create(e.dev, e.streams, 1, &cc, &mpi));
    if (mpi) {
        ZB_CHECK(zb_comm_nccl_wait(mpi, e.streams[0], "w", 0) == ZB_ERR_INVALID);
        zb_comm_destroy(mpi);
    }

    check_timeout(&e, false); /* nothing of NCCL's queued: names the wait */
    check_timeout(&e, true);  /* a collective queued behind the block: names it */

    e.dev->ops->stream_destroy(e.streams[0]);
    e.dev->ops->stream_destroy(e.streams[1]);
    zb_dev_destroy(e.dev);
    int rc = zb_test_finish("test_comm_nccl");
    zb_mpi_finalize();
    return rc;
}
