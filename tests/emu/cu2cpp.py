#!/usr/bin/env python3
"""Rewrites a CUDA source (.cu / .cuh) into host C++ for the CPU emulator
(tests/emu/zb_emu.cpp, include/cuda_runtime.h).

    cu2cpp.py SRC OUT

Three rewrites, in code only (comments and string literals are left alone),
keeping every line where it was, so that with the #line directive put in
front, compiler messages, __FILE__/__LINE__ and debuggers point at SRC:

  kernel<<<grid, block[, smem[, stream]]>>>(args)
      -> zb_emu_launch(kernel, ZB_EMU_SITE("kernel"), zb_emu_cfg(grid, block, ...), args)
     `kernel` may be a template specialization (k<S>, ns::k<T, 4>); the
     arguments are passed through untouched (lambdas, templates, commas);
  extern __shared__ T name[];
      -> T *name = (T *)zb_emu_dynamic_smem();
  __shared__ T name[N]...;  (inside a function)
      -> static T name[N]...; zb_emu_shared_poison(&name, sizeof name);

A launch whose kernel cannot be found (or a <<< left over) is an error: the
script prints SRC:line and exits 1, so the build stops there.
"""
import re
import sys


def code_mask(src):
    """mask[i] is True where src[i] is code (not a comment or literal)."""
    mask = [True] * len(src)
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith('//', i):
            j = src.find('\n', i)
            j = n if j < 0 else j
        elif src.startswith('/*', i):
            j = src.find('*/', i + 2)
            j = n if j < 0 else j + 2
        elif src.startswith('R"', i) and not (i and (src[i - 1].isalnum() or src[i - 1] == '_')):
            m = re.match(r'R"([^()\\\s]{0,16})\(', src[i:])
            if not m:
                i += 1
                continue
            j = src.find(')' + m.group(1) + '"', i)
            j = n if j < 0 else j + len(m.group(1)) + 2
        elif c == '"' or (c == "'" and not (i > 0 and src[i - 1].isdigit())):
            j = i + 1
            while j < n and src[j] != c and src[j] != '\n':
                j += 2 if src[j] == '\\' else 1
            j = min(j + 1, n)
        else:
            i += 1
            continue
        for k in range(i, j):
            mask[k] = False
        i = j
    return mask


class Fail(Exception):
    pass


def line_of(src, pos):
    return src.count('\n', 0, pos) + 1


def find_code(src, mask, what, start, end=None):
    """First position >= start where `what` occurs in code."""
    i = src.find(what, start, end)
    while i >= 0 and not mask[i]:
        i = src.find(what, i + 1, end)
    return i


def match_forward(src, mask, pos, opener, closer):
    """Index of the `closer` that balances src[pos] == opener."""
    depth = 0
    for i in range(pos, len(src)):
        if not mask[i]:
            continue
        if src[i] == opener:
            depth += 1
        elif src[i] == closer:
            depth -= 1
            if depth == 0:
                return i
    raise Fail((pos, 'unbalanced %s%s' % (opener, closer)))


def callee_start(src, mask, k):
    """Start of the kernel expression that ends right before src[k:] (<<<)."""
    i = k
    while i > 0 and src[i - 1].isspace():
        i -= 1
    if i > 0 and src[i - 1] == '>':  # template arguments: k<S, (a > b)>
        depth, paren = 0, 0
        while i > 0:
            i -= 1
            ch = src[i]
            if not mask[i]:
                continue
            if ch in ')]':
                paren += 1
            elif ch in '([':
                paren -= 1
            elif paren == 0 and ch == '>':
                depth += 1
            elif paren == 0 and ch == '<':
                depth -= 1
                if depth == 0:
                    break
        while i > 0 and src[i - 1].isspace():
            i -= 1
    j = i
    while j > 0 and (src[j - 1].isalnum() or src[j - 1] in '_:'):
        j -= 1
    if j == i or src[j].isdigit():
        raise Fail((k, 'cannot find the kernel of this launch'))
    return j


