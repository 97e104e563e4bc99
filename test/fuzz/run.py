#!/usr/bin/env python3
"""Fuzz test of every SQL function and aggregate of dp_agg.

    PGHOST=... PGPORT=... PGUSER=postgres python3 test/fuzz/run.py [NAME-SUBSTRING ...]

What it calls.  The functions and aggregates are read from the catalog:
every function in schema dp_agg and every function or aggregate that
belongs to the extension (pg_depend), so new ones are fuzzed without a
change here.  Functions with an `internal` argument cannot be called from
SQL and are listed as skipped, except TABLESAMPLE handlers, which are
fuzzed through TABLESAMPLE.  Each is called with the argument values of
values.py (0, +-tiny, +-huge, NaN, +-Infinity, NULL, empty, garbage and
valid text, 100,000-element, NULL-element and 2-D arrays, valid and
nonexistent roles) in the combinations of cover.py.  Aggregates run as DP
statements over a small table holding the extremes of every type (and
over an empty one), with extreme bounds, epsilon and delta.

Where.  A database of its own (DP_FUZZ_DB, default dp_fuzz), created and
dropped by the test, with a role dp_fuzz_other, so that the budget
writers can be fuzzed without touching other suites.  The current role
(a superuser) gets a budget the aggregates cannot exhaust.  Calculators
run first, aggregates next, volatile functions (budget writers,
noise_sample, preview) last.

What passes.  Under statement_timeout = 2s every call must return, or fail
with an error that is not internal (SQLSTATE class XX), not a statement
timeout (57014: the call ran longer than 2 s) and whose message is
lower-case without a trailing period.  A call that does not answer in
HANG_AFTER seconds ignored statement_timeout: the harness ends its backend
(terminate, else SIGKILL and a wait for the cluster's recovery) and goes
on with the next function (the hung one's other calls are recorded as not
run: each would cost seconds and a restart).  Interrupts: each call that took more than CANCEL_TEST_AFTER (0.2 s)
is run again in a second session and cancelled after 0.1 s; it must end
with 57014 within 1 s.  At the end the server must answer and its log
(PGHOST/server.log, or DP_FUZZ_SERVER_LOG) must show no backend
terminated by a signal other than the harness's own SIGKILLs.

Output: one line per function signature (PASS/FAIL, with the failing calls),
one for the server check, and last exactly "fuzz: N passed, M failed".
"""

import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True

import cover        # noqa: E402
import session      # noqa: E402
import values       # noqa: E402

DATABASE = os.environ.get("DP_FUZZ_DB", "dp_fuzz")
CANCEL_TEST_AFTER = 0.2     # seconds: calls slower than this get the cancel test
CANCEL_DELAY = 0.1          # cancel this long after the call starts
CANCEL_LIMIT = 1.0          # it must have ended this long after the cancel
CANCEL_RACE = 0.05          # a call that completes this soon after the cancel beat it
MAX_HANGS = 1              # after a hang, the function's other calls are not run
MAX_REPORTED = 8            # failing calls printed per signature
SETTINGS = {"statement_timeout": "%ds" % int(session.STATEMENT_TIMEOUT_S),
            "client_min_messages": "warning",
            "dp_agg.epsilon": "1"}

CATALOG_SQL = r"""
SELECT p.oid::regprocedure::text, p.oid::regproc::text, p.prokind, p.provolatile,
       p.prorettype::regtype::text,
       coalesce(array_to_string(ARRAY(SELECT format_type(t, NULL)
                                       FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY u(t, o)
                                       ORDER BY o), ';'), ''),
       coalesce(array_to_string(ARRAY(SELECT coalesce(nm, '')
                                       FROM unnest(p.proargnames, p.proargmodes) WITH ORDINALITY u(nm, md, o)
                                       WHERE md IS NULL OR md IN ('i', 'b', 'v') ORDER BY o), ';'), '')
FROM pg_proc p
WHERE p.pronamespace = 'dp_agg'::regnamespace
   OR p.oid IN (SELECT objid FROM pg_depend
                WHERE classid = 'pg_proc'::regclass AND refclassid = 'pg_extension'::regclass
                  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'dp_agg'))
ORDER BY 1
"""


class Target:
    """One function or aggregate signature and the statements that call it."""

    def __init__(self, row):
        self.signature, self.name, self.kind, self.volatility, self.rettype = row[:5]
        self.types = row[5].split(";") if row[5] else []
        names = row[6].split(";") if row[6] else []
        self.argnames = (names + [""] * len(self.types))[:len(self.types)]
        self.skip = None
        self.statements = []
        self.failures = []
        self.calls = 0
        self.cancel_tests = 0
        self.slowest = 0.0

    @property
    def phase(self):
        """Calculators first, aggregates next, volatile functions last."""
        if self.kind == "a":
            return 1
        return 2 if self.volatility == "v" else 0


