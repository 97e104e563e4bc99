#!/bin/bash
# dp_agg benchmark: statements per second of a small DP statement against the
# same statement with built-in aggregates.  Not a pass/fail test.
#
#   test/bench/throughput.sh
#   DP_BENCH_SECONDS=5 DP_BENCH_ROUNDS=1 test/bench/throughput.sh   # smoke test
#
# pgbench, DP_BENCH_CLIENTS (8) clients, all as the role dp_bench, on a table
# of 1,000 rows:
#     built-in: SELECT count(x), sum(x) FROM dp_bench_t1000
#     dp_agg:   SELECT dp_count(x, 1.0), dp_sum(x, 0, 100, 1.0) FROM dp_bench_t1000
# Every DP statement is charged to dp_bench's budget (epsilon 2 each, set high
# enough for any run), so this measures the budget charge too: the charger
# commits each charge durably before the result is released.
#
# Prepaid: the same DP statement as the role dp_bench_prepay with
# dp_agg.prepay = DP_BENCH_PREPAY (32): each client's repeats are charged
# 32 at a time (doc/budgets.md, "Prepaid statements").  The ledger check
# counts its rows' statements: at least one per transaction, and at most
# 31 more per client and run (those prepaid and not run when pgbench
# disconnects).
#
# Accounting: the same Gaussian statement
#     SELECT dp_count(x, 0.01, 1e-10), dp_sum(x, 0, 100, 0.01, 1e-10) FROM dp_bench_t1000
# charged to three roles, one per accounting, each with a history of
# DP_BENCH_HISTORY (2,000,000) such statements written into its budget row
# before every round (as if they had been charged; the ledger does not hold
# them), so that every charge measured is decided by the certificate named:
#   basic  role dp_bench, limits no run reaches: the basic sums;
#   rdp    role dp_bench_rdp, limits (1000, 1e-6): basic composition is
#          exhausted by the history, the Renyi certificate admits;
#   pld    role dp_bench_pld, limits (44.1, 1e-6): basic and Renyi (44.12
#          at 2,000,000) are exhausted, the PLD certificate (42.74) admits
#          about 125,000 more.  Its first charge composes the history and
#          the statement's repeats (about 20 s, in the setup); the frontier
#          then covers every later charge (a reset of the history to
#          2,000,000 keeps it covered: it depends on the limits only).
# The table says how many statements each run admitted (pgbench's count,
# checked against the ledger) and the history they were decided on.
#
# Shared budgets: the DP statement over protected copies of the table,
# charged to one budget or to three:
#   solo    role dp_bench_solo, its own budget only, over dp_bench_pa
#           (protected, no budget of its own);
#   shared  role dp_bench_member, charged to its own budget, to the budget
#           of the group dp_bench_team it is a member of, and to the budget
#           of the protected relation dp_bench_pb it reads: three budget
#           rows read, locked and written by each batch of the charger.
# Both roles are untrusted for the protected tables (granted SELECT, not
# owners), so both statements pass the same guard.
#
# DP_BENCH_ROUNDS rounds of DP_BENCH_SECONDS seconds of each statement,
# alternating (built-in, DP, DP, built-in, ...), after a 3-second warm-up of
# each.  TPS is the median over the rounds (pgbench's figure, without
# connection time); the latencies are percentiles of all the transactions of
# all the rounds, from pgbench --log.  The ledger is checked: one charge per
# DP transaction.
#
# Every DP statement waits for the WAL flush of its charge before it
# releases anything; concurrent statements share one flush (group commit),
# so with N clients the DP throughput is at most about N / (the disk's
# flush latency).  DP_BENCH_TMPDIR=/dev/shm puts the throw-away cluster on a
# tmpfs, where a flush costs nothing: the run then measures the CPU path
# (the charge, the charger, the aggregates) against the plain statement.
#
# Ends with a Markdown table and the machine description.  On a cluster of
# this machine, a second table says where the server's CPU time went per
# transaction (test/bench/proc_usage.py: the CPU time and the context
# switches of the backends, the charger, the WAL writer and the others, from
# /proc, between a second after each round's start and a second before its
# end): timings move by 20% between runs here, what a statement costs per
# transaction much less.
#
# Environment:
#   DP_BENCH_SECONDS   seconds of each round (30)
#   DP_BENCH_ROUNDS    rounds of each statement (3)
#   DP_BENCH_CLIENTS   pgbench clients (8)
#   DP_BENCH_THREADS   pgbench threads (2)
#   DP_BENCH_PROTOCOL  pgbench -M: simple, extended or prepared (simple)
#   DP_BENCH_KINDS     the statements to run, of: native dp prepay basic rdp pld
#                      solo shared (all of them)
#   DP_BENCH_PREPAY    dp_agg.prepay of the prepaid statement (32)
#   DP_BENCH_LEASE_TIME dp_agg.lease_time of a throw-away cluster (1s; 0: every
#                      statement makes the round trip to the charger); on a
#                      cluster given by PGHOST/PGPORT, its own setting
#   and those of bench_lib.sh: PGHOST/PGPORT (use that cluster instead of a
#   throw-away one), DP_BENCH_PORT, DP_BENCH_SHARED_BUFFERS, DP_BENCH_SKIP_BUILD
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib.sh"
. "$top/test/bench/bench_lib.sh"

