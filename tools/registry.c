/* The tool registry (its entries: tool_list.h) and the lookups over it. */
#include <stdio.h>
#include <string.h>

#include "tool.h"
#include "tool_list.h"

#define ZB_TOOL_DECLARE(name) extern const zb_tool zb_tool_##name;
ZB_TOOL_LIST(ZB_TOOL_DECLARE)
#undef ZB_TOOL_DECLARE

/* NULL-terminated, so that a registry without tools still compiles. */
#define ZB_TOOL_ENTRY(name) &zb_tool_##name,
static const zb_tool *const zb_tools[] = {ZB_TOOL_LIST(ZB_TOOL_ENTRY) NULL};
#undef ZB_TOOL_ENTRY

const zb_tool *zb_tool_at(int i) {
    int n = (int)(sizeof zb_tools / sizeof zb_tools[0]) - 1;
    return i >= 0 && i < n ? zb_tools[i] : NULL;
}

const zb_tool *zb_tool_find(const char *name) {
    for (int i = 0; zb_tool_at(i); i++) {
        if (!strcmp(zb_tool_at(i)->name, name)) return zb_tool_at(i);
    }
    return NULL;
}

void zb_tool_names(const char *sep, char *out, size_t n) {
    size_t used = 0;
    if (n) out[0] = '\0';
    for (int i = 0; zb_tool_at(i) && used < n; i++) {
        used += (size_t)snprintf(out + used, n - used, "%s%s", i ? sep : "", zb_tool_at(i)->name);
    }
}
