#!/usr/bin/env python3
"""dp_agg on a Citus cluster (README, "Citus"): a coordinator and two workers
on this machine, a table distributed over 8 shards.

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
    sealed states only (encrypted, all of one length, present although no
    row passes), and a sealed state altered or in the plain form is refused;
  - after a shard move, a fragment signed before it is refused on the
    shard's new node, and statements are charged once each;
  - a worker stopped while a statement waits for it: the statement fails,
    its charge stands, nothing is released;
  - a DP statement on a protected Citus table is refused, and so is one on
    a Citus table with a privacy unit.

Usage: check.py BASE_PORT (uses BASE_PORT .. BASE_PORT+2), as the postgres
user, with PATH holding PostgreSQL's binaries and Citus installed.
"""
import atexit
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

base = int(sys.argv[1])
COORD, W1, W2 = base, base + 1, base + 2
top = tempfile.mkdtemp(prefix="dp_agg_citus.")
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
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
    for port in (COORD, W1, W2):
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
                # the groups of these tests (g, id, id % k) are public knowledge:
                # the private selection of keys is not built for Citus tables
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

# private group keys are refused on Citus tables (not built there), before anything is charged
before = ledger_count(COORD)
rc, out, err = analyst(COORD, "SET dp_agg.group_keys = 'private'; SET dp_agg.selection_epsilon = 1; "
                       "SET dp_agg.selection_delta = 1e-6; SELECT g, dp_count(*) FROM t GROUP BY g")
check("GROUP BY with private keys on a Citus table is refused, nothing charged",
      rc != 0 and "not supported on Citus tables" in err and ledger_count(COORD) == before,
      err or out)

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
                                    "'%dpf2:%' LIMIT 1", user=user)
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
specs = re.findall(r"'dpf2:[^']*'", moved)
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
forged = re.sub(r"(dpf2:[^']*:)[0-9a-f]{64}'", lambda m: m.group(1) + "0" * 64 + "'", frag)
rc, out, err = psql(holder, forged)
check("refused: a forged signature", rc != 0 and "invalid signature" in err, err or out)
rc, out, err = psql(holder, f"SELECT dp_agg.sum('x', v) FROM t_{shard}", user="analyst")
check("refused: the partial dp_agg.sum without a signature", rc != 0 and out == "", err)
rc, out, err = psql(COORD, "SELECT dp_agg.sum('" + re.search(r"'(dpf2:[^']*)'", frag).group(1) +
                    "', v) FROM t", user="analyst")
check("refused: a signature from a worker's pg_stat_activity sent through the coordinator",
      rc != 0 and "cannot be called directly" in err, err or out)
rc, out, err = psql(COORD, "SELECT * FROM dp_agg.dist_run('x') AS s(a int)", user="analyst")
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

# ---------- protected tables ----------

rc, out, err = psql(COORD, "SELECT dp_agg.protect('t')")
rc2, out2, err2 = analyst(COORD, "SELECT dp_count(*) FROM t")
check("refused: a DP statement on a protected Citus table",
      rc == 0 and rc2 != 0 and "protected Citus tables are not supported" in err2 and out2 == "",
      f"{err} / {err2} / {out2}")
psql(COORD, "SELECT dp_agg.unprotect('t')")

# ---------- privacy units ----------

rc, out, err = psql(COORD, "SELECT dp_agg.set_privacy_unit('t', 'id')")
rc2, out2, err2 = analyst(COORD, "SELECT dp_count(*) FROM t")
check("refused: a DP statement on a Citus table with a privacy unit",
      rc == 0 and rc2 != 0 and "Citus tables with a privacy unit are not supported" in err2
      and out2 == "",
      f"{err} / {err2} / {out2}")

print(f"citus: {passed} passed, {failed} failed")
stop_all()
sys.exit(1 if failed else 0)
