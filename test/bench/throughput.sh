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
# Accounting (basic against pld): the same Gaussian statement
#     SELECT dp_count(x, 0.01, 1e-10), dp_sum(x, 0, 100, 0.01, 1e-10) FROM dp_bench_t1000
# charged under 'basic' accounting (role dp_bench, limits no run reaches)
# and under 'pld' accounting (role dp_bench_pld, limits (5, 1e-6): basic
# composition pays for 250 statements, the privacy loss distribution for
# about 300,000, so past the first 250 every charge is admitted by the PLD
# certificate).  Rounds of the four statements alternate.
#
# DP_BENCH_ROUNDS rounds of DP_BENCH_SECONDS seconds of each statement,
# alternating (built-in, DP, DP, built-in, ...), after a 3-second warm-up of
# each.  TPS is the median over the rounds (pgbench's figure, without
# connection time); the latencies are percentiles of all the transactions of
# all the rounds, from pgbench --log.  The ledger is checked: one charge per
# DP transaction.
#
# Ends with a Markdown table and the machine description.
#
# Environment:
#   DP_BENCH_SECONDS   seconds of each round (30)
#   DP_BENCH_ROUNDS    rounds of each statement (3)
#   DP_BENCH_CLIENTS   pgbench clients (8)
#   DP_BENCH_THREADS   pgbench threads (2)
#   DP_BENCH_PROTOCOL  pgbench -M: simple, extended or prepared (simple)
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
pgbench="$DP_PG_BIN/pgbench"

work=$(mktemp -d /tmp/dp_agg_tput.XXXXXX)
trap 'dp_bench_cleanup; rm -rf "$work"' EXIT
dp_bench_cluster "$top"
dp_bench_role

"$DP_PSQL" -X -q -v ON_ERROR_STOP=1 <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS dp_bench_t1000;
CREATE TABLE dp_bench_t1000 (id integer PRIMARY KEY, x integer NOT NULL);
SELECT setseed(0.5) \g /dev/null
INSERT INTO dp_bench_t1000 SELECT i, floor(random() * 101)::integer FROM generate_series(1, 1000) i;
VACUUM (FREEZE, ANALYZE) dp_bench_t1000;
GRANT SELECT ON dp_bench_t1000 TO dp_bench;
SQL

"$DP_PSQL" -X -q -v ON_ERROR_STOP=1 <<'SQL'
SELECT NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'dp_bench_pld') AS missing \gset
\if :missing
CREATE ROLE dp_bench_pld;
\endif
SELECT dp_agg.set_budget('dp_bench_pld', 5, 1e-6, 'pld') \g /dev/null
SELECT dp_agg.reset_budget('dp_bench_pld') \g /dev/null
GRANT SELECT ON dp_bench_t1000 TO dp_bench_pld;
SQL

native_sql='SELECT count(x), sum(x) FROM dp_bench_t1000;'
dp_sql='SELECT dp_count(x, 1.0), dp_sum(x, 0, 100, 1.0) FROM dp_bench_t1000;'
gauss_sql='SELECT dp_count(x, 0.01, 1e-10), dp_sum(x, 0, 100, 0.01, 1e-10) FROM dp_bench_t1000;'
echo "$native_sql" > "$work/native.sql"
echo "$dp_sql" > "$work/dp.sql"
echo "$gauss_sql" > "$work/basic.sql"
echo "$gauss_sql" > "$work/pld.sql"

# charges ROLE
charges() {
    "$DP_PSQL" -X -Atc "SELECT count(*) FROM dp_agg.ledger WHERE role = '$1'::regrole AND kind = 'charge'"
}

# the role each statement runs as
role_of() {
    if [ "$1" = pld ]; then echo dp_bench_pld; else echo dp_bench; fi
}

# run KIND SECONDS [LOG-PREFIX]: one pgbench run as dp_bench; prints its TPS
run() {
    local kind=$1 t=$2 prefix=${3:-} out
    local log=()
    [ -n "$prefix" ] && log=(--log "--log-prefix=$prefix")
    if ! out=$(cd "$work" && PGOPTIONS="-c role=$(role_of "$kind")" "$pgbench" -n -M "$protocol" \
            -c "$clients" -j "$threads" -T "$t" -f "$work/$kind.sql" "${log[@]}" 2>&1) \
       || echo "$out" | grep -qiE 'aborted|error'; then
        echo "$out" >&2
        dp_log "pgbench failed ($kind)"
        return 1
    fi
    echo "$out" | sed -n 's/^tps = \([0-9.]*\) .*/\1/p' | tail -1
}

dp_log "warm-up: 3 s of each statement"
for kind in native dp basic pld; do
    run "$kind" 3 >/dev/null
