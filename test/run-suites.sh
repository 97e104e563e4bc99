#!/bin/bash
# Run every suite against a throw-away cluster (as the postgres user, from
# a writable copy of the tree; see run-all.sh).  Prints one line per suite
# and finally "N passed, N failed, N skipped"; exits non-zero if anything
# failed.  A suite whose prerequisite is absent and was not asked for (the
# citus suite without Citus and without DP_CITUS_TARBALL) counts as
# skipped, never as passed.
# DP_SUITES chooses the suites (default: all of them):
#   packaging docs graph regress tap stat reference load fuzz neighbour citus mutants core
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib.sh"
cd "$top"

dir=$(mktemp -d /tmp/dp_agg_cluster.XXXXXX)
port=${DP_TEST_PORT:-54329}
dp_start_cluster "$dir" "$port"
fdir=""     # the fuzz test's own cluster, below
# the output of each failing suite, repeated before the summary line, so
# that the end of a long log (a CI page shows only its tail) says what failed
failures=$(mktemp /tmp/dp_agg_failures.XXXXXX)
trap 'dp_stop_cluster "$dir"; rm -rf "$dir" "$failures"; [ -n "$fdir" ] && { dp_stop_cluster "$fdir"; rm -rf "$fdir"; }' EXIT
export PGHOST=$dir PGPORT=$port PGUSER=postgres

total_pass=0
total_fail=0
total_skip=0
suites=" ${DP_SUITES:-packaging docs graph regress tap stat reference load fuzz neighbour citus mutants core} "
want() { [[ "$suites" == *" $1 "* ]]; }
record() {   # suite passed failed [skipped]
    local skipped=${4:-0}
    if [ "$skipped" -gt 0 ]; then
        printf '%-14s %4d passed, %d failed, %d skipped\n' "$1" "$2" "$3" "$skipped"
    else
        printf '%-14s %4d passed, %d failed\n' "$1" "$2" "$3"
    fi
    total_pass=$((total_pass + $2))
    total_fail=$((total_fail + $3))
    total_skip=$((total_skip + skipped))
    if [ "$3" -gt 0 ]; then
        printf -- '-- %s: %d failed; the end of its output:\n' "$1" "$3" >> "$failures"
        printf '%s\n' "${out:-(none kept)}" | grep -vE '^(ok|PASS) ' | tail -40 >> "$failures"
    fi
}

# packaging (test/check-packaging.sh): META.json, dp_agg.control, the update
# scripts, LICENSE and CHANGELOG.md agree; no tracker numbers in the tree.
# It prints "packaging: N passed, M failed", one result per check
if want packaging && [ -f test/check-packaging.sh ]; then
    out=$(bash test/check-packaging.sh 2>&1)
    echo "$out"
    line=$(echo "$out" | grep -E '^packaging: [0-9]+ passed, [0-9]+ failed' | tail -1)
    if [ -n "$line" ]; then
        kp=$(echo "$line" | sed -E 's/^packaging: ([0-9]+) passed.*/\1/')
        kf=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
    else
        kp=0; kf=1
    fi
    record "packaging" "$kp" "$kf"
fi

# docs (test/docs-links.py): README.md and doc/*.md hold together: every
# relative link and anchor resolves, every page is linked from the README,
# which is under 250 lines and starts with the demo and test commands.  It
# prints "docs: N passed, M failed", one result per check
if want docs && [ -f test/docs-links.py ]; then
    out=$(python3 test/docs-links.py 2>&1)
    echo "$out"
    line=$(echo "$out" | grep -E '^docs: [0-9]+ passed, [0-9]+ failed' | tail -1)
    if [ -n "$line" ]; then
        dp=$(echo "$line" | sed -E 's/^docs: ([0-9]+) passed.*/\1/')
        df=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
    else
        dp=0; df=1
    fi
    record "docs" "$dp" "$df"
fi

# the module graph (builds the objects in this copy of the tree)
if want graph && [ -f test/check-graph.sh ]; then
    if out=$(bash test/check-graph.sh 2>&1); then
        echo "$out"; record "graph" 1 0
    else
        echo "$out"; record "graph" 0 1
    fi
fi
# the error messages (test/check-messages.py, with the graph: both read
# src/ only): literal format strings, PostgreSQL's message style
if want graph && [ -f test/check-messages.py ]; then
    if out=$(python3 test/check-messages.py 2>&1); then
        echo "$out"; record "messages" 1 0
    else
        echo "$out"; record "messages" 0 1
    fi
fi

# pg_regress and isolation: one line per test, "ok" or "FAILED"
if want regress; then
    out=$(make -s -i installcheck 2>&1)
    echo "$out" | grep -E '^(test|     ) |^ok |^not ok ' || true
    pass=$(echo "$out" | grep -cE '\.\.\. ok|^ok ' || true)
    fail=$(echo "$out" | grep -cE '\.\.\. FAILED|^not ok |\.\.\. failed' || true)
    # every test listed in the Makefile must have reported
    expected=$(( $(grep -E '^REGRESS =' Makefile | wc -w) - 2 + $(grep -E '^ISOLATION =' Makefile | wc -w) - 2 ))
    if [ $((pass + fail)) -lt "$expected" ]; then
        echo "$out"
        fail=$((expected - pass))
    fi
    if [ "$fail" != 0 ]; then
        cat regression.diffs test/isolation/output_iso/regression.diffs 2>/dev/null | head -200
        out="$(echo "$out" | grep -E 'FAILED|failed|not ok')
