#!/bin/bash
# Check dp_agg's module graph (doc/layout.md, "Layout"):
#  - the include graph, from the #include "..." lines of src/ that name a
#    file of src/, and the call graph, from the object files (each symbol a
#    .o leaves undefined, resolved to the .o that defines it), have no cycle;
#  - every dependency goes to a module of a lower layer (the table below);
#  - every function or variable a header declares extern is defined by the
#    object of the same module, and every symbol an object defines and
#    another object uses is declared in its module's header.
# A module is a .c file and the .h of the same name.  Builds the objects if
# any is missing (make, with PG_CONFIG; only the objects).  Usage: test/check-graph.sh
# (or make check-graph).  Prints the problems and exits 1, or prints one
# "graph: ..." line and exits 0.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

# Layers, bottom up: a module may use only modules of lower layers.
layers='
0 compat guc calibrate random siphash relcache_watch
1 noise catalog budget_row numeric_units rdp_laplace pld dist_token pick_key inheritance dist_catalog dist_session keyset
2 params noise_param grid selection_gaussian dist_state dist_replay unit_catalog estimate quantile_tree dist_protect bins domain_catalog key_list
3 sampling selection_mechanism auto_bounds public_domain
4 release selection error_bars
5 registry release_rdp describe guard protect joint pld_state dist_plan top_k
6 price charger protect_check protect_guard protect_stats dist_fingerprint estimators lookup_join domain_exec
7 privacy_unit dist_exec side_reads
8 budget
9 hooks preview aggregates functions protect_api privacy_unit_api unit_keep unit_pick quantile_aggregates unit_sample domain_api
10 dp_agg
'

objs=$(ls src/*.c | sed 's/\.c$/.o/')
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

LAYERS="$layers" SYMBOLS="$symbols" python3 - <<'EOF'
import os, re, sys, glob

layer = {}
for line in os.environ["LAYERS"].strip().splitlines():
    n, *mods = line.split()
    for m in mods:
        layer[m] = int(n)

files = sorted(glob.glob("src/*.c") + glob.glob("src/*.h"))
modules = sorted({os.path.splitext(os.path.basename(f))[0] for f in files})
problems = []
for m in modules:
    if m not in layer:
        problems.append(f"module {m} has no layer in test/check-graph.sh")

# include graph
include = {m: set() for m in modules}
for f in files:
    m = os.path.splitext(os.path.basename(f))[0]
    for inc in re.findall(r'^#include "([a-z_0-9]+)\.h"', open(f).read(), re.M):
        if inc in include and inc != m:
            include[m].add(inc)

# call graph
defined, used = {}, {}
for line in os.environ["SYMBOLS"].splitlines():
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

# headers declare what their module defines, and what other modules use
declared = {}
for h in glob.glob("src/*.h"):
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

if problems:
    print("\n".join(problems))
    sys.exit(1)
ne = sum(len(v) for v in include.values())
nc = sum(len(v) for v in call.values())
print(f"graph: {len(modules)} modules, {ne} include and {nc} call edges, acyclic and layered")
EOF
