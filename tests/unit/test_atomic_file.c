/* Unit tests for atomic_file.c and cleanup.c against hostile file systems:
 * a symbolic link at the target is refused and its victim left as it was, a
 * FIFO or folder at the target is refused without blocking, the temporary
 * name is random (so a link planted at the old guessable name PATH.tmp.<pid>
 * is never opened), new files get 0666 less the umask, and a temporary
 * registered with cleanup.h is removed when SIGTERM or SIGINT ends the
 * process, after which the signal still ends it (or reaches the handler
 * that was there before). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cleanup.h"
#include "zb_test.h"

static char g_dir[256];

static void path_in(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", g_dir, name); }

static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(d);
    return n;
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    ZB_CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static int same_text(const char *path, const char *want) {
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = '\0';
    return strcmp(buf, want) == 0;
}

/* A link at the target: refused, the victim keeps its bytes, the link stays. */
static void test_link_target(void) {
    char victim[512], link[512];
    path_in(victim, sizeof victim, "victim");
    path_in(link, sizeof link, "r.json");
    write_text(victim, "precious\n");
    ZB_CHECK(symlink(victim, link) == 0);
    int before = count_entries(g_dir);
    ZB_CHECK(zb_atomic_write(link, "results", 7) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "symbolic link") != NULL, "message: %s", zb_error_message());
    ZB_CHECK(same_text(victim, "precious\n"));
    struct stat st;
    ZB_CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    ZB_CHECK(count_entries(g_dir) == before);
    unlink(link);
    unlink(victim);
}

/* Links planted at the old guessable temporary names (PATH.tmp.<pid> for
 * this pid and the next ones) are never opened: the write lands in PATH,
 * the victim is untouched and the links stay links. */
static void test_planted_temp_names(void) {
    char victim[512], path[512], link[600];
    path_in(victim, sizeof victim, "victim2");
    path_in(path, sizeof path, "out.json");
    write_text(victim, "precious\n");
    for (long p = getpid(); p < getpid() + 4; p++) {
        snprintf(link, sizeof link, "%s.tmp.%ld", path, p);
        ZB_CHECK(symlink(victim, link) == 0);
    }
    ZB_CHECK_OK(zb_atomic_write(path, "results\n", 8));
    ZB_CHECK(same_text(path, "results\n"));
    ZB_CHECK(same_text(victim, "precious\n"));
    struct stat st;
    ZB_CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
    for (long p = getpid(); p < getpid() + 4; p++) {
        snprintf(link, sizeof link, "%s.tmp.%ld", path, p);
        ZB_CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
        unlink(link);
    }
    ZB_CHECK(count_entries(g_dir) == 2);
    unlink(path);
    unlink(victim);
}

/* A FIFO or a folder at the target: refused at once, nothing opened. */
static void test_special_targets(void) {
    char fifo[512], dir[512];
    path_in(fifo, sizeof fifo, "fifo");
    path_in(dir, sizeof dir, "adir");
    ZB_CHECK(mkfifo(fifo, 0600) == 0);
    ZB_CHECK(mkdir(dir, 0755) == 0);
    int before = count_entries(g_dir);
    ZB_CHECK(zb_atomic_write(fifo, "x", 1) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "not a regular file") != NULL, "message: %s", zb_error_message());
    ZB_CHECK(zb_atomic_write(dir, "x", 1) == ZB_ERR_INVALID);
    ZB_CHECK_MSG(strstr(zb_error_message(), "a folder") != NULL, "message: %s", zb_error_message());
    ZB_CHECK(count_entries(g_dir) == before);
    unlink(fifo);
    rmdir(dir);
}

/* New files: 0666 less the umask, like fopen. */
static void test_mode(void) {
    char path[512];
    path_in(path, sizeof path, "mode.txt");
    mode_t old = umask(027);
    ZB_CHECK_OK(zb_atomic_write(path, "x", 1));
    umask(old);
    struct stat st;
    ZB_CHECK(stat(path, &st) == 0);
    ZB_CHECK_MSG((st.st_mode & 0777) == 0640, "mode %o", (unsigned)(st.st_mode & 0777));
    unlink(path);
}

static volatile sig_atomic_t g_prior_called;
static void prior_handler(int sig) {
    (void)sig;
    g_prior_called = 1;
}

/* In a child: registers a file and a folder holding one, then raises sig.
 * With `prior`, a handler was installed before; it must still be called. */
static void child_raises(int sig, int prior, const char *file, const char *dir, const char *inner) {
    if (prior) signal(sig, prior_handler);
    write_text(file, "tmp");
    if (mkdir(dir, 0755) != 0) _exit(3);
    write_text(inner, "tmp");
    int a = -1, b = -1, c = -1;
    if (zb_cleanup_add(file, false, &a) != ZB_OK || zb_cleanup_add(dir, true, &b) != ZB_OK ||
        zb_cleanup_add(inner, false, &c) != ZB_OK)
        _exit(4);
    raise(sig);
    _exit(g_prior_called ? 7 : 5); /* reached only when the signal did not end us */
}

static void test_signal_cleanup(int sig, int prior) {
    char file[512], dir[512], inner[600];
    path_in(file, sizeof file, ".out.json.zb-abcdef");
    path_in(dir, sizeof dir, ".plot-staging");
    snprintf(inner, sizeof inner, "%s/busbw.pdf", dir);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) child_raises(sig, prior, file, dir, inner);
    int status = 0;
    ZB_CHECK(waitpid(pid, &status, 0) == pid);
    if (prior) ZB_CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 7, "status %d", status);
    else ZB_CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == sig, "status %d", status);
    ZB_CHECK_MSG(access(file, F_OK) != 0, "%s left behind", file);
    ZB_CHECK_MSG(access(inner, F_OK) != 0, "%s left behind", inner);
    ZB_CHECK_MSG(access(dir, F_OK) != 0, "%s left behind", dir);
    unlink(inner);
    rmdir(dir);
    unlink(file);
}

/* A dropped registration is not removed. */
static void test_drop(void) {
    char file[512];
    path_in(file, sizeof file, "kept");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        write_text(file, "kept");
        int s = -1;
        if (zb_cleanup_add(file, false, &s) != ZB_OK) _exit(4);
        zb_cleanup_drop(s);
        raise(SIGTERM);
        _exit(5);
    }
    int status = 0;
    ZB_CHECK(waitpid(pid, &status, 0) == pid);
    ZB_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    ZB_CHECK(same_text(file, "kept"));
    unlink(file);
}

int main(void) {
    const char *base = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/zb_test_atomic.XXXXXX", base && base[0] ? base : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    /* The signal tests first: each child then installs the handlers itself
     * (after its own prior handler), as a process does at its first write. */
    test_signal_cleanup(SIGTERM, 0);
    test_signal_cleanup(SIGINT, 0);
    test_signal_cleanup(SIGTERM, 1);
    test_drop();
    test_link_target();
    test_planted_temp_names();
    test_special_targets();
    test_mode();
    ZB_CHECK_MSG(count_entries(g_dir) == 0, "%d files left in %s", count_entries(g_dir), g_dir);
    rmdir(g_dir);
    return zb_test_finish("test_atomic_file");
}
