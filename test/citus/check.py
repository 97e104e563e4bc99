#!/usr/bin/env python3
"""dp_agg on a Citus cluster (doc/citus.md, "Citus"): a coordinator and two
workers on this machine, a table distributed over 8 shards.

Checks (one line each, then "citus: N passed, M failed"):
  - exact results at epsilon 1e9 for dp_count, dp_sum and dp_avg (integer,
    double precision, numeric) without GROUP BY, grouped by the distribution
    column, grouped by another column, and on one shard (a router query);
    the noise at epsilon 1e9 has scale at most 100/1e9 in value units, so
    a difference above 1e-3 has probability below exp(-1e4);
  - a single noise draw per release (a Chernoff test, below);
  - exactly one charge per statement, on the coordinator; none on workers;
  - a WHERE with a stable function, a user-defined function, or converting
    a float to text, is refused before the charge (it could not be bound
    to the fragments);
  - preview and TABLESAMPLE BERNOULLI (amplified, as for a local table);
  - GROUP BY with private keys (the distribution column and another):
    groups certain to be selected released exactly, a group of one row
    suppressed, each group decided once with probability pi(1) (a
    binomial test), one charge with the selection's price and ledger
    object, preview's selection row, the same budget and ledger entry as
    on a local copy under rdp and pld accounting, the defaults of the
    selection's price and the error naming the setting, a plan made with
    public keys refused under private ones;
  - public group keys: every key of a key list (VALUES, unnest, on the
    distribution column and on another), of a range, of a DBA's domain and
    of a histogram's bins released exactly, a noisy zero where no row has
    it, the rows outside dropped, one charge without selection; top-k
    refused;
  - a worker refuses a DP aggregate on a shard, also with Citus's
    application_name, a replayed fragment (as is, or with another filter),
    a fragment reading a function instead of the shard, a forged signature; the coordinator refuses dist_run called by hand and
    a partial sum with a signature read in a worker's pg_stat_activity;
  - the analyst's attacks on the signed fragments of its own statements:
    citus.log_remote_commands shows none; one read in pg_stat_activity on a
    worker while the statement's session goes on, from a router query, sent
    on a shard the statement did not read with another WHERE, another GROUP
    BY, another TABLESAMPLE percentage or another aggregate argument is
    refused (the signature binds them), also in a SQL function the planner
    inlines, as are EXPLAIN ANALYZE of it and
    its specifications swapped between its calls; sent unchanged there, it yields
    sealed states only (encrypted with distinct IVs, all of one length, present although no
    row passes), and a sealed state altered or in the plain form is refused;
  - after a shard move, a fragment signed before it is refused on the
    shard's new node, and statements are charged once each;
  - a worker stopped while a statement waits for it: the statement fails,
    its charge stands, nothing is released;
  - protected distributed and reference tables: the label that carries the
    protection on every node; the attacks of sql/protect_attack.sql that
    apply, through the coordinator, by a role with a grant and by one with
    SELECT, refused and never charged; DP statements accepted, exact and
    charged once; reads on a worker by both, with logins, refused; the
    replay of a fragment ahead of Citus (captured from pg_stat_activity,
    shard name changed) returns nothing; a worker restart, a shard move and
    a worker added after protection keep it; SET commands Citus would run
    on the owner's connections refused;
  - shard names Citus shortens;
  - privacy units by the distribution column and by another one: as on a
    local copy, one unit of 1,000 rows on every shard moving each release by
    exactly its bound, the selection counting units, k and R capped.

Usage: check.py BASE_PORT (uses BASE_PORT .. BASE_PORT+3: a worker is added
late), as the postgres user, with PATH holding PostgreSQL's binaries and
Citus installed.
"""
import atexit
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

base = int(sys.argv[1])
COORD, W1, W2, W3 = base, base + 1, base + 2, base + 3
top = tempfile.mkdtemp(prefix="dp_agg_citus.")
passed = failed = 0


# check.py BASE_PORT NAME-SUBSTRING ...: only the checks whose name contains
# one of the substrings are printed and counted (one case of the suite).
# The others still run: later checks use the tables, roles and fragments of
# earlier ones.
ONLY = sys.argv[2:]


def check(name, ok, detail=""):
    global passed, failed
    if ONLY and name != "cluster setup" and not any(s in name for s in ONLY):
        return
    if ok:
        passed += 1
        print(f"ok      {name}")
    else:
        failed += 1
        print(f"FAILED  {name}: {detail}")


def psql(port, sql, user="postgres", appname=None, timeout=120):
    env = dict(os.environ, PGAPPNAME=appname or "dp_agg_citus_test")
    p = subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", "-h", top, "-p", str(port),
                        "-U", user, "-d", "postgres", "-c", sql],
                       capture_output=True, text=True, env=env, timeout=timeout)
    return p.returncode, p.stdout.strip(), p.stderr.strip()


def q(port, sql, **kw):
    rc, out, err = psql(port, sql, **kw)
    if rc != 0:
        raise RuntimeError(f"port {port}: {sql}: {err}")
    return out


def start_node(port, worker):
    data = os.path.join(top, f"n{port}")
    subprocess.run(["initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"],
                   check=True, capture_output=True)
    with open(os.path.join(data, "postgresql.conf"), "a") as f:
        f.write(f"""
shared_preload_libraries = 'citus,dp_agg'
port = {port}
listen_addresses = ''
unix_socket_directories = '{top}'
max_connections = 100
max_worker_processes = 16
fsync = off
dp_agg.cluster_key_file = '{top}/cluster.key'
dp_agg.citus_worker = {'on' if worker else 'off'}
citus.shard_count = 8
citus.local_hostname = '{top}'
track_activity_query_size = 16384
# a loaded machine may take longer than the default 60 s between a capture
# and its replay: the refusals tested here must not be the expiry's
dp_agg.fragment_ttl = '10min'
""")
    pg_ctl(port, "start")
    q(port, "CREATE EXTENSION citus")
    q(port, "CREATE EXTENSION dp_agg")


def pg_ctl(port, action, mode="fast"):
    args = ["pg_ctl", "-D", os.path.join(top, f"n{port}"), "-w", "-l",
            os.path.join(top, f"n{port}.log"), action]
    if action in ("stop", "restart"):
        args += ["-m", mode]
    subprocess.run(args, check=True, capture_output=True)


def stop_all():
    for port in (COORD, W1, W2, W3):
        if os.path.exists(os.path.join(top, f"n{port}", "postmaster.pid")):
            subprocess.run(["pg_ctl", "-D", os.path.join(top, f"n{port}"), "-m", "immediate",
                            "-w", "stop"], capture_output=True)
    shutil.rmtree(top, ignore_errors=True)


def ledger_count(port):
    return int(q(port, "SELECT count(*) FROM dp_agg.ledger WHERE kind = 'charge'"))


# ---------- the cluster ----------

atexit.register(stop_all)   # also after an unexpected exception

with open(os.path.join(top, "cluster.key"), "wb") as f:
    f.write(os.urandom(48))
os.chmod(os.path.join(top, "cluster.key"), 0o600)
try:
    start_node(COORD, False)
    start_node(W1, True)
    start_node(W2, True)
    q(COORD, f"SELECT citus_set_coordinator_host('{top}', {COORD})")
    q(COORD, f"SELECT citus_add_node('{top}', {W1})")
    q(COORD, f"SELECT citus_add_node('{top}', {W2})")
    for sql in ("CREATE TABLE t (id int, g int, v int, x float8, n numeric)",
                "SELECT create_distributed_table('t', 'id')",
                "INSERT INTO t SELECT i, i % 5, i % 100, (i % 10) / 4.0, (i % 7)::numeric / 3 "
                "FROM generate_series(1, 20000) i",
                "CREATE ROLE analyst LOGIN",
                "GRANT SELECT ON t TO analyst",
                "SELECT dp_agg.set_budget('analyst', 1e15)",
                "SELECT dp_agg.set_budget('postgres', 1e15)",
                # the groups of these tests (g, id, id % k) are public knowledge;
                # the private selection of keys is checked on its own below
                "ALTER ROLE analyst SET dp_agg.group_keys = 'public'",
                "ALTER ROLE postgres SET dp_agg.group_keys = 'public'"):
        q(COORD, sql)
except Exception as e:  # the cluster could not be built: one failure, and stop
    check("cluster setup", False, str(e))
    stop_all()
    print(f"citus: {passed} passed, {failed} failed")
    sys.exit(1)


def analyst(port, sql, **kw):
    return psql(port, "SET dp_agg.epsilon = 1e9; " + sql, user="analyst", **kw)


def rows(out):
    return [line.split("|") for line in out.splitlines() if line]


# ---------- exact results at epsilon 1e9 ----------

EXACT = [
    ("no GROUP BY",
     "SELECT dp_count(*), dp_sum(v, 0, 100), dp_avg(v, 0, 100), dp_sum(x, 0, 10), "
     "dp_avg(x, 0, 10), dp_sum(n, 0, 10), dp_avg(n, 0, 10), dp_count(n) FROM t",
     "SELECT count(*), sum(v), avg(v), sum(x), avg(x), sum(n), avg(n), count(n) FROM t"),
    ("GROUP BY the distribution column",
     "SELECT id, dp_count(*), dp_sum(v, 0, 100), dp_avg(x, 0, 10) FROM t WHERE id <= 300 "
     "GROUP BY id ORDER BY id",
     "SELECT id, count(*), sum(v), avg(x) FROM t WHERE id <= 300 GROUP BY id ORDER BY id"),
    ("GROUP BY another column",
     "SELECT g, dp_count(*), dp_sum(v, 0, 100), dp_avg(v, 0, 100), dp_avg(n, 0, 10) FROM t "
     "GROUP BY g ORDER BY g",
     "SELECT g, count(*), sum(v), avg(v), avg(n) FROM t GROUP BY g ORDER BY g"),
    ("GROUP BY an expression, HAVING, LIMIT",
     "SELECT id % 3 AS k, dp_count(*) FROM t GROUP BY 1 HAVING dp_count(*) > 6000 "
     "ORDER BY dp_count(*) DESC LIMIT 2",
     "SELECT id % 3 AS k, count(*) FROM t GROUP BY 1 HAVING count(*) > 6000 "
     "ORDER BY count(*) DESC LIMIT 2"),
    ("one shard (router)",
     "SELECT dp_count(*), dp_sum(v, 0, 100) FROM t WHERE id = 77",
     "SELECT count(*), sum(v) FROM t WHERE id = 77"),
]
for name, dp_sql, native_sql in EXACT:
    rc, out, err = analyst(COORD, dp_sql)
    native = rows(q(COORD, native_sql))
    got = rows(out) if rc == 0 else None
    ok = got is not None and len(got) == len(native) and all(
        len(a) == len(b) and all(abs(float(x) - float(y)) <= 1e-3 for x, y in zip(a, b))
        for a, b in zip(got, native))
    check(f"exact at epsilon 1e9: {name}", ok, err or f"{got} != {native}")

rc, out, err = analyst(COORD, "PREPARE p(int, float8, int) AS SELECT dp_sum(v, 0, $1, $2), "
                       "dp_count(*) FROM t WHERE g = $3; EXECUTE p(100, 1e9, 1); EXECUTE p(100, 1e9, 2)")
