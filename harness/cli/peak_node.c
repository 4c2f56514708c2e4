/* The measured CPU peak, once per node, before any work (see peak_node.h). */
#include "peak_node.h"

#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_wait.h"
#include "overlap.h"
#include "peak_cache.h"
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

/* Times the FMA loop on this core into *m. */
static void time_peak(const zb_device_backend *dev, zb_peak_measure *m) {
    double runs[ZB_PEAK_RUNS];
    const char *isa = "";
    m->best_gflops = dev->peak_gflops_per_core(ZB_PEAK_SECONDS, ZB_PEAK_RUNS, runs, &isa);
    m->measured = true;
    m->runs = ZB_PEAK_RUNS;
    snprintf(m->isa, sizeof m->isa, "%s", isa);
    m->min_gflops = zb_min(runs, ZB_PEAK_RUNS);
    m->max_gflops = m->best_gflops;
    m->median_gflops = zb_median(runs, ZB_PEAK_RUNS);
    zb_peak_date((long long)time(NULL), m->date, sizeof m->date);
}

/* Local rank 0: the host's cached figure, or a fresh one, cached. */
static void leader_peak(const zb_device_backend *dev, bool fresh, zb_peak_measure *m) {
    zb_peak_host here;
    zb_peak_host_here(dev->peak_isa ? dev->peak_isa() : "", &here);
    snprintf(m->host, sizeof m->host, "%s", here.host);
    char path[PATH_MAX];
    bool cache = dev->peak_isa && zb_peak_cache_path(here.host, path, sizeof path);
    zb_peak_record rec;
    if (cache && !fresh && zb_peak_cache_read(path, &here, &rec, m->note, sizeof m->note)) {
        m->measured = m->cached = true;
        m->runs = rec.runs;
        snprintf(m->isa, sizeof m->isa, "%s", rec.host.isa);
        snprintf(m->date, sizeof m->date, "%s", rec.date);
        m->best_gflops = rec.best_gflops;
        m->min_gflops = rec.min_gflops;
        m->median_gflops = rec.median_gflops;
        m->max_gflops = rec.max_gflops;
        return;
    }
    time_peak(dev, m);
    if (!cache) return;
    rec.host = here;
    snprintf(rec.host.isa, sizeof rec.host.isa, "%s", m->isa);
    rec.runs = m->runs;
    rec.best_gflops = m->best_gflops;
    rec.min_gflops = m->min_gflops;
    rec.median_gflops = m->median_gflops;
    rec.max_gflops = m->max_gflops;
    snprintf(rec.date, sizeof rec.date, "%s", m->date);
    if (zb_peak_cache_write(path, &rec) == ZB_OK) {
        m->stored = true;
        return;
    }
    char why[ZB_ERROR_MAX];
    size_t used = strlen(m->note);
    snprintf(m->note + used, sizeof m->note - used, "%snot cached: %s", used ? "; " : "",
             zb_error_text(why, sizeof why));
}

zb_status zb_peak_measure_node(const zb_topology *t, const zb_device_backend *dev, bool measure, bool fresh,
                               double timeout_s, zb_peak_measure *out) {
    memset(out, 0, sizeof *out);
    if (!measure || !dev || !dev->peak_gflops_per_core) return ZB_OK;
    zb_peak_measure mine;
    memset(&mine, 0, sizeof mine);
    mine.node = t->node;
    if (t->local_rank == 0) leader_peak(dev, fresh, &mine);
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
    json_object_set_new(o, "cached", json_boolean(m->cached));
    json_object_set_new(o, "date", json_string(m->date));
    json_object_set_new(o, "host", json_string(m->host));
    json_object_set_new(o, "note", m->note[0] ? json_string(m->note) : json_null());
    return o;
}