secs=${DP_BENCH_SECONDS:-30}
rounds=${DP_BENCH_ROUNDS:-3}
clients=${DP_BENCH_CLIENTS:-8}
threads=${DP_BENCH_THREADS:-2}
protocol=${DP_BENCH_PROTOCOL:-simple}
kinds=${DP_BENCH_KINDS:-native dp prepay basic rdp pld solo shared}
prepay=${DP_BENCH_PREPAY:-32}
lease_time=${DP_BENCH_LEASE_TIME:-1s}
pgbench="$DP_PG_BIN/pgbench"

work=$(mktemp -d /tmp/dp_agg_tput.XXXXXX)
trap 'dp_bench_cleanup; rm -rf "$work"' EXIT
dp_bench_cluster "$top"
dp_bench_role
# leases (doc/budgets.md, "Leases"), on the throw-away cluster: the charger's
# setting turns them on
if [ -n "${DP_BENCH_DIR:-}" ]; then
    "$DP_PSQL" -X -q -c "ALTER SYSTEM SET dp_agg.lease_time = '$lease_time'" -c "SELECT pg_reload_conf()" >/dev/null
    sleep 0.5
fi

dp_bench_t1000
"$DP_PSQL" -X -q -v ON_ERROR_STOP=1 <<'SQL'
SET client_min_messages = warning;
-- the shared budgets: two protected copies, a group, a relation's budget
DROP TABLE IF EXISTS dp_bench_pa, dp_bench_pb;
CREATE TABLE dp_bench_pa AS SELECT * FROM dp_bench_t1000;
CREATE TABLE dp_bench_pb AS SELECT * FROM dp_bench_t1000;
VACUUM (FREEZE, ANALYZE) dp_bench_pa, dp_bench_pb;
SELECT dp_agg.protect('dp_bench_pa') \g /dev/null
SELECT dp_agg.protect('dp_bench_pb') \g /dev/null
SELECT NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'dp_bench_team') AS missing \gset
\if :missing
CREATE ROLE dp_bench_team;
CREATE ROLE dp_bench_member IN ROLE dp_bench_team;
CREATE ROLE dp_bench_solo;
\endif
SELECT dp_agg.set_budget('dp_bench_solo', 1e15, 0.5) \g /dev/null
SELECT dp_agg.set_budget('dp_bench_member', 1e15, 0.5) \g /dev/null
SELECT dp_agg.set_group_budget('dp_bench_team', 1e15, 0.5) \g /dev/null
SELECT dp_agg.set_relation_budget('dp_bench_pb', 1e15, 0.5) \g /dev/null
GRANT SELECT ON dp_bench_pa TO dp_bench_solo;
GRANT SELECT ON dp_bench_pb TO dp_bench_member;
SQL

