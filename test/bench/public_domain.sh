#!/bin/bash
# dp_agg benchmark: the cost of public domains of GROUP BY keys.  Not a
# pass/fail test (it prints its verdict).
#
#   test/bench/public_domain.sh
#   DP_BENCH_ROWS=1000000 DP_BENCH_RUNS=3 test/bench/public_domain.sh   # smoke
#
# Table t: DP_BENCH_ROWS rows (10,000,000), an integer g uniform over
# 0 .. DP_BENCH_KEYS - 1 (1,000), its text spelling s ('k' || g), a double
# x uniform in [0, 1).  The public domain has DP_BENCH_KEYS keys,
# 100 .. DP_BENCH_KEYS + 99: a tenth of the rows are outside it (dropped)
# and 100 keys have no row (released as noise).  Each DP statement is timed
# against the native statement that gives every key of the list its
# count: a GROUP BY over an outer join from the key list to the rows.
#
#   key list (VALUES):   SELECT v.k, count(t.g) FROM (VALUES ...) v(k) LEFT JOIN t ON t.g = v.k GROUP BY v.k
#                 dp:    the same with dp_count(*)
#   key list (unnest of text[]), on s: the same with unnest(ARRAY[...])
#   catalog domain:      the native join above;
#                 dp:    SELECT g, dp_count(*) FROM t GROUP BY g   (dp_agg.set_public_domain of the keys)
#   range:               the native join to generate_series(100, DP_BENCH_KEYS + 99);
#                 dp:    SELECT g, dp_count(*) FROM t WHERE g BETWEEN 100 AND ... GROUP BY g
#   histogram:           SELECT b, count(w) FROM generate_series(0, n + 1) b LEFT JOIN
#                          (SELECT width_bucket(x, 0, 1, n) w FROM t) r ON r.w = b GROUP BY b   (n = DP_BENCH_KEYS - 2)
#                 dp:    SELECT width_bucket(x, 0, 1, n), dp_count(*) FROM t GROUP BY 1
#
# In the same session, alternating, after one unmeasured run of each;
# serial (max_parallel_workers_per_gather = 0) and parallel (2).  The time
# is psql's \timing (parse, plan, rewrite, execute, the charge).  Verdict:
# median dp / median native at most 1.2.
#
# Environment:
#   DP_BENCH_ROWS, DP_BENCH_KEYS, DP_BENCH_RUNS (5)
#   and those of bench_lib.sh: PGHOST/PGPORT (use that cluster instead of a
#   throw-away one), DP_BENCH_PORT, DP_BENCH_SHARED_BUFFERS, DP_BENCH_SKIP_BUILD
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib.sh"
. "$top/test/bench/bench_lib.sh"

rows=${DP_BENCH_ROWS:-10000000}
keys=${DP_BENCH_KEYS:-1000}
runs=${DP_BENCH_RUNS:-5}

export DP_PSQL
trap dp_bench_cleanup EXIT
dp_bench_cluster "$top"
dp_bench_role

dp_log "creating dp_bench_domain: $rows rows, $keys keys"
"$DP_PSQL" -X -q -v ON_ERROR_STOP=1 -v rows="$rows" -v keys="$keys" <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS dp_bench_domain;
CREATE TABLE dp_bench_domain (g integer NOT NULL, s text NOT NULL, x double precision NOT NULL);
INSERT INTO dp_bench_domain
SELECT h % :keys, 'k' || (h % :keys), (hashint8(-i) & 2147483647) / 2147483648.0
FROM (SELECT i, hashint8(i) & 2147483647 AS h FROM generate_series(1::bigint, :rows) i) r;
VACUUM (FREEZE, ANALYZE) dp_bench_domain;
GRANT SELECT ON dp_bench_domain TO dp_bench;
SELECT dp_agg.set_public_domain('dp_bench_domain', 'g', array_agg(k ORDER BY k))
FROM generate_series(100, :keys + 99) k \g /dev/null
CHECKPOINT;
SQL

python3 - "$runs" "$keys" <<'PY'
import os, re, statistics, subprocess, sys

