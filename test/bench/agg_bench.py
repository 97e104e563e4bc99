#!/usr/bin/env python3
"""Measurement half of test/bench/aggregates.sh (which sets up the cluster,
the role dp_bench and the table dp_bench_agg, and passes the settings in the
environment: DP_PSQL, DP_BENCH_ROWS, DP_BENCH_RUNS, DP_BENCH_WORK_MEM and the
libpq variables).

All timed statements run in one psql session as the role dp_bench, with
\\timing; the results go to /dev/null.  Prints progress to stderr, and to
stdout the raw timings and then a Markdown table of medians."""
import json
import os
import re
import statistics
import subprocess
import sys
import time

PSQL = os.environ.get("DP_PSQL", "psql")
ROWS = int(os.environ.get("DP_BENCH_ROWS", "10000000"))
RUNS = int(os.environ.get("DP_BENCH_RUNS", "5"))
WORK_MEM = os.environ.get("DP_BENCH_WORK_MEM", "8GB")
TABLE = "dp_bench_agg"
LARGE = min(1000000, ROWS)

# label, native expression, DP expression (epsilon 1 each; dp_count(*)
# takes it from dp_agg.epsilon)
AGGS = [
    ("count(*)", "count(*)", "dp_count(*)"),
    ("count(bigint)", "count(b)", "dp_count(b, 1.0)"),
    ("sum(bigint)", "sum(b)", "dp_sum(b, 0, 1000, 1.0)"),
    ("sum(double)", "sum(d)", "dp_sum(d, 0, 1000, 1.0)"),
    ("avg(bigint)", "avg(b)", "dp_avg(b, 0, 1000, 1.0)"),
    ("avg(double)", "avg(d)", "dp_avg(d, 0, 1000, 1.0)"),
]
# "1k-p": the same 1,000 groups with private keys: the DP statement also
# selects its groups privately (dp_agg.group_keys = 'private', selection
# epsilon 1 and delta 1e-6: dp_select in its HAVING), the native one is the
# plain GROUP BY.  Every other line has public keys.
GROUPINGS = [("none", "none"), ("1k", f"{1000:,}"), ("1k-p", f"{1000:,}, private keys"),
             ("1m", f"{LARGE:,}"),
             ("none-s", "none, BERNOULLI (10)"), ("1k-s", f"{1000:,}, BERNOULLI (10)")]

# DP_BENCH_SET=statistics (test/bench/statistics.sh): the analyst's
# statistics against their built-in counterparts, without GROUP
# BY and with 1,000 groups.  percentile_cont sorts each group's rows (an
# ordered-set aggregate, never parallel); dp_percentile adds each row to a
# quantile tree of at most 16 kB.  The forms without bounds (bounds
# estimated) are timed against the same built-in aggregate.
STAT_AGGS = [
    ("var_pop(bigint)", "var_pop(b)", "dp_var(b, 0, 1000, 1.0)"),
    ("var_pop(double)", "var_pop(d)", "dp_var(d, 0, 1000, 1.0)"),
    ("stddev_pop(double)", "stddev_pop(d)", "dp_stddev(d, 0, 1000, 1.0)"),
    ("var_pop(double), no bounds", "var_pop(d)", "dp_var(d)"),
    ("median(double)", "percentile_cont(0.5) WITHIN GROUP (ORDER BY d)", "dp_median(d, 0, 1000, 1.0)"),
    ("percentile(bigint)", "percentile_cont(0.9) WITHIN GROUP (ORDER BY b)",
     "dp_percentile(b, 0.9, 0, 1000, 1.0)"),
    ("3 percentiles(double)", "percentile_cont(ARRAY[0.1, 0.5, 0.9]) WITHIN GROUP (ORDER BY d)",
     "dp_percentile(d, ARRAY[0.1, 0.5, 0.9], 0, 1000, 1.0)"),
    ("median(double), no bounds", "percentile_cont(0.5) WITHIN GROUP (ORDER BY d)", "dp_median(d)"),
    ("min, max / dp_bounds(double)", "min(d), max(d)", "dp_bounds(d, 1.0)"),
]
if os.environ.get("DP_BENCH_SET") == "statistics":
    AGGS = STAT_AGGS
    GROUPINGS = GROUPINGS[:2]
SAMPLE = "TABLESAMPLE BERNOULLI (10)"
MODES = [("serial", 0), ("2 workers", 2)]

SESSION = f"""\\set ON_ERROR_STOP 1
SET work_mem = '{WORK_MEM}';
SET jit = off;
SET dp_agg.epsilon = '1';
SET dp_agg.selection_epsilon = '1';
SET dp_agg.selection_delta = '1e-6';
SET ROLE dp_bench;
-- the role's own setting (bench_lib.sh) applies at login, not to SET ROLE
SET dp_agg.group_keys = 'public';
"""

PRIVATE = "SET dp_agg.group_keys = 'private';\n"
PUBLIC = "SET dp_agg.group_keys = 'public';\n"


def keys(grouping):
    """the setting of a configuration's group keys"""
    return PRIVATE if grouping == "1k-p" else PUBLIC


