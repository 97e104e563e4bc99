#!/bin/bash
# dp_agg: run every test suite (pg_regress, isolation, TAP, statistical,
# load, PostgreSQL's own regression suite).  Works as root on a fresh Debian 12 machine: installs what it
# needs, builds and installs the extension, then runs the suites as the
# postgres user in a copy of the tree.  Ends with one line:
#   N passed, N failed
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib.sh"

dp_install_deps
dp_build_install "$top"
# Citus for the citus suite (from ../shared/deps/citus; cached)
if [[ " ${DP_SUITES:-citus} " == *" citus "* ]]; then
    dp_citus_install "$top" || dp_log "Citus could not be installed: the citus suite will fail"
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
