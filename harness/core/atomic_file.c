/* Atomic file replacement: temporary file, fsync, rename (see atomic_file.h). */
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* path + ".tmp.<pid>", malloc'ed; NULL when out of memory. */
static char *zb_atomic_temp_name(const char *path) {
    size_t n = strlen(path) + 32;
    char *name = (char *)malloc(n);
    if (name) snprintf(name, n, "%s.tmp.%ld", path, (long)getpid());
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

/* Writes, syncs and closes the temporary file. On failure returns the errno
 * and names the failing step in *what; the caller removes the file. */
static int zb_fill_temp(const char *tmp, const char *data, size_t n, const char **what) {
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) {
        *what = "create";
        return errno;
    }
    int err = 0;
    if (zb_write_all(fd, data, n) != 0) {
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

zb_status zb_atomic_write(const char *path, const char *data, size_t n) {
    if (!path || !path[0]) return ZB_FAIL(ZB_ERR_INVALID, "atomic write: empty output path");
    if (!data && n > 0) return ZB_FAIL(ZB_ERR_INVALID, "atomic write %s: no data", path);
    char *tmp = zb_atomic_temp_name(path);
    if (!tmp) return ZB_FAIL(ZB_ERR_NOMEM, "atomic write %s: out of memory", path);

    const char *what = "";
    int err = zb_fill_temp(tmp, data ? data : "", n, &what);
    if (err == 0 && rename(tmp, path) != 0) {
        what = "rename temporary file over";
        err = errno;
    }
    if (err != 0) {
        if (strcmp(what, "create") != 0) (void)unlink(tmp);
        free(tmp);
        return ZB_FAIL(ZB_ERR_IO, "cannot write %s (%s): %s", path, what, strerror(err));
    }
    free(tmp);
    zb_sync_dir_of(path);
    return ZB_OK;
}
