--
-- budget_policy: shared budgets (groups, protected relations), windows,
-- lifetime limits, caps, and the views that show them.
--
-- Every release below is checked as released (IS NOT NULL) or refused;
-- no noisy value is printed.  Amounts are binary fractions where sums
-- are compared exactly.
\set SHOW_CONTEXT never
SET client_min_messages = notice;

CREATE ROLE regress_bp_alice;
CREATE ROLE regress_bp_bob;
CREATE ROLE regress_bp_carol NOINHERIT;
CREATE ROLE regress_bp_team;
CREATE ROLE regress_bp_dept;
CREATE ROLE regress_bp_dba;
GRANT regress_bp_team TO regress_bp_alice, regress_bp_bob, regress_bp_carol;
GRANT regress_bp_dept TO regress_bp_team;
-- alice is also a member of dept directly: one charge, not two
GRANT regress_bp_dept TO regress_bp_alice;
CREATE TABLE bp_visits (id int, age int);
INSERT INTO bp_visits SELECT g, 20 + g % 60 FROM generate_series(1, 500) g;
CREATE TABLE bp_other (id int);
INSERT INTO bp_other SELECT g FROM generate_series(1, 100) g;
GRANT SELECT ON bp_visits, bp_other TO regress_bp_alice, regress_bp_bob, regress_bp_carol;

-- what the charger does for each role: dp_agg.role_charged
SELECT r.rolname, g.rolname AS budget_role,
       dp_agg.role_charged(r.oid::regrole, g.oid::regrole, false) AS own,
       dp_agg.role_charged(r.oid::regrole, g.oid::regrole, true) AS shared
FROM pg_roles r, pg_roles g
WHERE r.rolname IN ('regress_bp_alice', 'regress_bp_carol', 'regress_bp_team')
  AND g.rolname IN ('regress_bp_alice', 'regress_bp_team', 'regress_bp_dept')
ORDER BY 1, 2;
-- a superuser is a member of no group here (pg_has_role says it is of all)
SELECT dp_agg.role_charged(current_user::regrole, 'regress_bp_team', true) AS superuser_charged,
       pg_has_role('regress_bp_team', 'MEMBER') AS pg_has_role;

--
-- Group budgets
--
SELECT dp_agg.set_budget('regress_bp_alice', 8);
SELECT dp_agg.set_group_budget('regress_bp_team', 1);
SELECT dp_agg.set_group_budget('regress_bp_dept', 1.5);
SELECT role, members, epsilon_limit FROM dp_agg.budget WHERE role::text LIKE 'regress_bp_%' ORDER BY id;
-- one budget per role: set_budget does not turn a group's budget into the role's own
SELECT dp_agg.set_budget('regress_bp_team', 2);
-- a role's own budget can become a group's, with what it spent
SELECT dp_agg.set_budget('regress_bp_dba', 1);
SELECT dp_agg.set_group_budget('regress_bp_dba', 1);
SELECT dp_agg.drop_budget('regress_bp_dba'), dp_agg.drop_budget('regress_bp_dba');
-- bad input
SELECT dp_agg.set_group_budget(NULL, 1);
SELECT dp_agg.set_group_budget('regress_bp_team', -1);
SELECT dp_agg.set_group_budget('regress_bp_team', 1, 1);
SELECT dp_agg.set_group_budget('regress_bp_team', 1, 0, 'fancy');

-- alice pays her own budget, the team's and the department's (once, though
-- she is a member of it twice); bob has no budget of his own: the team's
-- and the department's pay; carol's membership is NOINHERIT: it counts
SET ROLE regress_bp_alice;
SELECT dp_count(id, 0.25) IS NOT NULL AS released FROM bp_visits;
SELECT kind, role, epsilon_spent, epsilon_remaining, governed_by FROM dp_agg.my_budget ORDER BY budget;
RESET ROLE;
SET ROLE regress_bp_bob;
SELECT dp_sum(age, 0, 100, 0.25) IS NOT NULL AS released FROM bp_visits;
RESET ROLE;
SET ROLE regress_bp_carol;
SELECT dp_count(id, 0.25) IS NOT NULL AS released FROM bp_visits;
RESET ROLE;
SELECT role, epsilon_spent, lifetime_epsilon_spent FROM dp_agg.budget WHERE role::text LIKE 'regress_bp_%' ORDER BY id;
SELECT l.role, array_length(l.budgets, 1) AS budgets, l.epsilon,
       (SELECT array_agg(b.role ORDER BY b.id) FROM dp_agg.budget b WHERE b.id = ANY (l.budgets)) AS paid_by
