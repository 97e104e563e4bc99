# Shell functions shared by the dp_agg benchmarks (sourced after test/lib.sh).
#
# dp_bench_cluster: use the cluster that PGHOST/PGPORT point to, or else
# (like test/demo.sh) install what is missing, build and install the
# extension and start a throw-away cluster with dp_agg preloaded.
#
# Environment:
#   PGHOST, PGPORT, PGUSER, PGDATABASE  use this cluster (a superuser must
#                           connect; dp_agg must be in shared_preload_libraries)
#   DP_BENCH_PORT           port of the throw-away cluster (it listens only on a
#                           Unix socket in its temporary directory)
#   DP_BENCH_SHARED_BUFFERS shared_buffers of the throw-away cluster (1GB)
#   DP_BENCH_TMPDIR         where the throw-away cluster lives (/tmp); on a
#                           tmpfs (/dev/shm) fsync costs nothing, so that a
#                           benchmark measures the CPU path, not the disk's
#                           flush latency
#   DP_BENCH_SKIP_BUILD=1   use the installed extension: no apt-get, no make

DP_PSQL="$DP_PG_BIN/psql"
DP_BENCH_DIR=""

# Start the throw-away cluster, or check the given one.  The caller traps
# EXIT with dp_bench_cleanup.
dp_bench_cluster() {
    local top=$1
    if [ -n "${PGHOST:-}" ] || [ -n "${PGPORT:-}" ]; then
        export PGDATABASE=${PGDATABASE:-postgres}
        dp_log "using the cluster at ${PGHOST:-(default host)} port ${PGPORT:-(default)}"
        "$DP_PSQL" -X -q -Atc "SELECT 1" >/dev/null
        return 0
    fi
    if [ "${DP_BENCH_SKIP_BUILD:-0}" != 1 ]; then
        dp_install_deps
        dp_build_install "$top"
    fi
    local port=${DP_BENCH_PORT:-}
    if [ -z "$port" ]; then
        port=54340
        while [ -e "/tmp/.s.PGSQL.$port" ] || [ -e "/var/run/postgresql/.s.PGSQL.$port" ]; do
            port=$((port + 1))
        done
    fi
    DP_BENCH_DIR=$(mktemp -d "${DP_BENCH_TMPDIR:-/tmp}/dp_agg_bench.XXXXXX")
    [ "$(id -u)" = 0 ] && chown postgres: "$DP_BENCH_DIR"
    dp_log "starting a throw-away cluster in $DP_BENCH_DIR (port $port)"
    (cd / && dp_as_postgres bash -c "$(declare -f dp_start_cluster); DP_PG_BIN=$DP_PG_BIN; dp_start_cluster '$DP_BENCH_DIR' '$port'")
    # benchmark settings: the tables stay in shared buffers; no checkpoint
    # forced by WAL volume while timing
    cat >> "$DP_BENCH_DIR/data/postgresql.conf" <<CONF
shared_buffers = '${DP_BENCH_SHARED_BUFFERS:-1GB}'
max_parallel_workers = 8
max_wal_size = '8GB'
checkpoint_timeout = '30min'
CONF
    (cd / && dp_as_postgres "$DP_PG_BIN/pg_ctl" -D "$DP_BENCH_DIR/data" -l "$DP_BENCH_DIR/server.log" \
        -m fast -w restart >/dev/null)
    export PGHOST=$DP_BENCH_DIR PGPORT=$port PGUSER=postgres PGDATABASE=postgres
    unset PGSERVICE PGOPTIONS
}

dp_bench_cleanup() {
    if [ -n "$DP_BENCH_DIR" ]; then
        (cd / && dp_as_postgres bash -c "$(declare -f dp_stop_cluster); DP_PG_BIN=$DP_PG_BIN; dp_stop_cluster '$DP_BENCH_DIR'")
        rm -rf "$DP_BENCH_DIR"
    fi
}

