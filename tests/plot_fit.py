"""What test_plot_label_fit checks on a folder of `zerobench plot` output:
every label placed on the canvas fits the room it has, measured in the
figures' own font, and nothing from an input reaches gnuplot as an escape.

    python3 plot_fit.py DIR...

For each KIND.dat (and KIND_ref.dat) in each DIR, with the gnuplot
variables of its `# rebuild:` line:

- group labels (steps, memory): every line at most its group's share of
  the plot area, a point to spare; groups labelled alike only when numbered;
  memory's bar labels within a bar's share;
- legends: no two entries alike; a column fits the canvas; gnuplot's column (it reckons 0.640 em
  a character in pdfcairo, `kw` more characters from plot) holds the
  widest entry, so no entry reaches the column before it; where plot
  reserved the legend's rows (steps, memory, scaling), gnuplot's columns
  at 0.652 em a character (pngcairo, the wider) fit the width it has;
- the timeline's row labels within its left margin (`lm`); the title, the
  SIMULATED mark, the scaling legend's title and the notes within the
  canvas at their sizes;
- data strings: no backslash but a wrapped label's line breaks;
- where pdftotext (poppler-utils) is installed, each PDF as drawn: every
  word's box on the page and no two words' boxes overlapping (a legend on
  an axis label, a title off the canvas).

Widths are the font's advance widths, read here from the TTF file that
fontconfig gives for "Sans" (the cairo terminals' font): a check apart from
plot's own table. Without fc-match or a TrueType file the width checks are
skipped (said on stdout); the string checks still run. Exits 1 on a
failure, naming the label.
"""
import html
import itertools
import os
import re
import shutil
import shlex
import struct
import subprocess
import sys

from zbcheck import check, finish

CANVAS = 237.6  # pt: 3.3 in
HCHAR_PDF, HCHAR_PNG, HTIC = 0.640, 0.652, 0.6  # gnuplot's key reckoning, em of the key's font


