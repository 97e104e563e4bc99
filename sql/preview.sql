--
-- preview: the price and the error bars of a statement before paying.
-- preview plans through the same guard and pricing as execution, executes
-- nothing and charges nothing; its output is deterministic.
--
SET dp_agg.group_keys = 'public';	-- keys of test data; private selection: selection.sql
CREATE TABLE p_t (g int, i int, f float8, n numeric);
INSERT INTO p_t SELECT k % 4, k % 50, k / 10.0, k / 4.0 FROM generate_series(1, 400) k;
CREATE FUNCTION try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN EXECUTE q; RETURN 'no error';
EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE || ': ' || SQLERRM; END $$;
SELECT epsilon_spent AS spent_before, (SELECT count(*) FROM dp_agg.ledger) AS charges_before
FROM dp_agg.my_budget \gset

-- the settings are read as execution reads them
SELECT * FROM dp_agg.preview('SELECT g, dp_count(*) FROM p_t GROUP BY g');
SET dp_agg.epsilon = 0.5;
SELECT call, aggregate, release, mechanism, epsilon, delta, sensitivity, noise_scale, grid,
       sampling, ci95, statement_epsilon, statement_delta, affordable
FROM dp_agg.preview('SELECT g, dp_count(*), dp_sum(i, 0, 49, 1), dp_sum(f, -1, 40, 0.25),
                            dp_avg(n, 0, 100, 2), dp_count(i, 1, 1e-6)
                     FROM p_t GROUP BY g');
-- ci95 is the exact half-width of the central 95% interval of the noise:
-- discrete Laplace of scale b: the smallest k with 2 p^(k+1)/(1+p) <= 0.05,
-- p = e^(-1/b)
SELECT b, dp_agg.noise_interval('laplace', b, 0.95) AS k,
       2 * exp(-(dp_agg.noise_interval('laplace', b, 0.95) + 1) / b) / (1 + exp(-1 / b)) <= 0.05 AS covers,
       2 * exp(-dp_agg.noise_interval('laplace', b, 0.95) / b) / (1 + exp(-1 / b)) > 0.05 AS smallest
FROM unnest(ARRAY[0.5, 1, 2, 100, 1e6]) b;
-- discrete Gaussian of sigma s: about 1.96 s for large s, exact for small
-- (for s = 1, P(|X| <= 1) = 0.855 and P(|X| <= 2) = 0.957)
SELECT s, dp_agg.noise_interval('gaussian', s, 0.95) AS k
FROM unnest(ARRAY[0.3, 1, 3.73, 100, 1e6]) s;
SELECT dp_agg.noise_interval('laplace', 1, 0.5) AS half, dp_agg.noise_interval('gaussian', 10, 0.99) AS ninety_nine;
-- under amplification, the sampling object of the ledger
SELECT call, release, round(noise_scale::numeric, 6) AS noise_scale, sampling ->> 'amplified' AS amplified,
       round((sampling ->> 'base_epsilon')::numeric, 6) AS base_epsilon, ci95
FROM dp_agg.preview('SELECT dp_count(i, 1) FROM p_t TABLESAMPLE BERNOULLI (20)');

-- preview ran and charged nothing
SELECT epsilon_spent = :spent_before AS nothing_charged,
       (SELECT count(*) FROM dp_agg.ledger) = :charges_before AS no_ledger_entry
FROM dp_agg.my_budget;

-- Price parity: executing the statement charges what preview said, with
-- the same detail (noise scales and intervals)
CREATE TEMP TABLE pv AS
SELECT * FROM dp_agg.preview('SELECT g, dp_count(*), dp_sum(f, -1, 40, 0.25), dp_avg(n, 0, 100, 2) FROM p_t GROUP BY g');
SELECT g, dp_count(*) IS NOT NULL AS a, dp_sum(f, -1, 40, 0.25) IS NOT NULL AS b,
       dp_avg(n, 0, 100, 2) IS NOT NULL AS c FROM p_t GROUP BY g ORDER BY g;
SELECT l.epsilon = (SELECT DISTINCT statement_epsilon FROM pv) AS same_epsilon,
       l.delta = (SELECT DISTINCT statement_delta FROM pv) AS same_delta,
       (SELECT bool_and(pv.noise_scale = (r ->> 'noise_scale')::float8 AND pv.ci95 = (r ->> 'ci95')::float8)
        FROM jsonb_array_elements(l.detail) WITH ORDINALITY c(call, ord),
             jsonb_array_elements(c.call -> 'releases') r, pv
        WHERE pv.call = c.ord AND pv.release = r ->> 'release') AS same_noise,
       (SELECT count(*) FROM pv) AS releases
FROM dp_agg.ledger l WHERE l.id = (SELECT max(id) FROM dp_agg.ledger);

-- Rejection parity: each guard rule rejects the statement in preview with
-- the error execution gives
SELECT q, try(format('SELECT * FROM dp_agg.preview(%L)', q)) = try(q) AS same_error, try(q) AS error
FROM (VALUES ('SELECT dp_count(*) FROM p_t a JOIN p_t b USING (g)'),
             ('SELECT dp_count(*) FROM LATERAL (SELECT * FROM p_t) s'),
             ('SELECT dp_count(*) FROM generate_series(1, 3)'),
             ('SELECT dp_count(*), generate_series(1, 2) FROM p_t'),
             ('SELECT dp_count(*) FROM (VALUES (1)) v(x)'),
             ('SELECT dp_count(*) FROM p_t UNION SELECT 1'),
             ('WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 2) SELECT dp_count(*) FROM p_t'),
             ('SELECT g, dp_count(*) FROM p_t GROUP BY ROLLUP (g)'),
             ('SELECT (SELECT dp_count(*) FROM p_t)'),
             ('SELECT sum(dp_count(*)) OVER () FROM p_t GROUP BY g'),
             ('SELECT dp_count(*) OVER () FROM p_t'),
             ('SELECT dp_count(i, i::float8) FROM p_t'),
             ('SELECT dp_sum(i, 0, (random() * 10)::int, 1) FROM p_t'),
             ('SELECT dp_count(*) FROM (SELECT g, count(*) FROM p_t GROUP BY g) s'),
             ('SELECT dp_count(*) FROM (SELECT * FROM p_t LIMIT 5) s'),
             ('SELECT dp_count(*) FROM p_t TABLESAMPLE BERNOULLI (random())'),
             ('SELECT dp_sum(i, 10, 0, 1) FROM p_t'),
             ('SELECT dp_count(i, -1) FROM p_t'),
             ('SELECT dp_count(i, 1, 2) FROM p_t'),
             ('SELECT dp_sum(f, 0, ''Infinity'', 1) FROM p_t')) v(q);
RESET dp_agg.epsilon;
SELECT try('SELECT * FROM dp_agg.preview(''SELECT dp_count(*) FROM p_t'')') AS no_epsilon;

-- Errors of preview itself
SELECT * FROM dp_agg.preview('SELECT count(*) FROM p_t');
SELECT * FROM dp_agg.preview('UPDATE p_t SET i = 0');
SELECT * FROM dp_agg.preview('SELECT dp_count(i, 1) INTO p_copy FROM p_t');
SELECT * FROM dp_agg.preview('SELECT dp_count(i, 1) FROM p_t; SELECT 1');
SELECT * FROM dp_agg.preview('SELECT dp_count(i, $1) FROM p_t');
-- no user code runs: a function the planner could evaluate is refused
CREATE FUNCTION shout(x int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN RAISE NOTICE 'shout ran'; RETURN x; END $$;
SELECT * FROM dp_agg.preview('SELECT dp_count(i, 1) FROM p_t WHERE i > shout(3)');
-- a volatile procedural function on the rows is refused too, before the
-- planner (which would not evaluate it): dp_agg cannot see whether it
-- reads the table (README, "What the guard accepts"); evaluated on the
-- releases, it is not run by preview either
CREATE FUNCTION whisper(x int) RETURNS int LANGUAGE plpgsql VOLATILE AS $$
BEGIN RAISE NOTICE 'whisper ran'; RETURN x; END $$;
SELECT call, aggregate FROM dp_agg.preview('SELECT dp_count(i, 1) FROM p_t WHERE i > whisper(3)');
SELECT call, aggregate FROM dp_agg.preview('SELECT whisper(dp_count(i, 1)::int) FROM p_t');
-- privileges are checked as execution would
CREATE ROLE regress_dp_viewer;
SET ROLE regress_dp_viewer;
SELECT * FROM dp_agg.preview('SELECT dp_count(i, 1) FROM p_t');
RESET ROLE;
GRANT SELECT ON p_t TO regress_dp_viewer;
SET ROLE regress_dp_viewer;
-- no budget: priced, but nobody pays
SELECT call, statement_epsilon, affordable FROM dp_agg.preview('SELECT dp_count(i, 1) FROM p_t');
RESET ROLE;
SELECT dp_agg.set_budget('regress_dp_viewer', 0.75);
SET ROLE regress_dp_viewer;
SELECT statement_epsilon, affordable FROM dp_agg.preview('SELECT dp_count(i, 0.5) FROM p_t');
SELECT statement_epsilon, affordable FROM dp_agg.preview('SELECT dp_count(i, 1) FROM p_t');
RESET ROLE;
DELETE FROM dp_agg.budget WHERE role = 'regress_dp_viewer'::regrole;
DROP OWNED BY regress_dp_viewer;
DROP ROLE regress_dp_viewer;
