# dp_agg: ALTER EXTENSION dp_agg UPDATE keeps the privacy budgets, the
# ledger and the Renyi DP curves, and releases charge as before.
#
# A database installs version 0.1 (its install script is kept for that),
# spends budget under basic accounting (alice) and Renyi DP accounting
# (carol: limits (5, 1e-5), 70 Gaussian releases at (0.5, 1e-6), as in
# 004_dump_restore.pl: test/reference/rdp.py gives epsilon at delta 1e-5 of
# 70, 71, 72 such releases as 4.93763, 4.97833, 5.01838), and is updated to
# 0.2, then 0.3, then 0.4.  The rows are identical after the update, carol's curve is still the
# sum of her charges, alice is refused what she no longer has, carol makes
# the 71st release (which only the curve pays for) and is refused the 72nd.
#
# Version 0.2 adds checks of the shape of the stored curves: an update over
# a damaged curve fails and leaves 0.1 in place.  Version 0.3 adds the
# private selection of GROUP BY keys and privacy units, Gaussian
# thresholding and the sums of each budget's selections, the calculators
# of joint calibration and the subsampled Laplace, 'pld' accounting and the
# column budget.pld, and the objects of DP statements on Citus tables; a
# 'pld' role charges after the update.  Version 0.4
# stores the allow-list by signature (pg_upgrade refuses regprocedure).
# The database is updated to 0.2, then to 0.3, then to 0.4; a new install of 0.4 (0.1
# plus the update scripts: there is no dp_agg--0.4.sql) has the same
# objects as the updated one (functions, constraints, the columns of the
# tables and views, the views' queries).
# pg_dump and pg_restore of the updated database keep version, rows and
# charging, and the privacy unit of a relation (dp_agg.privacy_unit) and
# its effect.  The units of 0.3 (stored by name) get the attribute number
# of their column in 0.4, which then follows renames.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use DpAggTest qw(preloaded_node);

my $tempdir = PostgreSQL::Test::Utils::tempdir;

my $node = preloaded_node('upgrade');

my $version_sql =
  q{SELECT extversion FROM pg_extension WHERE extname = 'dp_agg'};

$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql(
	'old', q{
CREATE EXTENSION dp_agg VERSION '0.1';
CREATE ROLE alice;
CREATE ROLE carol;
CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 1000) g;
GRANT SELECT ON t TO alice, carol;
SELECT dp_agg.set_budget('alice', 1);
SELECT dp_agg.set_budget('carol', 5, 1e-5, 'rdp');
SET ROLE alice;
SELECT dp_count(x, 0.25) FROM t;
SELECT dp_sum(x, 0, 1000, 0.125), dp_count(x, 0.125) FROM t;
RESET ROLE;
SET ROLE carol;
DO $$ DECLARE v bigint; BEGIN
    FOR i IN 1 .. 70 LOOP SELECT dp_count(x, 0.5, 1e-6) INTO v FROM t; END LOOP;
END $$;
});
is($node->safe_psql('old', $version_sql), '0.1', 'version 0.1 installed');

my $budget_sql = q{
SELECT role::text, epsilon_limit, delta_limit, epsilon_spent, delta_spent,
       accounting, rdp, created_at, updated_at
FROM dp_agg.budget ORDER BY 1};
my $ledger_sql = q{
SELECT id, at, role::text, kind, epsilon, delta, query, detail, rdp
FROM dp_agg.ledger ORDER BY id};

