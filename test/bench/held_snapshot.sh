#!/bin/bash
# dp_agg benchmark: charges per second while another session holds an old
# snapshot.  Not a pass/fail test.
#
#   test/bench/held_snapshot.sh
#   DP_BENCH_SECONDS=20 test/bench/held_snapshot.sh
#
# Every charge updates the role's row of dp_agg.budget.  While any snapshot
# of the database is older than the row's dead versions (a long report, a
# pg_dump, a session idle in a transaction), they cannot be pruned: the
# row's page fills and its updates stop being HOT, so each one adds entries
# to the table's indexes.  This measures whether the charger's work per
# charge grows with those versions: pgbench, DP_BENCH_CLIENTS (4) clients,
# the benchmark's DP statement
#     SELECT dp_count(x, 1.0), dp_sum(x, 0, 100, 1.0) FROM dp_bench_t1000
# for DP_BENCH_SECONDS (40) seconds alone, then as long again beside a
# session that opened a REPEATABLE READ transaction and read the table
# before the run began (and commits after it).  Prints the statements per
# second of each 5-second window of both runs, the ratio of the last window
# to the first in each, and the size of dp_agg.budget at the end.
#
# Environment: DP_BENCH_SECONDS, DP_BENCH_CLIENTS, DP_BENCH_THREADS (2), and
# those of bench_lib.sh (PGHOST/PGPORT, DP_BENCH_PORT, DP_BENCH_TMPDIR,
# DP_BENCH_SKIP_BUILD, ...).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib.sh"
. "$top/test/bench/bench_lib.sh"
secs=${DP_BENCH_SECONDS:-40}
clients=${DP_BENCH_CLIENTS:-4}
threads=${DP_BENCH_THREADS:-2}
pgbench="$DP_PG_BIN/pgbench"
work=$(mktemp -d /tmp/dp_agg_snap.XXXXXX)
holder=""
trap '[ -n "$holder" ] && kill "$holder" 2>/dev/null; dp_bench_cleanup; rm -rf "$work"' EXIT
dp_bench_cluster "$top"
dp_bench_role
dp_bench_t1000
echo 'SELECT dp_count(x, 1.0), dp_sum(x, 0, 100, 1.0) FROM dp_bench_t1000;' > "$work/dp.sql"

# statements per second of each 5-second window of a run (pgbench -P 5)
run() {
    (cd "$work" && PGOPTIONS="-c role=dp_bench" "$pgbench" -n -c "$clients" -j "$threads" \
        -T "$secs" -P 5 -f "$work/dp.sql" 2>&1) |
        sed -nE 's/^progress: [0-9.]+ s, ([0-9.]+) tps.*/\1/p' | tr '\n' ' '
}

"$DP_PSQL" -X -q -c "VACUUM dp_agg.budget"
alone=$(run)
"$DP_PSQL" -X -q -c "VACUUM dp_agg.budget"
"$DP_PSQL" -X -q -c "BEGIN ISOLATION LEVEL REPEATABLE READ" -c "SELECT count(*) FROM dp_bench_t1000" \
    -c "SELECT pg_sleep($secs + 10)" -c "COMMIT" >/dev/null &
holder=$!
sleep 1
beside=$(run)
size=$("$DP_PSQL" -X -Atc "SELECT pg_size_pretty(pg_relation_size('dp_agg.budget'))")
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true
holder=""

ratio() { awk '{ if (NF > 1 && $1 > 0) printf "%.2f", $NF / $1; else printf "-" }' <<<"$1"; }
echo
echo "Charges per second, $clients clients, windows of 5 s (pgbench -P 5):"
echo
echo "| run | statements/s per window | last / first |"
echo "|---|---|---:|"
echo "| alone | $(echo $alone | sed 's/ /, /g') | $(ratio "$alone") |"
echo "| beside a snapshot held from the start | $(echo $beside | sed 's/ /, /g') | $(ratio "$beside") |"
echo
echo "dp_agg.budget at the end: $size (its dead versions, kept for the snapshot)"
dp_bench_machine "$top"
