/* Unit tests of the launcher (launch.h) and of the MPI-free parts of the
 * bootstrap (mpi_boot.h): the exact mpirun argv for plain, hostfile and
 * emulated layouts, shell quoting, bad options, zb_under_mpi, running a
 * command (exit status, signals, a launcher that does not exist), ZB_NODE_ID
 * parsing and the layout check on hand-made topologies. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"
#include "mpi_boot.h"
#include "zb_test.h"

static char g_self[4096];

/* Compares a NULL-terminated argv with the expected words, word by word. */
static void check_argv(const char *what, char **got, const char *const *want, size_t n_want) {
    ZB_CHECK_MSG(got != NULL, "%s: no argv", what);
    if (got == NULL) return;
    size_t n_got = 0;
    while (got[n_got] != NULL) n_got++;
    ZB_CHECK_MSG(n_got == n_want, "%s: %zu words, expected %zu", what, n_got, n_want);
    for (size_t i = 0; i < n_got && i < n_want; i++) {
        ZB_CHECK_MSG(strcmp(got[i], want[i]) == 0, "%s: word %zu is '%s', expected '%s'", what, i, got[i],
                     want[i]);
    }
}

static void test_plain(void) {
    char *self_argv[] = {"zerobench", "allgather", "-b", "1K", "--nodes", "2"};
    zb_launch_opts o = {2, 4, NULL, false, NULL};
    char **argv = NULL;
    unsetenv("ZB_MPIRUN");
    ZB_CHECK_OK(zb_launch_build_argv(&o, 6, self_argv, &argv));
    const char *want[] = {"mpirun", "-np", "8", "--map-by", "ppr:4:node", g_self,
                          "allgather", "-b", "1K", "--nodes", "2"};
    check_argv("plain", argv, want, sizeof want / sizeof want[0]);
    zb_launch_argv_free(argv);

    /* gpus_per_node 0 means one rank per node; ZB_MPIRUN names the launcher. */
    setenv("ZB_MPIRUN", "/opt/ompi/bin/mpirun", 1);
    zb_launch_opts one = {3, 0, NULL, false, NULL};
    ZB_CHECK_OK(zb_launch_build_argv(&one, 1, self_argv, &argv));
    const char *want1[] = {"/opt/ompi/bin/mpirun", "-np", "3", "--map-by", "ppr:1:node", g_self};
    check_argv("one per node", argv, want1, sizeof want1 / sizeof want1[0]);
    zb_launch_argv_free(argv);

    /* An explicit opts.mpirun wins over ZB_MPIRUN; an empty ZB_MPIRUN is ignored. */
    one.mpirun = "srun-wrapper";
    ZB_CHECK(strcmp(zb_launch_mpirun(&one), "srun-wrapper") == 0);
    setenv("ZB_MPIRUN", "", 1);
    ZB_CHECK(strcmp(zb_launch_mpirun(NULL), "mpirun") == 0);
    unsetenv("ZB_MPIRUN");
}

static void test_hostfile(void) {
    char *self_argv[] = {"./zerobench", "step", "--mode", "prefetch"};
    zb_launch_opts o = {4, 8, "/etc/hosts file", false, "mpirun"};
    char **argv = NULL;
    ZB_CHECK_OK(zb_launch_build_argv(&o, 4, self_argv, &argv));
    const char *want[] = {"mpirun", "-np", "32", "--map-by", "ppr:8:node", "--hostfile", "/etc/hosts file",
                          g_self, "step", "--mode", "prefetch"};
    check_argv("hostfile", argv, want, sizeof want / sizeof want[0]);
    zb_launch_argv_free(argv);
}