# for role carol: charges|epsilon_spent|accounting|curves consistent|
# composed epsilon at delta_limit (5 decimals), as in 004_dump_restore.pl:
# every charge has a curve on the whole order grid and budget.rdp is within
# relative 1e-12 of the sum of the ledger curves at every order
my $carol_sql = q{
WITH b AS (SELECT * FROM dp_agg.budget WHERE role = 'carol'::regrole),
     l AS (SELECT l.* FROM dp_agg.ledger l, b WHERE l.role = b.role AND l.kind = 'charge'),
     s AS (SELECT u.o, sum(u.v) AS v FROM l, unnest(l.rdp) WITH ORDINALITY u(v, o) GROUP BY u.o),
     n AS (SELECT cardinality(dp_agg.rdp_orders()) AS orders)
SELECT (SELECT count(*) FROM l) || '|' || b.epsilon_spent || '|' || b.accounting || '|' ||
       ((SELECT count(*) FROM l, n WHERE cardinality(l.rdp) = n.orders) = (SELECT count(*) FROM l)
        AND cardinality(b.rdp) = (SELECT orders FROM n)
        AND (SELECT count(*) FROM s) = (SELECT orders FROM n)
        AND (SELECT bool_and(abs(b.rdp[s.o] - s.v) <= 1e-12 * s.v AND s.v > 0) FROM s)) || '|' ||
       round(dp_agg.spent_epsilon(b.role, b.delta_limit)::numeric, 5)
FROM b};

# the objects of the extension and the checks on its tables, by name
my $objects_sql = q{
SELECT pg_describe_object(d.classid, d.objid, 0)
FROM pg_depend d JOIN pg_extension e ON d.refobjid = e.oid
WHERE e.extname = 'dp_agg' AND d.deptype = 'e'
UNION ALL
SELECT conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
FROM pg_constraint WHERE connamespace = 'dp_agg'::regnamespace
UNION ALL
SELECT a.attrelid::regclass || ' column ' || lpad(a.attnum::text, 3, '0') || ' ' || a.attname || ' ' ||
       format_type(a.atttypid, a.atttypmod) || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
     LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE c.relnamespace = 'dp_agg'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT c.oid::regclass || ' view ' || pg_get_viewdef(c.oid)
FROM pg_class c WHERE c.relnamespace = 'dp_agg'::regnamespace AND c.relkind = 'v'
UNION ALL
SELECT 'routine ' || p.oid::regprocedure || ' acl ' || coalesce(p.proacl::text, 'default') ||
       ' security definer ' || p.prosecdef || ' config ' || coalesce(p.proconfig::text, 'none') ||
       ' body ' || md5(p.prosrc)
FROM pg_depend d JOIN pg_extension e ON d.refobjid = e.oid JOIN pg_proc p ON p.oid = d.objid
WHERE e.extname = 'dp_agg' AND d.deptype = 'e' AND d.classid = 'pg_proc'::regclass
UNION ALL
SELECT 'schema ' || n.nspname || ' acl ' || coalesce(n.nspacl::text, 'default') || ' comment ' ||
       coalesce(obj_description(n.oid, 'pg_namespace'), 'none')
FROM pg_namespace n WHERE n.nspname LIKE 'dp\_agg%'
ORDER BY 1};

my $old_budget = $node->safe_psql('old', $budget_sql);
my $old_ledger = $node->safe_psql('old', $ledger_sql);
like($old_budget, qr/^alice\|1\|0\|0\.5\|0\|basic\|\{[^}]+\}\|/m,
	'0.1: alice has spent 0.5');
is($node->safe_psql('old', $carol_sql), '70|35|rdp|true|4.93763',
	'0.1: carol\'s curve is the sum of her 70 charges');
is($node->safe_psql('old', 'SELECT count(*) FROM dp_agg.ledger'),
	'72', '0.1: 72 ledger entries');
unlike($node->safe_psql('old', $objects_sql),
	qr/rdp_shape/, '0.1 has no checks of the curves');

# an update over a damaged curve fails and changes nothing
$node->safe_psql('postgres', 'CREATE DATABASE damaged');
$node->safe_psql(
	'damaged', q{
CREATE EXTENSION dp_agg VERSION '0.1';
CREATE ROLE dave;
SELECT dp_agg.set_budget('dave', 1, 1e-5, 'rdp');
UPDATE dp_agg.budget SET rdp = array_fill(0::float8, ARRAY[cardinality(dp_agg.rdp_orders())])
WHERE role = 'dave'::regrole;
UPDATE dp_agg.budget SET rdp[7] = NULL WHERE role = 'dave'::regrole;
});
my ($ret, $stdout, $stderr) =
  $node->psql('damaged', 'ALTER EXTENSION dp_agg UPDATE');
