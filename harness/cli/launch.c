/* The launcher behind --nodes (see launch.h): builds the mpirun command that
 * re-runs zerobench with N nodes x G ranks, prints it, runs it and hands back
 * its exit status. Nothing here calls MPI. */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* ---- zb_under_mpi -------------------------------------------------------- */

bool zb_under_mpi(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        if (getenv(vars[i]) != NULL) return true;
    }
    return false;
}

const char *zb_launch_mpirun(const zb_launch_opts *o) {
    if (o != NULL && o->mpirun != NULL) return o->mpirun;
    const char *env = getenv("ZB_MPIRUN");
    if (env != NULL && env[0] != '\0') return env;
    return "mpirun";
}

zb_status zb_launch_self_exe(const char *argv0, char *out, size_t n) {
    if (out == NULL || n == 0) return ZB_FAIL(ZB_ERR_INVALID, "zb_launch_self_exe: no output buffer");
    char path[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", path, sizeof path - 1);
    if (len > 0) {
        path[len] = '\0';
    } else if (argv0 != NULL && realpath(argv0, path) != NULL) {
        /* path holds the resolved argv[0] */
    } else if (argv0 != NULL) {
        snprintf(path, sizeof path, "%s", argv0);
    } else {
        return ZB_FAIL(ZB_ERR_INVALID, "cannot find the zerobench executable: /proc/self/exe: %s",
                       strerror(errno));
    }
    if (strlen(path) >= n) {
        return ZB_FAIL(ZB_ERR_INVALID, "executable path %s is longer than %zu bytes", path, n - 1);
    }
    memcpy(out, path, strlen(path) + 1);
    return ZB_OK;
}

/* ---- argv builder --------------------------------------------------------- */

typedef struct zb_argv_builder {
    char **v;
    size_t n, cap;
    bool oom;
} zb_argv_builder;

/* Appends a copy of `s`; remembers an allocation failure instead of failing. */
static void zb_argv_push(zb_argv_builder *b, const char *s) {
    if (b->oom) return;
    if (b->n + 2 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 16;
        char **v = (char **)realloc(b->v, cap * sizeof *v);
        if (v == NULL) {
            b->oom = true;
            return;
        }
        b->v = v;
        b->cap = cap;
    }
    char *copy = strdup(s);
    if (copy == NULL) {
        b->oom = true;
        return;
    }
    b->v[b->n++] = copy;
    b->v[b->n] = NULL;
}

static void zb_argv_push_int(zb_argv_builder *b, int value) {
    char buf[32];
    snprintf(buf, sizeof buf, "%d", value);
    zb_argv_push(b, buf);
}

/* SELF ARGS...: the program with argv[0] replaced by its absolute path. */
static void zb_argv_push_self(zb_argv_builder *b, const char *self, int argc, char *const *argv) {
    zb_argv_push(b, self);
    for (int i = 1; i < argc; i++) zb_argv_push(b, argv[i]);
}

void zb_launch_argv_free(char **argv) {
    if (argv == NULL) return;
    for (char **p = argv; *p != NULL; p++) free(*p);
    free(argv);
}

static zb_status zb_launch_check_opts(const zb_launch_opts *o, int self_argc, char *const *self_argv) {
    if (o == NULL) return ZB_FAIL(ZB_ERR_INVALID, "zb_launch_build_argv: no options");
    if (o->nodes <= 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "--nodes %d: the node count must be a positive integer", o->nodes);
    }
    if (o->gpus_per_node < 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "--gpus-per-node %d: must be a positive integer", o->gpus_per_node);
    }
    int per_node = o->gpus_per_node > 0 ? o->gpus_per_node : 1;
    if ((long long)o->nodes * per_node > ZB_LAUNCH_MAX_RANKS) {
        return ZB_FAIL(ZB_ERR_INVALID, "--nodes %d x --gpus-per-node %d is %lld ranks; at most %d are accepted",
                       o->nodes, per_node, (long long)o->nodes * per_node, ZB_LAUNCH_MAX_RANKS);
    }
    if (o->emulate_nodes && o->hostfile != NULL) {
        return ZB_FAIL(ZB_ERR_INVALID,
                       "--hostfile %s with --emulate-nodes: emulated nodes all run on this machine; give one or the other",
                       o->hostfile);
    }
    if (o->hostfile != NULL && o->hostfile[0] == '\0') {
        return ZB_FAIL(ZB_ERR_INVALID, "--hostfile '': expected a file name");
    }
    if (self_argc < 1 || self_argv == NULL || self_argv[0] == NULL) {
        return ZB_FAIL(ZB_ERR_INVALID, "zb_launch_build_argv: empty program argv");
    }
    for (int i = 0; i < self_argc; i++) {
        if (self_argv[i] == NULL) return ZB_FAIL(ZB_ERR_INVALID, "zb_launch_build_argv: argv[%d] is NULL", i);
    }
    return ZB_OK;
}

