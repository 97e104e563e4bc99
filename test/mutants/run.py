#!/usr/bin/env python3
"""dp_agg's mutant suite: one-line privacy bugs that the tests must catch.

    python3 test/mutants/run.py [options] [MUTANT ...]

Each mutant (test/mutants/*.mut, format in test/mutants/README.md) is
applied to a scratch copy of the tree, which is built and installed into a
private copy of PostgreSQL; a fresh cluster is started on it and the
mutant's kill suites run, in the order listed (fastest first), stopping at
the first that fails.  The installed extension and the tree are never
touched.  Prints a table (mutant, result, killed by, time) and the line

    N killed, N survived

followed by a line with the mutants that could not be tested (a fragment
that no longer occurs exactly once, a file not found, a build failure)
and the equivalent mutants (documented, never counted).  Exits non-zero
if a mutant survived or could not be tested.  A mutant that no suite
killed while a kill suite could not run for want of Citus is skipped
("mutants: N skipped ..."), neither killed nor failed, unless
DP_CITUS_TARBALL asked for Citus (then it could not be tested).

Options:
  --list            list the mutants and their kill suites, run nothing
  --check           only check that every mutant applies (no build)
  --rotate N        test N mutants chosen from --seed (CI's subset)
  --seed S          the seed of --rotate (default: $DP_MUTANT_SEED, else
                    $DP_COMMIT, else the SHA-256 of src/)
  --every           run every kill suite of each mutant, not only up to
                    the first that kills it (to check second suites)
  --no-baseline     do not first run the selected kill suites unmutated
  --work DIR        scratch directory (default: a new one under $TMPDIR);
                    the private PostgreSQL copy there is reused
  --keep            keep the scratch directory
  --port P          the mutants' cluster port (default $DP_TEST_PORT + 5,
                    or 54334); Citus's nodes take P+1 .. P+3
  --pg-config PATH  the PostgreSQL to copy (default $PG_CONFIG, else
                    Debian's postgresql-15)
  --jobs J          make -j for the builds (default 2)

Runs as the postgres user or any user but root (PostgreSQL refuses root;
test/mutants/run.sh drops to postgres).  Python standard library only.
"""

import hashlib
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))

# the reason a citus kill suite cannot run without Citus
NO_CITUS = "Citus is not installed in "

# the kinds of kill suites, and how long each may run before it counts as
# hung (a hang is a failure the suites would report: the mutant is killed)
SUITE_TIMEOUT = {"regress": 900, "iso": 900, "tap": 900, "stat": 1200,
                 "load": 900, "citus": 900}


# ---------- the definitions ----------

class Mutant:
    def __init__(self, source):
        self.source = source        # "file.mut:line"
        self.name = None
        self.file = None
        self.find = None
        self.replace = None
        self.breaks = ""
        self.kills = []             # [(kind, [args])]
        self.equivalent = None

    def kill_text(self):
        return ", ".join(" ".join([k] + a) for k, a in self.kills)


FIELDS = ("mutant", "file", "find", "replace", "breaks", "kill", "equivalent")


