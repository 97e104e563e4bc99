#!/bin/bash
# dp_agg benchmark: what protection costs, and what a statement's duration
# tells.  Not a pass/fail test (it prints its verdict).
#
#   test/bench/protect.sh
#   DP_BENCH_ROWS=200000 DP_BENCH_RUNS=5 test/bench/protect.sh   # smoke test
#
# 1. The cost of protection.  The same DP statement over a protected table,
#    run by its owner (trusted) and by a role with a grant and no SELECT
#    (untrusted: the protection checks run, once per statement), on one
#    connection with SET ROLE, alternating (trusted, untrusted, untrusted,
#    trusted, ...) after one unmeasured run of each.  Two times: psql's
#    \timing (parse, plan, the checks, execute, the charge: wall clock), and
#    the backend's CPU time (from /proc/<pid>/schedstat before and after the
#    statement: the checks are CPU work in the backend, and CPU time is far
#    less disturbed by other processes on a shared machine; log_executor_stats
#    would report it too, but statements over protected relations refuse it).
#    Verdict: the median untrusted time within 1.05 times the median trusted
#    one, for both (doc/guard.md,
#    "Protected tables").
# 2. What remains: the untrusted DP statement with a WHERE that passes 0%,
#    50% and 100% of the rows (a sequential scan reads them all every time):
#    the difference is what the duration says about how many rows matched,
#    in nanoseconds per matching row.
#
# Environment:
#   DP_BENCH_ROWS   rows in the table (10000000)
#   DP_BENCH_RUNS   measured runs of each statement (11)
#   and those of bench_lib.sh: PGHOST/PGPORT (use that cluster instead of a
#   throw-away one), DP_BENCH_PORT, DP_BENCH_SHARED_BUFFERS, DP_BENCH_SKIP_BUILD
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib.sh"
. "$top/test/bench/bench_lib.sh"

rows=${DP_BENCH_ROWS:-10000000}
runs=${DP_BENCH_RUNS:-11}

trap dp_bench_cleanup EXIT
dp_bench_cluster "$top"
dp_bench_role

dp_log "creating dp_bench_protected with $rows rows"
"$DP_PSQL" -X -q -v ON_ERROR_STOP=1 -v rows="$rows" <<'SQL'
SET client_min_messages = warning;
SELECT NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'dp_bench_owner') AS missing \gset
\if :missing
CREATE ROLE dp_bench_owner;
\endif
SELECT dp_agg.set_budget('dp_bench_owner', 1e15, 0.5) \g /dev/null
DROP TABLE IF EXISTS dp_bench_protected;
CREATE TABLE dp_bench_protected (id bigint NOT NULL, age integer NOT NULL);
INSERT INTO dp_bench_protected SELECT i, (i * 7919) % 100 FROM generate_series(1::bigint, :rows) i;
ALTER TABLE dp_bench_protected OWNER TO dp_bench_owner;
VACUUM (FREEZE, ANALYZE) dp_bench_protected;
SELECT dp_agg.protect('dp_bench_protected') \g /dev/null
SELECT dp_agg.grant_access('dp_bench_protected', 'dp_bench') \g /dev/null
SET max_parallel_workers_per_gather = 0;
CHECKPOINT;
SQL

# one session: the wall clock (\timing) and the backend's CPU time
# (/proc/<pid>/schedstat, before and after) of each measured statement
statement="SELECT dp_count(id, 1), dp_sum(age, 0, 100, 1) FROM dp_bench_protected WHERE age < 50"
python3 - "$runs" "$statement" <<'PY'
import re, statistics, subprocess, sys, os

runs, statement = int(sys.argv[1]), sys.argv[2]
psql = os.environ.get("DP_PSQL", "psql")
script = ["SET max_parallel_workers_per_gather = 0;", "SELECT pg_backend_pid() AS pid \\gset",
          "\\setenv DP_PID :pid", "\\o /dev/null", "\\timing on"]
order = []
def add(label, role, sql):
    script.append("SET ROLE %s;" % role)
    script.append("\\! echo cpu $(cut -d' ' -f1 /proc/$DP_PID/schedstat)")
    script.append(sql + ";")
    script.append("\\! echo cpu $(cut -d' ' -f1 /proc/$DP_PID/schedstat)")
    order.append(label)
# warm-up, not measured
add("warm trusted", "dp_bench_owner", statement)
add("warm untrusted", "dp_bench", statement)
for i in range(runs):
    pair = [("trusted", "dp_bench_owner"), ("untrusted", "dp_bench")]
    if i % 2:
        pair.reverse()
    for label, role in pair:
        add(label, role, statement)
for cut in (0, 50, 100):
    for i in range(runs):
        add("match %d%%" % cut, "dp_bench",
            "SELECT dp_count(id, 1) FROM dp_bench_protected WHERE age < %d" % cut)
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
rows = int(os.environ.get("DP_BENCH_ROWS", "10000000"))
print("| statement | median ms (wall) | median ms (backend CPU) |\n|---|---|---|")
for k in ["trusted", "untrusted", "match 0%", "match 50%", "match 100%"]:
    print("| %s | %.2f | %.2f |" % (k, med[k], med_cpu[k]))
print()
for what, m in (("wall clock", med), ("backend CPU", med_cpu)):
    ratio = m["untrusted"] / m["trusted"]
    print("untrusted / trusted, %s: %.3f (%s: within 1.05)"
          % (what, ratio, "PASS" if ratio <= 1.05 else "FAIL"))
for what, m in (("wall clock", med), ("backend CPU", med_cpu)):
    slope = (m["match 100%"] - m["match 0%"]) * 1e6 / rows
    print("duration per matching row, %s: %.1f ns (%d rows; 0%% to 100%% matching: %.2f ms)"
          % (what, slope, rows, m["match 100%"] - m["match 0%"]))
PY

"$DP_PSQL" -X -q -c "DROP TABLE dp_bench_protected"
echo
dp_bench_machine "$top"
