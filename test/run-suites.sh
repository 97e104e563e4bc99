#!/bin/bash
# Run every suite against a throw-away cluster (as the postgres user, from
# a writable copy of the tree; see run-all.sh).  Prints one line per suite
# and finally "N passed, N failed"; exits non-zero if anything failed.
# DP_SUITES chooses the suites (default: all of them):
#   graph regress tap stat reference load fuzz neighbour citus
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib.sh"
cd "$top"

dir=$(mktemp -d /tmp/dp_agg_cluster.XXXXXX)
port=${DP_TEST_PORT:-54329}
dp_start_cluster "$dir" "$port"
fdir=""     # the fuzz test's own cluster, below
trap 'dp_stop_cluster "$dir"; rm -rf "$dir"; [ -n "$fdir" ] && { dp_stop_cluster "$fdir"; rm -rf "$fdir"; }' EXIT
export PGHOST=$dir PGPORT=$port PGUSER=postgres

total_pass=0
total_fail=0
suites=" ${DP_SUITES:-graph regress tap stat reference load fuzz neighbour citus} "
want() { [[ "$suites" == *" $1 "* ]]; }
record() {   # suite passed failed
    printf '%-14s %4d passed, %d failed\n' "$1" "$2" "$3"
    total_pass=$((total_pass + $2))
    total_fail=$((total_fail + $3))
}

# the module graph (builds the objects in this copy of the tree)
if want graph && [ -f test/check-graph.sh ]; then
    if out=$(bash test/check-graph.sh 2>&1); then
        echo "$out"; record "graph" 1 0
    else
        echo "$out"; record "graph" 0 1
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
    [ "$fail" != 0 ] && { cat regression.diffs test/isolation/output_iso/regression.diffs 2>/dev/null | head -200; }
    record "regress+iso" "$pass" "$fail"
fi

# TAP: one result per test program
if want tap && ls test/t/*.pl >/dev/null 2>&1; then
    out=$(make -s prove_installcheck PROVE_TESTS='test/t/*.pl' 2>&1)
    echo "$out" | grep -E '^test/t/|^Files=|^Result:' || true
    tp=$(echo "$out" | grep -cE '^test/t/.* ok$' || true)
    tf=$(echo "$out" | grep -cE '^test/t/.*(Dubious|Failed|not ok)' || true)
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
rp=0; rf=0
want reference && for ref in test/reference/*.py; do
    grep -q -- '--check' "$ref" || continue
    if out=$(python3 "$ref" --check 2>&1); then
        rp=$((rp + 1))
    else
        rf=$((rf + 1)); echo "$out" | tail -20
    fi
    echo "$out" | grep -E '^-- worst' | sed "s|^-- |$(basename "$ref"): |"
done
[ $((rp + rf)) -gt 0 ] && record "reference" "$rp" "$rf"

# load test: exit status
if want load && [ -x test/load/run.sh ]; then
    if test/load/run.sh; then record "load" 1 0; else record "load" 0 1; fi
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
# port+4 (test/citus/check.py prints "citus: N passed, M failed"); Citus
# is built and installed by run-all.sh (test/lib.sh, dp_citus_install)
if want citus; then
    if [ -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ]; then
        out=$(timeout 900 python3 test/citus/check.py $((port + 2)) 2>&1)
        echo "$out"
        line=$(echo "$out" | grep -E '^citus: [0-9]+ passed, [0-9]+ failed' | tail -1)
        if [ -n "$line" ]; then
            cp_=$(echo "$line" | sed -E 's/^citus: ([0-9]+) passed.*/\1/')
            cf_=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
        else
            cp_=0; cf_=1
        fi
    else
        echo "citus: Citus is not installed for $PG_CONFIG (no ../shared/deps/citus next to the checkout?)"
        cp_=0; cf_=1
    fi
    record "citus" "$cp_" "$cf_"
fi

echo "$total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ]
