#!/bin/bash
# dp_agg benchmark: the analyst's statistics against the built-in
# aggregates.  Not a pass/fail test.
#
#   test/bench/statistics.sh
#   DP_BENCH_ROWS=200000 DP_BENCH_RUNS=3 test/bench/statistics.sh   # smoke test
#
# Times dp_var, dp_stddev (against var_pop and stddev_pop), dp_median and
# dp_percentile (against percentile_cont, which sorts every group's rows),
# the forms without bounds (bounds estimated in the same pass) and
# dp_bounds (against min and max), without GROUP BY and with 1,000 groups,
# serial and with 2 parallel workers, on the table of aggregates.sh (10
# million rows by default).  The method, the environment and the output
# are those of aggregates.sh (agg_bench.py with DP_BENCH_SET=statistics).
# Targets: dp_percentile within 1.0x of percentile_cont, dp_var
# within 1.2x of var_pop, at 10 million rows and with 1,000 groups.
export DP_BENCH_SET=statistics
exec "$(cd "$(dirname "$0")" && pwd)/aggregates.sh" "$@"