isnt($ret, 0, 'update over a curve with a missing value fails');
like($stderr, qr/violated by some row|violates check constraint/,
	'with the check that failed');
is($node->safe_psql('damaged', $version_sql),
	'0.1', 'and the extension stays at 0.1');

# the update, to 0.2 first
$node->safe_psql('old', "ALTER EXTENSION dp_agg UPDATE TO '0.2'");
is($node->safe_psql('old', $version_sql), '0.2', 'updated to 0.2');
is($node->safe_psql('old', $budget_sql),
	$old_budget, 'after the update: the budgets are identical');
is($node->safe_psql('old', $ledger_sql),
	$old_ledger, 'after the update: the ledger is identical');
is($node->safe_psql('old', $carol_sql), '70|35|rdp|true|4.93763',
	'after the update: carol\'s curve is the sum of her charges');

my $objects = $node->safe_psql('old', $objects_sql);
like($objects, qr/dp_agg\.budget budget_rdp_shape CHECK/,
	'0.2 checks the curves of the budgets');
like($objects, qr/dp_agg\.ledger ledger_rdp_shape CHECK/,
	'0.2 checks the curves of the ledger');
unlike($objects, qr/dp_select/, '0.2 has no private selection');
unlike($objects, qr/dist_state/, '0.2 has no objects for Citus');
unlike($objects, qr/privacy_unit/, '0.2 has no privacy units');

# then to 0.3
$node->safe_psql('old', "ALTER EXTENSION dp_agg UPDATE TO '0.3'");
is($node->safe_psql('old', $version_sql), '0.3', 'updated to 0.3');
is($node->safe_psql('old', $budget_sql),
	$old_budget, 'after the update to 0.3: the budgets are identical');
is($node->safe_psql('old', $ledger_sql),
	$old_ledger, 'after the update to 0.3: the ledger is identical');
is($node->safe_psql('old', $carol_sql), '70|35|rdp|true|4.93763',
	'after the update to 0.3: carol\'s composed epsilon is unchanged (no selection yet)');
$objects = $node->safe_psql('old', $objects_sql);
like($objects, qr/function dp_agg\.dp_select\(internal,integer\)/,
	'0.3 has the private selection of GROUP BY keys');
like($objects, qr/table dp_agg\.privacy_unit/, '0.3 has the catalog of privacy units');
like($objects, qr/function dp_agg\.unit_release_dp_sum\(bytea,integer,integer\)/,
	'0.3 has the internal aggregates of privacy units');
like($objects, qr/function dp_agg\.unit_pick_bound_dp_sum\(integer,integer,integer,bigint\)/,
	'0.3 has the fused level 1 of privacy units with k = 1');
like($objects, qr/function dp_agg\.unit_pick\(anyelement,bigint\)/,
	'0.3 has the keys of the fused level 1');
like($objects, qr/function dp_agg\.unit_priority\("any"\)/,
	'0.3 has the priorities of the fused level 1');