static void test_emulated(void) {
    char *self_argv[] = {"zerobench", "allgather", "-n", "2"};
    zb_launch_opts o = {2, 2, NULL, true, "mpirun"};
    char **argv = NULL;
    ZB_CHECK_OK(zb_launch_build_argv(&o, 4, self_argv, &argv));
    const char *want[] = {"mpirun", "--oversubscribe",
                          "-np", "2", "env", "ZB_NODE_ID=0", g_self, "allgather", "-n", "2", ":",
                          "-np", "2", "env", "ZB_NODE_ID=1", g_self, "allgather", "-n", "2"};
    check_argv("emulated", argv, want, sizeof want / sizeof want[0]);
    zb_launch_argv_free(argv);

    zb_launch_opts three = {3, 1, NULL, true, "mpirun"};
    ZB_CHECK_OK(zb_launch_build_argv(&three, 1, self_argv, &argv));
    const char *want3[] = {"mpirun", "--oversubscribe", "-np", "1", "env", "ZB_NODE_ID=0", g_self, ":",
                           "-np", "1", "env", "ZB_NODE_ID=1", g_self, ":",
                           "-np", "1", "env", "ZB_NODE_ID=2", g_self};
    check_argv("emulated 3x1", argv, want3, sizeof want3 / sizeof want3[0]);
    zb_launch_argv_free(argv);
}

/* Builds with bad opts: ZB_ERR_INVALID, *out NULL, the message names `flag`. */
static void expect_invalid(const char *what, const zb_launch_opts *o, int argc, char *const *self_argv,
                           const char *flag) {
    char **argv = (char **)&argv; /* not NULL, so the test sees it reset */
    zb_status s = zb_launch_build_argv(o, argc, self_argv, &argv);
    ZB_CHECK_MSG(s == ZB_ERR_INVALID, "%s: status %s, expected invalid input", what, zb_status_name(s));
    ZB_CHECK_MSG(argv == NULL, "%s: out_argv not reset to NULL", what);
    if (flag != NULL) {
        ZB_CHECK_MSG(strstr(zb_error_message(), flag) != NULL, "%s: message '%s' does not name %s", what,
                     zb_error_message(), flag);
    }
    if (s == ZB_OK) zb_launch_argv_free(argv);
}

static void test_bad_opts(void) {
    char *self_argv[] = {"zerobench", "allgather"};
    zb_launch_opts zero = {0, 2, NULL, false, NULL};
    zb_launch_opts neg = {-3, 2, NULL, false, NULL};
    zb_launch_opts neg_g = {2, -1, NULL, false, NULL};
    zb_launch_opts huge = {1 << 16, 1 << 16, NULL, false, NULL};
    zb_launch_opts both = {2, 2, "hosts", true, NULL};
    zb_launch_opts good = {2, 2, NULL, false, NULL};
    expect_invalid("nodes 0", &zero, 2, self_argv, "--nodes");
    expect_invalid("nodes -3", &neg, 2, self_argv, "--nodes");
    expect_invalid("gpus -1", &neg_g, 2, self_argv, "--gpus-per-node");
    expect_invalid("too many ranks", &huge, 2, self_argv, "--nodes");
    expect_invalid("hostfile + emulate", &both, 2, self_argv, "--emulate-nodes");
    expect_invalid("no opts", NULL, 2, self_argv, NULL);
    expect_invalid("empty argv", &good, 0, self_argv, NULL);
}

static void test_format(void) {
    char *argv[] = {"mpirun", "-np", "4", "a b", "it's", "", "x=1", "$HOME", ":", NULL};
    char line[256];
    zb_launch_format(argv, line, sizeof line);
    const char *want = "mpirun -np 4 'a b' 'it'\\''s' '' x=1 '$HOME' :";
    ZB_CHECK_MSG(strcmp(line, want) == 0, "format: got [%s], expected [%s]", line, want);

    char small[12];
    zb_launch_format(argv, small, sizeof small);
    ZB_CHECK_MSG(strlen(small) == sizeof small - 1, "truncated length %zu", strlen(small));
    ZB_CHECK_MSG(strcmp(small, "mpirun -...") == 0, "truncated: got [%s]", small);

    char *empty[] = {NULL};
    line[0] = 'x';
    zb_launch_format(empty, line, sizeof line);
    ZB_CHECK(line[0] == '\0');
}