history=${DP_BENCH_HISTORY:-2000000}
"$DP_PSQL" -X -q -v ON_ERROR_STOP=1 <<'SQL'
SELECT NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'dp_bench_pld') AS missing \gset
\if :missing
CREATE ROLE dp_bench_pld;
\endif
SELECT NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'dp_bench_rdp') AS missing \gset
\if :missing
CREATE ROLE dp_bench_rdp;
\endif
SELECT NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'dp_bench_prepay') AS missing \gset
\if :missing
CREATE ROLE dp_bench_prepay;
\endif
SELECT dp_agg.set_budget('dp_bench_prepay', 1e15, 0.5) \g /dev/null
GRANT SELECT ON dp_bench_t1000 TO dp_bench_prepay;
SELECT dp_agg.set_budget('dp_bench_pld', 44.1, 1e-6, 'pld') \g /dev/null
SELECT dp_agg.reset_budget('dp_bench_pld') \g /dev/null
SELECT dp_agg.set_budget('dp_bench_rdp', 1000, 1e-6, 'rdp') \g /dev/null
SELECT dp_agg.reset_budget('dp_bench_rdp') \g /dev/null
GRANT SELECT ON dp_bench_t1000 TO dp_bench_pld, dp_bench_rdp;
SQL

native_sql='SELECT count(x), sum(x) FROM dp_bench_t1000;'
dp_sql='SELECT dp_count(x, 1.0), dp_sum(x, 0, 100, 1.0) FROM dp_bench_t1000;'
gauss_sql='SELECT dp_count(x, 0.01, 1e-10), dp_sum(x, 0, 100, 0.01, 1e-10) FROM dp_bench_t1000;'
echo "$native_sql" > "$work/native.sql"
echo "$dp_sql" > "$work/dp.sql"
echo "$dp_sql" > "$work/prepay.sql"
echo "$gauss_sql" > "$work/basic.sql"
echo "$gauss_sql" > "$work/rdp.sql"
echo "$gauss_sql" > "$work/pld.sql"
echo "SELECT dp_count(x, 1.0), dp_sum(x, 0, 100, 1.0) FROM dp_bench_pa;" > "$work/solo.sql"
echo "SELECT dp_count(x, 1.0), dp_sum(x, 0, 100, 1.0) FROM dp_bench_pb;" > "$work/shared.sql"
has_kind() { case " $kinds " in *" $1 "*) return 0 ;; esac; return 1; }

# the statement's curve and releases by kind, from one charge of it
PGOPTIONS="-c role=dp_bench_rdp" "$DP_PSQL" -X -q -v ON_ERROR_STOP=1 -c "$gauss_sql" >/dev/null
"$DP_PSQL" -X -q -v ON_ERROR_STOP=1 <<'SQL'
DROP TABLE IF EXISTS dp_bench_history;
CREATE TABLE dp_bench_history AS
SELECT l.epsilon, l.delta, l.rdp, b.pld
FROM dp_agg.ledger l, dp_agg.budget b
WHERE l.role = 'dp_bench_rdp'::regrole AND l.kind = 'charge' AND b.role = l.role
ORDER BY l.id DESC LIMIT 1;
SQL

# history ROLE: its budget row as after $history charges of the statement
history() {
    "$DP_PSQL" -X -q -v ON_ERROR_STOP=1 -v role="$1" -v n="$history" <<'SQL'
UPDATE dp_agg.budget b
SET epsilon_spent = h.epsilon * :n, delta_spent = h.delta * :n,
    rdp = (SELECT array_agg(c * :n ORDER BY i) FROM unnest(h.rdp) WITH ORDINALITY u(c, i)),
    pld = (SELECT jsonb_agg(e || jsonb_build_object('count', :n)) FROM jsonb_array_elements(h.pld) e)
FROM dp_bench_history h
WHERE b.role = :'role'::regrole;
SQL
}
history dp_bench_rdp
history dp_bench_pld
if has_kind pld; then
    dp_log "the pld role's first charge composes its history ($history statements)"
    PGOPTIONS="-c role=dp_bench_pld" "$DP_PSQL" -X -q -v ON_ERROR_STOP=1 -c "$gauss_sql" >/dev/null
fi

# charges ROLE: the statements its ledger rows charged
charges() {
    "$DP_PSQL" -X -Atc "SELECT coalesce(sum(statements), 0) FROM dp_agg.ledger WHERE role = '$1'::regrole AND kind = 'charge'"
}

