#!/bin/bash
# Check dp_agg's module graph (doc/layout.md, "Layout"):
#  - the include graph, from the #include "..." lines of src/ that name a
#    file of src/, and the call graph, from the object files (each symbol a
#    .o leaves undefined, resolved to the .o that defines it), have no cycle;
#  - every dependency goes to a module of a lower layer, and of the same
#    folder or a lower one (both orders are in src/LAYERS, the one place
#    they are written);
#  - every function or variable a header declares extern is defined by the
#    object of the same module, and every symbol an object defines and
#    another object uses is declared in its module's header;
#  - doc/layout.md, "Layout" (or README.md, if it holds it), lists every module
#    once, under its folder, the folders in the order of src/LAYERS.
#  - one walker of DP calls: outside src/dp_calls.c, no tree-walker or
#    mutator callback (a function passed to expression_tree_walker and the
#    like) tests a node for a DP aggregate (dp_lookup_call, dp_is_call),
#    directly or through a function of its file, except the ones listed
#    below, which do something else to each call than find the calls; a
#    module that needs the DP calls of a query level or a plan node asks
#    dp_calls.c.
#  - no file of src/ (.c or .h) is over 1,200 lines: one job per file.
#    The files still over it are listed, with their length today, in
#    OVERSIZE below; they may not grow, and leave the list when split.
# A module is a .c file and the .h of the same name, in one folder of src/
# (src/FOLDER/NAME.c).  Builds the objects if any is missing (make, with
# PG_CONFIG; only the objects).  Usage: test/check-graph.sh (or make
# check-graph).  Prints the problems and exits 1, or prints one "graph: ..."
# line and exits 0.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

