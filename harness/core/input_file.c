/* Input files checked before they are read (input_file.h). */
#include "input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"

static const char *kind_of(mode_t m) {
    return S_ISFIFO(m) ? "a FIFO" : S_ISDIR(m) ? "a folder" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a plain file";
}

zb_status zb_input_read(const char *path, size_t max_bytes, char **text, size_t *len, int *open_errno) {
    char shown[96];
    *text = NULL;
    *len = 0;
    if (open_errno) *open_errno = 0;
    zb_escape(path, 64, shown, sizeof shown);
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        if (open_errno) *open_errno = err;
        return ZB_FAIL(ZB_ERR_INVALID, "'%s': %s", shown, strerror(err));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int err = errno;
        close(fd);
        return ZB_FAIL(ZB_ERR_IO, "'%s': %s", shown, strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return ZB_FAIL(ZB_ERR_INVALID, "'%s': not a regular file (%s)", shown, kind_of(st.st_mode));
    }
    if ((unsigned long long)st.st_size > (unsigned long long)max_bytes) {
        close(fd);
        return ZB_FAIL(ZB_ERR_INVALID, "'%s': %lld bytes, more than the %zu accepted", shown,
                       (long long)st.st_size, max_bytes);
    }
    /* A regular file never blocks, but reads are plain from here on. */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    size_t cap = (size_t)st.st_size;
    char *buf = (char *)malloc(cap + 1);
    if (!buf) {
        close(fd);
        return ZB_FAIL(ZB_ERR_NOMEM, "'%s': out of memory for %zu bytes", shown, cap);
    }
    /* Read up to the size fstat gave (a file growing meanwhile is cut there). */
    size_t got = 0;
    while (got < cap) {
        ssize_t r = read(fd, buf + got, cap - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int err = errno;
            free(buf);
            close(fd);
            return ZB_FAIL(ZB_ERR_IO, "'%s': read failed: %s", shown, strerror(err));
        }
        if (r == 0) break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0';
    *text = buf;
    *len = got;
    return ZB_OK;
}