static void test_under_mpi(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"};
    enum { N_VARS = sizeof vars / sizeof vars[0] };
    char *saved[N_VARS];
    for (int i = 0; i < N_VARS; i++) {
        const char *v = getenv(vars[i]);
        saved[i] = v ? strdup(v) : NULL;
        unsetenv(vars[i]);
    }
    ZB_CHECK_MSG(!zb_under_mpi(), "under MPI with none of the variables set");
    for (int i = 0; i < N_VARS; i++) {
        setenv(vars[i], "4", 1);
        ZB_CHECK_MSG(zb_under_mpi(), "not under MPI with %s set", vars[i]);
        unsetenv(vars[i]);
        ZB_CHECK_MSG(!zb_under_mpi(), "still under MPI after unsetting %s", vars[i]);
    }
    for (int i = 0; i < N_VARS; i++) {
        if (saved[i] != NULL) setenv(vars[i], saved[i], 1);
        free(saved[i]);
    }
}

static void test_run(void) {
    char *missing[] = {"/nonexistent/zb-no-such-mpirun", "-np", "2", NULL};
    ZB_CHECK_MSG(zb_launch_run(missing) == 127, "a missing launcher must give 127");
    char *missing_path[] = {"zb-no-such-mpirun-on-path", NULL};
    ZB_CHECK(zb_launch_run(missing_path) == 127);
    char *exit3[] = {"sh", "-c", "exit 3", NULL};
    ZB_CHECK(zb_launch_run(exit3) == 3);
    char *ok[] = {"true", NULL};
    ZB_CHECK(zb_launch_run(ok) == 0);
    char *killed[] = {"sh", "-c", "kill -KILL $$", NULL};
    ZB_CHECK(zb_launch_run(killed) == 128 + SIGKILL);
    /* The child sends SIGTERM to its parent (this test), which must survive
     * and forward it: the child then dies of SIGTERM instead of sleeping. */
    char *forward[] = {"sh", "-c", "kill -TERM $PPID; exec sleep 30", NULL};
    ZB_CHECK_MSG(zb_launch_run(forward) == 128 + SIGTERM, "SIGTERM was not forwarded to the child");
}

static void test_node_id_parse(void) {
    int id = -1;
    ZB_CHECK_OK(zb_node_id_parse("0", &id));
    ZB_CHECK(id == 0);
    ZB_CHECK_OK(zb_node_id_parse("17", &id));
    ZB_CHECK(id == 17);
    const char *bad[] = {"", "-1", "+1", " 1", "1 ", "1x", "abc", "99999999999999999999", "0x10"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        zb_status s = zb_node_id_parse(bad[i], &id);
        ZB_CHECK_MSG(s == ZB_ERR_INVALID, "ZB_NODE_ID='%s' accepted", bad[i]);
        ZB_CHECK_MSG(strstr(zb_error_message(), "ZB_NODE_ID") != NULL, "message does not name ZB_NODE_ID: %s",
                     zb_error_message());
    }
}

static zb_topology make_topo(int n_ranks, int n_nodes, int min, int max) {
    zb_topology t;
    memset(&t, 0, sizeof t);
    t.n_ranks = n_ranks;
    t.n_nodes = n_nodes;
    t.local_size = min;
    t.local_size_min = min;
    t.local_size_max = max;
    return t;
}

