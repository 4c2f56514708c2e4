/* The label helpers' byte-level parts (plot_label.c), shared with the
 * series' legend entries (plot_series.c: telling alike labels apart).
 * Internal to those two files; the label helpers themselves are
 * plot_series.h's. */
#ifndef ZB_PLOT_LABEL_H
#define ZB_PLOT_LABEL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The bytes of the longest start of s (len bytes) at most `width` wide,
 * whole characters. */
size_t zb_plot_fit_start(const char *s, size_t len, int width);
/* Where the longest end of s (len bytes) at most `width` wide starts. */
size_t zb_plot_fit_end(const char *s, size_t len, int width);
/* Appends len bytes of s to out (n bytes, used so far *k), a backslash
 * becoming '/' so that no \n of the input adds a line; a character that
 * would not fit whole is left out. */
void zb_plot_put_bytes(char *out, size_t n, size_t *k, const char *s, size_t len);

/* "...", which ends or splits a cut label. */
#define DOTS_WIDTH (3 * 318)

#ifdef __cplusplus
}
#endif
#endif