# the error-bar functions of the catalog (set by main), applied to the
# first ERROR_BAR_CALLS calls of every public aggregate
ERROR_BARS = []
ERROR_BAR_CALLS = 40
ERROR_BAR_FUNCTIONS = ("dp_interval_low", "dp_interval_high", "dp_noise_scale",
                       "dp_lower_bound", "dp_upper_bound")


def build(target):
    if target.rettype == "tsm_handler":
        _build_tablesample(target)
    elif "internal" in target.types or target.rettype == "internal":
        target.skip = "not callable from SQL (internal argument or result)"
    elif target.kind == "a":
        _build_aggregate(target)
    elif target.kind == "f":
        _build_function(target)
    else:
        target.skip = "kind %s" % target.kind


def _combos(types, names):
    full = [values.full(t) for t in types]
    pairs = [values.pairs(t) for t in types]
    base = [values.base(n, t) for n, t in zip(names, types)]
    return cover.combinations(full, pairs, base)


def _build_function(target):
    for args in _combos(target.types, target.argnames):
        call = "%s(%s)" % (target.name, ", ".join(args))
        if target.rettype == "record":
            target.statements.append("SELECT * FROM %s" % call)
        else:
            target.statements.append("SELECT %s" % call)


def _build_tablesample(target):
    short = target.name.split(".")[-1]
    for v in values.full("double precision"):
        target.statements.append("SELECT count(*) FROM fz.t TABLESAMPLE %s (%s)" % (short, v))
        target.statements.append("SELECT count(*) FROM fz.t TABLESAMPLE %s (%s) REPEATABLE (0)"
                                 % (short, v))
        target.statements.append("SELECT dp_count(*, 1) FROM fz.t TABLESAMPLE %s (%s)" % (short, v))


def _build_aggregate(target):
    if not target.types:
        for table in ("fz.t", "fz.empty"):
            target.statements.append("SELECT %s(*) FROM %s" % (target.name, table))
        return
    vtype = target.types[0]
    columns = list(values.COLUMNS.values()) if vtype == "anyelement" \
        else [values.COLUMNS.get(vtype, "NULL::%s" % vtype)]
    rest = target.types[1:]
    names = [""] * len(rest)
    # a quantile's fraction(s) come before the bounds: dp_percentile(x, p, lower, upper ...)
    if "percentile" in target.name and rest and rest[0] in ("double precision", "double precision[]"):
        names[0] = "p"
    b = 1 if names[:1] == ["p"] else 0
    if vtype in values.AGG_BOUNDS and len(rest) >= b + 2:
        names[b:b + 2] = ["lower", "upper"]
    extra = ["epsilon", "delta"]
    for j in range(len(rest)):
        if names[j] == "":
            names[j] = extra.pop(0) if extra else ""
    full = [columns] + [values.full(t) for t in rest]
    pairs = [columns] + [values.pairs(t) for t in rest]
    base = [columns[0]]
    for n, t in zip(names, rest):
        if n == "lower":
            base.append(values.AGG_BOUNDS[vtype][0])
        elif n == "upper":
            base.append(values.AGG_BOUNDS[vtype][1])
        elif n == "p":
            base.append(values.P_BASE[t])
        else:
            base.append(values.base(n, t))
    combos = cover.combinations(full, pairs, base)
    for args in combos:
        target.statements.append("SELECT %s(%s) FROM fz.t" % (target.name, ", ".join(args)))
    target.statements.append("SELECT %s(%s) FROM fz.empty" % (target.name, ", ".join(base)))
    # the error bars of a public aggregate's release, in the same statement
    if ERROR_BARS and not target.name.startswith("dp_agg."):
        for args in combos[:ERROR_BAR_CALLS]:
            call = "%s(%s)" % (target.name, ", ".join(args))
            target.statements.append("SELECT %s FROM fz.t" % ", ".join("%s(%s)" % (f, call) for f in ERROR_BARS))
            target.statements.append("SELECT %s FROM (SELECT %s AS v FROM fz.t) q"
                                     % (", ".join("%s(v)" % f for f in ERROR_BARS), call))
        target.statements.append("SELECT %s FROM fz.empty"
                                 % ", ".join("%s(%s(%s))" % (f, target.name, ", ".join(base))
                                             for f in ERROR_BARS))


# ---------- judging outcomes ----------

