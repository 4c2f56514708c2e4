/* Files removed when the process is stopped by a signal.
 *
 * An output is written to a temporary name and renamed over its target
 * (atomic_file.h); plot draws into a staging folder. If SIGINT, SIGTERM or
 * SIGHUP ends the process in between, those temporaries would be left
 * behind. A path registered here is unlinked (or, for a folder, rmdir'ed
 * after every file) by the signal handler, which then lets the signal do
 * what it would have done: the previous handler is called, or the default
 * action (termination) is taken. SIGKILL cannot be caught; nothing can clean
 * up after it.
 *
 * Registration is thread-safe and the handler uses only async-signal-safe
 * calls. At most ZB_CLEANUP_SLOTS paths are held at once; a full table is
 * an error, so no temporary goes unprotected silently. */
#ifndef ZB_CLEANUP_H
#define ZB_CLEANUP_H

#include <stdbool.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ZB_CLEANUP_SLOTS 128
#define ZB_CLEANUP_PATH_MAX 4096

/* Registers `path` (a file, or a folder when is_dir) for removal on a
 * signal; installs the handlers on first use. *slot receives the handle for
 * zb_cleanup_drop. ZB_ERR_INVALID for a path too long, ZB_ERR_INTERNAL when
 * every slot is taken. */
zb_status zb_cleanup_add(const char *path, bool is_dir, int *slot);

/* Forgets a registration (the path was renamed or removed by its owner).
 * A negative slot is ignored. */
void zb_cleanup_drop(int slot);

/* Blocks the cleanup signals in the calling thread around a sequence that
 * must not be cut in the middle (plot's final renames); they are delivered
 * at zb_cleanup_release. Not nested. */
void zb_cleanup_hold(void);
void zb_cleanup_release(void);

#ifdef __cplusplus
}
#endif
#endif
