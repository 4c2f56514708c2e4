/* MPI bootstrap (see mpi_boot.h): init/finalize/abort, node-layout discovery
 * (real shared-memory nodes, or nodes emulated through ZB_NODE_ID) and the
 * check of the layout against --nodes/--gpus-per-node. */
#include "mpi_boot.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_wait.h"

#define ZB_NODE_ID_VALUE_MAX 64

/* Records an MPI failure: the rank, the call and MPI's own error string. */
static zb_status zb_mpi_fail(int rc, const char *call, int line) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    int rank = -1;
    int inited = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "MPI error %d", rc);
    MPI_Initialized(&inited);
    if (inited) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return zb_error_set(ZB_ERR_MPI, __FILE__, line, "rank %d: %s: %s", rank, call, msg);
}

#define ZB_MPI_TRY(call)                                                       \
    do {                                                                       \
        int zb_mpi_rc_ = (call);                                               \
        if (zb_mpi_rc_ != MPI_SUCCESS) return zb_mpi_fail(zb_mpi_rc_, #call, __LINE__); \
    } while (0)

/* ---- init / finalize / abort ------------------------------------------------ */

static const char *zb_thread_level_name(int level) {
    if (level == MPI_THREAD_SINGLE) return "MPI_THREAD_SINGLE";
    if (level == MPI_THREAD_FUNNELED) return "MPI_THREAD_FUNNELED";
    if (level == MPI_THREAD_SERIALIZED) return "MPI_THREAD_SERIALIZED";
    if (level == MPI_THREAD_MULTIPLE) return "MPI_THREAD_MULTIPLE";
    return "an unknown thread level";
}

zb_status zb_mpi_init(int *argc, char ***argv) {
    int inited = 0;
    int provided = MPI_THREAD_SINGLE;
    ZB_MPI_TRY(MPI_Initialized(&inited));
    if (inited) {
        ZB_MPI_TRY(MPI_Query_thread(&provided));
    } else {
        /* Open MPI's non-blocking all-reduce picks a binomial reduce + bcast
         * below 4 ranks: two transfers one after the other where the ring
         * overlaps them, about twice as slow at 2 ranks (docs/design.md §10).
         * The ring, unless the user chose (environment or mpirun --mca). */
        setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", 0);
        ZB_MPI_TRY(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        return ZB_FAIL(ZB_ERR_MPI,
                       "MPI_Init_thread: asked for MPI_THREAD_MULTIPLE, the MPI library provides only %s "
                       "(zerobench drives one communicator per stream thread; use an MPI built with thread support)",
                       zb_thread_level_name(provided));
    }
    return ZB_OK;
}

/* True when MPI is initialized and not yet finalized. */
static bool zb_mpi_active(void) {
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    return inited && !finalized;
}

void zb_mpi_finalize(void) {
    if (zb_mpi_active()) MPI_Finalize();
}

void zb_mpi_abort(int code) {
    fflush(stdout);
    fflush(stderr);
    if (zb_mpi_active()) MPI_Abort(MPI_COMM_WORLD, code);
    exit(code); /* MPI_Abort does not return; this covers MPI never started */
}

/* ---- ZB_NODE_ID --------------------------------------------------------------- */

zb_status zb_node_id_parse(const char *value, int *out) {
    if (value == NULL) return ZB_FAIL(ZB_ERR_INVALID, "ZB_NODE_ID: no value");
    char *end = NULL;
    errno = 0;
    long v = (value[0] >= '0' && value[0] <= '9') ? strtol(value, &end, 10) : -1;
    if (v < 0 || end == NULL || *end != '\0' || errno == ERANGE || v > INT_MAX) {
        return ZB_FAIL(ZB_ERR_INVALID, "ZB_NODE_ID='%s': expected a non-negative integer (the emulated node index)",
                       value);
    }
    *out = (int)v;
    return ZB_OK;
}

typedef struct zb_node_env {
    bool set;        /* ZB_NODE_ID is set on this rank */
    bool bad;        /* ... but is not a non-negative integer */
    int id;          /* the parsed value when set and good */
    char value[ZB_NODE_ID_VALUE_MAX];
} zb_node_env;

static void zb_node_env_read(zb_node_env *e) {
    const char *v = getenv("ZB_NODE_ID");
    memset(e, 0, sizeof *e);
    if (v == NULL) return;
    e->set = true;
    snprintf(e->value, sizeof e->value, "%s", v);
    zb_status s = zb_node_id_parse(v, &e->id);
    e->bad = s != ZB_OK;
    zb_error_clear();
}

/* Collective: every rank learns whether any rank has a bad or missing
 * ZB_NODE_ID, and all return the same status. */
static zb_status zb_node_env_agree(const zb_node_env *e, int rank, int n_ranks, double timeout_s) {
    /* MAX of n - rank picks the lowest rank with the property (0: none has it). */
    int mine[3] = {e->set ? n_ranks - rank : 0, e->set ? 0 : n_ranks - rank, e->bad ? n_ranks - rank : 0};
    int all[3] = {0, 0, 0};
    ZB_TRY(zb_mpi_allreduce_bounded(mine, all, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD, "agreeing on ZB_NODE_ID",
                                    timeout_s));
    if (all[2] > 0) {
        int bad_rank = n_ranks - all[2];
        char value[ZB_NODE_ID_VALUE_MAX];
        memcpy(value, e->value, sizeof value);
        ZB_TRY(zb_mpi_bcast_bounded(value, (int)sizeof value, MPI_CHAR, bad_rank, MPI_COMM_WORLD,
                                    "broadcasting the bad ZB_NODE_ID", timeout_s));
        value[sizeof value - 1] = '\0';
        return ZB_FAIL(ZB_ERR_INVALID,
                       "ZB_NODE_ID='%s' on rank %d: expected a non-negative integer (the emulated node index)",
                       value, bad_rank);
    }
    if (all[0] > 0 && all[1] > 0) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "ZB_NODE_ID must be set on every rank or on none: rank %d has it, rank %d does not",
                       n_ranks - all[0], n_ranks - all[1]);
    }
    return ZB_OK;
}

