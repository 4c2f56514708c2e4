/* The gather of every trace export (see trace_gather.h). */
#include "trace_gather.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_wait.h"

/* Gathers every rank's `mine_bytes` bytes to rank 0: *all (malloc'ed there)
 * and each rank's byte count (*counts, malloc'ed there). On a timeout the
 * buffers may still be MPI's (mpi_wait.h): they are not freed. */
static zb_status gather_blob(const void *mine_ptr, size_t mine_bytes, const char *what, double timeout_s,
                             char **all, int **counts_out) {
    int rank, n_ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n_ranks);
    *all = NULL;
    *counts_out = NULL;
    bool mine_too_big = mine_bytes > 0x7fffffffULL;
    int mine = mine_too_big ? 0 : (int)mine_bytes;
    int *counts = rank == 0 ? (int *)calloc((size_t)n_ranks, sizeof(int)) : NULL;
    int *offsets = rank == 0 ? (int *)calloc((size_t)n_ranks, sizeof(int)) : NULL;
    /* Not agreed on: rank 0's failure ends the job (main aborts). */
    if (rank == 0 && (!counts || !offsets)) {
        free(counts);
        free(offsets);
        return ZB_FAIL(ZB_ERR_NOMEM, "out of memory gathering the trace %ss of %d ranks", what, n_ranks);
    }
    char label[96];
    snprintf(label, sizeof label, "gathering the trace %s counts", what);
    ZB_TRY(zb_mpi_gather_bounded(&mine, counts, 1, MPI_INT, 0, MPI_COMM_WORLD, label, timeout_s));
    long long total = 0;
    if (rank == 0) {
        for (int r = 0; r < n_ranks; r++) {
            offsets[r] = (int)(total < 0x7fffffffLL ? total : 0);
            total += counts[r];
        }
    }
    int too_big = (total > 0x7fffffffLL) || mine_too_big, any_too_big = 0;
    snprintf(label, sizeof label, "agreeing on the trace %ss' size", what);
    ZB_TRY(zb_mpi_allreduce_bounded(&too_big, &any_too_big, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, label, timeout_s));
    char *buf = (rank == 0 && !any_too_big) ? (char *)malloc((size_t)total + 1) : NULL;
    if (rank == 0 && !any_too_big && !buf) { /* as above: the job ends */
        free(counts);
        free(offsets);
        return ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the trace's %lld bytes of %ss", total, what);
    }
    if (!any_too_big) {
        snprintf(label, sizeof label, "gathering the trace %ss", what);
        ZB_TRY(zb_mpi_gatherv_bounded(mine_ptr, mine, buf, counts, offsets, MPI_BYTE, 0, MPI_COMM_WORLD, label,
                                      timeout_s));
    }
    free(offsets);
    if (any_too_big) {
        free(counts);
        return ZB_FAIL(ZB_ERR_UNSUPPORTED, "the trace %ss are larger than 2 GiB; write fewer steps "
                       "(--trace-steps) or run fewer iterations", what);
    }
    *all = buf;
    *counts_out = counts;
    return ZB_OK;
}

/* Every rank's host name, ZB_TRACE_HOST_MAX bytes each. */
static zb_status gather_hosts(double timeout_s, char **hosts) {
    char mine[ZB_TRACE_HOST_MAX];
    memset(mine, 0, sizeof mine);
    if (gethostname(mine, sizeof mine - 1) != 0) snprintf(mine, sizeof mine, "unknown");
    int *counts = NULL;
    zb_status st = gather_blob(mine, sizeof mine, "host name", timeout_s, hosts, &counts);
    free(counts);
    return st;
}

static void shift_all(zb_trace_export_input *in, const zb_clock_sync *sync) {
    for (size_t i = 0; i < in->n_records; i++) {
        int64_t off = zb_clock_sync_offset(sync, in->records[i].rank);
        in->records[i].start_ns += off;
        in->records[i].end_ns += off;
    }
    for (size_t i = 0; i < in->n_steps; i++) {
        int64_t off = zb_clock_sync_offset(sync, in->step_rank[i]);
        in->steps[i].start_ns += off;
        in->steps[i].end_ns += off;
    }
    for (size_t i = 0; i < in->n_mem; i++) in->mem[i].time_ns += zb_clock_sync_offset(sync, in->mem_rank[i]);
}