def judge(outcome):
    """None if the outcome is acceptable, else what is wrong."""
    if outcome.status == "OK":
        return None
    if outcome.status in ("HANG", "LOST"):
        return outcome.message
    st, msg = outcome.sqlstate, outcome.message
    if st == "57014":
        return "ran longer than statement_timeout (%s)" % msg
    if st.startswith("XX") or st == "":
        return "internal error %s: %s" % (st or "(no SQLSTATE)", msg)
    if msg.endswith("."):
        return "message ends with a period: %s" % msg
    if re.match(r"^[A-Z][a-z]", msg):
        return "message is not lower-case: %s" % msg
    return None


class Harness:
    def __init__(self):
        self.admin = session.Admin()
        self.session = None
        self.restarts = 0

    def open(self):
        self.session = session.Session(DATABASE, SETTINGS)

    def reopen_after(self, outcome):
        """After a hang or a lost connection: end the backend, wait for the
        server, open a new session.  Returns a description."""
        what = outcome.message
        pid = self.session.pid
        if outcome.status == "HANG":
            how = self.admin.end_backend(pid)
            what += "; statement_timeout ignored, backend %s" % how
            if "killed" in how:
                self.restarts += 1
        elif not self.admin.wait_recovery():
            raise RuntimeError("the server did not recover")
        self.session.close()
        self.open()
        return what

    def run_target(self, target):
        hangs = 0
        for n, stmt in enumerate(target.statements):
            if hangs >= MAX_HANGS:
                target.failures.append(("(the remaining %d calls)" % (len(target.statements) - n),
                                        "not run: the function already hung"))
                break
            try:
                out = self.session.call(stmt)
            except (RuntimeError, EOFError, TimeoutError, subprocess.TimeoutExpired) as e:
                out = session.Outcome("LOST", message="harness: %s: %s" % (type(e).__name__, e))
            target.calls += 1
            if out.status in ("HANG", "LOST"):
                hangs += 1
                out.message = self.reopen_after(out)
            problem = judge(out)
            if problem:
                target.failures.append((stmt, problem))
            seconds = out.seconds if out.seconds is not None else session.HANG_AFTER
            target.slowest = max(target.slowest, seconds)
            # a call that ignored statement_timeout ignores cancel too
            # (the same interrupt): re-running it would only hang again
            if out.status not in ("HANG", "LOST") and seconds > CANCEL_TEST_AFTER:
                target.cancel_tests += 1
                try:
                    problem, restarted = self.cancel_test(stmt)
                except (RuntimeError, EOFError, TimeoutError, subprocess.TimeoutExpired) as e:
                    problem = "harness: %s: %s" % (type(e).__name__, e)
                    restarted = not self.admin.alive()
                    if restarted and not self.admin.wait_recovery():
                        raise RuntimeError("the server did not recover")
                if problem:
                    target.failures.append((stmt, "cancel: " + problem))
                if restarted:       # the restart ended our session too
                    hangs += 1
                    self.session.close()
                    self.open()

    def cancel_test(self, stmt):
        """Run stmt in a second session, cancel it after CANCEL_DELAY: it must
        end with 57014 within CANCEL_LIMIT.  None if so (or if the call
        finished before the cancel), else what went wrong; and whether the
        harness had to restart the cluster."""
        s = session.Session(DATABASE, dict(SETTINGS, statement_timeout="10s"),
                            appname="dp_fuzz_cancel")
        try:
            t0 = s.start(stmt)
            time.sleep(max(0.0, CANCEL_DELAY - (time.time() - t0)))
            state = self.admin.query("SELECT state, pg_cancel_backend(pid) FROM pg_stat_activity "
                                     "WHERE pid = %d" % s.pid).split("|")[0]
            end, dt = s.wait_answer(CANCEL_LIMIT)
            if end is None:
                how = self.admin.end_backend(s.pid)
                restarted = "killed" in how
                self.restarts += restarted
                return ("still running %.1f s after pg_cancel_backend; backend %s" % (dt, how),
                        restarted)
            if end[0] == "ERR" and len(end) > 1 and end[1] == "57014":
                return None, False
            if state != "active" or dt <= CANCEL_RACE:
                return None, False      # it had finished before the cancel
            return ("ended with %s %.2f s after pg_cancel_backend, not 57014" % (" ".join(end), dt),
                    False)
        finally:
            s.close()


def log_crashes(path, offset, killed):
    """Lines of the server log after offset reporting a backend that died
    of a signal (or an abnormal exit), except those the harness killed."""
    if not path or not os.path.exists(path):
        return None
    with open(path, errors="replace") as f:
        f.seek(offset)
        text = f.read()
    bad = []
    for line in text.splitlines():
        m = re.search(r"\(PID (\d+)\) (was terminated by signal|exited with exit code)", line)
        if m and int(m.group(1)) not in killed:
            bad.append(line.strip())
    return bad


