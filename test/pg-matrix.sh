#!/bin/bash
# dp_agg: the PostgreSQL version matrix of CI (run by .ci/run after the main
# suites, as root on Debian 12).
#
# For each major version in DP_MATRIX (default "17 18") it builds PostgreSQL
# from Debian's source package into a prefix cached on this machine, builds
# dp_agg against it and runs the regress, isolation, TAP and core suites.  The
# Debian 12 package of PostgreSQL 15 is tested by test/run-all.sh itself.
#
# Sources: the deb-src lines below, in a private apt configuration (the
# machine's own sources are left alone).  apt checks every downloaded file
# against the checksums of the Sources index, whose InRelease file it checks
# against debian-archive-keyring: that is the chain of trust, so the .dsc
# file's own signature (made by an uploader's key, which would need
# debian-keyring) is not checked again when unpacking.
#
# The mirror may no longer serve the version its Sources index names (it
# keeps older point releases in its pool): then the newest earlier point
# release it serves is built, verified the way dpkg-source verifies a source
# package: the .dsc's signature by a Debian uploader (gpgv, debian-keyring),
# and every file against the SHA-256 the .dsc lists (checked by apt-helper
# while downloading, and again by dpkg-source).
#
# Cache: $DP_MATRIX_CACHE/pgNN (default /var/cache/dp_agg-ci).  A prefix is
# reused when its stamp file names the source version apt offers now; a
# new point release rebuilds it.  The build's src/test/regress (without its
# objects) is kept in pgNN/core-regress for the core suite
# (test/core-regress.sh: PostgreSQL's own regression suite with and without
# dp_agg); a cached prefix without it gets it from the same source again,
# configured the same way, building only that directory.
#
# DP_MATRIX_SUITES: the suites of test/run-suites.sh run on each version
# (default "regress tap core").
#
# pg_upgrade: after the versions, test/t/013_pg_upgrade.pl upgrades a
# cluster of each older version to each newer one built here (17 -> 18),
# and from Debian's PostgreSQL 15 ($DP_MATRIX_PG15, default
# /usr/lib/postgresql/15) to each, when dp_agg of this tree is installed
# there (test/run-all.sh installs it; else the pair fails as NOT TESTED).
# The suites of each version skip that test (DP_UPGRADE_FROM=none).
#
# Output: one line per version and suite (and whether dp_agg compiled
# without warnings), one per pair of versions upgraded, the time taken,
# and last
#   matrix: N passed, N failed, N skipped
# Exits non-zero if anything failed or a version could not be built.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cache=${DP_MATRIX_CACHE:-/var/cache/dp_agg-ci}
versions=${DP_MATRIX:-17 18}
port=${DP_MATRIX_PORT:-55450}
jobs=${DP_MATRIX_JOBS:-2}
pg15=${DP_MATRIX_PG15:-/usr/lib/postgresql/15}

log() { printf '== matrix: %s\n' "$*" >&2; }

# Debian suite whose source package of PostgreSQL $1 we build
suite_of() {
    case $1 in
        17) echo trixie ;;
        18) echo forky ;;
        *) return 1 ;;
    esac
}

apt_opts=(-o "Dir::Etc::SourceList=$cache/apt/sources.list"
          -o "Dir::Etc::SourceParts=$cache/apt/none"
          -o "Dir::State::Lists=$cache/apt/lists"
          -o "Dir::Cache=$cache/apt/cache")

apt_setup() {
    mkdir -p "$cache/apt/lists/partial" "$cache/apt/none" "$cache/apt/cache/archives/partial"
    local v suites=""
    for v in $versions; do suites="$suites $(suite_of "$v")"; done
    {
        for s in $(echo $suites | tr ' ' '\n' | sort -u); do
            echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $s main"
        done
    } > "$cache/apt/sources.list"
    apt-get "${apt_opts[@]}" -qq update
}

build_deps() {
    local pkgs="build-essential bison flex libssl-dev zlib1g-dev pkg-config libipc-run-perl dpkg-dev
                gpgv debian-keyring libkissfft-dev"
    local missing="" p
    for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
    if [ -n "$missing" ]; then
        log "installing$missing"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
    fi
}

