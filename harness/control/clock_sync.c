/* Clock offsets of every rank to rank 0 (see clock_sync.h). */
#include "clock_sync.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_wait.h"
#include "trace.h"

#define TAG_PING 7301
#define TAG_REPLY 7302

zb_status zb_clock_offset_estimate(const zb_clock_sample *samples, int n, int64_t *offset_ns,
                                   int64_t *uncertainty_ns) {
    int best = -1;
    uint64_t best_rtt = 0;
    int64_t best_offset = 0;
    for (int i = 0; i < n; i++) {
        const zb_clock_sample *s = &samples[i];
        if (s->t_recv_ns < s->t_send_ns) continue; /* time ran backwards: not a round trip */
        /* Unsigned, so the difference is exact even across the whole int64 range. */
        uint64_t rtt = (uint64_t)s->t_recv_ns - (uint64_t)s->t_send_ns;
        if (rtt > (uint64_t)INT64_MAX) continue;
        int64_t mid = s->t_send_ns + (int64_t)(rtt / 2); /* t_send <= mid <= t_recv: no overflow */
        int64_t offset;
        if (__builtin_sub_overflow(s->t_remote_ns, mid, &offset)) continue;
        if (best < 0 || rtt < best_rtt) {
            best = i;
            best_rtt = rtt;
            best_offset = offset;
        }
    }
    if (best < 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "clock sync: none of %d round trip(s) is usable", n > 0 ? n : 0);
    }
    *offset_ns = best_offset;
    /* Rounded up: mid was rounded down, and the bound must still hold. */
    *uncertainty_ns = (int64_t)(best_rtt / 2 + best_rtt % 2);
    return ZB_OK;
}

/* ---- MPI ------------------------------------------------------------------- */

/* Every wait is bounded (mpi_wait.h); every message names the clock sync. */

/* Rank 0's side: answers each node leader's pings with its clock, leaders
 * in node order (the order in which they are waiting). */
static zb_status serve(MPI_Comm comm, const int *leader, int n_nodes, double timeout_s) {
    char what[96];
    for (int k = 1; k < n_nodes; k++) {
        for (int i = 0; i < ZB_CLOCK_SYNC_ROUND_TRIPS; i++) {
            char ping = 0;
            MPI_Request req;
            int rc = MPI_Irecv(&ping, 1, MPI_CHAR, leader[k], TAG_PING, comm, &req);
            snprintf(what, sizeof what, "clock sync: ping %d/%d from rank %d", i + 1, ZB_CLOCK_SYNC_ROUND_TRIPS,
                     leader[k]);
            if (rc != MPI_SUCCESS) return zb_mpi_call_failed(rc, "MPI_Irecv", what);
            ZB_TRY(zb_mpi_wait(&req, what, timeout_s));
            int64_t now = zb_now_ns(); /* between the ping's arrival and the reply */
            rc = MPI_Isend(&now, 1, MPI_INT64_T, leader[k], TAG_REPLY, comm, &req);
            snprintf(what, sizeof what, "clock sync: reply %d/%d to rank %d", i + 1, ZB_CLOCK_SYNC_ROUND_TRIPS,
                     leader[k]);
            if (rc != MPI_SUCCESS) return zb_mpi_call_failed(rc, "MPI_Isend", what);
            ZB_TRY(zb_mpi_wait(&req, what, timeout_s));
        }
    }
    return ZB_OK;
}

/* A node leader's side: K round trips to rank 0, then the estimate. */
static zb_status measure(MPI_Comm comm, int rank, double timeout_s, int64_t *offset_ns,
                         int64_t *uncertainty_ns) {
    zb_clock_sample s[ZB_CLOCK_SYNC_ROUND_TRIPS];
    char what[96];
    for (int i = 0; i < ZB_CLOCK_SYNC_ROUND_TRIPS; i++) {
        char ping = 0;
        int64_t remote = 0;
        MPI_Request reqs[2];
        snprintf(what, sizeof what, "clock sync: round trip %d/%d to rank 0", i + 1, ZB_CLOCK_SYNC_ROUND_TRIPS);
        /* The reply's receive is posted first, so t_recv is not delayed by it. */
        int rc = MPI_Irecv(&remote, 1, MPI_INT64_T, 0, TAG_REPLY, comm, &reqs[1]);
        if (rc != MPI_SUCCESS) return zb_mpi_call_failed(rc, "MPI_Irecv", what);
        s[i].t_send_ns = zb_now_ns();
        rc = MPI_Isend(&ping, 1, MPI_CHAR, 0, TAG_PING, comm, &reqs[0]);
        if (rc != MPI_SUCCESS) return zb_mpi_call_failed(rc, "MPI_Isend", what);
        ZB_TRY(zb_mpi_wait(&reqs[1], what, timeout_s));
        s[i].t_recv_ns = zb_now_ns();
        ZB_TRY(zb_mpi_wait(&reqs[0], what, timeout_s));
        s[i].t_remote_ns = remote;
    }
    /* Not bad input: only this rank sees it, so it must end the job (main
     * aborts on anything but ZB_ERR_INVALID/ZB_ERR_WRONG). */
    if (zb_clock_offset_estimate(s, ZB_CLOCK_SYNC_ROUND_TRIPS, offset_ns, uncertainty_ns) != ZB_OK) {
        return ZB_FAIL(ZB_ERR_INTERNAL, "rank %d: clock sync: no usable round trip to rank 0 (the clock ran backwards)",
                       rank);
    }
    return ZB_OK;
}

