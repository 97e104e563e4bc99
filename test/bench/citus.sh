#!/bin/bash
# dp_agg benchmark on Citus: DP aggregates against the built-in ones on the
# same distributed table.  Not a pass/fail test.
#
#   test/bench/citus.sh
#   DP_BENCH_ROWS=200000 DP_BENCH_RUNS=3 test/bench/citus.sh   # smoke test
#
# A coordinator and two workers on this machine (ports DP_BENCH_PORT ..
# DP_BENCH_PORT+2, 5667 by default), Citus as installed for PG_CONFIG or
# built from the source tarball DP_CITUS_TARBALL names, as the citus suite
# does (test/lib.sh), a table of DP_BENCH_ROWS rows
# (10,000,000) over 32 shards.  For each pair (native, DP) the time is the
# median of DP_BENCH_RUNS runs (5) of psql's \timing on one connection,
# the queries alternating after one unmeasured run of each; the DP side
# includes its price, its durable charge on the coordinator and the
# signature checks on the workers.  Prints a Markdown table with the ratio
# DP / native of each pair and the machine description.
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
    python3 "$work/test/bench/citus_bench.py" "${DP_BENCH_PORT:-5667}"