runs, keys = int(sys.argv[1]), int(sys.argv[2])
psql = os.environ.get("DP_PSQL", "psql")
lo, hi = 100, keys + 99
values = ", ".join("(%d)" % k for k in range(lo, hi + 1))
texts = "ARRAY[%s]" % ", ".join("'k%d'" % k for k in range(lo, hi + 1))
n = keys - 2
t = "dp_bench_domain"
native_join = "SELECT v.k, count(t.g) FROM (VALUES %s) v(k) LEFT JOIN %s t ON t.g = v.k GROUP BY v.k" % (values, t)
pairs = {
    "key list (VALUES)": (native_join, native_join.replace("count(t.g)", "dp_count(*)")),
    "key list (unnest text[])": (
        "SELECT v.k, count(t.s) FROM unnest(%s) v(k) LEFT JOIN %s t ON t.s = v.k GROUP BY v.k" % (texts, t),
        "SELECT v.k, dp_count(*) FROM unnest(%s) v(k) LEFT JOIN %s t ON t.s = v.k GROUP BY v.k" % (texts, t)),
    "catalog domain": (native_join, "SELECT g, dp_count(*) FROM %s GROUP BY g" % t),
    "range": (
        "SELECT v.k, count(t.g) FROM generate_series(%d, %d) v(k) LEFT JOIN %s t ON t.g = v.k GROUP BY v.k" % (lo, hi, t),
        "SELECT g, dp_count(*) FROM %s WHERE g BETWEEN %d AND %d GROUP BY g" % (t, lo, hi)),
    "histogram": (
        "SELECT b, count(r.w) FROM generate_series(0, %d) b LEFT JOIN "
        "(SELECT width_bucket(x, 0, 1, %d) AS w FROM %s) r ON r.w = b GROUP BY b" % (n + 1, n, t),
        "SELECT width_bucket(x, 0, 1, %d), dp_count(*) FROM %s GROUP BY 1" % (n, t)),
}

# every DP statement releases every key of its domain, without selection
check = ["SET ROLE dp_bench;", "SET dp_agg.epsilon = 1;", "SET dp_agg.group_keys = 'private';"]
for label, (native, dp) in pairs.items():
    check.append("SELECT count(*) FROM (%s) s;" % dp)
    check.append("SELECT detail::text FROM dp_agg.my_ledger ORDER BY id DESC LIMIT 1;")
res = subprocess.run([psql, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"], input="\n".join(check),
                     capture_output=True, text=True)
if res.returncode != 0:
    sys.exit(res.stderr)
out = res.stdout.split("\n")
for i, label in enumerate(pairs):
    count, detail = int(out[2 * i]), out[2 * i + 1]
    want = keys
    if count != want or "public_domain" not in detail or "selection" in detail:
        sys.exit("%s: %d keys released (want %d), ledger %s" % (label, count, want, detail))

print("| statement | parallel | native (ms) | dp_agg (ms) | dp / native |")
print("|---|---|---:|---:|---:|")
worst = 0.0
for workers in (0, 2):
    for label, (native, dp) in pairs.items():
        script = ["SET ROLE dp_bench;", "SET dp_agg.epsilon = 1;", "SET work_mem = '256MB';",
                  "SET dp_agg.group_keys = 'private';",
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
        nm, dm = statistics.median(by["native"]), statistics.median(by["dp"])
        worst = max(worst, dm / nm)
        print("| %s | %d workers | %.1f | %.1f | %.2f |" % (label, workers, nm, dm, dm / nm))
        print("raw %s, %d workers: native %s; dp %s" % (label, workers,
              " ".join("%.0f" % t for t in by["native"]), " ".join("%.0f" % t for t in by["dp"])),
              file=sys.stderr)
print()
print("largest dp / native: %.2f (%s: at most 1.2)" % (worst, "PASS" if worst <= 1.2 else "FAIL"))
PY

"$DP_PSQL" -X -q -c "SELECT dp_agg.clear_public_domain('dp_bench_domain', 'g')" -c "DROP TABLE dp_bench_domain" >/dev/null
echo
dp_bench_machine "$top"
