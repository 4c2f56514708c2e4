/* The plot tool's label helpers (tools/plot_label.c, tools/plot_series.c):
 * text widths in em of the figures' font, wrapping to a width and a number
 * of lines (no line ever wider, whatever the input), cutting at the end or
 * in the middle, strings for data files and for a gnuplot -e assignment,
 * legend layout, series kept apart by their full keys with legend entries
 * that never read alike, and the configurations' names and fixed order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "plot_series.h"
#include "zb_test.h"

/* Every line of a wrapped label (lines split at the two characters \n) is
 * at most width milli-em wide, and there are at most max_lines. */
static int check_wrapped(const char *w, int width, int max_lines) {
    int lines = 1;
    for (const char *c = strstr(w, "\\n"); c; c = strstr(c + 2, "\\n")) lines++;
    int widest = zb_plot_text_width(w);
    ZB_CHECK_MSG(widest <= width && lines <= max_lines, "'%s': %d lines, widest %d (width %d, %d lines)", w, lines,
                 widest, width, max_lines);
    return lines;
}

static int max3(int a, int b, int c) { return a > b ? (a > c ? a : c) : (b > c ? b : c); }

static void test_width(void) {
    /* DejaVu Sans: W is 0.989 em, i 0.278, x 0.592; others 1 em. */
    ZB_CHECK(zb_plot_text_width("W") == 989 && zb_plot_text_width("i") == 278 && zb_plot_text_width("x") == 592);
    ZB_CHECK(zb_plot_text_width("WWWWWWWWWW") > 3 * zb_plot_text_width("iiiiiiiiii"));
    ZB_CHECK(zb_plot_text_width("\xc3\xa4") == 1000); /* one character, two bytes */
    ZB_CHECK(zb_plot_text_width("ab\\nWWW") == zb_plot_text_width("WWW")); /* the widest line */
}

static void test_wrap(void) {
    char out[512];
    int parts = max3(zb_plot_text_width("tiny"), zb_plot_text_width("2 ranks"), zb_plot_text_width("cpu/mpi"));
    zb_plot_wrap("tiny, 2 ranks, cpu/mpi", parts + 100, 3, out, sizeof out);
    ZB_CHECK_MSG(!strcmp(out, "tiny\\n2 ranks\\ncpu/mpi"), "got '%s'", out);
    zb_plot_wrap("8 ranks", 20000, 3, out, sizeof out);
    ZB_CHECK(!strcmp(out, "8 ranks"));
    /* A word too wide for a narrow line: its start, with a '.'. */
    zb_plot_wrap("prefetch", zb_plot_text_width("pref."), 2, out, sizeof out);
    ZB_CHECK_MSG(!strcmp(out, "pref."), "got '%s'", out);
    /* A word too wide for a line that holds more: its start and end, so
     * that variant_A and variant_B stay apart. */
    zb_plot_wrap("llama3_70b_finetune_variant_A", 9000, 3, out, sizeof out);
    ZB_CHECK_MSG(!strncmp(out, "llama", 5) && strstr(out, "...") && out[strlen(out) - 1] == 'A', "got '%s'", out);
    check_wrapped(out, 9000, 1);
    /* Past the last line: "...", never wider than the line. */
    int w2 = zb_plot_text_width("one two");
    zb_plot_wrap("one two three four five six", w2, 2, out, sizeof out);
    ZB_CHECK_MSG(!strncmp(out, "one two\\n", 9) && !strcmp(out + strlen(out) - 3, "..."), "got '%s'", out);
    check_wrapped(out, w2, 2);
    /* A label cut before ("...") is not given a second "...". */
    zb_plot_wrap("aaa bbb... ccc", zb_plot_text_width("aaa bbb..."), 1, out, sizeof out);
    ZB_CHECK_MSG(!strcmp(out, "aaa bbb..."), "got '%s'", out);
    /* An input's own backslash never makes a line: \n in a name stays one line. */
    zb_plot_wrap("a\\nb", 10000, 1, out, sizeof out);
    ZB_CHECK_MSG(!strcmp(out, "a/nb"), "got '%s'", out);
    /* Any length, any width: never a line wider than the width; wide text
     * (W) takes as much room as it measures. */
    char longs[400], wide[400];
    for (int i = 0; i < 399; i++) {
        longs[i] = i % 13 == 12 ? ' ' : i % 7 == 6 ? ',' : (char)('a' + i % 26);
        wide[i] = i % 11 == 10 ? ' ' : 'W';
    }
    longs[399] = wide[399] = '\0';
    for (int width = 300; width < 24000; width += 350) {
        for (int lines = 1; lines < 5; lines++) {
            zb_plot_wrap(longs, width, lines, out, sizeof out);
            check_wrapped(out, width, lines);
            zb_plot_wrap(wide, width, lines, out, sizeof out);
            check_wrapped(out, width, lines);
        }
    }
    /* UTF-8: characters, not bytes (a non-ASCII one 1 em). */
    zb_plot_wrap("gr\xc3\xb6\xc3\x9f" "e m\xc3\xa4\xc3\x9fig", 4000, 2, out, sizeof out);
    ZB_CHECK_MSG(!strcmp(out, "gr\xc3\xb6\xc3\x9f" "e\\nm\xc3\xa4\xc3\x9fig"), "got '%s'", out);
}

