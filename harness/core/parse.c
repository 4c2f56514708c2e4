/* Flag value parsers (see parse.h). Messages here say only what is wrong
 * with the text; the CLI prefixes the flag name. */
#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool zb_all_digits(const char *s, size_t n) {
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i])) return false;
    }
    return true;
}

/* Parses the leading digits [s, s+n) into *out; false on overflow. */
static bool zb_digits_to_u64(const char *s, size_t n, uint64_t *out) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static int zb_suffix_shift(const char *suffix) {
    if (suffix[0] == '\0') return 0;
    int shift;
    switch (toupper((unsigned char)suffix[0])) {
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    case 'B': return suffix[1] == '\0' ? 0 : -1;
    default: return -1;
    }
    const char *rest = suffix + 1;
    if (rest[0] == '\0' || !strcmp(rest, "B") || !strcmp(rest, "iB") || !strcmp(rest, "b")) {
        return shift;
    }
    return -1;
}

zb_status zb_parse_size(const char *text, uint64_t *out) {
    size_t n_digits = 0;
    while (isdigit((unsigned char)text[n_digits])) n_digits++;
    if (!zb_all_digits(text, n_digits)) {
        return ZB_FAIL(ZB_ERR_INVALID, "'%s' is not a size (expected e.g. 4096, 4K, 64M, 1G)",
                       text);
    }
    int shift = zb_suffix_shift(text + n_digits);
    uint64_t v;
    if (shift < 0) {
        return ZB_FAIL(ZB_ERR_INVALID, "'%s' has an unknown size suffix (accepted: K, M, G, T)",
                       text);
    }
    if (!zb_digits_to_u64(text, n_digits, &v) || (shift > 0 && v > (UINT64_MAX >> shift))) {
        return ZB_FAIL(ZB_ERR_INVALID, "'%s' is too large", text);
    }
    *out = v << shift;
    return ZB_OK;
}

zb_status zb_parse_int64(const char *text, int64_t *out) {
    const char *p = text;
    bool negative = false;
    if (*p == '-' || *p == '+') {
        negative = *p == '-';
        p++;
    }
    size_t n = strlen(p);
    uint64_t v;
    if (!zb_all_digits(p, n)) return ZB_FAIL(ZB_ERR_INVALID, "'%s' is not an integer", text);
    if (!zb_digits_to_u64(p, n, &v) || v > (uint64_t)INT64_MAX) {
        return ZB_FAIL(ZB_ERR_INVALID, "'%s' is too large", text);
    }
    *out = negative ? -(int64_t)v : (int64_t)v;
    return ZB_OK;
}

zb_status zb_parse_double(const char *text, double *out) {
    if (text[0] == '\0' || isspace((unsigned char)text[0])) {
        return ZB_FAIL(ZB_ERR_INVALID, "'%s' is not a number", text);
    }
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (*end != '\0' || errno == ERANGE || !isfinite(v)) {
        return ZB_FAIL(ZB_ERR_INVALID, "'%s' is not a finite number", text);
    }
    *out = v;
    return ZB_OK;
}

/* A decimal multiple suffix of a count: 1 (none), 1e3 ... 1e12; 0 unknown. */
static double zb_count_multiple(const char *suffix) {
    if (suffix[0] == '\0') return 1.0;
    if (suffix[1] != '\0') return 0.0;
    switch (suffix[0]) {
    case 'K': case 'k': return 1e3;
    case 'M': case 'm': return 1e6;
    case 'B': case 'b': case 'G': case 'g': return 1e9;
    case 'T': case 't': return 1e12;
    default: return 0.0;
    }
}

zb_status zb_parse_count(const char *text, uint64_t *out) {
    const char *what = "(accepted: a positive count such as 7500000000, 7.5e9, 7.5B, 70B, 125M)";
    /* Digits first: refuses signs, spaces, "nan", "inf" and "0x..." before strtod sees them. */
    if (!isdigit((unsigned char)text[0]) || (text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))) {
        return ZB_FAIL(ZB_ERR_INVALID, "'%s' is not a count %s", text, what);
    }
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    double mult = zb_count_multiple(end);
    if (errno == ERANGE || !isfinite(v) || mult == 0.0) {
        return ZB_FAIL(ZB_ERR_INVALID, "'%s' is not a count %s", text, what);
    }
    v = round(v * mult);
    if (!(v >= 1.0) || v > 9007199254740992.0) {
        return ZB_FAIL(ZB_ERR_INVALID, "'%s' is out of range: a count from 1 to 2^53", text);
    }
    *out = (uint64_t)v;
    return ZB_OK;
}

zb_status zb_parse_shape(const char *text, int64_t dims[3]) {
    int64_t v[3];
    const char *p = text;
    for (int i = 0; i < 3; i++) {
        size_t n = 0;
        while (isdigit((unsigned char)p[n])) n++;
        uint64_t u;
        char sep = p[n];
        bool sep_ok = i < 2 ? (sep == 'x' || sep == 'X') : sep == '\0';
        if (n == 0 || !sep_ok || !zb_digits_to_u64(p, n, &u) || u == 0 || u > (1u << 30)) {
            return ZB_FAIL(ZB_ERR_INVALID,
                           "'%s' is not a shape MxNxK of positive integers up to 2^30", text);
        }
        v[i] = (int64_t)u;
        p += n + 1;
    }
    memcpy(dims, v, sizeof v);
    return ZB_OK;
}

void zb_format_size(uint64_t bytes, char *out, int n) {
    static const char suffix[] = {'T', 'G', 'M', 'K'};
    static const int shift[] = {40, 30, 20, 10};
    for (int i = 0; i < 4; i++) {
        uint64_t unit = (uint64_t)1 << shift[i];
        if (bytes >= unit && bytes % unit == 0) {
            snprintf(out, (size_t)n, "%llu%c", (unsigned long long)(bytes / unit), suffix[i]);
            return;
        }
    }
    snprintf(out, (size_t)n, "%llu", (unsigned long long)bytes);
}