FROM dp_agg.ledger l WHERE l.role::text LIKE 'regress_bp_%' ORDER BY l.id;
-- the team has 0.25 left: bob's 0.5 is refused, naming it, and nothing is
-- charged anywhere
SET ROLE regress_bp_bob;
SELECT dp_count(id, 0.5) FROM bp_visits;
RESET ROLE;
SELECT role, epsilon_spent FROM dp_agg.budget WHERE role::text LIKE 'regress_bp_%' ORDER BY id;
-- the department is exhausted first for alice: 1.5 - 0.75 = 0.75 left, the team 0.25
SET ROLE regress_bp_alice;
SELECT dp_count(id, 0.25) IS NOT NULL AS released FROM bp_visits;
SELECT dp_count(id, 0.125) FROM bp_visits;
SELECT kind, role, epsilon_spent, epsilon_remaining FROM dp_agg.my_budget ORDER BY budget;
RESET ROLE;

--
-- Relation budgets: on protected relations, for every role
--
SELECT dp_agg.set_relation_budget('bp_visits', 0.5);
SELECT dp_agg.protect('bp_visits');
SELECT dp_agg.set_relation_budget('bp_visits', 0.5);
SELECT dp_agg.set_relation_budget(NULL, 1);
SELECT dp_agg.reset_budget('regress_bp_team');
SELECT dp_agg.reset_budget('regress_bp_dept');
SELECT dp_agg.set_budget('regress_bp_alice', 8);
-- carol's statement pays the team, the department and the relation
SET ROLE regress_bp_carol;
SELECT dp_count(id, 0.25) IS NOT NULL AS released FROM bp_visits;
SELECT kind, coalesce(role::text, relation::text) AS subject, epsilon_spent, epsilon_remaining
FROM dp_agg.my_budget ORDER BY budget;
-- the relation has 0.25 left, the team 0.75: refused by the relation
SELECT dp_count(id, 0.5) FROM bp_visits;
-- a statement that does not read it does not pay it
SELECT dp_count(id, 0.5) IS NOT NULL AS released FROM bp_other;
RESET ROLE;
SELECT coalesce(role::text, relation::text) AS subject, epsilon_spent FROM dp_agg.budget
WHERE role::text LIKE 'regress_bp_%' OR relation = 'bp_visits'::regclass ORDER BY id;
SELECT l.role, l.relations, l.epsilon FROM dp_agg.ledger l
WHERE l.role = 'regress_bp_carol'::regrole ORDER BY l.id;
-- a relation's budget alone does not let a role release
CREATE ROLE regress_bp_nobody;
GRANT SELECT ON bp_visits TO regress_bp_nobody;
SET ROLE regress_bp_nobody;
SELECT dp_count(id, 0.125) FROM bp_visits;
RESET ROLE;
-- partitions: a budget on the partitioned table pays for reading a partition
CREATE TABLE bp_parted (id int, k int) PARTITION BY LIST (k);
CREATE TABLE bp_parted_1 PARTITION OF bp_parted FOR VALUES IN (1);
INSERT INTO bp_parted SELECT g, 1 FROM generate_series(1, 100) g;
GRANT SELECT ON bp_parted, bp_parted_1 TO regress_bp_alice;
SELECT dp_agg.protect('bp_parted');
SELECT dp_agg.set_relation_budget('bp_parted', 1);
SET ROLE regress_bp_alice;
SELECT dp_count(id, 0.25) IS NOT NULL AS released FROM bp_parted_1;
SELECT dp_count(id, 0.25) IS NOT NULL AS released FROM bp_parted;
RESET ROLE;
SELECT relation, epsilon_spent FROM dp_agg.budget WHERE relation = 'bp_parted'::regclass;
SELECT relations FROM dp_agg.ledger WHERE role = 'regress_bp_alice'::regrole ORDER BY id DESC LIMIT 2;
-- a relation dropped takes its budget with it
DROP TABLE bp_parted;
SELECT count(*) AS budgets_left FROM dp_agg.budget WHERE relation IS NOT NULL AND relation::text LIKE 'bp_parted%';
-- reset and drop of a relation's budget
SELECT dp_agg.reset_relation_budget('bp_visits');
SELECT role, kind, budgets = ARRAY[(SELECT id FROM dp_agg.budget WHERE relation = 'bp_visits'::regclass)] AS this_budget,
       detail ->> 'relation' AS relation
