--
-- budget_row: the charger and dp_agg.preview decode a row of dp_agg.budget
-- the same way, and refuse a malformed one (a Renyi DP curve of the wrong
-- shape, or with a NULL, NaN or negative order) instead of reading zeros,
-- which would admit charges the budget cannot pay.  Nothing is charged or
-- released while the row is malformed.
--
CREATE TABLE br_t AS SELECT k AS i FROM generate_series(1, 100) k;
CREATE ROLE regress_dp_br;
GRANT SELECT ON br_t TO regress_dp_br;
SELECT dp_agg.set_budget('regress_dp_br', 4, 1e-6, 'rdp');
CREATE FUNCTION pg_temp.state() RETURNS text LANGUAGE sql AS $$
  SELECT b.epsilon_spent || '|' || count(l.id)
  FROM dp_agg.budget b LEFT JOIN dp_agg.ledger l ON l.role = b.role AND l.kind = 'charge'
  WHERE b.role = 'regress_dp_br'::regrole GROUP BY b.epsilon_spent $$;
CREATE FUNCTION pg_temp.curve(n int, k int, v float8) RETURNS float8[] LANGUAGE sql AS $$
  SELECT array_agg(CASE WHEN j = k THEN v ELSE 0 END) FROM generate_series(1, n) j $$;
CREATE FUNCTION pg_temp.orders() RETURNS int LANGUAGE sql AS
  'SELECT cardinality(dp_agg.rdp_orders())';

-- a well-formed curve (NULL: nothing spent since the last reset) is read
SET ROLE regress_dp_br;
SELECT DISTINCT affordable FROM dp_agg.preview('SELECT dp_count(i, 0.5) FROM br_t');
SELECT dp_count(i, 0.5) IS NOT NULL AS released FROM br_t;
RESET ROLE;
SELECT pg_temp.state() AS after_release;

-- each malformed curve: preview and the charge fail, nothing is charged
CREATE TEMP TABLE saved AS
  SELECT rdp FROM dp_agg.budget WHERE role = 'regress_dp_br'::regrole;
CREATE TEMP TABLE bad (name text, rdp float8[]);
INSERT INTO bad VALUES
  ('too short', pg_temp.curve(pg_temp.orders() - 1, 0, 0)),
  ('too long', pg_temp.curve(pg_temp.orders() + 1, 0, 0)),
  ('empty', '{}'),
  ('two-dimensional', ARRAY[pg_temp.curve(pg_temp.orders(), 0, 0)]),
  ('a NULL order', pg_temp.curve(pg_temp.orders(), 3, NULL)),
  ('a NaN order', pg_temp.curve(pg_temp.orders(), 3, 'NaN')),
  ('a negative order', pg_temp.curve(pg_temp.orders(), 3, -1));
