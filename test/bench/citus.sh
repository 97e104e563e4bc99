#!/bin/bash
# dp_agg benchmark on Citus: DP aggregates against the built-in ones on the
# same distributed table.  Not a pass/fail test.
#
#   test/bench/citus.sh
#   DP_BENCH_ROWS=200000 DP_BENCH_RUNS=3 test/bench/citus.sh   # smoke test
#   DP_BENCH_REPEATS=2 DP_BENCH_CACHED_CONNS=16 test/bench/citus.sh
#
# A coordinator and two workers on this machine (ports DP_BENCH_PORT ..
# DP_BENCH_PORT+2, 5667 by default), Citus as installed for PG_CONFIG or
# built from the source tarball DP_CITUS_TARBALL names, as the citus suite
# does (test/lib.sh), a table of DP_BENCH_ROWS rows (10,000,000) over 32
# shards, max_parallel_workers_per_gather = 0 on every node (equal plan
# shapes: no parallel scans on either side).  For each pair (native, DP) the
# time is the median of DP_BENCH_RUNS runs (5) of psql's \timing in one
# session, the queries alternating after one unmeasured run of each, the
# whole repeated DP_BENCH_REPEATS times (1); the DP side
# includes its price, its durable charge on the coordinator and the
# signature checks on the workers.  citus.max_cached_conns_per_worker is
# DP_BENCH_CACHED_CONNS (Citus's default, 1).  Prints a Markdown table with
# each side's median and range, the ratio DP / native of each pair and the
# load average before and after, then the machine description.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib.sh"

dp_install_deps
dp_build_install "$top"
if [ -n "${DP_CITUS_TARBALL:-}" ]; then
    dp_citus_install
fi
dp_citus_installed ||
    { echo "Citus is not installed for $PG_CONFIG: set DP_CITUS_TARBALL to its source tarball" >&2; exit 1; }
work=$(dp_copy_tree "$top")
trap 'rm -rf "$work"' EXIT
dp_as_postgres env DP_BENCH_ROWS="${DP_BENCH_ROWS:-10000000}" DP_BENCH_RUNS="${DP_BENCH_RUNS:-5}" \
    DP_BENCH_REPEATS="${DP_BENCH_REPEATS:-1}" DP_BENCH_CACHED_CONNS="${DP_BENCH_CACHED_CONNS:-1}" \
    python3 "$work/test/bench/citus_bench.py" "${DP_BENCH_PORT:-5667}"
