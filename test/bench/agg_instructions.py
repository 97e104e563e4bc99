#!/usr/bin/env python3
"""Measurement half of test/bench/aggregates_instructions.sh: the
instructions a statement costs its backend, counted by valgrind's callgrind,
DP aggregates against the built-in ones (the pairs of agg_bench.py).

For each statement, two sessions run it once and three times; each session's
backend writes its callgrind profile when it exits, and the difference of
their totals, halved, is the cost of one execution (parse, plan, guard,
price, charge, execute, noise, result), without the session's start.
Instruction counts do not depend on the load of the machine: they compare
the code run, not the waiting for a CPU (nor cache misses: the memory a
million groups' states take shows in time only, aggregates.sh).

Environment: DP_PSQL, DP_BENCH_ROWS, DP_BENCH_ONLY (a regular expression on
"groups, aggregate"), DP_CG_DIR (where the backends write their profiles),
and the libpq variables."""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agg_bench  # noqa: E402  (the aggregates and the session settings)

PSQL = os.environ.get("DP_PSQL", "psql")
ROWS = int(os.environ.get("DP_BENCH_ROWS", "200000"))
CG_DIR = os.environ["DP_CG_DIR"]
TABLE = "dp_bench_ins"

# groups: none; 1,000 with public and with private keys; ROWS / 10 groups of
# 10 rows (as the million groups of 10 rows of aggregates.sh)
GROUPINGS = [("none", "none"), ("1k", "1,000"), ("1k-p", "1,000, private keys"),
             ("many", f"{ROWS // 10:,}")]


def query(expr, grouping):
    if grouping == "none":
        return f"SELECT {expr} FROM {TABLE}"
    if grouping.startswith("1k"):
        return f"SELECT g1k, {expr} FROM {TABLE} GROUP BY g1k"
    return f"SELECT count(a) FROM (SELECT g10, {expr} AS a FROM {TABLE} GROUP BY g10) s"


def session(sql, grouping, times):
    """run sql `times` times in one session; the backend's pid"""
    script = agg_bench.SESSION.replace("SET ROLE dp_bench;", "SELECT pg_backend_pid();\nSET ROLE dp_bench;")
    script = script.replace("\\set ON_ERROR_STOP 1\n", "\\set ON_ERROR_STOP 1\n\\pset tuples_only on\n")
    script += "SET max_parallel_workers_per_gather = 0;\n" + agg_bench.keys(grouping)
    script += "\\o /dev/null\n" + (sql + ";\n") * times
    out = subprocess.run([PSQL, "-X", "-q", "-A"], input=script, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"psql failed: {out.stderr}")
    return int(out.stdout.split()[0])


def total(pid):
    """the instructions of a backend's whole life, from its profile"""
    path = os.path.join(CG_DIR, f"cg.{pid}")
    for _ in range(600):
        if os.path.exists(path) and os.path.getsize(path) > 0:
            break
        time.sleep(0.1)
    time.sleep(0.5)
    out = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no", path],
                         capture_output=True, text=True).stdout
    m = re.search(r"^\s*([\d,]+)\s.*PROGRAM TOTALS", out, re.M)
    if not m:
        sys.exit(f"no total in {path}")
    os.unlink(path)
    return int(m.group(1).replace(",", ""))


def per_execution(sql, grouping):
    return (total(session(sql, grouping, 3)) - total(session(sql, grouping, 1))) / 2


def main():
    only = re.compile(os.environ.get("DP_BENCH_ONLY", ""))
    rows = []
    for grouping, groups in GROUPINGS:
        for label, native, dp in agg_bench.AGGS:
            if not only.search(f"{groups}, {label}"):
                continue
            n = per_execution(query(native, grouping), grouping)
            d = per_execution(query(dp, grouping), grouping)
            rows.append((label, groups, n, d))
            sys.stderr.write(f"  {groups}, {label}: native {n / ROWS:.1f}, dp {d / ROWS:.1f} "
                             f"instructions per row, ratio {d / n:.3f}\n")
    print(f"\nInstructions per execution of each statement (callgrind, serial, {ROWS:,} rows; "
          "per row: divided by the rows read).\n")
    print("| aggregate | groups | built-in (instructions per row) | dp_agg (per row) "
          "| dp / built-in |")
    print("|---|---|---:|---:|---:|")
    for label, groups, n, d in rows:
        print(f"| {label} | {groups} | {n / ROWS:.1f} | {d / ROWS:.1f} | {d / n:.3f} |")


if __name__ == "__main__":
    main()
