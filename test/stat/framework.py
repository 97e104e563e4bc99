"""A small framework for dp_agg's statistical tests.

A test is a function registered with @stat_test("name").  It receives a
Check object, makes assertions through it and returns nothing; the runner
prints one line per test:

    PASS <name>: <notes> (<seconds>s)
    FAIL <name>: <failed assertions>; <notes> (<seconds>s)

and finally "stat: N passed, M failed".

Rules every test follows (README of the suite: test/stat/README.md):
  * every assertion can fail, and has a stated false-failure probability of
    at most 1e-6 (deterministic assertions: 0);
  * tolerances come from the distribution under test, never from numbers
    observed in earlier runs;
  * a failing test is never retried.

Test files are the modules test_*.py of this directory, imported in name
order; each registers its tests when imported.  To add tests, add a file.
"""

import importlib
import os
import sys
import time
import traceback

TESTS = []


class Failed(Exception):
    pass


def stat_test(name):
    """Register a test function f(check) under name."""
    def deco(f):
        if any(t[0] == name for t in TESTS):
            raise ValueError("duplicate test name %s" % name)
        TESTS.append((name, f))
        return f
    return deco


class Check:
    """Assertions of one test and the notes printed with its result."""

    def __init__(self):
        self.notes = []
        self.failures = []

    def note(self, text):
        self.notes.append(text)

    def that(self, cond, what):
        """An assertion; its false-failure probability is stated where it is
        made (0 for deterministic ones)."""
        if not cond:
            self.failures.append(what)
        return cond

    def within(self, label, value, lo, hi, fmt="%.3g"):
        """Statistical assertion lo <= value <= hi; the caller has derived
        lo and hi (and states the false-failure probability)."""
        ok = lo <= value <= hi
        text = ("%s=" + fmt + " in [" + fmt + "," + fmt + "]") % (label, value, lo, hi)
        if ok:
            self.notes.append(text)
        else:
            self.failures.append(text.replace(" in ", " NOT in "))
        return ok

    def stop_if_failed(self):
        """End the test now if a (deterministic) precondition failed."""
        if self.failures:
            raise Failed("precondition failed")


def discover(directory):
    if directory not in sys.path:
        sys.path.insert(0, directory)
    for fn in sorted(os.listdir(directory)):
        if fn.startswith("test_") and fn.endswith(".py"):
            importlib.import_module(fn[:-3])


def run_tests(selected, out=sys.stdout):
    passed = failed = 0
    for name, f in selected:
        check = Check()
        t0 = time.time()
        error = None
        try:
            f(check)
        except Failed:
            pass
        except Exception as e:      # an error is a failure, with its cause
            error = "%s: %s" % (type(e).__name__, str(e).strip().replace("\n", " | "))
            if os.environ.get("DP_STAT_TRACEBACK"):
                traceback.print_exc()
        dt = time.time() - t0
        notes = "; ".join(check.notes)
        if error is None and not check.failures:
            passed += 1
            out.write("PASS %s: %s (%.1fs)\n" % (name, notes, dt))
        else:
            failed += 1
            what = "; ".join(check.failures + ([error] if error else []))
            out.write("FAIL %s: %s%s (%.1fs)\n" % (name, what, ("; " + notes) if notes else "", dt))
        out.flush()
    return passed, failed
