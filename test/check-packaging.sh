#!/bin/bash
# Check that dp_agg's packaging agrees with itself (suite "packaging" of
# test/run-suites.sh; also `make check-packaging`).  Needs only python3.
#
#  - META.json: valid JSON with the fields PGXN requires (meta-spec 1.0.0);
#    its version and that of provides.dp_agg are one semantic version
#    whose major.minor is dp_agg.control's default_version (a patch
#    release changes the library, never the SQL objects); provides.dp_agg
#    names existing file and docfile; a PostgreSQL prerequisite; a license
#    that LICENSE holds.
#  - The SQL scripts: the install script and the update scripts
#    (sql/dp_agg--A--B.sql) form one chain from the install script's
#    version to default_version, each step to a newer version, no script
#    beyond it; the Makefile's DATA lists exactly these scripts.
#  - CHANGELOG.md has an entry for every version of the chain, the newest
#    first.
#  - No tracker number in the tree: a reference to an issue, ticket or
#    pull request by number says which discussion brought a thing, not
#    what it is (the files git tracks, or every file but build products
#    where there is no .git, as in the copies run-all.sh makes).
#
# Prints one line per check ("ok ..." or "FAILED ...: why") and last
# "packaging: N passed, M failed"; exits 1 if any check failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

TOP="$top" python3 - <<'EOF'
import json, os, re, subprocess, sys

top = os.environ["TOP"]
ext = "dp_agg"
passed = failed = 0


def check(name, problems):
    global passed, failed
    if problems:
        failed += 1
        for p in problems:
            print("FAILED %s: %s" % (name, p))
    else:
        passed += 1
        print("ok     %s" % name)


def read(path):
    with open(os.path.join(top, path), encoding="utf-8") as f:
        return f.read()


def vkey(v):
    return tuple(int(x) for x in v.split("."))


# dp_agg.control's default_version
control = read(ext + ".control")
m = re.search(r"^\s*default_version\s*=\s*'([0-9]+(?:\.[0-9]+)*)'", control, re.M)
default_version = m.group(1) if m else None

# ---------- META.json ----------
problems = []
try:
    meta = json.loads(read("META.json"))
except (OSError, ValueError) as e:
    meta = None
    problems.append("META.json does not parse: %s" % e)
if default_version is None:
    problems.append("%s.control has no default_version" % ext)
if meta is not None:
    for field in ("name", "abstract", "version", "maintainer", "license", "provides", "meta-spec"):
        if field not in meta:
            problems.append("META.json has no %s" % field)
    if meta.get("name") != ext:
        problems.append("META.json's name is %r, not %r" % (meta.get("name"), ext))
    prov = meta.get("provides", {}).get(ext)
    if not isinstance(prov, dict):
        problems.append("META.json's provides has no %s" % ext)
        prov = {}
    for where, v in (("version", meta.get("version")), ("provides.%s.version" % ext, prov.get("version"))):
        if not isinstance(v, str) or not re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", v):
            problems.append("META.json's %s %r is not a semantic version X.Y.Z" % (where, v))
        elif default_version and v.rsplit(".", 1)[0] != default_version:
            problems.append("META.json's %s is %s but %s.control's default_version is %s"
                            % (where, v, ext, default_version))
    for key in ("file", "docfile"):
        p = prov.get(key)
        if not p:
            problems.append("META.json's provides.%s has no %s" % (ext, key))
        elif not os.path.isfile(os.path.join(top, p)):
            problems.append("META.json's provides.%s.%s %s does not exist" % (ext, key, p))
    pg = meta.get("prereqs", {}).get("runtime", {}).get("requires", {}).get("PostgreSQL")
    if not isinstance(pg, str) or not re.fullmatch(r"(>=\s*)?[0-9]+\.[0-9]+\.[0-9]+", pg):
        problems.append("META.json requires no PostgreSQL version (prereqs.runtime.requires)")
    if meta.get("meta-spec", {}).get("version") != "1.0.0":
        problems.append("META.json's meta-spec is not 1.0.0")
    # the license: a PGXN name, and the text of that license in LICENSE
    texts = {"postgresql": "PostgreSQL License", "bsd": "BSD", "mit": "MIT License",
             "apache_2_0": "Apache License"}
    lic = meta.get("license")
    if lic not in texts:
        problems.append("META.json's license %r is not one this check knows (%s)"
                        % (lic, ", ".join(sorted(texts))))
    elif not os.path.isfile(os.path.join(top, "LICENSE")):
        problems.append("there is no LICENSE file")
    elif texts[lic] not in read("LICENSE"):
        problems.append("LICENSE is not the %s that META.json names" % texts[lic])
