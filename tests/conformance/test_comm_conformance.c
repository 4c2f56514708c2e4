/* The comm interface's contract (comm.h) on every (device, comm) pair the
 * registry lists that can run here (conformance.h): a device backend that
 * is built and usable on every rank, and a comm backend that is built and
 * whose device_only (if any) is that device. A pair that cannot run is
 * skipped with one line saying why; so is one whose create refuses this
 * machine on some rank (ZB_ERR_UNSUPPORTED); any other create failure fails.
 * Checked, element by element (tests/coll_check.h: guards, recv written in
 * full, send untouched where comm.h makes it an input only), on buffers from the
 * device: all-gather, reduce-scatter and all-reduce, out of place and in
 * place, float and bf16, counts 1, 7, 1000, 1023 and 65537 (not multiples
 * of the rank count), alternating between the two streams the comm was
 * created for; the sent-bytes counters against comm.h's formula; a barrier;
 * a collective on a stream the comm does not know is refused with
 * ZB_ERR_INVALID naming the stream. Run with 1, 2, 3 and 4 ranks. Argument:
 * one device backend name to check alone (exit 77 when it cannot run
 * here). Backend-specific checks stay in tests/mpi/test_collectives_staged.c
 * and tests/gpu/test_comm_*.c. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "coll_check.h"
#include "comm.h"
#include "conformance.h"
#include "mpi_boot.h"

#define SUITE "test_comm_conformance"

typedef struct env {
    const char *pair; /* "cpu x mpi" */
    bool data;        /* the device holds data: results can be compared */
    zb_device *dev;
    zb_stream *streams[2];
    zb_comm *comm;
    int rank, n;
} env;

static void check_collectives(env *e) {
    for (size_t i = 0; i < ZB_COLL_N_CASES; i++) {
        zb_coll_case k = zb_coll_case_at(i);
        zb_stream *s = e->streams[k.stream];
        zb_coll_bufs b;
        if (zb_coll_bufs_make(s, e->rank, e->n, &b, k.kind, k.count, k.t, k.in_place)) {
            ZB_CHECK_OK(zb_coll_bufs_issue(e->comm, s, &b));
            ZB_CHECK_OK(zb_comm_wait(e->comm, s, "conformance", -1));
        }
        long w = zb_coll_bufs_check(s, &b);
        ZB_CHECK_MSG(w == 0, "%s: rank %d %s %s count %zu %s on '%s': %ld wrong", e->pair, e->rank,
                     zb_coll_name(k.kind), zb_dtype_name(k.t), k.count,
                     k.in_place ? "in place" : "out of place", s->name, w);
    }
}

static void check_sent_bytes_and_barrier(env *e) {
    zb_stream *s = e->streams[0];
    static const zb_coll kinds[] = {ZB_COLL_ALLGATHER, ZB_COLL_REDUCESCATTER, ZB_COLL_ALLREDUCE};
    for (int ki = 0; ki < 3; ki++) {
        memset(e->comm->sent_bytes, 0, sizeof e->comm->sent_bytes);
        zb_coll_bufs b;
        if (zb_coll_bufs_make(s, e->rank, e->n, &b, kinds[ki], 100, ZB_DTYPE_F32, false)) {
            ZB_CHECK_OK(zb_coll_bufs_issue(e->comm, s, &b));
            ZB_CHECK_OK(zb_comm_wait(e->comm, s, "conformance", -1));
        }
        if (e->data) ZB_CHECK(zb_coll_bufs_check(s, &b) == 0);
        uint64_t want = zb_coll_sent_bytes(kinds[ki], 100, 4, e->n);
        ZB_CHECK_MSG(e->comm->sent_bytes[kinds[ki]] == want, "%s: %s of 100 floats counted %llu "
                     "bytes sent, the formula says %llu", e->pair, zb_coll_name(kinds[ki]),
                     (unsigned long long)e->comm->sent_bytes[kinds[ki]], (unsigned long long)want);
    }
    /* the formula itself: all-reduce 2 * 400 * (n-1) / n */
    ZB_CHECK(zb_coll_sent_bytes(ZB_COLL_ALLREDUCE, 100, 4, e->n) ==
             2ull * 400 * (uint64_t)(e->n - 1) / (uint64_t)e->n);
    ZB_CHECK_OK(zb_comm_barrier(e->comm, e->streams[1]));
    ZB_CHECK_OK(zb_comm_wait(e->comm, e->streams[1], "barrier", -1));
}

static void check_unknown_stream(env *e) {
    zb_stream *stranger = NULL;
    ZB_CHECK_OK(e->dev->ops->stream_create(e->dev, "stranger", &stranger));
    if (!stranger) return;
    void *x = NULL;
    ZB_CHECK_OK(zb_dev_alloc(e->dev, 64, ZB_MEM_BENCH_BUFFER, &x));
    zb_status st = zb_comm_allreduce(e->comm, stranger, x, x, 4, ZB_DTYPE_F32, "ar", -1);
    ZB_CHECK_MSG(st == ZB_ERR_INVALID && strstr(zb_error_message(), "stranger") != NULL,
                 "%s: a collective on an unknown stream: %s '%s'", e->pair, zb_status_name(st),
                 zb_error_message());
    zb_error_clear();
    /* the comm still works */
    ZB_CHECK_OK(zb_comm_allreduce(e->comm, e->streams[0], x, x, 4, ZB_DTYPE_F32, "ar", -1));
    ZB_CHECK_OK(zb_comm_wait(e->comm, e->streams[0], "conformance", -1));
    if (x) zb_dev_free(e->dev, x);
    e->dev->ops->stream_destroy(stranger);
}

