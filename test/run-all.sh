#!/bin/bash
# dp_agg: run every test suite (pg_regress, isolation, TAP, statistical,
# load, PostgreSQL's own regression suite, ...: test/run-suites.sh).  Works
# as root on a fresh Debian 12 machine: installs what it needs, builds and
# installs the extension, then runs the suites as the postgres user in a
# copy of the tree.  Ends with one line:
#   N passed, N failed, N skipped
# A suite is skipped only when what it needs is absent and was not asked
# for: the citus suite needs Citus, installed for PG_CONFIG, or built from
# the source tarball DP_CITUS_TARBALL names (then it must run: a build that
# fails fails the suite).  .ci/run names the tarball.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib.sh"

dp_install_deps
dp_build_install "$top"
# Citus for the citus suite and the Citus mutants (cached)
if [ -n "${DP_CITUS_TARBALL:-}" ]; then
    DP_CITUS_TARBALL=$(realpath -m "$DP_CITUS_TARBALL")
    export DP_CITUS_TARBALL
fi
if [[ " ${DP_SUITES:-citus} " == *" citus "* || " ${DP_SUITES:-mutants} " == *" mutants "* ]]; then
    if [ -n "${DP_CITUS_TARBALL:-}" ]; then
        dp_citus_install || dp_log "Citus could not be installed from $DP_CITUS_TARBALL: the citus suite will fail"
    elif ! dp_citus_installed; then
        dp_log "Citus is not installed for $PG_CONFIG and DP_CITUS_TARBALL names no source: the citus suite and the Citus mutants are skipped"
    fi
fi
# the commit, from which the mutants suite chooses its subset (the copy
# below has no .git)
DP_COMMIT=${DP_COMMIT:-$(git -C "$top" rev-parse HEAD 2>/dev/null || true)}
export DP_COMMIT
# PostgreSQL's own regression suite for the core suite (built once, cached)
if [[ " ${DP_SUITES:-core} " == *" core "* ]]; then
    DP_CORE_REGRESS_DIR=$(bash "$top/test/core-regress.sh" prepare) ||
        dp_log "PostgreSQL's regression suite could not be prepared: the core suite will fail"
    export DP_CORE_REGRESS_DIR
fi
work=$(dp_copy_tree "$top")
dp_log "running the suites in $work"
dp_as_postgres bash "$work/test/run-suites.sh"