# the role each statement runs as
role_of() {
    case $1 in
        pld) echo dp_bench_pld ;;
        prepay) echo dp_bench_prepay ;;
        rdp) echo dp_bench_rdp ;;
        solo) echo dp_bench_solo ;;
        shared) echo dp_bench_member ;;
        *) echo dp_bench ;;
    esac
}

# the postmaster's PID when the cluster runs on this machine (for /proc), else empty
postmaster=$(head -1 "$("$DP_PSQL" -X -Atc 'SHOW data_directory')/postmaster.pid" 2>/dev/null || true)
[ -n "$postmaster" ] && [ -e "/proc/$postmaster/stat" ] || postmaster=
usage="python3 $top/test/bench/proc_usage.py"

# run KIND SECONDS [LOG-PREFIX]: one pgbench run as dp_bench; prints its TPS.
# A run with a log prefix also adds to $work/usage.KIND the CPU time and the
# context switches of the server's processes between a second after its start
# and a second before its end, and the transactions logged in between
# (proc_usage.py watch, started before pgbench).
run() {
    local kind=$1 t=$2 prefix=${3:-} opts pid t0 t1 watcher
    local log=()
    opts="-c role=$(role_of "$kind")"
    [ "$kind" = prepay ] && opts="$opts -c dp_agg.prepay=$prepay"
    [ -n "$prefix" ] && log=(--log "--log-prefix=$prefix")
    case $kind in rdp|pld) history "$(role_of "$kind")" ;; esac
    watcher=
    rm -f "$work/usage.times" "$work/usage.ready"
    if [ -n "$prefix" ] && [ -n "$postmaster" ] && [ "$t" -ge 4 ]; then
        $usage watch "$postmaster" 1 $((t - 2)) "$work/usage" &
        watcher=$!
        for _ in $(seq 100); do [ -e "$work/usage.ready" ] && break; sleep 0.1; done
    fi
    (cd "$work" && PGOPTIONS="$opts" exec "$pgbench" -n -M "$protocol" \
        -c "$clients" -j "$threads" -T "$t" -f "$work/$kind.sql" "${log[@]}" > "$work/pgbench.out" 2>&1) &
    pid=$!
    if ! wait "$pid" || grep -qiE 'aborted|error' "$work/pgbench.out"; then
        cat "$work/pgbench.out" >&2
        dp_log "pgbench failed ($kind)"
        return 1
    fi
    if [ -n "$watcher" ] && wait "$watcher" && [ -s "$work/usage.times" ]; then
        read -r t0 t1 < "$work/usage.times"
        $usage diff "$work/usage.before" "$work/usage.after" "$t0" "$t1" "$prefix".* >> "$work/usage.$kind"
    fi
    sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$work/pgbench.out" | tail -1
}

dp_log "warm-up: 3 s of each statement"
for kind in $kinds; do
    run "$kind" 3 >/dev/null
done

before=$(charges dp_bench)
before_prepay=$(charges dp_bench_prepay)
before_rdp=$(charges dp_bench_rdp)
before_pld=$(charges dp_bench_pld)
before_solo=$(charges dp_bench_solo)
before_shared=$(charges dp_bench_member)
reversed=$(echo $kinds | tr ' ' '\n' | tac | tr '\n' ' ')
declare -A tps_of
for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) = 1 ]; then order=$kinds; else order=$reversed; fi
    for kind in $order; do
        tps=$(run "$kind" "$secs" "$work/log.$kind.$r")
        dp_log "round $r/$rounds, $kind: ${tps%.*} tps"
        tps_of[$kind]="${tps_of[$kind]:-} $tps"
    done
done
after=$(charges dp_bench)
after_prepay=$(charges dp_bench_prepay)
after_rdp=$(charges dp_bench_rdp)
after_pld=$(charges dp_bench_pld)
after_solo=$(charges dp_bench_solo)
after_shared=$(charges dp_bench_member)

