--
-- charger: the charger's own session (README, "Charging").  A charge must
-- be durable before the statement that paid it releases anything.  The
-- charger commits each batch without waiting for the flush (group commit:
-- synchronous_commit off in its own session, whatever the database's
-- default), read-write, in read committed; the statement's backend flushes
-- the WAL up to the charger's commit before it reads a row.  A trigger on
-- dp_agg.ledger runs inside the charger's transaction and reads its
-- settings and the WAL position of its insert, after the database's
-- defaults were set against each of them; once the statement has returned,
-- the WAL must be flushed beyond that position (the charger's commit record
-- follows it).  Without the backend's flush the check can still pass if
-- the WAL writer happened to flush first; it never fails with it.
--
SELECT dp_agg.set_budget(current_user::regrole, 1e15, 0.5, 'basic');
CREATE TABLE ch_t (i int);
INSERT INTO ch_t SELECT generate_series(1, 10);
CREATE TABLE ch_probe (name text, setting text);
CREATE TABLE ch_probe_lsn (lsn pg_lsn);
CREATE FUNCTION ch_record() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.ch_probe
    SELECT s.name, s.setting FROM pg_catalog.pg_settings s
    WHERE s.name IN ('synchronous_commit', 'transaction_read_only', 'transaction_isolation');
    INSERT INTO public.ch_probe_lsn VALUES (pg_catalog.pg_current_wal_insert_lsn());
    RETURN NULL;
END $$;
CREATE TRIGGER ch_probe AFTER INSERT ON dp_agg.ledger FOR EACH ROW EXECUTE FUNCTION ch_record();

-- the database's defaults against durability, for sessions started from
-- now on; the charger of this database is stopped so that the next charge
-- starts one that reads them
CREATE FUNCTION ch_database_set(setting text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('ALTER DATABASE %I %s', current_database(), setting);
END $$;
SELECT ch_database_set('SET synchronous_commit = off');
SELECT ch_database_set('SET default_transaction_isolation = serializable');
CREATE FUNCTION ch_stop_charger() RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_terminate_backend(pid) FROM pg_stat_activity
    WHERE backend_type = 'dp_agg charger' AND datname = current_database();
    FOR i IN 1 .. 600 LOOP
        IF NOT EXISTS (SELECT FROM pg_stat_activity
                       WHERE backend_type = 'dp_agg charger' AND datname = current_database()) THEN
            RETURN true;
        END IF;
        PERFORM pg_sleep(0.05);
        PERFORM pg_stat_clear_snapshot();
    END LOOP;
    RETURN false;
END $$;
SELECT ch_stop_charger() AS charger_stopped;
SELECT dp_count(i, 1) IS NOT NULL AS released FROM ch_t;
-- the charge was flushed before anything was released
SELECT count(*) = 1 AS one_charge, pg_current_wal_flush_lsn() > max(lsn) AS charge_flushed
FROM ch_probe_lsn;
-- a session of this database would have these settings...
\c
SHOW synchronous_commit;
SHOW default_transaction_isolation;
-- ...and the charger's charge was committed without waiting for the flush
-- (the backend waited for it, above), in read committed
SELECT name, setting FROM ch_probe ORDER BY name;

SELECT ch_database_set('RESET synchronous_commit');
SELECT ch_database_set('RESET default_transaction_isolation');
SELECT ch_stop_charger() AS charger_stopped;
DROP TRIGGER ch_probe ON dp_agg.ledger;
DROP FUNCTION ch_record();
DROP FUNCTION ch_database_set(text);
DROP FUNCTION ch_stop_charger();
DROP TABLE ch_probe, ch_probe_lsn, ch_t;
