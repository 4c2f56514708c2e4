"""The check helper of the Python blocks embedded in the shell tests
(tests/lib.sh puts this folder on PYTHONPATH): check() records a failed
condition and goes on; finish() prints every failure and exits 1 if any."""
import sys

errors = []


def check(cond, what):
    if not cond:
        errors.append(what)


def finish(name=None):
    for e in errors:
        print("FAIL:", e)
    if name:
        print(f"{name}: {len(errors)} failed")
    sys.exit(1 if errors else 0)