like($objects, qr/function dp_agg\.gaussian_mu\(/,
	'0.3 has the calculator of joint calibration');
like($objects, qr/dist_state/, '0.3 has the objects of DP statements on Citus tables');
like($objects, qr/dp_agg\.budget budget_pld_shape CHECK/,
	'0.3 checks the releases by kind of the budgets');
like($objects, qr/dp_agg\.budget budget_accounting_check CHECK .*'pld'/,
	'0.3 accepts pld accounting');
like($objects, qr/function dp_agg\.pld_epsilon\(jsonb,double precision\)/,
	'0.3 has the pld calculator');
like($objects, qr/function dp_agg\.selection_mechanism\(double precision,double precision,integer\)/,
	'0.3 has the choice of the selection mechanism (Gaussian thresholding)');
like($objects, qr/dp_agg\.budget column 012 selection_epsilon double precision default 0.*dp_agg\.budget column 013 selection_delta double precision default 0/s,
	'0.3 sums the selections of each budget beside its curve');

# privacy units of 0.3, stored by name: one on a column after a dropped
# one (attribute 2), one whose column was renamed (statements over it fail)
$node->safe_psql(
	'old', q{
CREATE TABLE u3 (gone int, unit int);
SELECT dp_agg.set_privacy_unit('u3', 'unit');
ALTER TABLE u3 DROP COLUMN gone;
CREATE TABLE u4 (unit int);
SELECT dp_agg.set_privacy_unit('u4', 'unit');
ALTER TABLE u4 RENAME COLUMN unit TO renamed;
});

# then to 0.4, the default version
$node->safe_psql('old', 'ALTER EXTENSION dp_agg UPDATE');
is($node->safe_psql('old', $version_sql), '0.4', 'updated to 0.4');
is($node->safe_psql('old', $budget_sql),
	$old_budget, 'after the update to 0.4: the budgets are identical');
is($node->safe_psql('old', $ledger_sql),
	$old_ledger, 'after the update to 0.4: the ledger is identical');
$objects = $node->safe_psql('old', $objects_sql);
like($objects, qr/dp_agg\.privacy_unit column 005 unit_attnum smallint/,
	'0.4 stores the unit column by attribute number');
like($objects, qr/^schema dp_agg_internal acl \{[^}]*=U\/[^}]*\} comment dp_agg: internal/m,
	'0.4 has the schema dp_agg_internal, which PUBLIC may use');
like($objects, qr/function dp_agg_internal\.dp_select\(internal,integer\)/,
	'0.4 moves the internal aggregates to dp_agg_internal');
like($objects, qr/function dp_agg_internal\.unit_priority\("any"\)/,
	'0.4 moves the internal functions to dp_agg_internal');
