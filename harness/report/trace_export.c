/* Chrome trace-event export of the per-rank trace buffers (see trace_export.h). */
#include "trace_export.h"

#include <jansson.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "mpi_wait.h"
#include "report.h"

/* Gathers all ranks' records on rank 0; *all is malloc'ed there. On a
 * timeout the buffers may still be MPI's (mpi_wait.h): they are not freed. */
static zb_status gather_records(const zb_trace *t, double timeout_s, zb_trace_record **all, int *n_all) {
    int rank, n_ranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n_ranks);
    int mine = (int)(t->n_records * sizeof(zb_trace_record));
    int *counts = rank == 0 ? (int *)calloc((size_t)n_ranks, sizeof(int)) : NULL;
    int *offsets = rank == 0 ? (int *)calloc((size_t)n_ranks, sizeof(int)) : NULL;
    /* Not agreed on: rank 0's failure ends the job (main aborts). */
    if (rank == 0 && (!counts || !offsets)) {
        free(counts);
        free(offsets);
        return ZB_FAIL(ZB_ERR_NOMEM, "out of memory gathering the trace of %d ranks", n_ranks);
    }
    ZB_TRY(zb_mpi_gather_bounded(&mine, counts, 1, MPI_INT, 0, MPI_COMM_WORLD, "gathering the trace record counts",
                                 timeout_s));
    long long total = 0;
    if (rank == 0) {
        for (int r = 0; r < n_ranks; r++) {
            offsets[r] = (int)total;
            total += counts[r];
        }
    }
    bool too_big = total > 0x7fffffffLL;
    ZB_TRY(zb_mpi_bcast_bounded(&too_big, 1, MPI_C_BOOL, 0, MPI_COMM_WORLD, "broadcasting the trace size check",
                                timeout_s));
    char *buf = (rank == 0 && !too_big) ? (char *)malloc((size_t)total + 1) : NULL;
    if (rank == 0 && !too_big && !buf) { /* as above: the job ends */
        free(counts);
        free(offsets);
        return ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the trace's %lld bytes", total);
    }
    if (!too_big) {
        ZB_TRY(zb_mpi_gatherv_bounded(t->records, mine, buf, counts, offsets, MPI_BYTE, 0, MPI_COMM_WORLD,
                                      "gathering the trace records", timeout_s));
    }
    free(counts);
    free(offsets);
    if (too_big) return ZB_FAIL(ZB_ERR_UNSUPPORTED, "the trace is larger than 2 GiB; run fewer iterations");
    *all = (zb_trace_record *)buf;
    *n_all = (int)(total / (long long)sizeof(zb_trace_record));
    return ZB_OK;
}

static json_t *event_of(const zb_trace_record *r, int64_t t0) {
    json_t *e = json_object();
    json_object_set_new(e, "name", json_string(r->label));
    json_object_set_new(e, "cat", json_string(zb_op_kind_name(r->kind)));
    json_object_set_new(e, "ph", json_string("X"));
    json_object_set_new(e, "pid", json_integer(r->rank));
    json_object_set_new(e, "tid", json_integer(r->stream));
    json_object_set_new(e, "ts", json_real((double)(r->start_ns - t0) / 1e3));
    json_object_set_new(e, "dur", json_real((double)(r->end_ns - r->start_ns) / 1e3));
    json_t *args = json_object();
    json_object_set_new(args, "unit", json_integer(r->unit));
    json_object_set_new(args, "op", json_string(r->label));
    json_object_set_new(args, "kind", json_string(zb_op_kind_name(r->kind)));
    json_object_set_new(args, "bytes", json_integer((json_int_t)r->bytes));
    json_object_set_new(args, "flops", json_real(r->flops));
    json_object_set_new(e, "args", args);
    return e;
}

/* Metadata events that name each rank's process and stream threads, once
 * per distinct (rank, stream) pair. */
static void add_names(json_t *events, const zb_trace *t, const zb_trace_record *all, int n) {
    enum { MAX_PAIRS = 4096 };
    static int seen_rank[MAX_PAIRS], seen_stream[MAX_PAIRS];
    int n_seen = 0;
    for (int i = 0; i < n; i++) {
        bool seen = false;
        for (int j = 0; j < n_seen && !seen; j++) {
            seen = seen_rank[j] == all[i].rank && seen_stream[j] == all[i].stream;
        }
        if (seen || n_seen == MAX_PAIRS) continue;
        seen_rank[n_seen] = all[i].rank;
        seen_stream[n_seen++] = all[i].stream;
        char pname[32];
        snprintf(pname, sizeof pname, "rank %d", all[i].rank);
        int s = all[i].stream;
        const char *tname = (s >= 0 && s < 16 && t->stream_names[s][0]) ? t->stream_names[s] : "stream";
        json_array_append_new(events, json_pack("{s:s,s:s,s:i,s:i,s:{s:s}}", "name", "process_name",
                                                "ph", "M", "pid", all[i].rank, "tid", s, "args",
                                                "name", pname));
        json_array_append_new(events, json_pack("{s:s,s:s,s:i,s:i,s:{s:s}}", "name", "thread_name",
                                                "ph", "M", "pid", all[i].rank, "tid", s, "args",
                                                "name", tname));
    }
}

zb_status zb_trace_export_chrome(const zb_trace *t, const zb_clock_sync *sync, const char *path,
                                 double timeout_s) {
    return zb_trace_export_chrome_info(t, sync, path, timeout_s, NULL);
}

zb_status zb_trace_export_chrome_info(const zb_trace *t, const zb_clock_sync *sync, const char *path,
                                      double timeout_s, const json_t *info) {
    zb_trace_record *all = NULL;
    int n = 0;
    ZB_TRY(gather_records(t, timeout_s, &all, &n));
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) return ZB_OK;
    /* Onto rank 0's clock: a copy gathered for the file, never the records
     * the metrics read. */
    for (int i = 0; i < n; i++) {
        int64_t off = zb_clock_sync_offset(sync, all[i].rank);
        all[i].start_ns += off;
        all[i].end_ns += off;
    }
    int64_t t0 = n > 0 ? all[0].start_ns : 0;
    for (int i = 1; i < n; i++) {
        if (all[i].start_ns < t0) t0 = all[i].start_ns;
    }
    json_t *doc = json_object();
    json_t *events = json_array();
    add_names(events, t, all, n);
    for (int i = 0; i < n; i++) json_array_append_new(events, event_of(&all[i], t0));
    json_object_set_new(doc, "traceEvents", events);
    json_object_set_new(doc, "displayTimeUnit", json_string("ns"));
    if (sync || t->virtual_time || info) {
        json_t *other = json_object();
        json_object_set_new(other, "clock", json_string(t->virtual_time
                                                            ? "virtual: the sim device's clock (simulated, no real time)"
                                                            : "rank 0's CLOCK_MONOTONIC; each rank shifted by offset_ns"));
        if (sync) json_object_set_new(other, "clock_sync", zb_clock_sync_json(sync));
        json_object_set_new(other, "simulated", json_boolean(t->virtual_time));
        if (info) json_object_update(other, (json_t *)info);
        json_object_set_new(doc, "otherData", other);
    }
    size_t len = 0;
    char *text = zb_json_dump(doc, 0, &len);
    json_decref(doc);
    free(all);
    if (!text) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory writing the trace %s", path);
    zb_status st = zb_atomic_write(path, text, len);
    free(text);
    return st;
}
