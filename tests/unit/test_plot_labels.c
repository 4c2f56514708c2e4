/* The plot tool's label helpers (tools/plot_series.c): wrapping to a width
 * and a number of lines (no line ever longer, whatever the input), cutting,
 * text for a gnuplot -e assignment, and the configurations' names and
 * fixed order. */
#include <string.h>

#include <jansson.h>

#include "plot_series.h"
#include "zb_test.h"

/* Every line of a wrapped label (lines split at the two characters \n) is
 * at most width UTF-8 characters, and there are at most max_lines. */
static int check_wrapped(const char *w, int width, int max_lines) {
    int lines = 1, chars = 0, longest = 0;
    for (const char *c = w; *c; c++) {
        if (c[0] == '\\' && c[1] == 'n') {
            lines++;
            chars = 0;
            c++;
            continue;
        }
        if (((unsigned char)*c & 0xC0) != 0x80) chars++;
        if (chars > longest) longest = chars;
    }
    ZB_CHECK_MSG(longest <= width && lines <= max_lines, "'%s': %d lines, longest %d (width %d, %d lines)", w, lines,
                 longest, width, max_lines);
    return lines;
}

static void test_wrap(void) {
    char out[256];
    zb_plot_wrap("tiny, 2 ranks, cpu/mpi", 10, 3, out, sizeof out);
    ZB_CHECK_MSG(!strcmp(out, "tiny\\n2 ranks\\ncpu/mpi"), "got '%s'", out);
    zb_plot_wrap("8 ranks", 20, 3, out, sizeof out);
    ZB_CHECK(!strcmp(out, "8 ranks"));
    zb_plot_wrap("prefetch", 5, 2, out, sizeof out); /* a word too long: cut, with a '.' */
    ZB_CHECK_MSG(!strcmp(out, "pref."), "got '%s'", out);
    zb_plot_wrap("one two three four five six", 9, 2, out, sizeof out); /* past the last line: "..." */
    ZB_CHECK_MSG(!strcmp(out, "one two\\nthree..."), "got '%s'", out);
    check_wrapped(out, 9, 2);
    /* An input's own backslash never makes a line: \n in a name stays one line. */
    zb_plot_wrap("a\\nb", 10, 1, out, sizeof out);
    ZB_CHECK_MSG(!strcmp(out, "a/nb"), "got '%s'", out);
    /* Any length, any width: never a line longer than the width. */
    char longs[400];
    for (int i = 0; i < 399; i++) longs[i] = i % 13 == 12 ? ' ' : i % 7 == 6 ? ',' : (char)('a' + i % 26);
    longs[399] = '\0';
    for (int width = 1; width < 40; width++) {
        for (int lines = 1; lines < 5; lines++) {
            zb_plot_wrap(longs, width, lines, out, sizeof out);
            check_wrapped(out, width, lines);
        }
    }
    zb_plot_wrap("gr\xc3\xb6\xc3\x9f" "e m\xc3\xa4\xc3\x9fig", 5, 2, out, sizeof out); /* UTF-8: characters, not bytes */
    ZB_CHECK_MSG(!strcmp(out, "gr\xc3\xb6\xc3\x9f" "e\\nm\xc3\xa4\xc3\x9fig"), "got '%s'", out);
}

static void test_cut_and_text(void) {
    char out[64];
    zb_plot_cut("abcdefghij", 6, out, sizeof out);
    ZB_CHECK_MSG(!strcmp(out, "abc..."), "got '%s'", out);
    zb_plot_cut("abc", 6, out, sizeof out);
    ZB_CHECK(!strcmp(out, "abc"));
    zb_plot_cut("\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4", 4, out, sizeof out);
    ZB_CHECK_MSG(!strcmp(out, "\xc3\xa4..."), "got '%s'", out);
    zb_plot_gp_text("it's `rm` \"x\" \\ \n", out, sizeof out);
    ZB_CHECK_MSG(!strpbrk(out, "'`\"\\\n"), "got '%s'", out);
    zb_plot_gp_text("ab\xc3\xa4", out, 4); /* a character cut in two goes whole */
    ZB_CHECK_MSG(!strcmp(out, "ab"), "got '%s'", out);
}

static void test_config(void) {
    struct {
        int stage;
        const char *mode, *name;
        int code;
    } cases[] = {
        {3, "sync", "ZeRO-3 sync", 9},     {3, "prefetch", "ZeRO-3 prefetch", 10},
        {2, "prefetch", "ZeRO-2", 7},      {2, "sync", "ZeRO-2 sync", 6},
        {1, "prefetch", "ZeRO-1", 4},      {3, "other", "ZeRO-3 other", 11},
        {0, "prefetch", "DDP", 1},         {0, "sync", "DDP sync", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *r = json_pack("{s:i, s:s}", "stage", cases[i].stage, "mode", cases[i].mode);
        char name[48];
        int code = zb_plot_config(r, name, sizeof name);
        ZB_CHECK_MSG(code == cases[i].code && !strcmp(name, cases[i].name), "stage %d %s: %d '%s'", cases[i].stage,
                     cases[i].mode, code, name);
        ZB_CHECK(code >= 0 && code < ZB_PLOT_CONFIG_CODES);
        json_decref(r);
    }
}

int main(void) {
    test_wrap();
    test_cut_and_text();
    test_config();
    return zb_test_finish("test_plot_labels");
}