unlike($objects, qr/function dp_agg\.(dp_select|unit_pick|unit_priority|dist_run|row_call|sum|count_transfn)\(/,
	'0.4 leaves no internal function in dp_agg');
like($objects, qr/function dp_agg\.set_budget\(regrole,double precision,double precision,text\)/,
	'0.4 leaves the functions users call in dp_agg');
is( $node->safe_psql(
		'old',
		q{SELECT string_agg(relation::text || '|' || unit_column || '|' || coalesce(unit_attnum::text, 'none'), ',' ORDER BY 1) FROM dp_agg.privacy_unit}
	),
	'u3|unit|2,u4|unit|none',
	'after the update to 0.4: the units of 0.3 get the attribute number of their column, if it still has its name');
($ret, $stdout, $stderr) =
  $node->psql('old', 'SELECT dp_count(*) FROM u4');
like($stderr, qr/privacy unit column "unit" of relation "u4" does not exist/,
	'after the update to 0.4: a unit whose column was renamed under 0.3 still fails closed');
$node->safe_psql('old', 'ALTER TABLE u3 RENAME COLUMN unit TO person');
is( $node->safe_psql(
		'old', q{SELECT unit_column || '|' || unit_attnum FROM dp_agg.privacy_unit WHERE relation = 'u3'::regclass}),
	'person|2',
	'after the update to 0.4: a unit follows its column through a rename');
$node->safe_psql('old', 'DROP TABLE u3, u4');
is($node->safe_psql('old', 'SELECT count(*) FROM dp_agg.privacy_unit'),
	'0', 'dropped relations leave no unit behind');

# the allow-list of 0.2 and 0.3 stores OIDs (regprocedure, which pg_upgrade
# refuses): the update to 0.4 stores signatures instead and drops the
# entries of functions that do not exist (OID 4000000000 here).  Until the
# update, the library refuses the statements of untrusted roles over
# protected relations: it evaluates their rows through the trap of 0.4
# (dp_agg_internal.row_call), which 0.2 and 0.3 lack.  encode is allowed, not
# int4pl, which is among the everyday built-ins of 0.4 and needs no entry.
$node->safe_psql('postgres', 'CREATE DATABASE allow');
$node->safe_psql(
	'allow', q{
CREATE EXTENSION dp_agg VERSION '0.2';
CREATE ROLE dora;
CREATE TABLE pt AS SELECT g AS x FROM generate_series(1, 100) g;
SELECT dp_agg.protect('pt');
SELECT dp_agg.grant_access('pt', 'dora');
SELECT dp_agg.set_budget('dora', 1e12);
SELECT dp_agg.allow_function('encode(bytea, text)');
INSERT INTO dp_agg.allowed_function (function) VALUES ('4000000000'::regprocedure);
});
# at epsilon 1e9 the count is exact except with probability about 2 exp(-1e9)
my $allowed_sql =
  q{SET ROLE dora; SELECT dp_count(x, 1e9) FROM pt WHERE length(encode(x::text::bytea, 'hex')) <= 4 AND x < 50};
my ($ret_allow, $out_allow, $err_allow) = $node->psql('allow', $allowed_sql);
like($err_allow, qr/dp_agg must be updated to version 0\.4 to read protected relation "pt"/,
	'0.2: an untrusted role\'s statement over a protected table is refused until the update');
$node->safe_psql('allow', "ALTER EXTENSION dp_agg UPDATE TO '0.3'");
($ret_allow, $out_allow, $err_allow) = $node->psql('allow', $allowed_sql);
like($err_allow, qr/dp_agg must be updated to version 0\.4 to read protected relation "pt"/,
	'0.3: and still is');
$node->safe_psql('allow', 'ALTER EXTENSION dp_agg UPDATE');
is( $node->safe_psql(
		'allow',
		q{SELECT string_agg(function || ' ' || format_type(pg_typeof(function), NULL), ',')
		  FROM dp_agg.allowed_function}),
	'pg_catalog.encode(pg_catalog.bytea,pg_catalog.text) text',
	'0.4: the entry is a signature, and the entry of no function is gone');
is($node->safe_psql('allow', $allowed_sql), '49', '0.4: the allowed function is accepted');
$node->safe_psql('allow', q{SELECT dp_agg.disallow_function('encode(bytea, text)')});
($ret_allow, $out_allow, $err_allow) = $node->psql('allow', $allowed_sql);
like($err_allow, qr/function encode\(bytea,text\) is not allowed on the rows of protected relation "pt"/,
	'0.4: and no longer once disallowed');

# a new install of 0.4 has the same objects as the updated one
$node->safe_psql('postgres', 'CREATE DATABASE new');
$node->safe_psql('new', 'CREATE EXTENSION dp_agg');
is($node->safe_psql('new', $version_sql),
	'0.4', 'CREATE EXTENSION installs 0.4');
is($node->safe_psql('new', $objects_sql),
	$objects, 'a new install of 0.4 has the objects of an updated one');

# and so does a database updated to 0.4 in one step from 0.1, 0.2 or 0.3
# (ALTER EXTENSION runs the update scripts one after the other in one
# transaction)
for my $from ('0.1', '0.2', '0.3')
{
	(my $db = "from_$from") =~ s/\./_/;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, "CREATE EXTENSION dp_agg VERSION '$from'");
	$node->safe_psql($db, 'ALTER EXTENSION dp_agg UPDATE');
	is($node->safe_psql($db, $version_sql), '0.4', "updated from $from to 0.4 in one step");
	is($node->safe_psql($db, $objects_sql),
		$objects, "updated from $from in one step: the objects of a new install");
	$node->safe_psql('postgres', "DROP DATABASE $db");
}

