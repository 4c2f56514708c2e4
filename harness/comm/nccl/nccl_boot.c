/* NCCL bootstrap helpers in plain C: the unique-id broadcast over MPI and the
 * version text (see nccl_boot.h). */
#include "nccl_boot.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_wait.h"

/* What the root broadcasts: its status and message travel with the id so a
 * failure on the root reaches every rank in the same single broadcast. */
typedef struct id_packet {
    int32_t status;
    unsigned char id[ZB_NCCL_ID_BYTES];
    char message[ZB_ERROR_MAX];
} id_packet;

zb_status zb_nccl_bcast_id(MPI_Comm comm, zb_nccl_make_id_fn make_id, void *ctx, double timeout_s,
                           unsigned char id[ZB_NCCL_ID_BYTES]) {
    int rank = 0, world_rank = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    id_packet pkt;
    memset(&pkt, 0, sizeof pkt);
    if (rank == 0) {
        zb_status st = make_id(ctx, pkt.id);
        pkt.status = (int32_t)st;
        if (st != ZB_OK) snprintf(pkt.message, sizeof pkt.message, "%s", zb_error_message());
    }
    ZB_TRY(zb_mpi_bcast_bounded(&pkt, (int)sizeof pkt, MPI_BYTE, 0, comm, "broadcasting the NCCL unique id",
                                timeout_s));
    if (pkt.status != (int32_t)ZB_OK) {
        /* A code out of range would be a corrupt packet: call it an MPI error. */
        if (pkt.status < 0 || pkt.status > (int32_t)ZB_ERR_INTERNAL) pkt.status = ZB_ERR_MPI;
        pkt.message[sizeof pkt.message - 1] = '\0';
        return ZB_FAIL((zb_status)pkt.status,
                       "rank %d: rank 0 could not create the NCCL unique id: %s", world_rank,
                       pkt.message[0] ? pkt.message : "no message");
    }
    memcpy(id, pkt.id, ZB_NCCL_ID_BYTES);
    return ZB_OK;
}

void zb_nccl_version_text(int code, char *out, size_t out_size) {
    if (out_size == 0) return;
    if (code < 0) {
        snprintf(out, out_size, "unknown");
        return;
    }
    int major, minor, patch;
    if (code < 10000) {
        major = code / 1000;
        minor = (code % 1000) / 100;
        patch = code % 100;
    } else {
        major = code / 10000;
        minor = (code % 10000) / 100;
        patch = code % 100;
    }
    snprintf(out, out_size, "%d.%d.%d", major, minor, patch);
}

zb_status zb_nccl_check_gpus(MPI_Comm comm, const char *gpu_id, double timeout_s) {
    int n = 0, world_rank = 0;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    char mine[ZB_NCCL_GPU_ID_BYTES];
    memset(mine, 0, sizeof mine);
    snprintf(mine, sizeof mine, "%s", gpu_id ? gpu_id : "");
    char *ids = (char *)calloc((size_t)n, ZB_NCCL_GPU_ID_BYTES);
    /* Not agreed on: this rank's failure ends the job (main aborts). */
    if (!ids) return ZB_FAIL(ZB_ERR_NOMEM, "rank %d: out of memory gathering %d ranks' GPU ids", world_rank, n);
    zb_status st = zb_mpi_allgather_bounded(mine, ids, ZB_NCCL_GPU_ID_BYTES, MPI_CHAR, comm,
                                            "gathering the ranks' GPU ids", timeout_s);
    /* The same ids on every rank, so the same verdict. */
    for (int a = 0; a < n && st == ZB_OK; a++) {
        const char *ia = ids + (size_t)a * ZB_NCCL_GPU_ID_BYTES;
        for (int b = a + 1; b < n && ia[0] && st == ZB_OK; b++) {
            if (strncmp(ia, ids + (size_t)b * ZB_NCCL_GPU_ID_BYTES, ZB_NCCL_GPU_ID_BYTES) != 0) continue;
            st = ZB_FAIL(ZB_ERR_UNSUPPORTED, "rank %d: ranks %d and %d share GPU %.*s; NCCL needs one GPU per "
                         "rank (--comm mpi lets ranks share a GPU)", world_rank, a, b, ZB_NCCL_GPU_ID_BYTES - 1, ia);
        }
    }
    free(ids);
    return st;
}