def server_log():
    path = os.environ.get("DP_FUZZ_SERVER_LOG")
    if path:
        return path
    host = os.environ.get("PGHOST", "")
    if host.startswith("/") and os.path.exists(os.path.join(host, "server.log")):
        return os.path.join(host, "server.log")
    return None


def setup(admin):
    admin.query("DROP DATABASE IF EXISTS %s WITH (FORCE)" % DATABASE)
    admin.query("CREATE DATABASE %s" % DATABASE)
    admin.query("DO $$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '%s') "
                "THEN CREATE ROLE %s NOLOGIN; END IF; END$$" % (values.OTHER_ROLE, values.OTHER_ROLE))
    admin.query("CREATE EXTENSION dp_agg", database=DATABASE)
    for stmt in values.TABLE_SQL.split(";"):
        if stmt.strip():
            admin.query(stmt, database=DATABASE)
    give_budget(admin)


def give_budget(admin):
    """A budget the aggregates cannot exhaust (epsilons up to 1e300 spent)."""
    admin.query("SELECT dp_agg.set_budget(current_user::regrole, 1e308, 0.999999); "
                "SELECT dp_agg.reset_budget(current_user::regrole)", database=DATABASE)


def teardown(admin):
    admin.query("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = '%s' AND pid <> pg_backend_pid()" % DATABASE)
    admin.query("DROP DATABASE IF EXISTS %s WITH (FORCE)" % DATABASE)
    admin.query("DROP ROLE IF EXISTS %s" % values.OTHER_ROLE)


def report(target):
    label = target.signature
    if target.skip:
        return None
    info = "%d calls, slowest %.2fs, %d cancel tests" % (target.calls, target.slowest,
                                                          target.cancel_tests)
    if not target.failures:
        print("PASS %s: %s" % (label, info))
        return True
    print("FAIL %s: %d of %s" % (label, len(target.failures), info))
    for stmt, problem in target.failures[:MAX_REPORTED]:
        print("    %s\n        -> %s" % (stmt[:300], problem))
    if len(target.failures) > MAX_REPORTED:
        print("    ... and %d more" % (len(target.failures) - MAX_REPORTED))
    return False


def main(argv):
    patterns = [a for a in argv if not a.startswith("--")]
    t0 = time.time()
    h = Harness()
    logpath = server_log()
    offset = os.path.getsize(logpath) if logpath else 0
    passed = failed = 0
    targets = []
    try:
        setup(h.admin)
        rows = [line.split("|") for line in h.admin.query(CATALOG_SQL, database=DATABASE).splitlines()]
        targets = [Target(r) for r in rows]
        names = set(t.name for t in targets)
        ERROR_BARS[:] = [f for f in ERROR_BAR_FUNCTIONS if f in names]
        targets = [t for t in targets if not patterns or any(p in t.signature for p in patterns)]
        for t in targets:
            build(t)
        h.open()
        for phase in (0, 1, 2):
            if phase == 1:
                give_budget(h.admin)
            for t in targets:
                if t.phase == phase and not t.skip:
                    h.run_target(t)
                    sys.stdout.flush()
        h.session.close()
        skipped = [t for t in targets if t.skip]
        if skipped:
            print("SKIP %d functions not callable from SQL (internal argument or result): %s"
                  % (len(skipped), ", ".join(sorted(set(t.name for t in skipped)))))
        for t in targets:
            r = report(t)
            if r is True:
                passed += 1
            elif r is False:
                failed += 1
        if not targets:
            print("FAIL selection: no function matches %s" % " ".join(patterns))
            failed += 1
    except Exception as e:          # the harness itself failed: one failure
        print("FAIL harness: %s: %s" % (type(e).__name__, str(e).strip().replace("\n", " | ")))
        failed += 1
    # the server: answers, and its log shows no crash the harness did not cause
    ok = h.admin.wait_recovery()
    crashes = log_crashes(logpath, offset, h.admin.killed)
    if ok and crashes == []:
        passed += 1
        print("PASS server: answers; no backend died of a signal (%d restarts by the harness's SIGKILLs)"
              % h.restarts)
    elif ok and crashes is None:
        passed += 1
        print("PASS server: answers (no server log to check: set DP_FUZZ_SERVER_LOG)")
    else:
        failed += 1
        print("FAIL server: %s" % ("does not answer" if not ok else "; ".join(crashes[:5])))
    try:
        teardown(h.admin)
    except Exception as e:
        print("FAIL teardown: %s" % str(e).strip().replace("\n", " | "))
        failed += 1
    print("# %d calls (%d failing), %d cancel tests, %d cluster restarts by the harness, %.1fs"
          % (sum(t.calls for t in targets), sum(len(t.failures) for t in targets),
             sum(t.cancel_tests for t in targets), h.restarts, time.time() - t0))
    print("fuzz: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
