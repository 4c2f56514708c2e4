/* Finding the plot scripts and running gnuplot on them (plot.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plot.h"
#include "results.h"
#include "tool_run.h"

/* The Debian package with gnuplot's cairo terminals and no X11. */
#define ZB_GNUPLOT_PACKAGE "gnuplot-nox"

static bool has_scripts(const char *dir) {
    char p[4200];
    struct stat st;
    snprintf(p, sizeof p, "%s/busbw.gp", dir);
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

zb_status zb_plot_scripts_dir(const char *flag, char *out, size_t n) {
    char shown[72];
    if (flag && flag[0]) {
        if (!has_scripts(flag)) {
            return ZB_FAIL(ZB_ERR_INVALID, "--scripts '%s': no busbw.gp there (expected the plots/ folder)",
                           zb_results_shown_path(flag, shown));
        }
        snprintf(out, n, "%s", flag);
        return ZB_OK;
    }
    const char *env = getenv("ZB_PLOTS");
    if (env && env[0]) {
        if (!has_scripts(env)) {
            return ZB_FAIL(ZB_ERR_INVALID, "ZB_PLOTS '%s': no busbw.gp there (expected the plots/ folder)",
                           zb_results_shown_path(env, shown));
        }
        snprintf(out, n, "%s", env);
        return ZB_OK;
    }
#ifdef ZB_PLOTS_DIR
    if (has_scripts(ZB_PLOTS_DIR)) {
        snprintf(out, n, "%s", ZB_PLOTS_DIR);
        return ZB_OK;
    }
#endif
    /* Installed: <prefix>/bin/zerobench and <prefix>/share/zerobench/plots. */
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len > 0) {
        self[len] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            char dir[4200];
            snprintf(dir, sizeof dir, "%s/../share/zerobench/plots", self);
            if (has_scripts(dir)) {
                snprintf(out, n, "%s", dir);
                return ZB_OK;
            }
        }
    }
    return ZB_FAIL(ZB_ERR_INVALID, "the plot scripts (plots/busbw.gp ...) were not found: pass --scripts DIR "
                   "or set ZB_PLOTS to the plots/ folder");
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The last non-empty line of the file behind fd (gnuplot's message). */
static void last_line(int fd, char *out, size_t n) {
    char buf[8192];
    out[0] = '\0';
    off_t size = lseek(fd, 0, SEEK_END);
    off_t from = size > (off_t)sizeof buf - 1 ? size - (off_t)sizeof buf + 1 : 0;
    if (size <= 0 || lseek(fd, from, SEEK_SET) < 0) return;
    ssize_t got = read(fd, buf, sizeof buf - 1);
    if (got <= 0) return;
    buf[got] = '\0';
    while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == '\r' || buf[got - 1] == ' ')) buf[--got] = '\0';
    char *start = strrchr(buf, '\n');
    snprintf(out, n, "%s", start ? start + 1 : buf);
    for (char *c = out; *c; c++) {
        if ((unsigned char)*c < 0x20) *c = ' ';
    }
}

/* Runs gnuplot with argv[1..] (argv[0] set here); *code its exit status
 * (127: it could not be started), `msg` its last stderr line. */
static zb_status run(const char *const *args, double timeout_s, int *code, char *msg, size_t msg_n) {
    char tmpl[] = "/tmp/zerobench-gnuplot-XXXXXX";
    int err_fd = mkstemp(tmpl);
    if (err_fd < 0) return ZB_FAIL(ZB_ERR_IO, "cannot create a temporary file for gnuplot: %s", strerror(errno));
    unlink(tmpl);
    const char *argv[8];
    int argc = 0;
    argv[argc++] = "gnuplot";
    for (int i = 0; args[i] && argc < 7; i++) argv[argc++] = args[i];
    argv[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(err_fd);
        return ZB_FAIL(ZB_ERR_IO, "cannot start gnuplot: %s", strerror(errno));
    }
    if (pid == 0) {
        zb_tool_die_with_parent(parent, SIGKILL); /* gnuplot draws into a staging folder that is gone */
        int null_fd = open("/dev/null", O_RDWR);
        if (null_fd >= 0) {
            dup2(null_fd, 0);
            dup2(null_fd, 1);
        }
        dup2(err_fd, 2);
        execvp("gnuplot", (char *const *)argv);
        _exit(127);
    }
    double deadline = now_s() + timeout_s;
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) {
            close(err_fd);
            return ZB_FAIL(ZB_ERR_IO, "waiting for gnuplot: %s", strerror(errno));
        }
        if (now_s() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            close(err_fd);
            return ZB_FAIL(ZB_ERR_TIMEOUT, "gnuplot ran past %g s and was stopped", timeout_s);
        }
        usleep(5 * 1000);
    }
    *code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    last_line(err_fd, msg, msg_n);
    close(err_fd);
    return ZB_OK;
}

zb_status zb_plot_gnuplot_check(void) {
    const char *args[] = {"-e", "set terminal pdfcairo; set terminal pngcairo", NULL};
    int code = 0;
    char msg[256];
    ZB_TRY(run(args, 30.0, &code, msg, sizeof msg));
    if (code == 127) {
        return ZB_FAIL(ZB_ERR_INVALID, "gnuplot was not found on PATH: install the Debian package "
                       ZB_GNUPLOT_PACKAGE " (ci/setup does)");
    }
    if (code != 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "gnuplot lacks the pdfcairo/pngcairo terminals (%.120s): install the "
                       "Debian package " ZB_GNUPLOT_PACKAGE, msg);
    }
    return ZB_OK;
}

zb_status zb_plot_gnuplot_run(const char *vars, const char *script, double timeout_s) {
    const char *args[] = {"-e", vars, script, NULL};
    int code = 0;
    char msg[256];
    ZB_TRY(run(args, timeout_s, &code, msg, sizeof msg));
    if (code != 0) {
        const char *base = strrchr(script, '/');
        return ZB_FAIL(ZB_ERR_IO, "gnuplot failed on %s (exit %d): %s", base ? base + 1 : script, code,
                       msg[0] ? msg : "no message");
    }
    return ZB_OK;
}
