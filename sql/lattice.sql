--
-- lattice: a floating-point release is an exact multiple of its grid.
-- Values are clamped, rounded to a power-of-two grid chosen from the
-- bounds and the noise scale, summed exactly as integers, and the noise is
-- added in the same units (README, "Exact arithmetic").  So for inputs 0
-- and 1 every release divided by its grid is an integer, whatever the
-- noise; the grid is recorded in the ledger.  A numeric release is then
-- rounded to the precision of its noise (README, "Aggregates"): it is an
-- exact multiple of 10^e, e = floor(log10(ci95)) - 1, ci95 in the ledger.
--
SET dp_agg.group_keys = 'public';	-- keys of test data; private selection: selection.sql
CREATE TABLE lat (g int, d float8, r real, n numeric);
INSERT INTO lat SELECT k % 200, k % 2, k % 2, k % 2 FROM generate_series(1, 2000) k;

-- release per group, then check each against the grid recorded for the
-- statement (200 releases per aggregate per statement).  A double release
-- divided by a power of two is exact in double precision; a numeric one is
-- multiplied by the exact numeric power 2^-k.
CREATE FUNCTION lattice_check(q text) RETURNS TABLE (statement text, releases bigint, on_grid bigint)
LANGUAGE plpgsql AS $$
DECLARE
    k int;
    e int;
BEGIN
    CREATE TEMP TABLE rel (g int, v_float float8, v_numeric numeric);
    EXECUTE format('INSERT INTO rel SELECT * FROM (%s) s', q);
    SELECT round(ln((l.detail -> 0 -> 'releases' -> 0 ->> 'grid')::float8) / ln(2)),
           floor(log((l.detail -> 0 -> 'releases' -> 0 ->> 'ci95')::numeric)) - 1 INTO k, e
    FROM dp_agg.ledger l ORDER BY l.id DESC LIMIT 1;
    RETURN QUERY
    SELECT q, count(*),
           count(*) FILTER (WHERE CASE WHEN rel.v_numeric IS NULL
                                       THEN rel.v_float / 2::float8 ^ k = trunc(rel.v_float / 2::float8 ^ k)
                                       ELSE mod(rel.v_numeric, 10::numeric ^ e) = 0 END)
    FROM rel;
    DROP TABLE rel;
END $$;

SELECT * FROM lattice_check('SELECT g, dp_sum(d, 0, 1, 0.5), NULL::numeric FROM lat GROUP BY g');
SELECT * FROM lattice_check('SELECT g, dp_sum(r, 0, 1, 1), NULL::numeric FROM lat GROUP BY g');
SELECT * FROM lattice_check('SELECT g, NULL::float8, dp_sum(n, 0, 1, 2) FROM lat GROUP BY g');
SELECT * FROM lattice_check('SELECT g, dp_sum(d, 0, 1, 1, 1e-6), NULL::numeric FROM lat GROUP BY g');
SELECT * FROM lattice_check('SELECT g, NULL::float8, dp_sum(n, 0, 1, 0.1, 1e-9) FROM lat GROUP BY g');
SELECT * FROM lattice_check('SELECT g, dp_sum(d, -3, 7, 0.7), NULL::numeric FROM lat GROUP BY g');

-- the grid is a power of two far below the noise scale
SELECT (r ->> 'grid')::float8 = 2 ^ round(ln((r ->> 'grid')::float8) / ln(2)) AS power_of_two,
       (r ->> 'noise_scale')::float8 / (r ->> 'grid')::float8 > 2 ^ 30 AS fine
FROM dp_agg.ledger l, jsonb_array_elements(l.detail -> 0 -> 'releases') r
WHERE l.id = (SELECT max(id) FROM dp_agg.ledger);

-- numeric rows are rounded to the grid in place, without numeric arithmetic
-- (numeric_units.c), whenever 128-bit integers suffice; that rounding must
-- be round(v * 2^-k), half away from zero, as numeric_round does.  Values
-- of every magnitude and scale, short and long on-disk formats (weights
-- beyond +-63 or scales beyond 63 force the long one), values stored in a
-- table (1-byte headers) and constants, exact ties of the grid.
SELECT setseed(0.42);
CREATE TABLE nu (v numeric, k int);
INSERT INTO nu
SELECT round(((random() - 0.5) * 10::numeric ^ e)::numeric, s), k
FROM generate_series(-30, 30, 3) e, generate_series(0, 40, 4) s, generate_series(-80, 20, 10) k;
-- ties: (m + 1/2) 2^k, positive and negative
INSERT INTO nu
SELECT sign * (m + 0.5) * 2::numeric ^ k, k
FROM generate_series(-60, 10, 7) k, generate_series(0, 5) m, (VALUES (1), (-1)) sg(sign);
-- long format, zero, huge (saturated) and tiny values
INSERT INTO nu VALUES
  (round(1.5, 70), 0), (round(-2.5, 70), 0), (1e100, -10), (-1e100, 0), (1e-100, -300),
  (123456789.123456789, -40), (0, 5), (0.000, -5), (-0.0, 0), (4611686018427387904, 0),
  (4611686018427387905, 0), (-4611686018427387905, 0), (9e18, -3);
SELECT count(*) AS values,
       count(*) FILTER (WHERE u IS NOT NULL) > count(*) * 0.8 AS mostly_in_place,
       count(*) FILTER (WHERE u <> expected) AS wrong
FROM (SELECT dp_agg.numeric_units(v, k) AS u,
             greatest(least(round(v * pow2), 2::numeric ^ 62), -(2::numeric ^ 62)) AS expected
      FROM (SELECT v, k, -- 2^-k exactly (numeric ^ is exact for positive integer powers only)
                   CASE WHEN k <= 0 THEN 2::numeric ^ (-k) ELSE 5::numeric ^ k * ('1e-' || k)::numeric END AS pow2
            FROM nu) n) s;
-- the same for constants (4-byte headers), and where it declines
SELECT dp_agg.numeric_units(2.5, 0) AS two_and_a_half, dp_agg.numeric_units(-2.5, 0) AS minus,
       dp_agg.numeric_units(0.375, -2) AS three_eighths_in_quarters,
       dp_agg.numeric_units(1e-100, -300) AS tiny,
       dp_agg.numeric_units(1e60, 0) IS NULL AS declines_big,
       dp_agg.numeric_units('NaN', 0) IS NULL AS declines_nan,
       dp_agg.numeric_units('Infinity', 0) IS NULL AS declines_infinity;
SELECT dp_agg.numeric_units(1, 5000);
-- and through the aggregate: clamped, summed, released on the grid
SELECT * FROM lattice_check('SELECT g, NULL::float8, dp_sum(v, -1000, 1000, 2) FROM (SELECT k % 5 AS g, v FROM nu) s GROUP BY g');
DROP TABLE nu;