FROM dp_agg.ledger WHERE kind = 'reset' ORDER BY id DESC LIMIT 1;
SELECT dp_agg.drop_relation_budget('bp_visits'), dp_agg.drop_relation_budget('bp_visits');
SELECT dp_agg.reset_relation_budget('bp_visits');

--
-- Each budget its own accounting: the team's Renyi certificate admits
-- Gaussian releases that basic composition would not
--
SELECT dp_agg.set_group_budget('regress_bp_team', 1, 1e-5, 'rdp');
SELECT dp_agg.reset_budget('regress_bp_team');
SELECT dp_agg.set_group_budget('regress_bp_dept', 100, 0.1);
SET ROLE regress_bp_bob;
DO $$
BEGIN
    FOR i IN 1..20 LOOP
        PERFORM dp_count(id, 0.1, 1e-7) FROM bp_visits;
    END LOOP;
END $$;
SELECT kind, role, accounting, delta_spent, epsilon_spent < 1 AS within, governed_by
FROM dp_agg.my_budget WHERE role = 'regress_bp_team'::regrole;
SELECT role, round(epsilon_spent::numeric, 9) AS basic_sum, composed_epsilon < 1 AS composed_within
FROM dp_agg.my_budget_curves WHERE role = 'regress_bp_team'::regrole;
RESET ROLE;
SELECT dp_agg.set_group_budget('regress_bp_team', 100, 0.1);
SELECT dp_agg.reset_budget('regress_bp_team');
SELECT dp_agg.reset_budget('regress_bp_dept');

--
-- Windows
--
SELECT dp_agg.set_budget_window('regress_bp_alice', '-1 day');
SELECT dp_agg.set_budget_window('regress_bp_alice', '0 days');
SELECT dp_agg.set_budget_window('regress_bp_alice', '1 day 2 hours');
SELECT dp_agg.set_budget_window('regress_bp_alice', '1 month 1 day');
SELECT dp_agg.set_budget_window('regress_bp_alice', '7 hours');
SELECT dp_agg.set_budget_window('regress_bp_alice', '0.5 seconds');
SELECT dp_agg.set_budget_window('regress_bp_alice', '1 day', 'Mars/Olympus');
-- an abbreviation means different zones under different settings of
-- timezone_abbreviations (the DBA's session, the charger's): refused
SELECT dp_agg.set_budget_window('regress_bp_alice', '1 day', 'IST');
-- a window that would end beyond the years of timestamps
SELECT dp_agg.set_budget_window('regress_bp_alice', '141111000 months');
SELECT dp_agg.set_budget_window('regress_bp_alice', '2000000000 days');
SELECT dp_agg.set_budget_window('regress_bp_alice', '1 day', NULL);
SELECT dp_agg.set_budget_window('regress_bp_nobody', '1 day');
SELECT dp_agg.set_relation_budget_window('bp_other', '1 day');
-- where windows fall: days at local midnight, weeks from Monday, months,
-- quarters, hours counted from local midnight across a change of the clock
SET TimeZone = 'UTC';
SELECT w, tz, at,
       dp_agg_internal.window_start(w::interval, tz, at::timestamptz) AS start,
       dp_agg_internal.window_end(w::interval, tz, at::timestamptz) AS end
FROM (VALUES ('1 day', 'Europe/Paris', '2026-07-01 21:59:59+00'),
             ('1 day', 'Europe/Paris', '2026-07-01 22:00:00+00'),
             ('1 day', 'Europe/Paris', '2026-03-29 12:00:00+00'),
             ('1 day', 'America/Los_Angeles', '2026-11-01 12:00:00+00'),
             ('1 week', 'UTC', '2026-11-26 12:00:00+00'),
             ('1 month', 'Asia/Tokyo', '2026-02-28 15:00:00+00'),
             ('3 months', 'UTC', '2026-11-26 12:00:00+00'),
             ('1 year', 'UTC', '2026-11-26 12:00:00+00'),
             ('1 hour', 'Europe/Paris', '2026-03-29 00:30:00+00'),
             ('1 hour', 'Europe/Paris', '2026-03-29 01:30:00+00'),
             ('6 hours', 'Europe/Paris', '2026-10-25 00:30:00+00'),
             ('6 hours', 'Europe/Paris', '2026-10-25 22:30:00+00'),
             ('2 seconds', 'UTC', '2026-11-26 23:59:59.5+00')) v(w, tz, at);
