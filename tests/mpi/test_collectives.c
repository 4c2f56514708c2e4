/* Every collective of the MPI comm, checked element by element against
 * values computed here: all-gather, reduce-scatter and all-reduce, out of
 * place and in place, float and bf16, for counts that do and do not divide
 * evenly by the number of ranks (1, 7, 1000, 1023, 65537 elements), issued on
 * both streams the comm was created for. Also: the sent-bytes counters, a
 * barrier, and a collective on a stream the comm does not know. Run with 2
 * and 4 ranks. */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "dtype_access.h"
#include "comm.h"
#include "comm_mpi.h"
#include "mpi_boot.h"
#include "zb_test.h"
#include "device_cpu.h"

static const size_t counts[] = {1, 7, 1000, 1023, 65537};
#define N_COUNTS (sizeof counts / sizeof counts[0])
#define SEED 0x7e57ULL /* inputs and results: zb_coll_value and the records (coll.h) */

typedef struct env {
    zb_device *dev;
    zb_stream *streams[2];
    zb_comm *comm;
    int rank, n;
} env;

/* This rank's input in send, and its wrong elements of recv. */
static void fill(env *e, zb_coll kind, void *send, size_t count, zb_dtype t) {
    zb_coll_args a = {send, NULL, count, t, e->rank, e->n, false, SEED};
    zb_coll_fill_input(zb_coll_find(kind), &a);
}

static long count_wrong(env *e, zb_coll kind, const void *recv, size_t count, zb_dtype t) {
    const zb_coll_def *def = zb_coll_find(kind);
    zb_coll_args a = {NULL, (void *)recv, count, t, e->rank, e->n, false, SEED};
    long wrong = 0;
    size_t n = zb_coll_recv_elems(def, count, e->n);
    for (size_t j = 0; j < n; j++) wrong += zb_dtype_load(recv, j, t) != def->expected(&a, j);
    return wrong;
}

static long check_allgather(env *e, zb_stream *s, size_t count, zb_dtype t, bool in_place) {
    size_t es = zb_dtype_size(t);
    char *recv = (char *)calloc(count * (size_t)e->n, es);
    char *send = in_place ? recv + (size_t)e->rank * count * es : (char *)calloc(count, es);
    fill(e, ZB_COLL_ALLGATHER, send, count, t);
    ZB_CHECK_OK(e->comm->ops->allgather(e->comm, s, send, recv, count, t, "ag", 3));
    ZB_CHECK_OK(e->dev->ops->stream_sync(s));
    long wrong = count_wrong(e, ZB_COLL_ALLGATHER, recv, count, t);
    if (!in_place) free(send);
    free(recv);
    return wrong;
}

static long check_reducescatter(env *e, zb_stream *s, size_t count, zb_dtype t, bool in_place) {
    size_t es = zb_dtype_size(t), total = count * (size_t)e->n;
    char *send = (char *)calloc(total, es);
    char *recv = in_place ? send + (size_t)e->rank * count * es : (char *)calloc(count, es);
    fill(e, ZB_COLL_REDUCESCATTER, send, count, t);
    ZB_CHECK_OK(e->comm->ops->reducescatter(e->comm, s, send, recv, count, t, "rs", 3));
    ZB_CHECK_OK(e->dev->ops->stream_sync(s));
    long wrong = count_wrong(e, ZB_COLL_REDUCESCATTER, recv, count, t);
    if (!in_place) free(recv);
    free(send);
    return wrong;
}

static long check_allreduce(env *e, zb_stream *s, size_t count, zb_dtype t, bool in_place) {
    size_t es = zb_dtype_size(t);
    char *recv = (char *)calloc(count, es);
    char *send = in_place ? recv : (char *)calloc(count, es);
    fill(e, ZB_COLL_ALLREDUCE, send, count, t);
    ZB_CHECK_OK(e->comm->ops->allreduce(e->comm, s, send, recv, count, t, "ar", 3));
    ZB_CHECK_OK(e->dev->ops->stream_sync(s));
    long wrong = count_wrong(e, ZB_COLL_ALLREDUCE, recv, count, t);
    if (!in_place) free(send);
    free(recv);
    return wrong;
}

