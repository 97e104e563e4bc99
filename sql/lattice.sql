--
-- lattice: a floating-point or numeric release is an exact multiple of its
-- grid.  Values are clamped, rounded to a power-of-two grid chosen from the
-- bounds and the noise scale, summed exactly as integers, and the noise is
-- added in the same units (README, "Exact arithmetic").  So for inputs 0
-- and 1 every release divided by its grid is an integer, whatever the
-- noise; the grid is recorded in the ledger.
--
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
BEGIN
    CREATE TEMP TABLE rel (g int, v_float float8, v_numeric numeric);
    EXECUTE format('INSERT INTO rel SELECT * FROM (%s) s', q);
    SELECT round(ln((l.detail -> 0 -> 'releases' -> 0 ->> 'grid')::float8) / ln(2)) INTO k
    FROM dp_agg.ledger l ORDER BY l.id DESC LIMIT 1;
    RETURN QUERY
    SELECT q, count(*),
           count(*) FILTER (WHERE CASE WHEN rel.v_numeric IS NULL
                                       THEN rel.v_float / 2::float8 ^ k = trunc(rel.v_float / 2::float8 ^ k)
                                       ELSE mod(rel.v_numeric * 2::numeric ^ (-k), 1) = 0 END)
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