check("META.json agrees with %s.control and LICENSE" % ext, problems)

# ---------- the SQL scripts ----------
problems = []
scripts = sorted(f for f in os.listdir(os.path.join(top, "sql"))
                 if f.startswith(ext + "--") and f.endswith(".sql"))
installs, updates = [], {}
for f in scripts:
    m = re.fullmatch(re.escape(ext) + r"--([0-9.]+)(?:--([0-9.]+))?\.sql", f)
    if not m:
        problems.append("sql/%s is named neither %s--V.sql nor %s--A--B.sql" % (f, ext, ext))
    elif m.group(2) is None:
        installs.append(m.group(1))
    elif vkey(m.group(2)) <= vkey(m.group(1)):
        problems.append("sql/%s updates to an older version" % f)
    elif m.group(1) in updates:
        problems.append("two update scripts from %s" % m.group(1))
    else:
        updates[m.group(1)] = m.group(2)
chain = []
if len(installs) != 1:
    problems.append("%d install scripts (%s): expected one, then update scripts"
                    % (len(installs), ", ".join(installs)))
else:
    v = installs[0]
    chain = [v]
    while v in updates and len(chain) <= len(scripts):
        v = updates[v]
        chain.append(v)
    if default_version and chain[-1] != default_version:
        problems.append("the update scripts lead from %s to %s, but default_version is %s"
                        % (chain[0], chain[-1], default_version))
    for a, b in updates.items():
        if a not in chain[:-1]:
            problems.append("sql/%s--%s--%s.sql is not on the path from %s" % (ext, a, b, chain[0]))
makefile = read("Makefile")
data = set()
m = re.search(r"^DATA\s*[+:]?=((?:.*\\\n)*.*)$", makefile, re.M)
if m:
    data = set(m.group(1).replace("\\\n", " ").split())
data |= {w for m in re.finditer(r"^DATA\s*\+=((?:.*\\\n)*.*)$", makefile, re.M)
         for w in m.group(1).replace("\\\n", " ").split()}
listed = {"sql/" + f for f in scripts}
for f in sorted(listed - data):
    problems.append("%s is not in the Makefile's DATA (it would not be installed)" % f)
for f in sorted(d for d in data - listed if re.search(r"--[0-9.]+(--[0-9.]+)?\.sql$", d)):
    problems.append("the Makefile's DATA lists %s, which does not exist" % f)
check("SQL scripts: one update chain to default_version %s, all installed" % default_version,
      problems)

# ---------- CHANGELOG.md ----------
problems = []
try:
    changelog = read("CHANGELOG.md")
except OSError:
    changelog = None
    problems.append("there is no CHANGELOG.md")
if changelog is not None:
    heads = re.findall(r"^## \[?([0-9]+(?:\.[0-9]+)+)\]?", changelog, re.M)
    for v in chain:
        if v not in heads:
            problems.append("CHANGELOG.md has no entry \"## %s\"" % v)
    if heads and sorted(heads, key=vkey, reverse=True) != heads:
        problems.append("CHANGELOG.md's entries are not newest first: %s" % ", ".join(heads))
    if default_version and heads and heads[0] != default_version:
        problems.append("CHANGELOG.md's first entry is %s, not default_version %s"
                        % (heads[0], default_version))
check("CHANGELOG.md has an entry for each version", problems)

# ---------- no tracker numbers ----------
problems = []
try:
    files = subprocess.run(["git", "-C", top, "ls-files", "-z"], check=True,
                           capture_output=True).stdout.decode().split("\0")
    files = [f for f in files if f]
except (OSError, subprocess.CalledProcessError):
    files = []
    skip_dirs = {".git", "results", "tmp_check", "output_iso", "log"}
    for root, dirs, names in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in skip_dirs)
        for n in sorted(names):
            if n.endswith((".o", ".so", ".bc")) or n.startswith("regression."):
                continue
            files.append(os.path.relpath(os.path.join(root, n), top))
# "issue N", "Issues N and M", "issue #N", "ticket N", "pull request #N"
# (any case), "PR N", "PR #N" (upper case: "pr" is a prefix of names)
tracker = re.compile(r"(?i:\b(?:issue|ticket|pull request)s?(?: #?|-|#)[0-9]+)"
                     r"|\bPRs?(?: #?|#)[0-9]+")
for f in files:
    path = os.path.join(top, f)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError:
        continue
    if b"\0" in raw:
        continue   # binary
    for n, line in enumerate(raw.decode("utf-8", "replace").splitlines(), 1):
        if tracker.search(line):
            problems.append("%s:%d: %s" % (f, n, line.strip()[:120]))
check("no tracker numbers in the tree (%d files)" % len(files), problems)

print("packaging: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
EOF
