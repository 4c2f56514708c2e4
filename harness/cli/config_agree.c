/* The ranks' configurations compared at start-up (config_agree.h): the
 * digests of the parsed flags (cli.h), folded into one; when they differ,
 * the first rank that differs from rank 0 sends its digests, so that
 * every rank names the same flag. */
#include "config_agree.h"

#include <limits.h>
#include <mpi.h>
#include <string.h>

#include "mpi_wait.h"

typedef struct rank_config {
    uint64_t digest[ZB_CLI_DIGESTS_MAX + 1]; /* [0]: the count, then the digests */
    uint64_t whole;                          /* all of them folded (FNV-1a) */
} rank_config;

static void describe(const zb_config *cfg, rank_config *rc) {
    memset(rc, 0, sizeof *rc);
    int n = zb_cli_config_digests(cfg, rc->digest + 1, ZB_CLI_DIGESTS_MAX);
    rc->digest[0] = (uint64_t)n;
    rc->whole = zb_cli_digests_fold(rc->digest, n + 1);
}

/* Whether every rank has the same `whole`: its minimum equals its maximum
 * (the minimum of its complement), in one allreduce. */
static zb_status all_same(const rank_config *mine, double timeout_s, bool *same) {
    uint64_t v[2] = {mine->whole, ~mine->whole}, lo[2] = {0, 0};
    ZB_TRY(zb_mpi_allreduce_bounded(v, lo, 2, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD,
                                    "comparing the ranks' configurations", timeout_s));
    *same = lo[0] == ~lo[1];
    return ZB_OK;
}

/* The lowest rank whose configuration is not rank 0's. */
static zb_status first_differing(const rank_config *mine, double timeout_s, int *rank) {
    uint64_t first = mine->whole;
    ZB_TRY(zb_mpi_bcast_bounded(&first, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD, "sending rank 0's configuration",
                                timeout_s));
    int me = 0, mark;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    mark = mine->whole != first ? me : INT_MAX;
    return zb_mpi_allreduce_bounded(&mark, rank, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD,
                                    "finding the first rank configured differently", timeout_s);
}

/* The message, from rank `r`'s digests against this rank's (rank 0's on
 * every rank that agrees with it, so on rank 0, which prints it). */
static zb_status differ(const zb_config *cfg, const rank_config *mine, const uint64_t *theirs, int r) {
    uint64_t n = mine->digest[0] < theirs[0] ? mine->digest[0] : theirs[0];
    char name[64];
    if (theirs[1] != mine->digest[1]) {
        zb_command other = (zb_command)theirs[1];
        return ZB_FAIL(ZB_ERR_INVALID, "rank %d was started with a different configuration from rank 0: command %s, "
                       "not %s (every rank must be given the same command and flags)", r,
                       zb_command_name(other), zb_command_name(cfg->command));
    }
    int index = -1;
    for (uint64_t i = 1; i < n && index < 0; i++) {
        if (theirs[1 + i] != mine->digest[1 + i]) index = (int)i;
    }
    zb_cli_digest_name(cfg->command, index, name, sizeof name);
    return ZB_FAIL(ZB_ERR_INVALID, "rank %d was started with a different configuration from rank 0: %s differs "
                   "(every rank must be given the same command and flags)", r, name);
}

zb_status zb_config_agree(const zb_config *cfg) {
    rank_config mine;
    describe(cfg, &mine);
    bool same = false;
    ZB_TRY(all_same(&mine, cfg->timeout_s, &same));
    if (same) return ZB_OK;
    int r = 0;
    ZB_TRY(first_differing(&mine, cfg->timeout_s, &r));
    if (r == INT_MAX) return ZB_FAIL(ZB_ERR_INTERNAL, "the ranks' configurations differ, yet none from rank 0's");
    uint64_t theirs[ZB_CLI_DIGESTS_MAX + 1];
    memcpy(theirs, mine.digest, sizeof theirs);
    ZB_TRY(zb_mpi_bcast_bounded(theirs, ZB_CLI_DIGESTS_MAX + 1, MPI_UINT64_T, r, MPI_COMM_WORLD,
                                "sending the differing rank's configuration", cfg->timeout_s));
    return differ(cfg, &mine, theirs, r);
}
