/* The measured CPU peak, once per node, before any work (see peak_node.h). */
#include "peak_node.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_wait.h"
#include "overlap.h"
#include "trace.h"

/* Waits for `req` with a short sleep between tests, not a yielding spin:
 * a waiting rank must leave the cores to the rank that measures. */
static zb_status sleep_wait(MPI_Request *req, int rank, double timeout_s) {
    int64_t deadline = zb_mpi_deadline_ns(timeout_s);
    const struct timespec nap = {0, 1000000}; /* 1 ms */
    for (;;) {
        int done = 0;
        int rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return zb_mpi_call_failed(rc, "MPI_Test", "sharing the measured peak");
        if (done) return ZB_OK;
        if (zb_now_ns() > deadline) {
            return ZB_FAIL(ZB_ERR_TIMEOUT, "rank %d: sharing the measured peak did not complete within "
                           "%g s (--timeout)", rank, timeout_s > 0 ? timeout_s : ZB_MPI_WAIT_DEFAULT_S);
        }
        nanosleep(&nap, NULL);
    }
}

zb_status zb_peak_measure_node(const zb_topology *t, const zb_device_backend *dev, bool measure,
                               double timeout_s, zb_peak_measure *out) {
    memset(out, 0, sizeof *out);
    if (!measure || !dev || !dev->peak_gflops_per_core) return ZB_OK;
    zb_peak_measure mine;
    memset(&mine, 0, sizeof mine);
    mine.node = t->node;
    if (t->local_rank == 0) {
        double runs[ZB_PEAK_RUNS];
        const char *isa = "";
        mine.best_gflops = dev->peak_gflops_per_core(ZB_PEAK_SECONDS, ZB_PEAK_RUNS, runs, &isa);
        mine.measured = true;
        mine.runs = ZB_PEAK_RUNS;
        snprintf(mine.isa, sizeof mine.isa, "%s", isa);
        mine.min_gflops = zb_min(runs, ZB_PEAK_RUNS);
        mine.max_gflops = mine.best_gflops;
        mine.median_gflops = zb_median(runs, ZB_PEAK_RUNS);
    }
    /* Every rank's record; this rank takes its node's leader's. */
    zb_peak_measure *all = (zb_peak_measure *)calloc((size_t)t->n_ranks, sizeof *all);
    /* Not agreed on: this rank's failure ends the job (main aborts). */
    if (!all) return ZB_FAIL(ZB_ERR_NOMEM, "rank %d: out of memory sharing the measured peak", t->rank);
    MPI_Request req = MPI_REQUEST_NULL;
    int rc = MPI_Iallgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE,
                            MPI_COMM_WORLD, &req);
    zb_status st = rc == MPI_SUCCESS ? sleep_wait(&req, t->rank, timeout_s)
                                     : zb_mpi_call_failed(rc, "MPI_Iallgather", "sharing the measured peak");
    if (st == ZB_ERR_TIMEOUT) return st; /* MPI may still write `all`: the job ends */
    for (int r = 0; st == ZB_OK && r < t->n_ranks; r++) {
        if (all[r].measured && all[r].node == t->node) {
            *out = all[r];
            break;
        }
    }
    free(all);
    return st;
}

json_t *zb_peak_measure_json(const zb_peak_measure *m) {
    if (!m->measured) return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "isa", json_string(m->isa));
    json_object_set_new(o, "runs", json_integer(m->runs));
    json_object_set_new(o, "node", json_integer(m->node));
    json_object_set_new(o, "best_gflops_per_core", json_real(m->best_gflops));
    json_object_set_new(o, "min_gflops_per_core", json_real(m->min_gflops));
    json_object_set_new(o, "median_gflops_per_core", json_real(m->median_gflops));
    json_object_set_new(o, "max_gflops_per_core", json_real(m->max_gflops));
    return o;
}
