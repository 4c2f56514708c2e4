/* Thread-local error messages behind zb_status (see status.h). */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"

static _Thread_local char zb_last_error[ZB_ERROR_MAX];

static const char *zb_basename(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

zb_status zb_error_set(zb_status code, const char *file, int line, const char *fmt, ...) {
    char body[ZB_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    /* Whatever a message quotes from a file or an argument, it stays one
     * line and sends nothing to the terminal (escape.h). */
    char shown[ZB_ERROR_MAX];
    zb_escape(body, 0, shown, sizeof shown);
    snprintf(zb_last_error, sizeof zb_last_error, "%s (%s:%d)", shown, zb_basename(file), line);
    return code;
}

const char *zb_error_message(void) { return zb_last_error; }

const char *zb_error_text(char *buf, size_t n) {
    snprintf(buf, n, "%s", zb_last_error);
    char *tag = strrchr(buf, '(');
    size_t len = strlen(buf);
    if (tag && tag > buf && tag[-1] == ' ' && len && buf[len - 1] == ')') tag[-1] = '\0';
    return buf;
}

void zb_error_adopt(zb_status code, const char *message) {
    (void)code;
    snprintf(zb_last_error, sizeof zb_last_error, "%s", message ? message : "");
}

void zb_error_clear(void) { zb_last_error[0] = '\0'; }

const char *zb_status_name(zb_status s) {
    switch (s) {
    case ZB_OK: return "ok";
    case ZB_ERR_INVALID: return "invalid input";
    case ZB_ERR_NOMEM: return "out of memory";
    case ZB_ERR_IO: return "i/o error";
    case ZB_ERR_MPI: return "MPI error";
    case ZB_ERR_TIMEOUT: return "timeout";
    case ZB_ERR_NOT_READY: return "not ready";
    case ZB_ERR_UNSUPPORTED: return "unsupported";
    case ZB_ERR_WRONG: return "wrong result";
    case ZB_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

int zb_exit_code(zb_status s) {
    if (s == ZB_OK) return 0;
    if (s == ZB_ERR_INVALID) return 2;
    return 1;
}
