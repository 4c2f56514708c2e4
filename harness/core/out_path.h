/* Output paths checked before any work: every command that writes files
 * (the benchmarks' --json/--csv/--trace, plan --json, calibrate -o,
 * compare -o, accept --junit/--json, plot -o) runs the same checks, so bad
 * input is refused with exit 2 before anything is measured or written.
 *
 * zb_out_path_check: the file's folder exists and is writable; the path is
 * not a folder, a symbolic link, a FIFO or a device (atomic_file.h replaces
 * only regular files; catching it here means no work is lost to it).
 *
 * zb_out_dir_check: the same for an output folder: a real folder (never a
 * link) or a name whose parent folder is writable.
 *
 * zb_paths_distinct: no two outputs of one command name the same file, and
 * no output names one of its inputs (`plan --hw my.json --json my.json`
 * would overwrite the profile it read). Two paths are the same file when
 * both exist and share device and inode (so "a.json", "./a.json" and a hard
 * link agree), or, when neither exists, when their folders resolve to the
 * same folder and their names are equal. */
#ifndef ZB_OUT_PATH_H
#define ZB_OUT_PATH_H

#include <stdbool.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A path as messages show it: at most 64 bytes of it, escaped (escape.h:
 * control characters as \n, \xHH), so that an error stays one line. */
const char *zb_shown_path(const char *path, char out[72]);

/* ZB_ERR_INVALID naming `flag` when `path` cannot be an output file; an
 * empty path is ZB_OK (the output is off). */
zb_status zb_out_path_check(const char *flag, const char *path);

/* An output folder (a trace in Kineto's layout: one file per rank): ZB_OK
 * when `dir` is a folder, not a symbolic link, that this process may write,
 * or is absent and its parent is such a folder; ZB_ERR_INVALID naming
 * `flag` otherwise. An empty path is ZB_OK (the output is off). */
zb_status zb_out_dir_check(const char *flag, const char *dir);
/* Creates `dir` when it is absent (mode 0777 less the umask); an existing
 * folder that is no symbolic link is ZB_OK, anything else ZB_ERR_IO or
 * ZB_ERR_INVALID naming `flag`. */
zb_status zb_out_dir_make(const char *flag, const char *dir);

/* The folder part of `path` into dir[n] ("." when there is none, "/" for
 * a file at the root). False when it does not fit. */
bool zb_path_folder(const char *path, char *dir, size_t n);

/* True when the two paths name the same file (see above). */
bool zb_same_file(const char *a, const char *b);

/* One path a command uses: the flag that named it, the path ("" or NULL:
 * unused) and whether the command writes it. */
typedef struct zb_path_use {
    const char *flag;
    const char *path;
    bool output;
} zb_path_use;

/* ZB_ERR_INVALID naming both flags when two outputs, or an output and an
 * input, are the same file. Inputs may share a file among themselves. */
zb_status zb_paths_distinct(const zb_path_use *uses, int n);

#ifdef __cplusplus
}
#endif
#endif
