/* Reading an input file whole: profiles (--hw, --model, accept profiles,
 * calibrate --hw), results files (compare, plot, accept) and the profile a
 * results file names (plot's meta.config.hw) all come through here.
 *
 * The file is opened without blocking (O_NONBLOCK: a FIFO with no writer
 * would otherwise hang the open, and reading one would hang forever),
 * checked to be a regular file of at most `max_bytes` on the descriptor
 * itself (so the file checked is the file read), and read whole. A FIFO, a
 * folder, a device or a socket is refused with one line, as is a file
 * larger than the bound. */
#ifndef ZB_INPUT_FILE_H
#define ZB_INPUT_FILE_H

#include <stddef.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The bound for results files (compare, plot, accept's runs) and traces. */
#define ZB_RESULTS_MAX_BYTES ((size_t)1 << 30)

/* Reads `path` into *text (malloc'ed, NUL-terminated; the caller frees it)
 * and *len. Errors (ZB_ERR_INVALID, *text NULL): "'PATH': not a regular
 * file (a FIFO)", "'PATH': 2048 bytes, more than the 1024 accepted",
 * "'PATH': No such file or directory"; ZB_ERR_NOMEM, ZB_ERR_IO for a read
 * that fails. *open_errno (may be NULL) is the errno of a failed open, 0
 * otherwise, for callers that word a missing file themselves. */
zb_status zb_input_read(const char *path, size_t max_bytes, char **text, size_t *len, int *open_errno);

#ifdef __cplusplus
}
#endif
#endif
