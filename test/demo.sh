#!/bin/bash
# dp_agg demo: differentially private aggregates with a privacy budget.
#
#   sudo test/demo.sh
#
# Works as root on a fresh Debian 12 machine: installs what is missing
# (test/lib.sh), builds and installs the extension, starts a throw-away
# PostgreSQL cluster (as the postgres user, in a temporary directory, with
# dp_agg in shared_preload_libraries), loads 4,000 made-up hospital visits
# (test/data), gives the role "analyst" a privacy budget of epsilon 10, and
# as that analyst runs a few DP queries.  Each DP result is printed next to
# the exact answer (computed by the data owner, for comparison only) and the
# noise that was added, as recorded in the analyst's ledger.  Then it shows
# the remaining budget and what happens when a query costs more than what is
# left.  Finally the cluster is stopped and removed.
#
# It also works as a user who is not root, if the packages are installed and
# the user can write the PostgreSQL installation (make install).
#
# Environment: DP_DEMO_PORT (the cluster listens only on a Unix socket in its
# temporary directory; the port only names the socket).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/test/lib.sh"

dp_install_deps
dp_build_install "$top"

# a port no other local cluster uses (the socket is private anyway)
port=${DP_DEMO_PORT:-}
if [ -z "$port" ]; then
    port=54330
    while [ -e "/tmp/.s.PGSQL.$port" ] || [ -e "/var/run/postgresql/.s.PGSQL.$port" ]; do
        port=$((port + 1))
    done
fi

dir=$(mktemp -d /tmp/dp_agg_demo.XXXXXX)
cleanup() {
    (cd / && dp_as_postgres bash -c "$(declare -f dp_stop_cluster); DP_PG_BIN=$DP_PG_BIN; dp_stop_cluster '$dir'")
    rm -rf "$dir"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] && chown postgres: "$dir"
dp_log "starting a throw-away cluster in $dir (port $port)"
(cd / && dp_as_postgres bash -c "$(declare -f dp_start_cluster); DP_PG_BIN=$DP_PG_BIN; dp_start_cluster '$dir' '$port'")