# a schema dp_agg_internal that is not the extension's (someone created it
# before the update to 0.4, which then fails) is never searched: over the
# objects of 0.3 the library finds the internal aggregates of privacy units
# in dp_agg, not the look-alikes of that schema
$node->safe_psql('postgres', 'CREATE DATABASE squat');
$node->safe_psql(
	'squat', q{
CREATE EXTENSION dp_agg VERSION '0.3';
SELECT dp_agg.set_budget(current_user::regrole, 1e12, 0.5);
CREATE TABLE su AS SELECT g % 10 AS unit, g AS x FROM generate_series(1, 100) g;
SELECT dp_agg.set_privacy_unit('su', 'unit');
CREATE SCHEMA dp_agg_internal;
DO $$
DECLARE
    f record;
BEGIN
    FOR f IN SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args,
                    pg_get_function_result(p.oid) AS result
             FROM pg_proc p
             WHERE p.pronamespace = 'dp_agg'::regnamespace
               AND p.proname ~ '^unit_(pick_)?(bound|release)_dp_count$'
    LOOP
        EXECUTE format('CREATE FUNCTION dp_agg_internal.%I(%s) RETURNS %s LANGUAGE sql AS %L',
                       f.proname, f.args, f.result, 'SELECT NULL::' || f.result);
    END LOOP;
END $$;
});
is($node->safe_psql('squat', 'SELECT count(*) FROM pg_proc WHERE pronamespace = \'dp_agg_internal\'::regnamespace'),
	'11', 'a schema dp_agg_internal of someone else\'s, with look-alikes of the aggregates of privacy units');
# 10 units of one row each counted (max_rows_contributed 1); at epsilon 1e9
# the noise is 0 but with probability below 1e-300
is($node->safe_psql('squat', 'SET dp_agg.epsilon = 1e9; SELECT dp_count(*) FROM su'),
	'10', 'over the objects of 0.3 the library uses the aggregates of dp_agg, not the look-alikes');
# prepaid statements need the ledger of 0.4 (its column statements): over
# the objects of 0.3, dp_agg.prepay charges every statement alone
my $squat_charges = q{SELECT count(*) FROM dp_agg.ledger WHERE kind = 'charge'};
my $charges_before = $node->safe_psql('squat', $squat_charges);
$node->safe_psql(
	'squat', q{
CREATE TABLE sp AS SELECT g AS x FROM generate_series(1, 100) g;
SET dp_agg.prepay = 8;
SELECT dp_count(x, 1.0) FROM sp;
SELECT dp_count(x, 1.0) FROM sp;
SELECT dp_count(x, 1.0) FROM sp;
SELECT dp_count(x, 1.0) FROM sp;
});
is($node->safe_psql('squat', $squat_charges) - $charges_before,
	4, 'over the objects of 0.3, dp_agg.prepay charges each statement alone');
($ret, $stdout, $stderr) = $node->psql('squat', 'ALTER EXTENSION dp_agg UPDATE');
like($stderr, qr/schema "dp_agg_internal" already exists/,
	'and the update to 0.4 fails, changing nothing');
$node->safe_psql('postgres', 'DROP DATABASE squat');

# 0.4 (as 0.3) selects groups privately
$node->safe_psql(
	'new', q{CREATE TABLE u AS SELECT g AS x FROM generate_series(1, 1000) g;
SELECT dp_agg.set_budget(current_user::regrole, 1e12, 0.5)});
is( $node->safe_psql(
		'new', q{SET dp_agg.selection_epsilon = 1; SET dp_agg.selection_delta = 1e-9;
SELECT count(*) FROM (SELECT x, dp_count(x, 1e9) FROM u GROUP BY x) s}),
	'0',
	'0.4: GROUP BY a unique column releases no group (1000 groups of one row, each released with probability 1e-9)');

# a privacy unit, kept by pg_dump: u has 10 rows for each of 100 units
$node->safe_psql('old', q{
CREATE TABLE u AS SELECT g % 100 AS unit, g AS x FROM generate_series(1, 1000) g;
SELECT dp_agg.set_privacy_unit('u', 'unit', 2);
});
my $unit_sql = q{SELECT relation::text, unit_column, max_groups_contributed FROM dp_agg.privacy_unit};
is($node->safe_psql('old', $unit_sql), 'u|unit|2', 'the privacy unit of u');