# The role the benchmarks run as, with a budget no run can exhaust.
dp_bench_role() {
    "$DP_PSQL" -X -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE EXTENSION IF NOT EXISTS dp_agg;
SELECT NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'dp_bench') AS missing \gset
\if :missing
CREATE ROLE dp_bench;
\endif
SELECT dp_agg.set_budget('dp_bench', 1e15, 0.5) \g /dev/null
-- the benchmarks time the aggregates against the built-in ones: their
-- group keys are public, without private selection
ALTER ROLE dp_bench SET dp_agg.group_keys = 'public';
SQL
}

# The table of the charging benchmarks: 1,000 rows, x uniform in 0..100.
dp_bench_t1000() {
    "$DP_PSQL" -X -q -v ON_ERROR_STOP=1 <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS dp_bench_t1000;
CREATE TABLE dp_bench_t1000 (id integer PRIMARY KEY, x integer NOT NULL);
SELECT setseed(0.5) \g /dev/null
INSERT INTO dp_bench_t1000 SELECT i, floor(random() * 101)::integer FROM generate_series(1, 1000) i;
VACUUM (FREEZE, ANALYZE) dp_bench_t1000;
GRANT SELECT ON dp_bench_t1000 TO dp_bench;
SQL
}

# The callgrind benchmarks start their own cluster under valgrind: refuse a
# given one, and install valgrind where it is missing (as root).
dp_bench_need_callgrind() {
    if [ -n "${PGHOST:-}" ] || [ -n "${PGPORT:-}" ]; then
        echo "$1 starts its own cluster under valgrind: unset PGHOST and PGPORT" >&2
        exit 1
    fi
    if ! command -v valgrind >/dev/null || ! command -v callgrind_annotate >/dev/null; then
        [ "$(id -u)" = 0 ] && { apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; }
        command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
    fi
}

# The throw-away cluster's postmaster again, under callgrind: each process
# writes its profile to $DP_CG_DIR/cg.PID when it exits.
dp_bench_under_callgrind() {
    export DP_CG_DIR="$DP_BENCH_DIR/callgrind"
    mkdir -p "$DP_CG_DIR"
    [ "$(id -u)" = 0 ] && chown postgres: "$DP_CG_DIR"
    (cd / && dp_as_postgres "$DP_PG_BIN/pg_ctl" -D "$DP_BENCH_DIR/data" -m fast -w stop >/dev/null)
    (cd / && dp_as_postgres bash -c "valgrind --tool=callgrind --callgrind-out-file='$DP_CG_DIR/cg.%p' \
        '$DP_PG_BIN/postgres' -D '$DP_BENCH_DIR/data' >'$DP_BENCH_DIR/valgrind.log' 2>&1 &")
    for _ in $(seq 300); do
        "$DP_PSQL" -X -Atc "SELECT 1" >/dev/null 2>&1 && return 0
        sleep 1
    done
    echo "the postmaster under callgrind does not answer (see $DP_BENCH_DIR/valgrind.log)" >&2
    return 1
}

# Machine description, as Markdown.
dp_bench_machine() {
    local top=$1 cpu mem pg rev
    cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
    mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
    pg=$("$DP_PSQL" -X -Atc "SELECT version()")
    rev=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
    if [ "$rev" != unknown ] && [ -n "$(git -C "$top" status --porcelain -- src sql Makefile 2>/dev/null)" ]; then
        rev="$rev (with uncommitted changes in src/sql)"
    fi
    echo "Machine: $(nproc) CPUs ($cpu), $mem RAM, Linux $(uname -r); load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
    local datadir fs
    datadir=$("$DP_PSQL" -X -Atc "SHOW data_directory" 2>/dev/null || true)
    if [ -n "$datadir" ] && fs=$(stat -f -c %T "$datadir" 2>/dev/null); then
        echo "Data directory: on $fs (fsync = $("$DP_PSQL" -X -Atc "SHOW fsync"), wal_sync_method = $("$DP_PSQL" -X -Atc "SHOW wal_sync_method"))"
    fi
    echo "PostgreSQL: $pg"
    echo "dp_agg: $("$DP_PSQL" -X -Atc "SELECT extversion FROM pg_extension WHERE extname = 'dp_agg'") at commit $rev"
}