native = q(COORD, "SELECT sum(v) || '|' || count(*) FROM t WHERE g = 1") + "\n" + \
    q(COORD, "SELECT sum(v) || '|' || count(*) FROM t WHERE g = 2")
check("exact at epsilon 1e9: a prepared statement with parameters", rc == 0 and out == native,
      err or f"{out} != {native}")

# ---------- the analyst's statistics (doc/citus.md, "Citus") ----------

# dp_var and dp_stddev: the count, centred sum and sum of centred squares
# are accumulated by the shards in signed fragments and released on the
# coordinator; at epsilon 1e9 they are the population variance and
# standard deviation
STATS_EXACT = [
    ("dp_var and dp_stddev, no GROUP BY",
     "SELECT dp_var(v, 0, 100), dp_stddev(v, 0, 100), dp_var(x, 0, 10), dp_stddev(x, 0, 10), "
     "dp_var(n, 0, 10), dp_stddev(n, 0, 10) FROM t",
     "SELECT var_pop(v), stddev_pop(v), var_pop(x), stddev_pop(x), var_pop(n), stddev_pop(n) FROM t"),
    ("dp_var and dp_stddev, GROUP BY another column",
     "SELECT g, dp_var(v, 0, 100), dp_stddev(x, 0, 10), dp_var(n, 0, 10) FROM t GROUP BY g ORDER BY g",
     "SELECT g, var_pop(v), stddev_pop(x), var_pop(n) FROM t GROUP BY g ORDER BY g"),
    ("dp_var and dp_stddev, GROUP BY the distribution column",
     "SELECT id % 7 AS k, dp_var(v, 0, 100), dp_stddev(v, 0, 100) FROM t GROUP BY 1 ORDER BY 1",
     "SELECT id % 7 AS k, var_pop(v), stddev_pop(v) FROM t GROUP BY 1 ORDER BY 1"),
]
for name, dp_sql, native_sql in STATS_EXACT:
    rc, out, err = analyst(COORD, dp_sql)
    native = rows(q(COORD, native_sql))
    got = rows(out) if rc == 0 else None
    ok = got is not None and len(got) == len(native) and all(
        len(a) == len(b) and all(abs(float(x) - float(y)) <= 1e-3 for x, y in zip(a, b))
        for a, b in zip(got, native))
    check(f"exact at epsilon 1e9: {name}", ok, err or f"{got} != {native}")

# error bars in the same statement, one charge: at epsilon 1e9 every
# interval holds the exact value; at epsilon 1 a count's is its release
# +- the ledger's ci95
before = ledger_count(COORD)
c, s, a, v = "dp_count(*)", "dp_sum(x, 0, 10)", "dp_avg(x, 0, 10)", "dp_stddev(v, 0, 100)"
rc, out, err = analyst(COORD, f"SELECT {c}, dp_interval_low({c}), dp_interval_high({c}), {s}, "
                       f"dp_interval_low({s}), dp_interval_high({s}), {a}, dp_interval_low({a}), "
                       f"dp_interval_high({a}), {v}, dp_interval_low({v}), dp_interval_high({v}), "
                       f"dp_noise_scale({v}), dp_lower_bound({v}), dp_upper_bound({v}) FROM t")
native = [float(z) for z in q(COORD, "SELECT count(*), sum(x), avg(x), stddev_pop(v) FROM t").split("|")]
got = [float(z) if z else None for z in out.split("|")] if rc == 0 else None
ok = got is not None and len(got) == 15 and all(
    got[3 * i + 1] - 1e-6 <= e <= got[3 * i + 2] + 1e-6 and got[3 * i + 1] <= got[3 * i] <= got[3 * i + 2]
    for i, e in enumerate(native)) and got[12] >= 0 and (got[13], got[14]) == (0, 100)
check("error bars on a Citus table: at epsilon 1e9 every interval holds the exact value, one charge",
      ok and ledger_count(COORD) == before + 1, err or f"{got} vs {native}")
rc, out, err = psql(COORD, "SET dp_agg.epsilon = 1; SELECT g, dp_count(*), dp_interval_low(dp_count(*)), "
                    "dp_interval_high(dp_count(*)) FROM t WHERE g = 1 GROUP BY g; "
                    "SELECT (detail -> 0 ->> 'ci95')::float8 FROM dp_agg.my_ledger ORDER BY id DESC LIMIT 1",
                    user="analyst")
parts = out.replace("\n", "|").split("|")[1:] if rc == 0 else []
check("error bars on a Citus table: a count's interval is its release +- the ledger's ci95",
      len(parts) == 4 and float(parts[0]) - float(parts[1]) == float(parts[3]) ==
      float(parts[2]) - float(parts[0]), err or out)

# not on Citus tables (doc/citus.md, "Citus"): quantiles, dp_bounds and the
# forms without bounds, refused before any charge
for name, sql, msg in [
        ("dp_percentile", "SELECT dp_percentile(x, 0.5, 0, 10) FROM t", "not supported on a Citus table"),
        ("dp_median", "SELECT g, dp_median(v, 0, 100) FROM t GROUP BY g", "not supported on a Citus table"),
        ("dp_bounds", "SELECT dp_bounds(x) FROM t", "not supported on a Citus table"),
        ("dp_sum without bounds", "SELECT dp_sum(x) FROM t", "without bounds are not supported"),
        ("dp_var with NULL bounds", "SELECT dp_var(x, NULL, NULL) FROM t", "without bounds are not supported")]:
    before = ledger_count(COORD)
    rc, out, err = analyst(COORD, sql)
    check(f"refused: {name} on a Citus table, nothing charged",
          rc != 0 and msg in err and out == "" and ledger_count(COORD) == before, err or out)

# ---------- private group keys (doc/units-and-groups.md, "Private group keys", "Citus") ----------
#
# Table s, distributed by id: ids 1..4 hold 1000 rows each, spread over g =
# 0..3 (250 rows per id and g, so every g is on several shards and both
# workers), and one row alone (id 50, g 99).  Table u: 2000 rows, one per
# id and one per g2.  Without a privacy unit each row is a unit in one
# group (k = 1): the optimal mechanism (Desfontaines et al. 2022, Theorem
# 1), pi(0) = 0, pi(n) = min(e^eps pi(n-1) + delta, 1 - e^-eps (1 -
# pi(n-1) - delta), 1).  At eps = 1e9, pi(1) = delta exactly (e^-eps
# vanishes), pi(2) = 1 - 2^-53 (1 rounded toward privacy) and pi(3) = 1: a
# group of 3 rows or more is released with certainty, one of 1 row with
# probability delta (read from dp_agg.selection_threshold and
# selection_probability below).  Role keys has a delta budget for them.

for sql in ("CREATE TABLE s (id int, g int, v int)",
            "SELECT create_distributed_table('s', 'id')",
            "INSERT INTO s SELECT i % 4 + 1, (i / 4) % 4, i % 100 FROM generate_series(0, 3999) i",
            "INSERT INTO s VALUES (50, 99, 7)",
            "CREATE TABLE u (id int, g2 int)",
            "SELECT create_distributed_table('u', 'id')",
            "INSERT INTO u SELECT i, 1000000 - i FROM generate_series(1, 2000) i",
            "CREATE ROLE keys LOGIN",
            "GRANT SELECT ON s, u TO keys",
            "SELECT dp_agg.set_budget('keys', 1e15, 0.5)"):
    q(COORD, sql)


def private_keys(sql, delta):
    return psql(COORD, "SET dp_agg.epsilon = 1e9; SET dp_agg.group_keys = 'private'; "
                f"SET dp_agg.selection_epsilon = 1e9; SET dp_agg.selection_delta = {delta}; " + sql,
                user="keys")


def selection_sum():
    return float(q(COORD, "SELECT selection_epsilon FROM dp_agg.budget WHERE role = 'keys'::regrole"))


def selection_detail():
    return q(COORD, "SELECT d->'selection' FROM dp_agg.ledger, jsonb_array_elements(detail) d "
                    "WHERE id = (SELECT max(id) FROM dp_agg.ledger) AND d ? 'selection'")


threshold = q(COORD, "SELECT dp_agg.selection_threshold(1e9, 1e-7) || '|' || "
                     "dp_agg.selection_probability(1e9, 1e-7, 1) || '|' || "
                     "dp_agg.selection_probability(1e9, 0.1, 1)")
check("private keys: at selection epsilon 1e9, pi(1) = delta and pi(3) = 1",
      threshold == "3|1e-07|0.1", threshold)

# groups of 1000 rows: released, exact; the group of 1 row: released with
# probability pi(1) = 1e-7 per statement, so asserting its absence in each
# of the two statements fails falsely with probability at most 2e-7
PRIVATE = [
    ("on the distribution column", "id",
     "SELECT id, dp_count(*), dp_sum(v, 0, 100), dp_avg(v, 0, 100) FROM s GROUP BY id ORDER BY id",
     "SELECT id, count(*), sum(v), avg(v) FROM s WHERE id <> 50 GROUP BY id ORDER BY id"),
    ("on another column", "g",
     "SELECT g, dp_count(*), dp_sum(v, 0, 100), dp_avg(v, 0, 100) FROM s GROUP BY g ORDER BY g",
     "SELECT g, count(*), sum(v), avg(v) FROM s WHERE g <> 99 GROUP BY g ORDER BY g"),
]
for name, key, dp_sql, native_sql in PRIVATE:
    before = ledger_count(COORD)
    sel0 = selection_sum()
    rc, out, err = private_keys(dp_sql, 1e-7)
    native = rows(q(COORD, native_sql))
    got = rows(out) if rc == 0 else None
    ok = got is not None and len(got) == len(native) == 4 and all(
        len(a) == len(b) and all(abs(float(x) - float(y)) <= 1e-3 for x, y in zip(a, b))
        for a, b in zip(got, native))
    check(f"private keys {name}: groups of 1000 rows released exactly, the group of 1 row "
          "suppressed", ok, err or f"{got} != {native}")
    price = q(COORD, "SELECT epsilon FROM dp_agg.ledger ORDER BY id DESC LIMIT 1")
    sel1 = selection_sum()
    detail = selection_detail()
    check(f"private keys {name}: one charge on the coordinator, with the selection's price "
          "and its object in the ledger",
          rc == 0 and ledger_count(COORD) == before + 1 and float(price) == 1e9 + 3e9
          and sel1 - sel0 == 1e9
          and '"mechanism": "optimal"' in detail and '"threshold": 3' in detail
          and '"max_groups_contributed": 1' in detail and '"epsilon": 1000000000' in detail,
          f"ledger {before} -> {ledger_count(COORD)}, price {price}, selection sum {sel0} -> "
          f"{sel1}, {detail}")

rc, out, err = private_keys("SELECT aggregate, release, mechanism, epsilon, delta, sensitivity "
                            "FROM dp_agg.preview('SELECT g, dp_count(*) FROM s GROUP BY g') "
                            "WHERE release = 'selection'", 1e-7)
check("private keys: preview shows the selection row", rc == 0 and
      out == "dp_select|selection|optimal|1000000000|1e-07|1", err or out)

rc, out, err = private_keys("SELECT g, dp_count(*) FROM s GROUP BY g HAVING dp_count(*) > 500 "
                            "ORDER BY g LIMIT 3", 1e-7)