static void test_cut_and_text(void) {
    char out[128];
    zb_plot_cut("abcdefghij", zb_plot_text_width("abc..."), out, sizeof out);
    ZB_CHECK_MSG(!strcmp(out, "abc..."), "got '%s'", out);
    zb_plot_cut("abc", 6000, out, sizeof out);
    ZB_CHECK(!strcmp(out, "abc"));
    zb_plot_cut("\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4", 1000 + zb_plot_text_width("..."), out, sizeof out);
    ZB_CHECK_MSG(!strcmp(out, "\xc3\xa4..."), "got '%s'", out);
    zb_plot_cut("WWWWWWWWWW", 5000, out, sizeof out); /* by width: fewer W's than i's fit */
    ZB_CHECK_MSG(zb_plot_text_width(out) <= 5000 && strlen(out) < 8, "got '%s'", out);
    zb_plot_cut("a\\b", 5000, out, sizeof out);
    ZB_CHECK_MSG(!strcmp(out, "a/b"), "got '%s'", out);
    /* In the middle: the start and the end stay. */
    zb_plot_cut_middle("allgather a_very_long_backend_name/mpi bf16, 8 ranks", 16000, out, sizeof out);
    ZB_CHECK_MSG(!strncmp(out, "allgather", 9) && strstr(out, "...") && strstr(out, "8 ranks") &&
                     zb_plot_text_width(out) <= 16000, "got '%s'", out);
    zb_plot_cut_middle("short", 16000, out, sizeof out);
    ZB_CHECK(!strcmp(out, "short"));
    zb_plot_gp_text("it's `rm` \"x\" \\ \n", out, sizeof out);
    ZB_CHECK_MSG(!strpbrk(out, "'`\"\\\n"), "got '%s'", out);
    zb_plot_gp_text("ab\xc3\xa4", out, 4); /* a character cut in two goes whole */
    ZB_CHECK_MSG(!strcmp(out, "ab"), "got '%s'", out);
}

/* What a data file gets: quotes and control characters as ', a backslash
 * as / (gnuplot reads escapes in quoted data), a wrapped label's breaks kept. */
static void test_data_strings(void) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ZB_CHECK(f != NULL);
    if (!f) return;
    zb_plot_put_str(f, "a\"b\\nc\n\\042");
    fputc(' ', f);
    zb_plot_put_wrapped(f, "one\\ntwo \\ three");
    fclose(f);
    ZB_CHECK_MSG(!strcmp(buf, "\"a'b/nc'/042\" \"one\\ntwo / three\""), "got '%s'", buf);
    free(buf);
}

/* A legend of wide entries gets wider columns (gnuplot's own reckons 0.64
 * em a character) and fewer of them; every column fits the room. */
