#!/bin/bash
# dp_agg load test: 16 concurrent clients spend one role's privacy budget.
#
# Against the server given by PGHOST/PGPORT/PGUSER (a superuser), it
# creates its own database, role, table and budget, and runs pgbench with
# 16 clients, each trying many more releases than the budget pays for.
# Every release costs epsilon 0.125 and the budget pays for exactly
# $AFFORDABLE of them, so (amounts are binary fractions, sums are exact):
#   - exactly $AFFORDABLE transactions succeed (pgbench's count) and the
#     ledger holds exactly $AFFORDABLE charged statements of the role, each
#     of 0.125 (rows of statements charged on leases hold several);
#   - epsilon_spent equals the sum of the ledger's charges and the limit;
#   - the only error is "budget exhausted": pgbench aborts each client at
#     its first denial, so 16 clients abort, each with that error, and the
#     server log (when it is $PGHOST/server.log, as in test/run-suites.sh)
#     shows no other error.
# Three phases: simple protocol; after reset_budget, prepared statements
# with two scripts of the same price (one statement with two aggregates,
# one average); a budget that pays for every transaction (no error at all).
# Cleans up afterwards.  Prints one line "load: PASS ..." or
# "load: FAIL ..."; exits 0 on pass.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
CLIENTS=${DP_LOAD_CLIENTS:-16}
AFFORDABLE=${DP_LOAD_AFFORDABLE:-1600}
PER_CLIENT=${DP_LOAD_PER_CLIENT:-200}   # 16 x 200 attempts for 1600 releases
EPS=0.125
DB=dp_load_$$
ROLE=dp_load_analyst_$$
work=$(mktemp -d "${TMPDIR:-/tmp}/dp_load.XXXXXX")
started=$(date +%s)

