/* A tool's flags from its tables (tool_args.h). */
#include <stdio.h>
#include <string.h>

#include "results.h"
#include "tool_args.h"

static void accepted(const zb_tool_opt *opts, size_t n_opts, const zb_tool_switch *sw, size_t n_sw, char *out,
                     size_t n) {
    size_t used = 0;
    out[0] = '\0';
    for (size_t k = 0; k < n_opts + n_sw && used < n; k++) {
        const char *flag = k < n_opts ? opts[k].flag : sw[k - n_opts].flag;
        used += (size_t)snprintf(out + used, n - used, "%s, ", flag);
    }
    if (used < n) snprintf(out + used, n - used, "--help");
}

zb_status zb_tool_parse_args(const char *tool, int argc, char **argv, const zb_tool_opt *opts, size_t n_opts,
                             const zb_tool_switch *switches, size_t n_switches) {
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), arg);
        bool matched = false;
        for (size_t k = 0; k < n_switches && !matched; k++) {
            if (!eq && !strcmp(arg, switches[k].flag)) *switches[k].set = matched = true;
        }
        if (matched) continue;
        const char **slot = NULL;
        for (size_t k = 0; k < n_opts && !slot; k++) {
            if (!strcmp(name, opts[k].flag)) slot = opts[k].slot;
        }
        if (!slot) {
            char shown[72], list[512];
            accepted(opts, n_opts, switches, n_switches, list, sizeof list);
            return ZB_FAIL(ZB_ERR_INVALID, "%s: unknown option '%s' (accepted: %s)", tool,
                           zb_results_shown_path(arg, shown), list);
        }
        if (eq) *slot = eq + 1;
        else if (i + 1 < argc) *slot = argv[++i];
        else return ZB_FAIL(ZB_ERR_INVALID, "%s: %s needs a value", tool, name);
    }
    return ZB_OK;
}

const char *zb_tool_flag_value(int argc, char **argv, int *i, const char *flag, const char *alias) {
    const char *arg = argv[*i];
    size_t n = strlen(flag);
    if (!strncmp(arg, flag, n) && arg[n] == '=') return arg + n + 1;
    if (!strcmp(arg, flag) || (alias && !strcmp(arg, alias))) {
        if (*i + 1 >= argc) return "";
        return argv[++*i];
    }
    return NULL;
}