DP_NATIVE_SQL=$native_sql DP_DP_SQL=$dp_sql DP_GAUSS_SQL=$gauss_sql DP_CHARGED=$((after - before)) \
DP_CHARGED_PREPAY=$((after_prepay - before_prepay)) DP_TPS_PREPAY="${tps_of[prepay]:-}" DP_PREPAY=$prepay \
DP_CHARGED_PLD=$((after_pld - before_pld)) DP_CHARGED_RDP=$((after_rdp - before_rdp)) \
DP_CHARGED_SOLO=$((after_solo - before_solo)) DP_CHARGED_SHARED=$((after_shared - before_shared)) \
DP_TPS_NATIVE="${tps_of[native]:-}" DP_TPS_DP="${tps_of[dp]:-}" DP_TPS_RDP="${tps_of[rdp]:-}" \
DP_TPS_BASIC="${tps_of[basic]:-}" DP_TPS_PLD="${tps_of[pld]:-}" DP_TPS_SOLO="${tps_of[solo]:-}" \
DP_TPS_SHARED="${tps_of[shared]:-}" DP_HISTORY=$history DP_KINDS="$kinds" \
DP_SECS=$secs DP_ROUNDS=$rounds DP_CLIENTS=$clients DP_THREADS=$threads DP_PROTOCOL=$protocol \
DP_TOP=$top python3 - "$work" <<'PY'
import glob, os, statistics, sys

work = sys.argv[1]
env = os.environ


def latencies(kind):
    lat = []
    for path in glob.glob(os.path.join(work, f"log.{kind}.*")):
        with open(path) as f:
            for line in f:
                fields = line.split()
                # client_id transaction_no time_us script_no time_epoch time_us...
                lat.append(int(fields[2]) / 1000.0)
    lat.sort()
    return lat


