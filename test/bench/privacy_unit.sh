#!/bin/bash
# dp_agg benchmark: the cost of privacy units.  Not a pass/fail test (it
# prints its verdict).
#
#   test/bench/privacy_unit.sh
#   DP_BENCH_ROWS=1000000 DP_BENCH_UNITS=100000 DP_BENCH_RUNS=3 test/bench/privacy_unit.sh  # smoke
#
# Table t: DP_BENCH_ROWS rows (10,000,000), unit u uniform over
# DP_BENCH_UNITS units (1,000,000), group g over DP_BENCH_GROUPS groups
# (1,000), with privacy unit u (max_groups_contributed 1).  In the same
# session, alternating, after one unmeasured run of each:
#   native:  SELECT g, sum(c) FROM (SELECT g, u, count(*) c FROM t GROUP BY g, u) s GROUP BY g
#   dp:      SELECT g, dp_count(*, ...) FROM t GROUP BY g        (the rewrite; k = 1: fused)
# and the same pair without GROUP BY (native: SELECT sum(c) FROM (SELECT u,
# count(*) c FROM t GROUP BY u) s), and the GROUP BY pair over a partition
# named directly of a copy of t partitioned by hash of u into 4, the unit
# set on the partitioned table (its unit found through the ancestors).
# Serial (max_parallel_workers_per_gather = 0) and parallel (2).  The time is psql's \timing (parse, plan, rewrite,
# execute, the charge).  Verdict: median dp / median native at most 2.
# The DP GROUP BY includes the private selection of its keys (dp_select in
# level 3, counting units; selection epsilon 1, delta 1e-6: every group of
# about 10,000 units is released).
#
# Environment:
#   DP_BENCH_ROWS, DP_BENCH_UNITS, DP_BENCH_GROUPS, DP_BENCH_RUNS (5)
#   and those of bench_lib.sh: PGHOST/PGPORT (use that cluster instead of a
#   throw-away one), DP_BENCH_PORT, DP_BENCH_SHARED_BUFFERS, DP_BENCH_SKIP_BUILD
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib.sh"
. "$top/test/bench/bench_lib.sh"

rows=${DP_BENCH_ROWS:-10000000}
units=${DP_BENCH_UNITS:-1000000}
groups=${DP_BENCH_GROUPS:-1000}
runs=${DP_BENCH_RUNS:-5}

trap dp_bench_cleanup EXIT
dp_bench_cluster "$top"
dp_bench_role

dp_log "creating dp_bench_units: $rows rows, $units units, $groups groups"
"$DP_PSQL" -X -q -v ON_ERROR_STOP=1 -v rows="$rows" -v units="$units" -v groups="$groups" <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS dp_bench_units;
CREATE TABLE dp_bench_units (u integer NOT NULL, g integer NOT NULL);
INSERT INTO dp_bench_units
SELECT (hashint8(i) & 2147483647) % :units, (hashint8(-i) & 2147483647) % :groups
FROM generate_series(1::bigint, :rows) i;
VACUUM (FREEZE, ANALYZE) dp_bench_units;
SELECT dp_agg.set_privacy_unit('dp_bench_units', 'u') \g /dev/null
GRANT SELECT ON dp_bench_units TO dp_bench;
DROP TABLE IF EXISTS dp_bench_units_pt;
CREATE TABLE dp_bench_units_pt (u integer NOT NULL, g integer NOT NULL) PARTITION BY HASH (u);
SELECT format('CREATE TABLE dp_bench_units_pt_%s PARTITION OF dp_bench_units_pt FOR VALUES WITH (MODULUS 4, REMAINDER %s)', i, i)
FROM generate_series(0, 3) i \gexec
INSERT INTO dp_bench_units_pt SELECT * FROM dp_bench_units;
VACUUM (FREEZE, ANALYZE) dp_bench_units_pt;
SELECT dp_agg.set_privacy_unit('dp_bench_units_pt', 'u') \g /dev/null
GRANT SELECT ON dp_bench_units_pt, dp_bench_units_pt_0 TO dp_bench;
CHECKPOINT;
SQL

python3 - "$runs" <<'PY'
import os, re, statistics, subprocess, sys

runs = int(sys.argv[1])
psql = os.environ.get("DP_PSQL", "psql")
pairs = {
    "1,000 groups": ("SELECT g, sum(c) FROM (SELECT g, u, count(*) c FROM dp_bench_units GROUP BY g, u) s GROUP BY g",
                     "SELECT g, dp_count(*) FROM dp_bench_units GROUP BY g"),
    "no GROUP BY": ("SELECT sum(c) FROM (SELECT u, count(*) c FROM dp_bench_units GROUP BY u) s",
                    "SELECT dp_count(*) FROM dp_bench_units"),
    "a partition, 1,000 groups": (
        "SELECT g, sum(c) FROM (SELECT g, u, count(*) c FROM dp_bench_units_pt_0 GROUP BY g, u) s GROUP BY g",
        "SELECT g, dp_count(*) FROM dp_bench_units_pt_0 GROUP BY g"),
}
print("| statement | parallel | native (ms) | dp_agg (ms) | dp / native |")
print("|---|---|---:|---:|---:|")
worst = 0.0
for workers in (0, 2):
    for label, (native, dp) in pairs.items():
        script = ["SET ROLE dp_bench;", "SET dp_agg.epsilon = 1;", "SET work_mem = '1GB';",
                  "SET dp_agg.group_keys = 'private';", "SET dp_agg.selection_epsilon = 1;",
                  "SET dp_agg.selection_delta = 1e-6;",
                  "SET max_parallel_workers_per_gather = %d;" % workers, "\\timing on"]
        order = []
        for i in range(runs + 1):
            pair = [("native", native), ("dp", dp)] if i % 2 == 0 else [("dp", dp), ("native", native)]
            for kind, sql in pair:
                script.append(sql + " \\g /dev/null")
                order.append((i, kind))
        res = subprocess.run([psql, "-X", "-q", "-At"], input="\n".join(script),
                             capture_output=True, text=True)
        if res.returncode != 0 or "ERROR" in res.stderr:
            sys.exit(res.stderr)
        times = [float(t) for t in re.findall(r"^Time: ([0-9.]+) ms", res.stdout, re.M)]
        assert len(times) == len(order), (len(times), len(order))
        by = {"native": [], "dp": []}
        for (i, kind), t in zip(order, times):
            if i > 0:           # the first pair warms up
                by[kind].append(t)
        n, d = statistics.median(by["native"]), statistics.median(by["dp"])
        worst = max(worst, d / n)
        print("| %s | %d workers | %.1f | %.1f | %.2f |" % (label, workers, n, d, d / n))
        print("raw %s, %d workers: native %s; dp %s" % (label, workers,
              " ".join("%.0f" % t for t in by["native"]), " ".join("%.0f" % t for t in by["dp"])),
              file=sys.stderr)
print()
print("largest dp / native: %.2f (%s: at most 2)" % (worst, "PASS" if worst <= 2 else "FAIL"))
PY

"$DP_PSQL" -X -q -c "DROP TABLE dp_bench_units, dp_bench_units_pt"
echo
dp_bench_machine "$top"