check("private keys: HAVING, ORDER BY and LIMIT over the selected groups",
      rc == 0 and out == "0|1000\n1|1000\n2|1000", err or out)

# each group decided once, independently, with probability pi(1) = 0.1: the
# number of the 2000 groups of one row released is Binomial(2000, 0.1); it
# is accepted in [lo, hi], where each tail outside has exact probability at
# most 5e-7 (false failure at most 1e-6): [138, 269].  Two draws per
# group, released if both pass, would release 20 on average, and no
# selection all 2000


def binomial_interval(n, p, tail=5e-7):
    pmf = [math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                    + k * math.log(p) + (n - k) * math.log1p(-p)) for k in range(n + 1)]
    lo, below = 0, 0.0
    while below + pmf[lo] <= tail:
        below += pmf[lo]
        lo += 1
    hi, above = n, 0.0
    while above + pmf[hi] <= tail:
        above += pmf[hi]
        hi -= 1
    return lo, hi


lo, hi = binomial_interval(2000, 0.1)
for name, key in (("on the distribution column", "id"), ("on another column", "g2")):
    rc, out, err = private_keys(f"SELECT {key}, dp_count(*) FROM u GROUP BY {key}", 0.1)
    got = rows(out) if rc == 0 else []
    print(f"-- private keys {name}: {len(got)} of 2000 groups of one row released, "
          f"accepted [{lo}, {hi}]")
    check(f"private keys {name}: a group of one row is released with probability delta "
          "(binomial, false failure <= 1e-6)",
          rc == 0 and lo <= len(got) <= hi and all(c == "1" for _, c in got),
          err or f"{len(got)} released, not in [{lo}, {hi}]")

# the defaults: with only dp_agg.epsilon set, the selection costs as much
# as the releases (dp_agg.selection_share 0.5) at delta 1e-7
before = ledger_count(COORD)
rc, out, err = psql(COORD, "SET dp_agg.epsilon = 1e9; SET dp_agg.group_keys = 'private'; "
                    "SELECT g, dp_count(*) FROM s GROUP BY g ORDER BY g", user="keys")
detail = selection_detail()
sel = json.loads(detail) if rc == 0 and detail else {}
check("private keys with only dp_agg.epsilon set: the default selection, one charge",
      rc == 0 and out == "0|1000\n1|1000\n2|1000\n3|1000" and ledger_count(COORD) == before + 1
      and sel.get("epsilon") == 1e9 and abs(sel.get("delta", 0) - 1e-7) < 1e-20,
      err or f"{out} {detail}")
before = ledger_count(COORD)
rc, out, err = psql(COORD, "SET dp_agg.epsilon = 1e9; SET dp_agg.group_keys = 'private'; "
                    "SET dp_agg.selection_delta = ''; SELECT g, dp_count(*) FROM s GROUP BY g",
                    user="keys")
check("refused: private keys with dp_agg.selection_delta set to empty, naming it, nothing charged",
      rc != 0 and "dp_agg.selection_delta is not set" in err and out == ""
      and ledger_count(COORD) == before, err or out)

# ---------- public group keys (doc/units-and-groups.md, "Public group keys") ----------
#
# Every key of the domain is released, exactly at epsilon 1e9 (0 where no
# row has it), the rows outside are dropped (the row of g = 99), one
# charge, no selection: on the distribution column and on another, from a
# key list, a range, a DBA's domain and a histogram's bins.


def public_keys(sql):
    return psql(COORD, "SET dp_agg.epsilon = 1e9; SET dp_agg.group_keys = 'private'; "
                "SET dp_agg.selection_delta = ''; " + sql, user="keys")


PUBLIC = [
    ("a key list on another column",
     "SELECT k.g, dp_count(*), dp_sum(s.v, 0, 100) FROM (VALUES (0), (2), (7)) k(g) "
     "LEFT JOIN s ON s.g = k.g GROUP BY k.g ORDER BY 1",
     "SELECT k.g, count(s.g), coalesce(sum(s.v), 0) FROM (VALUES (0), (2), (7)) k(g) "
     "LEFT JOIN s ON s.g = k.g GROUP BY k.g ORDER BY 1", 3),
    ("a key list on the distribution column",
     "SELECT k.id, dp_count(*) FROM unnest(ARRAY[1, 4, 9]) k(id) LEFT JOIN s USING (id) "
     "GROUP BY k.id ORDER BY 1",
     "SELECT k.id, count(s.id) FROM unnest(ARRAY[1, 4, 9]) k(id) LEFT JOIN s USING (id) "
     "GROUP BY k.id ORDER BY 1", 3),
    ("a range",
     "SELECT g, dp_count(*), dp_avg(v, 0, 100) FROM s WHERE g BETWEEN 2 AND 5 GROUP BY g ORDER BY g",
     "SELECT k, count(s.g), coalesce(avg(s.v), 50) FROM generate_series(2, 5) k "
     "LEFT JOIN s ON s.g = k GROUP BY k ORDER BY k", 4),
    ("a DBA's domain",
     "SELECT g, dp_count(*) FROM s GROUP BY g ORDER BY g",
     "SELECT k, count(s.g) FROM unnest(ARRAY[1, 3, 99, 500]) k LEFT JOIN s ON s.g = k "
     "GROUP BY k ORDER BY k", 4),
    # (v may be NULL: the NULL key is in the domain too)
    ("a histogram",
     "SELECT width_bucket(v, 0, 100, 4), dp_count(*) FROM s GROUP BY 1 ORDER BY 1",
     "SELECT b, count(r.w) FROM generate_series(0, 5) b LEFT JOIN "
     "(SELECT width_bucket(v, 0, 100, 4) AS w FROM s) r ON r.w = b GROUP BY b "
     "UNION ALL SELECT NULL, 0 ORDER BY 1", 7),
]
for name, dp_sql, native_sql, nkeys in PUBLIC:
    # the DBA's domain of g comes before a range of g: declared for its case only
    if name == "a DBA's domain":
        q(COORD, "SELECT dp_agg.set_public_domain('s', 'g', ARRAY[1, 3, 99, 500])")
    before = ledger_count(COORD)
    rc, out, err = public_keys(dp_sql)
    native = rows(q(COORD, native_sql))
    got = rows(out) if rc == 0 else None
    ok = got is not None and len(got) == len(native) == nkeys and all(
        len(a) == len(b) and all(x == y == "" or (x != "" and y != "" and abs(float(x) - float(y)) <= 1e-3)
                                 for x, y in zip(a, b))
        for a, b in zip(got, native))
    detail = q(COORD, "SELECT detail FROM dp_agg.ledger ORDER BY id DESC LIMIT 1")
    check(f"public keys, {name}: every key released exactly, the rows outside dropped, "
          "one charge, no selection",
          ok and ledger_count(COORD) == before + 1 and f'"public_domain": {{"keys": {nkeys}}}' in detail
          and '"selection"' not in detail,
          err or f"{got} != {native}; {detail}")
    if name == "a DBA's domain":
        q(COORD, "SELECT dp_agg.clear_public_domain('s', 'g')")

before = ledger_count(COORD)
rc, out, err = public_keys("SELECT g, dp_count(*) FROM s WHERE g BETWEEN 0 AND 3 "
                           "GROUP BY g HAVING dp_agg.top_k(2, 1000)")
print(f"-- top-k on a Citus table: rc {rc} {err.strip()[:300]}")
check("refused: top-k on a Citus table, nothing charged",
      rc != 0 and "top-k" in err and out == "" and ledger_count(COORD) == before, err or out)
# the Renyi / PLD bookkeeping of a selection is a local statement's: the same
# statement on s and on a local copy of it, each by a fresh role of rdp or
# pld accounting, leaves the same budget (spent amounts, Renyi curve, PLD
# state, composed epsilon, sums of the selections) and the same ledger entry
q(COORD, "CREATE TABLE s_local AS SELECT * FROM s")
for acct in ("rdp", "pld"):
    seen = {}
    for where, table in (("local", "s_local"), ("citus", "s")):
        role = f"keys_{acct}_{where}"
        for sql in (f"CREATE ROLE {role} LOGIN", f"GRANT SELECT ON {table} TO {role}",
                    f"SELECT dp_agg.set_budget('{role}', 100, 1e-3, '{acct}')"):
            q(COORD, sql)
        rc, out, err = psql(COORD, "SET dp_agg.group_keys = 'private'; "
                            "SET dp_agg.selection_epsilon = 0.5; SET dp_agg.selection_delta = 1e-7; "
                            f"SELECT g, dp_count(g, 1), dp_sum(v, 0, 100, 0.5, 1e-6) FROM {table} "
                            "GROUP BY g", user=role)
        seen[where] = (rc, err, psql(COORD, "SELECT epsilon_spent, delta_spent, composed_epsilon, rdp, "
                                     "pld, pld_epsilon, selection_epsilon, selection_delta "
                                     "FROM dp_agg.my_budget_curves", user=role)[1],
                       q(COORD, "SELECT epsilon || ' ' || delta || ' ' || detail || ' ' || "
                                f"coalesce(rdp::text, '') FROM dp_agg.ledger WHERE role = '{role}'::regrole"))
    local, citus = seen["local"], seen["citus"]
    check(f"private keys: {acct} accounting of a selection on a Citus table as on a local table",
          local[0] == 0 and citus[0] == 0 and local[2] == citus[2] and local[3] == citus[3]
          and "selection" in citus[3] and citus[2].endswith("|0.5|1e-07"),
          f"{local} != {citus}")

# a generic plan (a custom one is made again at each EXECUTE, with the keys
# of then), run twice: the session's first DP statement makes its plans again
# (protect.c loads its catalogs then)
before = ledger_count(COORD)
rc, out, err = private_keys("SET plan_cache_mode = force_generic_plan; "
                            "SET dp_agg.group_keys = 'public'; PREPARE pk AS SELECT g, "
                            "dp_count(*) FROM s GROUP BY g; EXECUTE pk; EXECUTE pk; "
                            "SET dp_agg.group_keys = 'private'; EXECUTE pk", 1e-7)
check("refused: a plan made with public keys, run with private keys",
      rc != 0 and "released only by private selection" in err
      and ledger_count(COORD) == before + 2, err or out)

# a filter a worker's session could change (a stable function, here one that
# reads a setting; a float's text, which depends on extra_float_digits; a
# user-defined function, which its owner can replace on a worker and which,
# marked immutable, may return another value each time it is folded)
# cannot be bound to the fragments: refused before the charge
q(COORD, "CREATE FUNCTION public.three() RETURNS int LANGUAGE plpgsql IMMUTABLE AS "
         "'BEGIN RETURN 3; END'")
for name, where, why in (("a stable function", "g::text = current_setting('application_name')",
                          "not immutable"),
                         ("a float converted to text", "x::text = '0.5'", "extra_float_digits"),
                         ("a user-defined immutable function", "v = public.three()",
                          "not built in")):
    before = ledger_count(COORD)
    rc, out, err = analyst(COORD, f"SELECT dp_count(*) FROM t WHERE {where}")
    check(f"a WHERE with {name} on a Citus table is refused, nothing charged",
          rc != 0 and "cannot be bound to its fragments" in err and why in err
          and ledger_count(COORD) == before, err or out)

# ---------- one charge, on the coordinator ----------