/* ---- discovery ------------------------------------------------------------------ */

static void zb_topology_hostname(zb_topology *t) {
    if (gethostname(t->hostname, sizeof t->hostname - 1) != 0) {
        snprintf(t->hostname, sizeof t->hostname, "unknown");
    }
    t->hostname[sizeof t->hostname - 1] = '\0';
}

/* Splits MPI_COMM_WORLD into nodes, keyed by world rank so local rank 0 is the
 * node's lowest world rank. Blocking (MPI 3.1 has no non-blocking split),
 * but only reached after zb_node_env_agree's bounded all-reduce, which every
 * rank must have joined. */
static zb_status zb_node_comm(const zb_node_env *e, int rank, MPI_Comm *node) {
    if (e->set) {
        ZB_MPI_TRY(MPI_Comm_split(MPI_COMM_WORLD, e->id, rank, node));
    } else {
        ZB_MPI_TRY(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, node));
    }
    return ZB_OK;
}

/* Node index and count: local-rank-0 ranks form a communicator ordered by world
 * rank; its rank is the node index, its size the node count; each node's
 * leader broadcasts both to its node. */
static zb_status zb_node_index(zb_topology *t, MPI_Comm node, double timeout_s) {
    MPI_Comm leaders = MPI_COMM_NULL;
    int color = t->local_rank == 0 ? 0 : MPI_UNDEFINED;
    int info[2] = {0, 0};
    ZB_MPI_TRY(MPI_Comm_split(MPI_COMM_WORLD, color, t->rank, &leaders));
    if (leaders != MPI_COMM_NULL) {
        int rc = MPI_Comm_rank(leaders, &info[0]);
        if (rc == MPI_SUCCESS) rc = MPI_Comm_size(leaders, &info[1]);
        MPI_Comm_free(&leaders);
        if (rc != MPI_SUCCESS) return zb_mpi_fail(rc, "MPI_Comm_rank/size(leaders)", __LINE__);
    }
    ZB_TRY(zb_mpi_bcast_bounded(info, 2, MPI_INT, 0, node, "broadcasting the node index within the node",
                                timeout_s));
    t->node = info[0];
    t->n_nodes = info[1];
    return ZB_OK;
}

static zb_status zb_node_sizes(zb_topology *t, double timeout_s) {
    int mine[2] = {t->local_size, -t->local_size};
    int all[2] = {0, 0};
    ZB_TRY(zb_mpi_allreduce_bounded(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD, "agreeing on the node sizes",
                                    timeout_s));
    t->local_size_max = all[0];
    t->local_size_min = -all[1];
    return ZB_OK;
}

static zb_status zb_topology_local(zb_topology *t, const zb_node_env *e, double timeout_s) {
    MPI_Comm node = MPI_COMM_NULL;
    ZB_TRY(zb_node_comm(e, t->rank, &node));
    int rc = MPI_Comm_rank(node, &t->local_rank);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_size(node, &t->local_size);
    zb_status s = rc == MPI_SUCCESS ? zb_node_index(t, node, timeout_s)
                                    : zb_mpi_fail(rc, "MPI_Comm_rank/size(node)", __LINE__);
    MPI_Comm_free(&node);
    return s;
}