static void test_key(void) {
    zb_plot_key narrow = {0}, wide = {0};
    for (int i = 0; i < 4; i++) {
        zb_plot_key_add(&narrow, "iiiiiiiiii");
        zb_plot_key_add(&wide, "WWWWWWWWWW");
    }
    zb_plot_key_layout(&narrow, 33000, 2.5);
    zb_plot_key_layout(&wide, 33000, 2.5);
    ZB_CHECK_MSG(wide.width_fix > narrow.width_fix && wide.cols <= narrow.cols, "fix %d/%d cols %d/%d",
                 wide.width_fix, narrow.width_fix, wide.cols, narrow.cols);
    /* The text's room (h_char 0.63 em * (characters + fix)) holds the widest. */
    ZB_CHECK(630 * (10 + wide.width_fix) >= zb_plot_text_width("WWWWWWWWWW"));
    ZB_CHECK(wide.rows * wide.cols >= 4 && narrow.rows * narrow.cols >= 4);
}

/* Keys longer than any label, differing only in their middle (the dtype)
 * and at their end (the ranks): six series stay six (a key is never cut),
 * and their six legend entries fit the legend's width and all differ,
 * each naming its own dtype and rank count. Keys differing only in a
 * middle no label can show get numbers. */
static void test_series_apart(void) {
    const char *wide = "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW";
    zb_plot_input file = {.path = "x.json"};
    zb_plot_inputs in = {.files = &file, .n = 1};
    zb_plot_series_set set = {0};
    for (int round = 0; round < 2; round++) { /* the second finds the same six */
        for (int dt = 0; dt < 2; dt++) {
            for (int ranks = 2; ranks <= 8; ranks *= 2) {
                zb_plot_series *s = zb_plot_series_getf(&set, 0, "allgather cpu_%s dt%d_%s, %d ranks", wide, dt, wide, ranks);
                zb_plot_series_add(&set, s, (zb_plot_point){1024.0 * (round + 1), 1.0, 0, 0});
            }
        }
    }
    ZB_CHECK_MSG(set.n == 6, "%d series", set.n);
    for (int i = 0; i < set.n; i++) ZB_CHECK_MSG(set.s[i].n == 2, "series %d has %d points", i, set.s[i].n);
    zb_plot_series_finish(&set, &in);
    for (int i = 0; i < set.n; i++) {
        const char *l = set.s[i].label;
        char dt[8], ranks[16];
        snprintf(dt, sizeof dt, "dt%d", i / 3);
        snprintf(ranks, sizeof ranks, "%d ranks", 2 << (i % 3));
        ZB_CHECK_MSG(zb_plot_text_width(l) <= ZB_PLOT_LEGEND_WIDTH, "'%s' too wide", l);
        ZB_CHECK_MSG(strstr(l, dt) && strstr(l, ranks) && !strncmp(l, "allgather", 9), "series %d: '%s'", i, l);
        for (int j = 0; j < i; j++) ZB_CHECK_MSG(strcmp(l, set.s[j].label), "'%s' twice", l);
    }
    zb_plot_series_free(&set);
    /* Alike but for one character deep inside a long word: numbered. */
    for (int v = 0; v < 3; v++) {
        zb_plot_series_add(&set, zb_plot_series_getf(&set, 0, "m_%s%d%s", wide, v, wide), (zb_plot_point){1, 1, 0, 0});
    }
    zb_plot_series_finish(&set, &in);
    ZB_CHECK(set.n == 3);
    for (int i = 0; i < set.n; i++) {
        ZB_CHECK_MSG(zb_plot_text_width(set.s[i].label) <= ZB_PLOT_LEGEND_WIDTH, "'%s'", set.s[i].label);
        for (int j = 0; j < i; j++) ZB_CHECK_MSG(strcmp(set.s[i].label, set.s[j].label), "'%s' twice", set.s[i].label);
    }
    zb_plot_series_free(&set);
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
    test_width();
    test_wrap();
    test_cut_and_text();
    test_data_strings();
    test_key();
    test_series_apart();
    test_config();
    return zb_test_finish("test_plot_labels");
}
