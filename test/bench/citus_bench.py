#!/usr/bin/env python3
"""The Citus benchmark (test/bench/citus.sh): DP / native on one distributed
table, ratio of the medians of DP_BENCH_RUNS runs, repeated DP_BENCH_REPEATS
times.  Usage: citus_bench.py BASE_PORT, as the postgres user with
PostgreSQL's binaries in PATH.

Equal plan shapes: every node has max_parallel_workers_per_gather = 0, so
that neither side gets parallel scans on the workers (the built-in
aggregates are parallel-capable, dp_agg's partial sums are not: left to
the planner, native count(*) would run with parallel workers and DP
without, and the comparison would measure that), and
citus.max_adaptive_executor_pool_size is the same for both (Citus's
default, 16 connections per worker).  The runs of a pair alternate in one
session; citus.max_cached_conns_per_worker is DP_BENCH_CACHED_CONNS (Citus's
default 1: each multi-shard statement of either side opens about 30 new
connections to the workers, which it times; 16: Citus keeps them, and the
statements time the work and the fixed costs alone).  Each pair is printed
with the median and the range of each side and the load average of the
machine before and after; then the plan shape of shard queries on a
worker."""
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

base = int(sys.argv[1])
ROWS = int(os.environ.get("DP_BENCH_ROWS", "10000000"))
RUNS = int(os.environ.get("DP_BENCH_RUNS", "5"))
REPEATS = int(os.environ.get("DP_BENCH_REPEATS", "1"))
ONLY = os.environ.get("DP_BENCH_ONLY", "")
PORTS = (base, base + 1, base + 2)
# connections Citus keeps to each worker between statements: its default, 1,
# or as many as a statement opens (16), so that neither side times new ones
CACHED = int(os.environ.get("DP_BENCH_CACHED_CONNS", "1"))
top = tempfile.mkdtemp(prefix="dp_agg_citus_bench.")


def q(port, sql):
    p = subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-h", top, "-p", str(port),
                        "-d", "postgres", "-c", sql], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{sql}: {p.stderr}")
    return p.stdout.strip()


def start(port, worker):
    data = os.path.join(top, f"n{port}")
    subprocess.run(["initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"],
                   check=True, capture_output=True)
    with open(os.path.join(data, "postgresql.conf"), "a") as f:
        f.write(f"""
shared_preload_libraries = 'citus,dp_agg'
port = {port}
listen_addresses = ''
unix_socket_directories = '{top}'
shared_buffers = '512MB'
max_worker_processes = 16
max_parallel_workers_per_gather = 0
citus.max_cached_conns_per_worker = {CACHED}
dp_agg.cluster_key_file = '{top}/cluster.key'
dp_agg.citus_worker = {'on' if worker else 'off'}
citus.shard_count = 32
citus.local_hostname = '{top}'
""")
    subprocess.run(["pg_ctl", "-D", data, "-l", data + ".log", "-w", "start"], check=True,
                   capture_output=True)
    q(port, "CREATE EXTENSION citus")
    q(port, "CREATE EXTENSION dp_agg")


def timed(sqls):
    """psql's \\timing of each statement of sqls, in ms, in one session on the
    coordinator (Citus keeps its connections to the workers between them)"""
    p = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", top, "-p", str(PORTS[0]),
                        "-d", "postgres"],
                       input="SET dp_agg.epsilon = 1;\n"
                             # GROUP BY releases its keys by private selection (100 groups of
                             # 100,000 rows: every group is released)
                             "SET dp_agg.selection_epsilon = 1;\nSET dp_agg.selection_delta = 1e-6;\n"
                             "\\timing on\n" + "".join(f"{sql};\n" for sql in sqls),
                       capture_output=True, text=True)
    m = re.findall(r"Time: ([0-9.]+) ms", p.stdout)
    if p.returncode != 0 or len(m) != len(sqls):
        raise RuntimeError(f"{sqls}: {p.stderr}")
    return [float(x) for x in m]