def font_file():
    try:
        path = subprocess.run(["fc-match", "-f", "%{file}", "Sans"], capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return path if path.lower().endswith(".ttf") and os.path.isfile(path) else None


def advances(path):
    """cmap (format 4) and hmtx of a TrueType file: code point -> advance in em."""
    b = open(path, "rb").read()
    tables = {}
    for i in range(struct.unpack(">H", b[4:6])[0]):
        tag, _, off, length = struct.unpack(">4sIII", b[12 + 16 * i:28 + 16 * i])
        tables[tag.decode("latin-1")] = off
    upem = struct.unpack(">H", b[tables["head"] + 18:tables["head"] + 20])[0]
    n_metrics = struct.unpack(">H", b[tables["hhea"] + 34:tables["hhea"] + 36])[0]
    adv = [struct.unpack(">H", b[tables["hmtx"] + 4 * g:tables["hmtx"] + 4 * g + 2])[0] for g in range(n_metrics)]
    cmap, glyph = tables["cmap"], {}
    for i in range(struct.unpack(">H", b[cmap + 2:cmap + 4])[0]):
        platform, _, off = struct.unpack(">HHI", b[cmap + 4 + 8 * i:cmap + 12 + 8 * i])
        sub = cmap + off
        if platform != 3 or struct.unpack(">H", b[sub:sub + 2])[0] != 4:
            continue
        segs = struct.unpack(">H", b[sub + 6:sub + 8])[0] // 2
        at = sub + 14
        ends = struct.unpack(">%dH" % segs, b[at:at + 2 * segs])
        starts = struct.unpack(">%dH" % segs, b[at + 2 * segs + 2:at + 4 * segs + 2])
        deltas = struct.unpack(">%dh" % segs, b[at + 4 * segs + 2:at + 6 * segs + 2])
        ro_at = at + 6 * segs + 2
        offsets = struct.unpack(">%dH" % segs, b[ro_at:ro_at + 2 * segs])
        for s in range(segs):
            for c in range(starts[s], min(ends[s], 0x2FFF) + 1):
                if offsets[s] == 0:
                    g = (c + deltas[s]) & 0xFFFF
                else:
                    a = ro_at + 2 * s + offsets[s] + 2 * (c - starts[s])
                    g = struct.unpack(">H", b[a:a + 2])[0]
                    g = (g + deltas[s]) & 0xFFFF if g else 0
                glyph[c] = g
        break
    return lambda cp: adv[min(glyph.get(cp, 0), n_metrics - 1)] / upem


EM = None  # code point -> em, once the font is read


def width_pt(text, size):
    """The widest line's width (lines split at the two characters \\n)."""
    return max(sum(EM(ord(c)) for c in line) for line in text.split("\\n")) * size


def fits(text, size, room, what):
    if EM is None or not text:
        return
    w = width_pt(text, size)
    check(w <= room + 1e-6, f"{what}: {text!r} is {w:.1f} pt at {size} pt, room {room:.1f} pt")


def fields(line):
    return [f[1:-1] if f.startswith('"') else f for f in re.findall(r'"[^"]*"|\S+', line)]


def blocks(path):
    """The data rows of each block (gnuplot's index), header rows included."""
    out, cur, blank = [], [], 0
    for line in open(path, encoding="utf-8", errors="replace"):
        if line.startswith("#"):
            continue
        if not line.strip():
            blank += 1
            continue
        if blank >= 2 and cur:
            out.append(cur)
            cur = []
        blank = 0
        cur.append(fields(line))
    if cur:
        out.append(cur)
    return out


def gp_vars(dat):
    """The gnuplot variables of the data file's first rebuild line."""
    line = next(l for l in open(dat, encoding="utf-8", errors="replace") if l.startswith("# rebuild:"))
    words = shlex.split(line[len("# rebuild:"):])
    assign = words[words.index("-e") + 1]
    vars_ = {}
    for k, v in re.findall(r"(\w+)=('[^']*'|[^;]*)", assign):
        vars_[k] = v[1:-1] if v.startswith("'") else v.strip()
    return vars_


def num(vars_, key, dflt):
    try:
        return float(vars_[key])
    except (KeyError, ValueError):
        return dflt


def legend(entries, vars_, samplen, plot_frac, what):
    """A key's entries against gnuplot's layout with plot's kw and kcols."""
    entries = [e for e in entries if e]
    twice = sorted({e for e in entries if entries.count(e) > 1})
    check(not twice, f"{what}: legend entries that read alike: {twice[:3]}")
    if EM is None or not entries:
        return
    kw, kcols = num(vars_, "kw", 0), int(num(vars_, "kcols", 0))
    most = max(len(e) for e in entries)
    widest = max(width_pt(e, 6) for e in entries) / 6  # em
    room = HCHAR_PDF * (most + kw)
    check(widest <= room + 1e-6, f"{what}: legend text {widest:.2f} em in a column of {room:.2f} em (kw {kw:g}): "
                                 "it would reach the column before")
    col = HCHAR_PNG * (most + 1 + kw) + samplen * HCHAR_PNG + HTIC + HCHAR_PNG  # em of 6 pt
    check(col * 6 <= CANVAS, f"{what}: a legend column is {col * 6:.1f} pt, the canvas {CANVAS} pt")
    if plot_frac and kcols > 0:
        fit = int(plot_frac * CANVAS / (col * 6))
        check(fit >= kcols, f"{what}: {kcols} legend columns reserved, {fit} fit: more rows than the figure holds")


def strings_clean(dat, what):
    """No backslash in a data string but the line breaks of group and bar labels."""
    name = os.path.basename(dat)
    wrapped_cols = {2, 4} if name.startswith(("steps", "memory")) and "_ref" not in name else set()
    for b in blocks(dat):
        for row in b:
            for i, f in enumerate(row):
                rest = f.replace("\\n", "") if i in wrapped_cols else f
                check("\\" not in rest, f"{what}: a backslash reached gnuplot in {f!r}")


def group_labels(rows, col_label, size, plot_frac, what, bar_col=None, bw=None):
    """Each group's label within the room to its labelled neighbours (a
    group's share of the axis; numbered groups label every k-th)."""
    head, data = rows[0], rows[1:]
    gx = head.index("group_x")
    n_groups = max(int(float(r[gx])) for r in data) + 1
    share = plot_frac * CANVAS / (n_groups + 0.2)
    labels = {}
    for r in data:
        if r[col_label]:
            labels.setdefault(int(float(r[gx])), set()).add(r[col_label])
        if bar_col is not None:
            fits(r[bar_col], size, share * bw, f"{what} bar label")
    at = sorted(labels)
    seen = {}
    for i, g in enumerate(at):
        near = min([g - at[i - 1]] if i else [n_groups] + ([at[i + 1] - g] if i + 1 < len(at) else []))
        near = min(near, at[i + 1] - g) if i + 1 < len(at) else near
        for label in labels[g]:
            fits(label, size, share * near - 1.0, f"{what} group {g + 1} label")
            check(label not in seen or label.isdigit(), f"{what}: groups {seen.get(label, 0) + 1} and {g + 1} both "
                                                        f"labelled {label!r}")
            seen.setdefault(label, g)
        check(len(labels[g]) == 1, f"{what}: group {g + 1} has labels {sorted(labels[g])}")


def pdf_words(pdf):
    """The page's size and its words' boxes (pt), as pdftotext lays them out."""
    out = subprocess.run(["pdftotext", "-bbox", pdf, "-"], capture_output=True, text=True, timeout=60).stdout
    page = re.search(r'<page width="([\d.]+)" height="([\d.]+)"', out)
    words = [(float(a), float(b), float(c), float(e), html.unescape(t)) for a, b, c, e, t in
             re.findall(r'<word xMin="([-\d.]+)" yMin="([-\d.]+)" xMax="([-\d.]+)" yMax="([-\d.]+)">(.*?)</word>', out)]
    return (float(page.group(1)), float(page.group(2))) if page else (0, 0), words


def pdf_boxes(pdf, what):
    (w, h), words = pdf_words(pdf)
    check(w > 0 and words, f"{what}: pdftotext found no page or no text")
    for x0, y0, x1, y1, t in words:
        check(x0 >= -0.5 and y0 >= -0.5 and x1 <= w + 0.5 and y1 <= h + 0.5, f"{what}: {t!r} runs off the page")
    # Two words overlap when their boxes share more than a hairline (a line's
    # box reaches a little into the next line's: 0.8 pt allowed).
    for a, b in itertools.combinations(words, 2):
        dx, dy = min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])
        check(not (dx > 0.3 and dy > 0.8), f"{what}: {a[4]!r} and {b[4]!r} overlap")


