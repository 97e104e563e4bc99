#!/bin/bash
# dp_agg benchmark: the instructions one charged DP statement costs, in its
# backend and in the charger, against the same statement with built-in
# aggregates, counted by valgrind (callgrind).  Not a pass/fail test.
#
#   test/bench/charge_instructions.sh
#   DP_BENCH_STATEMENTS=2000 test/bench/charge_instructions.sh
#
# The statements of throughput.sh, on its table of 1,000 rows:
#     built-in: SELECT count(x), sum(x) FROM dp_bench_t1000
#     dp_agg:   SELECT dp_count(x, 1.0), dp_sum(x, 0, 100, 1.0) FROM dp_bench_t1000
# The postmaster runs under callgrind.  A backend's cost per statement is
# the difference between two sessions, of 1 and of N + 1 statements,
# divided by N (parse, plan, guard, price, charge request, execution,
# noise, result; not the session's start).  The charger's cost per charge
# is the same difference between two chargers' lives (each ended after its
# session), of 1 and of N + 1 charges: one client, so one charge per batch,
# the most a charge can cost (with more clients a batch holds several
# charges and shares the reading, writing and commit of the budget row).
#
# Instruction counts are the same on a loaded machine as on a quiet one,
# so this shows what a change does to the code run per statement where
# throughput.sh's timings vary more than the change; they do not show the
# kernel's time (the wakeups between a backend and the charger, the WAL
# written) nor cache misses, which throughput.sh measures.
#
# Environment:
#   DP_BENCH_STATEMENTS  N (500)
#   DP_BENCH_PROFILE_DIR a directory to keep the profiles of the longer
#                        sessions' backends (builtin.callgrind,
#                        backend.callgrind) and of the charger in, for
#                        callgrind_annotate (where the instructions go)
#   and those of bench_lib.sh but PGHOST/PGPORT: the cluster is a throw-away
#   one, its postmaster started under valgrind
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib.sh"
. "$top/test/bench/bench_lib.sh"

dp_bench_need_callgrind charge_instructions.sh
n=${DP_BENCH_STATEMENTS:-500}

trap dp_bench_cleanup EXIT
dp_bench_cluster "$top"
dp_bench_role
dp_bench_t1000
dp_bench_under_callgrind
cg=$DP_CG_DIR

native_sql='SELECT count(x), sum(x) FROM dp_bench_t1000;'
dp_sql='SELECT dp_count(x, 1.0), dp_sum(x, 0, 100, 1.0) FROM dp_bench_t1000;'

# session SQL TIMES: run SQL TIMES times as dp_bench in one session; its backend's pid
session() {
    { echo "SELECT pg_backend_pid();"; echo "SET ROLE dp_bench;"; echo '\o /dev/null'
      for _ in $(seq "$2"); do echo "$1"; done; } | "$DP_PSQL" -X -q -At -v ON_ERROR_STOP=1 | head -1
}
# total PID: the instructions of a backend's whole life, from the profile it writes at exit
total() {
    for _ in $(seq 600); do
        grep -qs '^totals:' "$cg/cg.$1" && break
        sleep 0.5
    done
    awk '/^totals:/ { print $2 }' "$cg/cg.$1"
}
# charger_life: end the charger (its profile is written when it exits); its pid
charger_life() {
    local pid
    pid=$("$DP_PSQL" -X -Atc "SELECT pid FROM pg_stat_activity WHERE backend_type LIKE 'dp_agg charger%'")
    [ -n "$pid" ] || { echo "no charger is running" >&2; exit 1; }
    "$DP_PSQL" -X -Atc "SELECT pg_terminate_backend($pid)" >/dev/null
    echo "$pid"
}
# per_statement SQL: a backend's instructions per statement
per_statement() {
    local one many
    one=$(session "$1" 1)
    many=$(session "$1" $((n + 1)))
    echo "$many" >"$cg/last_many"
    echo $(( ($(total "$many") - $(total "$one")) / n ))
}

dp_log "postmaster under callgrind; $n statements of each kind"
native=$(per_statement "$native_sql")
native_many=$(cat "$cg/last_many")
# the charger's cost per charge: the difference between two chargers'
# lives, of 1 and of N + 1 charges (a charger starts with the first
# request; the first one also compiles the ledger's writes)
session "$dp_sql" 1 >/dev/null
charger_life >/dev/null
one=$(session "$dp_sql" 1)
c_one=$(charger_life)
many=$(session "$dp_sql" $((n + 1)))
c_many=$(charger_life)
backend=$(( ($(total "$many") - $(total "$one")) / n ))
charge=$(( ($(total "$c_many") - $(total "$c_one")) / n ))
charges=$("$DP_PSQL" -X -Atc "SELECT count(*) FROM dp_agg.ledger WHERE kind = 'charge'")
if [ -n "${DP_BENCH_PROFILE_DIR:-}" ]; then
    mkdir -p "$DP_BENCH_PROFILE_DIR"
    cp "$cg/cg.$native_many" "$DP_BENCH_PROFILE_DIR/builtin.callgrind"
    cp "$cg/cg.$many" "$DP_BENCH_PROFILE_DIR/backend.callgrind"
    cp "$cg/cg.$c_many" "$DP_BENCH_PROFILE_DIR/charger.callgrind"
    dp_log "profiles of the $((n + 1))-statement backend and its charger in $DP_BENCH_PROFILE_DIR (callgrind_annotate)"
fi

commas() { echo "$1" | sed -e ':a' -e 's/\B[0-9]\{3\}\>/,&/' -e 'ta'; }
echo
echo "Instructions per statement (callgrind), one client, $n statements, $charges charges in all:"
echo
echo "| statement | backend | charger (one charge per batch) | in all | / built-in |"
echo "|---|---:|---:|---:|---:|"
printf "| built-in: \`%s\` | %s | | %s | 1.00 |\n" "${native_sql%;}" "$(commas "$native")" "$(commas "$native")"
printf "| dp_agg: \`%s\` | %s | %s | %s | %.2f |\n" "${dp_sql%;}" "$(commas "$backend")" "$(commas "$charge")" \
    "$(commas $((backend + charge)))" "$(awk -v a=$((backend + charge)) -v b="$native" 'BEGIN { print a / b }')"
echo
dp_bench_machine "$top"
