/* The plot tool's label helpers (plot_series.h): text widths in milli-em
 * of the figures' font, labels cut at their end or in the middle and
 * wrapped to a width and a number of lines, legends laid out by their
 * entries' widths, and strings for a gnuplot -e assignment. */
#include <stdio.h>
#include <string.h>

#include "plot_label.h"
#include "plot_series.h"

/* DejaVu Sans's advance widths of ' ' to '~', in milli-em, rounded up
 * (read from DejaVuSans.ttf's hmtx table: 2048 units an em). */
static const unsigned short ascii_width[95] = {
    318, 401, 460, 838, 637, 951, 780, 275, 391, 391, 500, 838, 318, 361, 318, 337, /*  !"#$%&'()*+,-./ */
    637, 637, 637, 637, 637, 637, 637, 637, 637, 637, 337, 337, 838, 838, 838, 531, /* 0-9 :;<=>? */
    1000, 685, 687, 699, 771, 632, 576, 775, 752, 295, 295, 656, 558, 863, 749, 788, /* @A-O */
    604, 788, 695, 635, 611, 732, 685, 989, 686, 611, 686, 391, 337, 391, 838, 500, /* P-Z [\]^_ */
    500, 613, 635, 550, 635, 616, 353, 635, 634, 278, 278, 580, 278, 975, 634, 612, /* `a-o */
    635, 635, 412, 521, 393, 634, 592, 818, 592, 592, 525, 637, 337, 637, 838,      /* p-z {|}~ */
};

/* The width of the character whose first byte is c: its advance, 1 em for
 * any other (a control character, drawn as a quote, included). */
static int char_width(unsigned char c) { return c >= 0x20 && c < 0x7f ? ascii_width[c - 0x20] : 1000; }

/* The width of the first `len` bytes of s. */
static int width_of(const char *s, size_t len) {
    int w = 0;
    for (size_t i = 0; i < len; i++) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) w += char_width((unsigned char)s[i]);
    }
    return w;
}

int zb_plot_text_width(const char *s) {
    int widest = 0;
    for (;;) {
        const char *e = strstr(s, "\\n");
        int w = width_of(s, e ? (size_t)(e - s) : strlen(s));
        if (w > widest) widest = w;
        if (!e) return widest;
        s = e + 2;
    }
}

/* The end of the first character of s (len bytes) at or after byte i. */
static size_t char_end(const char *s, size_t len, size_t i) {
    for (i++; i < len && ((unsigned char)s[i] & 0xC0) == 0x80; i++) {
    }
    return i;
}

/* The bytes of the longest start of s (len bytes) at most `width` wide,
 * whole characters. */
size_t zb_plot_fit_start(const char *s, size_t len, int width) {
    int w = 0;
    size_t i = 0;
    while (i < len) {
        int cw = char_width((unsigned char)s[i]);
        if (w + cw > width) break;
        w += cw;
        i = char_end(s, len, i);
    }
    return i;
}

/* Where the longest end of s (len bytes) at most `width` wide starts. */
size_t zb_plot_fit_end(const char *s, size_t len, int width) {
    int w = 0;
    size_t i = len;
    while (i > 0) {
        size_t j = i - 1;
        while (j > 0 && ((unsigned char)s[j] & 0xC0) == 0x80) j--;
        int cw = char_width((unsigned char)s[j]);
        if (w + cw > width) break;
        w += cw;
        i = j;
    }
    return i;
}

/* Appends len bytes of s to out (n bytes, used so far *k), a backslash
 * becoming '/' so that no \n of the input adds a line; a character that
 * would not fit whole is left out. */
void zb_plot_put_bytes(char *out, size_t n, size_t *k, const char *s, size_t len) {
    for (size_t i = 0; i < len;) {
        size_t e = char_end(s, len, i);
        if (*k + (e - i) + 1 > n) break;
        for (; i < e; i++) out[(*k)++] = s[i] == '\\' ? '/' : s[i];
    }
    if (n) out[*k] = '\0';
}

void zb_plot_cut(const char *s, int max_width, char *out, size_t n) {
    size_t k = 0, len = strlen(s);
    if (n == 0) return;
    out[0] = '\0';
    if (width_of(s, len) <= max_width) {
        zb_plot_put_bytes(out, n, &k, s, len);
        return;
    }
    if (max_width < DOTS_WIDTH) {
        zb_plot_put_bytes(out, n, &k, s, zb_plot_fit_start(s, len, max_width));
        return;
    }
    size_t keep = zb_plot_fit_start(s, len, max_width - DOTS_WIDTH);
    while (keep > 0 && s[keep - 1] == ' ') keep--;
    zb_plot_put_bytes(out, n, &k, s, keep);
    zb_plot_put_bytes(out, n, &k, "...", 3);
}

void zb_plot_cut_middle(const char *s, int max_width, char *out, size_t n) {
    size_t k = 0, len = strlen(s);
    if (n == 0) return;
    out[0] = '\0';
    if (width_of(s, len) <= max_width || max_width < 3 * DOTS_WIDTH) {
        zb_plot_cut(s, max_width, out, n); /* too narrow for both ends: the start */
        return;
    }
    int room = max_width - DOTS_WIDTH;
    size_t head = zb_plot_fit_start(s, len, room * 3 / 5); /* the start names what it is: the larger part */
    size_t tail = head + zb_plot_fit_end(s + head, len - head, room - width_of(s, head));
    while (tail < len && s[tail] == ' ') tail++;
    while (head > 0 && s[head - 1] == ' ') head--;
    zb_plot_put_bytes(out, n, &k, s, head);
    zb_plot_put_bytes(out, n, &k, "...", 3);
    zb_plot_put_bytes(out, n, &k, s + tail, len - tail);
}