/* Which rank each gathered element came from, from the per-rank byte counts. */
static int *ranks_of(const int *counts, int n_ranks, size_t elem_bytes, size_t n) {
    int *r = (int *)malloc((n ? n : 1) * sizeof(int));
    if (!r) return NULL;
    size_t k = 0;
    for (int q = 0; q < n_ranks; q++) {
        for (size_t j = 0; j < (size_t)counts[q] / elem_bytes && k < n; j++) r[k++] = q;
    }
    return r;
}

void zb_trace_export_input_free(zb_trace_export_input *in) {
    free(in->records);
    free(in->steps);
    free(in->step_rank);
    free(in->mem);
    free(in->mem_rank);
    free(in->hosts);
}

zb_status zb_trace_gather(const zb_trace *t, const zb_clock_sync *sync, double timeout_s, zb_trace_export_input *in) {
    int rank, n_ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n_ranks);
    memset(in, 0, sizeof *in);
    in->trace = t;
    in->n_ranks = n_ranks;
    char *blob = NULL;
    int *counts = NULL;
    ZB_TRY(gather_blob(t->records, t->n_records * sizeof(zb_trace_record), "record", timeout_s, &blob, &counts));
    in->records = (zb_trace_record *)blob;
    for (int r = 0; rank == 0 && r < n_ranks; r++) in->n_records += (size_t)counts[r] / sizeof(zb_trace_record);
    free(counts);
    zb_status st = gather_blob(t->steps, t->n_steps * sizeof(zb_trace_step), "step", timeout_s, &blob, &counts);
    if (st != ZB_OK) return st; /* a timeout: the job ends */
    in->steps = (zb_trace_step *)blob;
    for (int r = 0; rank == 0 && r < n_ranks; r++) in->n_steps += (size_t)counts[r] / sizeof(zb_trace_step);
    if (rank == 0) in->step_rank = ranks_of(counts, n_ranks, sizeof(zb_trace_step), in->n_steps);
    free(counts);
    st = gather_blob(t->mem, t->n_mem * sizeof(zb_trace_mem_sample), "memory sample", timeout_s, &blob, &counts);
    if (st != ZB_OK) return st;
    in->mem = (zb_trace_mem_sample *)blob;
    for (int r = 0; rank == 0 && r < n_ranks; r++) in->n_mem += (size_t)counts[r] / sizeof(zb_trace_mem_sample);
    if (rank == 0) in->mem_rank = ranks_of(counts, n_ranks, sizeof(zb_trace_mem_sample), in->n_mem);
    free(counts);
    unsigned long long dropped_mine[2] = {t->n_mem_dropped, t->n_dropped}, dropped[2] = {0, 0};
    st = zb_mpi_allreduce_bounded(dropped_mine, dropped, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD,
                                  "summing the trace's losses", timeout_s);
    if (st == ZB_OK) st = gather_hosts(timeout_s, &in->hosts);
    if (st != ZB_OK) return st;
    in->mem_dropped = (size_t)dropped[0];
    in->records_dropped = (size_t)dropped[1];
    if (rank != 0) {
        zb_trace_export_input_free(in);
        memset(in, 0, sizeof *in);
        return ZB_OK;
    }
    if ((in->n_steps && !in->step_rank) || (in->n_mem && !in->mem_rank)) {
        zb_trace_export_input_free(in);
        return ZB_FAIL(ZB_ERR_NOMEM, "out of memory gathering the trace");
    }
    /* Onto rank 0's clock: copies gathered for the file, never the records
     * the metrics read. */
    shift_all(in, sync);
    return ZB_OK;
}

void zb_trace_describe(json_t *obj, const zb_trace *t, const zb_clock_sync *sync, const json_t *info) {
    json_object_set_new(obj, "clock", json_string(t->virtual_time
                                                      ? "virtual: the sim device's clock (simulated, no real time)"
                                                      : "rank 0's CLOCK_MONOTONIC; each rank shifted by offset_ns"));
    if (sync) json_object_set_new(obj, "clock_sync", zb_clock_sync_json(sync));
    json_object_set_new(obj, "simulated", json_boolean(t->virtual_time));
    if (info) json_object_update(obj, (json_t *)info);
}