$(cat regression.diffs test/isolation/output_iso/regression.diffs 2>/dev/null | head -30)"
    fi
    record "regress+iso" "$pass" "$fail"
fi

# TAP: one result per test program
if want tap && ls test/t/*.pl >/dev/null 2>&1; then
    out=$(make -s prove_installcheck PROVE_TESTS='test/t/*.pl' 2>&1)
    echo "$out" | grep -E '^test/t/|^Files=|^Result:|^# measured: ' || true
    tp=$(echo "$out" | grep -cE '^test/t/.* ok$' || true)
    # a file that failed a test or exited non-zero (a TODO test that passed
    # lists its file in the summary too, with Failed: 0)
    tf=$(echo "$out" | grep -cE '^test/t/.*(Dubious|Failed: [1-9]|Wstat: [1-9]|not ok)' || true)
    if echo "$out" | grep -q '^Result: FAIL' && [ "$tf" = 0 ]; then tf=1; fi
    [ "$tf" != 0 ] && echo "$out" | tail -60
    record "tap" "$tp" "$tf"
fi

# statistical tests: the runner prints "stat: N passed, M failed"
if want stat && [ -f test/stat/run.py ]; then
    out=$(python3 test/stat/run.py 2>&1)
    echo "$out"
    line=$(echo "$out" | grep -E '^stat: [0-9]+ passed, [0-9]+ failed' | tail -1)
    if [ -n "$line" ]; then
        sp=$(echo "$line" | sed -E 's/^stat: ([0-9]+) passed.*/\1/')
        sf=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
    else
        sp=0; sf=1
    fi
    record "statistical" "$sp" "$sf"
fi

# the independent references check themselves (test/reference/*.py --check)
rp=0; rf=0; ref_failed=""
want reference && for ref in test/reference/*.py; do
    grep -q -- '--check' "$ref" || continue
    if out=$(python3 "$ref" --check 2>&1); then
        rp=$((rp + 1))
    else
        rf=$((rf + 1)); echo "$out" | tail -20
        ref_failed="$ref_failed$(basename "$ref"): $(echo "$out" | tail -20)
"
    fi
    echo "$out" | grep -E '^-- worst' | sed "s|^-- |$(basename "$ref"): |"
done
out=$ref_failed
[ $((rp + rf)) -gt 0 ] && record "reference" "$rp" "$rf"

# load test: exit status
if want load && [ -x test/load/run.sh ]; then
    if out=$(test/load/run.sh 2>&1); then
        echo "$out"; record "load" 1 0
    else
        echo "$out"; record "load" 0 1
    fi
fi

# fuzz test: every function and aggregate with extreme arguments, in a
# cluster of its own on the next port: a call that ignores cancel can only
# be ended by SIGKILL, which restarts the cluster (fsync off makes that
# restart skip the sync of the data directory); the runner prints
# "fuzz: N passed, M failed"; it bounds every wait itself, and timeout(1)
# is the last resort
if want fuzz && [ -f test/fuzz/run.py ]; then
    fdir=$(mktemp -d /tmp/dp_agg_fuzz.XXXXXX)
    fport=$((port + 1))
    dp_start_cluster "$fdir" "$fport"
    PGHOST=$fdir PGPORT=$fport psql -XAtq -d postgres -c "ALTER SYSTEM SET fsync = off" \
        -c "SELECT pg_reload_conf()" >/dev/null
    out=$(PGHOST=$fdir PGPORT=$fport DP_FUZZ_SERVER_LOG=$fdir/server.log \
        timeout 1200 python3 test/fuzz/run.py 2>&1)
    echo "$out"
    dp_stop_cluster "$fdir"
    rm -rf "$fdir"
    fdir=""
    line=$(echo "$out" | grep -E '^fuzz: [0-9]+ passed, [0-9]+ failed' | tail -1)
    if [ -n "$line" ]; then
        fp=$(echo "$line" | sed -E 's/^fuzz: ([0-9]+) passed.*/\1/')
        ff=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
    else
        fp=0; ff=1
    fi
    record "fuzz" "$fp" "$ff"
fi

# the neighbour checker of protected relations: random DP statements of an
# untrusted role on neighbouring tables (one row or one unit removed), which
# must behave alike but for the noisy values; time-boxed
# (DP_NEIGHBOUR_SECONDS, 300), its seed printed; one result per statement:
# "neighbour: N passed, M failed"
if want neighbour && [ -f test/neighbour/run.py ]; then
    out=$(DP_NEIGHBOUR_SECONDS=${DP_NEIGHBOUR_SECONDS:-300} timeout 1200 python3 test/neighbour/run.py 2>&1)
    echo "$out" | grep -vE '^  (plain|prepared|cursor) ' || true
    line=$(echo "$out" | grep -E '^neighbour: [0-9]+ passed, [0-9]+ failed' | tail -1)
    if [ -n "$line" ]; then
        np=$(echo "$line" | sed -E 's/^neighbour: ([0-9]+) passed.*/\1/')
        nf=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
    else
        np=0; nf=1
    fi
    record "neighbour" "$np" "$nf"