/* This machine's identity: a hash of the kernel's boot id, which every
 * process on one running kernel reads alike (containers and network
 * namespaces included), else of the hostname. FNV-1a, 64 bits. */
static uint64_t machine_key(const char *hostname) {
    char id[128] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(id, sizeof id, f)) id[0] = '\0';
        fclose(f);
    }
    const char *s = id[0] ? id : hostname;
    uint64_t h = 1469598103934665603ull;
    for (; *s && *s != '\n'; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* host_size: how many ranks share this rank's machine key. */
static zb_status zb_host_size(zb_topology *t, double timeout_s) {
    uint64_t mine = machine_key(t->hostname);
    uint64_t *all = (uint64_t *)malloc((size_t)t->n_ranks * sizeof *all);
    if (!all) return ZB_FAIL(ZB_ERR_NOMEM, "out of memory for the ranks' machine keys");
    zb_status s = zb_mpi_allgather_bounded(&mine, all, 1, MPI_UINT64_T, MPI_COMM_WORLD,
                                           "gathering the ranks' machine keys", timeout_s);
    t->host_size = 0;
    for (int r = 0; s == ZB_OK && r < t->n_ranks; r++) t->host_size += all[r] == mine;
    free(all);
    return s;
}

zb_status zb_topology_discover(zb_topology *out, double timeout_s) {
    if (out == NULL) return ZB_FAIL(ZB_ERR_INVALID, "zb_topology_discover: no output");
    zb_topology t;
    memset(&t, 0, sizeof t);
    ZB_MPI_TRY(MPI_Comm_rank(MPI_COMM_WORLD, &t.rank));
    ZB_MPI_TRY(MPI_Comm_size(MPI_COMM_WORLD, &t.n_ranks));
    zb_topology_hostname(&t);

    zb_node_env env;
    zb_node_env_read(&env);
    ZB_TRY(zb_node_env_agree(&env, t.rank, t.n_ranks, timeout_s));
    t.node_emulated = env.set;

    ZB_TRY(zb_topology_local(&t, &env, timeout_s));
    ZB_TRY(zb_node_sizes(&t, timeout_s));
    ZB_TRY(zb_host_size(&t, timeout_s));
    *out = t;
    return ZB_OK;
}

/* ---- checking -------------------------------------------------------------------- */

static void zb_layout_has(const zb_topology *t, char *out, size_t n) {
    if (t->local_size_min == t->local_size_max) {
        snprintf(out, n, "the job has %d node(s) with %d rank(s) each", t->n_nodes, t->local_size_min);
    } else {
        snprintf(out, n, "the job has %d node(s) with %d to %d ranks each", t->n_nodes, t->local_size_min,
                 t->local_size_max);
    }
}

zb_status zb_topology_check(const zb_topology *t, int nodes, int per_node) {
    if (t == NULL) return ZB_FAIL(ZB_ERR_INVALID, "zb_topology_check: no topology");
    if (nodes <= 0) return ZB_OK;
    bool nodes_ok = t->n_nodes == nodes;
    bool sizes_ok = per_node <= 0 || (t->local_size_min == per_node && t->local_size_max == per_node);
    if (nodes_ok && sizes_ok) return ZB_OK;

    char has[128];
    zb_layout_has(t, has, sizeof has);
    const char *source = t->node_emulated ? " (nodes from ZB_NODE_ID)" : "";
    if (per_node > 0) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "--nodes %d --gpus-per-node %d asks for %d nodes x %d ranks, but %s%s; "
                       "launch with mpirun -np %lld --map-by ppr:%d:node, or without mpirun to let zerobench launch itself",
                       nodes, per_node, nodes, per_node, has, source, (long long)nodes * per_node, per_node);
    }
    return ZB_FAIL(ZB_ERR_INVALID, "--nodes %d asks for %d nodes, but %s%s", nodes, nodes, has, source);
}

void zb_topology_describe(const zb_topology *t, char *out, size_t n) {
    if (out == NULL || n == 0) return;
    if (t == NULL) {
        snprintf(out, n, "no topology");
        return;
    }
    char per[48];
    if (t->local_size_min == t->local_size_max) {
        snprintf(per, sizeof per, "%d per node", t->local_size_min);
    } else {
        snprintf(per, sizeof per, "%d to %d per node", t->local_size_min, t->local_size_max);
    }
    snprintf(out, n, "%d ranks on %d node(s) (%s%s)", t->n_ranks, t->n_nodes, per,
             t->node_emulated ? ", emulated" : "");
}
