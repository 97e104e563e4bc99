#!/bin/bash
# dp_agg benchmark: everyday statement shapes, a lookup join with GROUP BY
# and a sample of privacy units.  Not a pass/fail test (it prints its
# verdict).
#
#   test/bench/shapes.sh
#   DP_BENCH_ROWS=1000000 DP_BENCH_UNITS=100000 DP_BENCH_RUNS=3 test/bench/shapes.sh  # smoke
#
# Table dp_bench_shapes: DP_BENCH_ROWS rows (10,000,000), unit u uniform
# over DP_BENCH_UNITS units (1,000,000), dept_id over 1,000 departments, g
# over 1,000 groups; dp_bench_shapes_u the same rows with privacy unit u
# (max_groups_contributed 1); lookup table dp_bench_depts (1,000 rows,
# primary key dept_id).  In one session, alternating, after one unmeasured
# run of each pair:
#
#   lookup join (rows):  SELECT d.name, count(*)    FROM t JOIN dp_bench_depts d USING (dept_id) GROUP BY d.name
#                   vs   SELECT d.name, dp_count(*) FROM t JOIN dp_bench_depts d USING (dept_id) GROUP BY d.name
#   lookup join (units): the native per-unit aggregation
#                        SELECT name, sum(c) FROM (SELECT d.name, u, count(*) c FROM t_u JOIN ... GROUP BY d.name, u) s GROUP BY name
#                   vs   SELECT d.name, dp_count(*) FROM t_u JOIN dp_bench_depts d USING (dept_id) GROUP BY d.name
#   sample of units, 10%, with and without GROUP BY g: the DP statement
#                        ... FROM t_u TABLESAMPLE dp_agg.secure_bernoulli (10) ...
#                   vs   the native per-unit aggregation over TABLESAMPLE BERNOULLI (10) (rows sampled),
#                   and  the native per-unit aggregation over a sample of units by a hash
#                        (WHERE (hashint4extended(u, 7) & 4294967295) < 429496730: the same
#                        work of reading every row and keeping whole units)
#
# Serial (max_parallel_workers_per_gather = 0) and parallel (2).  Times are
# psql's \timing (parse, plan, checks, rewrite, execute, the charge); the
# ratio is median dp / median native.  Serial cells also give the ratio of
# the backend's CPU time (/proc/<pid>/schedstat before and after each
# statement), which the other processes of a shared machine disturb far
# less than the wall clock.  Targets: the lookup join with GROUP
# BY (rows) within 1.15; the sample of units within 1.2 of the native
# sampled aggregate.  Group keys are public (dp_bench_role): the DP
# statements are timed without private selection, as the native ones.
#
# Environment: DP_BENCH_ROWS, DP_BENCH_UNITS, DP_BENCH_RUNS (5), and those
# of bench_lib.sh (PGHOST/PGPORT, DP_BENCH_PORT, DP_BENCH_SHARED_BUFFERS,
# DP_BENCH_SKIP_BUILD); DP_BENCH_ONLY, a regular expression of the labels to run.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib.sh"
. "$top/test/bench/bench_lib.sh"

rows=${DP_BENCH_ROWS:-10000000}
units=${DP_BENCH_UNITS:-1000000}
runs=${DP_BENCH_RUNS:-5}

trap dp_bench_cleanup EXIT
dp_bench_cluster "$top"
dp_bench_role

dp_log "creating dp_bench_shapes: $rows rows, $units units, 1,000 departments and groups"
"$DP_PSQL" -X -q -v ON_ERROR_STOP=1 -v rows="$rows" -v units="$units" <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS dp_bench_shapes, dp_bench_shapes_u, dp_bench_depts;
CREATE TABLE dp_bench_depts (dept_id integer PRIMARY KEY, name text NOT NULL, region text NOT NULL);
INSERT INTO dp_bench_depts SELECT k, 'department ' || k, 'region ' || (k % 10) FROM generate_series(0, 999) k;
CREATE TABLE dp_bench_shapes (u integer NOT NULL, dept_id integer NOT NULL, g integer NOT NULL);
INSERT INTO dp_bench_shapes
SELECT (hashint8(i) & 2147483647) % :units, (hashint8(-i) & 2147483647) % 1000,
       (hashint8(i + 7) & 2147483647) % 1000
FROM generate_series(1::bigint, :rows) i;
CREATE TABLE dp_bench_shapes_u AS SELECT * FROM dp_bench_shapes;
VACUUM (FREEZE, ANALYZE) dp_bench_shapes, dp_bench_shapes_u, dp_bench_depts;
SELECT dp_agg.set_privacy_unit('dp_bench_shapes_u', 'u') \g /dev/null
GRANT SELECT ON dp_bench_shapes, dp_bench_shapes_u, dp_bench_depts TO dp_bench;
CHECKPOINT;
SQL

python3 - "$runs" <<'PY'
import os, re, statistics, subprocess, sys

