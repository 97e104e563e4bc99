#!/bin/bash
# dp_agg benchmark: what the trap of row expressions costs (doc/guard.md,
# "Protected tables", "Nothing on the row path can fail or report").  Not a
# pass/fail test (it prints its verdict).
#
#   test/bench/rowpath.sh
#   DP_BENCH_ROWS=200000 DP_BENCH_RUNS=5 test/bench/rowpath.sh   # smoke test
#
# The same DP statement over a protected table, with integer arithmetic and
# date_trunc in WHERE and GROUP BY, run by the table's owner (trusted: its
# expressions run as PostgreSQL evaluates them) and by a role with a grant
# (untrusted: every call that can fail goes through the trap, the settings
# are checked and forced), on one connection with SET ROLE, alternating
# (trusted, untrusted, untrusted, trusted, ...) after one unmeasured run of
# each.  The same aggregate, PostgreSQL's native count, by the owner, in the
# same run: the cost of DP aggregation itself.  Two times per statement:
# psql's \timing (wall clock), and the backend's CPU time, read from
# /proc/<pid>/schedstat before and after the statement (nanoseconds on a
# CPU: far less disturbed by the other processes of a shared machine).
# Verdict: untrusted / trusted, ratio of medians, within 1.10 for both.
#
# Environment:
#   DP_BENCH_ROWS   rows in the table (10000000)
#   DP_BENCH_RUNS   measured runs of each statement (11)
#   DP_BENCH_JIT    jit setting of the session (on, the default of PostgreSQL)
#   and those of bench_lib.sh: PGHOST/PGPORT (use that cluster instead of a
#   throw-away one), DP_BENCH_PORT, DP_BENCH_SHARED_BUFFERS, DP_BENCH_SKIP_BUILD
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib.sh"
. "$top/test/bench/bench_lib.sh"

rows=${DP_BENCH_ROWS:-10000000}
runs=${DP_BENCH_RUNS:-11}
jit=${DP_BENCH_JIT:-on}

trap dp_bench_cleanup EXIT
dp_bench_cluster "$top"
dp_bench_role

dp_log "creating dp_bench_rowpath with $rows rows"
"$DP_PSQL" -X -q -v ON_ERROR_STOP=1 -v rows="$rows" <<'SQL'
SET client_min_messages = warning;
SELECT NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'dp_bench_owner') AS missing \gset
\if :missing
CREATE ROLE dp_bench_owner;
\endif
SELECT dp_agg.set_budget('dp_bench_owner', 1e15, 0.5) \g /dev/null
DROP TABLE IF EXISTS dp_bench_rowpath;
CREATE TABLE dp_bench_rowpath (id bigint NOT NULL, age integer NOT NULL, visit timestamp NOT NULL);
INSERT INTO dp_bench_rowpath
SELECT i, (i * 7919) % 100, timestamp '2000-01-01' + ((i * 104729) % 9000) * interval '1 day'
FROM generate_series(1::bigint, :rows) i;
ALTER TABLE dp_bench_rowpath OWNER TO dp_bench_owner;
VACUUM (FREEZE, ANALYZE) dp_bench_rowpath;
SELECT dp_agg.protect('dp_bench_rowpath') \g /dev/null
SELECT dp_agg.grant_access('dp_bench_rowpath', 'dp_bench') \g /dev/null
CHECKPOINT;
SQL

# the statement: arithmetic and date_trunc in WHERE and GROUP BY
statement="SELECT date_trunc('month', visit) AS month, age / 10 * 10 AS decade,
 dp_count(id, 1), dp_sum(age, 0, 100, 1) FROM dp_bench_rowpath
 WHERE age + 1 > 30 AND date_trunc('month', visit) >= '2001-01-01' GROUP BY 1, 2"
native="SELECT date_trunc('month', visit) AS month, age / 10 * 10 AS decade,
 count(id), sum(age) FROM dp_bench_rowpath
 WHERE age + 1 > 30 AND date_trunc('month', visit) >= '2001-01-01' GROUP BY 1, 2"
python3 - "$runs" "$statement" "$native" "$jit" <<'PY'
import re, statistics, subprocess, sys, os

runs, statement, native, jit = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
psql = os.environ.get("DP_PSQL", "psql")
script = ["SET max_parallel_workers_per_gather = 0;", "SET jit = %s;" % jit,
          "SET dp_agg.group_keys = private;",
          "SET dp_agg.selection_epsilon = 1;", "SET dp_agg.selection_delta = 1e-6;",
          "SELECT pg_backend_pid() AS pid \\gset", "\\setenv DP_PID :pid",
          "\\o /dev/null", "\\timing on"]
order = []
def add(label, role, sql):
    script.append("SET ROLE %s;" % role)
    script.append("\\! echo cpu $(cut -d' ' -f1 /proc/$DP_PID/schedstat)")
    script.append(sql + ";")
    script.append("\\! echo cpu $(cut -d' ' -f1 /proc/$DP_PID/schedstat)")
    order.append(label)
add("warm trusted", "dp_bench_owner", statement)
add("warm untrusted", "dp_bench", statement)
add("warm native", "dp_bench_owner", native)
for i in range(runs):
    trio = [("trusted", "dp_bench_owner", statement), ("untrusted", "dp_bench", statement),
            ("native", "dp_bench_owner", native)]
    if i % 2:
        trio[0], trio[1] = trio[1], trio[0]
    for label, role, sql in trio:
        add(label, role, sql)
run = subprocess.run([psql, "-X", "-q", "-v", "ON_ERROR_STOP=1"], input="\n".join(script),
                     capture_output=True, text=True, check=True)
times = [float(t) for t in re.findall(r"^Time: ([0-9.]+) ms", run.stdout, re.M)]
cpus = [int(c) for c in re.findall(r"^cpu ([0-9]+)$", run.stdout, re.M)]
# each measured statement follows its timed SET ROLE
assert len(times) == 2 * len(order), (len(times), len(order))
assert len(cpus) == 2 * len(order), (len(cpus), len(order))
times = times[1::2]
cpu = [(cpus[2 * i + 1] - cpus[2 * i]) / 1e6 for i in range(len(order))]
by, by_cpu = {}, {}
for label, t, c in zip(order, times, cpu):
    by.setdefault(label, []).append(t)
    by_cpu.setdefault(label, []).append(c)
med = {k: statistics.median(v) for k, v in by.items()}
med_cpu = {k: statistics.median(v) for k, v in by_cpu.items()}
print("jit = %s, %d runs each" % (jit, runs))
print("| statement | median ms (wall) | median ms (backend CPU) |\n|---|---|---|")
for k in ["trusted", "untrusted", "native"]:
    print("| %s | %.1f | %.1f |" % (k, med[k], med_cpu[k]))
print()
for what, m in (("wall clock", med), ("backend CPU", med_cpu)):
    ratio = m["untrusted"] / m["trusted"]
    print("untrusted / trusted, %s: %.3f (%s: within 1.10); trusted / native: %.3f"
          % (what, ratio, "PASS" if ratio <= 1.10 else "FAIL", m["trusted"] / m["native"]))
PY

"$DP_PSQL" -X -q -c "DROP TABLE dp_bench_rowpath"
echo
dp_bench_machine "$top"