RESET TimeZone;
-- every instant falls in its window, and windows never go back, across a
-- year of instants in a zone whose clocks change
SELECT bool_and(s <= at AND at < e) AS holds,
       bool_and(s >= prev_s) AS monotone
FROM (SELECT at, s, e, lag(s, 1, '-infinity') OVER (PARTITION BY w ORDER BY at) AS prev_s
      FROM (SELECT at, dp_agg_internal.window_start(w, 'Europe/Paris', at) AS s,
                   dp_agg_internal.window_end(w, 'Europe/Paris', at) AS e, w
            FROM generate_series('2026-01-01 00:00+00'::timestamptz, '2027-01-01', '17 minutes') at,
                 (VALUES ('1 hour'::interval), ('1 day'), ('1 week'), ('1 month')) v(w)) x) y;

-- alice's budget renews every year, from midnight on 1 January in Paris;
-- what she spent so far counts in this year's window.  (A year, not a
-- day: the checks below compare the window of now() with the one the
-- charger chose a moment before, which fails only if a boundary falls in
-- between; a daily window would make that about 1e-5 per run, a yearly
-- one 1e-7.)
SELECT dp_agg.set_budget_window('regress_bp_alice', '1 year', 'Europe/Paris');
SELECT window_start = dp_agg_internal.window_start('1 year', 'Europe/Paris', now()) AS this_year,
       epsilon_spent
FROM dp_agg.budget WHERE role = 'regress_bp_alice'::regrole;
SET ROLE regress_bp_alice;
SELECT dp_count(id, 0.25) IS NOT NULL AS released FROM bp_other;
SELECT kind, role, epsilon_spent, window_length, window_time_zone,
       window_start = dp_agg_internal.window_start('1 year', 'Europe/Paris', now()) AS this_year,
       window_end = window_start + interval '1 year' AS one_year,
       to_char(window_start AT TIME ZONE 'Europe/Paris', 'MM-DD HH24:MI') AS starts_local
FROM dp_agg.my_budget WHERE kind = 'role';
SELECT windows[1] = dp_agg_internal.window_start('1 year', 'Europe/Paris', at) AS window_of_at
FROM dp_agg.my_ledger ORDER BY id DESC LIMIT 1;
RESET ROLE;
-- as if the year had passed: the window the row holds is last year's.
-- The views show nothing spent in this one; the next charge starts this
-- year's window afresh (its composition too), the lifetime goes on
UPDATE dp_agg.budget SET window_start = window_start - interval '1 year'
WHERE role = 'regress_bp_alice'::regrole;
SET ROLE regress_bp_alice;
SELECT epsilon_spent, lifetime_epsilon_spent FROM dp_agg.my_budget WHERE kind = 'role';
SELECT dp_count(id, 0.125) IS NOT NULL AS released FROM bp_other;
RESET ROLE;
SELECT epsilon_spent, lifetime_epsilon_spent,
       window_start = dp_agg_internal.window_start('1 year', 'Europe/Paris', now()) AS this_year,
       rdp = (SELECT l.rdp FROM dp_agg.ledger l WHERE l.role = b.role AND l.kind = 'charge'
              ORDER BY l.id DESC LIMIT 1) AS composed_afresh
FROM dp_agg.budget b WHERE role = 'regress_bp_alice'::regrole;
-- within its window, the budget is a budget: alice has 7.875 left this year
SET ROLE regress_bp_alice;
SELECT dp_count(id, 4) IS NOT NULL AS released FROM bp_other;
\set VERBOSITY terse
SELECT dp_count(id, 4) FROM bp_other;
\set VERBOSITY default
SELECT epsilon_spent, epsilon_remaining, lifetime_epsilon_spent FROM dp_agg.my_budget WHERE kind = 'role';
RESET ROLE;
-- a window never moves back: as if the charger's clock were ahead of the
-- DBA's transaction (or had gone back after a charge), the row holds next
-- year's window; setting the window again keeps that window and what was
-- spent in it (moved back to this year's, the charger would renew it at
-- its next charge, and what was spent there would be spent again)
UPDATE dp_agg.budget SET window_start = window_start + interval '1 year'
WHERE role = 'regress_bp_alice'::regrole;
SELECT dp_agg.set_budget_window('regress_bp_alice', '1 year', 'Europe/Paris');
SELECT window_start = dp_agg_internal.window_start('1 year', 'Europe/Paris', now() + interval '1 year')
         AS next_year,
       epsilon_spent