export PGHOST=$dir PGPORT=$port PGDATABASE=postgres PGUSER=postgres
unset PGSERVICE PGOPTIONS PGPASSWORD
psql_owner() { "$DP_PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

dp_log "loading the sample data (test/data/visits.csv)"
psql_owner -v datadir="$top/test/data" -f "$top/test/data/visits.sql"

dp_log "creating the role analyst with a privacy budget of epsilon 10, delta 1e-5"
psql_owner <<'SQL'
CREATE EXTENSION dp_agg;
CREATE ROLE analyst LOGIN;
GRANT SELECT ON visits TO analyst;
-- epsilon of the DP aggregates called without an epsilon argument
ALTER ROLE analyst SET dp_agg.epsilon = '0.5';
SELECT dp_agg.set_budget('analyst', 10, 1e-5) \g /dev/null

-- the demo's helper: one DP aggregate call of a ledger entry, as text
CREATE SCHEMA demo;
CREATE FUNCTION demo.noise(call jsonb) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT (call->>'mechanism') || ' ' ||
           string_agg(CASE WHEN call->>'mechanism' = 'gaussian' THEN 'sigma=' ELSE 'b=' END
                      || round((r->>'noise_scale')::numeric, 2)
                      || CASE WHEN jsonb_array_length(call->'releases') > 1
                              THEN ' (' || (r->>'release') || ')' ELSE '' END,
                      ', ')
    FROM jsonb_array_elements(call->'releases') r
$$;
SQL

# The demo itself: one psql session that connects as the analyst to run
# each DP query (\gset keeps the results and the ledger entry), then as the
# data owner to compute the exact answers and print both.
psql_owner 2>&1 <<'SQL'
\pset null '(null)'
\pset footer off
\echo
\echo '================================================================'
\echo ' dp_agg demo: 4,000 made-up hospital visits (table visits)'
\echo '================================================================'
\echo
\echo 'The data owner gives the role analyst a privacy budget:'
\echo '    SELECT dp_agg.set_budget(''analyst'', 10, 1e-5);'
\echo '    ALTER ROLE analyst SET dp_agg.epsilon = ''0.5'';  -- default epsilon of a call'
\echo 'Every statement with DP aggregates is charged to the role that runs it.'
\echo 'dp_sum and dp_avg clamp each value to [lower, upper]; the noise grows with'
\echo 'the width of that range and shrinks with epsilon.  "exact" is computed by'
\echo 'the data owner for comparison only; "noise" is what the analyst''s ledger'
\echo '(dp_agg.my_ledger) says was added: Laplace scale b or Gaussian sigma.'

-------------------------------------------------------------------------
\echo
\echo '--- 1. How many visits? (epsilon 0.5 from dp_agg.epsilon)'
\echo 'analyst=> SELECT dp_count(*) FROM visits;'
\c - analyst
SELECT dp_count(*) AS visits FROM visits \gset dp_
SELECT detail FROM dp_agg.my_ledger ORDER BY id DESC LIMIT 1 \gset
\c - postgres
SELECT 'visits' AS statistic, :'dp_visits'::bigint AS dp_result, count(*) AS exact,
       :'dp_visits'::bigint - count(*) AS error, demo.noise(:'detail'::jsonb -> 0) AS noise
FROM visits;

-------------------------------------------------------------------------
\echo
\echo '--- 2. Total billed and average triage wait (epsilon 1 each)'
\echo 'analyst=> SELECT dp_sum(cost, 0, 100000, 1.0) AS total_cost,'
\echo '                 dp_avg(wait_minutes, 0, 480, 1.0) AS avg_wait'
\echo '          FROM visits;'
\c - analyst
SELECT dp_sum(cost, 0, 100000, 1.0) AS total_cost,
       dp_avg(wait_minutes, 0, 480, 1.0) AS avg_wait
FROM visits \gset dp_
SELECT detail FROM dp_agg.my_ledger ORDER BY id DESC LIMIT 1 \gset
\c - postgres
SELECT v.statistic, round(v.dp, 2) AS dp_result, round(v.exact, 2) AS exact,
       round(v.dp - v.exact, 2) AS error, demo.noise(:'detail'::jsonb -> (v.n - 1)) AS noise
FROM (VALUES (1, 'total cost ($), NULLs skipped', :'dp_total_cost'::numeric,
              (SELECT sum(cost) FROM visits)),
             (2, 'average wait (minutes)', :'dp_avg_wait'::numeric,
              (SELECT avg(wait_minutes)::numeric FROM visits))) AS v(n, statistic, dp, exact)
ORDER BY v.n;

-------------------------------------------------------------------------
\echo
\echo '--- 3. Visits and average age per region (GROUP BY; epsilon 0.5 + 1)'
\echo 'analyst=> SET dp_agg.group_keys = public;  -- the regions are public knowledge:'
\echo '          -- every region is released, with no private selection of the groups'
\echo 'analyst=> SELECT region, dp_count(*) AS visits, dp_avg(age, 0, 100, 1.0) AS avg_age'
\echo '          FROM visits GROUP BY region;'
\echo '(the statement below wraps it in json_agg to carry the rows to the comparison:'
\echo ' an outer query may post-process the result of a DP sub-query)'
\c - analyst
SET dp_agg.group_keys = public;
SELECT json_agg(s) AS dp_rows
FROM (SELECT region, dp_count(*) AS visits, dp_avg(age, 0, 100, 1.0) AS avg_age
      FROM visits GROUP BY region) s \gset
SELECT detail FROM dp_agg.my_ledger ORDER BY id DESC LIMIT 1 \gset
\c - postgres
SELECT d.region, x.statistic, x.dp AS dp_result, x.exact, round(x.dp - x.exact, 2) AS error, x.noise
FROM json_to_recordset(:'dp_rows') AS d(region text, visits bigint, avg_age float8)
JOIN (SELECT region, count(*) AS visits, avg(age) AS avg_age FROM visits GROUP BY region) e
  USING (region)
CROSS JOIN LATERAL (VALUES
    (1, 'visits', d.visits::numeric, e.visits::numeric, demo.noise(:'detail'::jsonb -> 0)),
    (2, 'average age', round(d.avg_age::numeric, 2), round(e.avg_age, 2), demo.noise(:'detail'::jsonb -> 1))
) AS x(n, statistic, dp, exact, noise)
ORDER BY d.region, x.n;
\echo 'Each region is a disjoint set of rows, so the statement costs 1.5 once,'
\echo 'not once per region.'

-------------------------------------------------------------------------
\echo
\echo '--- 3b. Patients, not visits: a privacy unit (epsilon 0.5, then 0.5 + 0.5)'
\echo 'A patient with many visits is protected as a whole once the data owner says'
\echo 'whose row each visit is:'
\echo '    SELECT dp_agg.set_privacy_unit(''visits'', ''patient_id'');'
\echo 'Each patient then counts at most dp_agg.max_rows_contributed times (default 1),'
\echo 'and each patient''s total in a sum is clamped to the bounds, before the noise.'
SELECT dp_agg.set_privacy_unit('visits', 'patient_id') \g /dev/null
\echo 'analyst=> SELECT dp_count(*) FROM visits;'
\c - analyst
SELECT dp_count(*) AS patients FROM visits \gset dp_
SELECT detail FROM dp_agg.my_ledger ORDER BY id DESC LIMIT 1 \gset
\c - postgres
SELECT 'patients' AS statistic, :'dp_patients'::bigint AS dp_result,
       count(DISTINCT patient_id) AS exact, :'dp_patients'::bigint - count(DISTINCT patient_id) AS error,
       demo.noise(:'detail'::jsonb -> 0) AS noise,
       :'detail'::jsonb -> 0 -> 'privacy_unit' AS privacy_unit
FROM visits;
\echo
\echo 'GROUP BY with a privacy unit: a group is released only if a noisy count of its'
\echo 'patients (not visits) passes a threshold (private selection, epsilon 0.5 and'
\echo 'delta 1e-6 more), so an age that few patients have is not even named:'
\echo 'analyst=> SET dp_agg.selection_epsilon = 0.5;  SET dp_agg.selection_delta = 1e-6;'
\echo 'analyst=> SELECT age, dp_count(*) AS patients FROM visits WHERE age < 20 GROUP BY age;'
\c - analyst
SET dp_agg.selection_epsilon = 0.5;
SET dp_agg.selection_delta = 1e-6;
SELECT json_agg(s) AS dp_rows
FROM (SELECT age, dp_count(*) AS patients FROM visits WHERE age < 20 GROUP BY age) s \gset
SELECT detail FROM dp_agg.my_ledger ORDER BY id DESC LIMIT 1 \gset
\c - postgres
SELECT (:'detail'::jsonb -> 1 -> 'selection' ->> 'threshold') AS threshold \gset
\echo 'The ages released, with their exact number of patients:'
SELECT d.age, d.patients AS dp_patients, e.patients AS exact_patients,
       d.patients - e.patients AS error
FROM json_to_recordset(:'dp_rows') AS d(age int, patients bigint)
JOIN (SELECT age, count(DISTINCT patient_id) AS patients FROM visits GROUP BY age) e USING (age)
ORDER BY d.age;
\echo 'The ages suppressed (every age from 0 to 19 has visits), and the number of'
\echo 'patients from which a group is released with certainty:'
SELECT count(*) AS ages_suppressed, string_agg(age || ' (' || patients || ')', ', ' ORDER BY age)
         AS "age (patients)", :'threshold' AS certain_from
FROM (SELECT age, count(DISTINCT patient_id) AS patients FROM visits WHERE age < 20 GROUP BY age) e
WHERE age NOT IN (SELECT age FROM json_to_recordset(:'dp_rows') AS d(age int, patients bigint));
\echo 'Each patient counts once, in one of their ages; the statement cost 0.5 + 0.5.'
SELECT dp_agg.clear_privacy_unit('visits') \g /dev/null

-------------------------------------------------------------------------
\echo
\echo '--- 4. Total bed-days with the Gaussian mechanism (epsilon 1, delta 1e-6)'
\echo 'analyst=> SELECT dp_sum(stay_days, 0, 60, 1.0, 1e-6) FROM visits;'
\c - analyst
SELECT dp_sum(stay_days, 0, 60, 1.0, 1e-6) AS bed_days FROM visits \gset dp_
SELECT detail FROM dp_agg.my_ledger ORDER BY id DESC LIMIT 1 \gset
\c - postgres
SELECT 'bed-days, NULLs skipped' AS statistic, round(:'dp_bed_days'::numeric, 1) AS dp_result,
       round(sum(stay_days)::numeric, 1) AS exact,
       round(:'dp_bed_days'::numeric - sum(stay_days)::numeric, 1) AS error,
       demo.noise(:'detail'::jsonb -> 0) AS noise,
       round(dp_agg.gaussian_sigma(1.0, 1e-6, 60)::numeric, 2) AS "gaussian_sigma(1, 1e-6, 60)"
FROM visits;

-------------------------------------------------------------------------
\c - analyst
\echo
\echo '--- 5. What the analyst has spent (dp_agg.my_ledger, dp_agg.my_budget)'
\echo 'analyst=> SELECT id, epsilon, delta, query FROM dp_agg.my_ledger ORDER BY id;'
SELECT id, epsilon, delta, regexp_replace(query, '\s+', ' ', 'g') AS query
FROM dp_agg.my_ledger ORDER BY id;
\echo 'analyst=> SELECT epsilon_limit, epsilon_spent, epsilon_remaining,'
\echo '                 delta_limit, delta_spent, delta_remaining FROM dp_agg.my_budget;'
SELECT epsilon_limit, epsilon_spent, epsilon_remaining, delta_limit, delta_spent, delta_remaining
FROM dp_agg.my_budget;

-------------------------------------------------------------------------
\echo
\echo '--- 6. A query that costs more than what is left (epsilon 6 > 3.5 remaining)'
\echo 'analyst=> SELECT dp_avg(cost, 0, 100000, 6.0) FROM visits;'
\set ON_ERROR_STOP 0
SELECT dp_avg(cost, 0, 100000, 6.0) FROM visits;
\set ON_ERROR_STOP 1
\echo 'Nothing was released or charged:'
SELECT epsilon_spent, epsilon_remaining FROM dp_agg.my_budget;
\echo
\echo 'A cheaper query still runs; spending the rest exhausts the budget:'
\echo 'analyst=> SELECT dp_count(visit_id, 1.75) AS visits FROM visits;   -- twice'
SELECT dp_count(visit_id, 1.75) AS visits FROM visits;
SELECT dp_count(visit_id, 1.75) AS visits FROM visits;
SELECT epsilon_spent, epsilon_remaining FROM dp_agg.my_budget;
\echo 'analyst=> SELECT dp_count(*) FROM visits;   -- epsilon 0.5'
\set ON_ERROR_STOP 0
SELECT dp_count(*) FROM visits;
\set ON_ERROR_STOP 1
\echo
\echo 'Only the data owner (a superuser) can raise the limit, with dp_agg.set_budget,'
\echo 'or start over, with dp_agg.reset_budget (recorded in the ledger).'
SQL

# Protected tables: an analyst with a grant and no SELECT
psql_owner 2>&1 <<'SQL'
\pset footer off
\echo
\echo '--- 7. Protected tables: DP statements are the only access'
\echo 'The data owner protects the table and lets a second analyst query it, without SELECT:'
\echo '    SELECT dp_agg.protect(''visits'');'
\echo '    SELECT dp_agg.grant_access(''visits'', ''analyst2'');'
CREATE ROLE analyst2 LOGIN;
SELECT dp_agg.set_budget('analyst2', 5) \g /dev/null
SELECT dp_agg.protect('visits') \g /dev/null
SELECT dp_agg.grant_access('visits', 'analyst2') \g /dev/null
\c - analyst2
\set ON_ERROR_STOP 0
\echo 'analyst2=> SELECT * FROM visits LIMIT 1;'
SELECT * FROM visits LIMIT 1;
\echo 'analyst2=> SELECT dp_count(visit_id, 0.5), count(*) FROM visits;'
SELECT dp_count(visit_id, 0.5), count(*) FROM visits;
\echo 'analyst2=> EXPLAIN ANALYZE SELECT dp_count(visit_id, 0.5) FROM visits;'
EXPLAIN ANALYZE SELECT dp_count(visit_id, 0.5) FROM visits;
\set ON_ERROR_STOP 1
\echo 'analyst2=> SELECT aggregate, epsilon, ci95 FROM dp_agg.preview(''SELECT dp_count(visit_id, 0.5) FROM visits'');'
SELECT aggregate, epsilon, ci95 FROM dp_agg.preview('SELECT dp_count(visit_id, 0.5) FROM visits');
\echo 'analyst2=> SELECT dp_count(visit_id, 0.5) AS visits FROM visits;'
SELECT dp_count(visit_id, 0.5) AS visits FROM visits;
\echo 'It was charged:'
SELECT kind, epsilon FROM dp_agg.my_ledger ORDER BY id;
SELECT epsilon_spent, epsilon_remaining FROM dp_agg.my_budget;
\c - postgres

-------------------------------------------------------------------------
\echo
\echo '--- 8. Spread, quantiles, estimated bounds and error bars (a third analyst, epsilon 1 each)'
CREATE ROLE analyst3 LOGIN;
SELECT dp_agg.set_budget('analyst3', 10) \g /dev/null
SELECT dp_agg.grant_access('visits', 'analyst3') \g /dev/null
\c - analyst3
SET dp_agg.epsilon = 1;
\echo 'analyst3=> SELECT dp_avg(wait_minutes, 0, 480) AS avg_wait,'
\echo '                  dp_interval_low(dp_avg(wait_minutes, 0, 480)) AS low,'
\echo '                  dp_interval_high(dp_avg(wait_minutes, 0, 480)) AS high,'
\echo '                  dp_stddev(wait_minutes, 0, 480) AS sd_wait,'
\echo '                  dp_percentile(wait_minutes, ARRAY[0.5, 0.9], 0, 480) AS median_p90'
\echo '           FROM visits;'
\echo '(the error bars are computed from the noise of the releases: they cost nothing;'
\echo ' the two percentiles share one price)'
SELECT round(dp_avg(wait_minutes, 0, 480)::numeric, 2) AS avg_wait,
       round(dp_interval_low(dp_avg(wait_minutes, 0, 480))::numeric, 2) AS low,
       round(dp_interval_high(dp_avg(wait_minutes, 0, 480))::numeric, 2) AS high,
       round(dp_stddev(wait_minutes, 0, 480)::numeric, 2) AS sd_wait,
       dp_percentile(wait_minutes, ARRAY[0.5, 0.9], 0, 480)::numeric(6, 1)[] AS median_p90
FROM visits;
SELECT epsilon AS charged FROM dp_agg.my_ledger ORDER BY id DESC LIMIT 1;
\echo 'Without bounds, a quarter of epsilon estimates them (the approximate bounds of'
\echo 'Google''s library: the edges of the powers of two whose noisy counts pass a threshold):'
\echo 'analyst3=> SELECT dp_bounds(cost) FROM visits;'
SELECT dp_bounds(cost) FROM visits;
\echo 'analyst3=> SELECT dp_avg(cost), dp_lower_bound(dp_avg(cost)), dp_upper_bound(dp_avg(cost)) FROM visits;'
\echo '(a numeric result is rounded to the precision of its noise)'
SELECT dp_avg(cost) AS avg_cost, dp_lower_bound(dp_avg(cost)) AS lower,
       dp_upper_bound(dp_avg(cost)) AS upper FROM visits;
\c - postgres
\echo 'The exact answers (the data owner):'
SELECT round(avg(wait_minutes)::numeric, 2) AS avg_wait, round(stddev_pop(wait_minutes)::numeric, 2) AS sd_wait,
       percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY wait_minutes)::numeric(6, 1)[] AS median_p90,
       min(cost) AS min_cost, max(cost) AS max_cost, round(avg(cost), 2) AS avg_cost
FROM visits;
SQL

dp_log "stopping and removing the cluster"
