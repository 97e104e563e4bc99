#!/usr/bin/env python3
"""Run dp_agg's statistical tests.

    python3 test/stat/run.py [--list] [NAME-SUBSTRING ...]

Connects with PGHOST, PGPORT and PGUSER (a superuser: noise_sample and the
budget need it) to the database DP_STAT_DB (default dp_stat, created if
absent).  Prints one line per test and, last, exactly

    stat: N passed, M failed

and exits non-zero if anything failed.  Each statistical assertion has a
false-failure probability of at most 1e-6 (see each module's docstring).
"""

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True      # leave no __pycache__ in the tree

import db            # noqa: E402
import framework     # noqa: E402


def main(argv):
    listing = "--list" in argv
    patterns = [a for a in argv if not a.startswith("--")]
    framework.discover(HERE)
    selected = [t for t in framework.TESTS
                if not patterns or any(p in t[0] for p in patterns)]
    if listing:
        for name, _ in selected:
            print(name)
        return 0
    t0 = time.time()
    try:
        db.setup()
    except Exception as e:
        print("FAIL setup: %s" % (str(e).strip().replace("\n", " | "),))
        print("stat: 0 passed, 1 failed")
        return 1
    passed, failed = framework.run_tests(selected)
    if not selected:
        print("FAIL selection: no test matches %s" % " ".join(patterns))
        failed += 1
    print("# %d tests in %.1fs" % (len(selected), time.time() - t0))
    print("stat: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