FROM dp_agg.budget WHERE role = 'regress_bp_alice'::regrole;
UPDATE dp_agg.budget SET window_start = window_start - interval '1 year'
WHERE role = 'regress_bp_alice'::regrole;
-- a lifetime limit above the windows
SELECT dp_agg.set_lifetime_limit('regress_bp_team', 5);
SELECT dp_agg.set_lifetime_limit('regress_bp_alice', 4);
SELECT dp_agg.set_lifetime_limit('regress_bp_alice', -1);
SELECT dp_agg.set_lifetime_limit('regress_bp_alice', 9, 1);
SELECT dp_agg.set_lifetime_limit('regress_bp_alice', 9);
SELECT lifetime_epsilon_limit, lifetime_delta_limit, lifetime_epsilon_spent
FROM dp_agg.budget WHERE role = 'regress_bp_alice'::regrole;
-- as if she had spent 8.5 over her lifetime (4.125 this year): 1 more
-- would pass the lifetime's 9 but not the year's 8
UPDATE dp_agg.budget SET lifetime_epsilon_spent = 8.5 WHERE role = 'regress_bp_alice'::regrole;
SET ROLE regress_bp_alice;
SELECT dp_count(id, 1) FROM bp_other;
SELECT dp_count(id, 0.5) IS NOT NULL AS released FROM bp_other;
SELECT lifetime_epsilon_spent, lifetime_epsilon_limit FROM dp_agg.my_budget WHERE kind = 'role';
RESET ROLE;
-- removing the window keeps what was spent
SELECT dp_agg.set_budget_window('regress_bp_alice', NULL);
SELECT window_length, window_start, epsilon_spent FROM dp_agg.budget WHERE role = 'regress_bp_alice'::regrole;
SELECT dp_agg.set_lifetime_limit('regress_bp_alice', NULL);
SELECT dp_agg.reset_budget('regress_bp_alice');
SELECT epsilon_spent, lifetime_epsilon_spent FROM dp_agg.budget WHERE role = 'regress_bp_alice'::regrole;

--
-- Caps
--
SELECT dp_agg.set_cap('regress_bp_alice', statement_epsilon => 0);
SELECT dp_agg.set_cap('regress_bp_alice', statement_epsilon => 'NaN');
SELECT dp_agg.set_cap('regress_bp_alice', statement_epsilon => 'Infinity');
SELECT dp_agg.set_cap('regress_bp_alice', statement_delta => 1);
SELECT dp_agg.set_cap('regress_bp_alice', call_delta => -1e-9);
SELECT dp_agg.set_cap('regress_bp_alice', statement_epsilon => 1, call_epsilon => 2);
SELECT dp_agg.set_cap('regress_bp_alice', statement_epsilon => 9);
SELECT dp_agg.set_cap('regress_bp_alice', statement_delta => 1e-6);
SELECT dp_agg.set_cap(NULL, 1);
-- alice: 1 per statement, 0.5 per call; the team (so alice, bob and carol): 0.75 per statement
SELECT dp_agg.set_cap('regress_bp_alice', statement_epsilon => 1, call_epsilon => 0.5);
SELECT dp_agg.set_cap('regress_bp_team', statement_epsilon => 0.75);
SELECT role, statement_epsilon, statement_delta, call_epsilon, call_delta FROM dp_agg.cap ORDER BY role::text;
SET ROLE regress_bp_alice;
SELECT role, statement_epsilon, call_epsilon FROM dp_agg.my_caps ORDER BY role::text;
SELECT epsilon_spent AS before FROM dp_agg.my_budget WHERE kind = 'role' \gset
-- the team's 0.75 is the smaller cap per statement
SELECT dp_count(id, 0.5), dp_sum(id, 0, 100, 0.375) FROM bp_other;
-- her own 0.5 per call, whichever call of the statement exceeds it
SELECT dp_count(id, 0.625) FROM bp_other;
SELECT dp_count(id, 0.625), dp_sum(id, 0, 100, 0.125) FROM bp_other;
SELECT dp_count(id, 0.25) IS NOT NULL AND dp_sum(id, 0, 100, 0.5) IS NOT NULL AS released FROM bp_other;
SELECT epsilon_spent - :before AS charged FROM dp_agg.my_budget WHERE kind = 'role';
RESET ROLE;
SET ROLE regress_bp_bob;
SELECT dp_count(id, 1) FROM bp_other;
RESET ROLE;
-- the private selection of groups is a call too
SELECT dp_agg.set_cap('regress_bp_bob', call_delta => 1e-8);
SET ROLE regress_bp_bob;
SET dp_agg.selection_epsilon = 0.25;
SET dp_agg.selection_delta = 1e-6;
SELECT id % 2 AS k, dp_count(id, 0.25) FROM bp_other GROUP BY 1;
RESET dp_agg.selection_epsilon;
RESET dp_agg.selection_delta;
RESET ROLE;
-- preview says what the charger would: not affordable above a cap
SET ROLE regress_bp_alice;
SELECT DISTINCT statement_epsilon, affordable FROM dp_agg.preview('SELECT dp_count(id, 0.625) FROM bp_other');
SELECT DISTINCT statement_epsilon, affordable FROM dp_agg.preview('SELECT dp_count(id, 0.25) FROM bp_other');
RESET ROLE;
-- all NULL removes the caps
SELECT dp_agg.set_cap('regress_bp_alice');
SELECT dp_agg.set_cap('regress_bp_team');
SELECT dp_agg.set_cap('regress_bp_bob');
SELECT count(*) FROM dp_agg.cap;