def parse_defs(directory):
    """Every mutant of the *.mut files of directory, in name order."""
    mutants = []
    errors = []
    for fname in sorted(os.listdir(directory)):
        if not fname.endswith(".mut"):
            continue
        path = os.path.join(directory, fname)
        cur = None
        field = None
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                line = line.rstrip("\n")
                if line.startswith("#"):
                    continue
                if line.strip() == "":
                    field = None
                    continue
                if line[0] in " \t":
                    # continuation of a prose field
                    if cur is None or field not in ("breaks", "equivalent"):
                        errors.append("%s:%d: continuation line outside breaks/equivalent"
                                      % (fname, lineno))
                        continue
                    setattr(cur, field, getattr(cur, field) + " " + line.strip())
                    continue
                m = re.match(r"([a-z]+):( (.*))?$", line)
                if not m or m.group(1) not in FIELDS:
                    errors.append("%s:%d: expected one of %s" % (fname, lineno, ", ".join(FIELDS)))
                    continue
                key, value = m.group(1), (m.group(3) or "")
                if key == "mutant":
                    cur = Mutant("%s:%d" % (fname, lineno))
                    cur.name = value.strip()
                    mutants.append(cur)
                    field = None
                    continue
                if cur is None:
                    errors.append("%s:%d: %s before any mutant" % (fname, lineno, key))
                    continue
                field = key
                if key in ("find", "replace"):
                    # verbatim after "find: " (trailing spaces are not significant)
                    setattr(cur, key, value.rstrip())
                elif key == "kill":
                    words = value.split()
                    if not words or words[0] not in SUITE_TIMEOUT:
                        errors.append("%s:%d: kill needs a suite kind (%s)"
                                      % (fname, lineno, " ".join(SUITE_TIMEOUT)))
                    else:
                        cur.kills.append((words[0], words[1:]))
                else:
                    setattr(cur, key, value.strip())
    names = set()
    for m in mutants:
        where = "%s (%s)" % (m.name, m.source)
        if not re.match(r"^[a-z0-9][a-z0-9-]*$", m.name or ""):
            errors.append("%s: a mutant's name is lower-case words joined by '-'" % where)
        if m.name in names:
            errors.append("%s: duplicate name" % where)
        names.add(m.name)
        if not m.file or "/" in m.file:
            errors.append("%s: file is the base name of a file under src/" % where)
        if not m.find or m.replace is None or m.find == m.replace:
            errors.append("%s: find and replace are needed, and must differ" % where)
        if not m.breaks:
            errors.append("%s: breaks (what the bug breaks) is needed" % where)
        if m.equivalent is None and not m.kills:
            errors.append("%s: a mutant needs kill suites, or an equivalent argument" % where)
        if m.equivalent is not None and m.kills:
            errors.append("%s: an equivalent mutant has no kill suites" % where)
    return sorted(mutants, key=lambda m: m.name), errors


def locate(tree, basename):
    """The files named basename anywhere under tree/src."""
    found = []
    for root, dirs, files in os.walk(os.path.join(tree, "src")):
        dirs.sort()
        if basename in files:
            found.append(os.path.join(root, basename))
    return found


def apply(tree, m, write):
    """Apply m to tree (if write); return None, or why it does not apply."""
    paths = locate(tree, m.file)
    if len(paths) != 1:
        return "file %s found %d times under src/" % (m.file, len(paths))
    with open(paths[0], encoding="utf-8") as f:
        text = f.read()
    n = text.count(m.find)
    if n != 1:
        return "fragment occurs %d times in %s" % (n, os.path.relpath(paths[0], tree))
    if write:
        with open(paths[0], "w", encoding="utf-8") as f:
            f.write(text.replace(m.find, m.replace))
    return None


# ---------- processes ----------

def log(msg):
    print(msg, flush=True)


