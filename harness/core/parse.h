/* Parsing of flag values: sizes with K/M/G/T suffixes, integers, reals,
 * shapes MxNxK. Pure functions, no output: each returns ZB_ERR_INVALID and
 * leaves `*out` alone on junk, sign, overflow or out-of-range values. */
#ifndef ZB_PARSE_H
#define ZB_PARSE_H

#include <stdint.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "4096", "4K", "64M", "1G", "2T" (binary multiples, as nccl-tests; an
 * optional trailing "B" or "iB" is accepted: "64MiB"). */
zb_status zb_parse_size(const char *text, uint64_t *out);
/* Decimal integer; the whole string must be consumed. */
zb_status zb_parse_int64(const char *text, int64_t *out);
/* Finite real number; the whole string must be consumed. */
zb_status zb_parse_double(const char *text, double *out);
/* A count written as people write parameter counts: "7500000000",
 * "7.5e9", "7.5B", "70B", "405B", "125M", "1.5T" (decimal multiples K = 1e3,
 * M = 1e6, B or G = 1e9, T = 1e12). The value is rounded to the nearest
 * integer; it must be >= 1 and at most 2^53 (exact in a double). No sign,
 * no "nan"/"inf", no hexadecimal. */
zb_status zb_parse_count(const char *text, uint64_t *out);
/* "MxNxK" with positive dimensions, e.g. "4096x4096x4096". */
zb_status zb_parse_shape(const char *text, int64_t dims[3]);
/* Formats a byte count the way sizes are written on the command line
 * ("64M" when exact, else plain bytes). */
void zb_format_size(uint64_t bytes, char *out, int n);

#ifdef __cplusplus
}
#endif
#endif
