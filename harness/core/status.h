/* Status codes and error reporting for library code.
 *
 * Library code never exits: it returns a zb_status and records, in a
 * thread-local buffer, a one-line message saying where the error came from
 * (file:line, the call, the library's own error string). Only main() turns a
 * status into an exit code (zb_exit_code). */
#ifndef ZB_STATUS_H
#define ZB_STATUS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum zb_status {
    ZB_OK = 0,
    ZB_ERR_INVALID,     /* bad input: a flag, a field, a shape (exit 2) */
    ZB_ERR_NOMEM,       /* an allocation failed */
    ZB_ERR_IO,          /* a file could not be read or written */
    ZB_ERR_MPI,         /* an MPI call failed */
    ZB_ERR_TIMEOUT,     /* a wait ran past its timeout */
    ZB_ERR_NOT_READY,   /* an event or stream has not completed yet */
    ZB_ERR_UNSUPPORTED, /* the backend cannot do this (e.g. a dtype) */
    ZB_ERR_WRONG,       /* a checked result was wrong */
    ZB_ERR_INTERNAL     /* a bug */
} zb_status;

/* Records `fmt` (printf-style) as this thread's last error, prefixed with
 * file:line, and returns `code` so callers can write
 * `return ZB_FAIL(ZB_ERR_IO, "open %s: %s", path, strerror(errno));`. */
zb_status zb_error_set(zb_status code, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
#define ZB_FAIL(code, ...) zb_error_set((code), __FILE__, __LINE__, __VA_ARGS__)

/* The message recorded by the last ZB_FAIL on this thread ("" if none). */
const char *zb_error_message(void);
/* The same message without its " (file:line)" tag, copied into buf, for a
 * caller that wraps it in a message of its own (one location, not two). */
const char *zb_error_text(char *buf, size_t n);
/* Copies another thread's message in (used when a stream thread's error is
 * handed to the thread that synchronizes on it). */
void zb_error_adopt(zb_status code, const char *message);
void zb_error_clear(void);

const char *zb_status_name(zb_status s);
/* 0 ok, 2 bad input, 1 anything else. */
int zb_exit_code(zb_status s);

/* Propagate a non-OK status unchanged (its message is already recorded). */
#define ZB_TRY(expr)                                                           \
    do {                                                                       \
        zb_status zb_try_s_ = (expr);                                          \
        if (zb_try_s_ != ZB_OK) return zb_try_s_;                              \
    } while (0)

#define ZB_ERROR_MAX 512

#ifdef __cplusplus
}
#endif
#endif
