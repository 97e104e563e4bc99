#!/bin/bash
# dp_agg benchmark: the instructions a statement of DP aggregates costs,
# against the built-in aggregates, counted by valgrind (callgrind).  Not a
# pass/fail test.
#
#   test/bench/aggregates_instructions.sh
#   DP_BENCH_ONLY='^1,000, private keys' test/bench/aggregates_instructions.sh
#
# The statements of aggregates.sh (serial plans), on a table of
# DP_BENCH_ROWS rows: without GROUP BY, 1,000 groups with public and with
# private keys, and groups of 10 rows.  Each is run in a backend under
# callgrind, once and three times in two sessions; the difference is the
# cost of one execution, parse to result (agg_instructions.py).  Counts of
# instructions are the same on a loaded machine as on a quiet one, so this
# compares the code dp_agg runs per row with PostgreSQL's own where timings
# cannot (a shared machine's timings vary by more than the differences
# measured); they do not show cache misses (aggregates.sh shows the time).
# About 50 times slower than native execution: 200,000 rows by default.
#
# Environment:
#   DP_BENCH_ROWS   rows in the table (200000)
#   DP_BENCH_ONLY   a regular expression: only the "groups, aggregate" it matches
#   and those of bench_lib.sh but PGHOST/PGPORT: the cluster is a throw-away
#   one, its postmaster started under valgrind
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib.sh"
. "$top/test/bench/bench_lib.sh"

dp_bench_need_callgrind aggregates_instructions.sh
export DP_BENCH_ROWS=${DP_BENCH_ROWS:-200000}
export DP_PSQL

trap dp_bench_cleanup EXIT
dp_bench_cluster "$top"
dp_bench_role
dp_log "creating dp_bench_ins with $DP_BENCH_ROWS rows"
"$DP_PSQL" -X -q -v ON_ERROR_STOP=1 -v rows="$DP_BENCH_ROWS" <<'SQL'
SET client_min_messages = warning;
CREATE TABLE dp_bench_ins (g1k integer NOT NULL, g10 integer NOT NULL,
                           b bigint NOT NULL, d double precision NOT NULL);
SELECT setseed(0.25) \g /dev/null
INSERT INTO dp_bench_ins
SELECT (i * 997) % 1000, (i * 999983) % greatest(:rows / 10, 1),
       floor(random() * 1001)::bigint, random() * 1000
FROM generate_series(1::bigint, :rows) AS i;
VACUUM (FREEZE, ANALYZE) dp_bench_ins;
GRANT SELECT ON dp_bench_ins TO dp_bench;
CHECKPOINT;
SQL

dp_bench_under_callgrind
dp_log "postmaster under callgrind; timing the statements"
python3 "$top/test/bench/agg_instructions.py"
echo
dp_bench_machine "$top"