# Download into $3 the newest point release of PostgreSQL $1 before the
# index's version $2 whose signed .dsc the mirror serves; print its version.
# Returns 2 when none is served, 1 when one fails verification.
download_signed_source() {
    local v=$1 srcver=$2 src=$3 upstream suffix minor m ver dsc sum file
    local pool=http://deb.debian.org/debian/pool/main/p/postgresql-$v
    upstream=${srcver%%-*}
    suffix=${srcver#"$upstream"}
    minor=${upstream#*.}
    for ((m = minor - 1; m >= 0 && m >= minor - 6; m--)); do
        ver=$v.$m$suffix
        dsc=postgresql-${v}_$ver.dsc
        /usr/lib/apt/apt-helper download-file "$pool/$dsc" "$src/$dsc" >/dev/null 2>&1 || continue
        if ! gpgv --keyring /usr/share/keyrings/debian-keyring.gpg "$src/$dsc" >/dev/null 2>&1; then
            log "PostgreSQL $v: $dsc has no valid signature of a Debian uploader"
            return 1
        fi
        while read -r sum file; do
            /usr/lib/apt/apt-helper download-file "$pool/$file" "$src/$file" "SHA256:$sum" \
                >/dev/null 2>&1 || { log "PostgreSQL $v: $file failed its checksum or download"; return 1; }
        done < <(sed -nE '/^Checksums-Sha256:/,/^[A-Z]/s/^ ([0-9a-f]{64}) [0-9]+ (.+)$/\1 \2/p' "$src/$dsc")
        echo "$ver"
        return 0
    done
    return 2
}

# Build PostgreSQL $1 into $cache/pg$1 unless the cached prefix is complete.
build_pg() {
    local v=$1 suite prefix srcver src dir built
    suite=$(suite_of "$v") || { log "no Debian suite known for PostgreSQL $v"; return 1; }
    prefix=$cache/pg$v
    srcver=$(apt-cache "${apt_opts[@]}" showsrc "postgresql-$v/$suite" 2>/dev/null |
        sed -n 's/^Version: //p' | head -1)
    [ -n "$srcver" ] || srcver=$(apt-cache "${apt_opts[@]}" showsrc "postgresql-$v" 2>/dev/null |
        sed -n 's/^Version: //p' | head -1)
    if [ -z "$srcver" ]; then
        log "no source package postgresql-$v in $suite"
        return 1
    fi
    if [ -f "$prefix/.dp_agg-complete" ] && [ "$(head -1 "$prefix/.dp_agg-complete")" = "$srcver" ]; then
        log "PostgreSQL $v: reusing $prefix (source $(tail -1 "$prefix/.dp_agg-complete"))"
        return 0
    fi
    log "PostgreSQL $v: building source $srcver into $prefix"
    src=$cache/src/$v
    rm -rf "$prefix"
    built=$(unpack_source "$v" "$srcver" "$src") || return $?
    dir=$src/build
    (cd "$dir" &&
        configure_pg "$prefix" &&
        make -s -j"$jobs" >make.log 2>&1 &&
        make -s install >install.log 2>&1 &&
        make -s -C contrib/dblink install >>install.log 2>&1 &&
        make -s -C contrib/tsm_system_rows install >>install.log 2>&1) ||
        { log "PostgreSQL $v: build failed; logs in $dir"; tail -30 "$dir"/*.log >&2; return 1; }
    printf '%s\n%s\n' "$srcver" "$built" > "$prefix/.dp_agg-complete"
    keep_core_suite "$dir" "$prefix" "$built" || return 1
    rm -rf "$src"
}

# Configure the source tree of the current directory for the prefix $1.
configure_pg() {
    ./configure --prefix="$1" --with-openssl --enable-tap-tests --enable-debug \
        --without-readline --without-icu --without-llvm >configure.log 2>&1
}

# Download and unpack into $3/build the source of PostgreSQL $1 whose
# index version is $2 (or the newest earlier point release the mirror
# serves); print the version unpacked.  Returns 2 when none is served.
unpack_source() {
    local v=$1 srcver=$2 src=$3 built
    rm -rf "$src"
    mkdir -p "$src"
    # apt downloads as its own unprivileged user where it can
    id _apt >/dev/null 2>&1 && chown _apt "$src"
    built=$srcver
    if (cd "$src" && apt-get "${apt_opts[@]}" -qq source --download-only "postgresql-$v=$srcver" >/dev/null 2>&1); then
        # checksums were verified by apt against the signed index (see above)
        (cd "$src" && dpkg-source --no-check -x ./*.dsc build >/dev/null) || return 1
    else
        log "PostgreSQL $v: the mirror does not serve postgresql-$v $srcver; trying earlier point releases"
        built=$(download_signed_source "$v" "$srcver" "$src")
        case $? in
            0) ;;
            2) log "PostgreSQL $v: no point release of postgresql-$v is served"; return 2 ;;
            *) return 1 ;;
        esac
        log "PostgreSQL $v: unpacking the signed source $built"
        (cd "$src" && dpkg-source --require-valid-signature -x ./*.dsc build >/dev/null) || return 1
    fi
    echo "$built"
}

# Keep the built src/test/regress of the source tree $1 (with the C
# functions of contrib/spi its tests load) in $2/core-regress; $3: the
# source version.
keep_core_suite() {
    local dir=$1 dest=$2/core-regress
    (cd "$dir" && make -s -C src/test/regress >>make.log 2>&1 &&
        make -s -C contrib/spi >>make.log 2>&1) ||
        { log "building src/test/regress failed; logs in $dir"; tail -30 "$dir/make.log" >&2; return 1; }
    for m in autoinc refint; do
        [ -f "$dir/src/test/regress/$m.so" ] || cp "$dir/contrib/spi/$m.so" "$dir/src/test/regress/"
    done
    rm -rf "$dest"
    mkdir -p "$dest"
    (cd "$dir/src/test/regress" && tar cf - --exclude='*.o' --exclude=results --exclude=log \
        --exclude=tmp_check .) | (cd "$dest" && tar xf -)
    echo "$3" > "$dest/.complete"
    chmod -R a+rX "$dest"
}

# A cached prefix of PostgreSQL $1 without core-regress: build only that,
# from the source version it was built from.
build_core_suite() {
    local v=$1 prefix=$cache/pg$1 src=$cache/src/$1 srcver built
    [ -f "$prefix/core-regress/.complete" ] && return 0
    srcver=$(head -1 "$prefix/.dp_agg-complete")
    log "PostgreSQL $v: building its regression suite (source $(tail -1 "$prefix/.dp_agg-complete"))"
    built=$(unpack_source "$v" "$srcver" "$src") || return 1
    if [ "$built" != "$(tail -1 "$prefix/.dp_agg-complete")" ]; then
        log "PostgreSQL $v: the mirror serves $built, not the source $prefix was built from"
        rm -rf "$src"
        return 1
    fi
    (cd "$src/build" && configure_pg "$prefix") ||
        { log "PostgreSQL $v: configure failed"; tail -30 "$src/build/configure.log" >&2; return 1; }
    keep_core_suite "$src/build" "$prefix" "$built" || return 1
    rm -rf "$src"
}

total_pass=0
total_fail=0
total_skip=0
untested=""
tested=""   # versions built and tested, dp_agg installed in their prefix
start=$(date +%s)
log "versions: $versions; cache: $cache"
build_deps
apt_setup || { log "apt-get update failed"; total_fail=$((total_fail + 1)); }

for v in $versions; do
    t0=$(date +%s)
    build_pg "$v"
    case $? in
        0) ;;
        2)  # never pass without testing a version
            printf 'pg%-3s NOT TESTED  0 passed, 1 failed: source package not downloadable here\n' "$v"
            untested="$untested $v"
            total_fail=$((total_fail + 1))
            continue ;;
        *)  printf 'pg%-3s build        0 passed, 1 failed\n' "$v"
            total_fail=$((total_fail + 1))
            continue ;;
    esac
    suites=${DP_MATRIX_SUITES:-regress tap core}
    if [[ " $suites " == *" core "* ]]; then
        build_core_suite "$v" || log "PostgreSQL $v: no regression suite: the core suite will fail"
    fi
    t1=$(date +%s)
    out=$(
        export PG_CONFIG=$cache/pg$v/bin/pg_config
        export DP_CORE_REGRESS_DIR=$cache/pg$v/core-regress
        . "$top/test/lib.sh"
        make -C "$top" -s PG_CONFIG="$PG_CONFIG" clean >/dev/null
        dp_build_install "$top" 2>&1
        work=$(dp_copy_tree "$top")
        make -C "$top" -s PG_CONFIG="$PG_CONFIG" clean >/dev/null
        DP_SUITES="$suites" DP_TEST_PORT=$port DP_UPGRADE_FROM=none \
            dp_as_postgres bash "$work/test/run-suites.sh"
        rm -rf "$work"
    )
    echo "$out" | sed "s/^/pg$v /"
    # dp_agg must build without warnings on every version
    warnings=$(echo "$out" | grep -c 'warning:')
    if [ "$warnings" = 0 ]; then
        printf 'pg%-3s compile      1 passed, 0 failed\n' "$v"
        total_pass=$((total_pass + 1))
    else
        printf 'pg%-3s compile      0 passed, 1 failed (%d warnings)\n' "$v" "$warnings"
        total_fail=$((total_fail + 1))
    fi
    # run-suites.sh's last line: "N passed, N failed, N skipped"
    line=$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' | tail -1)
    if [ -n "$line" ]; then
        total_pass=$((total_pass + $(echo "$line" | cut -d' ' -f1)))
        total_fail=$((total_fail + $(echo "$line" | cut -d' ' -f3 | tr -d ,)))
        total_skip=$((total_skip + $(echo "$line" | sed -nE 's/.*, ([0-9]+) skipped$/\1/p' | grep . || echo 0)))
    else
        total_fail=$((total_fail + 1))
    fi
    log "PostgreSQL $v: build $((t1 - t0)) s, suites $(($(date +%s) - t1)) s"
    port=$((port + 1))
    tested="$tested $v"
done

# Upgrade a cluster of the PostgreSQL installed in prefix $2 (named $1)
# with pg_upgrade to PostgreSQL $3 (built above, dp_agg installed in both):
# test/t/013_pg_upgrade.pl, run with the newer one.
upgrade_pair() {
    local name=$1 from=$2 to=$3 out t0 not_possible
    t0=$(date +%s)
    out=$(
        export PG_CONFIG=$cache/pg$to/bin/pg_config
        . "$top/test/lib.sh"
        work=$(dp_copy_tree "$top")
        DP_UPGRADE_FROM=$from dp_as_postgres make -C "$work" -s prove_installcheck \
            PROVE_TESTS=test/t/013_pg_upgrade.pl 2>&1
        tail -40 "$work"/tmp_check/log/regress_log_013_pg_upgrade 2>/dev/null
        rm -rf "$work"
    )
    # (here-strings, not pipes: grep -q would end the pipe early, and
    # pipefail would then count a pass as a failure)
    if grep -qE '^test/t/013_pg_upgrade\.pl \.+ ok$' <<< "$out"; then
        # the checks passed; if the upgrade itself was impossible for a
        # reason that holds for any table (the test's header), say why
        not_possible=$(grep -o -m1 'pg_upgrade NOT POSSIBLE: .*' <<< "$out")
        if [ -n "$not_possible" ]; then
            echo "pg$name->$to $not_possible"
            printf 'pg%s->%-3s upgrade 1 passed, 0 failed (pg_upgrade --check only)\n' "$name" "$to"
        else
            printf 'pg%s->%-3s upgrade 1 passed, 0 failed\n' "$name" "$to"
        fi
        total_pass=$((total_pass + 1))
    else
        echo "$out" | sed "s/^/pg$name->$to /"
        printf 'pg%s->%-3s upgrade 0 passed, 1 failed\n' "$name" "$to"
        total_fail=$((total_fail + 1))
    fi
    log "pg_upgrade from PostgreSQL $name to $to: $(($(date +%s) - t0)) s"
}

for to in $tested; do
    if [ -x "$pg15/bin/pg_config" ] &&
        cmp -s "$top/sql/dp_agg--0.3--0.4.sql" \
            "$("$pg15/bin/pg_config" --sharedir)/extension/dp_agg--0.3--0.4.sql" &&
        [ -f "$("$pg15/bin/pg_config" --pkglibdir)/dp_agg.so" ]; then
        upgrade_pair 15 "$pg15" "$to"
    else
        printf 'pg15->%-3s upgrade NOT TESTED  0 passed, 1 failed: dp_agg of this tree is not installed in %s\n' \
            "$to" "$pg15"
        total_fail=$((total_fail + 1))
    fi
    for from in $tested; do
        [ "$from" -lt "$to" ] && upgrade_pair "$from" "$cache/pg$from" "$to"
    done
done

log "matrix took $(($(date +%s) - start)) s"
[ -n "$untested" ] && log "NOT TESTED (no source package):$untested"
echo "matrix: $total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" = 0 ]