# releases charge as before
sub check_charging
{
	my ($db, $what) = @_;

	# alice has 0.5 left
	my ($ret, $stdout, $stderr) = $node->psql($db,
		'SET ROLE alice; SELECT dp_count(x, 0.75) FROM t',
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($stderr, qr/PB001.*privacy budget of role "alice" is exhausted/,
		"$what: alice cannot spend more than she has left");
	is($stdout, '', "$what: nothing released");
	is( $node->safe_psql(
			$db, 'SET ROLE alice; SELECT dp_count(x, 0.5) IS NOT NULL FROM t'),
		't',
		"$what: alice spends what she has left");
	is( $node->safe_psql(
			$db,
			q{SELECT epsilon_spent FROM dp_agg.budget WHERE role = 'alice'::regrole}
		),
		'1',
		"$what: and is charged for it");

	is( $node->safe_psql(
			$db,
			'SET ROLE carol; SELECT dp_count(x, 0.5, 1e-6) IS NOT NULL FROM t'),
		't',
		"$what: carol makes the 71st release, which only the curve pays for");
	($ret, $stdout, $stderr) = $node->psql($db,
		'SET ROLE carol; SELECT dp_count(x, 0.5, 1e-6) FROM t',
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like(
		$stderr,
		qr/PB001.*privacy budget of role "carol" is exhausted.*Renyi composition would reach epsilon 5\.018/s,
		"$what: carol is refused the 72nd");
	is($stdout, '', "$what: nothing released");
	is($node->safe_psql($db, $carol_sql), '71|35.5|rdp|true|4.97833',
		"$what: the new charge adds its curve to the old ones");
	return;
}

# pg_dump and pg_restore of the updated database, before it charges more
command_ok(
	[
		'pg_dump', '-Fc', '-d', $node->connstr('old'),
		'-f', "$tempdir/old.dump"
	],
	'pg_dump -Fc of the updated database');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
command_ok(
	[
		'pg_restore', '--exit-on-error', '-d', $node->connstr('restored'),
		"$tempdir/old.dump"
	],
	'pg_restore into a fresh database');
is($node->safe_psql('restored', $version_sql),
	'0.4', 'restored: version 0.4');
is($node->safe_psql('restored', $budget_sql),
	$old_budget, 'restored: the budgets are identical');
is($node->safe_psql('restored', $ledger_sql),
	$old_ledger, 'restored: the ledger is identical');
is($node->safe_psql('restored', $objects_sql),
	$objects, 'restored: the objects of an updated install');
is($node->safe_psql('restored', $unit_sql), 'u|unit|2',
	'restored: the privacy unit of u');
# at epsilon 1e9 the count's noise is 0 but with probability below 1e-300
$node->safe_psql('restored', q{SELECT dp_agg.set_budget('postgres', 1e12)});
is( $node->safe_psql(
		'restored', q{SET dp_agg.epsilon = 1e9; SELECT dp_count(*) = 100 FROM u}),
	't', 'restored: a count over u counts units');

check_charging('old', 'after the update');
check_charging('restored', 'restored');

# a 'pld' role after the update: its releases are counted by kind
$node->safe_psql(
	'old', q{
CREATE ROLE erin;
GRANT SELECT ON t TO erin;
SELECT dp_agg.set_budget('erin', 5, 1e-5, 'pld');
});
is( $node->safe_psql(
		'old', 'SET ROLE erin; SELECT dp_count(x, 0.1) IS NOT NULL FROM t'),
	't',
	'after the update: a pld role releases');
is( $node->safe_psql(
		'old',
		q{SELECT b.accounting || '|' || (b.pld->0->>'count') || '|' || (b.pld->0->>'mechanism')
		  FROM dp_agg.budget b WHERE b.role = 'erin'::regrole}),
	'pld|1|laplace',
	'after the update: its release is counted in budget.pld');

$node->stop;
done_testing();
