/* Tools: the commands that work on results rather than run a benchmark
 * (plot, compare, export, accept, plan, calibrate). Each is one file in this folder
 * with its zb_tool entry, plus one X(name) line in tool_list.h.
 *
 * A tool runs outside MPI, in the process main started: it parses its own
 * arguments and returns the process exit code, with the project's
 * conventions: 0 success, 1 a failed judgement (a regression, a failed
 * acceptance check) or a runtime failure, 2 bad input (a one-line message
 * naming the flag or file, the value and what is accepted; no output file
 * left behind). A tool that needs a benchmark run starts zerobench again as
 * a child process (tool_run.h) and reads the JSON it writes. */
#ifndef ZB_TOOL_H
#define ZB_TOOL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zb_tool {
    const char *name;    /* the subcommand: zerobench <name> ... */
    const char *summary; /* one line for zerobench --help */
    /* argv[0] is the tool's name; argv[argc] is NULL. Returns the exit code. */
    int (*main)(int argc, char **argv);
} zb_tool;

/* The tool named `name`, or NULL. */
const zb_tool *zb_tool_find(const char *name);
/* The i-th tool (registry order), or NULL past the end. */
const zb_tool *zb_tool_at(int i);
/* The tools' names joined by `sep` ("" when there are none). */
void zb_tool_names(const char *sep, char *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif
