#!/usr/bin/env python3
"""The neighbour checker of protected relations: nothing an untrusted role
observes of a DP statement may depend on one row (or one unit) of the
protected relation, except the noisy values it releases.

    PGHOST=... PGPORT=... PGUSER=postgres python3 test/neighbour/run.py

Neighbouring databases.  Schemas n0, n1 and n2 hold the same protected
table t (every kind of column: integers, a domain, numeric, floating point,
text with the default and the "C" collation, dates, timestamps, intervals,
booleans, jsonb, arrays) with ordinary rows; n0 also holds the two extreme
rows (the largest and the smallest values of every type, NaN, infinities,
a long text, the first and last dates), n1 all but the first, n2 all but
the second: n1 and n2 are n0's neighbours by one row, the most extreme
one.  Schemas u0 and u1 hold a table tu with a privacy unit: u1 lacks the
unit with the most rows and the extreme values.  The same statement runs
in one session per schema (search_path), as a role with a grant on the
tables and no SELECT.

Statements (gen.py) are drawn at random from the shapes the guard
accepts: typed expressions over the columns, constants (extremes among
them) and parameters, through everyday functions, operators, casts,
CASE, COALESCE, NULLIF, GREATEST, LEAST, IN lists, LIKE, regular
expressions, subscripts and row comparisons, in WHERE, FILTER, the
arguments of DP aggregates and GROUP BY keys, over the table, a row
source or a sample; run plain, prepared (custom or generic plans, with
extreme parameters, text domains of different collations among them) or
through a cursor read in steps.  Each runs with every setting the role can
change (it is granted SET on the superuser ones) at its most verbose value
(client_min_messages = debug5, trace_sort, log_* ...) and planner settings
that make it sort, spill and use parallel workers.

What must be the same.  Each step's outcome (success, or the same
SQLSTATE) and the messages the client receives (notices, warnings, LOG
and DEBUG lines), with numbers masked; and, where two runs on n0 give the
same numbers, the numbers too (a sort's memory in kB must not tell a row
apart).  Object identifiers of the schemas' own tables and the schemas'
names are replaced by placeholders.  A difference is run again twice on
both sides: it fails the check only if it reproduces.

Output: the seed (DP_NEIGHBOUR_SEED reproduces a run), one line per
failing statement with its steps and the difference, counts of outcomes,
and last "neighbour: N passed, M failed", one result per statement.  The
run is time-boxed: DP_NEIGHBOUR_SECONDS (240) or DP_NEIGHBOUR_STATEMENTS.
"""

import os
import queue
import random
import re
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True

import gen  # noqa: E402

DATABASE = os.environ.get("DP_NEIGHBOUR_DB", "dp_neighbour")
SECONDS = float(os.environ.get("DP_NEIGHBOUR_SECONDS", "240"))
MAX_STATEMENTS = int(os.environ.get("DP_NEIGHBOUR_STATEMENTS", "0"))
SEED = int(os.environ.get("DP_NEIGHBOUR_SEED", str(random.SystemRandom().randrange(1 << 31))))
ANALYST = "dp_nb_analyst"
OWNER = "dp_nb_owner"
STEP_TIMEOUT = 60.0
CONFIRMATIONS = 2


def psql_path():
    return shutil.which("psql") or "/usr/lib/postgresql/15/bin/psql"


def admin(sql, database="postgres"):
    proc = subprocess.run([psql_path(), "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", database],
                          input=sql, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip())
    return proc.stdout.strip()


# ---------- the neighbouring databases ----------

ORDINARY = 40


def ordinary_rows():
    rows = []
    for i in range(1, ORDINARY + 1):
        rows.append("(%d, %d, %d, %d, %d, %s, %s, %s, %s, %s, '2024-%02d-%02d', "
                    "'2024-%02d-%02d %02d:%02d:00', '2024-%02d-%02d %02d:00:00+00', '%d days', %s, "
                    "'{\"a\": %d, \"b\": \"n%d\"}', '{%d,%d}')"
                    % (i, i % 7, i * 13, i * 1000, (i % 41) - 20, "%d.5" % (i % 9), "%d.25" % (i * 3),
                       "%d.125" % (i * 7), "'name%d'" % i, "'%s'" % ("abcdefgh"[i % 8] * 2),
                       1 + i % 12, 1 + i % 28, 1 + i % 12, 1 + i % 28, i % 24, i % 60,
                       1 + i % 12, 1 + i % 28, i % 24, i % 30, "true" if i % 3 else "false",
                       i % 5, i, i % 4, i % 6))
    return rows


EXTREME_MAX = ("(1000, 32767, 2147483647, 9223372036854775807, 100, 3.4e38, 'Infinity', 1e131071, "
               "repeat('z', 1900), 'zz', '5874897-12-31', '294276-12-31 23:59:59', "
               "'294276-12-31 23:59:59+00', '178000000 years', true, '{\"a\": \"not a number\"}', "
               "'{2147483647}')")
EXTREME_MIN = ("(1001, -32768, -2147483648, -9223372036854775808, -100, -3.4e38, 'NaN', 'NaN', "
               "'', '', '4713-01-01 BC', '4713-01-01 00:00:00 BC', '-infinity', '-178000000 years', "
               "NULL, '[1, 2]', '{}')")
COLUMNS = ("id int, i2 int2, i4 int4, i8 int8, sm sm, f4 float4, f8 float8, n numeric, tx text, "
           "tc text COLLATE \"C\", d date, ts timestamp, tz timestamptz, iv interval, b boolean, "
           "j jsonb, a int[]")
SCHEMAS = {"n0": [EXTREME_MAX, EXTREME_MIN], "n1": [EXTREME_MIN], "n2": [EXTREME_MAX]}
UNIT_SCHEMAS = {"u0": True, "u1": False}


def unit_rows(extreme_unit):
    rows = []
    for u in range(1, 11):
        for k in range(3):
            i = u * 10 + k
            rows.append("(%d, %d, %d, %d, %d, %d, 1.5, 2.25, 3.125, 'unit%d', 'a', '2024-01-%02d', "
                        "'2024-01-%02d 10:00', '2024-01-%02d 10:00+00', '1 day', true, '{\"a\": 1}', '{1}')"
                        % (u, i, k, i, i, k, u, 1 + u, 1 + u, 1 + u))
    if extreme_unit:
        for k in range(5):
            rows.append("(99, %d, 32767, 2147483647, 9223372036854775807, 100, 3.4e38, 'Infinity', "
                        "1e131071, repeat('z', 1900), 'zz', '5874897-12-31', '294276-12-31 23:59:59', "
                        "'infinity', '178000000 years', NULL, '[1]', '{2147483647}')" % (990 + k))
    return rows


def setup():
    admin("DROP DATABASE IF EXISTS %s WITH (FORCE)" % DATABASE)
    admin("""
DO $$ BEGIN
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = '%(a)s') THEN
    EXECUTE 'DROP OWNED BY %(a)s'; EXECUTE 'DROP ROLE %(a)s'; END IF;
  IF EXISTS (SELECT FROM pg_roles WHERE rolname = '%(o)s') THEN
    EXECUTE 'DROP OWNED BY %(o)s'; EXECUTE 'DROP ROLE %(o)s'; END IF;
END $$;
CREATE ROLE %(o)s;
CREATE ROLE %(a)s LOGIN;
CREATE DATABASE %(d)s;
""" % {"a": ANALYST, "o": OWNER, "d": DATABASE})
    sql = ["SET client_min_messages = warning;",
           "CREATE EXTENSION dp_agg;",
           "CREATE DOMAIN sm AS int CHECK (VALUE BETWEEN -100 AND 100);",
           "CREATE DOMAIN text_c AS text COLLATE \"C\";",
           "CREATE DOMAIN text_posix AS text COLLATE \"POSIX\";",
           "SELECT dp_agg.set_budget('%s', 1e15, 0.5);" % ANALYST]
    sql += ["GRANT SET ON PARAMETER %s TO %s;" % (p, ANALYST) for p in gen.GRANTED]
    for s, extremes in SCHEMAS.items():
        sql += ["CREATE SCHEMA %s;" % s, "GRANT USAGE ON SCHEMA %s TO PUBLIC;" % s,
                "CREATE TABLE %s.t (%s);" % (s, COLUMNS),
                "INSERT INTO %s.t VALUES %s;" % (s, ", ".join(ordinary_rows() + extremes)),
                "ALTER TABLE %s.t OWNER TO %s;" % (s, OWNER),
                "SELECT dp_agg.protect('%s.t');" % s,
                "SELECT dp_agg.grant_access('%s.t', '%s');" % (s, ANALYST)]
    for s, extreme in UNIT_SCHEMAS.items():
        sql += ["CREATE SCHEMA %s;" % s, "GRANT USAGE ON SCHEMA %s TO PUBLIC;" % s,
                "CREATE TABLE %s.tu (unit int, %s);" % (s, COLUMNS),
                "INSERT INTO %s.tu VALUES %s;" % (s, ", ".join(unit_rows(extreme))),
                "ALTER TABLE %s.tu OWNER TO %s;" % (s, OWNER),
                "SELECT dp_agg.protect('%s.tu');" % s,
                "SELECT dp_agg.grant_access('%s.tu', '%s');" % (s, ANALYST),
                "SELECT dp_agg.set_privacy_unit('%s.tu', 'unit', 2);" % s]
    admin("\n".join(sql), DATABASE)


def teardown():
    try:
        admin("DROP DATABASE IF EXISTS %s WITH (FORCE)" % DATABASE)
        admin("DROP OWNED BY %s, %s; DROP ROLE %s, %s" % (ANALYST, OWNER, ANALYST, OWNER))
    except RuntimeError as e:
        print("teardown: %s" % e)


def oid_names(schema):
    """OIDs of the schema's own objects, named: they differ between
    neighbours and must not count as a difference."""
    out = admin("SELECT oid, relname FROM pg_class WHERE relnamespace = '%s'::regnamespace "
                "UNION ALL SELECT reltype, relname || '_type' FROM pg_class "
                "WHERE relnamespace = '%s'::regnamespace AND reltype <> 0 "
                "UNION ALL SELECT t.oid, 'toast' FROM pg_class c JOIN pg_class t ON t.oid = c.reltoastrelid "
                "WHERE c.relnamespace = '%s'::regnamespace" % (schema, schema, schema), DATABASE)
    names = {}
    for line in out.splitlines():
        oid, name = line.split("|", 1)
        names[oid] = name
    return names


# ---------- sessions ----------

PREFIX = re.compile(r"^psql:<stdin>:\d+: ")
MESSAGE = re.compile(r"^(psql:<stdin>:\d+: )?(DEBUG|LOG|INFO|NOTICE|WARNING|ERROR|FATAL|PANIC):  ")


class Session:
    """One psql process as the analyst in one schema."""

    def __init__(self, schema):
        self.schema = schema
        self.oids = oid_names(schema)
        self.seq = 0
        self.start()

    def start(self):
        env = dict(os.environ, PGDATABASE=DATABASE, PGUSER=ANALYST, PGAPPNAME="dp_neighbour")
        self.proc = subprocess.Popen([psql_path(), "-Xq"], stdin=subprocess.PIPE,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, bufsize=1, env=env)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._send("\\o /dev/null\n\\set VERBOSITY default\n\\set SHOW_CONTEXT always\n"
                   "SET statement_timeout = '20s';\n")

    def _read(self):
        for line in self.proc.stderr:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def _send(self, text):
        try:
            self.proc.stdin.write(text)
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()

    def normalize(self, line):
        line = PREFIX.sub("", line)
        line = re.sub(r"\b(n[0-9]|u[0-9])\b", "SCHEMA", line)
        for oid, name in self.oids.items():
            line = re.sub(r"\b%s\b" % oid, "OID(%s)" % name, line)
        return line

    def run(self, settings, steps):
        """Run the steps; a list of (status, messages) per step."""
        self.seq += 1
        s = self.seq
        script = ["\\warn @@S %d" % s, "RESET ALL;", "SET statement_timeout = '20s';",
                  "SET search_path = %s, public;" % self.schema, "SET dp_agg.epsilon = 1;",
                  "SET dp_agg.selection_epsilon = 1;", "SET dp_agg.selection_delta = 1e-10;"]
        script += [x + ";" for x in settings]
        for i, step in enumerate(steps):
            script += ["\\warn @@B %d %d" % (s, i), step + ";", "\\if :ERROR",
                       "\\warn @@E %d %d ERR :SQLSTATE" % (s, i), "\\else",
                       "\\warn @@E %d %d OK" % (s, i), "\\endif"]
        script += ["RESET client_min_messages;", "ROLLBACK;", "DEALLOCATE ALL;", "CLOSE ALL;",
                   "\\warn @@D %d" % s]
        if not self._send("\n".join(script) + "\n"):
            self.restart()
            return [("LOST", [])] * len(steps)
        results = [None] * len(steps)
        current, msgs = None, []
        deadline = time.time() + STEP_TIMEOUT
        while True:
            try:
                line = self.lines.get(timeout=max(0.1, deadline - time.time()))
            except queue.Empty:
                line = "@@TIMEOUT"
            if line is None or line == "@@TIMEOUT":
                self.restart()
                for i in range(len(steps)):
                    if results[i] is None:
                        results[i] = ("LOST" if line is None else "HANG", [])
                return results
            if line == "@@D %d" % s:
                return [r if r is not None else ("NOT RUN", []) for r in results]
            m = re.match(r"^@@B %d (\d+)$" % s, line)
            if m:
                current, msgs = int(m.group(1)), []
                continue
            m = re.match(r"^@@E %d (\d+) (.*)$" % s, line)
            if m:
                results[int(m.group(1))] = (m.group(2), [x for x in msgs if not infrastructure(x)])
                current = None
                continue
            if current is not None:
                # a message is its first line (with psql's prefix) and its
                # DETAIL, HINT, CONTEXT and continuation lines
                if MESSAGE.match(line) or not msgs:
                    msgs.append(self.normalize(line))
                else:
                    msgs[-1] += "\n" + self.normalize(line)

    def restart(self):
        self.close()
        self.start()


# ---------- comparison ----------

def infrastructure(msg):
    """DEBUG lines of a parallel worker's start and end (its transaction,
    its settings, its catalog caches): how many workers a statement gets
    depends on the other sessions, not on the rows."""
    return msg.startswith("DEBUG:") and "parallel worker" in msg

# a number's pattern starts where no digit precedes it: without the
# lookbehind, a message with a long run of digits (numeric's largest value
# has 131,072) costs time quadratic in its length
VOLATILE = [
    (re.compile(r"(?<![0-9.])[0-9.]+ ms\b"), "# ms"),
    (re.compile(r"user: [0-9.]+ s, system: [0-9.]+ s, elapsed: [0-9.]+ s"), "user: # s, system: # s, elapsed: # s"),
    (re.compile(r"!\s.*"), "! ..."),                     # getrusage reports
    (re.compile(r"pgsql_tmp[0-9.]+"), "pgsql_tmpN"),
    (re.compile(r"\bpid \d+"), "pid N"),
    (re.compile(r"xid/subid/cid: \d+/\d+/\d+"), "xid/subid/cid: N"),
    (re.compile(r"(?<![0-9.])[0-9.]+s\b"), "#s"),     # JIT timings
]


def stable(msgs):
    out = []
    for m in msgs:
        for pat, rep in VOLATILE:
            m = pat.sub(rep, m)
        out.append(m)
    return sorted(out)


def masked(msgs):
    # an OID's placeholder is a number too: a count that happens to equal
    # the OID of a schema's object (a page fault count of log_*_stats) was
    # replaced by its name in one session and not in the other
    return sorted(re.sub(r"OID\([^)]*\)|\d+", "#", m) for m in msgs)


def view(results, numbers):
    """What the role observes of a run: outcomes and messages."""
    return [(status, tuple(stable(msgs) if numbers else masked(msgs))) for status, msgs in results]


def differs(a, b, a2):
    """Do runs a (n0) and b (a neighbour) differ?  Numbers count where two
    runs on n0, a and a2, agree on them."""
    if view(a, False) != view(b, False):
        return "outcome or messages"
    if view(a, True) == view(a2, True) and view(a, True) != view(b, True):
        return "numbers in messages"
    return None


