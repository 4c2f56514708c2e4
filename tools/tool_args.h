/* The flags of a tool: a table of options that take a value ("--flag V" or
 * "--flag=V") and of switches, parsed the same way by every tool that has
 * no parser of its own. Values are kept as text; the tool checks them. */
#ifndef ZB_TOOL_ARGS_H
#define ZB_TOOL_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct zb_tool_opt {
    const char *flag;  /* "--nodes" */
    const char **slot; /* its value (the argv string), NULL when not given */
} zb_tool_opt;

typedef struct zb_tool_switch {
    const char *flag; /* "--quick" */
    bool *set;
} zb_tool_switch;

/* Parses argv[1..argc-1] (argv[0] is the tool's name) into the tables.
 * An unknown flag or a missing value is ZB_ERR_INVALID with a one-line
 * message "TOOL: unknown option 'X' (accepted: ..., --help)" listing both
 * tables in order, or "TOOL: --flag needs a value". --help is the caller's
 * (it is handled before parsing). */
zb_status zb_tool_parse_args(const char *tool, int argc, char **argv, const zb_tool_opt *opts, size_t n_opts,
                             const zb_tool_switch *switches, size_t n_switches);

/* For a tool with its own loop (positional files between flags): the value
 * of flag argv[*i] ("--flag VALUE", "--flag=VALUE", or the alias "-o VALUE"),
 * advancing *i past a separate value; "" when the value is missing; NULL when
 * argv[*i] is not this flag. */
const char *zb_tool_flag_value(int argc, char **argv, int *i, const char *flag, const char *alias);

#ifdef __cplusplus
}
#endif
#endif
