# Shared shell functions of dp_agg's demo and test scripts (sourced).
#
# They work as root on a fresh Debian 12 machine: they install what is
# missing, build and install the extension, and run PostgreSQL (which
# refuses to run as root) as the postgres user in a throw-away cluster.

# Which PostgreSQL: the one PG_CONFIG names, else Debian's postgresql-$DP_PG_MAJOR
# (15 by default).  Everything below uses DP_PG_BIN and PG_CONFIG.
if [ -n "${PG_CONFIG:-}" ] && [ "$PG_CONFIG" != pg_config ]; then
    DP_PG_BIN=$("$PG_CONFIG" --bindir)
    DP_PG_MAJOR=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
    DP_PG_PACKAGED=0
else
    DP_PG_MAJOR=${DP_PG_MAJOR:-15}
    DP_PG_BIN=/usr/lib/postgresql/$DP_PG_MAJOR/bin
    DP_PG_PACKAGED=1
fi
export PG_CONFIG="$DP_PG_BIN/pg_config"

dp_log() { printf '== %s\n' "$*" >&2; }

# Install the Debian packages we need, if any is missing.
dp_install_deps() {
    # libkissfft-dev and pkg-config: the FFTs of pld accounting;
    # python3-numpy: its independent reference (test/reference/pld.py)
    local pkgs="build-essential libssl-dev libipc-run-perl python3 ca-certificates libkissfft-dev pkg-config python3-numpy"
    [ "$DP_PG_PACKAGED" = 1 ] &&
        pkgs="$pkgs postgresql-$DP_PG_MAJOR postgresql-server-dev-$DP_PG_MAJOR"
    local missing=""
    for p in $pkgs; do
        dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        [ "$(id -u)" = 0 ] || { echo "missing packages:$missing (run as root)" >&2; return 1; }
        dp_log "installing$missing"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends $missing >/dev/null
    fi
    # Debian's package creates a default cluster; we never use it
    if command -v pg_lsclusters >/dev/null && pg_lsclusters -h 2>/dev/null | grep -q online; then
        pg_ctlcluster "$DP_PG_MAJOR" main stop 2>/dev/null || true
    fi
}

# Build and install the extension from the tree $1.
# Objects built for another PostgreSQL are rebuilt (src/.pg_config names
# the one they were built for): they would load with undefined symbols.
dp_build_install() {
    dp_log "building dp_agg"
    if [ "$(cat "$1/src/.pg_config" 2>/dev/null)" != "$PG_CONFIG" ]; then
        make -C "$1" -s PG_CONFIG="$PG_CONFIG" clean >/dev/null
        echo "$PG_CONFIG" > "$1/src/.pg_config"
    fi
    make -C "$1" -s PG_CONFIG="$PG_CONFIG" >/dev/null
    make -C "$1" -s PG_CONFIG="$PG_CONFIG" install >/dev/null
}

# Run a command as the postgres user (or as ourselves if we are not root).
dp_as_postgres() {
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- env PATH="$DP_PG_BIN:$PATH" PG_CONFIG="$PG_CONFIG" "$@"
    else
        env PATH="$DP_PG_BIN:$PATH" PG_CONFIG="$PG_CONFIG" "$@"
    fi
}

# Copy the tree $1 to a fresh directory the postgres user owns; print it.
dp_copy_tree() {
    local dest
    dest=$(mktemp -d /tmp/dp_agg.XXXXXX)
    (cd "$1" && tar cf - --exclude=.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
        --exclude=results --exclude=tmp_check --exclude=output_iso .) | (cd "$dest" && tar xf -)
    [ "$(id -u)" = 0 ] && chown -R postgres: "$dest"
    echo "$dest"
}

