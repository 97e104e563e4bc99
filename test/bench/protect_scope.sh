#!/bin/bash
# dp_agg benchmark: what protecting a table costs the statements that do
# not read it (README, "Protected tables", "What protection changes").  Not
# a pass/fail test: it prints its verdict.
#
#   test/bench/protect_scope.sh
#   DP_BENCH_RUNS=3 DP_BENCH_SECONDS=3 test/bench/protect_scope.sh   # smoke test
#
# One cluster with dp_agg preloaded and two databases:
#   plain      without the extension;
#   protected  with the extension created and a table protected.
# Measured alternately (plain, protected, protected, plain, ...) after one
# unmeasured run of each:
# 1. PL/pgSQL: a loop of 1,000,000 i := i + 1 (simple expressions), timed
#    inside the function (clock_timestamp), so that only the loop counts.
# 2. pgbench's built-in workload (TPC-B like, scale 1, one client,
#    DP_BENCH_SECONDS each run, synchronous_commit off so that the disk's
#    flushes do not drown the CPU work the hooks add): transactions per
#    second.
# Verdict: for each, the ratio of the medians (protected's time per loop
# or per transaction over plain's) within 1.05.
#
# Environment:
#   DP_BENCH_RUNS     measured runs of each (7)
#   DP_BENCH_SECONDS  duration of one pgbench run (10)
#   and those of bench_lib.sh: PGHOST/PGPORT (use that cluster instead of a
#   throw-away one), DP_BENCH_PORT, DP_BENCH_SHARED_BUFFERS, DP_BENCH_SKIP_BUILD
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib.sh"
. "$top/test/bench/bench_lib.sh"

runs=${DP_BENCH_RUNS:-7}
seconds=${DP_BENCH_SECONDS:-10}
pgbench=$DP_PG_BIN/pgbench

trap dp_bench_cleanup EXIT
dp_bench_cluster "$top"

dp_log "creating the databases dp_bench_plain and dp_bench_protected"
for db in dp_bench_plain dp_bench_protected; do
    "$DP_PSQL" -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
    "$DP_PSQL" -X -q -v ON_ERROR_STOP=1 -d "$db" <<'SQL'
CREATE FUNCTION bench_loop() RETURNS double precision LANGUAGE plpgsql AS $$
DECLARE
  i int := 0;
  t0 timestamptz := clock_timestamp();
BEGIN
  WHILE i < 1000000 LOOP
    i := i + 1;
  END LOOP;
  RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;
SQL
    (cd / && "$pgbench" -q -i -s 1 "$db" >/dev/null 2>&1)
done
"$DP_PSQL" -X -q -v ON_ERROR_STOP=1 -d dp_bench_protected <<'SQL'
CREATE EXTENSION dp_agg;
CREATE TABLE secret (x int);
INSERT INTO secret SELECT g FROM generate_series(1, 1000) g;
SELECT dp_agg.protect('secret') \g /dev/null
SQL
for db in dp_bench_plain dp_bench_protected; do
    "$DP_PSQL" -X -q -d "$db" -c "VACUUM ANALYZE" -c CHECKPOINT
done

loop_ms() { "$DP_PSQL" -X -Atq -d "$1" -c "SELECT round(bench_loop()::numeric, 3)"; }
tps() {
    (cd / && PGOPTIONS='-c synchronous_commit=off' "$pgbench" -n -c 1 -T "$seconds" "$1" 2>/dev/null) |
        sed -nE 's/^tps = ([0-9.]+).*/\1/p'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

dp_log "warm-up"
loop_ms dp_bench_plain >/dev/null
loop_ms dp_bench_protected >/dev/null
seconds_saved=$seconds; seconds=2
tps dp_bench_plain >/dev/null
tps dp_bench_protected >/dev/null
seconds=$seconds_saved

out=$(mktemp)
dp_log "measuring: $runs runs of each, alternating"
for ((r = 0; r < runs; r++)); do
    if ((r % 2 == 0)); then order="dp_bench_plain dp_bench_protected"; else order="dp_bench_protected dp_bench_plain"; fi
    for db in $order; do
        echo "loop $db $(loop_ms "$db")" | tee -a "$out" >&2
    done
    for db in $order; do
        echo "tps $db $(tps "$db")" | tee -a "$out" >&2
    done
done

lp=$(awk '$1 == "loop" && $2 == "dp_bench_plain" { print $3 }' "$out" | median)
lq=$(awk '$1 == "loop" && $2 == "dp_bench_protected" { print $3 }' "$out" | median)
tp=$(awk '$1 == "tps" && $2 == "dp_bench_plain" { print $3 }' "$out" | median)
tq=$(awk '$1 == "tps" && $2 == "dp_bench_protected" { print $3 }' "$out" | median)
rm -f "$out"

PGDATABASE=dp_bench_protected dp_bench_machine "$top"
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| workload | without a protected table | with one | ratio (time, with / without) |"
echo "|---|---|---|---|"
lr=$(awk -v a="$lq" -v b="$lp" 'BEGIN { printf "%.3f", a / b }')
tr=$(awk -v a="$tp" -v b="$tq" 'BEGIN { printf "%.3f", a / b }')
echo "| PL/pgSQL loop, 1,000,000 i := i + 1 (median of $runs, ms) | $lp | $lq | $lr |"
echo "| pgbench TPC-B like, scale 1, 1 client, ${seconds} s (median of $runs, tps) | $tp | $tq | $tr |"
echo
verdict=ok
awk -v r="$lr" 'BEGIN { exit !(r <= 1.05) }' || verdict=SLOWER
awk -v r="$tr" 'BEGIN { exit !(r <= 1.05) }' || verdict=SLOWER
echo "verdict: $verdict (both ratios at most 1.05: $lr, $tr)"
