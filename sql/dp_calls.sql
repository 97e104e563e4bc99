--
-- dp_calls: a statement is priced for the DP aggregate calls it evaluates
-- (dp_calls.c, the one definition of the calls of a query level and of a
-- plan node).  The ledger shows the calls priced; the calls evaluated show
-- in the values: PostgreSQL evaluates equal calls of a level once (one
-- aggregate state, aggno), so a call repeated in SELECT, HAVING and ORDER
-- BY gives one value, priced once; equal calls with a volatile argument
-- are evaluated separately, so each is priced.
--
-- Evaluated twice, two calls at epsilon 0.001 (sensitivity 1) would agree
-- with probability sum_k p(k)^2 = (1 - a) / (1 + a), a = exp(-0.001), about
-- 5e-4: "equal" below detects a second evaluation with probability
-- 1 - 5e-4, and cannot fail when there is one.  Four evaluations all
-- agree with probability sum_k p(k)^4 < 1e-9: "all equal" is false with
-- a false-failure probability below 1e-9.
--
SET dp_agg.group_keys = 'public';
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.5, 'basic');
CREATE TABLE dc_t (i int, g int);
INSERT INTO dc_t SELECT k, k % 3 FROM generate_series(1, 300) k;
CREATE VIEW dc_last AS
SELECT jsonb_array_length(detail) AS calls_priced, epsilon
FROM dp_agg.ledger WHERE id = (SELECT max(id) FROM dp_agg.ledger);

-- one call in SELECT (twice), HAVING and ORDER BY: one value, one price
SELECT dp_count(i, 0.001) = dp_count(i, 0.001) AS equal
FROM dc_t HAVING dp_count(i, 0.001) > -1e9 ORDER BY dp_count(i, 0.001);
SELECT * FROM dc_last;
-- FILTER makes another call
SELECT dp_count(i, 0.001) IS NOT NULL AS a, dp_count(i, 0.001) FILTER (WHERE i > 10) IS NOT NULL AS b
FROM dc_t;
SELECT * FROM dc_last;
-- the calls of a sub-query level, read above it
SELECT c = d AS equal FROM (SELECT dp_count(i, 0.001) AS c, dp_count(i, 0.001) AS d FROM dc_t) s;
SELECT * FROM dc_last;
-- per group, in SELECT and HAVING
SELECT g, dp_sum(i, 0, 300, 0.001) = dp_sum(i, 0, 300, 0.001) AS equal
FROM dc_t GROUP BY g HAVING dp_sum(i, 0, 300, 0.001) > -1e12 ORDER BY g;
SELECT * FROM dc_last;
-- a volatile argument: four aggregate states, four prices
SELECT NOT (a = b AND b = c AND c = d) AS not_all_equal FROM (
  SELECT dp_count(CASE WHEN random() >= 0 THEN i END, 0.001) AS a,
         dp_count(CASE WHEN random() >= 0 THEN i END, 0.001) AS b,
         dp_count(CASE WHEN random() >= 0 THEN i END, 0.001) AS c,
         dp_count(CASE WHEN random() >= 0 THEN i END, 0.001) AS d FROM dc_t) s;
SELECT * FROM dc_last;

-- privacy units: the rewrite bounds each distinct call once
CREATE TABLE dc_u (u int, i int);
INSERT INTO dc_u SELECT k % 30, k FROM generate_series(1, 300) k;
SELECT dp_agg.set_privacy_unit('dc_u', 'u', 1);
SELECT dp_count(i, 0.001) = dp_count(i, 0.001) AS equal
FROM dc_u HAVING dp_count(i, 0.001) > -1e9;
SELECT * FROM dc_last;

SELECT dp_agg.clear_privacy_unit('dc_u');
DROP VIEW dc_last;
DROP TABLE dc_t, dc_u;
