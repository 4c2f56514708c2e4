/* Strings from input files and the command line as zerobench shows them.
 *
 * A value read from a results file, a profile or an argument may hold a
 * newline (which would split a one-line error message) or a terminal escape
 * sequence (which would reach the user's terminal). Wherever such a string
 * is shown (error messages, tables, plot's output) it goes through this one
 * escaper: control characters become C escapes (\n, \t, \r, \xHH), and so do
 * DEL, the UTF-8 encodings of the C1 controls (U+0080..U+009F) and bytes
 * that are not valid UTF-8. Printable ASCII and valid UTF-8 pass unchanged;
 * a backslash is left alone, so escaping twice changes nothing. */
#ifndef ZB_ESCAPE_H
#define ZB_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes `s` escaped into out (n bytes, always NUL-terminated when n > 0),
 * taking at most `max_in` bytes of s (0: no limit); "..." ends the output
 * when s was cut, by max_in or by n. Returns out. */
const char *zb_escape(const char *s, size_t max_in, char *out, size_t n);

/* Writes `s` escaped to f, whole. */
void zb_escape_fputs(const char *s, FILE *f);

/* True when zb_escape would change s. */
bool zb_needs_escape(const char *s);

#ifdef __cplusplus
}
#endif
#endif