before = ledger_count(COORD)
spent0 = float(q(COORD, "SELECT epsilon_spent FROM dp_agg.budget WHERE role = 'analyst'::regrole"))
rc, out, err = psql(COORD, "SELECT g, dp_count(g, 0.25), dp_sum(v, 0, 100, 0.5) FROM t GROUP BY g",
                    user="analyst")
spent1 = float(q(COORD, "SELECT epsilon_spent FROM dp_agg.budget WHERE role = 'analyst'::regrole"))
query = q(COORD, "SELECT query FROM dp_agg.ledger ORDER BY id DESC LIMIT 1")
check("one charge on the coordinator, recording the user's statement",
      rc == 0 and ledger_count(COORD) == before + 1 and abs(spent1 - spent0 - 0.75) < 1e-9
      and query.startswith("SELECT g, dp_count(g, 0.25)"),
      f"rc {rc} {err}; ledger {before} -> {ledger_count(COORD)}; spent {spent0} -> {spent1}; {query}")
workers_clean = all(q(w, "SELECT (SELECT count(*) FROM dp_agg.ledger) + (SELECT count(*) FROM dp_agg.budget)") == "0"
                    for w in (W1, W2))
check("no budget and no charge on the workers", workers_clean)

# ---------- preview, TABLESAMPLE ----------

rc, out, err = psql(COORD, "SELECT count(*) FROM dp_agg.preview("
                    "'SELECT g, dp_count(g, 0.5) FROM t GROUP BY g')", user="analyst")
check("preview of a statement on a Citus table", rc == 0 and out == "1", err or out)
rc, out, err = analyst(COORD, "SELECT dp_count(g, 1) FROM t TABLESAMPLE BERNOULLI (50)")
detail = q(COORD, "SELECT detail->0->'sampling'->>'amplified' || ' ' || (detail->0->'sampling'->>'rate') "
                  "FROM dp_agg.ledger ORDER BY id DESC LIMIT 1")
# the shards do sample: a 50% Bernoulli sample of 20000 rows has more than
# 960 rows more or fewer than 10000 with probability below
# 2 exp(-2 * 960^2 / 20000) < 1e-39 (Hoeffding), and discrete Laplace noise
# of scale 1 exceeds 30 in absolute value with probability below
# 2 exp(-31) < 1e-13: a release outside [9000, 11000] is a false failure
# with probability below 1e-6 (the whole table would give about 20000)
check("TABLESAMPLE BERNOULLI on a Citus table samples the shards and is amplified",
      rc == 0 and detail == "true 0.5" and 9000 <= int(out.splitlines()[-1]) <= 11000,
      err or f"{detail} {out}")

# ---------- a single noise draw: Chernoff bounds on the sum of |noise| ----------
#
# dp_count(g, 1) GROUP BY id % 500 over 20000 rows: 500 groups of 40 rows
# spread over all shards and both workers, each released with discrete
# Laplace noise of scale 1 (P[X = x] = (1-p)/(1+p) p^|x|, p = e^-1) if the
# coordinator draws it once.  Over 4 statements, T = sum |release - 40| of
# n = 2000 independent draws.  For any lambda, P[T >= t] <= M(l)^n e^(-l t)
# with M the moment generating function of |X| (Chernoff), and likewise
# below with l < 0: t_lo and t_hi are chosen so that each bound is at most
# 5e-7, so a false failure has probability at most 1e-6.  Noise drawn on
# each of the two workers and added would give E|X1 + X2| per draw, far
# above t_hi / n (printed).

P = math.exp(-1.0)
PMF = {x: (1 - P) / (1 + P) * P ** abs(x) for x in range(-200, 201)}


def log_mgf_abs(lam, pmf):
    return math.log(sum(w * math.exp(lam * abs(x)) for x, w in pmf.items()))


def chernoff_threshold(n, upper, target=5e-7):
    # smallest (upper) / largest (lower) t whose Chernoff bound is <= target
    lams = [i / 200 for i in range(1, 190)]
    def bound(t):
        return min(n * log_mgf_abs(l if upper else -l, PMF) - (l if upper else -l) * t
                   for l in lams)
    mean = n * sum(w * abs(x) for x, w in PMF.items())
    lo, hi = (mean, 4 * mean) if upper else (0.0, mean)
    for _ in range(100):
        mid = (lo + hi) / 2
        ok = bound(mid) <= math.log(target)
        if upper:
            lo, hi = (lo, mid) if ok else (mid, hi)
        else:
            lo, hi = (mid, hi) if ok else (lo, mid)
    return hi if upper else lo


n_draws = 0
total = 0.0
for _ in range(4):
    rc, out, err = psql(COORD, "SELECT dp_count(g, 1) FROM t GROUP BY id % 500", user="analyst")
    if rc != 0:
        break
    for line in out.splitlines():
        total += abs(int(line) - 40)
        n_draws += 1
t_lo = chernoff_threshold(2000, False)
t_hi = chernoff_threshold(2000, True)
pmf2 = {}
for a, wa in PMF.items():
    for b, wb in PMF.items():
        if abs(a + b) <= 200:
            pmf2[a + b] = pmf2.get(a + b, 0) + wa * wb
alt = 2000 * sum(w * abs(x) for x, w in pmf2.items())
print(f"-- noise: sum |X| = {total:.0f} over {n_draws} draws; accepted [{t_lo:.0f}, {t_hi:.0f}]; "
      f"two draws per release would give {alt:.0f} on average")
check("a single noise draw per release (Chernoff, false failure <= 1e-6)",
      n_draws == 2000 and t_lo <= total <= t_hi, f"{n_draws} draws, sum {total}, [{t_lo}, {t_hi}]")

# ---------- direct access to a worker ----------

for name, app in (("a DP aggregate on a worker", None),
                  ("a DP aggregate on a worker with Citus's application_name",
                   "citus_internal gpid=10000000001")):
    rc, out, err = psql(W1, "SET dp_agg.epsilon = 1; SELECT dp_count(*) FROM t", user="analyst",
                        appname=app)
    rc2, out2, err2 = psql(W1, "SET dp_agg.epsilon = 1; SELECT dp_count(*) FROM t_" +
                           q(COORD, "SELECT min(shardid) FROM pg_dist_shard"), user="analyst",
                           appname=app)
    check(f"refused: {name}",
          rc != 0 and "not allowed on a Citus worker" in err and rc2 != 0 and out2 == "",
          f"{err} / {err2}")