def sh(cmd, cwd=None, env=None, timeout=None, capture=True):
    """Run cmd in its own process group; (returncode, output).  A timeout
    kills the group and gives returncode None."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, start_new_session=True,
                            stdout=subprocess.PIPE if capture else None,
                            stderr=subprocess.STDOUT if capture else None,
                            text=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out or ""
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return None, out or ""


def pg_config_value(pg_config, what):
    return subprocess.run([pg_config, "--" + what], capture_output=True, text=True,
                          check=True).stdout.strip()


def copy_tree(src, dst):
    """The source tree without its git metadata and test outputs."""
    skip = {".git", "results", "tmp_check", "output_iso", "log", "__pycache__"}
    shutil.copytree(src, dst, symlinks=True,
                    ignore=lambda d, names: [n for n in names if n in skip
                                             or n in ("regression.diffs", "regression.out")
                                             or (d == src and n.startswith(".mutants"))])


def private_pg(pg_config, root):
    """A private copy of the PostgreSQL installation pg_config names, under
    root at the same paths (PostgreSQL finds its directories relative to
    its binaries, so the copy works where it is); returns the copy's
    pg_config.  Reused if already made."""
    dirs = []
    for what in ("bindir", "pkglibdir", "sharedir", "includedir", "pkgincludedir"):
        d = os.path.realpath(pg_config_value(pg_config, what))
        if not any(d == p or d.startswith(p + "/") for p in dirs):
            dirs = [p for p in dirs if not p.startswith(d + "/")] + [d]
    bindir = os.path.realpath(pg_config_value(pg_config, "bindir"))
    mine = root + os.path.join(bindir, "pg_config")
    marker = os.path.join(root, ".complete")
    if os.path.exists(marker) and os.path.exists(mine):
        return mine
    shutil.rmtree(root, ignore_errors=True)
    for d in dirs:
        os.makedirs(os.path.dirname(root + d), exist_ok=True)
        rc, out = sh(["cp", "-a", d, root + d])
        if rc != 0:
            sys.exit("could not copy %s: %s" % (d, out))
    open(marker, "w").close()
    return mine


# ---------- one cluster ----------

class Cluster:
    """A throw-away cluster with dp_agg preloaded, as test/lib.sh starts
    them: data in DIR/data, sockets and server.log in DIR."""

    def __init__(self, work, pg_config, port):
        self.dir = os.path.join(work, "run")
        self.template = os.path.join(work, "template")
        self.port = port
        self.bindir = pg_config_value(pg_config, "bindir")
        self.running = False

    def make_template(self):
        shutil.rmtree(self.template, ignore_errors=True)
        rc, out = sh([os.path.join(self.bindir, "initdb"), "-D", self.template, "-A", "trust",
                      "-U", "postgres", "--no-sync"])
        if rc != 0:
            sys.exit("initdb failed:\n" + out)
        with open(os.path.join(self.template, "postgresql.conf"), "a") as f:
            f.write("\nshared_preload_libraries = 'dp_agg'\nport = %d\nlisten_addresses = ''\n"
                    "unix_socket_directories = '%s'\nmax_worker_processes = 16\n"
                    "max_connections = 100\nfsync = on\n" % (self.port, self.dir))

    def start(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        sh(["cp", "-a", self.template, os.path.join(self.dir, "data")])
        rc, out = sh([os.path.join(self.bindir, "pg_ctl"), "-D", os.path.join(self.dir, "data"),
                      "-l", os.path.join(self.dir, "server.log"), "-w", "-t", "120", "start"])
        self.running = rc == 0
        return rc == 0, out

    def stop(self):
        if os.path.isdir(os.path.join(self.dir, "data")):
            sh([os.path.join(self.bindir, "pg_ctl"), "-D", os.path.join(self.dir, "data"),
                "-m", "immediate", "-w", "stop"], timeout=120)
        self.running = False

    def env(self, pg_config):
        e = dict(os.environ)
        e.update(PGHOST=self.dir, PGPORT=str(self.port), PGUSER="postgres", PG_CONFIG=pg_config,
                 PATH=self.bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin"))
        e.pop("PGDATABASE", None)
        return e


# ---------- suites ----------

def suite_command(kind, args, pg_config, port):
    make = ["make", "-s", "PG_CONFIG=" + pg_config, "with_llvm=no"]
    if kind == "regress":
        return make + ["installcheck", "REGRESS=" + " ".join(args), "ISOLATION="]
    if kind == "iso":
        return make + ["installcheck", "REGRESS=", "ISOLATION=" + " ".join(args)]
    if kind == "tap":
        return make + ["prove_installcheck",
                       "PROVE_TESTS=" + " ".join("test/t/%s.pl" % a for a in args)]
    if kind == "stat":
        return ["python3", "test/stat/run.py"] + args
    if kind == "load":
        return ["bash", "test/load/run.sh"]
    if kind == "citus":
        return ["python3", "test/citus/check.py", str(port + 1)]
    raise ValueError(kind)


def run_suite(kind, args, tree, cluster, pg_config):
    """(failed, hung, seconds, output tail)"""
    if kind == "citus" and not os.path.exists(
            os.path.join(pg_config_value(pg_config, "pkglibdir"), "citus.so")):
        return None, False, 0.0, NO_CITUS + pg_config, []
    t0 = time.time()
    rc, out = sh(suite_command(kind, args, pg_config, cluster.port), cwd=tree,
                 env=cluster.env(pg_config), timeout=SUITE_TIMEOUT[kind])
    tail = "\n".join(out.splitlines()[-15:])
    if os.environ.get("DP_MUTANT_DEBUG"):
        log("  [%s %s: rc %s]\n%s" % (kind, " ".join(args), rc, out))
    diffs = os.path.join(tree, "regression.diffs")
    if rc not in (0, None) and kind in ("regress", "iso"):
        for d in (diffs, os.path.join(tree, "test/isolation/output_iso/regression.diffs")):
            if os.path.exists(d):
                with open(d, errors="replace") as f:
                    tail = "\n".join(f.read().splitlines()[:40])
    return rc != 0, rc is None, time.time() - t0, tail, failing_tests(kind, out)


def failing_tests(kind, out):
    """the names of the failing tests in a suite's output, where it says"""
    if kind in ("regress", "iso"):
        # "test name ... FAILED" (PostgreSQL 15, 16), "not ok 3 - name" (17, 18)
        pat = r"^(?:test (\S+)\s.*FAILED|not ok \d+\s+[-+] (\S+))"
        return [m.group(1) or m.group(2) for m in re.finditer(pat, out, re.M)]
    elif kind == "tap":
        pat = r"^test/t/(\S+)\.pl .*(?:Dubious|Failed|not ok)"
    elif kind == "stat":
        pat = r"^FAIL (\S+?):"
    elif kind == "citus":
        pat = r"^FAILED  (.+?):"
    else:
        return []
    return [m.group(1).strip() for m in re.finditer(pat, out, re.M)]