def launches(src, mask):
    """(start, end, replacement) for every kernel<<<...>>>(...)."""
    edits, pos = [], 0
    while True:
        k = find_code(src, mask, '<<<', pos)
        if k < 0:
            return edits
        start = callee_start(src, mask, k)
        callee = src[start:k].rstrip()
        gap1 = src[start + len(callee):k]
        # the configuration: up to >>> at bracket depth 0
        depth, e = 0, k + 3
        while e < len(src):
            if mask[e]:
                if src[e] in '([{':
                    depth += 1
                elif src[e] in ')]}':
                    depth -= 1
                elif depth == 0 and src.startswith('>>>', e):
                    break
            e += 1
        else:
            raise Fail((k, 'no >>> after <<<'))
        cfg = src[k + 3:e]
        p = e + 3
        while p < len(src) and src[p].isspace():
            p += 1
        if p >= len(src) or src[p] != '(':
            raise Fail((k, 'no argument list after >>>'))
        q = match_forward(src, mask, p, '(', ')')
        gap2 = src[e + 3:p]
        args = src[p + 1:q]
        name = ' '.join(callee.split()).replace('\\', '\\\\').replace('"', '\\"')
        newlines = '\n' * (gap1.count('\n') + gap2.count('\n'))
        text = 'zb_emu_launch(%s, ZB_EMU_SITE("%s"), zb_emu_cfg(%s)%s' % (
            callee, name, cfg, newlines)
        text += (', %s)' % args) if args.strip() else ')'
        edits.append((start, q + 1, text))
        pos = q + 1


EXTERN_SHARED = re.compile(r'\bextern\s+__shared__\s+([^;{}]*?)\s*\b([A-Za-z_]\w*)\s*\[\s*\]\s*;')
SHARED = re.compile(r'\b__shared__\s+([^;{}=,]*?)\s*\b([A-Za-z_]\w*)\s*((?:\[[^\];]*\]\s*)*);')


def shared_decls(src, mask):
    """Edits for extern __shared__ and function-scope __shared__ declarations."""
    edits = []
    depth_at, depth = [0] * (len(src) + 1), 0
    for i, ch in enumerate(src):
        depth_at[i] = depth
        if mask[i]:
            depth += ch == '{'
            depth -= ch == '}'
    taken = []
    for m in EXTERN_SHARED.finditer(src):
        if not mask[m.start()]:
            continue
        ty = m.group(1)
        bare = re.sub(r'__align__\s*\([^)]*\)', '', ty).strip()
        nl = '\n' * m.group(0).count('\n')
        edits.append((m.start(), m.end(),
                      '%s *%s = (%s *)zb_emu_dynamic_smem();%s' % (ty, m.group(2), bare, nl)))
        taken.append((m.start(), m.end()))
    for m in SHARED.finditer(src):
        if not mask[m.start()] or depth_at[m.start()] == 0:
            continue  # file scope: stays `static` (the header's __shared__), not poisoned
        if any(a <= m.start() < b for a, b in taken):
            continue
        nl = '\n' * m.group(0).count('\n')
        edits.append((m.start(), m.end(),
                      'static %s %s%s; zb_emu_shared_poison(&%s, sizeof %s);%s'
                      % (m.group(1), m.group(2), m.group(3).rstrip(), m.group(2), m.group(2), nl)))
    return edits


def transform(src):
    mask = code_mask(src)
    edits = sorted(launches(src, mask) + shared_decls(src, mask))
    out, pos = [], 0
    for start, end, text in edits:
        if start < pos:
            raise Fail((start, 'overlapping rewrites'))
        out.append(src[pos:start])
        out.append(text)
        pos = end
    out.append(src[pos:])
    res = ''.join(out)
    assert res.count('\n') == src.count('\n'), 'line structure changed'
    left = find_code(res, code_mask(res), '<<<', 0)
    if left >= 0:
        raise Fail((None, '<<< left over at output line %d' % line_of(res, left)))
    return res


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: cu2cpp.py SRC OUT')
    path, out_path = sys.argv[1], sys.argv[2]
    with open(path, encoding='utf-8') as f:
        src = f.read()
    try:
        res = transform(src)
    except Fail as e:
        pos, msg = e.args[0]
        where = '%s:%d' % (path, line_of(src, pos)) if pos is not None else path
        sys.exit('%s: cu2cpp: %s' % (where, msg))
    header = '#line 1 "%s"\n' % path.replace('\\', '/').replace('"', '\\"')
    with open(out_path, 'w', encoding='utf-8') as f:
        f.write(header + res)


if __name__ == '__main__':
    main()
