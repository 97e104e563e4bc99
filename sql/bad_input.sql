--
-- bad_input: every invalid argument gets a clear error (SQLSTATE 22023,
-- naming the argument, with a hint), nothing is charged, nothing released.
--
CREATE TABLE bi (i int, s smallint, b bigint, f float8, r real, n numeric);
INSERT INTO bi VALUES (1, 1, 1, 1, 1, 1), (2, 2, 2, 2, 2, 2);

-- sqlstate and message of a statement, or 'no error'
CREATE FUNCTION try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

SELECT epsilon_spent AS spent_before FROM dp_agg.my_budget \gset

-- epsilon: <= 0, NaN, infinite, NULL
SELECT q, try(q) FROM (VALUES
  ('SELECT dp_count(i, 0) FROM bi'),
  ('SELECT dp_count(i, -1) FROM bi'),
  ('SELECT dp_count(i, ''NaN'') FROM bi'),
  ('SELECT dp_count(i, ''Infinity'') FROM bi'),
  ('SELECT dp_count(i, NULL) FROM bi'),
  ('SELECT dp_sum(i, 0, 10, 0) FROM bi'),
  ('SELECT dp_avg(f, 0, 10, -0.5) FROM bi')) v(q);
SET dp_agg.epsilon = 0;
SET dp_agg.epsilon = -1;
SET dp_agg.epsilon = 'abc';
SET dp_agg.epsilon = 'Infinity';

-- delta: < 0, >= 1, NaN
SELECT q, try(q) FROM (VALUES
  ('SELECT dp_count(i, 1, -1e-9) FROM bi'),
  ('SELECT dp_count(i, 1, 1) FROM bi'),
  ('SELECT dp_count(i, 1, 1.5) FROM bi'),
  ('SELECT dp_count(i, 1, ''NaN'') FROM bi'),
  ('SELECT dp_count(i, 1, NULL) FROM bi'),
  ('SELECT dp_sum(f, 0, 1, 1, 1) FROM bi')) v(q);
SET dp_agg.delta = 1;
SET dp_agg.delta = -0.1;

-- bounds: reversed, NaN, infinite, NULL, and a sensitivity that overflows
-- the type
SELECT q, try(q) FROM (VALUES
  ('SELECT dp_sum(i, 10, 0, 1) FROM bi'),
  ('SELECT dp_avg(n, 2.5, 2.4, 1) FROM bi'),
  ('SELECT dp_sum(f, ''NaN'', 1, 1) FROM bi'),
  ('SELECT dp_sum(f, 0, ''Infinity'', 1) FROM bi'),
  ('SELECT dp_avg(r, ''-Infinity'', 0, 1) FROM bi'),
  ('SELECT dp_sum(n, ''NaN'', 1, 1) FROM bi'),
  ('SELECT dp_sum(n, 0, ''Infinity'', 1) FROM bi'),
  ('SELECT dp_sum(n, 0, 1e400, 1) FROM bi'),
  ('SELECT dp_sum(i, NULL, 1, 1) FROM bi'),
  ('SELECT dp_sum(s, (-32768)::smallint, 0::smallint, 1) FROM bi'),
  ('SELECT dp_sum(i, -2147483648, 0, 1) FROM bi'),
  ('SELECT dp_sum(b, -9223372036854775808, 0, 1) FROM bi')) v(q);

-- the error in full: message, detail and hint
SELECT dp_sum(i, 10, 0, 1) FROM bi;
SELECT dp_count(i, -1) FROM bi;
SELECT dp_count(i, 1, 2) FROM bi;

-- a DP aggregate cannot be a window function
SELECT dp_count(i, 1) OVER () FROM bi;
SELECT dp_sum(i, 0, 10, 1) OVER (PARTITION BY i) FROM bi;

-- an epsilon that is too small for the sampler's range
SELECT dp_count(i, 1e-30) FROM bi;

-- none of the above charged anything
SELECT epsilon_spent = :spent_before AS nothing_charged FROM dp_agg.my_budget;

-- the extreme bigint bounds are fine for an average: its sensitivity is
-- (upper - lower)/2, computed without overflow
SELECT try('SELECT dp_avg(b, -9223372036854775808, 9223372036854775807, 1) FROM bi');