fi

# Citus: a coordinator and two workers of their own on ports port+2 ..
# port+4, and a worker added late on port+5 (test/citus/check.py prints
# "citus: N passed, M failed").  Runs when Citus is installed for PG_CONFIG
# (run-all.sh installs it from the source tarball DP_CITUS_TARBALL names:
# test/lib.sh, dp_citus_install); without Citus it fails if
# DP_CITUS_TARBALL asked for it, else it is skipped
if want citus; then
    cs_=0
    if dp_citus_installed; then
        out=$(timeout 900 python3 test/citus/check.py $((port + 2)) 2>&1)
        echo "$out"
        line=$(echo "$out" | grep -E '^citus: [0-9]+ passed, [0-9]+ failed' | tail -1)
        if [ -n "$line" ]; then
            cp_=$(echo "$line" | sed -E 's/^citus: ([0-9]+) passed.*/\1/')
            cf_=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
        else
            cp_=0; cf_=1
        fi
    elif [ -n "${DP_CITUS_TARBALL:-}" ]; then
        echo "citus: Citus is not installed for $PG_CONFIG although DP_CITUS_TARBALL names $DP_CITUS_TARBALL (its build failed: see above)"
        cp_=0; cf_=1
    else
        echo "citus: skipped: Citus is not installed for $PG_CONFIG and DP_CITUS_TARBALL names no source to build it from"
        cp_=0; cf_=0; cs_=1
    fi
    record "citus" "$cp_" "$cf_" "$cs_"
fi

# mutants (test/mutants/README.md): a subset chosen from the commit
# (DP_COMMIT, set by run-all.sh) is applied, built into a private copy of
# this PostgreSQL and run against its kill suites on port port+5 (Citus
# port+6 .. port+8); every mutant must still apply.  Each killed mutant
# counts as passed; a survivor, or a mutant that no longer applies or
# builds, as failed; a mutant only the citus suite kills, as skipped when
# that suite is skipped (the runner prints "mutants: N skipped ...").
if want mutants && [ -f test/mutants/run.py ]; then
    out=$(timeout 2400 python3 test/mutants/run.py --rotate "${DP_MUTANTS_PER_RUN:-3}" \
        --port $((port + 5)) 2>&1)
    rc=$?
    echo "$out" | grep -vE '^\|' || true
    mp=$(echo "$out" | sed -nE 's/^([0-9]+) killed, [0-9]+ survived$/\1/p' | tail -1)
    mf=$(echo "$out" | sed -nE 's/^[0-9]+ killed, ([0-9]+) survived$/\1/p' | tail -1)
    mu=$(echo "$out" | sed -nE 's/^mutants: ([0-9]+) could not be tested.*/\1/p' | tail -1)
    ms=$(echo "$out" | sed -nE 's/^mutants: ([0-9]+) skipped.*/\1/p' | tail -1)
    mp=${mp:-0}
    mf=$(( ${mf:-0} + ${mu:-0} ))
    # a failing baseline, a timeout or a crash of the runner fails too
    [ "$rc" != 0 ] && [ "$mf" = 0 ] && mf=1
    record "mutants" "$mp" "$mf" "${ms:-0}"
fi

# PostgreSQL's own regression suite, with dp_agg created and a table
# protected against a server without dp_agg, on ports port+5 and port+6
# (test/core-regress.sh prints "core-regress: N passed, M failed", one per
# test); DP_CORE_REGRESS_DIR is the built suite, which run-all.sh and
# pg-matrix.sh prepare as root
if want core; then
    if [ -n "${DP_CORE_REGRESS_DIR:-}" ] && [ -x "$DP_CORE_REGRESS_DIR/pg_regress" ]; then
        out=$(timeout 2400 bash test/core-regress.sh run "$DP_CORE_REGRESS_DIR" $((port + 5)) 2>&1)
        echo "$out"
        line=$(echo "$out" | grep -E '^core-regress: [0-9]+ passed, [0-9]+ failed' | tail -1)
        if [ -n "$line" ]; then
            kp=$(echo "$line" | sed -E 's/^core-regress: ([0-9]+) passed.*/\1/')
            kf=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
        else
            kp=0; kf=1
        fi
    else
        echo "core-regress: no built PostgreSQL regression suite (DP_CORE_REGRESS_DIR='${DP_CORE_REGRESS_DIR:-}')"
        kp=0; kf=1
    fi
    record "core-regress" "$kp" "$kf"
fi

if [ -s "$failures" ]; then
    echo "== failures (repeated from above)"
    cat "$failures"
    echo "== end of failures"
fi
rm -f "$failures"
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" = 0 ]
