/* The one escaper for strings shown to users (escape.h). */
#include "escape.h"

#include <string.h>

/* The length of the valid, printable UTF-8 sequence at s, or 0 when the
 * byte at s must be escaped. */
static size_t printable_len(const unsigned char *s) {
    unsigned char c = s[0];
    if (c >= 0x20 && c < 0x7f) return 1;
    size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
    }
    if (len == 2 && c == 0xc2 && s[1] < 0xa0) return 0;          /* C1 controls */
    if (len == 3 && c == 0xe0 && s[1] < 0xa0) return 0;          /* overlong */
    if (len == 3 && c == 0xed && s[1] >= 0xa0) return 0;         /* surrogates */
    if (len == 4 && c == 0xf0 && s[1] < 0x90) return 0;          /* overlong */
    if (len == 4 && c == 0xf4 && s[1] >= 0x90) return 0;         /* past U+10FFFF */
    return len;
}

/* The escape of one byte that is not shown as it is. */
static void escape_byte(unsigned char c, char out[5]) {
    static const char hex[] = "0123456789abcdef";
    if (c == '\n' || c == '\t' || c == '\r') {
        out[0] = '\\';
        out[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
        out[2] = '\0';
        return;
    }
    out[0] = '\\';
    out[1] = 'x';
    out[2] = hex[c >> 4];
    out[3] = hex[c & 15];
    out[4] = '\0';
}

/* Writes whole escaped characters of s into out while they fit in
 * `room` bytes (NUL included); true when s did not fit or max_in cut it. */
static bool emit(const unsigned char *p, size_t max_in, char *out, size_t room) {
    size_t in = 0, k = 0;
    bool cut = false;
    while (p[in]) {
        if (max_in && in >= max_in) {
            cut = true;
            break;
        }
        size_t len = printable_len(p + in);
        char esc[5];
        const char *piece = (const char *)p + in;
        size_t piece_n = len;
        if (len == 0) {
            escape_byte(p[in], esc);
            piece = esc;
            piece_n = strlen(esc);
            len = 1;
        }
        if (k + piece_n + 1 > room) {
            cut = true;
            break;
        }
        memcpy(out + k, piece, piece_n);
        k += piece_n;
        in += len;
    }
    out[k] = '\0';
    return cut;
}

const char *zb_escape(const char *s, size_t max_in, char *out, size_t n) {
    if (n == 0) return out;
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    if (emit(p, max_in, out, n) && n >= 4) { /* again, leaving room for "..." */
        emit(p, max_in, out, n - 3);
        strcat(out, "...");
    }
    return out;
}

void zb_escape_fputs(const char *s, FILE *f) {
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        size_t len = printable_len(p);
        if (len) {
            fwrite(p, 1, len, f);
            p += len;
        } else {
            char esc[5];
            escape_byte(*p++, esc);
            fputs(esc, f);
        }
    }
}

bool zb_needs_escape(const char *s) {
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        size_t len = printable_len(p);
        if (!len) return true;
        p += len;
    }
    return false;
}
