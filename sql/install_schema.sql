--
-- install_schema: the install and update scripts run as a superuser and
-- resolve no name in the schema CREATE EXTENSION installs into.  A role
-- that may create objects there (public, in a database upgraded from
-- PostgreSQL 14 or older, or a schema named by CREATE EXTENSION ... SCHEMA)
-- defines functions and operators that are exact matches where
-- pg_catalog's need a cast: unnest(text[]), ||(name, name) and
-- >=(float8, integer).  None of them runs, neither during CREATE EXTENSION
-- nor during ALTER EXTENSION UPDATE, nor later through a CHECK constraint
-- the scripts made (set_budget writes dp_agg.budget).
--
SELECT current_database() AS regress_db \gset
CREATE DATABASE regress_dp_install;
\c regress_dp_install
CREATE ROLE regress_dp_evil;
CREATE SCHEMA writable AUTHORIZATION regress_dp_evil;
CREATE TABLE public.calls (what text);
GRANT INSERT ON public.calls TO regress_dp_evil;
SET ROLE regress_dp_evil;
CREATE FUNCTION writable.unnest(text[]) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.calls VALUES ('unnest');
    RETURN QUERY SELECT pg_catalog.unnest($1);
END $$;
CREATE FUNCTION writable.cat(name, name) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.calls VALUES ('||');
    RETURN $1::text OPERATOR(pg_catalog.||) $2::text;
END $$;
CREATE OPERATOR writable.|| (LEFTARG = name, RIGHTARG = name, FUNCTION = writable.cat);
CREATE FUNCTION writable.ge(float8, integer) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.calls VALUES ('>=');
    RETURN $1 OPERATOR(pg_catalog.>=) $2::float8;
END $$;
CREATE OPERATOR writable.>= (LEFTARG = float8, RIGHTARG = integer, FUNCTION = writable.ge);
RESET ROLE;
SET search_path = public, writable;
CREATE EXTENSION dp_agg SCHEMA writable VERSION '0.3';
ALTER EXTENSION dp_agg UPDATE;
-- the session's search_path is as it was
SHOW search_path;
RESET search_path;
SELECT extversion FROM pg_extension WHERE extname = 'dp_agg';
SELECT dp_agg.set_budget('regress_dp_evil', 1);
SELECT epsilon_limit FROM dp_agg.budget WHERE role = 'regress_dp_evil'::regrole;
SELECT what, count(*) AS calls FROM public.calls GROUP BY what ORDER BY what;
SELECT count(*) AS calls_made FROM public.calls;
\c :regress_db
DROP DATABASE regress_dp_install;
DROP ROLE regress_dp_evil;