def check_dir(d):
    if shutil.which("pdftotext"):
        for name in sorted(os.listdir(d)):
            if name.endswith(".pdf"):
                pdf_boxes(os.path.join(d, name), f"{os.path.basename(os.path.normpath(d))}/{name}")
    for name in sorted(os.listdir(d)):
        if not name.endswith(".dat") or name.endswith("_ref.dat"):
            continue
        dat = os.path.join(d, name)
        kind = name[:-4].replace("_sim", "")
        v = gp_vars(dat)
        b = blocks(dat)
        ref = dat[:-4] + "_ref.dat"
        refs = [blk[0][1] for blk in blocks(ref)] if os.path.exists(ref) else []
        what = f"{os.path.basename(os.path.normpath(d))}/{name}"
        strings_clean(dat, what)
        if os.path.exists(ref):
            strings_clean(ref, what[:-4] + "_ref.dat")
        for key, size in (("origin", 6.5), ("title", 6), ("what", 7), ("note", 5.5), ("note2", 5.5),
                          ("offscale", 5.5), ("barnote", 5.5), ("barnote2", 5.5)):
            fits(v.get(key, ""), size, 0.96 * CANVAS, f"{what} {key}")
        if kind == "steps":
            group_labels(b[0], 2, 6, 0.81, what)
            names = {c: ("DDP" if c < 3 else f"ZeRO-{c // 3}") +
                     (" sync" if c % 3 == 0 else (" prefetch" if c // 3 == 3 else "") if c % 3 == 1 else " other")
                     for c in range(12)}
            legend([names[int(c)] for c in v.get("configs", "").split()], v, 1.5, 0.81, what)
        elif kind == "memory":
            group_labels(b[0], 2, 5.5, 0.83, what, bar_col=4, bw=num(v, "bw", 0.4))
            legend(b[0][0][5:] + refs, v, 1.5, 0.83, what)
        elif kind == "timeline":
            lm = num(v, "lm", 0.15)
            for r in b[3][1:]:
                fits(r[1], 7, lm * CANVAS - 2, f"{what} row label")
        elif kind == "scaling":
            legend([blk[0][1] for blk in b], v, 2.5, 0.96, what)
        else:  # busbw, gemm, busbw_scaling: gnuplot reserves the rows
            legend([blk[0][1] for blk in b] + refs, v, 2.5, None, what)


if __name__ == "__main__":
    ttf = font_file()
    if ttf:
        EM = advances(ttf)
    else:
        print("plot_fit: no TrueType file for 'Sans' (fc-match): label widths not checked")
    if not shutil.which("pdftotext"):
        print("plot_fit: no pdftotext (poppler-utils): the PDFs' text boxes not checked")
    for d in sys.argv[1:]:
        check_dir(d)
    finish()