def diff_text(a, b):
    out = []
    if len(a) != len(b):
        out.append("    %d steps on n0, %d on the neighbour" % (len(a), len(b)))
    for i, ((sa, ma), (sb, mb)) in enumerate(zip(a, b)):
        if sa != sb:
            out.append("    step %d: %s on n0, %s on the neighbour" % (i + 1, sa, sb))
        ca, cb = Counter(stable(ma)), Counter(stable(mb))
        for m, n in (ca - cb).items():
            out.append("    step %d, only on n0 (%dx): %s" % (i + 1, n, m[:300]))
        for m, n in (cb - ca).items():
            out.append("    step %d, only on the neighbour (%dx): %s" % (i + 1, n, m[:300]))
    if not out:
        # the difference is in what the masks of numbers hide (timings)
        for i, ((sa, ma), (sb, mb)) in enumerate(zip(a, b)):
            ca, cb = Counter(masked(ma)), Counter(masked(mb))
            for m, n in (ca - cb).items():
                out.append("    step %d, only on n0, numbers masked (%dx): %s" % (i + 1, n, m[:300]))
            for m, n in (cb - ca).items():
                out.append("    step %d, only on the neighbour, numbers masked (%dx): %s" % (i + 1, n, m[:300]))
    return "\n".join(out[:12])


def run_all(sessions, settings, steps):
    results = [None] * len(sessions)

    def one(k):
        results[k] = sessions[k].run(settings, steps)
    threads = [threading.Thread(target=one, args=(k,)) for k in range(len(sessions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def confirm(base, other, settings, steps, why):
    """Run base and other again: the difference must reproduce every time,
    base's runs agreeing among themselves and other's too."""
    for _ in range(CONFIRMATIONS):
        a, b = run_all([base, other], settings, steps)
        a2 = base.run(settings, steps)
        if differs(a, b, a2) is None:
            return False
    return True


def main():
    print("neighbour: seed %d (DP_NEIGHBOUR_SEED=%d reproduces this run)" % (SEED, SEED))
    sys.stdout.flush()
    rnd = random.Random(SEED)
    setup()
    families = {
        "rows": [Session("n0"), Session("n0"), Session("n1"), Session("n2")],
        "units": [Session("u0"), Session("u0"), Session("u1")],
    }
    passed = failed = 0
    outcomes = Counter()
    slow = []
    start = time.time()
    try:
        while time.time() - start < SECONDS and (MAX_STATEMENTS == 0 or passed + failed < MAX_STATEMENTS):
            units = rnd.random() < 0.25
            kind, steps = gen.statement(rnd, units)
            settings = gen.settings(rnd)
            sessions = families["units" if units else "rows"]
            t0 = time.time()
            results = run_all(sessions, settings, steps)
            slow.append((time.time() - t0, kind, steps, settings))
            slow = sorted(slow, key=lambda x: -x[0])[:5]
            base, base2 = results[0], results[1]
            last = base[-1][0] if kind != "cursor" else base[1][0]
            outcomes[(kind, "accepted" if all(r[0] == "OK" for r in base) else last)] += 1
            bad = None
            for k in range(2, len(sessions)):
                why = differs(base, results[k], base2)
                if why and confirm(sessions[0], sessions[k], settings, steps, why):
                    bad = (k, why, results[k])
                    break
            if bad is None:
                passed += 1
                continue
            failed += 1
            k, why, other = bad
            print("FAIL statement %d (%s, %s; neighbour %s without its most extreme %s): %s differ"
                  % (passed + failed, kind, "units" if units else "rows", sessions[k].schema,
                     "unit" if units else "row", why))
            print("  settings: %s" % "; ".join(settings))
            for st in steps:
                print("  step: %s" % st)
            print(diff_text(base, other))
            sys.stdout.flush()
    finally:
        for fam in families.values():
            for s in fam:
                s.close()
        teardown()
    total = passed + failed
    print("neighbour: %d statements in %.0f s" % (total, time.time() - start))
    for (kind, what), n in sorted(outcomes.items(), key=lambda x: (-x[1], x[0])):
        print("  %-9s %-9s %d" % (kind, what, n))
    print("slowest statements (all sessions, seconds):")
    for sec, kind, steps, settings in slow:
        print("  %.2f %s: %s" % (sec, kind, " / ".join(steps)[:200]))
    print("neighbour: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
