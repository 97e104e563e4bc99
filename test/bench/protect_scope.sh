#!/bin/bash
# dp_agg benchmark: what protecting a table costs the statements that do
# not read it (doc/guard.md, "Protected tables", "What protection changes").
# Not a pass/fail test: it prints its verdict.
#
#   test/bench/protect_scope.sh
#   DP_BENCH_RUNS=3 DP_BENCH_SECONDS=3 test/bench/protect_scope.sh   # smoke test
#
# One cluster with dp_agg preloaded and three databases:
#   plain      without the extension;
#   extension  with the extension created, nothing protected;
#   protected  with the extension created and a table protected.
# Measured in turn (plain, extension, protected, then the reverse order,
# ...) after one unmeasured run of each:
# 1. PL/pgSQL: a loop of 1,000,000 i := i + 1 (simple expressions), timed
#    inside the function (clock_timestamp), so that only the loop counts;
#    and the backend's CPU time for 10 loops on one connection.
# 2. pgbench's built-in workload (TPC-B like, scale 1, one client,
#    DP_BENCH_TRANSACTIONS transactions each run, synchronous_commit off so
#    that the disk's flushes do not drown the CPU work the hooks add):
#    transactions per second, and the backend's CPU time per transaction.
# The CPU time of a backend is read, once it has exited, from the
# postmaster's children's times (/proc/PID/stat; autovacuum is off in the
# two databases' tables): the hooks' work is CPU work in the backend, and
# CPU time is far less disturbed than the wall clock by other processes on
# a shared machine.
# Verdict: the ratio of the medians of protected's CPU time per loop and
# per transaction over extension's (what protecting a table costs) within
# 1.05.  The wall-clock rows and the ratios over plain's (what dp_agg costs
# with a protected table, its DP statements' detection included) are
# printed too; on a machine shared with other work the wall clock varies
# by tens of percent from one run to the next.
#
# Environment:
#   DP_BENCH_RUNS     measured pgbench runs of each (7)
#   DP_BENCH_LOOPS    measured loops of each (21: a loop takes well under a
#                     second, and on a shared machine its time varies by tens
#                     of percent from one run to the next)
#   DP_BENCH_TRANSACTIONS  transactions of one pgbench run (5000)
#   and those of bench_lib.sh: PGHOST/PGPORT (use that cluster instead of a
#   throw-away one), DP_BENCH_PORT, DP_BENCH_SHARED_BUFFERS, DP_BENCH_SKIP_BUILD
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib.sh"
. "$top/test/bench/bench_lib.sh"

runs=${DP_BENCH_RUNS:-7}
loops=${DP_BENCH_LOOPS:-21}
transactions=${DP_BENCH_TRANSACTIONS:-5000}
pgbench=$DP_PG_BIN/pgbench

trap dp_bench_cleanup EXIT
dp_bench_cluster "$top"

dbs="dp_bench_plain dp_bench_extension dp_bench_protected"
rdbs="dp_bench_protected dp_bench_extension dp_bench_plain"
dp_log "creating the databases $dbs"
for db in $dbs; do
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
    "$DP_PSQL" -X -q -d "$db" -c "ALTER TABLE pgbench_accounts SET (autovacuum_enabled = off)" \
        -c "ALTER TABLE pgbench_branches SET (autovacuum_enabled = off)" \
        -c "ALTER TABLE pgbench_tellers SET (autovacuum_enabled = off)" \
        -c "ALTER TABLE pgbench_history SET (autovacuum_enabled = off)"
done
"$DP_PSQL" -X -q -v ON_ERROR_STOP=1 -d dp_bench_extension -c "CREATE EXTENSION dp_agg"
"$DP_PSQL" -X -q -v ON_ERROR_STOP=1 -d dp_bench_protected <<'SQL'
CREATE EXTENSION dp_agg;
CREATE TABLE secret (x int);
INSERT INTO secret SELECT g FROM generate_series(1, 1000) g;
SELECT dp_agg.protect('secret') \g /dev/null
SQL
for db in $dbs; do
    "$DP_PSQL" -X -q -d "$db" -c "VACUUM ANALYZE" -c CHECKPOINT
done

