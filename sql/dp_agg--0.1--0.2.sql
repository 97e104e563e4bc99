/* dp_agg: update from 0.1 to 0.2 (ALTER EXTENSION dp_agg UPDATE) */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION dp_agg UPDATE TO '0.2'" to load this file. \quit

-- Version 0.2 is installed as 0.1 plus this script (there is no
-- dp_agg--0.2.sql): a new install and an updated one run the same SQL.
-- Every later SQL change goes into a new dp_agg--0.N--0.M.sql the same way.


--------------------------------------------------------------------------
-- The stored Renyi DP curves have the shape the charger composes on: one
-- value per order of dp_agg.rdp_orders(), none missing, none negative (a
-- Renyi divergence is never negative), none NaN (0 <= NaN holds in SQL, so
-- NaN needs its own test).  The charger counted a missing value
-- as 0, which would have understated the spent budget.  Adding the checks
-- validates the rows already there: an update over a damaged curve fails
-- and changes nothing.
--------------------------------------------------------------------------

ALTER TABLE dp_agg.budget ADD CONSTRAINT budget_rdp_shape CHECK (
    rdp IS NULL OR (
        pg_catalog.array_ndims(rdp) = 1
        AND pg_catalog.cardinality(rdp) = pg_catalog.cardinality(dp_agg.rdp_orders())
        AND pg_catalog.array_position(rdp, NULL) IS NULL
        AND 0 <= ALL (rdp)
        AND 'NaN'::float8 <> ALL (rdp)));

ALTER TABLE dp_agg.ledger ADD CONSTRAINT ledger_rdp_shape CHECK (
    rdp IS NULL OR (
        pg_catalog.array_ndims(rdp) = 1
        AND pg_catalog.cardinality(rdp) = pg_catalog.cardinality(dp_agg.rdp_orders())
        AND pg_catalog.array_position(rdp, NULL) IS NULL
        AND 0 <= ALL (rdp)
        AND 'NaN'::float8 <> ALL (rdp)));
