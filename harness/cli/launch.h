/* The launcher behind --nodes: when zerobench is started outside MPI with
 * --nodes N, it re-runs itself under mpirun with N*G ranks mapped G per node
 * (G = --gpus-per-node, the ranks per node on CPU).
 *
 *   zb_under_mpi          was this process started by mpirun/srun?
 *   zb_launch_build_argv  the mpirun command line (pure: builds, never runs)
 *   zb_launch_format      that command as one shell-quoted line
 *   zb_launch_run         runs it, forwarding SIGINT/SIGTERM, returns its status
 *
 * With --emulate-nodes every "node" runs on this machine: one MPMD app context
 * per node sets ZB_NODE_ID=i, which the MPI bootstrap (mpi_boot.h) uses as the
 * node identity, so a 2-node x 2-rank layout can be tested on one machine. */
#ifndef ZB_LAUNCH_H
#define ZB_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zb_launch_opts {
    int nodes;            /* --nodes N (0 = not given) */
    int gpus_per_node;    /* --gpus-per-node G (ranks per node on CPU; 0 = not given -> 1) */
    const char *hostfile; /* --hostfile FILE or NULL */
    bool emulate_nodes;   /* --emulate-nodes: all nodes on this machine (testing) */
    const char *mpirun;   /* NULL -> env ZB_MPIRUN (when set and non-empty), else "mpirun" */
} zb_launch_opts;

/* The most ranks a launch may ask for (nodes * gpus_per_node). */
#define ZB_LAUNCH_MAX_RANKS (1 << 20)

/* True when started by mpirun/srun: env OMPI_COMM_WORLD_SIZE, PMIX_RANK,
 * PMI_RANK or PMI_SIZE is set (to anything, even ""). */
bool zb_under_mpi(void);

/* The launcher program the opts name: o->mpirun, else $ZB_MPIRUN when set and
 * non-empty, else "mpirun". */
const char *zb_launch_mpirun(const zb_launch_opts *o);

/* Absolute path of the running executable (readlink /proc/self/exe); falls
 * back to realpath(argv0), then to argv0 itself. ZB_ERR_INVALID when argv0 is
 * NULL and /proc/self/exe is unreadable; ZB_ERR_INVALID when it does not fit. */
zb_status zb_launch_self_exe(const char *argv0, char *out, size_t n);

/* Builds the mpirun argv (NULL-terminated, malloc'd; free with
 * zb_launch_argv_free) that re-runs `self_argv` (argv[0] replaced by
 * zb_launch_self_exe) with N*G ranks mapped G per node:
 *   MPIRUN -np N*G --map-by ppr:G:node [--hostfile FILE] SELF ARGS...
 * With emulate_nodes, one MPMD app context per node:
 *   MPIRUN --oversubscribe -np G env ZB_NODE_ID=0 SELF ARGS... : -np G env ZB_NODE_ID=1 SELF ARGS... : ...
 * ZB_ERR_INVALID (naming the flag) when nodes <= 0, gpus_per_node < 0, N*G is
 * over ZB_LAUNCH_MAX_RANKS, --hostfile is combined with --emulate-nodes, or
 * self_argv is empty; ZB_ERR_NOMEM. *out_argv is NULL on error. */
zb_status zb_launch_build_argv(const zb_launch_opts *o, int self_argc, char *const *self_argv,
                               char ***out_argv);
void zb_launch_argv_free(char **argv);

/* Formats argv as one line, each word shell-quoted when it needs it (single
 * quotes; ' becomes '\''). Truncated to n-1 bytes, ending in "..." when it
 * does not fit. n == 0 writes nothing. */
void zb_launch_format(char *const *argv, char *out, size_t n);

/* Prints "zerobench: launching: <command>" on stderr, runs argv (fork +
 * execvp; the parent waits, forwarding SIGINT/SIGTERM sent to it by another
 * process to the child) and returns the child's exit status, 128+signal when
 * the child was killed by a signal, or 127 when argv[0] cannot be executed
 * (after a message naming it on stderr). 1 when fork fails. */
int zb_launch_run(char *const *argv);

#ifdef __cplusplus
}
#endif
#endif
