/* Atomic file replacement: a random temporary file, fsync, rename (see atomic_file.h). */
#include "atomic_file.h"

#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The permission bits a new file gets from open(..., 0666): the umask read
 * from /proc (umask() itself would change it, racing other threads). */
static mode_t zb_new_file_mode(void) {
    mode_t mask = 022;
    FILE *f = fopen("/proc/self/status", "re");
    if (f) {
        char line[128];
        unsigned int m = 0;
        while (fgets(line, sizeof line, f)) {
            if (sscanf(line, "Umask: %o", &m) == 1) {
                mask = (mode_t)m;
                break;
            }
        }
        fclose(f);
    }
    return 0666 & ~mask;
}

/* "<dir>/.<base>.zb-XXXXXX", malloc'ed: a hidden name beside the target
 * that mkstemp fills with random characters. NULL when out of memory. */
static char *zb_atomic_temp_template(const char *path) {
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    size_t n = strlen(path) + 16;
    char *name = (char *)malloc(n);
    if (name) snprintf(name, n, "%.*s.%s.zb-XXXXXX", (int)dir_len, path, base);
    return name;
}

/* Writes all `n` bytes to `fd`, retrying short writes and EINTR. Returns 0,
 * or -1 with errno set. */
static int zb_write_all(int fd, const char *data, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, data, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        data += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The directory part of `path` ("." when there is none), malloc'ed. */
static char *zb_dir_of(const char *path) {
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 1;
    if (slash == path) n = 1; /* "/file" lives in "/" */
    char *dir = (char *)malloc(n + 1);
    if (!dir) return NULL;
    memcpy(dir, slash ? path : ".", n);
    dir[n] = '\0';
    return dir;
}

/* Flushes the directory entry of `path` to disk. Best effort: some file
 * systems do not support fsync on directories, and the data is already
 * complete at `path` whatever happens here. */
static void zb_sync_dir_of(const char *path) {
    char *dir = zb_dir_of(path);
    if (!dir) return;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

/* Writes, syncs and closes the temporary file behind fd. On failure returns
 * the errno and names the failing step in *what; the caller removes the
 * file. */
static int zb_fill_temp(int fd, const char *data, size_t n, const char **what) {
    int err = 0;
    if (fchmod(fd, zb_new_file_mode()) != 0) {
        *what = "chmod";
        err = errno;
    } else if (zb_write_all(fd, data, n) != 0) {
        *what = "write";
        err = errno;
    } else if (fsync(fd) != 0) {
        *what = "fsync";
        err = errno;
    }
    if (close(fd) != 0 && err == 0) {
        *what = "close";
        err = errno;
    }
    return err;
}

/* The target must be a regular file or not exist: a link is not followed
 * nor replaced, and a folder, FIFO or device is not ours to replace. */
static zb_status zb_check_target(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0) return ZB_OK;
    if (S_ISREG(st.st_mode)) return ZB_OK;
    return ZB_FAIL(ZB_ERR_INVALID, "cannot write %s: it is %s; zerobench replaces only regular files", path,
                   S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISDIR(st.st_mode) ? "a folder" : "not a regular file");
}

zb_status zb_atomic_write(const char *path, const char *data, size_t n) {
    if (!path || !path[0]) return ZB_FAIL(ZB_ERR_INVALID, "atomic write: empty output path");
    if (!data && n > 0) return ZB_FAIL(ZB_ERR_INVALID, "atomic write %s: no data", path);
    ZB_TRY(zb_check_target(path));
    char *tmp = zb_atomic_temp_template(path);
    if (!tmp) return ZB_FAIL(ZB_ERR_NOMEM, "atomic write %s: out of memory", path);
    /* O_EXCL (in mkstemp) on a random name: a planted link or file at the
     * temporary name makes the create fail instead of being written through. */
    int fd = mkstemp(tmp);
    if (fd >= 0) (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        free(tmp);
        return ZB_FAIL(ZB_ERR_IO, "cannot write %s (create temporary file): %s", path, strerror(err));
    }
    int slot = -1;
    if (zb_cleanup_add(tmp, false, &slot) != ZB_OK) {
        close(fd);
        (void)unlink(tmp);
        free(tmp);
        return ZB_ERR_INTERNAL; /* its message is recorded */
    }
    const char *what = "";
    int err = zb_fill_temp(fd, data ? data : "", n, &what);
    if (err == 0 && rename(tmp, path) != 0) {
        what = "rename temporary file over";
        err = errno;
    }
    if (err != 0) (void)unlink(tmp);
    zb_cleanup_drop(slot);
    free(tmp);
    if (err != 0) return ZB_FAIL(ZB_ERR_IO, "cannot write %s (%s): %s", path, what, strerror(err));
    zb_sync_dir_of(path);
    return ZB_OK;
}