def query(expr, grouping):
    source = f"{TABLE} {SAMPLE}" if grouping.endswith("-s") else TABLE
    if grouping.startswith("none"):
        return f"SELECT {expr} FROM {source}"
    if grouping.startswith("1k"):
        return f"SELECT g1k, {expr} FROM {source} GROUP BY g1k"
    return f"SELECT count(a) FROM (SELECT g1m, {expr} AS a FROM {source} GROUP BY g1m) s"


def configs():
    """Every configuration, or those whose "mode, groups, aggregate" matches
    the regular expression DP_BENCH_ONLY."""
    only = re.compile(os.environ.get("DP_BENCH_ONLY", ""))
    for mode, workers in MODES:
        for grouping, groups in GROUPINGS:
            for label, native, dp in AGGS:
                if only.search(f"{mode}, {groups}, {label}"):
                    yield (mode, workers, grouping, label,
                           query(native, grouping), query(dp, grouping))


def run_psql(script, on_line=None):
    p = subprocess.Popen([PSQL, "-X", "-q"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    p.stdin.write(script)
    p.stdin.close()
    lines = []
    for line in p.stdout:
        lines.append(line.rstrip("\n"))
        if on_line:
            on_line(line.rstrip("\n"))
    if p.wait() != 0:
        sys.exit(f"psql failed (exit {p.returncode})")
    return lines


def plan_summary(plan_json):
    """'serial, hash' / '2 workers, partial hash, finalize sort' ... from
    EXPLAIN (FORMAT JSON); ', spills' if a hash aggregation plans to spill to
    disk."""
    names = {"Hashed": "hash", "Sorted": "sort", "Mixed": "mixed", "Plain": "plain"}
    workers = 0
    grouping = []           # (partial mode, strategy) of grouping nodes, top down
    spills = False

    def walk(node):
        nonlocal workers, spills
        if "Workers Planned" in node:
            workers = max(workers, node["Workers Planned"])
        if node.get("Node Type") == "Aggregate":
            if node.get("Planned Partitions", 0) > 0:
                spills = True
            if node.get("Group Key"):
                grouping.append((node.get("Partial Mode", "Simple"),
                                 names.get(node.get("Strategy"), "?")))
        for child in node.get("Plans", []):
            walk(child)

    walk(plan_json[0]["Plan"])
    s = f"{workers} worker{'s' if workers > 1 else ''}" if workers else "serial"
    partial = [st for mode, st in grouping if mode == "Partial"]
    final = [st for mode, st in grouping if mode != "Partial"]
    if partial and final and partial[0] != final[0]:
        s += f", partial {partial[0]}, finalize {final[0]}"
    elif partial:
        s += f", partial {partial[0]}"
    elif final:
        s += f", {final[0]}"
    if spills:
        s += ", spills"
    return s


def explain_all(cfgs):
    script = SESSION + "\\pset format unaligned\n\\pset tuples_only on\n"
    mode = None
    for i, (m, workers, _, _, qn, qd) in enumerate(cfgs):
        if m != mode:
            script += f"SET max_parallel_workers_per_gather = {workers};\n"
            mode = m
        script += keys(cfgs[i][2])
        for kind, q in (("native", qn), ("dp", qd)):
            script += f"\\echo @@ {i} {kind}\nEXPLAIN (FORMAT JSON) {q};\n"
    plans, cur, buf = {}, None, []
    for line in run_psql(script) + ["@@ end end"]:
        if line.startswith("@@ "):
            if cur is not None:
                plans[cur] = plan_summary(json.loads("\n".join(buf)))
            _, i, kind = line.split()
            cur, buf = (None if i == "end" else (int(i), kind)), []
        elif cur is not None:
            buf.append(line)
    return plans


def cpu_probe():
    """psql lines that echo the CPU ticks (utime + stime) of this session's
    backend and the reaped children's ticks of the postmaster (its parallel
    workers, once they exit), read from /proc, when the server is local;
    empty if it is not."""
    pm = os.environ.get("DP_BENCH_POSTMASTER_PID", "")
    if not pm or not os.path.exists(f"/proc/{pm}/stat"):
        return ""
    return ("\\! echo @@cpu $(cut -d' ' -f14,15 /proc/$DP_BENCH_BACKEND/stat) "
            f"$(cut -d' ' -f16,17 /proc/{pm}/stat)\n")


def time_all(cfgs):
    probe = cpu_probe()
    script = SESSION.replace("SET ROLE dp_bench;", "SELECT pg_backend_pid() AS backend \\gset\n\\setenv DP_BENCH_BACKEND :backend\nSET ROLE dp_bench;")
    script += "\\o /dev/null\n\\timing on\n"
    mode = None
    for i, (m, workers, _, _, qn, qd) in enumerate(cfgs):
        if m != mode:
            script += f"SET max_parallel_workers_per_gather = {workers};\n"
            mode = m
        script += keys(cfgs[i][2])
        order = [("warm", "native", qn), ("warm", "dp", qd)]
        for r in range(RUNS):
            pair = [("native", qn), ("dp", qd)]
            if r % 2:
                pair.reverse()
            order += [(r, k, q) for k, q in pair]
        for r, kind, q in order:
            script += f"\\echo @@ {i} {r} {kind}\n{probe}{q};\n{probe}"
        script += f"\\echo @@ {i} done done\n"
    times = {}
    cpu = {}
    pending = None
    ticks = []
    started = time.time()
    hz = os.sysconf("SC_CLK_TCK")

    def on_line(line):
        nonlocal pending, ticks, last
        if line.startswith("@@cpu "):
            ticks.append(sum(int(x) for x in line.split()[1:]))
            if len(ticks) == 2:
                i, r, kind = last
                if r != "warm":
                    cpu.setdefault((i, kind), []).append((ticks[1] - ticks[0]) * 1000.0 / hz)
                ticks = []
            return
        if line.startswith("@@ "):
            _, i, r, kind = line.split()
            if r == "done":
                m, _, g, label, _, _ = cfgs[int(i)]
                sys.stderr.write(f"  [{int(i) + 1}/{len(cfgs)}] {m}, groups {g}, {label}: "
                                 f"native {med(times, int(i), 'native'):.1f} ms, "
                                 f"dp {med(times, int(i), 'dp'):.1f} ms "
                                 f"({time.time() - started:.0f} s)\n")
                pending = None
            else:
                pending = (int(i), r, kind)
                last = pending
        elif pending and line.startswith("Time: "):
            i, r, kind = pending
            if r != "warm":
                times.setdefault((i, kind), []).append(float(line.split()[1]))
            pending = None

    last = None
    run_psql(script, on_line)
    return times, cpu


def med(times, i, kind):
    return statistics.median(times[(i, kind)])


def ledger_count():
    out = subprocess.run([PSQL, "-X", "-Atc",
                          "SELECT count(*) FROM dp_agg.ledger "
                          "WHERE role = 'dp_bench'::regrole AND kind = 'charge'"],
                         check=True, capture_output=True, text=True).stdout
    return int(out.strip())


def main():
    cfgs = list(configs())
    if not cfgs:
        sys.exit("DP_BENCH_ONLY matches no configuration")
    sys.stderr.write(f"== plans of {len(cfgs)} query pairs\n")
    plans = explain_all(cfgs)
    before = ledger_count()
    sys.stderr.write(f"== timing: {len(cfgs)} query pairs, 1 + {RUNS} runs each\n")
    times, cpu = time_all(cfgs)
    charged = ledger_count() - before
    expected = len(cfgs) * (RUNS + 1)

    print()
    print("Raw timings in ms (in the order run; native and DP alternate):")
    for i, (m, _, g, label, qn, qd) in enumerate(cfgs):
        print(f"- {m}, groups {dict(GROUPINGS)[g]}, {label}: native "
              + " ".join(f"{t:.1f}" for t in times[(i, 'native')])
              + "; dp " + " ".join(f"{t:.1f}" for t in times[(i, 'dp')]))
    print()
    print(f"Ledger: {charged} DP statements charged to dp_bench, {expected} run"
          + ("" if charged == expected else "  <-- MISMATCH"))
    print()
    print(f"dp_agg vs built-in aggregates{' (statistics)' if AGGS is STAT_AGGS else ''}, {ROWS:,} rows (bigint b, double precision d; "
          f"DP bounds [0, 1000], epsilon 1), median of {RUNS} runs each, "
          f"work_mem = {WORK_MEM}, jit = off. Plan: as chosen by the planner "
          f"(max_parallel_workers_per_gather = 0 or 2).")
    print()
    have_cpu = bool(cpu)
    if have_cpu:
        print("CPU: the server's CPU time of each statement (its backend and its parallel "
              "workers, from /proc, in 1/%d s ticks), median of the runs." % os.sysconf("SC_CLK_TCK"))
        print()
        print("| aggregate | groups | parallel | plan | built-in (ms) | dp_agg (ms) | dp / built-in "
              "| built-in CPU (ms) | dp_agg CPU (ms) | dp / built-in (CPU) |")
        print("|---|---|---|---|---:|---:|---:|---:|---:|---:|")
    else:
        print("| aggregate | groups | parallel | plan | built-in (ms) | dp_agg (ms) | dp / built-in |")
        print("|---|---|---|---|---:|---:|---:|")
    for i, (m, _, g, label, qn, qd) in enumerate(cfgs):
        pn, pd = plans[(i, "native")], plans[(i, "dp")]
        plan = pn if pn == pd else f"built-in: {pn}; dp: {pd}"
        n, d = med(times, i, "native"), med(times, i, "dp")
        row = f"| {label} | {dict(GROUPINGS)[g]} | {m} | {plan} | {n:.1f} | {d:.1f} | {d / n:.2f} |"
        if have_cpu:
            cn, cd = med(cpu, i, "native"), med(cpu, i, "dp")
            row += f" {cn:.0f} | {cd:.0f} | {(cd / cn if cn else float('nan')):.2f} |"
        print(row)


if __name__ == "__main__":
    main()