# ---------- the run ----------

def build(tree, pg_config, jobs, install):
    rc, out = sh(["make", "-s", "-j%d" % jobs, "PG_CONFIG=" + pg_config, "with_llvm=no"], cwd=tree)
    if rc != 0:
        return False, out
    if install:
        rc, out = sh(["make", "-s", "PG_CONFIG=" + pg_config, "with_llvm=no", "install"], cwd=tree)
        if rc != 0:
            return False, out
    return True, out


def default_seed():
    for var in ("DP_MUTANT_SEED", "DP_COMMIT"):
        if os.environ.get(var):
            return os.environ[var]
    h = hashlib.sha256()
    for root, dirs, files in os.walk(os.path.join(TOP, "src")):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                with open(os.path.join(root, f), "rb") as fh:
                    h.update(f.encode() + b"\0" + fh.read())
    return h.hexdigest()


def rotate(mutants, n, seed):
    """n mutants chosen from the seed (a commit hash), each as likely"""
    rng = random.Random(int(hashlib.sha256(seed.encode()).hexdigest(), 16))
    chosen = rng.sample(range(len(mutants)), min(n, len(mutants)))
    return [mutants[i] for i in sorted(chosen)]


def fmt_time(s):
    return "%dm%02ds" % (int(s) // 60, int(s) % 60) if s >= 60 else "%.0fs" % s


def main(argv):
    opts = {"rotate": None, "seed": None, "work": None, "port": None, "pg-config": None,
            "jobs": "2"}
    flags = set()
    names = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--list", "--check", "--every", "--no-baseline", "--keep"):
            flags.add(a[2:])
        elif a[2:] in opts and a.startswith("--"):
            if i + 1 >= len(argv):
                sys.exit("%s needs a value" % a)
            opts[a[2:]] = argv[i + 1]
            i += 1
        elif a.startswith("-"):
            sys.exit(__doc__)
        else:
            names.append(a)
        i += 1

    mutants, errors = parse_defs(HERE)
    if errors:
        for e in errors:
            print("definition error: " + e)
        return 2
    testable = [m for m in mutants if m.equivalent is None]
    equivalent = [m for m in mutants if m.equivalent is not None]

    if "list" in flags:
        for m in mutants:
            if m.equivalent is not None:
                print("%-34s %-22s equivalent" % (m.name, m.file))
            else:
                print("%-34s %-22s %s" % (m.name, m.file, m.kill_text()))
        print("%d mutants, %d equivalent" % (len(testable), len(equivalent)))
        return 0

    # which mutants
    if names:
        by_name = {m.name: m for m in mutants}
        unknown = [n for n in names if n not in by_name]
        if unknown:
            sys.exit("no such mutant: " + ", ".join(unknown))
        selected = [by_name[n] for n in names if by_name[n].equivalent is None]
    else:
        selected = testable
    # does every mutant still apply?  (all of them, also for a subset: cheap)
    not_applying = {}
    for m in testable:
        why = apply(TOP, m, write=False)
        if why:
            not_applying[m.name] = why
    if opts["rotate"] is not None:
        seed = opts["seed"] or default_seed()
        chosen = rotate(selected, int(opts["rotate"]), seed)
        log("mutants: %d of %d chosen by seed %s: %s" % (len(chosen), len(testable), seed[:12],
                                                         ", ".join(m.name for m in chosen)))
        # a mutant that no longer applies is reported whether chosen or not
        selected = [m for m in selected if m in chosen or m.name in not_applying]
    if "check" in flags:
        for m in testable:
            if m.name in not_applying:
                print("ERROR %s (%s): %s" % (m.name, m.source, not_applying[m.name]))
        print("%d mutants apply, %d do not" % (len(testable) - len(not_applying), len(not_applying)))
        return 1 if not_applying else 0

    if os.geteuid() == 0:
        sys.exit("run as a user PostgreSQL accepts (test/mutants/run.sh does that as root)")

    t_start = time.time()
    work = opts["work"] or tempfile.mkdtemp(prefix="dp_agg_mutants.")
    os.makedirs(work, exist_ok=True)
    pg_config_src = opts["pg-config"] or os.environ.get("PG_CONFIG") or "pg_config"
    if pg_config_src == "pg_config":
        pg_config_src = "/usr/lib/postgresql/15/bin/pg_config"
    base_port = int(os.environ.get("DP_TEST_PORT", "54329"))
    port = int(opts["port"] or base_port + 5)
    jobs = int(opts["jobs"])
    load = os.getloadavg()
    log("mutants: work in %s, PostgreSQL %s, port %d, load %.2f %.2f %.2f on %d cores"
        % (work, pg_config_src, port, load[0], load[1], load[2], os.cpu_count() or 0))

    pg_config = private_pg(pg_config_src, os.path.join(work, "pg"))
    pristine = os.path.join(work, "pristine")
    shutil.rmtree(pristine, ignore_errors=True)
    copy_tree(TOP, pristine)
    ok, out = build(pristine, pg_config, jobs, install=True)
    if not ok:
        print(out)
        sys.exit("the unmutated tree does not build")
    cluster = Cluster(work, pg_config, port)
    cluster.make_template()
    log("mutants: private PostgreSQL and unmutated build ready (%s)" % fmt_time(time.time() - t_start))

    results = []   # (mutant, status, killed_by, seconds, detail)
    try:
        # the kill suites must pass without any mutant, or a "kill" means nothing
        if "no-baseline" not in flags:
            suites = []
            for m in selected:
                if m.name in not_applying:
                    continue
                for k in m.kills:
                    if k not in suites:
                        suites.append(k)
            ok, out = cluster.start()
            if not ok:
                sys.exit("the unmutated cluster does not start:\n" + out)
            for kind, args in suites:
                failed, hung, secs, tail, _ = run_suite(kind, args, pristine, cluster, pg_config)
                label = " ".join([kind] + args)
                if failed is None:
                    log("baseline: %s cannot run: %s" % (label, tail))
                    continue
                log("baseline: %-40s %s %s" % (label, "FAILS" if failed else "passes", fmt_time(secs)))
                if failed:
                    print(tail)
                    print("0 killed, 0 survived")
                    print("ERROR: the kill suite %s fails without any mutant: fix it first" % label)
                    return 1
            cluster.stop()

        for m in selected:
            t0 = time.time()
            if m.name in not_applying:
                results.append((m, "ERROR", "", 0.0, not_applying[m.name]))
                log("%-34s ERROR: %s" % (m.name, not_applying[m.name]))
                continue
            tree = os.path.join(work, "mutant")
            shutil.rmtree(tree, ignore_errors=True)
            sh(["cp", "-a", pristine, tree])
            apply(tree, m, write=True)
            ok, out = build(tree, pg_config, jobs, install=True)
            if not ok:
                results.append((m, "NO BUILD", "", time.time() - t0,
                                "\n".join(out.splitlines()[-10:])))
                log("%-34s does not compile (not counted)" % m.name)
                # the unmutated library goes back
                build(pristine, pg_config, jobs, install=True)
                continue
            started, out = cluster.start()
            killed_by = []
            detail = ""
            no_citus = False    # a kill suite could not run for want of Citus
            if not started:
                killed_by.append("server start")
                detail = out
            else:
                for kind, args in m.kills:
                    failed, hung, secs, tail, names = run_suite(kind, args, tree, cluster, pg_config)
                    label = " ".join([kind] + args)
                    if names and len(args) != 1:
                        label = "%s (%s)" % (kind, " ".join(names))
                    if failed is None:
                        detail += "%s cannot run: %s\n" % (label, tail)
                        no_citus = no_citus or tail.startswith(NO_CITUS)
                        continue
                    if failed:
                        killed_by.append(label + (" (hung)" if hung else ""))
                        if not detail:
                            detail = tail
                        if "every" not in flags:
                            break
            cluster.stop()
            secs = time.time() - t0
            if killed_by:
                results.append((m, "killed", ", ".join(killed_by), secs, detail))
            elif no_citus and not os.environ.get("DP_CITUS_TARBALL"):
                results.append((m, "SKIPPED", "", secs, detail.strip()))
            elif "cannot run" in detail:
                results.append((m, "ERROR", "", secs, detail.strip()))
            else:
                results.append((m, "SURVIVED", "", secs, detail))
            log("%-34s %-8s %-40s %s" % (m.name, results[-1][1], results[-1][2], fmt_time(secs)))
            shutil.rmtree(tree, ignore_errors=True)
    finally:
        cluster.stop()
        # the unmutated library back in the private copy (it may be reused)
        if os.path.isdir(pristine):
            build(pristine, pg_config, jobs, install=True)
        if "keep" not in flags and not opts["work"]:
            shutil.rmtree(work, ignore_errors=True)

    # the table
    print()
    print("| mutant | file | result | killed by | time |")
    print("|---|---|---|---|---|")
    for m, status, by, secs, detail in results:
        print("| %s | %s | %s | %s | %s |" % (m.name, m.file, status, by, fmt_time(secs)))
    for m in equivalent:
        print("| %s | %s | equivalent (not counted) | | |" % (m.name, m.file))
    print()
    for m, status, by, secs, detail in results:
        if status in ("SURVIVED", "ERROR", "NO BUILD"):
            print("%s %s (%s): %s\n  breaks: %s\n  kill suites: %s\n%s\n"
                  % (status, m.name, m.source, m.file, m.breaks, m.kill_text(),
                     "\n".join("  " + l for l in detail.splitlines())))
    killed = sum(1 for r in results if r[1] == "killed")
    survived = sum(1 for r in results if r[1] == "SURVIVED")
    untested = [r for r in results if r[1] in ("ERROR", "NO BUILD")]
    skipped = [r for r in results if r[1] == "SKIPPED"]
    print("mutants: %d tested in %s, %d equivalent (documented, not counted)"
          % (len(results), fmt_time(time.time() - t_start), len(equivalent)))
    if untested:
        print("mutants: %d could not be tested: %s"
              % (len(untested), ", ".join("%s (%s)" % (r[0].name, r[1]) for r in untested)))
    if skipped:
        print("mutants: %d skipped (Citus is not installed and DP_CITUS_TARBALL names no source): %s"
              % (len(skipped), ", ".join(r[0].name for r in skipped)))
    print("%d killed, %d survived" % (killed, survived))
    return 1 if survived or untested else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