# Start a throw-away cluster in $1 on port $2 with dp_agg preloaded
# (run as the postgres user).
dp_start_cluster() {
    local dir=$1 port=$2
    "$DP_PG_BIN/initdb" -D "$dir/data" -A trust -U postgres --no-sync >/dev/null
    cat >> "$dir/data/postgresql.conf" <<CONF
shared_preload_libraries = 'dp_agg'
port = $port
listen_addresses = ''
unix_socket_directories = '$dir'
max_worker_processes = 16
max_connections = 100
fsync = on
CONF
    "$DP_PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
}

dp_stop_cluster() {
    "$DP_PG_BIN/pg_ctl" -D "$1/data" -m fast -w stop >/dev/null 2>&1 || true
}

# Citus, for the citus suite (test/citus/check.py), the Citus mutants and
# the Citus benchmark.  dp_citus_installed: whether PG_CONFIG's tree has it.
dp_citus_installed() {
    [ -f "$("$PG_CONFIG" --pkglibdir)/citus.so" ]
}

# Build Citus from the source tarball DP_CITUS_TARBALL names (such as
# citus-13.2.2.tar.gz; .ci/run names the one in ../shared/deps/citus) and
# install it into PG_CONFIG's tree.  The patches DP_CITUS_PATCH names
# (space-separated), else every patch beside the tarball named after it
# (citus-13.2.2-*.patch: Citus 13.2.2 needs a one-line patch to build
# against PostgreSQL 15.20, see that directory's README), are applied first.
# The build is cached under /var/cache/dp_agg-ci/citus, keyed by the sha256
# of the tarball and the patches and by the PostgreSQL it was configured
# for, so a second run only installs.  Fails, saying why, when
# DP_CITUS_TARBALL is unset or names no file, or the build fails.
dp_citus_install() {
    local tarball=${DP_CITUS_TARBALL:-} patches p key cache dir src missing=""
    if [ -z "$tarball" ]; then
        dp_log "DP_CITUS_TARBALL names no Citus source tarball"
        return 1
    fi
    if [ ! -f "$tarball" ]; then
        dp_log "DP_CITUS_TARBALL names $tarball, which does not exist"
        return 1
    fi
    if [ -n "${DP_CITUS_PATCH:-}" ]; then
        patches=$DP_CITUS_PATCH
    else
        patches=$(ls "${tarball%.tar.gz}"-*.patch 2>/dev/null || true)
    fi
    for p in $patches; do
        [ -f "$p" ] || { dp_log "the Citus patch $p does not exist"; return 1; }
    done
    for p in libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev; do
        dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        [ "$(id -u)" = 0 ] || { echo "missing packages:$missing (run as root)" >&2; return 1; }
        dp_log "installing$missing"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
    fi
    key=$(cat "$tarball" $patches | sha256sum | cut -c1-16)-$(echo "$PG_CONFIG $("$PG_CONFIG" --version)" | sha256sum | cut -c1-8)
    cache=/var/cache/dp_agg-ci/citus/$key
    # the tarball's top directory (citus-13.2.2); awk reads the whole list,
    # so that tar never dies of a closed pipe
    dir=$(tar tzf "$tarball" 2>/dev/null | awk -F/ 'NR == 1 { print $1 }')
    [ -n "$dir" ] || { dp_log "cannot read $tarball"; return 1; }
    src="$cache/$dir"
    if [ ! -f "$cache/built" ]; then
        dp_log "building Citus from $(basename "$tarball") (cached in $cache)"
        rm -rf "$cache" && mkdir -p "$cache"
        tar xzf "$tarball" -C "$cache" || { dp_log "cannot unpack $tarball"; return 1; }
        for p in $patches; do
            (cd "$src" && patch -s -p1 < "$p") || { dp_log "the Citus patch $p does not apply"; return 1; }
        done
        (cd "$src" && ./configure -q PG_CONFIG="$PG_CONFIG" >/dev/null &&
            make -s -j2 with_llvm=no >/dev/null 2>&1) || { dp_log "Citus build failed"; return 1; }
        touch "$cache/built"
    fi
    make -C "$src" -s with_llvm=no install >/dev/null && dp_citus_installed
}