--
-- Views and privileges
--
-- my_budget rounds for display, never what is stored
SELECT dp_agg.set_budget('regress_bp_alice', 1);
UPDATE dp_agg.budget SET epsilon_spent = 0.1 + 0.1 + 0.1 WHERE role = 'regress_bp_alice'::regrole;
SELECT epsilon_spent AS stored FROM dp_agg.budget WHERE role = 'regress_bp_alice'::regrole;
SET ROLE regress_bp_alice;
SELECT epsilon_spent, epsilon_remaining FROM dp_agg.my_budget WHERE kind = 'role';
SELECT epsilon_spent, epsilon_remaining FROM dp_agg.my_budget_curves WHERE kind = 'role';
SELECT relations FROM dp_agg.my_ledger WHERE kind = 'charge' ORDER BY id DESC LIMIT 1;
-- the DBA's views are the DBA's
SELECT * FROM dp_agg.budgets;
SELECT * FROM dp_agg.budget_spending;
SELECT * FROM dp_agg.cap;
-- and the functions
SELECT dp_agg.set_group_budget('regress_bp_alice', 100);
SELECT dp_agg.set_cap('regress_bp_alice');
RESET ROLE;
SELECT kind, coalesce(role::text, relation::text) AS subject, epsilon_spent, governed_by, window_length
FROM dp_agg.budgets WHERE role::text LIKE 'regress_bp_%' OR relation::text LIKE 'bp_%' ORDER BY budget;
SELECT kind, budget_role, role, relation, statements, epsilon
FROM dp_agg.budget_spending
WHERE budget_role::text LIKE 'regress_bp_%' AND relation::text LIKE 'bp_%'  -- not the partition dropped
ORDER BY budget, role::text, relation::text;
-- a DBA granted EXECUTE manages policies without any privilege on the tables
GRANT EXECUTE ON FUNCTION dp_agg.set_group_budget(regrole, float8, float8, text),
                          dp_agg.set_budget_window(regrole, interval, text),
                          dp_agg.set_cap(regrole, float8, float8, float8, float8) TO regress_bp_dba;
SET ROLE regress_bp_dba;
SELECT dp_agg.set_group_budget('regress_bp_team', 3);
SELECT dp_agg.set_budget_window('regress_bp_team', '1 week', 'UTC');
SELECT dp_agg.set_cap('regress_bp_team', call_epsilon => 1);
RESET ROLE;
SELECT kind, role, epsilon_limit, window_length, window_time_zone FROM dp_agg.budgets WHERE role = 'regress_bp_team'::regrole;
SELECT role, call_epsilon FROM dp_agg.cap;

-- clean up (superusers may write the catalogs directly)
REVOKE EXECUTE ON FUNCTION dp_agg.set_group_budget(regrole, float8, float8, text),
                           dp_agg.set_budget_window(regrole, interval, text),
                           dp_agg.set_cap(regrole, float8, float8, float8, float8) FROM regress_bp_dba;
DELETE FROM dp_agg.cap;
DELETE FROM dp_agg.ledger WHERE role::text LIKE 'regress_bp_%' OR kind = 'reset';
DELETE FROM dp_agg.budget WHERE role::text LIKE 'regress_bp_%' OR relation IS NOT NULL;
SELECT dp_agg.unprotect('bp_visits');
DROP TABLE bp_visits, bp_other;
DROP ROLE regress_bp_alice, regress_bp_bob, regress_bp_carol, regress_bp_team, regress_bp_dept,
          regress_bp_dba, regress_bp_nobody;