/* True on every rank when `ok` is true on every rank. */
static bool all_ranks(bool ok) {
    int mine = ok ? 1 : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all == 1;
}

/* Every comm backend that can run on device backend db. Returns the pairs
 * checked. */
static int check_device(const zb_device_backend *db, int rank, int n) {
    size_t n_comms = 0;
    const zb_comm_backend *const *comms = zb_comm_backends(&n_comms);
    zb_device *dev = zc_device_create(db, rank, 60.0);
    if (!all_ranks(dev != NULL)) {
        zb_dev_destroy(dev);
        return 0;
    }
    int checked = 0;
    for (size_t i = 0; i < n_comms; i++) {
        const zb_comm_backend *cb = comms[i];
        char pair[64];
        snprintf(pair, sizeof pair, "%s x %s", db->name, cb->name);
        if (cb->not_built) {
            if (rank == 0) printf("%s: %s: skipped: %s not built (%s)\n", SUITE, pair, cb->name, cb->not_built);
            continue;
        }
        if (cb->device_only && strcmp(cb->device_only, db->name) != 0) {
            if (rank == 0) printf("%s: %s: skipped: %s runs on %s only\n", SUITE, pair, cb->name, cb->device_only);
            continue;
        }
        if (db->simulated && !cb->device_only) {
            if (rank == 0) printf("%s: %s: skipped: a simulated device runs only the comm made for it\n", SUITE, pair);
            continue;
        }
        env e = {pair, true, dev, {NULL, NULL}, NULL, rank, n};
        ZB_CHECK_OK(dev->ops->stream_create(dev, "comm", &e.streams[0]));
        ZB_CHECK_OK(dev->ops->stream_create(dev, "compute", &e.streams[1]));
        zb_comm_config cc = {30.0};
        zb_status st = cb->create(dev, e.streams, 2, &cc, &e.comm);
        int refused = st == ZB_ERR_UNSUPPORTED, any_refused = 0;
        MPI_Allreduce(&refused, &any_refused, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (any_refused) {
            printf("%s: %s: skipped on rank %d: %s\n", SUITE, pair, rank,
                   st == ZB_OK ? "another rank cannot create it" : zb_error_message());
            zb_error_clear();
        } else {
            ZB_CHECK_MSG(st == ZB_OK, "%s: rank %d: create: %s: %s", pair, rank, zb_status_name(st),
                         zb_error_message());
        }
        if (!any_refused && all_ranks(st == ZB_OK)) {
            if (rank == 0) printf("%s: %s: checking on %d rank(s)\n", SUITE, pair, n);
            int failures_before = zb_test_failures;
            ZB_CHECK(e.comm->rank == rank && e.comm->n_ranks == n && e.comm->dev == dev);
            e.data = zc_holds_data(SUITE, db, "collectives element by element");
            if (e.data) check_collectives(&e);
            check_sent_bytes_and_barrier(&e);
            check_unknown_stream(&e);
            checked++;
            printf("%s: %s: rank %d %s\n", SUITE, pair, rank,
                   zb_test_failures == failures_before ? "conforms" : "FAILED");
        }
        zb_comm_destroy(e.comm);
        if (e.streams[0]) dev->ops->stream_destroy(e.streams[0]);
        if (e.streams[1]) dev->ops->stream_destroy(e.streams[1]);
    }
    zb_dev_destroy(dev);
    return checked;
}

int main(int argc, char **argv) {
    if (zb_mpi_init(&argc, &argv) != ZB_OK) {
        fprintf(stderr, "%s\n", zb_error_message());
        return 1;
    }
    int rank = 0, n = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *only = zc_only(argc, argv);
    size_t n_devices = 0;
    const zb_device_backend *const *devices = zb_device_backends(&n_devices);
    int checked = 0;
    for (size_t i = 0; i < n_devices; i++) {
        /* Each rank probes its own machine; a pair runs only where all can. */
        bool usable = zc_device_usable_say(SUITE, devices[i], only, rank == 0);
        if (!all_ranks(usable)) {
            if (usable) printf("%s: %s: skipped: not usable on every rank\n", SUITE, devices[i]->name);
            continue;
        }
        checked += check_device(devices[i], rank, n);
    }
    int failures = zb_test_failures, all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    zb_mpi_finalize();
    if (rank != 0) return failures ? 1 : (checked == 0 && only ? ZC_SKIP : 0);
    int rc = zc_finish(SUITE, only, checked);
    return all && rc != ZC_SKIP ? 1 : rc;
}