runs = int(sys.argv[1])
psql = os.environ.get("DP_PSQL", "psql")
only = os.environ.get("DP_BENCH_ONLY", "")
T, TU, D = "dp_bench_shapes", "dp_bench_shapes_u", "dp_bench_depts"
HASH = "(hashint4extended(u, 7) & 4294967295) < 429496730"
cases = [
    # label, native, dp, target
    ("lookup join, GROUP BY name (rows)",
     "SELECT d.name, count(*) FROM %s JOIN %s d USING (dept_id) GROUP BY d.name" % (T, D),
     "SELECT d.name, dp_count(*) FROM %s JOIN %s d USING (dept_id) GROUP BY d.name" % (T, D), 1.15),
    ("lookup join, GROUP BY name (units)",
     "SELECT name, sum(c) FROM (SELECT d.name, u, count(*) c FROM %s JOIN %s d USING (dept_id) "
     "GROUP BY d.name, u) s GROUP BY name" % (TU, D),
     "SELECT d.name, dp_count(*) FROM %s JOIN %s d USING (dept_id) GROUP BY d.name" % (TU, D), None),
    ("sample of units 10%, GROUP BY g, vs BERNOULLI rows",
     "SELECT g, sum(c) FROM (SELECT g, u, count(*) c FROM %s TABLESAMPLE BERNOULLI (10) "
     "GROUP BY g, u) s GROUP BY g" % TU,
     "SELECT g, dp_count(*) FROM %s TABLESAMPLE dp_agg.secure_bernoulli (10) GROUP BY g" % TU, 1.2),
    ("sample of units 10%, GROUP BY g, vs hash of units",
     "SELECT g, sum(c) FROM (SELECT g, u, count(*) c FROM %s WHERE %s GROUP BY g, u) s GROUP BY g" % (TU, HASH),
     "SELECT g, dp_count(*) FROM %s TABLESAMPLE dp_agg.secure_bernoulli (10) GROUP BY g" % TU, 1.2),
    ("sample of units 10%, no GROUP BY, vs BERNOULLI rows",
     "SELECT sum(c) FROM (SELECT u, count(*) c FROM %s TABLESAMPLE BERNOULLI (10) GROUP BY u) s" % TU,
     "SELECT dp_count(*) FROM %s TABLESAMPLE dp_agg.secure_bernoulli (10)" % TU, 1.2),
    ("sample of units 10%, no GROUP BY, vs hash of units",
     "SELECT sum(c) FROM (SELECT u, count(*) c FROM %s WHERE %s GROUP BY u) s" % (TU, HASH),
     "SELECT dp_count(*) FROM %s TABLESAMPLE dp_agg.secure_bernoulli (10)" % TU, 1.2),
]
print("| statement | parallel | native (ms) | dp_agg (ms) | dp / native | dp / native, backend CPU | target |")
print("|---|---|---:|---:|---:|---:|---:|")
verdicts = []
for workers in (0, 2):
    for label, native, dp, target in cases:
        if only and not re.search(only, "%d workers, %s" % (workers, label)):
            continue
        script = ["SET ROLE dp_bench;", "SET dp_agg.epsilon = 1;", "SET work_mem = '1GB';",
                  "SET dp_agg.group_keys = 'public';",
                  "SET max_parallel_workers_per_gather = %d;" % workers,
                  "SELECT pg_backend_pid() AS pid \\gset", "\\setenv DP_PID :pid", "\\timing on"]
        order = []
        cpu_mark = "\\! echo cpu $(cut -d' ' -f1 /proc/$DP_PID/schedstat)"
        for i in range(runs + 1):
            pair = [("native", native), ("dp", dp)] if i % 2 == 0 else [("dp", dp), ("native", native)]
            for kind, sql in pair:
                script.append(cpu_mark)
                script.append(sql + " \\g /dev/null")
                script.append(cpu_mark)
                order.append((i, kind))
        res = subprocess.run([psql, "-X", "-q", "-At"], input="\n".join(script),
                             capture_output=True, text=True)
        if res.returncode != 0 or "ERROR" in res.stderr:
            sys.exit(res.stderr)
        times = [float(t) for t in re.findall(r"^Time: ([0-9.]+) ms", res.stdout, re.M)]
        cpus = [int(c) for c in re.findall(r"^cpu ([0-9]+)$", res.stdout, re.M)]
        assert len(times) == len(order), (len(times), len(order))
        assert len(cpus) == 2 * len(order), (len(cpus), len(order))
        by = {"native": [], "dp": []}
        by_cpu = {"native": [], "dp": []}
        for k, ((i, kind), t) in enumerate(zip(order, times)):
            if i > 0:           # the first pair warms up
                by[kind].append(t)
                by_cpu[kind].append((cpus[2 * k + 1] - cpus[2 * k]) / 1e6)
        n, d = statistics.median(by["native"]), statistics.median(by["dp"])
        ratio = d / n
        # the backend's CPU time (/proc/<pid>/schedstat): serial plans only,
        # where the backend does all the work; far less disturbed than the
        # wall clock by the other processes of a shared machine
        cpu_ratio = None
        if workers == 0:
            cpu_ratio = statistics.median(by_cpu["dp"]) / statistics.median(by_cpu["native"])
        if target is not None:
            verdicts.append((label, workers, ratio, cpu_ratio, target))
        print("| %s | %d workers | %.1f | %.1f | %.2f | %s | %s |"
              % (label, workers, n, d, ratio, "%.2f" % cpu_ratio if cpu_ratio else "-",
                 "%.2f" % target if target else "-"))
        print("raw %s, %d workers: native %s; dp %s" % (label, workers,
              " ".join("%.0f" % t for t in by["native"]), " ".join("%.0f" % t for t in by["dp"])),
              file=sys.stderr)
print()
for label, workers, ratio, cpu_ratio, target in verdicts:
    print("%s, %d workers: %.2f (%s: at most %.2f)%s"
          % (label, workers, ratio, "PASS" if ratio <= target else "FAIL", target,
             "; backend CPU %.2f (%s)" % (cpu_ratio, "PASS" if cpu_ratio <= target else "FAIL")
             if cpu_ratio else ""))
PY

"$DP_PSQL" -X -q -c "DROP TABLE dp_bench_shapes, dp_bench_shapes_u, dp_bench_depts"
echo
dp_bench_machine "$top"