-- one case: written under the constraint?
CREATE FUNCTION pg_temp.refused(case_name text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  UPDATE dp_agg.budget SET rdp = (SELECT rdp FROM bad WHERE name = case_name)
  WHERE role = 'regress_dp_br'::regrole;
  RAISE EXCEPTION 'written';
EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
-- dp_agg.budget's check constraint refuses every one of them
SELECT name, pg_temp.refused(name) AS refused FROM bad ORDER BY name;
-- since 0.4 the constraint is one C function, dp_agg_internal.rdp_curve_valid:
-- it agrees with the SQL expression it replaced on every case above and on
-- the edges that expression allowed (-0, infinity, another lower bound)
SELECT name, dp_agg_internal.rdp_curve_valid(rdp) AS valid,
       dp_agg_internal.rdp_curve_valid(rdp) IS NOT DISTINCT FROM
         (array_ndims(rdp) = 1 AND cardinality(rdp) = pg_temp.orders()
          AND array_position(rdp, NULL) IS NULL AND 0 <= ALL (rdp)
          AND 'NaN'::float8 <> ALL (rdp)) AS agrees
FROM (SELECT name, rdp FROM bad
      UNION ALL VALUES
        ('zeros', pg_temp.curve(pg_temp.orders(), 0, 0)),
        ('a -0 order', pg_temp.curve(pg_temp.orders(), 3, '-0')),
        ('an infinite order', pg_temp.curve(pg_temp.orders(), 3, 'Infinity')),
        ('a -infinite order', pg_temp.curve(pg_temp.orders(), 3, '-Infinity')),
        ('lower bound 0', array_fill(1::float8, ARRAY[pg_temp.orders()], ARRAY[0]))) c
ORDER BY name;
-- the decoder refuses them too, should one get in another way (a restore
-- of data without the constraint): without it for the rest of this test
CREATE TEMP TABLE saved_check AS
  SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint
  WHERE conrelid = 'dp_agg.budget'::regclass AND conname = 'budget_rdp_shape';
ALTER TABLE dp_agg.budget DROP CONSTRAINT budget_rdp_shape;
-- preview, then the charge, as the role
CREATE FUNCTION pg_temp.attempt() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  msg text;
  detail text;
BEGIN
  BEGIN
    PERFORM * FROM dp_agg.preview('SELECT dp_count(i, 0.5) FROM br_t');
    RETURN NEXT 'preview: accepted';
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
    RETURN NEXT 'preview: ' || msg || ': ' || detail;
  END;
  BEGIN
    PERFORM dp_count(i, 0.5) FROM br_t;
    RETURN NEXT 'charge: accepted';
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
    RETURN NEXT 'charge: ' || msg || ': ' || detail;
  END;
END $$;
-- one case: write the bad curve (committed, so the charger sees it), try
CREATE FUNCTION pg_temp.write_bad(case_name text) RETURNS void LANGUAGE sql AS $$
  UPDATE dp_agg.budget SET rdp = (SELECT rdp FROM bad WHERE name = case_name)
  WHERE role = 'regress_dp_br'::regrole $$;
CREATE FUNCTION pg_temp.restore() RETURNS text LANGUAGE sql AS $$
  UPDATE dp_agg.budget SET rdp = (SELECT rdp FROM saved)
  WHERE role = 'regress_dp_br'::regrole;
  SELECT pg_temp.state() $$;
SELECT pg_temp.write_bad('too short');
SET ROLE regress_dp_br;
SELECT pg_temp.attempt() AS too_short;
RESET ROLE;
SELECT pg_temp.restore() AS state;
SELECT pg_temp.write_bad('too long');
SET ROLE regress_dp_br;
SELECT pg_temp.attempt() AS too_long;
RESET ROLE;
SELECT pg_temp.restore() AS state;
SELECT pg_temp.write_bad('empty');
SET ROLE regress_dp_br;
SELECT pg_temp.attempt() AS empty;
RESET ROLE;
SELECT pg_temp.restore() AS state;
SELECT pg_temp.write_bad('two-dimensional');
SET ROLE regress_dp_br;
SELECT pg_temp.attempt() AS two_dimensional;
RESET ROLE;
SELECT pg_temp.restore() AS state;
SELECT pg_temp.write_bad('a NULL order');
SET ROLE regress_dp_br;
SELECT pg_temp.attempt() AS null_order;
RESET ROLE;
SELECT pg_temp.restore() AS state;
SELECT pg_temp.write_bad('a NaN order');
SET ROLE regress_dp_br;
SELECT pg_temp.attempt() AS nan_order;
RESET ROLE;
SELECT pg_temp.restore() AS state;
SELECT pg_temp.write_bad('a negative order');
SET ROLE regress_dp_br;
SELECT pg_temp.attempt() AS negative_order;
RESET ROLE;
SELECT pg_temp.restore() AS state;

-- the restored row works again
SET ROLE regress_dp_br;
SELECT dp_count(i, 0.5) IS NOT NULL AS released FROM br_t;
RESET ROLE;
SELECT pg_temp.state() AS after_restore;

-- the check constraint back, as the update script made it
DO $$ BEGIN
  EXECUTE 'ALTER TABLE dp_agg.budget ADD CONSTRAINT budget_rdp_shape ' || (SELECT def FROM saved_check);
END $$;
SELECT count(*) AS constraint_back FROM pg_constraint
WHERE conrelid = 'dp_agg.budget'::regclass AND conname = 'budget_rdp_shape';

DROP TABLE br_t;
SELECT dp_agg.reset_budget('regress_dp_br');
DELETE FROM dp_agg.ledger WHERE role = 'regress_dp_br'::regrole;
DELETE FROM dp_agg.budget WHERE role = 'regress_dp_br'::regrole;
DROP ROLE regress_dp_br;