def capture_fragment(sql, user="analyst"):
    """a signed fragment of a statement of user's, as the attack reads it: in
    pg_stat_activity on a worker (the fragment runs as the user's own role,
    and Citus's cached connection shows its last command while idle), while
    the user's session goes on; the fragment's shard is read by then"""
    env = dict(os.environ, PGAPPNAME="dp_agg_citus_test")
    stmt = subprocess.Popen(["psql", "-XAtq", "-h", top, "-p", str(COORD), "-U", user, "-d",
                             "postgres", "-c", "SET dp_agg.epsilon = 1e9", "-c", sql,
                             "-c", "SELECT pg_sleep(60)"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        for _ in range(300):   # at most 30 s
            for port in (W1, W2):
                rc, out, err = psql(port, "SELECT query FROM pg_stat_activity WHERE usename = "
                                    "current_user AND pid <> pg_backend_pid() AND query LIKE "
                                    "'%dpf3:%' LIMIT 1", user=user)
                if rc == 0 and out:
                    return out
            time.sleep(0.1)
    finally:
        # end the session on the coordinator (its pg_sleep outlives psql) and
        # wait until its connections to the workers are gone, so that the
        # next capture cannot see this statement's fragments
        q(COORD, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = "
                 f"'{user}' AND query = 'SELECT pg_sleep(60)'")
        stmt.wait()
        for _ in range(100):
            if all(q(port, "SELECT count(*) FROM pg_stat_activity WHERE usename = "
                           f"'{user}'") == "0" for port in (W1, W2)):
                break
            time.sleep(0.1)
    raise RuntimeError("no signed fragment in pg_stat_activity on the workers")


SEALED = re.compile(r"^dps1:[0-9a-f]+$")


def sealed_states(out):
    """the states of a replay's output, each sealed (None if one is not)"""
    states = [cell for row in rows(out) for cell in row if cell.startswith("dps")]
    return states if states and all(SEALED.match(s) for s in states) else None


# ---------- the signed fragment seen by the analyst, replayed ----------

rc, out, err = analyst(COORD, "SET citus.log_remote_commands = on; "
                       "SET citus.log_local_commands = on; SELECT dp_count(*) FROM t WHERE id = 7")
check("refused: citus.log_remote_commands shows no signed fragment",
      rc == 0 and out == "1" and "dpf" not in err and "dpf" not in out, err or out)

# A router query reads one shard; the signature names every shard of t and
# binds the fragment's table, TABLESAMPLE, WHERE, GROUP BY and aggregate
# arguments (dist_fingerprint.c).  The attacks are sent on a shard of the
# same worker that the statement did not read, where the single use of a
# signature per shard does not stop them: only the binding does.
frag = capture_fragment("SELECT dp_count(*), dp_sum(v, 0, 100) FROM t TABLESAMPLE BERNOULLI (50) "
                        "WHERE id = 7")
read = re.search(r"FROM public\.t_(\d+)", frag).group(1)
holder = int(q(COORD, f"SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = {read}"))
unread = q(COORD, f"SELECT min(shardid) FROM pg_dist_shard_placement WHERE nodeport = {holder} "
                  f"AND shardid <> {read} AND shardid IN (SELECT shardid FROM pg_dist_shard "
                  "WHERE logicalrelid = 't'::regclass)")
moved = re.sub(r"FROM public\.t_\d+ t\b", f"FROM public.t_{unread} t", frag)
ATTACKS = [
    ("another WHERE (a membership query)", re.sub(r"WHERE .*$", "WHERE (v = 3 AND g = 1)", moved)),
    ("another GROUP BY", moved + " GROUP BY g"),
    ("another TABLESAMPLE percentage", re.sub(r"bernoulli \([^)]*\)", "bernoulli (100)", moved)),
    ("a different aggregate argument",
     re.sub(r"'::text, v\)", "'::text, CASE WHEN g = 1 THEN 100 ELSE 0 END)", moved)),
]
for name, attack in ATTACKS:
    rc, out, err = psql(holder, attack, user="analyst")
    check(f"refused: a fragment from pg_stat_activity replayed with {name}",
          attack != moved and rc != 0 and out == "" and "differs from the fragment the coordinator signed" in err,
          err or out)
# the changed fragment in the body of a SQL function, which the planner
# inlines after the query (SELECT * FROM f()) was checked; Citus propagates
# the function from the coordinator to the workers
q(COORD, "SET check_function_bodies = off; CREATE FUNCTION public.replay() RETURNS TABLE "
         "(a dp_agg.dist_state, b dp_agg.dist_state) LANGUAGE sql STABLE AS $f$ " +
         ATTACKS[0][1] + " $f$; GRANT EXECUTE ON FUNCTION public.replay() TO analyst")
rc, out, err = psql(holder, "SELECT * FROM public.replay()", user="analyst")
check("refused: a fragment with another WHERE in a SQL function the planner inlines",
      rc != 0 and out == "" and "function the planner inlined" in err, err or out)
rc, out, err = psql(holder, "EXPLAIN (ANALYZE, COSTS OFF) " + moved, user="analyst")
check("refused: the unchanged fragment under EXPLAIN ANALYZE (its row counts)",
      rc != 0 and "cannot be run under EXPLAIN ANALYZE" in err, err or out)
specs = re.findall(r"'dpf3:[^']*'", moved)
swapped = moved.replace(specs[0], "@0@").replace(specs[1], specs[0]).replace("@0@", specs[1])
rc, out, err = psql(holder, swapped, user="analyst")
check("refused: the fragment with its signed specifications swapped between its calls",
      len(specs) == 2 and rc != 0 and "given to a call of another type" in err, err or out)
# the unchanged fragment on the unread shard: no row has id = 7 there, and the
# states are there all the same (a NULL state would say so), sealed
rc, out, err = psql(holder, moved, user="analyst")
states = sealed_states(out) if rc == 0 else None
check("the unchanged fragment replayed on a shard it did not read yields sealed states only, "
      "never NULL",
      states is not None and len(states) == 2 and len(rows(out)) == 1 and
      len({len(x) for x in states}) == 1, err or out)
if states:
    # AES-GCM needs a fresh IV for every value (dist_state.c): the first 12
    # bytes of each sealed state differ (equal with probability 2^-96)
    check("the sealed states have distinct IVs",
          len({x[len("dps1:"):len("dps1:") + 24] for x in states}) == len(states), str(states))
    tampered = states[0][:-1] + ("0" if states[0][-1] != "0" else "1")
    rc, out, err = psql(holder, f"SELECT '{tampered}'::dp_agg.dist_state", user="analyst")
    check("refused: an altered sealed state",
          rc != 0 and "not sealed by a node of this cluster" in err, err or out)
rc, out, err = psql(holder, "SELECT '1:0:" + "0" * 32 + ":0:0:5:0.5'::dp_agg.dist_state",
                    user="analyst")
check("refused: a partial state in the plain form", rc != 0 and "not a sealed state" in err,
      err or out)

frag = capture_fragment("SELECT g, dp_count(*), dp_sum(v, 0, 100) FROM t GROUP BY g")
shard = re.search(r"FROM public\.t_(\d+)", frag).group(1)
holder = int(q(COORD, f"SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = {shard}"))
other = W2 if holder == W1 else W1
rc, out, err = psql(holder, frag)
check("refused: a replayed fragment", rc != 0 and "sent again" in err, err or out)
rc, out, err = psql(holder, frag.replace("WHERE true", "WHERE id = 1", 1))
check("refused: a replayed fragment with another filter",
      rc != 0 and "differs from the fragment the coordinator signed" in err, err or out)
forged = re.sub(r"(dpf3:[^']*:)[0-9a-f]{64}'", lambda m: m.group(1) + "0" * 64 + "'", frag)
rc, out, err = psql(holder, forged)
check("refused: a forged signature", rc != 0 and "invalid signature" in err, err or out)
rc, out, err = psql(holder, f"SELECT dp_agg_internal.sum('x', v) FROM t_{shard}", user="analyst")
check("refused: the partial dp_agg_internal.sum without a signature", rc != 0 and out == "", err)
rc, out, err = psql(COORD, "SELECT dp_agg_internal.sum('" + re.search(r"'(dpf3:[^']*)'", frag).group(1) +
                    "', v) FROM t", user="analyst")
check("refused: a signature from a worker's pg_stat_activity sent through the coordinator",
      rc != 0 and "cannot be called directly" in err, err or out)
rc, out, err = psql(COORD, "SELECT * FROM dp_agg_internal.dist_run('x') AS s(a int)", user="analyst")
check("refused: dist_run called by hand", rc != 0 and "cannot be called directly" in err, err)

# ---------- a shard move ----------

frag = capture_fragment("SELECT dp_count(*) FROM t")
shard = re.search(r"FROM public\.t_(\d+)", frag).group(1)
holder = int(q(COORD, f"SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = {shard}"))
other = W2 if holder == W1 else W1
rc, out, err = psql(holder, re.sub(r"FROM public\.t_\d+ t\b.*$", "FROM generate_series(1, 5) t",
                                   frag))
check("refused: a signed fragment that reads a function instead of the shard",
      rc != 0 and "something else than a table" in err, err or out)
q(COORD, f"SELECT citus_move_shard_placement({shard}, '{top}', {holder}, '{top}', {other}, "
         "'block_writes')")
rc, out, err = psql(other, frag)
check("refused: a fragment signed before a shard move, on the shard's new node",
      rc != 0 and "another node" in err, err or out)
before = ledger_count(COORD)
ok = True
for _ in range(2):
    rc, out, err = analyst(COORD, "SELECT dp_count(*) FROM t")
    ok = ok and rc == 0 and out == "20000"
check("after a shard move: exact results, one charge per statement",
      ok and ledger_count(COORD) == before + 2, f"{err} {out} ledger {before} -> {ledger_count(COORD)}")

# ---------- a worker failing mid-statement ----------

shard = q(COORD, f"SELECT min(shardid) FROM pg_dist_shard_placement WHERE nodeport = {W2}")
# one -c string is one transaction: the lock is held while it sleeps
locker = subprocess.Popen(["psql", "-XAtq", "-h", top, "-p", str(W2), "-d", "postgres", "-c",
                           "SET citus.enable_manual_changes_to_shards = on; "
                           f"LOCK TABLE t_{shard} IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(300)"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(100):
    if q(W2, f"SELECT count(*) FROM pg_locks WHERE relation = 't_{shard}'::regclass "
             "AND mode = 'AccessExclusiveLock' AND granted") == "1":
        break
    time.sleep(0.1)
before = ledger_count(COORD)
stmt = subprocess.Popen(["psql", "-XAtq", "-h", top, "-p", str(COORD), "-U", "analyst", "-d",
                         "postgres", "-c", "SET dp_agg.epsilon = 1e9",
                         "-c", "SELECT dp_count(*) FROM t"],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
charged = False
for _ in range(100):   # wait (at most 10 s) until the statement is charged and waits
    if ledger_count(COORD) == before + 1:
        charged = True
        break
    time.sleep(0.1)
time.sleep(0.5)
pg_ctl(W2, "stop", mode="immediate")
out, err = stmt.communicate(timeout=120)
locker.kill()
check("a worker stopped mid-statement: it fails, the charge stands, nothing is released",
      charged and stmt.returncode != 0 and out.strip() == "" and ledger_count(COORD) == before + 1,
      f"charged {charged} rc {stmt.returncode} out {out!r} err {err.strip()[:200]}")
pg_ctl(W2, "start")

# ---------- protected Citus tables (doc/guard.md, "Protected tables", "Citus") ----------
#
# pa.people is distributed by id over 8 shards, pa.ref is a reference table;
# both are protected and owned by pa_owner.  pa_analyst holds a grant of
# access and no SELECT, pa_reader holds SELECT and no grant: both are
# untrusted, and both may log in to every node.  Every attack below is one
# of the classes of sql/protect_attack.sql that apply to a Citus table,
# run through the coordinator: refused, nothing returned, nothing charged.

for sql in ("CREATE ROLE pa_owner LOGIN", "CREATE ROLE pa_analyst LOGIN",
            "CREATE ROLE pa_reader LOGIN", "CREATE ROLE pa_nobody LOGIN",
            "CREATE SCHEMA pa", "GRANT USAGE ON SCHEMA pa TO PUBLIC",
            "GRANT CREATE ON SCHEMA pa TO pa_owner",
            "CREATE TABLE pa.people (id int PRIMARY KEY, age int, name text, salary numeric)",
            "SELECT create_distributed_table('pa.people', 'id')",
            "INSERT INTO pa.people SELECT i, 18 + i % 70, CASE WHEN i % 97 = 0 THEN NULL "
            "ELSE 'name' || i END, (i % 1000) * 100.5 FROM generate_series(1, 2000) i",
            "CREATE TABLE pa.ref (id int, age int)",
            "SELECT create_reference_table('pa.ref')",
            "INSERT INTO pa.ref SELECT i, 18 + i % 70 FROM generate_series(1, 500) i",
            "CREATE TABLE pa.other (id int)",
            "INSERT INTO pa.other SELECT generate_series(1, 10)",
            "CREATE VIEW pa.v AS SELECT id, age, name FROM pa.people",
            "ALTER TABLE pa.people OWNER TO pa_owner", "ALTER TABLE pa.ref OWNER TO pa_owner",
            "ALTER VIEW pa.v OWNER TO pa_owner",
            "GRANT SELECT ON pa.v, pa.other TO pa_analyst",
            "GRANT SELECT ON pa.people, pa.ref TO pa_reader",
            "SELECT dp_agg.protect('pa.people')", "SELECT dp_agg.protect('pa.ref')",
            "SELECT dp_agg.grant_access('pa.people', 'pa_analyst')",
            "SELECT dp_agg.grant_access('pa.ref', 'pa_analyst')",
            "SELECT dp_agg.set_budget('pa_analyst', 1e12, 0.5)",
            "SELECT dp_agg.set_budget('pa_reader', 1e12, 0.5)",
            "SELECT dp_agg.set_budget('pa_nobody', 1e12, 0.5)",
            "SELECT dp_agg.set_budget('pa_owner', 1e12, 0.5)"):
    q(COORD, sql)


def role_ledger(role):
    return int(q(COORD, f"SELECT count(*) FROM dp_agg.ledger WHERE role = '{role}'::regrole"))


def labels(port):
    return q(port, "SELECT string_agg(objoid::regclass::text, ',' ORDER BY objoid::regclass::text) "
                   "FROM pg_seclabel WHERE provider = 'dp_agg'")


check("protect labels the tables, and Citus carries the label to every worker",
      all(labels(p) == "pa.people,pa.ref" for p in (COORD, W1, W2)),
      " / ".join(labels(p) for p in (COORD, W1, W2)))

PA_SHARD = q(COORD, "SELECT min(shardid) FROM pg_dist_shard_placement WHERE nodeport = "
                    f"{W1} AND shardid IN (SELECT shardid FROM pg_dist_shard WHERE "
                    "logicalrelid = 'pa.people'::regclass)")
PA_REF_SHARD = q(COORD, "SELECT shardid FROM pg_dist_shard WHERE logicalrelid = 'pa.ref'::regclass")

# the statistics views show an untrusted role no row of a protected
# relation (dp_agg_internal.statistics_visible): refused, or no row of it (count 0)
HIDDEN_OK = {
    "SELECT count(*) FROM pg_stats WHERE tablename = 'people'",
    "SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 'people'",
    f"SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 'people_{PA_SHARD}'",
    f"SELECT count(*) FROM pg_stats WHERE tablename = 'people_{PA_SHARD}'",
}


def leaked(sql, rc, out):
    """Did an attack that must be refused return something?"""
    if sql in HIDDEN_OK and rc == 0:
        return out.strip() not in ("", "0")
    return rc == 0 or out != ""


COORD_ATTACKS = [
    # exact aggregates, window functions, GROUP BY next to DP ones
    "SELECT dp_count(id, 1e-15), count(*) FROM pa.people",
    "SELECT dp_count(id, 1) FROM pa.people HAVING count(*) > 100",
    "SELECT dp_count(id, 1), count(*) OVER () FROM pa.people",
    "SELECT dp_count(DISTINCT id, 1) FROM pa.people",
    "SELECT count(*) FROM (SELECT dp_count(id, 1) AS n FROM pa.people) s",
    # errors that depend on row values
    "SELECT dp_count(id, 1) FROM pa.people WHERE 1 / (age - 50) > 0",
    "SELECT dp_count(id, 1) FROM pa.people WHERE name::int > 0",
    "SELECT dp_sum(age * 100000000, 0, 10, 1) FROM pa.people",
    "SELECT dp_count(id, 1) FROM pa.people WHERE name ~ ('(' || age::text)",
    "SELECT dp_count(id, 1) FROM pa.people WHERE GREATEST(age, 50) > 60",
    "SELECT dp_count(id, 1) FROM pa.ref WHERE 1 / (age - 50) > 0",
    # per-row side effects and timing
    "SELECT dp_count(id, 1) FROM pa.people WHERE set_config('pa.seen', name, true) IS NOT NULL",
    "SELECT dp_count(id, 1) FROM pa.people WHERE pg_try_advisory_lock(age)",
    "SELECT dp_count(id, 1) FROM pa.people WHERE age = 42 AND pg_sleep(1) IS NULL",
    "SELECT dp_count(id, 1) FROM pa.people WHERE random() < 0.5",
    # EXPLAIN and statistics
    "EXPLAIN SELECT dp_count(id, 1) FROM pa.people WHERE age = 42",
    "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT dp_count(id, 1) FROM pa.people",
    "EXPLAIN SELECT dp_count(id, 1) FROM pa.ref",
    "SELECT count(*) FROM pg_stats WHERE tablename = 'people'",
    "SELECT pg_stat_get_live_tuples('pa.people'::regclass)",
    "SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 'people'",
    # reading the rows otherwise than through DP aggregates
    "SELECT * FROM pa.people WHERE id = 77",
    "SELECT * FROM pa.ref LIMIT 1",
    "SELECT * FROM pa.v LIMIT 1",
    "COPY pa.people TO STDOUT",
    "COPY pa.ref TO STDOUT",
    "COPY (SELECT name FROM pa.v) TO STDOUT",
    "CREATE TEMPORARY TABLE stolen AS SELECT * FROM pa.v",
    "DO $$ BEGIN PERFORM count(*) FROM pa.people; END $$",
    f"SELECT * FROM pa.people_{PA_SHARD} LIMIT 1",
    f"SELECT * FROM pa.ref_{PA_REF_SHARD} LIMIT 1",
    f"COPY pa.ref_{PA_REF_SHARD} TO STDOUT",
    "UPDATE pa.people SET age = age WHERE age = 42",
    "DELETE FROM pa.people WHERE id = -1",
    "INSERT INTO pa.people VALUES (1, 1, 'x', 1) ON CONFLICT (id) DO NOTHING",
    "INSERT INTO pa.ref VALUES (1, 1)",
    # sub-queries, joins, CTEs
    "SELECT dp_count(id, 1) FROM pa.other WHERE id IN (SELECT id FROM pa.people)",
    "SELECT dp_count(p.id, 1) FROM pa.people p JOIN pa.other o ON o.id = p.id",
    "WITH r AS MATERIALIZED (SELECT * FROM pa.people) SELECT dp_count(r.id, 1) FROM r",
    # a function of constants under CASE runs for the matching rows only
    "SELECT dp_count(id, 1) FROM pa.people t WHERE CASE WHEN t.id = 500 AND t.name = "
    "'name500' THEN current_setting('no.such') IS NULL ELSE true END",
    # expressions that can fail on rows: trapped locally, but nothing traps
    # them on the workers, so refused over a protected Citus table
    "SELECT dp_count(id, 1) FROM pa.people WHERE age + 2147483600 > 0",
    "SELECT dp_count(id, 1) FROM pa.people WHERE (name || 'x')::int > 0",
    "SELECT dp_count(id, 1) FROM pa.people t WHERE ARRAY[t.name, t.name] IS NOT NULL",
    # GROUP BY: public keys, grouping sets, failing keys, exact aggregates
    "SET dp_agg.group_keys = 'public'; SELECT age, dp_count(id, 1) FROM pa.people GROUP BY age",
    "SELECT age, dp_count(id, 1) FROM pa.people GROUP BY ROLLUP (age)",
    "SELECT age / (age - 50), dp_count(id, 1) FROM pa.people GROUP BY 1",
    "SELECT age, dp_count(id, 1) FROM pa.people GROUP BY age HAVING count(*) > 1",
    "SELECT DISTINCT age FROM pa.people",
    # timing amplified by large expressions, the floor on epsilon, sampling
    "SELECT dp_count(id, 1) FROM pa.people WHERE md5(repeat(name, 100000)) = 'x'",
    "SELECT dp_count(id, 1) FROM pa.people WHERE id = ANY (ARRAY(SELECT generate_series(1, 100000)))",
    "SELECT dp_count(id, 1e-15) FROM pa.people",
    "SELECT dp_count(id, 1) FROM pa.people TABLESAMPLE BERNOULLI (50)",
    "SELECT dp_count(id, 1) FROM pa.people TABLESAMPLE SYSTEM_ROWS (10)",
    # the partial aggregates and the rewrite's functions by hand
    "SELECT dp_agg_internal.sum('x', age) FROM pa.people",
    "SELECT * FROM dp_agg_internal.dist_run('x') AS s(a int)",
]
PA_SETTINGS = ("SET dp_agg.selection_epsilon = 1; SET dp_agg.selection_delta = 1e-10; "
               "SET statement_timeout = '20s'; ")
for role in ("pa_analyst", "pa_reader"):
    before = role_ledger(role)
    bad = []
    for sql in COORD_ATTACKS:
        rc, out, err = psql(COORD, PA_SETTINGS + sql, user=role)
        if leaked(sql, rc, out):
            bad.append(f"{sql}: rc {rc}, {out[:80]!r}")
    check(f"protected Citus tables: {len(COORD_ATTACKS)} attacks through the coordinator by "
          f"{role} refused, nothing returned, nothing charged",
          not bad and role_ledger(role) == before,
          f"{bad[:3]}, ledger {before} -> {role_ledger(role)}")

# accepted: DP values only, each charged once; the grant replaces SELECT
ACCEPTED = [
    ("SELECT dp_count(id), dp_sum(age, 0, 100) FROM pa.people",
     "SELECT count(id) || '|' || sum(age) FROM pa.people"),
    ("SELECT dp_count(*) FROM pa.people WHERE id = 77", "SELECT '1'"),
    ("SELECT dp_avg(age, 0, 100) FROM pa.ref WHERE age < 30",
     "SELECT avg(age) FROM pa.ref WHERE age < 30"),
    ("SELECT dp_count(id) FILTER (WHERE name IS NULL) FROM pa.people",
     "SELECT count(id) FILTER (WHERE name IS NULL) FROM pa.people"),
    ("SELECT age, dp_count(id) FROM pa.people WHERE age < 20 GROUP BY age ORDER BY age",
     "SELECT string_agg(age || '|' || n, E'\\n' ORDER BY age) FROM (SELECT age, count(id) n "
     "FROM pa.people WHERE age < 20 GROUP BY age) s"),
]
for role in ("pa_analyst", "pa_reader"):
    before = role_ledger(role)
    bad = []
    for dp_sql, native_sql in ACCEPTED:
        rc, out, err = psql(COORD, "SET dp_agg.epsilon = 1e9; SET dp_agg.selection_epsilon = 1e9; "
                            "SET dp_agg.selection_delta = 1e-6; " + dp_sql, user=role)
        native = q(COORD, native_sql)
        got = rows(out) if rc == 0 else None
        want = rows(native)
        if got is None or len(got) != len(want) or any(
                abs(float(a) - float(b)) > 1e-3 for x, y in zip(got, want) for a, b in zip(x, y)):
            bad.append(f"{dp_sql}: {err or out} != {native}")
    check(f"protected Citus tables: DP statements of {role} accepted, exact at epsilon 1e9, "
          "each charged once",
          not bad and role_ledger(role) == before + len(ACCEPTED),
          f"{bad[:2]}, ledger {before} -> {role_ledger(role)}")
before = role_ledger("pa_nobody")
rc, out, err = psql(COORD, "SELECT dp_count(id, 1) FROM pa.people", user="pa_nobody")
check("protected Citus tables: a role with neither a grant nor SELECT is refused before the "
      "charge", rc != 0 and "permission denied" in err and role_ledger("pa_nobody") == before,
      err or out)
rc, out, err = psql(COORD, "SELECT count(*) FROM pa.people", user="pa_owner")
check("protected Citus tables: the owner (trusted) reads its table", rc == 0 and out == "2000",
      err or out)
# an owner without LOGIN: Citus could not connect as it, refused before the charge
for sql in ("CREATE ROLE pa_nologin NOLOGIN", "GRANT CREATE ON SCHEMA pa TO pa_nologin",
            "CREATE TABLE pa.nl (id int)", "SELECT create_distributed_table('pa.nl', 'id')",
            "INSERT INTO pa.nl SELECT generate_series(1, 10)", "ALTER TABLE pa.nl OWNER TO pa_nologin",
            "SELECT dp_agg.protect('pa.nl')", "SELECT dp_agg.grant_access('pa.nl', 'pa_analyst')"):
    q(COORD, sql)
before = role_ledger("pa_analyst")
rc, out, err = psql(COORD, "SELECT dp_count(id, 1) FROM pa.nl", user="pa_analyst")
check("protected Citus tables: an owner that cannot log in is refused before the charge",
      rc != 0 and "cannot log in" in err and role_ledger("pa_analyst") == before, err or out)
q(COORD, "DROP TABLE pa.nl")   # Citus itself cannot move its shards either

# alter_distributed_table builds a new table (a new OID: dp_agg.protected loses
# its row and grants): the label Citus copies keeps it protected everywhere
for sql in ("CREATE TABLE pa.moved (id int, v int)", "SELECT create_distributed_table('pa.moved', 'id')",
            "INSERT INTO pa.moved SELECT i, i FROM generate_series(1, 100) i",
            "GRANT SELECT ON pa.moved TO pa_reader", "SELECT dp_agg.protect('pa.moved')",
            "SELECT alter_distributed_table('pa.moved', shard_count := 4, "
            "cascade_to_colocated := false)"):
    q(COORD, sql)
rc, out, err = psql(COORD, "SELECT * FROM pa.moved LIMIT 1", user="pa_reader")
rc2, out2, err2 = psql(W1, "SELECT * FROM pa.moved LIMIT 1", user="pa_reader")
check("a protected table rebuilt by alter_distributed_table stays protected (its label), on the "
      "coordinator and the workers",
      rc != 0 and "is protected" in err and rc2 != 0 and "is protected" in err2, f"{err} / {err2}")

# a partitioned distributed table: protected with its partitions, on every node
for sql in ("CREATE TABLE pa.visits (id int, y int, v int) PARTITION BY LIST (y)",
            "CREATE TABLE pa.visits_1 PARTITION OF pa.visits FOR VALUES IN (1)",
            "CREATE TABLE pa.visits_2 PARTITION OF pa.visits FOR VALUES IN (2)",
            "SELECT create_distributed_table('pa.visits', 'id')",
            "INSERT INTO pa.visits SELECT i, 1 + i % 2, i % 10 FROM generate_series(1, 1000) i",
            "ALTER TABLE pa.visits OWNER TO pa_owner", "SELECT dp_agg.protect('pa.visits')",
            "SELECT dp_agg.grant_access('pa.visits', 'pa_analyst')"):
    q(COORD, sql)
part_shard = q(COORD, f"SELECT min(shardid) FROM pg_dist_shard_placement WHERE nodeport = {W1} AND "
                      "shardid IN (SELECT shardid FROM pg_dist_shard WHERE "
                      "logicalrelid = 'pa.visits_1'::regclass)")
rc, out, err = psql(COORD, "SET dp_agg.epsilon = 1e9; SELECT dp_count(*), dp_sum(v, 0, 10) FROM "
                    "pa.visits; SELECT dp_count(*) FROM pa.visits WHERE y = 1", user="pa_analyst")
bad = [sql for sql in (f"SELECT * FROM pa.visits_1_{part_shard} LIMIT 1", "SELECT * FROM pa.visits_1",
                       "SELECT count(*) FROM pa.visits")
       if psql(W1, sql, user="pa_analyst")[0] == 0]
bad += [sql for sql in ("SELECT * FROM pa.visits_2 LIMIT 1",)
        if psql(COORD, sql, user="pa_analyst")[0] == 0]
check("a protected partitioned distributed table: DP statements exact (its partitions' shards read "
      "with it), its partitions and their shards refused on the coordinator and a worker",
      rc == 0 and out == "1000|4500\n500" and not bad, f"{err or out}; {bad}")

# the same analysts, logged in to a worker: nothing of the protected
# tables, their shards or their statistics (fragments run as the owner)
WORKER_ATTACKS = [
    f"SELECT * FROM pa.people_{PA_SHARD} LIMIT 1",
    f"SELECT count(*) FROM pa.people_{PA_SHARD}",
    f"SELECT * FROM pa.ref_{PA_REF_SHARD} LIMIT 1",
    "SELECT * FROM pa.people WHERE id = 77",
    "SELECT count(*) FROM pa.ref",
    f"SELECT dp_count(*) FROM pa.people_{PA_SHARD}",
    "SELECT dp_count(*) FROM pa.people",
    f"COPY pa.people_{PA_SHARD} TO STDOUT",
    f"COPY (SELECT * FROM pa.people_{PA_SHARD}) TO STDOUT",
    f"EXPLAIN SELECT * FROM pa.people_{PA_SHARD} WHERE id = 5",
    f"SELECT pg_stat_get_live_tuples('pa.people_{PA_SHARD}'::regclass)",
    f"SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 'people_{PA_SHARD}'",
    f"SELECT count(*) FROM pg_stats WHERE tablename = 'people_{PA_SHARD}'",
    f"SET citus.enable_manual_changes_to_shards = on; "
    f"INSERT INTO pa.people_{PA_SHARD} VALUES (-5, 1, 'x', 1)",
    "SELECT * FROM pa.v LIMIT 1",
    f"CREATE TEMPORARY TABLE stolen AS SELECT * FROM pa.people_{PA_SHARD}",
]
for role in ("pa_analyst", "pa_reader"):
    bad = []
    for sql in WORKER_ATTACKS:
        rc, out, err = psql(W1, "SET statement_timeout = '20s'; " + sql, user=role)
        if leaked(sql, rc, out):
            bad.append(f"{sql}: rc {rc}, {out[:80]!r}")
    check(f"protected Citus tables: {len(WORKER_ATTACKS)} reads on a worker by {role} with a "
          "login refused", not bad, str(bad[:3]))
rc, out, err = psql(W1, f"SELECT dp_agg.unprotect('pa.people')")
check("protected Citus tables: protection is administered on the coordinator only",
      rc != 0 and "administered on the coordinator" in err, err or out)


def capture_as_superuser(port, pattern):
    for _ in range(300):
        out = q(port, "SELECT query FROM pg_stat_activity WHERE query LIKE '%dpf3:%' "
                      f"AND query LIKE '%{pattern}%' AND pid <> pg_backend_pid() LIMIT 1")
        if out:
            return out
        time.sleep(0.05)
    return None


# ---------- a fragment replayed ahead of Citus (doc/citus.md, "Citus", "Bound fragments") ----------
#
# The attack of the review: the analyst runs its own statement with
# citus.max_adaptive_executor_pool_size = 1 (Citus reads a worker's shards
# one after the other), reads its first fragment in pg_stat_activity on the
# worker (track_activity_query_size raised on every node) and sends it, shard
# name changed, to another shard of that worker before Citus does.  Here
# Citus is held on one shard by a lock, so that the fragment stays in
# pg_stat_activity while the others wait.  The analyst sees no fragment (it
# runs as the owner), and even the text a superuser reads there, sent by
# the analyst, returns nothing.

locked = q(COORD, f"SELECT max(shardid) FROM pg_dist_shard_placement WHERE nodeport = {W1} AND "
                  "shardid IN (SELECT shardid FROM pg_dist_shard WHERE "
                  "logicalrelid = 'pa.people'::regclass)")
other_shard = PA_SHARD
locker = subprocess.Popen(["psql", "-XAtq", "-h", top, "-p", str(W1), "-d", "postgres", "-c",
                           "SET citus.enable_manual_changes_to_shards = on; "
                           f"LOCK TABLE pa.people_{locked} IN ACCESS EXCLUSIVE MODE; "
                           "SELECT pg_sleep(300)"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          env=dict(os.environ, PGAPPNAME="dp_agg_citus_locker"))
for _ in range(100):
    if q(W1, f"SELECT count(*) FROM pg_locks WHERE relation = 'pa.people_{locked}'::regclass "
             "AND mode = 'AccessExclusiveLock' AND granted") == "1":
        break
    time.sleep(0.1)
stmt = subprocess.Popen(["psql", "-XAtq", "-h", top, "-p", str(COORD), "-U", "pa_analyst", "-d",
                         "postgres", "-c", "SET citus.max_adaptive_executor_pool_size = 1; "
                         "SET dp_agg.epsilon = 1; SET dp_agg.selection_epsilon = 1; "
                         "SET dp_agg.selection_delta = 1e-6; "
                         "SELECT id, dp_count(*) FROM pa.people WHERE age = 42 GROUP BY id"],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
frag = capture_as_superuser(W1, f"people_{locked}")
seen = q(W1, "SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND "
             "query LIKE '%dpf3:%'", user="pa_analyst")
replayed = None
if frag:
    replayed = psql(W1, frag.replace(f"pa.people_{locked}", f"pa.people_{other_shard}"),
                    user="pa_analyst")
q(W1, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = "
      "'dp_agg_citus_locker'")
locker.wait()
out, err = stmt.communicate(timeout=120)
check("a fragment replayed ahead of Citus: the analyst sees no fragment in pg_stat_activity",
      frag is not None and seen == "0", f"{frag!r:.80} / seen {seen}")
check("a fragment replayed ahead of Citus, shard name changed, returns nothing readable",
      replayed is not None and replayed[0] != 0 and replayed[1] == "" and "is protected" in replayed[2],
      str(replayed))
check("a fragment replayed ahead of Citus: the statement itself completes",
      stmt.returncode == 0, err.strip()[:200])

# ---------- a worker restarted (doc/citus.md, "Citus", "Signed fragments") ----------

frag = capture_fragment("SELECT dp_count(*) FROM t WHERE id = 11")
shard = re.search(r"FROM public\.t_(\d+)", frag).group(1)
holder = int(q(COORD, f"SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = {shard}"))
pg_ctl(holder, "restart")
rc, out, err = psql(holder, frag, user="analyst")
check("a worker restarted: a fragment signed before is refused (its memory of used fragments "
      "began again)", rc != 0 and out == "" and "signed before this node started" in err,
      err or out)
before = ledger_count(COORD)
rc, out, err = analyst(COORD, "SELECT dp_count(*) FROM t")
held = q(COORD, f"SELECT min(shardid) FROM pg_dist_shard_placement WHERE nodeport = {holder} AND "
                "shardid IN (SELECT shardid FROM pg_dist_shard WHERE "
                "logicalrelid = 'pa.people'::regclass)")
rc2, out2, err2 = psql(holder, f"SELECT count(*) FROM pa.people_{held}", user="pa_analyst")
check("a worker restarted: statements exact and charged once, the protection holds there",
      rc == 0 and out == "20000" and ledger_count(COORD) == before + 1 and rc2 != 0 and out2 == ""
      and "is protected" in err2,
      f"{err or out} / {err2 or out2}")

# ---------- protection through a shard move and a worker added later ----------

moved_shard = PA_SHARD
q(COORD, f"SELECT citus_move_shard_placement({moved_shard}, '{top}', {W1}, '{top}', {W2}, "
         "'block_writes')")
rc, out, err = psql(W2, f"SELECT * FROM pa.people_{moved_shard} LIMIT 1", user="pa_analyst")
rc2, out2, err2 = psql(COORD, "SELECT dp_count(id, 1e9) FROM pa.people", user="pa_analyst")
check("a shard of a protected table moved: refused on its new node, DP statements exact",
      rc != 0 and out == "" and "is protected" in err and rc2 == 0 and out2 == "2000",
      f"{err or out} / {err2 or out2}")

start_node(W3, True)
q(COORD, f"SELECT citus_add_node('{top}', {W3})")
q(COORD, "SELECT replicate_reference_tables('block_writes')")
q(COORD, f"SELECT citus_move_shard_placement({moved_shard}, '{top}', {W2}, '{top}', {W3}, "
         "'block_writes')")
w3_labels = q(W3, "SET citus.override_table_visibility = off; SELECT string_agg(objoid::regclass::text,"
                  " ',' ORDER BY objoid::regclass::text) FROM pg_seclabel WHERE provider = 'dp_agg'")
bad = []
for sql in (f"SELECT * FROM pa.people_{moved_shard} LIMIT 1",
            f"SELECT * FROM pa.ref_{PA_REF_SHARD} LIMIT 1", "SELECT count(*) FROM pa.people",
            f"SELECT pg_stat_get_live_tuples('pa.people_{moved_shard}'::regclass)"):
    rc, out, err = psql(W3, sql, user="pa_analyst")
    if rc == 0 or out != "":
        bad.append(sql)
before = role_ledger("pa_analyst")
rc, out, err = psql(COORD, "SELECT dp_count(id, 1e9), dp_sum(age, 0, 100, 1e9) FROM pa.people; "
                    "SELECT dp_count(id, 1e9) FROM pa.ref", user="pa_analyst")
check("a worker added after protection knows it (the tables' and moved shards' labels): the "
      "analyst is refused there, DP statements read it, exact, charged once",
      {"pa.people", f"pa.people_{moved_shard}", "pa.ref", f"pa.ref_{PA_REF_SHARD}"} <=
      set(w3_labels.split(",")) and not bad
      and rc == 0 and out == "2000|" + q(COORD, "SELECT sum(age) FROM pa.people") + "\n500"
      and role_ledger("pa_analyst") == before + 2,
      f"labels {w3_labels}; {bad}; {err or out}")

# ---------- shard names Citus shortens ----------

LONG = "a_table_whose_name_is_long_enough_that_citus_shortens_its_shard"
for sql in (f"CREATE TABLE {LONG} (id int, v int)", f"SELECT create_distributed_table('{LONG}', 'id')",
            f"INSERT INTO {LONG} SELECT i, i % 10 FROM generate_series(1, 1000) i",
            f"GRANT SELECT ON {LONG} TO analyst"):
    q(COORD, sql)
short = q(COORD, f"SELECT shard_name('{LONG}'::regclass, min(shardid)) FROM pg_dist_shard "
                 f"WHERE logicalrelid = '{LONG}'::regclass")
rc, out, err = analyst(COORD, f"SELECT dp_count(*), dp_sum(v, 0, 10) FROM {LONG}; "
                       f"SELECT v, dp_count(*) FROM {LONG} GROUP BY v ORDER BY v LIMIT 2; "
                       f"SELECT dp_count(*) FROM {LONG} WHERE id = 5")
check("a table whose shard names Citus shortens: exact results (no GROUP BY, GROUP BY, router)",
      len(LONG) == 63 and LONG not in short and rc == 0 and out == "1000|4500\n0|100\n1|100\n1",
      f"{short}: {err or out}")

# ---------- privacy units on Citus tables (doc/units-and-groups.md, "Privacy units", "Citus") ----------
#
# 200 units (person 0..199) of 10 rows each, in group person % 4, and unit
# 1000 of 1,000 rows in every group (g = i % 4).  pu is distributed by the
# unit (its rows on one shard each), qu by id: unit 1000's rows are on every
# shard.  qu0, pu0 are the same without unit 1000 (neighbouring databases).
# At epsilon 1e9 the noise has scale at most 4 * 100 / 1e9 (k R c / epsilon,
# R and k at most 4 here), so a difference above 1e-3 has probability below
# exp(-1e4): releases are exact.  Bounding: each unit counts at most
# R = max_rows_contributed rows in each of at most k = max_groups_contributed
# groups, so removing unit 1000 moves each count release by at most R and
# the sum over the groups by at most k R (a sum by at most max(|l|, |u|) per
# group).  Counting rows would move them by 250 to 1,000.

UNIT_ROWS = ("SELECT i, i % 200, (i % 200) % 4, i % 50 FROM generate_series(1, 2000) i",
             "SELECT 100000 + i, 1000, i % 4, 7 FROM generate_series(1, 1000) i")
for name, dist in (("pu", "person"), ("qu", "id"), ("pu0", "person"), ("qu0", "id")):
    q(COORD, f"CREATE TABLE {name} (id int, person int, g int, v int)")
    q(COORD, f"SELECT create_distributed_table('{name}', '{dist}')")
    for sel in (UNIT_ROWS if not name.endswith("0") else UNIT_ROWS[:1]):
        q(COORD, f"INSERT INTO {name} {sel}")
    q(COORD, f"SELECT dp_agg.set_privacy_unit('{name}', 'person')")
    q(COORD, f"GRANT SELECT ON {name} TO analyst")
q(COORD, "CREATE TABLE qu_local AS SELECT * FROM qu")
q(COORD, "SELECT dp_agg.set_privacy_unit('qu_local', 'person')")
q(COORD, "GRANT SELECT ON qu_local TO analyst")
spread = q(COORD, "SELECT count(DISTINCT get_shard_id_for_distribution_column('qu', id)) || '|' || "
                  "count(DISTINCT get_shard_id_for_distribution_column('pu', person)) FROM qu "
                  "WHERE person = 1000")
check("privacy units: unit 1000's rows are on every shard of qu, on one of pu", spread == "8|1",
      spread)


def unit_stmt(sql, rows_, groups):
    return analyst(COORD, "SET dp_agg.group_keys = 'public'; "
                   f"SET dp_agg.max_rows_contributed = {rows_}; "
                   f"SET dp_agg.max_groups_contributed = {groups}; " + sql)


UNIT_SQL = "SELECT dp_count(*), dp_sum(v, 0, 100), dp_avg(v, 0, 100), dp_count(v) FROM {t}"
for rows_ in (1, 4):
    rc, out, err = unit_stmt(UNIT_SQL.format(t="qu_local"), rows_, 0)
    local = rows(out)
    for t in ("pu", "qu"):
        rc2, out2, err2 = unit_stmt(UNIT_SQL.format(t=t), rows_, 0)
        got = rows(out2)
        check(f"privacy units ({'the distribution column' if t == 'pu' else 'another column'}), "
              f"R = {rows_}: each unit bounded once, as on a local table",
              rc == 0 and rc2 == 0 and len(got) == 1 and
              all(abs(float(a) - float(b)) <= 1e-3 for a, b in zip(got[0], local[0])),
              f"{err or err2} {got} != {local}")

GROUPED = "SELECT g, dp_count(*), dp_sum(v, 0, 100) FROM {t} GROUP BY g ORDER BY g"
for t in ("pu", "qu"):
    for rows_, groups in ((1, 1), (4, 1), (4, 4)):
        rc, out, err = unit_stmt(GROUPED.format(t=t), rows_, groups)
        rc0, out0, err0 = unit_stmt(GROUPED.format(t=t + "0"), rows_, groups)
        d, d0 = rows(out), rows(out0)
        ok = rc == 0 and rc0 == 0 and len(d) == len(d0) == 4
        moved = total = 0.0
        for a, b in zip(d, d0) if ok else ():
            dc = float(a[1]) - float(b[1])
            ds = float(a[2]) - float(b[2])
            ok = ok and a[0] == b[0] and -1e-3 <= dc <= rows_ + 1e-3 and -1e-3 <= ds <= 100 + 1e-3
            moved += dc
            total += ds
        # unit 1000 has 250 rows of total 1,750 in each group: each group it
        # keeps moves by exactly R and 100, and it keeps exactly k of them
        check(f"privacy units on {t}: unit 1000 (1,000 rows) moves each release by at most its "
              f"bound (R = {rows_}, k = {groups}), in exactly k groups",
              ok and abs(moved - rows_ * groups) <= 1e-3 and abs(total - 100 * groups) <= 1e-3,
              f"{err or err0} {d} vs {d0}")

# the k-subset is uniform: with k = 1 and R = 1, unit 1000 adds 1 to one of
# its 4 groups, each with probability 1/4 whatever the keys; over 120
# statements each group's number is Binomial(120, 1/4), accepted in the
# interval whose tails each have probability at most 1.25e-7 (four groups:
# false failure at most 1e-6).  Always the first (or last) key would put
# 120 in one group.
lo4, hi4 = binomial_interval(120, 0.25, 1.25e-7)
without = {r[0]: float(r[1]) for r in rows(unit_stmt(GROUPED.format(t="qu0"), 1, 1)[1])}
hits = {"0": 0, "1": 0, "2": 0, "3": 0}
errs = []
for _ in range(120):
    rc, out, err = unit_stmt(GROUPED.format(t="qu"), 1, 1)
    if rc != 0:
        errs.append(err)
        break
    for r in rows(out):
        if abs(float(r[1]) - without[r[0]] - 1) <= 1e-3:
            hits[r[0]] += 1
print(f"-- privacy units: unit 1000's group over 120 statements {hits}, accepted [{lo4}, {hi4}] each")
check("privacy units: each unit's group is chosen uniformly (binomial, false failure <= 1e-6)",
      not errs and sum(hits.values()) == 120 and all(lo4 <= h <= hi4 for h in hits.values()),
      f"{errs[:1]} {hits}")

# the private selection counts units: group 9 holds unit 1000's 1,000 rows and
# no other unit, and is released with probability pi(1) = delta = 1e-7
for t in ("pu", "qu"):
    q(COORD, f"INSERT INTO {t} SELECT 200000 + i, 1000, 9, 7 FROM generate_series(1, 1000) i")
    q(COORD, f"GRANT SELECT ON {t} TO keys")
    rc, out, err = private_keys("SET dp_agg.max_groups_contributed = 5; "
                                f"SELECT g, dp_count(*) FROM {t} GROUP BY g ORDER BY g", 1e-7)
    check(f"privacy units on {t}: the private selection counts units (a group of one unit's "
          "1,000 rows is suppressed)",
          rc == 0 and [r[0] for r in rows(out)] == ["0", "1", "2", "3"], err or out)
detail = q(COORD, "SELECT detail->0->'privacy_unit' FROM dp_agg.ledger ORDER BY id DESC LIMIT 1")
check("privacy units: the ledger records the unit's bounds",
      '"max_groups_contributed": 5' in detail and '"max_rows_contributed": 1' in detail, detail)

# on a protected table, an untrusted role may not raise k above the table's
q(COORD, "SELECT dp_agg.protect('qu')")
before = ledger_count(COORD)
rc, out, err = analyst(COORD, "SET dp_agg.max_groups_contributed = 3; SELECT dp_count(*) FROM qu")
rc2, out2, err2 = analyst(COORD, "SET dp_agg.max_rows_contributed = 3; SELECT dp_count(*) FROM qu")
check("privacy units on a protected table: an untrusted role may not raise k or R, nothing "
      "charged",
      rc != 0 and "exceeds the 1 of relation" in err and rc2 != 0 and "max_rows_contributed_limit" in err2
      and ledger_count(COORD) == before, f"{err} / {err2}")

# ---------- the settings of the analyst's session do not show fragments or counts ----------

rc, out, err = analyst(COORD, "SET client_min_messages = debug5; SET debug_print_plan = on; "
                       "SET trace_sort = on; SET citus.worker_min_messages = debug5; "
                       "SELECT g, dp_count(*) FROM t GROUP BY g")
check("debug_print_plan and trace_sort in the analyst's session show no signed fragment and "
      "no sort of rows",
      rc == 0 and not any(w in err for w in ("dpf3", "tuple sort", "internal sort",
                                             "external sort", "performsort")), err[:300])
# Citus sends the text of the statements that held SET LOCAL commands
# (citus.propagate_set_commands = 'local') on every connection of the
# transaction, also the owner's connections of a protected table: refused
# both ways, before the charge
before = role_ledger("pa_analyst")
PROP = "SET dp_agg.epsilon = 1; SET citus.propagate_set_commands = 'local'; BEGIN; "
rc, out, err = psql(COORD, PROP + "SET LOCAL work_mem = '1MB'; "
                    "SELECT dp_count(*) FROM pa.people; COMMIT", user="pa_analyst")
rc2, out2, err2 = psql(COORD, PROP + "SELECT dp_count(*) IS NOT NULL FROM pa.people; "
                       "SET LOCAL work_mem = '1MB'; SELECT 1; COMMIT", user="pa_analyst")
rc3, out3, err3 = psql(COORD, PROP + "SELECT dp_count(*) IS NOT NULL FROM pa.people; COMMIT; "
                       "SELECT dp_count(*) IS NOT NULL FROM pa.people", user="pa_analyst")
check("SET commands Citus would run on the owner's connections: refused before a DP statement "
      "on a protected table (nothing charged) and after one; without them it runs",
      rc != 0 and "propagates SET commands" in err and rc2 != 0
      and "cannot be propagated" in err2 and rc3 == 0 and out3 == "t\nt"
      and role_ledger("pa_analyst") == before + 3, f"{err} / {err2} / {err3}")

print(f"citus: {passed} passed, {failed} failed")
stop_all()
sys.exit(1 if failed else 0)
