"""The rules Perfetto's JSON importer reads a Chrome trace by, checked over
a zerobench --trace file (docs/design.md §7), for the tests that cannot run
a real trace processor (it is a binary downloaded at run time, which these
machines cannot fetch).

What the importer does (its json_trace_parser and json_utils):
  - ts and dur (µs) become integer ns by moving the decimal point of the
    number's text three places and dropping what follows (truncation);
  - since v51 an explicit tid 0 with a non-zero pid is read as tid = pid,
    so a stream with id 0 would share the track of the stream whose tid
    equals the pid; pid 0 is the idle process in its process model;
  - a thread_name event names the latest thread with that tid, whatever
    its pid: a tid must mean one name in every process;
  - the X events of one thread track form a stack: one that starts inside
    another is its child, and one that outlasts its parent is misnested.
Here every id must be 1 or more, every process and track named and
sorted, the slices of each (pid, tid) disjoint or nested as the importer
would see them, no compute slice under a comm slice on any track after the
tid-0 rewrite, and a live-memory counter in every process.

    from trace_rules import load, problems
    errors = problems(load(path), want_pids={1, 2})
"""
import json


def load(path):
    """The trace, its numbers kept as their text (the importer reads the text)."""
    with open(path) as f:
        return json.load(f, parse_float=lambda s: s, parse_int=lambda s: s)


def to_ns(text):
    """The importer's ns from a µs number's text (json_utils CoerceToTs)."""
    s = str(text)
    shift = 0
    if "e" in s.lower():
        s, exp = s.lower().split("e")
        shift = int(exp)
    neg = s.startswith("-")
    s = s.lstrip("+-")
    whole = s.find(".")
    digits = s.replace(".", "")
    int_size = len(s) if whole < 0 else whole
    size = max(1, int_size + shift + 3)
    digits = (digits + "0" * size)[:size]
    return -int(digits) if neg else int(digits)


def as_int(text):
    try:
        return int(str(text))
    except ValueError:
        return None


def problems(doc, want_pids=None):
    """Every broken rule, one line each; [] when the trace reads as written."""
    out = []
    ev = doc.get("traceEvents") if isinstance(doc, dict) else None
    if not isinstance(ev, list) or not ev:
        return ["no traceEvents"]
    pnames, psort, tnames, tsort, names_of_tid = {}, set(), {}, set(), {}
    slices, tracks, counters = {}, set(), {}
    bad_ids = set()
    for i, e in enumerate(ev):
        pid, tid = as_int(e.get("pid")), as_int(e.get("tid"))
        if pid is None or pid < 1 or tid is None or tid < 1:
            if (pid, tid) not in bad_ids:  # once per pair; the rest still read as the importer would
                bad_ids.add((pid, tid))
                out.append(f"event {i} ({e.get('ph')} {e.get('name')}): pid {e.get('pid')} tid {e.get('tid')}, "
                           "want both 1 or more")
            if pid is None or tid is None:
                continue
        ph, name, args = e.get("ph"), e.get("name"), e.get("args") or {}
        if ph == "M":
            if name == "process_name":
                pnames[pid] = args.get("name")
            elif name == "process_sort_index":
                psort.add(pid)
            elif name == "thread_name":
                tnames[(pid, tid)] = args.get("name")
                names_of_tid.setdefault(tid, set()).add(args.get("name"))
            elif name == "thread_sort_index":
                tsort.add((pid, tid))
        elif ph == "X":
            start = to_ns(e["ts"])
            dur = to_ns(e["dur"])
            if dur < 0:
                out.append(f"event {i} ({name}): dur {e['dur']} < 0")
            slices.setdefault((pid, tid), []).append((start, start + dur, e.get("cat"), name))
            tracks.add((pid, tid))
        elif ph == "i":
            tracks.add((pid, tid))
        elif ph == "C":
            if not args or not all(as_int(v) is not None or _is_num(v) for v in args.values()):
                out.append(f"event {i}: counter {name} without numeric args")
            counters.setdefault(pid, set()).add(name)
    pids = {p for (p, _) in tracks} | set(counters)
    if want_pids is not None and pids != set(want_pids):
        out.append(f"processes {sorted(pids)}, want {sorted(want_pids)}")
    for p in sorted(pids):
        if not pnames.get(p):
            out.append(f"pid {p}: no process_name")
        if p not in psort:
            out.append(f"pid {p}: no process_sort_index")
        if "live memory" not in counters.get(p, set()):
            out.append(f"pid {p}: no live memory counter")
    for t in sorted(tracks):
        if not tnames.get(t):
            out.append(f"pid {t[0]} tid {t[1]}: no thread_name")
        if t not in tsort:
            out.append(f"pid {t[0]} tid {t[1]}: no thread_sort_index")
    for tid, names in sorted(names_of_tid.items()):
        if len(names) > 1:
            out.append(f"tid {tid} has names {sorted(map(str, names))} in different processes")
    out += _stacks(slices)
    return out


def _is_num(v):
    try:
        float(str(v))
        return True
    except ValueError:
        return False


def _stacks(slices):
    """Each track's slices as the importer stacks them, with the tid-0
    rewrite applied (a no-op for a trace without tid 0)."""
    out = []
    merged = {}
    for (pid, tid), s in slices.items():
        merged.setdefault((pid, pid if tid == 0 else tid), []).extend(s)
    for (pid, tid), s in sorted(merged.items()):
        stack = []
        # Starting first, then longest first: a parent comes before its children.
        for start, end, cat, name in sorted(s, key=lambda x: (x[0], -x[1])):
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack:
                pstart, pend, pcat, pname = stack[-1]
                if end > pend:
                    out.append(f"pid {pid} tid {tid}: {name} [{start}, {end}] ns outlasts {pname} "
                               f"[{pstart}, {pend}] it starts in (misnested)")
                    continue
                if cat == "compute" and pcat == "comm":
                    out.append(f"pid {pid} tid {tid}: compute {name} nested under comm {pname} at {start} ns")
            stack.append((start, end, cat, name))
    return out


if __name__ == "__main__":
    import sys
    bad = 0
    for path in sys.argv[1:]:
        errs = problems(load(path))
        for line in errs[:20]:
            print(f"{path}: {line}")
        if len(errs) > 20:
            print(f"{path}: ... {len(errs) - 20} more")
        bad += bool(errs)
    sys.exit(1 if bad else 0)