static zb_status sync_nodes(MPI_Comm comm, const zb_topology *t, double timeout_s, zb_clock_sync *out) {
    MPI_Request req;
    int rc = MPI_Iallgather(&t->node, 1, MPI_INT, out->node, 1, MPI_INT, comm, &req);
    if (rc != MPI_SUCCESS) return zb_mpi_call_failed(rc, "MPI_Iallgather", "clock sync: the node ids");
    ZB_TRY(zb_mpi_wait(&req, "clock sync: the all-gather of node ids", timeout_s));
    int *leader = (int *)malloc((size_t)t->n_nodes * sizeof *leader);
    int64_t mine[2] = {0, 0}; /* offset, uncertainty */
    int64_t *all = (int64_t *)calloc((size_t)t->n_ranks * 2, sizeof *all);
    zb_status st = leader && all ? ZB_OK : ZB_FAIL(ZB_ERR_NOMEM, "clock sync: out of memory");
    for (int k = 0; st == ZB_OK && k < t->n_nodes; k++) leader[k] = -1;
    for (int r = 0; st == ZB_OK && r < t->n_ranks; r++) {
        int k = out->node[r];
        if (k < 0 || k >= t->n_nodes) {
            st = ZB_FAIL(ZB_ERR_INTERNAL, "clock sync: rank %d reports node %d of %d", r, k, t->n_nodes);
        } else if (leader[k] < 0) {
            leader[k] = r; /* ranks ascend: the node's lowest rank */
        }
    }
    for (int k = 0; st == ZB_OK && k < t->n_nodes; k++) {
        if (leader[k] < 0) st = ZB_FAIL(ZB_ERR_INTERNAL, "clock sync: node %d has no rank", k);
    }
    /* Ranks on rank 0's node share its clock: they keep offset 0, uncertainty 0. */
    if (st == ZB_OK && t->rank == 0) st = serve(comm, leader, t->n_nodes, timeout_s);
    if (st == ZB_OK && t->rank != 0 && leader[t->node] == t->rank && t->node != out->node[0]) {
        st = measure(comm, t->rank, timeout_s, &mine[0], &mine[1]);
    }
    if (st == ZB_OK) {
        rc = MPI_Iallgather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, comm, &req);
        if (rc != MPI_SUCCESS) st = zb_mpi_call_failed(rc, "MPI_Iallgather", "clock sync: the offsets");
    }
    if (st == ZB_OK) st = zb_mpi_wait(&req, "clock sync: the all-gather of offsets", timeout_s);
    for (int r = 0; st == ZB_OK && r < t->n_ranks; r++) {
        int lead = leader[out->node[r]];
        out->offset_ns[r] = all[2 * lead];
        out->uncertainty_ns[r] = all[2 * lead + 1];
    }
    free(leader);
    if (st != ZB_ERR_TIMEOUT) free(all); /* else MPI may still write it (mpi_wait.h) */
    return st;
}

zb_status zb_clock_sync_run(const zb_topology *t, double timeout_s, zb_clock_sync *out) {
    memset(out, 0, sizeof *out);
    out->n_ranks = t->n_ranks;
    out->n_nodes = t->n_nodes;
    out->node = (int *)calloc((size_t)t->n_ranks, sizeof *out->node);
    out->offset_ns = (int64_t *)calloc((size_t)t->n_ranks, sizeof *out->offset_ns);
    out->uncertainty_ns = (int64_t *)calloc((size_t)t->n_ranks, sizeof *out->uncertainty_ns);
    if (!out->node || !out->offset_ns || !out->uncertainty_ns) {
        zb_clock_sync_free(out);
        return ZB_FAIL(ZB_ERR_NOMEM, "clock sync: out of memory for %d ranks", t->n_ranks);
    }
    if (t->n_nodes <= 1) return ZB_OK; /* one clock: every offset is exactly 0 */
    out->round_trips = ZB_CLOCK_SYNC_ROUND_TRIPS;
    /* Its own communicator: its messages can match nothing else's. */
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Request req;
    int rc = MPI_Comm_idup(MPI_COMM_WORLD, &comm, &req);
    if (rc != MPI_SUCCESS) return zb_mpi_call_failed(rc, "MPI_Comm_idup", "clock sync: MPI_COMM_WORLD");
    ZB_TRY(zb_mpi_wait(&req, "clock sync: MPI_Comm_idup", timeout_s));
    zb_status st = sync_nodes(comm, t, timeout_s, out);
    MPI_Comm_free(&comm);
    return st;
}

void zb_clock_sync_free(zb_clock_sync *s) {
    if (!s) return;
    free(s->node);
    free(s->offset_ns);
    free(s->uncertainty_ns);
    memset(s, 0, sizeof *s);
}

int64_t zb_clock_sync_offset(const zb_clock_sync *s, int rank) {
    if (!s || !s->offset_ns || rank < 0 || rank >= s->n_ranks) return 0;
    return s->offset_ns[rank];
}

json_t *zb_clock_sync_json(const zb_clock_sync *s) {
    json_t *ranks = json_array();
    for (int r = 0; ranks && r < s->n_ranks; r++) {
        json_array_append_new(ranks, json_pack("{s:i,s:i,s:I,s:I}", "rank", r, "node", s->node[r], "offset_ns",
                                               (json_int_t)s->offset_ns[r], "uncertainty_ns",
                                               (json_int_t)s->uncertainty_ns[r]));
    }
    return json_pack("{s:s,s:i,s:i,s:o}", "method", s->n_nodes > 1 ? "ping_pong_min_rtt" : "single_node",
                     "reference_rank", 0, "round_trips", s->round_trips, "ranks", ranks);
}
