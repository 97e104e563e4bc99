#!/bin/bash
# dp_agg's mutant suite (test/mutants/README.md): `make mutants`.
#
# Works as root on a fresh Debian 12 machine, as test/run-all.sh does: it
# installs what is missing (and Citus, for the Citus mutants, from the
# source tarball DP_CITUS_TARBALL names, as run-all.sh does; without Citus
# those mutants are skipped), copies the tree to a directory
# the postgres user owns and runs test/mutants/run.py there as postgres
# (PostgreSQL refuses root).  Run by another user, it runs run.py directly.
# The mutants are built into a private copy of the PostgreSQL that
# PG_CONFIG names (default: Debian's postgresql-15), never into it.
# Arguments go to run.py (--list, --rotate N, mutant names, ...).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/test/lib.sh"

# the commit, for --rotate (the copy below has no .git)
if [ -z "${DP_COMMIT:-}" ] && command -v git >/dev/null; then
    DP_COMMIT=$(git -C "$top" rev-parse HEAD 2>/dev/null || true)
fi
export DP_COMMIT

if [ "$(id -u)" = 0 ]; then
    dp_install_deps
    if [ -n "${DP_CITUS_TARBALL:-}" ]; then
        export DP_CITUS_TARBALL=$(realpath -m "$DP_CITUS_TARBALL")
        dp_citus_install || dp_log "Citus could not be installed: the Citus mutants will be errors"
    fi
    work=$(dp_copy_tree "$top")
    trap 'rm -rf "$work"' EXIT
    dp_as_postgres env DP_COMMIT="$DP_COMMIT" python3 "$work/test/mutants/run.py" "$@"
else
    python3 "$top/test/mutants/run.py" "$@"
fi
