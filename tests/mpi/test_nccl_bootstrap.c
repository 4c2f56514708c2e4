/* The NCCL unique-id broadcast (harness/comm/nccl/nccl_boot.c) with a fake id in place
 * of ncclGetUniqueId: only rank 0 of the communicator makes the id; every
 * rank receives the same 128 opaque bytes (zeros and high bytes included);
 * the root is rank 0 of the communicator given, not of MPI_COMM_WORLD; a
 * failure on the root reaches every rank with the root's message, and no
 * rank is left waiting. Run with 2 and 4 ranks. */
#include <mpi.h>
#include <string.h>

#include "mpi_boot.h"
#include "nccl_boot.h"
#include "zb_test.h"

typedef struct fake_maker {
    int calls;
    unsigned seed;
    bool fail;
} fake_maker;

static unsigned char pattern(unsigned seed, int i) {
    /* Zeros inside and bytes >= 0x80, so nothing string-like survives by luck. */
    if (i % 16 == 3) return 0;
    return (unsigned char)((unsigned)i * 37u + seed * 101u);
}

static zb_status make_fake(void *ctx, unsigned char id[ZB_NCCL_ID_BYTES]) {
    fake_maker *m = (fake_maker *)ctx;
    m->calls++;
    if (m->fail) return ZB_FAIL(ZB_ERR_MPI, "fake ncclGetUniqueId failed: no network (seed %u)", m->seed);
    for (int i = 0; i < ZB_NCCL_ID_BYTES; i++) id[i] = pattern(m->seed, i);
    return ZB_OK;
}

static bool id_is(const unsigned char *id, unsigned seed) {
    for (int i = 0; i < ZB_NCCL_ID_BYTES; i++) {
        if (id[i] != pattern(seed, i)) return false;
    }
    return true;
}

static int count_calls_everywhere(MPI_Comm comm, int calls) {
    int total = 0;
    MPI_Allreduce(&calls, &total, 1, MPI_INT, MPI_SUM, comm);
    return total;
}

int main(int argc, char **argv) {
    if (zb_mpi_init(&argc, &argv) != ZB_OK) return 1;
    int rank = 0, n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);

    /* The pattern really has zeros and high bytes in it. */
    bool zero = false, high = false;
    for (int i = 0; i < ZB_NCCL_ID_BYTES; i++) {
        zero |= pattern(7, i) == 0;
        high |= pattern(7, i) >= 0x80;
    }
    ZB_CHECK(zero && high);

    /* Every rank gets rank 0's bytes; only rank 0 made them. Non-root ranks
     * start from garbage of their own that must be overwritten. */
    fake_maker m = {0, 7u, false};
    unsigned char id[ZB_NCCL_ID_BYTES];
    memset(id, 0xa5 + rank, sizeof id);
    ZB_CHECK_OK(zb_nccl_bcast_id(MPI_COMM_WORLD, make_fake, &m, 60.0, id));
    ZB_CHECK(id_is(id, 7u));
    ZB_CHECK(m.calls == (rank == 0 ? 1 : 0));
    ZB_CHECK(count_calls_everywhere(MPI_COMM_WORLD, m.calls) == 1);

    /* On a split communicator the root is its own rank 0: world rank 1 for
     * the odd ranks. Each half gets its own id. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    fake_maker hm = {0, 100u + (unsigned)(rank % 2), false};
    memset(id, 0, sizeof id);
    ZB_CHECK_OK(zb_nccl_bcast_id(half, make_fake, &hm, 60.0, id));
    ZB_CHECK(id_is(id, 100u + (unsigned)(rank % 2)));
    ZB_CHECK(hm.calls == (rank < 2 ? 1 : 0));
    ZB_CHECK(count_calls_everywhere(MPI_COMM_WORLD, hm.calls) == (n >= 2 ? 2 : 1));
    MPI_Comm_free(&half);

    /* A failure on the root: every rank returns the root's status with the
     * root's message, naming itself; the id is left as it was. */
    fake_maker bad = {0, 42u, true};
    memset(id, 0x11, sizeof id);
    zb_status st = zb_nccl_bcast_id(MPI_COMM_WORLD, make_fake, &bad, 60.0, id);
    ZB_CHECK(st == ZB_ERR_MPI);
    const char *msg = zb_error_message();
    char want[96];
    snprintf(want, sizeof want, "rank %d: rank 0 could not create the NCCL unique id", rank);
    ZB_CHECK_MSG(strstr(msg, want) != NULL, "message: %s", msg);
    ZB_CHECK_MSG(strstr(msg, "fake ncclGetUniqueId failed: no network (seed 42)") != NULL,
                 "message: %s", msg);
    ZB_CHECK(id[0] == 0x11 && id[ZB_NCCL_ID_BYTES - 1] == 0x11);
    ZB_CHECK(bad.calls == (rank == 0 ? 1 : 0));

    /* After a failure the next broadcast still works (nothing left queued). */
    fake_maker again = {0, 9u, false};
    ZB_CHECK_OK(zb_nccl_bcast_id(MPI_COMM_WORLD, make_fake, &again, 60.0, id));
    ZB_CHECK(id_is(id, 9u));

    /* The GPU check: distinct ids pass; unknown ("") ids match nothing;
     * when the last rank holds rank 0's GPU every rank refuses alike,
     * naming the pair and the id. */
    char gpu[ZB_NCCL_GPU_ID_BYTES];
    snprintf(gpu, sizeof gpu, "GPU-fake-%d", rank);
    ZB_CHECK_OK(zb_nccl_check_gpus(MPI_COMM_WORLD, gpu, 60.0));
    ZB_CHECK_OK(zb_nccl_check_gpus(MPI_COMM_WORLD, "", 60.0));
    snprintf(gpu, sizeof gpu, "GPU-fake-%d", rank == n - 1 ? 0 : rank);
    st = zb_nccl_check_gpus(MPI_COMM_WORLD, gpu, 60.0);
    if (n > 1) {
        ZB_CHECK(st == ZB_ERR_UNSUPPORTED);
        snprintf(want, sizeof want, "rank %d: ranks 0 and %d share GPU GPU-fake-0;", rank, n - 1);
        ZB_CHECK_MSG(strstr(zb_error_message(), want) != NULL, "message: %s", zb_error_message());
        ZB_CHECK(strstr(zb_error_message(), "--comm mpi") != NULL);
    } else {
        ZB_CHECK_OK(st);
    }

    /* Every rank's verdict: rank 0 reports for all. */
    int failures = zb_test_failures, total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && total > failures) {
        fprintf(stderr, "FAIL: %d check(s) failed on other ranks\n", total - failures);
        zb_test_failures += total - failures;
    }
    int rc = zb_test_finish("test_nccl_bootstrap");
    zb_mpi_finalize();
    return rc;
}
