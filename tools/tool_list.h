/* The tool registry: one line per tool, X(name), where the entry
 * zb_tool_<name> is defined in tools/<name>.c (tool.h). The order is the
 * order --help lists them in. */
#ifndef ZB_TOOL_LIST_H
#define ZB_TOOL_LIST_H

#define ZB_TOOL_LIST(X) \
    X(plan)      \
    X(calibrate) \
    X(plot)      \
    X(compare)   \
    X(export)    \
    X(accept)

#endif