def load():
    return "%.1f" % os.getloadavg()[0]


PAIRS = [
    ("count", "SELECT count(*) FROM t", "SELECT dp_count(*) FROM t"),
    ("sum", "SELECT sum(v) FROM t", "SELECT dp_sum(v, 0, 1000) FROM t"),
    ("avg", "SELECT avg(x) FROM t", "SELECT dp_avg(x, 0, 1) FROM t"),
    ("count, GROUP BY g (100 groups)", "SELECT g, count(*) FROM t GROUP BY g",
     "SELECT g, dp_count(*) FROM t GROUP BY g"),
    ("sum, GROUP BY g (100 groups)", "SELECT g, sum(v) FROM t GROUP BY g",
     "SELECT g, dp_sum(v, 0, 1000) FROM t GROUP BY g"),
]

with open(os.path.join(top, "cluster.key"), "wb") as f:
    f.write(os.urandom(48))
os.chmod(os.path.join(top, "cluster.key"), 0o600)
try:
    for i, port in enumerate(PORTS):
        start(port, i > 0)
    for port in PORTS[1:]:
        q(PORTS[0], f"SELECT citus_add_node('{top}', {port})")
    q(PORTS[0], "CREATE TABLE t (id bigint, g int, v int, x float8)")
    q(PORTS[0], "SELECT create_distributed_table('t', 'id')")
    q(PORTS[0], f"INSERT INTO t SELECT i, i % 100, (i::bigint * 7919) % 1000, (i % 997) / 997.0 "
                f"FROM generate_series(1, {ROWS}) i")
    q(PORTS[0], "VACUUM ANALYZE t")
    q(PORTS[0], "SELECT dp_agg.set_budget('postgres', 1e15, 0.5)")
    shard = q(PORTS[0], "SELECT min(shardid) FROM pg_dist_shard_placement WHERE nodeport = "
                        f"{PORTS[1]}")
    print(f"| query ({ROWS:,} rows, 32 shards, 2 workers) | native ms (range) | DP ms (range) "
          "| DP / native | load before, after |")
    print("|---|---|---|---|---|")
    for rep in range(REPEATS):
        for name, native, dp in PAIRS:
            if ONLY and ONLY not in name:
                continue
            before = load()
            # one unmeasured run of each, then RUNS of each, alternating
            sqls = [native, dp]
            for r in range(RUNS):
                sqls += [native, dp] if r % 2 == 0 else [dp, native]
            times = timed(sqls)[2:]
            tn = [t for t, sql in zip(times, sqls[2:]) if sql == native]
            td = [t for t, sql in zip(times, sqls[2:]) if sql == dp]
            mn, md = statistics.median(tn), statistics.median(td)
            print(f"| {name} | {mn:.1f} ({min(tn):.0f}-{max(tn):.0f}) | {md:.1f} "
                  f"({min(td):.0f}-{max(td):.0f}) | {md / mn:.2f} | {before}, {load()} |",
                  flush=True)
    # the plan shape of a shard query on a worker, for both sides
    for sql in ("SELECT g, count(*) FROM t_%s GROUP BY g" % shard,
                "SELECT count(*) FROM t_%s" % shard):
        print("\nworker plan of `%s`:\n" % sql)
        for line in q(PORTS[1], "EXPLAIN (COSTS OFF) " + sql).splitlines():
            print("    " + line)
    print(f"\nmedian of {RUNS} runs, {REPEATS} repetition(s); max_parallel_workers_per_gather = 0 "
          f"on every node, citus.max_cached_conns_per_worker = {CACHED}, one session per pair; "
          f"{platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, {platform.platform()}")
finally:
    for port in PORTS:
        subprocess.run(["pg_ctl", "-D", os.path.join(top, f"n{port}"), "-m", "fast", "-w", "stop"],
                       capture_output=True)
    shutil.rmtree(top, ignore_errors=True)