static void test_all(env *e) {
    for (int ti = 0; ti < 2; ti++) {
        zb_dtype t = ti == 0 ? ZB_DTYPE_F32 : ZB_DTYPE_BF16;
        for (size_t ci = 0; ci < N_COUNTS; ci++) {
            for (int ip = 0; ip < 2; ip++) {
                zb_stream *s = e->streams[(ci + (size_t)ip) % 2];
                size_t c = counts[ci];
                long ag = check_allgather(e, s, c, t, ip);
                long rs = check_reducescatter(e, s, c, t, ip);
                long ar = check_allreduce(e, s, c, t, ip);
                ZB_CHECK_MSG(ag == 0, "rank %d allgather %s count %zu in_place %d: %ld wrong", e->rank,
                             zb_dtype_name(t), c, ip, ag);
                ZB_CHECK_MSG(rs == 0, "rank %d reducescatter %s count %zu in_place %d: %ld wrong",
                             e->rank, zb_dtype_name(t), c, ip, rs);
                ZB_CHECK_MSG(ar == 0, "rank %d allreduce %s count %zu in_place %d: %ld wrong", e->rank,
                             zb_dtype_name(t), c, ip, ar);
            }
        }
    }
}

static void test_sent_bytes(env *e) {
    memset(e->comm->sent_bytes, 0, sizeof e->comm->sent_bytes);
    float *buf = (float *)calloc(100 * (size_t)e->n, sizeof(float));
    ZB_CHECK_OK(e->comm->ops->allgather(e->comm, e->streams[0], buf, buf + 100, 0, ZB_DTYPE_F32, "empty", -1));
    ZB_CHECK_OK(e->comm->ops->allreduce(e->comm, e->streams[0], buf, buf, 100, ZB_DTYPE_F32, "ar", -1));
    ZB_CHECK_OK(e->comm->ops->barrier(e->comm, e->streams[0]));
    ZB_CHECK_OK(e->dev->ops->stream_sync(e->streams[0]));
    ZB_CHECK(e->comm->sent_bytes[ZB_COLL_ALLGATHER] == 0);
    ZB_CHECK(e->comm->sent_bytes[ZB_COLL_ALLREDUCE] == 2ull * 400 * (uint64_t)(e->n - 1) / (uint64_t)e->n);
    free(buf);
}

static void test_unknown_stream(env *e) {
    zb_stream *stranger = NULL;
    ZB_CHECK_OK(e->dev->ops->stream_create(e->dev, "stranger", &stranger));
    float x = 1;
    zb_status st = e->comm->ops->allreduce(e->comm, stranger, &x, &x, 1, ZB_DTYPE_F32, "ar", -1);
    ZB_CHECK(st == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "stranger") != NULL);
    e->dev->ops->stream_destroy(stranger);
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
    ZB_CHECK_OK(e.dev->ops->stream_create(e.dev, "comm", &e.streams[0]));
    ZB_CHECK_OK(e.dev->ops->stream_create(e.dev, "compute", &e.streams[1]));
    zb_comm_config cc = {30};
    ZB_CHECK_OK(zb_comm_mpi_create(e.dev, e.streams, 2, &cc, &e.comm));
    ZB_CHECK(e.comm->rank == e.rank && e.comm->n_ranks == e.n);
    test_all(&e);
    test_sent_bytes(&e);
    test_unknown_stream(&e);
    zb_comm_destroy(e.comm);
    e.dev->ops->stream_destroy(e.streams[0]);
    e.dev->ops->stream_destroy(e.streams[1]);
    zb_dev_destroy(e.dev);
    int failures = zb_test_failures, all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    zb_mpi_finalize();
    if (e.rank != 0) return failures ? 1 : 0;
    int rc = zb_test_finish("test_collectives");
    return all ? 1 : rc;
}