static void test_check(void) {
    zb_topology one = make_topo(4, 1, 4, 4);
    ZB_CHECK_OK(zb_topology_check(&one, 0, 0));
    ZB_CHECK_OK(zb_topology_check(&one, 1, 4));
    ZB_CHECK_OK(zb_topology_check(&one, 1, 0));
    ZB_CHECK(zb_topology_check(&one, 2, 2) == ZB_ERR_INVALID);
    const char *want = "--nodes 2 --gpus-per-node 2 asks for 2 nodes x 2 ranks, but the job has 1 node(s) with 4 rank(s) each";
    ZB_CHECK_MSG(strncmp(zb_error_message(), want, strlen(want)) == 0, "message: %s", zb_error_message());
    ZB_CHECK(zb_topology_check(&one, 1, 2) == ZB_ERR_INVALID);

    zb_topology two = make_topo(4, 2, 2, 2);
    ZB_CHECK_OK(zb_topology_check(&two, 2, 2));
    ZB_CHECK_OK(zb_topology_check(&two, 2, -1));
    ZB_CHECK(zb_topology_check(&two, 4, 0) == ZB_ERR_INVALID);
    ZB_CHECK(strstr(zb_error_message(), "--nodes 4") != NULL);

    zb_topology uneven = make_topo(4, 2, 1, 3);
    ZB_CHECK_OK(zb_topology_check(&uneven, 2, 0));
    ZB_CHECK(zb_topology_check(&uneven, 2, 2) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "1 to 3 ranks") != NULL, "message: %s", zb_error_message());
    ZB_CHECK(zb_topology_check(NULL, 2, 2) == ZB_ERR_INVALID);

    char line[128];
    zb_topology_describe(&two, line, sizeof line);
    ZB_CHECK_MSG(strcmp(line, "4 ranks on 2 node(s) (2 per node)") == 0, "describe: %s", line);
}

extern char **environ;

/* NCCL_*, ZB_PROFILES and a user's OPENBLAS_CORETYPE reach remote ranks
 * through -x, before the program. */
static void test_forward_env(void) {
    setenv("NCCL_ALGO", "Ring", 1);
    setenv("ZB_PROFILES", "/opt/profiles", 1);
    setenv("OPENBLAS_CORETYPE", "Haswell", 1);
    zb_launch_opts o = {2, 4, NULL, false, "mpirun"};
    char *self_argv[] = {"zerobench", "allgather"};
    char **argv = NULL;
    ZB_CHECK_OK(zb_launch_build_argv(&o, 2, self_argv, &argv));
    int nccl = -1, profiles = -1, core = -1, self = -1;
    for (int i = 0; argv && argv[i]; i++) {
        if (i > 0 && !strcmp(argv[i - 1], "-x") && !strcmp(argv[i], "NCCL_ALGO")) nccl = i;
        if (i > 0 && !strcmp(argv[i - 1], "-x") && !strcmp(argv[i], "ZB_PROFILES")) profiles = i;
        if (i > 0 && !strcmp(argv[i - 1], "-x") && !strcmp(argv[i], "OPENBLAS_CORETYPE")) core = i;
        if (!strcmp(argv[i], "allgather")) self = i;
    }
    ZB_CHECK(nccl > 0 && profiles > 0 && core > 0 && self > nccl && self > profiles && self > core);
    zb_launch_argv_free(argv);
    unsetenv("NCCL_ALGO");
    unsetenv("ZB_PROFILES");
    unsetenv("OPENBLAS_CORETYPE");
}

int main(void) {
    /* Exact argv checks below assume no forwarded variables (-x) are set. */
    unsetenv("ZB_PROFILES");
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv("ZB_TEST_BLAS_DETECTED");
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "NCCL_", 5) == 0) {
            char name[256];
            size_t len = strcspn(*e, "=");
            if (len < sizeof name) {
                memcpy(name, *e, len);
                name[len] = '\0';
                unsetenv(name);
                e = environ - 1; /* environ changed: start over */
            }
        }
    }
    if (zb_launch_self_exe(NULL, g_self, sizeof g_self) != ZB_OK || g_self[0] != '/') {
        fprintf(stderr, "cannot resolve /proc/self/exe: %s\n", zb_error_message());
        return 1;
    }
    test_plain();
    test_hostfile();
    test_emulated();
    test_bad_opts();
    test_format();
    test_under_mpi();
    test_run();
    test_node_id_parse();
    test_check();
    test_forward_env();
    return zb_test_finish("test_launch");
}