objs=$(ls src/*/*.c | sed 's/\.c$/.o/')
missing=0
for o in $objs; do [ -f "$o" ] || missing=1; done
if [ "$missing" = 1 ]; then
    make -s PG_CONFIG="${PG_CONFIG:-pg_config}" $objs >/dev/null
fi

# one line per object: "module D symbol" (defined) or "module U symbol"
symbols=$(for o in $objs; do
    m=$(basename "$o" .o)
    nm --defined-only -g "$o" | awk -v m="$m" 'NF == 3 { print m, "D", $3 }'
    nm --undefined-only -g "$o" | awk -v m="$m" '{ print m, "U", $NF }'
done)

# (in a file: the list outgrew what one environment variable may hold)
symfile=$(mktemp)
trap 'rm -f "$symfile"' EXIT
printf '%s\n' "$symbols" > "$symfile"
SYMBOLS_FILE="$symfile" python3 - <<'EOF'
import os, re, sys, glob

# src/LAYERS: "folders F1 F2 ..." (bottom up), then "N module ..." lines
problems = []
folders, layer = [], {}
for line in open("src/LAYERS"):
    words = line.split("#")[0].split()
    if not words:
        continue
    if words[0] == "folders":
        folders = words[1:]
    else:
        for m in words[1:]:
            if m in layer:
                problems.append(f"module {m} has two layers in src/LAYERS")
            layer[m] = int(words[0])
rank = {f: i for i, f in enumerate(folders)}

files = sorted(glob.glob("src/*/*.c") + glob.glob("src/*/*.h"))
folder = {}
for f in files:
    d, m = f.split("/")[1], os.path.splitext(os.path.basename(f))[0]
    if folder.setdefault(m, d) != d:
        problems.append(f"module {m} is in two folders, src/{folder[m]} and src/{d}")
modules = sorted(folder)
for f in sorted(glob.glob("src/*.[ch]")):
    problems.append(f"{f} is in no folder: move it into the folder of its feature (src/LAYERS)")
for d in sorted({f.split("/")[1] for f in files}):
    if d not in rank:
        problems.append(f"folder src/{d} is not in the folders of src/LAYERS")
for m in modules:
    if m not in layer:
        problems.append(f"module {m} has no layer in src/LAYERS")
for m in sorted(set(layer) - set(modules)):
    problems.append(f"src/LAYERS names {m}, which is no module of src/")

# include graph
include = {m: set() for m in modules}
for f in files:
    m = os.path.splitext(os.path.basename(f))[0]
    for inc in re.findall(r'^#include "([a-z_0-9]+)\.h"', open(f).read(), re.M):
        if inc in include and inc != m:
            include[m].add(inc)

# call graph
defined, used = {}, {}
for line in open(os.environ["SYMBOLS_FILE"]).read().splitlines():
    m, kind, sym = line.split()
    if kind == "D":
        defined[sym] = m
    else:
        used.setdefault(m, set()).add(sym)
call = {m: set() for m in modules}
for m, syms in used.items():
    for s in syms:
        d = defined.get(s)
        if d is not None and d != m:
            call[m].add(d)

def cycle(graph):
    """a cycle of graph as a list of modules, or None"""
    state = {}
    stack = []
    def visit(m):
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state:
                c = visit(n)
                if c:
                    return c
        stack.pop()
        state[m] = 2
        return None
    for m in sorted(graph):
        if m not in state:
            c = visit(m)
            if c:
                return c
    return None

for name, graph in (("include", include), ("call", call)):
    c = cycle(graph)
    if c:
        problems.append(f"{name} cycle: " + " -> ".join(c))
    for m in sorted(graph):
        for n in sorted(graph[m]):
            if m in layer and n in layer and layer[n] >= layer[m]:
                problems.append(f"{name} edge {m} (layer {layer[m]}) -> {n} (layer {layer[n]}): "
                                "a module may use only lower layers")
            fm, fn = folder[m], folder[n]
            if fm in rank and fn in rank and rank[fn] > rank[fm]:
                problems.append(f"{name} edge {m} ({fm}) -> {n} ({fn}): a module may use only "
                                "its own folder and lower ones (src/LAYERS)")

# headers declare what their module defines, and what other modules use
declared = {}
for h in glob.glob("src/*/*.h"):
    m = os.path.splitext(os.path.basename(h))[0]
    text = re.sub(r"/\*.*?\*/", "", open(h).read(), flags=re.S)
    # a declaration may start with an attribute macro (DP_NORETURN extern ...)
    for decl in re.findall(r"^(?:[A-Z_]+\s+)?extern\b[^;]*;", text, re.M):
        names = re.findall(r"([A-Za-z_][A-Za-z_0-9]*)\s*(?:\(|;|\[)", decl)
        if names:
            declared[names[0]] = m
for sym, m in sorted(declared.items()):
    if defined.get(sym) != m:
        problems.append(f"{m}.h declares {sym}, which {m}.c does not define"
                        + (f" ({defined[sym]}.c does)" if sym in defined else ""))
for m, syms in sorted(used.items()):
    for s in sorted(syms):
        d = defined.get(s)
        if d is not None and d != m and declared.get(s) != d:
            problems.append(f"{m}.c uses {s} of {d}.c, which {d}.h does not declare")

# doc/layout.md, "Layout" (or README.md, if it holds it): one row per module,
# "| folder | `src/folder/name.c` | ...", the folders in the order of src/LAYERS
layout = None
for page in ["README.md"] + sorted(glob.glob("doc/*.md")):
    m = re.search(r"^## Layout\n(.*?)(?=^## |\Z)", open(page).read(), re.M | re.S)
    if m:
        layout = m.group(1)
        break
if layout is None:
    problems.append('no section "## Layout" in README.md or doc/*.md')
    layout = ""
rows = re.findall(r"^\| *`?([a-z_]+)`? *\| *`src/([a-z_]+)/([a-z_0-9]+)\.[ch]`", layout, re.M)
listed = {}
last = -1
for d, d2, m in rows:
    if d != d2 or folder.get(m) != d:
        problems.append(f"Layout (doc/layout.md): src/{d2}/{m} under folder {d}, but the module is "
                        f"src/{folder.get(m, '?')}/{m}")
    if m in listed:
        problems.append(f"Layout (doc/layout.md): module {m} listed twice")
    listed[m] = d
    if d in rank:
        if rank[d] < last:
            problems.append(f"Layout (doc/layout.md): folder {d} out of the order of src/LAYERS")
        last = max(last, rank[d])
for m in modules:
    if m not in listed:
        problems.append(f"Layout (doc/layout.md): module {m} (src/{folder[m]}) is not listed")
# one walker of DP calls (dp_calls.c); these callbacks test for DP calls
# to treat them, not to find them: file:function -> why
walker_allowed = {
    "guard.c:internal_walker": "refuses the internal aggregates only rewrites make",
    "plan_units.c:other_aggref_walker": "finds the aggregates of a plan node that are not DP",
    "protect_check.c:other_aggref_walker": "finds the aggregates of a plan node that are not DP",
    "protect_guard.c:post_walker": "checks the arguments and FILTER of each call as rows",
    "side_reads.c:dp_level_walker": "checks the arguments and FILTER of each call as rows",
    "domain_rows.c:filter_mutator": "adds the domain's FILTER to each call of the level",
    "protect_guard.c:rows_walker": "checks a sub-query's level (check_level), which asks dp_calls.c",
    "side_reads.c:expr_walker": "checks each function called on the rows (dp_agg's own are allowed)",
    "error_bars.c:bar_mutator": "rewrites the DP call an error bar names",
    "row_seal.c:seal_mutator": "traps the value arguments and FILTER of each call, evaluated on rows",
    "row_seal.c:check_walker": "checks each call's arguments, FILTER and DISTINCT as rows before the first row",
}
callback_re = re.compile(r"\b(?:raw_expression_tree_walker|expression_tree_walker|query_tree_walker|"
                         r"query_or_expression_tree_walker|range_table_walker|expression_tree_mutator|"
                         r"query_tree_mutator|planstate_tree_walker)\s*\([^;]*?,\s*\(?\s*(?:tree_walker_callback\s*\)|"
                         r"[A-Za-z_]+\s*\)\s*)?([a-z_][a-z_0-9]*)\s*,", re.S)
for f in sorted(glob.glob("src/*/*.c")):
    if os.path.basename(f) == "dp_calls.c":
        continue
    text = re.sub(r"/\*.*?\*/", "", open(f).read(), flags=re.S)
    bodies = {m.group(1): m.group(0) for m in
              re.finditer(r"^([a-z_][a-z_0-9]*)\(.*?^}", text, re.M | re.S)}
    # the functions of the file that test for DP aggregates, directly or
    # through a helper of the file
    tests = {"dp_lookup_call", "dp_is_call"}
    grew = True
    while grew:
        grew = False
        for fn, body in bodies.items():
            if fn not in tests and re.search(r"\b(" + "|".join(sorted(tests)) + r")\s*\(", body):
                tests.add(fn)
                grew = True
    for fn in sorted(set(callback_re.findall(text))):
        key = f"{os.path.basename(f)}:{fn}"
        body = bodies.get(fn, "")
        called = set(re.findall(r"\b([a-z_][a-z_0-9]*)\s*\(", body)) - {fn}
        if called & tests and key not in walker_allowed:
            problems.append(f"{key} is a tree walker that tests for DP aggregates: "
                            "ask src/dp_calls.c for the DP calls of a query level or plan node")

# size: no file of src/ over MAX_LINES lines.  OVERSIZE lists the files
# still over it, each with its length when it was listed: it may not grow
# past that, and its entry goes when the file is split below the limit.
# Add no entry: split the file instead.
MAX_LINES = 1200
OVERSIZE = {
}
for f in sorted(glob.glob("src/**/*.[ch]", recursive=True)):
    with open(f) as fh:
        n = sum(1 for _ in fh)
    cap = OVERSIZE.get(f, MAX_LINES)
    if n > cap:
        if f in OVERSIZE:
            problems.append(f"{f} has {n} lines, more than the {cap} it had when it was "
                            f"allowed over {MAX_LINES}: split it")
        else:
            problems.append(f"{f} has {n} lines, over {MAX_LINES}: split it by concept "
                            "(one job per file)")
    elif f in OVERSIZE and n <= MAX_LINES:
        problems.append(f"{f} has {n} lines, within {MAX_LINES}: remove its entry from "
                        "OVERSIZE in test/check-graph.sh")
for f in sorted(set(OVERSIZE) - set(glob.glob("src/**/*.[ch]", recursive=True))):
    problems.append(f"OVERSIZE in test/check-graph.sh names {f}, which does not exist")

if problems:
    print("\n".join(problems))
    sys.exit(1)
ne = sum(len(v) for v in include.values())
nc = sum(len(v) for v in call.values())
print(f"graph: {len(modules)} modules in {len(folders)} folders, {ne} include and {nc} call edges, "
      f"acyclic and layered, one walker of DP calls; no file over {MAX_LINES} lines but "
      f"{len(OVERSIZE)} listed")
EOF
