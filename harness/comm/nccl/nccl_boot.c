/* NCCL bootstrap helpers in plain C: the unique-id broadcast over MPI and the
 * version text (see nccl_boot.h). */
#include "nccl_boot.h"

#include <stdint.h>
#include <stdio.h>
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
