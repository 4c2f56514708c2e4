/* Running zerobench itself as a child process, for the tools that judge or
 * fit benchmark runs (accept, calibrate): the same binary, so a tool never
 * measures a different build than the one it was started as. */
#ifndef ZB_TOOL_RUN_H
#define ZB_TOOL_RUN_H

#include <sys/types.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Runs this executable with `args` (NULL-terminated, args[0] is the
 * subcommand, e.g. {"gemm", "--shape", "512x512x512", "--json", p, NULL}).
 * Its stdout and stderr go to `log_path` (appended), or stay this process's
 * when log_path is NULL. Waits at most `timeout_s` seconds, then kills the
 * child's process group. *exit_code is the child's exit status (128 + the
 * signal when killed, 124 on the timeout). Returns ZB_ERR_IO when the child
 * cannot be started, ZB_ERR_TIMEOUT on the timeout, otherwise ZB_OK. */
zb_status zb_tool_run_self(const char *const *args, const char *log_path, double timeout_s, int *exit_code);

/* In a child just forked from `parent`: it gets `sig` when the parent dies,
 * however it dies (SIGKILL included, which no cleanup handler sees), and
 * ends at once when the parent is already gone; so no child of a tool runs
 * on as an orphan. */
void zb_tool_die_with_parent(pid_t parent, int sig);

#ifdef __cplusplus
}
#endif
#endif
