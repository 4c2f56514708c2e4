/* Running zerobench as a child process (tool_run.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "tool_run.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void zb_tool_die_with_parent(pid_t parent, int sig) {
#ifdef __linux__
    (void)prctl(PR_SET_PDEATHSIG, sig); /* failing (never seen): the child still runs */
#else
    (void)sig;
#endif
    if (getppid() != parent) _exit(127);
}

zb_status zb_tool_run_self(const char *const *args, const char *log_path, double timeout_s, int *exit_code) {
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return ZB_FAIL(ZB_ERR_IO, "cannot find this executable (/proc/self/exe): %s", strerror(errno));
    self[n] = '\0';
    const char *argv[64];
    int argc = 0;
    argv[argc++] = self;
    for (int i = 0; args[i]; i++) {
        if (argc >= 63) return ZB_FAIL(ZB_ERR_INVALID, "too many arguments for a child run (at most 62)");
        argv[argc++] = args[i];
    }
    argv[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) return ZB_FAIL(ZB_ERR_IO, "cannot start '%s %s': %s", self, args[0], strerror(errno));
    if (pid == 0) {
        /* SIGTERM: a child zerobench cleans up its outputs, an mpirun ends its ranks */
        zb_tool_die_with_parent(parent, SIGTERM);
        setpgid(0, 0); /* its own group: a timeout kills mpirun and its ranks alike */
        if (log_path) {
            int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0666);
            if (fd < 0) _exit(127);
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execv(self, (char *const *)argv);
        _exit(127);
    }
    setpgid(pid, pid); /* also here: no race with the child's own call */
    double deadline = now_s() + timeout_s;
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) return ZB_FAIL(ZB_ERR_IO, "waiting for '%s': %s", args[0], strerror(errno));
        if (now_s() > deadline) {
            kill(-pid, SIGTERM);
            usleep(500 * 1000);
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            *exit_code = 124;
            return ZB_FAIL(ZB_ERR_TIMEOUT, "'zerobench %s' ran past %g s and was stopped", args[0], timeout_s);
        }
        usleep(20 * 1000);
    }
    *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return ZB_OK;
}
