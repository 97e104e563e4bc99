#!/bin/bash
# dp_agg: PostgreSQL's own regression suite as the judge of "protecting one
# table changes nothing else in the database" (doc/guard.md, "Protected
# tables", "What protection changes").
#
# PostgreSQL's src/test/regress runs twice against the server PG_CONFIG
# names (installcheck, the tests one at a time, C locale, UTF8), each time
# in a throw-away cluster of its own:
#   plain   a server without dp_agg;
#   dp_agg  dp_agg preloaded, created in the test database by pg_regress,
#           and a protected table with rows and statistics in it
#           (test/core-regress/sql/dp_agg_protect.sql, run first).
# Then each test's results are compared between the two runs: they must be
# identical, except for the lines test/core-regress/allow.txt allows, each
# entry with its reason.  Differences from PostgreSQL's expected files
# (a source a little older than the server, say) are the same on both sides
# and are not the question here; they are reported, not counted.
#
# Usage:
#   test/core-regress.sh prepare          as root: make sure a built copy of
#       src/test/regress of PG_CONFIG's major version exists and print its
#       directory: $prefix/core-regress of a PostgreSQL test/pg-matrix.sh
#       built, else one built from Debian's source package of
#       postgresql-MAJOR for this machine's release (its newest version the
#       mirror of the machine's Debian sources serves; apt checks it against
#       the signed index), cached in
#       $DP_CORE_CACHE/core-regress/pgMAJOR (default /var/cache/dp_agg-ci)
#   test/core-regress.sh run DIR PORT     as the postgres user: the two runs
#       on PORT and PORT+1, the comparison; prints one line per differing
#       test, the time taken and last "core-regress: N passed, N failed"
#       (one per test of the schedule, plus dp_agg_protect itself).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib.sh"

log() { printf '== core-regress: %s\n' "$*" >&2; }

# ---------- prepare (root) ----------

# Copy the built regress directory $1 (without objects) to $2.
keep_suite() {
    rm -rf "$2"
    mkdir -p "$2"
    (cd "$1" && tar cf - --exclude='*.o' --exclude=results --exclude=log \
        --exclude=tmp_check .) | (cd "$2" && tar xf -)
    chmod -R a+rX "$2"
}