postmaster=$(head -1 "$("$DP_PSQL" -X -Atq -c "SHOW data_directory")/postmaster.pid")
hz=$(getconf CLK_TCK)
# CPU time (ms) of the postmaster's exited children
children_cpu_ms() { awk -v hz="$hz" '{ print ($16 + $17) * 1000 / hz }' "/proc/$postmaster/stat"; }
# the backend of the command just run has exited and been reaped
settle() { sleep 0.5; }

# one loop: "wall_ms"; then 10 loops on one connection: "cpu_ms" (per loop)
loop_ms() { "$DP_PSQL" -X -Atq -d "$1" -c "SELECT round(bench_loop()::numeric, 3)"; }
loop_cpu_ms() {
    local c0 c1
    settle
    c0=$(children_cpu_ms)
    "$DP_PSQL" -X -Atq -d "$1" -c "SELECT sum(bench_loop()) FROM generate_series(1, 10)" >/dev/null
    settle
    c1=$(children_cpu_ms)
    awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.3f", (b - a) / 10 }'
}
# one pgbench run: "tps cpu_us_per_transaction"
bench() {
    local c0 c1 tps
    settle
    c0=$(children_cpu_ms)
    tps=$( (cd / && PGOPTIONS='-c synchronous_commit=off' "$pgbench" -n -c 1 -t "$2" "$1" 2>/dev/null) |
        sed -nE 's/^tps = ([0-9.]+).*/\1/p')
    settle
    c1=$(children_cpu_ms)
    awk -v t="$tps" -v a="$c0" -v b="$c1" -v n="$2" 'BEGIN { printf "%s %.2f", t, (b - a) * 1000 / n }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

dp_log "warm-up"
for db in $dbs; do
    loop_ms "$db" >/dev/null
    bench "$db" 500 >/dev/null
done

out=$(mktemp)
dp_log "measuring: $loops loops and $runs pgbench runs of each, alternating"
for ((r = 0; r < loops; r++)); do
    if ((r % 2 == 0)); then order=$dbs; else order=$rdbs; fi
    for db in $order; do
        echo "loop $db $(loop_ms "$db")" | tee -a "$out" >&2
    done
done
for ((r = 0; r < runs; r++)); do
    if ((r % 2 == 0)); then order=$dbs; else order=$rdbs; fi
    for db in $order; do
        echo "loopcpu $db $(loop_cpu_ms "$db")" | tee -a "$out" >&2
        echo "bench $db $(bench "$db" "$transactions")" | tee -a "$out" >&2
    done
done

pick() { awk -v k="$1" -v d="dp_bench_$2" -v f="$3" '$1 == k && $2 == d { print $f }' "$out" | median; }

PGDATABASE=dp_bench_protected dp_bench_machine "$top"
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
echo "| workload | plain | extension | protected | protected / extension | protected / plain |"
echo "|---|---|---|---|---|---|"
verdict=ok
row() {   # label, key, field, 1 if larger is faster, 1 if it counts in the verdict
    local p e q r s
    p=$(pick "$2" plain "$3"); e=$(pick "$2" extension "$3"); q=$(pick "$2" protected "$3")
    if [ "$4" = 1 ]; then r=$(ratio "$e" "$q"); s=$(ratio "$p" "$q"); else r=$(ratio "$q" "$e"); s=$(ratio "$q" "$p"); fi
    echo "| $1 | $p | $e | $q | $r | $s |"
    [ "$5" = 1 ] || return 0
    awk -v r="$r" 'BEGIN { exit !(r <= 1.05) }' || verdict=SLOWER
}
row "PL/pgSQL loop of 1,000,000 i := i + 1, wall clock (median of $loops, ms)" loop 3 0 0
row "the same, backend CPU per loop (median of $runs runs of 10 loops, ms)" loopcpu 3 0 1
row "pgbench TPC-B like, scale 1, 1 client, $transactions transactions (median of $runs, tps)" bench 3 1 0
row "the same, backend CPU per transaction (median of $runs, us)" bench 4 0 1
echo
echo "Ratios are of times (per loop, per transaction): above 1 is slower."
echo "verdict: $verdict (protected / extension at most 1.05 in CPU time)"
rm -f "$out"