extern char **environ;

/* Open MPI starts remote ranks with its own environment: forward the
 * variables that change what is measured (every NCCL_*, ZB_PROFILES, and
 * the user's OPENBLAS_CORETYPE and the BLAS test hook: each rank decides its
 * own BLAS core before MPI_Init, blas_core.h) with -x, in environment
 * order. Local ranks inherit them anyway. */
static void zb_launch_forward_env(zb_argv_builder *b) {
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        const char *eq = strchr(*e, '=');
        if (eq == NULL) continue;
        size_t len = (size_t)(eq - *e);
        bool nccl = len > 5 && strncmp(*e, "NCCL_", 5) == 0;
        bool profiles = len == 11 && strncmp(*e, "ZB_PROFILES", 11) == 0;
        bool blas = (len == 17 && strncmp(*e, "OPENBLAS_CORETYPE", 17) == 0) ||
                    (len == 21 && strncmp(*e, "ZB_TEST_BLAS_DETECTED", 21) == 0);
        if (!nccl && !profiles && !blas) continue;
        char name[256];
        if (len >= sizeof name) continue;
        memcpy(name, *e, len);
        name[len] = '\0';
        zb_argv_push(b, "-x");
        zb_argv_push(b, name);
    }
}

/* MPIRUN -np N*G --map-by ppr:G:node [--hostfile FILE] [-x VAR]... SELF ARGS... */
static void zb_launch_plain(zb_argv_builder *b, const zb_launch_opts *o, int per_node, const char *self,
                            int argc, char *const *argv) {
    char map[48];
    snprintf(map, sizeof map, "ppr:%d:node", per_node);
    zb_argv_push(b, zb_launch_mpirun(o));
    zb_argv_push(b, "-np");
    zb_argv_push_int(b, o->nodes * per_node);
    zb_argv_push(b, "--map-by");
    zb_argv_push(b, map);
    if (o->hostfile != NULL) {
        zb_argv_push(b, "--hostfile");
        zb_argv_push(b, o->hostfile);
    }
    zb_launch_forward_env(b);
    zb_argv_push_self(b, self, argc, argv);
}

/* MPIRUN --oversubscribe -np G env ZB_NODE_ID=0 SELF ARGS... : -np G env ZB_NODE_ID=1 ... */
static void zb_launch_emulated(zb_argv_builder *b, const zb_launch_opts *o, int per_node, const char *self,
                               int argc, char *const *argv) {
    zb_argv_push(b, zb_launch_mpirun(o));
    zb_argv_push(b, "--oversubscribe");
    for (int node = 0; node < o->nodes; node++) {
        char id[48];
        snprintf(id, sizeof id, "ZB_NODE_ID=%d", node);
        if (node > 0) zb_argv_push(b, ":");
        zb_argv_push(b, "-np");
        zb_argv_push_int(b, per_node);
        zb_argv_push(b, "env");
        zb_argv_push(b, id);
        zb_argv_push_self(b, self, argc, argv);
    }
}

zb_status zb_launch_build_argv(const zb_launch_opts *o, int self_argc, char *const *self_argv,
                               char ***out_argv) {
    if (out_argv == NULL) return ZB_FAIL(ZB_ERR_INVALID, "zb_launch_build_argv: no output");
    *out_argv = NULL;
    ZB_TRY(zb_launch_check_opts(o, self_argc, self_argv));
    char self[PATH_MAX];
    ZB_TRY(zb_launch_self_exe(self_argv[0], self, sizeof self));

    int per_node = o->gpus_per_node > 0 ? o->gpus_per_node : 1;
    zb_argv_builder b = {NULL, 0, 0, false};
    if (o->emulate_nodes) {
        zb_launch_emulated(&b, o, per_node, self, self_argc, self_argv);
    } else {
        zb_launch_plain(&b, o, per_node, self, self_argc, self_argv);
    }
    if (b.oom) {
        zb_launch_argv_free(b.v);
        return ZB_FAIL(ZB_ERR_NOMEM, "out of memory building the mpirun command line");
    }
    *out_argv = b.v;
    return ZB_OK;
}

/* ---- formatting ------------------------------------------------------------ */

static bool zb_shell_safe(const char *s) {
    if (*s == '\0') return false;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  strchr("_@%+=:,./-", c) != NULL;
        if (!ok) return false;
    }
    return true;
}

/* Appends `s` at out[*len], keeping one byte for the NUL; sets *full when cut. */
static void zb_out_append(char *out, size_t n, size_t *len, bool *full, const char *s) {
    for (; *s && !*full; s++) {
        if (*len + 1 >= n) {
            *full = true;
            break;
        }
        out[(*len)++] = *s;
    }
    out[*len] = '\0';
}

