#!/bin/bash
# dp_agg benchmark: the cost of the DP aggregates against the built-in ones.
# Not a pass/fail test.
#
#   test/bench/aggregates.sh
#   DP_BENCH_ROWS=200000 DP_BENCH_RUNS=3 test/bench/aggregates.sh   # smoke test
#
# Times dp_count(*), dp_count(b), dp_sum and dp_avg (bigint and double
# precision columns) against count(*), count(b), sum and avg on one table,
# serial (max_parallel_workers_per_gather = 0) and with 2 parallel workers,
# without GROUP BY, with GROUP BY into 1,000 groups (with public keys, and
# with private keys: the DP statement then also selects its groups
# privately, selection epsilon 1 and delta 1e-6) and into 1,000,000 groups.  For
# 1,000,000 groups both queries are wrapped as
#     SELECT count(a) FROM (SELECT g, agg(...) AS a FROM t GROUP BY g) s
# so that sending the groups to the client does not dominate.  (count(a),
# not count(*): with count(*) the planner drops the unused aggregate, and
# both queries would time the GROUP BY alone.)  The sampled lines run the
# same statements without GROUP BY and with 1,000 groups over
# TABLESAMPLE BERNOULLI (10), where the DP aggregates are priced with
# amplification by subsampling: the ratio shows what sampling adds to a DP
# statement beyond the sampling itself, which the built-in side pays too.
#
# Each measurement is the median of DP_BENCH_RUNS runs of each query; the
# native and the DP query alternate (native, DP, DP, native, ...) on one
# connection, after one unmeasured run of each.  The time is psql's \timing
# (parse, plan, execute, the budget charge, the result to the client) on a
# Unix socket.  When the server runs on this machine, the table also gives
# the server's CPU time of each statement (its backend and parallel
# workers, from /proc): on a machine shared with other work, the wall-clock
# time also counts the time the statement waited for a CPU.  DP statements are charged to the role dp_bench, whose budget
# is set high enough for any run.
#
# Ends with a Markdown table and the machine description.
#
# Environment:
#   DP_BENCH_ROWS      rows in the table (10000000)
#   DP_BENCH_RUNS      measured runs of each query (5)
#   DP_BENCH_WORK_MEM  work_mem of the session (8GB): large enough that no
#                      hash aggregation spills to disk, so that the GROUP BY
#                      times compare the aggregates and not the spilling.
#                      The plan column says "spills" when one is planned.
#   DP_BENCH_ONLY      a regular expression: time only the configurations
#                      whose "parallel, groups, aggregate" it matches, e.g.
#                      '^serial, 1,000, count' (default: all)
#   DP_BENCH_KEEP=1    keep the table dp_bench_agg (and reuse it if it has
#                      the right number of rows)
#   and those of bench_lib.sh: PGHOST/PGPORT (use that cluster instead of a
#   throw-away one), DP_BENCH_PORT, DP_BENCH_SHARED_BUFFERS, DP_BENCH_SKIP_BUILD
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib.sh"
. "$top/test/bench/bench_lib.sh"

export DP_BENCH_ROWS=${DP_BENCH_ROWS:-10000000}
export DP_BENCH_RUNS=${DP_BENCH_RUNS:-5}
export DP_BENCH_WORK_MEM=${DP_BENCH_WORK_MEM:-8GB}
export DP_PSQL

trap dp_bench_cleanup EXIT
dp_bench_cluster "$top"
dp_bench_role

have=-1
if [ "$("$DP_PSQL" -X -Atc "SELECT to_regclass('dp_bench_agg') IS NOT NULL")" = t ]; then
    have=$("$DP_PSQL" -X -Atc "SELECT count(*) FROM dp_bench_agg")
fi
if [ "$have" != "$DP_BENCH_ROWS" ]; then
    dp_log "creating dp_bench_agg with $DP_BENCH_ROWS rows"
    # g1k and g1m: 1,000 and 1,000,000 groups, of equal sizes, in scattered
    # order (997 and 999983 are primes, so i -> i * p mod n visits every group)
    "$DP_PSQL" -X -q -v ON_ERROR_STOP=1 -v rows="$DP_BENCH_ROWS" <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS dp_bench_agg;
CREATE TABLE dp_bench_agg (
    g1k integer NOT NULL,
    g1m integer NOT NULL,
    b   bigint NOT NULL,
    d   double precision NOT NULL
);
SELECT setseed(0.25) \g /dev/null
INSERT INTO dp_bench_agg
SELECT (i * 997) % 1000, (i * 999983) % 1000000,
       floor(random() * 1001)::bigint, random() * 1000
FROM generate_series(1::bigint, :rows) AS i;
VACUUM (FREEZE, ANALYZE) dp_bench_agg;
CHECKPOINT;
SQL
fi
"$DP_PSQL" -X -q -v ON_ERROR_STOP=1 -c "GRANT SELECT ON dp_bench_agg TO dp_bench"

# the postmaster's pid, for the CPU time of parallel workers (when local)
DP_BENCH_POSTMASTER_PID=$(head -1 "$("$DP_PSQL" -X -Atc 'SHOW data_directory')/postmaster.pid" 2>/dev/null || true)
export DP_BENCH_POSTMASTER_PID
python3 "$top/test/bench/agg_bench.py"

if [ "${DP_BENCH_KEEP:-0}" != 1 ]; then
    "$DP_PSQL" -X -q -c "DROP TABLE dp_bench_agg"
fi
echo
dp_bench_machine "$top"