prepare() {
    local major prefix cache root apt src ver versions dir codename
    major=$DP_PG_MAJOR
    prefix=$(cd "$("$PG_CONFIG" --bindir)/.." && pwd)
    if [ -f "$prefix/core-regress/.complete" ]; then
        echo "$prefix/core-regress"
        return 0
    fi
    root=${DP_CORE_CACHE:-/var/cache/dp_agg-ci}
    cache=$root/core-regress/pg$major
    if [ -f "$cache/.complete" ]; then
        log "PostgreSQL $major: reusing $cache (source $(cat "$cache/.complete"))"
        echo "$cache"
        return 0
    fi
    for p in build-essential dpkg-dev; do
        dpkg -s "$p" >/dev/null 2>&1 ||
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" >/dev/null
    done
    # a private apt configuration: the machine's Debian sources, as deb-src
    apt=$root/apt-core
    mkdir -p "$apt/lists/partial" "$apt/parts" "$apt/cache/archives/partial"
    : > "$apt/sources.list"
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$apt/parts/debian.sources"
    else
        sed -n 's/^deb /deb-src /p' /etc/apt/sources.list > "$apt/sources.list"
    fi
    local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/parts"
                -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache")
    apt-get "${opts[@]}" -qq update || { log "apt-get update failed"; return 1; }
    codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
    versions=$(apt-cache "${opts[@]}" showsrc "postgresql-$major" 2>/dev/null |
        sed -n 's/^Version: //p' | sort -Vru)
    [ -n "$versions" ] || { log "no source package postgresql-$major for $codename"; return 1; }
    src=$root/core-regress/src$major
    rm -rf "$src"
    mkdir -p "$src"
    id _apt >/dev/null 2>&1 && chown _apt "$src"
    # the index may name a version whose files the mirror no longer serves
    ver=""
    for v in $versions; do
        if (cd "$src" && apt-get "${opts[@]}" -qq source --download-only "postgresql-$major=$v" >/dev/null 2>&1); then
            ver=$v
            break
        fi
        log "PostgreSQL $major: source $v is listed but not served"
        rm -f "$src"/*
    done
    [ -n "$ver" ] || { log "PostgreSQL $major: no source version is served"; return 1; }
    log "PostgreSQL $major: building src/test/regress of source $ver (the server is $("$PG_CONFIG" --version))"
    # apt checked the files against the signed index
    (cd "$src" && dpkg-source --no-check -x ./*.dsc build >/dev/null) || return 1
    dir=$src/build
    (cd "$dir" &&
        ./configure --without-readline --without-icu --without-llvm --without-zlib \
            >configure.log 2>&1 &&
        make -s -j2 -C src/test/regress >make.log 2>&1) ||
        { log "build failed; logs in $dir"; tail -30 "$dir"/*.log >&2; return 1; }
    keep_suite "$dir/src/test/regress" "$cache"
    echo "$ver" > "$cache/.complete"
    rm -rf "$src"
    echo "$cache"
}

# ---------- run (postgres) ----------

# Start a cluster in $1 on port $2; $3: shared_preload_libraries.
start() {
    "$DP_PG_BIN/initdb" -D "$1/pgdata" -A trust -U postgres --no-sync --no-locale -E UTF8 >/dev/null ||
        return 1
    cat >> "$1/pgdata/postgresql.conf" <<CONF
shared_preload_libraries = '$3'
port = $2
listen_addresses = ''
unix_socket_directories = '$1'
max_worker_processes = 16
max_connections = 100
fsync = off
CONF
    "$DP_PG_BIN/pg_ctl" -D "$1/pgdata" -l "$1/server.log" -w start >/dev/null
}

# One side: $1 its directory (a copy of the suite), $2 port, $3 preload,
# $4 schedule, then pg_regress's extra options.
run_side() {
    local dir=$1 port=$2 preload=$3 schedule=$4
    shift 4
    start "$dir" "$port" "$preload" || { log "$preload: the server did not start"; return 1; }
    (cd "$dir" && ./pg_regress --inputdir=. --bindir="$DP_PG_BIN" --dlpath=. \
        --host="$dir" --port="$port" --no-locale --schedule="$schedule" "$@" \
        >pg_regress.out 2>&1)
    "$DP_PG_BIN/pg_ctl" -D "$dir/pgdata" -m fast -w stop >/dev/null 2>&1
    if [ ! -d "$dir/results" ] || [ -z "$(ls "$dir/results")" ]; then
        log "${preload:-plain}: pg_regress ran no test"
        tail -20 "$dir/pg_regress.out" >&2
        return 1
    fi
    return 0
}

# The lines of diff $1 (added or removed) that allow.txt does not allow for
# test $2.
unallowed() {
    local test=$2 allow=$top/test/core-regress/allow.txt
    grep -E '^[-+]' "$1" | cut -c2- |
        python3 -c '
import re, sys
test, path = sys.argv[1], sys.argv[2]
pats = []
for line in open(path):
    line = line.rstrip("\n")
    if not line or line.startswith("#"):
        continue
    name, _, pat = line.partition(" ")
    if name == test and pat.strip() != "padding":
        pats.append(re.compile(pat.strip()))
for line in sys.stdin:
    line = line.rstrip("\n")
    if not any(p.search(line) for p in pats):
        print(line)
' "$test" "$allow"
}

run() {
    local suite=$1 port=$2 t0 plain dp tests pass=0 fail=0 t d left
    t0=$(date +%s)
    work=$(mktemp -d /tmp/dp_agg_core.XXXXXX)
    # DP_CORE_KEEP=1 keeps the two runs' directories (results, server logs)
    trap '"$DP_PG_BIN/pg_ctl" -D "$work/plain/pgdata" -m immediate stop >/dev/null 2>&1;
          "$DP_PG_BIN/pg_ctl" -D "$work/dp_agg/pgdata" -m immediate stop >/dev/null 2>&1;
          if [ "${DP_CORE_KEEP:-0}" = 1 ]; then log "kept $work"; else rm -rf "$work"; fi' EXIT
    plain=$work/plain
    dp=$work/dp_agg
    for side in "$plain" "$dp"; do
        mkdir -p "$side"
        cp -a "$suite/." "$side/"
        rm -rf "$side/results" "$side/regression.diffs" "$side/regression.out"
        cp "$top/test/core-regress/sql/"*.sql "$side/sql/"
        cp "$top/test/core-regress/expected/"*.out "$side/expected/"
    done
    # the tests one at a time, in the order of PostgreSQL's schedule
    tests=$(sed -n 's/^test: *//p' "$suite/parallel_schedule" | tr ' ' '\n' | sed '/^$/d')
    echo "$tests" | sed 's/^/test: /' > "$plain/serial_schedule"
    { echo "test: dp_agg_protect"; cat "$plain/serial_schedule"; } > "$dp/serial_schedule"
    log "PostgreSQL $DP_PG_MAJOR, $(echo "$tests" | wc -l) tests, suite $suite"
    run_side "$plain" "$port" "" serial_schedule || return 1
    log "plain: $(grep -E '^(#|) *[0-9]+ of [0-9]+ tests|All [0-9]+ tests' "$plain/pg_regress.out" | head -1 | sed 's/^ *//') ($(($(date +%s) - t0)) s)"
    run_side "$dp" "$((port + 1))" dp_agg serial_schedule --load-extension=dp_agg || return 1
    log "dp_agg: $(grep -E '^(#|) *[0-9]+ of [0-9]+ tests|All [0-9]+ tests' "$dp/pg_regress.out" | head -1 | sed 's/^ *//') ($(($(date +%s) - t0)) s)"

    # dp_agg_protect must pass: the table is protected, and refused
    if grep -qE '(^test|^ok|^not ok).*dp_agg_protect.*(FAILED|failed|not ok)|not ok.*dp_agg_protect' "$dp/pg_regress.out" ||
        ! [ -f "$dp/results/dp_agg_protect.out" ]; then
        echo "dp_agg_protect FAILED"
        [ -f "$dp/regression.diffs" ] && sed -n '/dp_agg_protect/,/^diff /p' "$dp/regression.diffs" | head -60
        fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
    for t in $tests; do
        if [ ! -f "$plain/results/$t.out" ] || [ ! -f "$dp/results/$t.out" ]; then
            echo "$t: no result on one side"
            fail=$((fail + 1))
            continue
        fi
        if cmp -s "$plain/results/$t.out" "$dp/results/$t.out"; then
            pass=$((pass + 1))
            continue
        fi
        d=$work/$t.diff
        if grep -qE "^$t +padding *$" "$top/test/core-regress/allow.txt"; then
            # a wider cell of an allowed row widens its whole column
            diff -U0 <(sed -E 's/ +/ /g; s/^-+(\+-+)*$/---/' "$plain/results/$t.out") \
                <(sed -E 's/ +/ /g; s/^-+(\+-+)*$/---/' "$dp/results/$t.out") | sed '1,2d' > "$d"
        else
            diff -U0 "$plain/results/$t.out" "$dp/results/$t.out" | sed '1,2d' > "$d"
        fi
        left=$(unallowed "$d" "$t")
        if [ -z "$left" ]; then
            echo "$t: differs only as test/core-regress/allow.txt allows"
            pass=$((pass + 1))
        else
            echo "$t: DIFFERS with dp_agg (lines not allowed:)"
            echo "$left" | head -60
            fail=$((fail + 1))
        fi
    done
    # for information: the tests that fail against PostgreSQL's expected files on both sides
    log "failing against PostgreSQL's expected output on both sides (not counted):" \
        "$(grep -E 'FAILED|^not ok' "$plain/pg_regress.out" | sed -E 's/^(not ok +[0-9]+ +- +|test +)//; s/ .*//' | tr '\n' ' ')"
    if grep -q 'terminated by signal\|server closed the connection' "$dp/server.log" 2>/dev/null; then
        log "the dp_agg server log reports a crash"
        fail=$((fail + 1))
    fi
    log "took $(($(date +%s) - t0)) s"
    echo "core-regress: $pass passed, $fail failed"
    [ "$fail" = 0 ]
}

case ${1:-} in
    prepare) prepare ;;
    run) run "$2" "$3" ;;
    *) echo "usage: $0 prepare | run DIR PORT" >&2; exit 2 ;;
esac