/* Ends the line of out that starts at `start` (out ends at *k) in "...",
 * at most width wide: the label had more text than its lines hold. */
static void end_in_dots(char *out, size_t n, size_t *k, size_t start, int width) {
    size_t len = *k - start;
    if (len >= 3 && !memcmp(out + *k - 3, "...", 3) && width_of(out + start, len) <= width) return; /* cut already */
    size_t keep = width >= DOTS_WIDTH ? zb_plot_fit_start(out + start, len, width - DOTS_WIDTH) : len;
    while (keep > 0 && strchr(" ,.", out[start + keep - 1])) keep--;
    *k = start + keep;
    out[*k] = '\0';
    if (width >= DOTS_WIDTH) zb_plot_put_bytes(out, n, k, "...", 3);
}

void zb_plot_wrap(const char *s, int width, int max_lines, char *out, size_t n) {
    size_t k = 0, start = 0; /* start: where the current line begins in out */
    if (n == 0) return;
    out[0] = '\0';
    if (width < 1) width = 1;
    if (max_lines < 1) max_lines = 1;
    const int space = char_width(' '), dot = char_width('.');
    int line = 0, col = 0; /* the current line and its width */
    bool empty = true;     /* no word on it yet */
    const char *p = s;
    while (*p) {
        while (*p == ' ') p++;
        if (!*p) break;
        const char *w = p;
        while (*p && *p != ' ') p++;
        size_t wlen = (size_t)(p - w);
        int ww = width_of(w, wlen);
        /* A word after ", " starts a part ("2 ranks"): it joins the line
         * only when the whole part does, so lines break between parts. */
        int need = ww;
        if (w > s + 1 && w[-1] == ' ' && w[-2] == ',') {
            const char *e = strstr(w, ", ");
            size_t plen = e ? (size_t)(e - w) + 1 : strlen(w);
            int pw = width_of(w, plen);
            if (pw <= width) need = pw;
        }
        bool fits = empty ? ww <= width : col + space + need <= width;
        if (!fits && !empty) { /* a new line, or the end */
            if (line + 1 == max_lines) { /* no line left: "..." ends the last one */
                end_in_dots(out, n, &k, start, width);
                return;
            }
            if (k > start && out[k - 1] == ',') k--; /* a comma ending a line goes */
            out[k] = '\0';
            if (k + 3 > n) return;
            out[k++] = '\\'; /* the line break, the one backslash the result holds */
            out[k++] = 'n';
            out[k] = '\0';
            start = k;
            line++;
            col = 0;
            empty = true;
        }
        if (!empty) {
            zb_plot_put_bytes(out, n, &k, " ", 1);
            col += space;
        }
        if (ww > width && width >= 3 * DOTS_WIDTH) { /* a word wider than the line: its ends, "..." between */
            char word[1024], cut[1024];
            snprintf(word, sizeof word, "%.*s", (int)(wlen < sizeof word ? wlen : sizeof word - 1), w);
            zb_plot_cut_middle(word, width, cut, sizeof cut);
            zb_plot_put_bytes(out, n, &k, cut, strlen(cut));
            col = width;
        } else if (ww > width) { /* too narrow for that: its start, and a '.' */
            zb_plot_put_bytes(out, n, &k, w, zb_plot_fit_start(w, wlen, width > dot ? width - dot : width));
            if (width > dot) zb_plot_put_bytes(out, n, &k, ".", 1);
            col = width;
        } else {
            zb_plot_put_bytes(out, n, &k, w, wlen);
            col += ww;
        }
        empty = false;
    }
}

void zb_plot_key_add(zb_plot_key *k, const char *entry) {
    int w = zb_plot_text_width(entry), chars = 0;
    for (const char *c = entry; *c; c++) chars += ((unsigned char)*c & 0xC0) != 0x80;
    if (w > k->widest) k->widest = w;
    if (chars > k->most) k->most = chars;
    k->n++;
}

void zb_plot_key_layout(zb_plot_key *k, int room, double samplen) {
    /* gnuplot's h_char in the cairo terminals, milli-em of the key's font
     * (measured: 640 pdfcairo, 652 pngcairo): the low end sizes the
     * text's room, the high end the columns that fit. */
    const int hchar_lo = 630, hchar_hi = 660, htic = 600, gap = 500;
    /* A column: the text in h_char * (most + 1 + fix), right-aligned one
     * h_char before the sample, then the sample (samplen h_char and a tic)
     * and one h_char; the text must not reach the column before. */
    k->width_fix = (k->widest + gap + hchar_lo - 1) / hchar_lo - k->most;
    double col = hchar_hi * (k->most + 2 + k->width_fix + samplen) + htic;
    k->cols = (int)(room / col);
    if (k->cols < 1) k->cols = 1;
    if (k->cols > k->n) k->cols = k->n > 0 ? k->n : 1;
    k->rows = k->n > 0 ? (k->n + k->cols - 1) / k->cols : 1;
    k->cols = k->n > 0 ? (k->n + k->rows - 1) / k->rows : 1; /* as gnuplot evens them */
}

void zb_plot_gp_text(const char *s, char *out, size_t n) {
    size_t k = 0;
    if (n == 0) return;
    for (; *s && k + 1 < n; s++) {
        unsigned char c = (unsigned char)*s;
        out[k++] = (c < 0x20 || c == 0x7f || c == '\'' || c == '"' || c == '\\' || c == '`') ? ' ' : (char)c;
    }
    if (*s) { /* cut: a character cut in two goes whole */
        while (k > 0 && ((unsigned char)out[k - 1] & 0xC0) == 0x80) k--;
        if (k > 0 && ((unsigned char)out[k - 1] & 0xC0) == 0xC0) k--;
    }
    out[k] = '\0';
}
