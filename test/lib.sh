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

# Build Citus from the source the checkout's parent directory holds
# ($1/../shared/deps/citus: a tarball and a one-line patch for PostgreSQL
# 15.20, see its README) and install it into PG_CONFIG's tree, for the
# citus suite (test/citus/check.py).  The build is cached under
# /var/cache/dp_agg-ci/citus, keyed by the sha256 of the tarball and the
# patch and by the PostgreSQL it was configured for, so a second run only
# installs.  Without the tarball it says so and returns: the suite then
# fails with a clear message.
DP_CITUS_VERSION=13.2.2
dp_citus_install() {
    local deps="$1/../shared/deps/citus"
    local tarball="$deps/citus-$DP_CITUS_VERSION.tar.gz"
    local patch="$deps/citus-$DP_CITUS_VERSION-pg15.20.patch"
    local key cache src
    if [ ! -f "$tarball" ] || [ ! -f "$patch" ]; then
        dp_log "no Citus source in $deps: the citus suite will fail"
        return 0
    fi
    local missing=""
    for p in libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev; do
        dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        [ "$(id -u)" = 0 ] || { echo "missing packages:$missing (run as root)" >&2; return 1; }
        dp_log "installing$missing"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
    fi
    key=$(cat "$tarball" "$patch" | sha256sum | cut -c1-16)-$(echo "$PG_CONFIG $("$PG_CONFIG" --version)" | sha256sum | cut -c1-8)
    cache=/var/cache/dp_agg-ci/citus/$key
    src="$cache/citus-$DP_CITUS_VERSION"
    if [ ! -f "$cache/built" ]; then
        dp_log "building Citus $DP_CITUS_VERSION (cached in $cache)"
        rm -rf "$cache" && mkdir -p "$cache"
        tar xzf "$tarball" -C "$cache"
        (cd "$src" && patch -s -p1 < "$patch" &&
            ./configure -q PG_CONFIG="$PG_CONFIG" >/dev/null &&
            make -s -j2 with_llvm=no >/dev/null 2>&1) || { dp_log "Citus build failed"; return 1; }
        touch "$cache/built"
    fi
    make -C "$src" -s with_llvm=no install >/dev/null
}
