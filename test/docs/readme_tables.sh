#!/bin/bash
# Compute the tables of doc/statistics.md ("Choosing epsilon") and
# doc/budgets.md ("Renyi accounting") with dp_agg itself, and plot
# choosing_epsilon.png with gnuplot.
# Needs a server with dp_agg (PGHOST/PGPORT/PGUSER); run as a superuser:
#   PGHOST=... PGPORT=... test/docs/readme_tables.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
psql="psql -X -q -v ON_ERROR_STOP=1 -d ${PGDATABASE:-postgres}"

$psql <<'SQL'
CREATE EXTENSION IF NOT EXISTS dp_agg;
DROP TABLE IF EXISTS readme_t;
CREATE TEMP TABLE IF NOT EXISTS readme_dummy ();
CREATE TABLE readme_t (i int, v float8);
SQL

# half-width of the 95% interval of the noise, from dp_agg.preview
ci() {   # statement
    $psql -At -c "SELECT string_agg(round(ci95::numeric, 2)::text, ' ' ORDER BY call, release) FROM dp_agg.preview(\$q\$$1\$q\$)"
}

echo "## Choosing epsilon: 95% half-width of the noise (dp_agg.preview)"
echo
echo "| epsilon | dp_count, Laplace | dp_count, Gaussian (delta 1e-6) | dp_sum over [0, 100], Laplace | dp_sum over [0, 100], Gaussian | dp_sum over [0, 10000], Laplace |"
echo "|---:|---:|---:|---:|---:|---:|"
: > "$here/choosing_epsilon.dat"
for e in 0.01 0.02 0.05 0.1 0.2 0.5 1 2 5 10; do
    c1=$(ci "SELECT dp_count(i, $e) FROM readme_t")
    c2=$(ci "SELECT dp_count(i, $e, 1e-6) FROM readme_t")
    s1=$(ci "SELECT dp_sum(v, 0, 100, $e) FROM readme_t")
    s2=$(ci "SELECT dp_sum(v, 0, 100, $e, 1e-6) FROM readme_t")
    s3=$(ci "SELECT dp_sum(v, 0, 10000, $e) FROM readme_t")
    echo "| $e | $c1 | $c2 | $s1 | $s2 | $s3 |"
    echo "$e $c1 $c2 $s1 $s2" >> "$here/choosing_epsilon.dat"
done
echo

echo "## Renyi accounting: Gaussian releases a budget buys"
echo
echo "| budget (epsilon, delta) | each release (epsilon, delta) | basic | rdp |"
echo "|---|---|---:|---:|"
for budget in "1 1e-5" "5 1e-5" "10 1e-6"; do
    set -- $budget; le=$1; ld=$2
    for release in "0.1 1e-7" "0.5 1e-7" "1 1e-7"; do
        set -- $release; re=$1; rd=$2
        $psql -At <<SQL
WITH s AS (SELECT dp_agg.gaussian_sigma($re, $rd, 1) AS sigma),
     basic AS (SELECT least(floor($le / $re::float8), floor($ld / $rd::float8))::int AS n),
     rdp AS (SELECT coalesce(max(k), 0) AS n FROM s, generate_series(1, 100000) k
             WHERE dp_agg.sampled_gaussian_epsilon(1, s.sigma, k, $ld) <= $le)
SELECT format('| (%s, %s) | (%s, %s) | %s | %s |', $le, '$ld', $re, '$rd', basic.n, rdp.n) FROM basic, rdp;
SQL
    done
done
echo
echo "(basic: epsilon_limit / epsilon and delta_limit / delta, whichever is smaller; the"
echo " rounded-up sums can stop one release earlier.  rdp: the largest k whose Renyi-composed"
echo " epsilon at delta_limit stays within epsilon_limit, dp_agg.sampled_gaussian_epsilon at rate 1.)"

$psql -c "DROP TABLE readme_t" >/dev/null

if command -v gnuplot >/dev/null; then
    gnuplot <<GP
set terminal pngcairo size 900,560 font "sans,11" noenhanced
set output "$here/choosing_epsilon.png"
set logscale xy
set xlabel "epsilon"
set ylabel "95% half-width of the noise"
set grid
set key top right
set title "dp_agg: noise against epsilon (from dp_agg.preview)"
plot "$here/choosing_epsilon.dat" using 1:2 with linespoints title "dp_count, Laplace", \
     "" using 1:3 with linespoints title "dp_count, Gaussian (delta 1e-6)", \
     "" using 1:4 with linespoints title "dp_sum over [0, 100], Laplace", \
     "" using 1:5 with linespoints title "dp_sum over [0, 100], Gaussian (delta 1e-6)"
GP
    echo "plotted $here/choosing_epsilon.png" >&2
fi
