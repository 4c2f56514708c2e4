/* Atomic file replacement for every output zerobench writes (JSON, CSV,
 * traces, plot data).
 *
 * zb_atomic_write writes the bytes to a temporary file beside the target
 * (same directory, so the final rename never crosses a file system), flushes
 * it to disk with fsync, then renames it over the target. A reader therefore
 * sees either the old file or the complete new one, never a half-written
 * file, even if the process dies mid-write. */
#ifndef ZB_ATOMIC_FILE_H
#define ZB_ATOMIC_FILE_H

#include <stddef.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes `n` bytes of `data` to `path`, atomically replacing any existing
 * regular file there. `path` itself must be a regular file or absent: a
 * symbolic link, folder, FIFO or device there is refused (ZB_ERR_INVALID),
 * so nothing is written through a link nor a link replaced. The temporary
 * file is "<dir>/.<name>.zb-XXXXXX", created by mkstemp (O_CREAT|O_EXCL on a
 * random name, so a file or link planted at a guessed name is never
 * opened), registered with cleanup.h so that SIGINT/SIGTERM/SIGHUP remove
 * it. New files get mode 0666 less the umask, as fopen would give. After
 * the rename the directory is fsync'ed too, best effort (file systems that
 * refuse it are not an error).
 *
 * On any failure returns ZB_ERR_IO (ZB_ERR_INVALID for a NULL/empty path
 * or a target that is not a regular file, ZB_ERR_NOMEM if the temporary
 * name cannot be built) with a message naming the path and strerror; the
 * temporary file is removed and `path` is left as it was. */
zb_status zb_atomic_write(const char *path, const char *data, size_t n);

#ifdef __cplusplus
}
#endif
#endif