done

before=$(charges dp_bench)
before_pld=$(charges dp_bench_pld)
declare -A tps_of
for r in $(seq 1 "$rounds"); do
    if [ $((r % 2)) = 1 ]; then order="native dp basic pld"; else order="pld basic dp native"; fi
    for kind in $order; do
        tps=$(run "$kind" "$secs" "$work/log.$kind.$r")
        dp_log "round $r/$rounds, $kind: ${tps%.*} tps"
        tps_of[$kind]="${tps_of[$kind]:-} $tps"
    done
done
after=$(charges dp_bench)
after_pld=$(charges dp_bench_pld)

DP_NATIVE_SQL=$native_sql DP_DP_SQL=$dp_sql DP_GAUSS_SQL=$gauss_sql DP_CHARGED=$((after - before)) \
DP_CHARGED_PLD=$((after_pld - before_pld)) \
DP_TPS_NATIVE="${tps_of[native]}" DP_TPS_DP="${tps_of[dp]}" \
DP_TPS_BASIC="${tps_of[basic]}" DP_TPS_PLD="${tps_of[pld]}" \
DP_SECS=$secs DP_ROUNDS=$rounds DP_CLIENTS=$clients DP_THREADS=$threads DP_PROTOCOL=$protocol \
python3 - "$work" <<'PY'
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


res = {}
for kind in ("native", "dp", "basic", "pld"):
    lat = latencies(kind)
    tps = [float(t) for t in env[f"DP_TPS_{kind.upper()}"].split()]
    res[kind] = dict(n=len(lat), tps=statistics.median(tps), tps_all=tps,
                     p50=pct(lat, 50), p99=pct(lat, 99))

print()
print("Rounds (TPS): built-in " + ", ".join(f"{t:.0f}" for t in res["native"]["tps_all"])
      + "; dp_agg " + ", ".join(f"{t:.0f}" for t in res["dp"]["tps_all"]))
print("Rounds (TPS): basic " + ", ".join(f"{t:.0f}" for t in res["basic"]["tps_all"])
      + "; pld " + ", ".join(f"{t:.0f}" for t in res["pld"]["tps_all"]))
charged = int(env["DP_CHARGED"])
charged_pld = int(env["DP_CHARGED_PLD"])
dp_n = res["dp"]["n"] + res["basic"]["n"]
print(f"Transactions logged: built-in {res['native']['n']}, dp_agg {dp_n}, pld {res['pld']['n']}; "
      f"ledger: {charged} and {charged_pld} DP statements charged"
      + ("" if charged == dp_n and charged_pld == res["pld"]["n"] else "  <-- MISMATCH"))
print()
print(f"Throughput with pgbench, {env['DP_CLIENTS']} clients ({env['DP_THREADS']} threads, "
      f"-M {env['DP_PROTOCOL']}), one role, a 1,000-row table; "
      f"{env['DP_ROUNDS']} rounds of {env['DP_SECS']} s of each statement, alternating; "
      "TPS: median of the rounds; latency: percentiles of every transaction.")
print()
print("| statement | TPS | p50 latency (ms) | p99 latency (ms) |")
print("|---|---:|---:|---:|")
n, d = res["native"], res["dp"]
print(f"| built-in: `{env['DP_NATIVE_SQL'].rstrip(';')}` | {n['tps']:.0f} | {n['p50']:.3f} | {n['p99']:.3f} |")
print(f"| dp_agg: `{env['DP_DP_SQL'].rstrip(';')}` | {d['tps']:.0f} | {d['p50']:.3f} | {d['p99']:.3f} |")
print(f"| dp_agg / built-in | {d['tps'] / n['tps']:.3f} | {d['p50'] / n['p50']:.2f} | {d['p99'] / n['p99']:.2f} |")
print()
print(f"Accounting: `{env['DP_GAUSS_SQL'].rstrip(';')}`")
print()
print("| accounting | TPS | p50 latency (ms) | p99 latency (ms) |")
print("|---|---:|---:|---:|")
b, p = res["basic"], res["pld"]
print(f"| basic | {b['tps']:.0f} | {b['p50']:.3f} | {b['p99']:.3f} |")
print(f"| pld | {p['tps']:.0f} | {p['p50']:.3f} | {p['p99']:.3f} |")
print(f"| pld / basic | {p['tps'] / b['tps']:.3f} | {p['p50'] / b['p50']:.2f} | {p['p99'] / b['p99']:.2f} |")
PY

"$DP_PSQL" -X -q -c "DROP TABLE dp_bench_t1000"
echo
dp_bench_machine "$top"
