/* Unit tests for escape.c: control characters, DEL, C1 controls and bytes
 * that are not valid UTF-8 become C escapes; printable ASCII and valid
 * UTF-8 pass unchanged; the cut by max_in or by the buffer ends in "..."
 * without splitting an escape or a character; escaping twice changes
 * nothing. */
#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "status.h"
#include "zb_test.h"

static int same(const char *in, size_t max_in, size_t n, const char *want) {
    char out[256];
    zb_escape(in, max_in, out, n);
    if (strcmp(out, want) != 0) {
        fprintf(stderr, "escape(%zu, %zu): got '%s', want '%s'\n", max_in, n, out, want);
        return 0;
    }
    return 1;
}

int main(void) {
    ZB_CHECK(same("plain text", 0, 256, "plain text"));
    ZB_CHECK(same("a\nb\tc\rd", 0, 256, "a\\nb\\tc\\rd"));
    ZB_CHECK(same("\x1b[31mred", 0, 256, "\\x1b[31mred"));          /* a terminal escape */
    ZB_CHECK(same("del\x7f", 0, 256, "del\\x7f"));
    ZB_CHECK(same("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80", 0, 256, "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80"));
    ZB_CHECK(same("c1 \xc2\x9b", 0, 256, "c1 \\xc2\\x9b"));          /* U+009B, the 8-bit CSI */
    ZB_CHECK(same("bad \xff\xfe", 0, 256, "bad \\xff\\xfe"));
    ZB_CHECK(same("cut \xe2\x86", 0, 256, "cut \\xe2\\x86"));        /* a truncated sequence */
    ZB_CHECK(same("over \xc0\xaf", 0, 256, "over \\xc0\\xaf"));      /* an overlong '/' */
    ZB_CHECK(same("sur \xed\xa0\x80", 0, 256, "sur \\xed\\xa0\\x80"));
    ZB_CHECK(same("back\\slash", 0, 256, "back\\slash"));
    ZB_CHECK(same("", 0, 256, ""));
    ZB_CHECK(same(NULL, 0, 256, ""));

    /* Cut by max_in: the first max_in bytes, then "...". */
    ZB_CHECK(same("abcdefgh", 4, 256, "abcd..."));
    ZB_CHECK(same("abcd", 4, 256, "abcd"));
    /* Cut by the buffer: whole escapes only, and "..." still fits. */
    ZB_CHECK(same("abcdefgh", 0, 8, "abcd..."));
    ZB_CHECK(same("ab\ncdefgh", 0, 9, "ab\\nc..."));
    ZB_CHECK(same("ab\ncdefgh", 0, 8, "ab\\n..."));
    ZB_CHECK(same("ab\x01xyzw", 0, 9, "ab..."));                     /* \x01 does not fit whole */
    ZB_CHECK(same("\xe2\x86\x92\xe2\x86\x92\xe2\x86\x92", 0, 8, "\xe2\x86\x92..."));

    /* Escaping twice changes nothing. */
    char once[128], twice[128];
    zb_escape("x\n\x1b\xff", 0, once, sizeof once);
    zb_escape(once, 0, twice, sizeof twice);
    ZB_CHECK(strcmp(once, twice) == 0);
    ZB_CHECK(!zb_needs_escape(once));
    ZB_CHECK(zb_needs_escape("a\nb"));
    ZB_CHECK(!zb_needs_escape("caf\xc3\xa9"));

    /* fputs whole, same escapes. */
    char buf[128] = "";
    FILE *f = fmemopen(buf, sizeof buf, "w");
    ZB_CHECK(f != NULL);
    if (f) {
        zb_escape_fputs("l1\nl2\x1b", f);
        fclose(f);
        ZB_CHECK(strcmp(buf, "l1\\nl2\\x1b") == 0);
    }

    /* Every error message is one line, whatever it quotes. */
    char text[ZB_ERROR_MAX];
    ZB_FAIL(ZB_ERR_INVALID, "'%s': bad", "two\nlines\x1b[2J");
    zb_error_text(text, sizeof text);
    ZB_CHECK(strchr(text, '\n') == NULL && strchr(text, '\x1b') == NULL);
    ZB_CHECK(strstr(text, "two\\nlines\\x1b[2J") != NULL);
    return zb_test_finish("test_escape");
}
