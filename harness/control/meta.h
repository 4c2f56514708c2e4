/* Run metadata: the "meta" object of every JSON report (docs/design.md §7).
 *
 * zb_meta_collect fills, on every rank:
 *   zerobench_version, git_describe   (compiled in: ZB_VERSION, ZB_GIT_DESCRIBE)
 *   command_line   argv joined with spaces, each word shell-quoted when needed
 *   argv           the words as an array
 *   config         a deep copy of the resolved configuration ({} for NULL)
 *   hosts          unique host names over all ranks, in rank order of first
 *                  appearance (same on every rank)
 *   ranks          MPI_COMM_WORLD size
 *   cpu_model      "model name" of /proc/cpuinfo, or "unknown"
 *   cpu_cores_online  sysconf(_SC_NPROCESSORS_ONLN)
 *   mpi_library    first line of MPI_Get_library_version, trimmed
 *   mpi_version    "3.1" (MPI_Get_version)
 *   blas           openblas_get_config(), trimmed
 *   kernel         "sysname release machine" as uname -srm prints it
 *   date_utc       ISO 8601, e.g. "2025-01-31T12:00:00Z"
 *   nccl_env       {NCCL_*: value} for every NCCL_* variable, sorted by name
 *   malloc_env     {MALLOC_MMAP_MAX_, MALLOC_TRIM_THRESHOLD_} where set
 * The host-local fields (cpu_*, kernel, blas, the environment) describe the
 * calling rank's host; the report is written by rank 0, so they are rank 0's.
 * GPU fields (gpu_model, driver, CUDA, NCCL versions) are added to the same
 * object by the CUDA backend, not here.
 *
 * The helpers below need no MPI and are unit tested on their own. */
#ifndef ZB_META_H
#define ZB_META_H

#include <stddef.h>

#include <jansson.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes per host name in the gather (names are truncated to 255 bytes). */
#define ZB_META_HOST_BYTES 256

/* COLLECTIVE over MPI_COMM_WORLD: every rank must call it, after MPI_Init.
 * Sets the fields above in `meta` (an object; existing keys of the same name
 * are replaced). `config` is borrowed and deep-copied; it may be NULL.
 * The one collective (the host name gather) happens before anything that can
 * fail locally, so a local failure on one rank never leaves the others
 * waiting; its waits end after timeout_s (--timeout; <= 0: the default of
 * mpi_wait.h) with ZB_ERR_TIMEOUT, which must end the job. Returns
 * ZB_ERR_INVALID (on every rank) when MPI is not initialized or meta is not
 * an object, ZB_ERR_MPI, ZB_ERR_NOMEM or ZB_ERR_TIMEOUT. */
zb_status zb_meta_collect(json_t *meta, int argc, char *const *argv, const json_t *config, double timeout_s);

/* The same fields for a process outside MPI (a tool: zerobench plan, ...),
 * no collective: hosts is this host alone, ranks 1 (the MPI library's
 * version is read without MPI_Init, as MPI allows). */
zb_status zb_meta_collect_local(json_t *meta, int argc, char *const *argv, const json_t *config);

/* argv[0..argc) joined with single spaces; a word with anything but
 * [A-Za-z0-9_@%+=:,./-] in it (or an empty word) is single-quoted, with
 * each ' written as '\''. Malloc'ed; NULL when out of memory. */
char *zb_meta_shell_join(int argc, char *const *argv);

/* The "model name" of a cpuinfo file (NULL: /proc/cpuinfo), trimmed, into
 * `out`; "unknown" when the file or the field is missing. */
void zb_meta_cpu_model(const char *cpuinfo_path, char *out, size_t out_size);

/* Sets in object `out` every environment variable whose name starts with
 * `prefix`, sorted by name (a variable whose name or value is not valid
 * UTF-8 cannot go in JSON and is skipped). ZB_ERR_NOMEM on allocation
 * failure. */
zb_status zb_meta_env_prefix(json_t *out, const char *prefix);
/* zb_meta_env_prefix(out, "NCCL_"). */
zb_status zb_meta_nccl_env(json_t *out);
/* Sets MALLOC_MMAP_MAX_ and MALLOC_TRIM_THRESHOLD_ in `out` where set. */
zb_status zb_meta_malloc_env(json_t *out);

/* Unique names among `n` fixed-size (`stride` bytes, NUL-padded) entries,
 * in order of first appearance, appended to array `out`. */
zb_status zb_meta_unique_hosts(json_t *out, const char *names, int n, size_t stride);

/* Trims `s` to its first line without leading/trailing white space, in place. */
void zb_meta_first_line(char *s);

#ifdef __cplusplus
}
#endif
#endif