def pct(sorted_values, p):
    """nearest-rank percentile"""
    k = max(0, min(len(sorted_values) - 1, -(-len(sorted_values) * p // 100) - 1))
    return sorted_values[int(k)]


kinds = env["DP_KINDS"].split()
res = {}
for kind in kinds:
    lat = latencies(kind)
    tps = [float(t) for t in env[f"DP_TPS_{kind.upper()}"].split()]
    res[kind] = dict(n=len(lat), tps=statistics.median(tps), tps_all=tps,
                     p50=pct(lat, 50), p99=pct(lat, 99))

names = dict(native="built-in", dp="dp_agg", prepay="dp_agg, prepaid", basic="basic", rdp="rdp", pld="pld",
             solo="solo (one budget)", shared="shared (three budgets)")
print()
for kind in kinds:
    print(f"Rounds (TPS), {names[kind]}: " + ", ".join(f"{t:.0f}" for t in res[kind]["tps_all"]))
n_of = lambda k: res[k]["n"] if k in res else 0
checks = [("dp_bench", int(env["DP_CHARGED"]), n_of("dp") + n_of("basic")),
          ("dp_bench_rdp", int(env["DP_CHARGED_RDP"]), n_of("rdp")),
          ("dp_bench_pld", int(env["DP_CHARGED_PLD"]), n_of("pld")),
          ("dp_bench_solo", int(env["DP_CHARGED_SOLO"]), n_of("solo")),
          ("dp_bench_member", int(env["DP_CHARGED_SHARED"]), n_of("shared"))]
ok = all(charged == logged for _, charged, logged in checks)
# prepaid: every transaction charged; at most prepay - 1 more per client and
# pgbench run (the warm-up and the rounds)
charged_prepay, logged_prepay = int(env["DP_CHARGED_PREPAY"]), n_of("prepay")
unused_max = (int(env["DP_PREPAY"]) - 1) * int(env["DP_CLIENTS"]) * (int(env["DP_ROUNDS"]) + 1)
ok_prepay = logged_prepay <= charged_prepay <= logged_prepay + unused_max
print("Transactions logged / charged in the ledger: " +
      ", ".join(f"{role} {logged}/{charged}" for role, charged, logged in checks) +
      ("" if ok else "  <-- MISMATCH"))
if "prepay" in res:
    print(f"Prepaid: transactions logged {logged_prepay}, statements charged {charged_prepay} "
          f"(at most {unused_max} prepaid and not run)" + ("" if ok_prepay else "  <-- MISMATCH"))
print()
print(f"Throughput with pgbench, {env['DP_CLIENTS']} clients ({env['DP_THREADS']} threads, "
      f"-M {env['DP_PROTOCOL']}), a 1,000-row table; "
      f"{env['DP_ROUNDS']} rounds of {env['DP_SECS']} s of each statement, alternating; "
      "TPS: median of the rounds; latency: percentiles of every transaction; admitted: "
      "the statements of all the rounds (each charged once in the ledger).")
print()
print("| statement | accounting (deciding certificate) | TPS | / built-in | admitted | p50 latency (ms) | p99 latency (ms) |")
print("|---|---|---:|---:|---:|---:|---:|")
base = res["native"]["tps"] if "native" in res else float("nan")
hist = f"{int(env['DP_HISTORY']):,}"
rows = [("native", f"built-in: `{env['DP_NATIVE_SQL'].rstrip(';')}`", "none"),
        ("dp", f"dp_agg: `{env['DP_DP_SQL'].rstrip(';')}`", "basic"),
        ("prepay", "dp_agg, the same", f"basic; dp_agg.prepay = {env['DP_PREPAY']}"),
        ("basic", f"Gaussian: `{env['DP_GAUSS_SQL'].rstrip(';')}`", "basic (the sums)"),
        ("rdp", "Gaussian, the same", f"rdp (Renyi; history {hist} statements)"),
        ("pld", "Gaussian, the same", f"pld (PLD frontier; history {hist} statements)"),
        ("solo", "dp_agg, the same over a protected copy", "basic; the role's budget"),
        ("shared", "dp_agg, the same over another protected copy",
         "basic; the role's, its group's and the relation's budgets")]
for kind, what, acct in rows:
    if kind not in res:
        continue
    r = res[kind]
    print(f"| {what} | {acct} | {r['tps']:.0f} | {r['tps'] / base:.3f} | {r['n']:,} | "
          f"{r['p50']:.3f} | {r['p99']:.3f} |")
print()
ratios = []
if "basic" in res:
    b = res["basic"]
    for k in ("rdp", "pld"):
        if k in res:
            ratios.append(f"{k} / basic: {res[k]['tps'] / b['tps']:.3f}")
if "dp" in res and "native" in res:
    ratios.append(f"dp_agg / built-in: {res['dp']['tps'] / base:.3f}")
if "prepay" in res and "native" in res:
    ratios.append(f"dp_agg prepaid / built-in: {res['prepay']['tps'] / base:.3f}")
if "shared" in res and "solo" in res:
    ratios.append(f"shared (three budgets) / solo (one budget): {res['shared']['tps'] / res['solo']['tps']:.3f}")
print("; ".join(ratios))

# where the server's CPU time went (proc_usage.py), per transaction
sys.path.insert(0, os.path.join(env["DP_TOP"], "test/bench"))
import proc_usage  # noqa: E402
usage = {}
for kind in kinds:
    path = os.path.join(work, f"usage.{kind}")
    d = proc_usage.summary([path]) if os.path.exists(path) else None
    if d:
        usage[kind] = d
if usage:
    print()
    print("Server CPU time (user and system, from /proc) and context switches per transaction, of the "
          "rounds from their second second to their second last, summed over the rounds:")
    print()
    print("| statement | backends (µs) | charger (µs) | WAL writer (µs) | others (µs) | in all (µs) "
          "| / built-in | voluntary switches | involuntary switches |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    base_cpu = sum(v[0] for v in usage["native"]["per_xact"].values()) if "native" in usage else 0
    base_cpu = base_cpu or float("nan")
    for kind, what, acct in rows:
        if kind not in usage:
            continue
        p = usage[kind]["per_xact"]
        cpu = sum(v[0] for v in p.values())
        print(f"| {names[kind]} | {p['backend'][0]:.0f} | {p['charger'][0]:.0f} | "
              f"{p['walwriter'][0]:.0f} | {p['other'][0]:.0f} | {cpu:.0f} | {cpu / base_cpu:.2f} | "
              f"{sum(v[1] for v in p.values()):.2f} | {sum(v[2] for v in p.values()):.2f} |")
PY

"$DP_PSQL" -X -q -c "SELECT dp_agg.drop_relation_budget('dp_bench_pb')" -c "DROP TABLE dp_bench_t1000, dp_bench_history, dp_bench_pa, dp_bench_pb" >/dev/null
echo
dp_bench_machine "$top"