static void zb_out_quoted(char *out, size_t n, size_t *len, bool *full, const char *word) {
    if (zb_shell_safe(word)) {
        zb_out_append(out, n, len, full, word);
        return;
    }
    zb_out_append(out, n, len, full, "'");
    for (const char *p = word; *p && !*full; p++) {
        char one[2] = {*p, '\0'};
        zb_out_append(out, n, len, full, *p == '\'' ? "'\\''" : one);
    }
    zb_out_append(out, n, len, full, "'");
}

void zb_launch_format(char *const *argv, char *out, size_t n) {
    if (out == NULL || n == 0) return;
    size_t len = 0;
    bool full = false;
    out[0] = '\0';
    for (size_t i = 0; argv != NULL && argv[i] != NULL && !full; i++) {
        if (i > 0) zb_out_append(out, n, &len, &full, " ");
        zb_out_quoted(out, n, &len, &full, argv[i]);
    }
    if (full && n > 4) memcpy(out + n - 4, "...", 4);
}

/* ---- running ---------------------------------------------------------------- */

static volatile sig_atomic_t zb_launch_child = 0;

/* Forwards a signal sent by another process (kill, timeout, a batch system) to
 * the child. A signal from the terminal (si_code SI_KERNEL) already went to
 * the whole foreground process group, the child included, so it is not sent
 * twice: mpirun treats a second SIGINT as "terminate now". */
static void zb_launch_forward(int sig, siginfo_t *info, void *ctx) {
    (void)ctx;
#ifdef SI_KERNEL
    if (info != NULL && info->si_code == SI_KERNEL) return;
#else
    (void)info;
#endif
    pid_t pid = (pid_t)zb_launch_child;
    if (pid > 0) kill(pid, sig);
}

typedef struct zb_saved_signals {
    struct sigaction int_old, term_old;
} zb_saved_signals;

static void zb_launch_install(zb_saved_signals *saved) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = zb_launch_forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &saved->int_old);
    sigaction(SIGTERM, &sa, &saved->term_old);
}

static void zb_launch_restore(const zb_saved_signals *saved) {
    sigaction(SIGINT, &saved->int_old, NULL);
    sigaction(SIGTERM, &saved->term_old, NULL);
    zb_launch_child = 0;
}

/* In the child: exec, or report errno through the close-on-exec pipe. */
static void zb_launch_exec_child(char *const *argv, int err_fd) {
    execvp(argv[0], argv);
    int err = errno;
    ssize_t w = write(err_fd, &err, sizeof err);
    (void)w;
    _exit(127);
}

static int zb_launch_wait(pid_t pid) {
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) return 1;
    }
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
    return 1;
}

/* Reads the child's exec errno; 0 when exec succeeded (the pipe just closed). */
static int zb_launch_read_exec_error(int fd) {
    int err = 0;
    ssize_t r;
    do {
        r = read(fd, &err, sizeof err);
    } while (r < 0 && errno == EINTR);
    return r == (ssize_t)sizeof err ? err : 0;
}

int zb_launch_run(char *const *argv) {
    if (argv == NULL || argv[0] == NULL) {
        fprintf(stderr, "zerobench: launching: empty command\n");
        return 127;
    }
    char line[4096];
    zb_launch_format(argv, line, sizeof line);
    fprintf(stderr, "zerobench: launching: %s\n", line);
    fflush(stdout);
    fflush(stderr);

    int fds[2];
    if (pipe(fds) != 0) {
        fprintf(stderr, "zerobench: cannot run %s: pipe: %s\n", argv[0], strerror(errno));
        return 1;
    }
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);

    /* Signals stay blocked until the parent knows the child's pid, so none
     * arrives while there is nobody to forward it to. */
    zb_saved_signals saved;
    sigset_t block, old_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &old_mask);
    zb_launch_install(&saved);
    pid_t pid = fork();
    if (pid < 0) {
        int err = errno;
        zb_launch_restore(&saved);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        close(fds[0]);
        close(fds[1]);
        fprintf(stderr, "zerobench: cannot run %s: fork: %s\n", argv[0], strerror(err));
        return 1;
    }
    if (pid == 0) {
        close(fds[0]);
        zb_launch_restore(&saved);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        zb_launch_exec_child(argv, fds[1]);
    }
    zb_launch_child = (sig_atomic_t)pid;
    sigprocmask(SIG_SETMASK, &old_mask, NULL);
    close(fds[1]);
    int exec_err = zb_launch_read_exec_error(fds[0]);
    close(fds[0]);
    int rc = zb_launch_wait(pid);
    zb_launch_restore(&saved);
    if (exec_err != 0) {
        fprintf(stderr, "zerobench: cannot run the MPI launcher '%s': %s (install Open MPI, or set ZB_MPIRUN to its path)\n",
                argv[0], strerror(exec_err));
        return 127;
    }
    return rc;
}