log() { printf '   load: %s\n' "$*" >&2; }
fail() {
    echo "load: FAIL - $*"
    exit 1
}
psql_admin() { psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

cleanup() {
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        psql_admin -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 && break
        sleep 1
    done
    psql_admin -d postgres -c "DROP ROLE IF EXISTS $ROLE" >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT

command -v pgbench >/dev/null || fail "pgbench not found"
psql_admin -d postgres -c 'SELECT 1' >/dev/null || fail "cannot connect to the server"

# the server log, if we can find it: remember where it ends now
server_log=""
if [ -n "${PGHOST:-}" ] && [ -r "${PGHOST}/server.log" ]; then
    server_log="${PGHOST}/server.log"
    log_offset=$(stat -c %s "$server_log")
fi

limit=$(awk -v n="$AFFORDABLE" -v e="$EPS" 'BEGIN { print n * e }')
log "database $DB, role $ROLE, $CLIENTS clients, $AFFORDABLE releases of $EPS (limit $limit)"

psql_admin -d postgres -c "CREATE DATABASE $DB" >/dev/null || fail "CREATE DATABASE"
psql_admin -d postgres -c "CREATE ROLE $ROLE LOGIN" >/dev/null || fail "CREATE ROLE"
psql_admin -d "$DB" >/dev/null <<SQL || fail "setup"
CREATE EXTENSION dp_agg;
CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 1000) g;
GRANT SELECT ON t TO $ROLE;
SELECT dp_agg.set_budget('$ROLE', $limit);
SQL

cat > "$work/count.sql" <<'SQL'
SELECT dp_count(x, 0.125) FROM t;
SQL
cat > "$work/sum_count.sql" <<'SQL'
SELECT dp_sum(x, 0, 1000, 0.0625), dp_count(x, 0.0625) FROM t;
SQL
cat > "$work/avg.sql" <<'SQL'
SELECT dp_avg(x, 0, 1000, 0.125) FROM t;
SQL

# run pgbench as the role; $1 = phase name, then pgbench options
run_pgbench() {
    local phase=$1
    shift
    pgbench -n -U "$ROLE" -d "$DB" -c "$CLIENTS" -j 4 "$@" \
        >"$work/$phase.out" 2>"$work/$phase.err"
    echo $?
}

# number of transactions pgbench says succeeded
processed() {
    sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p' "$work/$1.out"
}

# statements|sum of the role's charges|epsilon_spent|epsilon_limit|spent = sum
# (a row of charges made on leases counts several statements)
ledger_state() {
    psql_admin -d "$DB" <<SQL
SELECT coalesce(sum(l.statements), 0) || '|' || coalesce(sum(l.epsilon), 0) || '|' || b.epsilon_spent
       || '|' || b.epsilon_limit || '|' || (b.epsilon_spent = coalesce(sum(l.epsilon), 0))
FROM dp_agg.budget b
LEFT JOIN dp_agg.ledger l ON l.role = b.role AND l.kind = 'charge' AND l.id > $1
WHERE b.role = '$ROLE'::regrole
GROUP BY b.epsilon_spent, b.epsilon_limit
SQL
}

# the error messages of a phase: every "ERROR:" line must be a budget
# exhaustion of our role, and there must be $2 of them (one per client)
check_errors() {
    local phase=$1 expected=$2 errors other
    errors=$(grep -c 'ERROR:' "$work/$phase.err")
    other=$(grep -E 'ERROR:|FATAL:|PANIC:|server closed|terminated' "$work/$phase.err" |
        grep -vc "ERROR:  privacy budget of role \"$ROLE\" is exhausted")
    if [ "$other" != 0 ]; then
        sed -n '1,40p' "$work/$phase.err" >&2
        fail "$phase: $other errors other than budget exhaustion"
    fi
    [ "$errors" = "$expected" ] ||
        { sed -n '1,40p' "$work/$phase.err" >&2; fail "$phase: $errors budget errors, expected $expected"; }
}

# one phase that exhausts the budget: exact counts, only exhaustion errors
check_exhausting_phase() {
    local phase=$1 rc=$2 last_id=$3 n state
    n=$(processed "$phase")
    log "$phase: pgbench exit $rc, $n transactions processed; $(grep -c 'ERROR:' "$work/$phase.err") errors"
    check_errors "$phase" "$CLIENTS"
    [ "$rc" = 2 ] || { cat "$work/$phase.out" "$work/$phase.err" >&2; fail "$phase: pgbench exit $rc, expected 2 (clients aborted at exhaustion)"; }
    [ "$n" = "$AFFORDABLE" ] || fail "$phase: $n releases succeeded, expected exactly $AFFORDABLE"
    state=$(ledger_state "$last_id")
    [ "$state" = "$AFFORDABLE|$limit|$limit|$limit|true" ] ||
        fail "$phase: ledger/budget (charges|charged|spent|limit|spent=charged) is $state, expected $AFFORDABLE|$limit|$limit|$limit|true"
    log "$phase: $state"
}

last_id() { psql_admin -d "$DB" -c "SELECT coalesce(max(id), 0) FROM dp_agg.ledger"; }

# phase 1: simple protocol, one script
id0=$(last_id)
rc=$(run_pgbench simple -t "$PER_CLIENT" -M simple -f "$work/count.sql")
check_exhausting_phase simple "$rc" "$id0"
bad=$(psql_admin -d "$DB" -c "SELECT count(*) FROM dp_agg.ledger WHERE id > $id0
    AND (role <> '$ROLE'::regrole OR kind <> 'charge' OR epsilon <> $EPS * statements OR delta <> 0
         OR query <> 'SELECT dp_count(x, 0.125) FROM t')")
[ "$bad" = 0 ] || fail "simple: $bad ledger rows are not the expected charge"

# phase 2: after a reset, prepared statements, two scripts of the same price
psql_admin -d "$DB" -c "SELECT dp_agg.reset_budget('$ROLE')" >/dev/null || fail "reset_budget"
id1=$(last_id)
rc=$(run_pgbench prepared -t "$PER_CLIENT" -M prepared \
    -f "$work/sum_count.sql@1" -f "$work/avg.sql@1")
check_exhausting_phase prepared "$rc" "$id1"
bad=$(psql_admin -d "$DB" -c "SELECT count(*) FROM dp_agg.ledger WHERE id > $id1
    AND (role <> '$ROLE'::regrole OR kind <> 'charge' OR epsilon <> $EPS * statements OR delta <> 0)")
[ "$bad" = 0 ] || fail "prepared: $bad ledger rows are not the expected charge"

# phase 3: the budget pays for every transaction: no error at all
psql_admin -d "$DB" -c "SELECT dp_agg.reset_budget('$ROLE')" >/dev/null || fail "reset_budget"
id2=$(last_id)
per=$((AFFORDABLE / CLIENTS))
rc=$(run_pgbench affordable -t "$per" -M extended -f "$work/count.sql")
n=$(processed affordable)
log "affordable: pgbench exit $rc, $n transactions processed"
[ "$rc" = 0 ] || { cat "$work/affordable.err" >&2; fail "affordable: pgbench exit $rc"; }
[ "$n" = $((per * CLIENTS)) ] || fail "affordable: $n transactions, expected $((per * CLIENTS))"
check_errors affordable 0
state=$(ledger_state "$id2")
spent=$(awk -v n="$n" -v e="$EPS" 'BEGIN { print n * e }')
[ "$state" = "$n|$spent|$spent|$limit|true" ] || fail "affordable: ledger/budget is $state"

# the resets are in the ledger, between the phases
resets=$(psql_admin -d "$DB" -c "SELECT count(*) FROM dp_agg.ledger WHERE kind = 'reset' AND role = '$ROLE'::regrole")
[ "$resets" = 2 ] || fail "$resets resets in the ledger, expected 2"

# nobody is left waiting for the charger
waiting=$(psql_admin -d "$DB" -c "SELECT count(*) FROM pg_stat_activity WHERE datname = '$DB' AND backend_type = 'client backend' AND wait_event_type = 'Extension'")
[ "$waiting" = 0 ] || fail "$waiting backends still wait for the charger"

# the server log shows no error other than budget exhaustion
if [ -n "$server_log" ]; then
    tail -c +$((log_offset + 1)) "$server_log" > "$work/server.log"
    other=$(grep -E 'ERROR:|FATAL:|PANIC:|WARNING:|server process .* (terminated|was terminated|exited with exit code [^01])' "$work/server.log" |
        grep -v "ERROR:  privacy budget of role \"$ROLE\" is exhausted" |
        grep -v 'terminating connection due to administrator command' |
        grep -v 'terminating background worker "dp_agg charger" due to administrator command' |
        grep -c .)
    if [ "$other" != 0 ]; then
        grep -E 'ERROR:|FATAL:|PANIC:|WARNING:' "$work/server.log" | grep -v 'is exhausted' | head -20 >&2
        fail "$other unexpected errors in the server log"
    fi
    log "server log: only budget exhaustion errors"
else
    log "server log not found at \$PGHOST/server.log: not checked"
fi

echo "load: PASS - $CLIENTS clients, $AFFORDABLE releases paid for in each of 2 exhausting phases (simple, prepared) plus $n affordable ones; spent = ledger; only budget-exhausted errors ($(($(date +%s) - started)) s)"
exit 0
