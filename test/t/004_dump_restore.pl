# dp_agg: pg_dump and restore keep the privacy budgets and the ledger.
#
# dp_agg.budget and dp_agg.ledger are extension configuration tables, so
# pg_dump dumps their rows (and the ledger's id sequence).  After a restore
# into a fresh database of the same server (custom format, pg_restore) and
# into a fresh server (plain format, psql, roles from pg_dumpall --roles-only),
# the rows are identical, the amounts spent still count (a statement the
# remaining budget cannot pay for fails), and new charges get ledger ids
# after the restored ones (no id is reused).
#
# The same for Renyi DP accounting: the rows compared include the
# accounting column and the curves (budget.rdp, ledger.rdp, value for
# value).  Role carol has limits (5, 1e-5) and accounting 'rdp' and has
# made 70 Gaussian releases at (0.5, 1e-6): basic composition ran out
# after 9, the composed curve pays for 71 (test/reference/rdp.py: epsilon
# at delta 1e-5 of 70, 71, 72 such releases is 4.93763, 4.97833, 5.01838).
# In the restored copy carol makes the 71st and is refused the 72nd, which
# only the restored accounting and curve decide.
#
# The privacy unit of a relation (dp_agg.privacy_unit) is kept by
# attribute number and name: after a rename, and a dropped column before
# it that makes the restore number it differently, the restored unit is
# the same column.
#
# Every budget policy is kept: a group's budget (shared by dave and erin)
# with a yearly window in Paris and a lifetime limit, a protected
# relation's budget with Renyi accounting and a window of its own, caps on
# the group and on a role, the budgets' identities (which the ledger's
# charges name, with the windows they were charged in and the relations
# they read).  In the restored copy they decide as before: the group has
# 0.25 left, erin's calls are capped, and a new charge pays all three of
# erin's budgets.
#
# A public domain declared by a DBA (dp_agg.public_domain) is kept: the
# restored row is the same, and a DP statement grouping by its key
# releases every declared key, the empty one too.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use DpAggTest qw(preloaded_node);

my $tempdir = PostgreSQL::Test::Utils::tempdir;

# each statement charged alone: the ledger's rows are counted one per
# statement (charges on leases are folded into rows of several: 016_leases.pl)
my $node = preloaded_node('dump', conf => "dp_agg.lease_time = 0\n");

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql(
	'src', q{
CREATE EXTENSION dp_agg;
CREATE ROLE alice;
CREATE ROLE "Bob Smith";
CREATE ROLE carol;
CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 1000) g;
GRANT SELECT ON t TO alice, "Bob Smith", carol;
SELECT dp_agg.set_budget('alice', 1);
SELECT dp_agg.set_budget('"Bob Smith"', 2, 0.001);
SELECT dp_agg.set_budget('carol', 5, 1e-5, 'rdp');
SET ROLE alice;
SELECT dp_count(x, 0.25) FROM t;
SELECT dp_sum(x, 0, 1000, 0.125), dp_count(x, 0.125) FROM t;
RESET ROLE;
SET ROLE "Bob Smith";
SELECT dp_sum(x, 0, 1000, 0.5, 0.0001) FROM t;
RESET ROLE;
SELECT dp_agg.reset_budget('"Bob Smith"');
SET ROLE "Bob Smith";
SELECT dp_avg(x, 0, 1000, 0.5) FROM t;
RESET ROLE;
SET ROLE alice;
SELECT dp_count(x, 0.125) FROM t;
RESET ROLE;
SET ROLE carol;
DO $$ DECLARE v bigint; BEGIN
    FOR i IN 1 .. 70 LOOP SELECT dp_count(x, 0.5, 1e-6) INTO v FROM t; END LOOP;
END $$;
RESET ROLE;
CREATE TABLE pu (gone int, patient int, x int);
INSERT INTO pu SELECT k, k % 10, k FROM generate_series(1, 100) k;
SELECT dp_agg.set_privacy_unit('pu', 'patient', 2);
ALTER TABLE pu DROP COLUMN gone;
ALTER TABLE pu RENAME COLUMN patient TO person;
ALTER TABLE pu ADD COLUMN patient int DEFAULT 7;
CREATE ROLE team;
CREATE ROLE dave IN ROLE team;
CREATE ROLE erin IN ROLE team;
CREATE TABLE pt AS SELECT g AS x FROM generate_series(1, 1000) g;
GRANT SELECT ON t, pt TO dave, erin;
SELECT dp_agg.protect('pt');
SELECT dp_agg.set_group_budget('team', 1);
SELECT dp_agg.set_budget_window('team', '1 year', 'Europe/Paris');
SELECT dp_agg.set_lifetime_limit('team', 3);
SELECT dp_agg.set_relation_budget('pt', 2, 1e-5, 'rdp');
SELECT dp_agg.set_relation_budget_window('pt', '1 year', 'UTC');
SELECT dp_agg.set_budget('erin', 5);
SELECT dp_agg.set_cap('team', statement_epsilon => 0.5);
SELECT dp_agg.set_cap('erin', call_epsilon => 0.25);
SET ROLE dave;
SELECT dp_count(x, 0.5) FROM pt;
SELECT dp_count(x, 0.25) FROM t;
RESET ROLE;
CREATE TABLE pd (dept text NOT NULL);
INSERT INTO pd SELECT (ARRAY['a', 'b', 'c'])[1 + k % 3] FROM generate_series(1, 30) k;
SELECT dp_agg.set_public_domain('pd', 'dept', ARRAY['a', 'b', 'z']);
});

# the public domain of pd.dept: a (10 rows), b (10), z (none); the rows of
# c are dropped.  At epsilon 1e9 the noise is 0 but with probability below
# 1e-300 per key.
my $domain_sql = q{
SELECT relation::text, key, key_type::text, keys::text, set_at FROM dp_agg.public_domain};
my $domain_release_sql = q{
SET dp_agg.epsilon = 1e9; SELECT string_agg(dept || '=' || n, ',' ORDER BY dept)
FROM (SELECT dept, dp_count(*) AS n FROM pd GROUP BY dept) s};
my $src_domain = $node->safe_psql('src', $domain_sql);
like($src_domain, qr/^pd\|dept\|text\|\{a,b,z\}\|/, 'source: the public domain of pd.dept');

my $budget_sql = q{
SELECT role::text, epsilon_limit, delta_limit, epsilon_spent, delta_spent,
       accounting, rdp, created_at, updated_at
FROM dp_agg.budget ORDER BY 1};
my $ledger_sql = q{
SELECT id, at, role::text, kind, epsilon, delta, query, detail, rdp
FROM dp_agg.ledger ORDER BY id};
# the policies: every column of every budget and cap, the ledger's
# budgets, windows and relations
my $policy_sql = q{
SELECT id, role::text, relation::text, members, epsilon_limit, delta_limit, accounting,
       epsilon_spent, delta_spent, rdp, pld, pld_frontier, selection_epsilon, selection_delta,
       window_length, window_time_zone, window_start, lifetime_epsilon_limit,
       lifetime_delta_limit, lifetime_epsilon_spent, lifetime_delta_spent
FROM dp_agg.budget ORDER BY id};
my $cap_sql = q{
SELECT role::text, statement_epsilon, statement_delta, call_epsilon, call_delta, set_at
FROM dp_agg.cap ORDER BY 1};
my $ledger_policy_sql = q{
SELECT id, relations::text, budgets, windows FROM dp_agg.ledger ORDER BY id};

# for role carol: charges|epsilon_spent|accounting|curves consistent|
# composed epsilon at delta_limit (5 decimals).  "Curves consistent": every
# charge has a curve on the whole order grid, and budget.rdp has a positive
# value at every order within relative 1e-12 of the sum of the ledger
# curves.
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

# the privacy unit of pu: its column "person" (renamed from "patient",
# attribute 2 after a dropped column: a restore numbers it 1), 10 units;
# a new column has the old name.  At epsilon 1e9 the count's noise is 0
# but with probability below 1e-300.
my $unit_sql = q{
SELECT relation::text || '|' || unit_column || '|' || max_groups_contributed || '|' ||
       (SELECT attname FROM pg_attribute WHERE attrelid = relation AND attnum = unit_attnum)
FROM dp_agg.privacy_unit};
my $units_sql = q{SET dp_agg.epsilon = 1e9; SELECT dp_count(*) FROM pu};
is($node->safe_psql('src', $unit_sql), 'pu|person|2|person',
	'source: the privacy unit of pu follows its column through the rename');

my $src_budget = $node->safe_psql('src', $budget_sql);
my $src_ledger = $node->safe_psql('src', $ledger_sql);
my $src_policy = $node->safe_psql('src', $policy_sql);
my $src_caps = $node->safe_psql('src', $cap_sql);
my $src_ledger_policy = $node->safe_psql('src', $ledger_policy_sql);
like($src_policy, qr/^\d+\|team\|\|t\|1\|0\|basic\|0\.75\|.*\|1 year\|Europe\/Paris\|.*\|3\|0\|0\.75\|0$/m,
	'source: the group has spent 0.75 this year, with a lifetime limit');
like($src_policy, qr/^\d+\|\|pt\|f\|2\|1e-05\|rdp\|0\.5\|.*\|1 year\|UTC\|/m,
	'source: the protected relation has spent 0.5');
is($node->safe_psql('src', q{SELECT count(*) FROM dp_agg.cap}), '2', 'source: two caps');
my $src_max_id = $node->safe_psql('src', 'SELECT max(id) FROM dp_agg.ledger');
like($src_budget, qr/^"?Bob Smith"?\|2\|0\.001\|0\.5\|/m,
	'source: Bob has spent 0.5 since his reset');
like($src_budget, qr/^alice\|1\|0\|0\.625\|/m, 'source: alice has spent 0.625');
like($src_budget, qr/^carol\|5\|1e-05\|35\|[0-9.e-]+\|rdp\|\{[^}]+\}\|/m,
	'source: carol has spent 35 by basic composition, with a curve');
like($src_budget, qr/^alice\|.*\|basic\|\{[^}]+\}\|/m,
	'source: alice has a curve too, under basic accounting');
is($node->safe_psql('src', $carol_sql), '70|35|rdp|true|4.93763',
	'source: carol\'s curve is the sum of her 70 charges');
is($src_max_id, '78', 'source: 78 ledger entries');

# the ledger id sequence has been used further than the last row shows
# (ids are never reused, even those of rolled-back inserts)
$node->safe_psql('src',
	q{SELECT nextval('dp_agg.ledger_id_seq') FROM generate_series(1, 3)});

# restore rows that a new charge in the restored copy must come after
sub check_restored
{
	my ($target, $db, $what) = @_;

	is($target->safe_psql($db, $budget_sql),
		$src_budget, "$what: the budgets are identical");
	is($target->safe_psql($db, $ledger_sql),
		$src_ledger, "$what: the ledger is identical");
	is($target->safe_psql($db, $policy_sql),
		$src_policy, "$what: every budget policy is identical, identities included");
	is($target->safe_psql($db, $cap_sql), $src_caps, "$what: the caps are identical");
	is($target->safe_psql($db, $ledger_policy_sql),
		$src_ledger_policy, "$what: the ledger's budgets, windows and relations are identical");

	# the group's budget decides: 0.25 left this year
	my ($r0, $out0, $err0) = $target->psql($db,
		'SET ROLE dave; SELECT dp_count(x, 0.5) FROM t',
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($err0, qr/PB001.*privacy budget of group "team" is exhausted/,
		"$what: dave is refused by the group's budget");
	# the caps decide: erin's calls at most 0.25
	($r0, $out0, $err0) = $target->psql($db,
		'SET ROLE erin; SELECT dp_count(x, 0.375) FROM pt',
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($err0, qr/PB004.*more than the cap of 0\.25 per call/,
		"$what: erin's cap per call is kept");
	is($target->safe_psql($db, 'SET ROLE erin; SELECT dp_count(x, 0.25) IS NOT NULL FROM pt'),
		't', "$what: erin spends the group's last 0.25 on the protected relation");
	is( $target->safe_psql(
			$db, q{
SELECT string_agg(coalesce(b.role::text, b.relation::text) || ':' || b.epsilon_spent, ',' ORDER BY b.id)
FROM dp_agg.ledger l, dp_agg.budget b
WHERE l.id = (SELECT max(id) FROM dp_agg.ledger) AND b.id = ANY (l.budgets)}),
		'team:1,pt:0.75,erin:0.25',
		"$what: the charge paid erin's, the group's and the relation's budgets, by their restored identities");

	# the amount spent still counts: alice has 0.375 left
	my ($ret, $stdout, $stderr) = $target->psql($db,
		'SET ROLE alice; SELECT dp_count(x, 0.5) FROM t',
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($stderr, qr/PB001.*privacy budget of role "alice" is exhausted/,
		"$what: alice cannot spend more than she has left");
	is($stdout, '', "$what: nothing released");

	# a new charge continues the ledger
	$stdout = $target->safe_psql($db,
		'SET ROLE alice; SELECT dp_count(x, 0.25) IS NOT NULL FROM t');
	is($stdout, 't', "$what: alice spends what she has left");
	my $new = $target->safe_psql(
		$db, q{
SELECT id || '|' || role::text || '|' || epsilon
FROM dp_agg.ledger ORDER BY id DESC LIMIT 1});
	like($new, qr/^(\d+)\|alice\|0\.25$/, "$what: the charge is in the ledger");
	my ($id) = $new =~ /^(\d+)/;
	cmp_ok($id, '>', $src_max_id + 3,
		"$what: the new ledger id comes after every id the source used");
	is( $target->safe_psql(
			$db,
			q{SELECT epsilon_spent FROM dp_agg.budget WHERE role = 'alice'::regrole}
		),
		'0.875',
		"$what: and the restored budget is charged");

	# carol's restored accounting and curve decide her admissions
	is($target->safe_psql($db, $carol_sql), '70|35|rdp|true|4.93763',
		"$what: carol's restored curve is the sum of her restored charges");
	my $curve = $target->safe_psql($db,
		q{SELECT rdp FROM dp_agg.budget WHERE role = 'carol'::regrole});
	is( $target->safe_psql(
			$db, q{
SET ROLE carol;
SELECT accounting || '|' || round(composed_epsilon::numeric, 5) || '|' || rdp::text
FROM dp_agg.my_budget_curves}),
		"rdp|4.93763|$curve",
		"$what: carol's my_budget_curves shows the restored curve");
	$stdout = $target->safe_psql($db,
		'SET ROLE carol; SELECT dp_count(x, 0.5, 1e-6) IS NOT NULL FROM t');
	is($stdout, 't',
		"$what: carol makes the 71st release, which only the curve pays for");
	($ret, $stdout, $stderr) = $target->psql($db,
		'SET ROLE carol; SELECT dp_count(x, 0.5, 1e-6) FROM t',
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like(
		$stderr,
		qr/PB001.*privacy budget of role "carol" is exhausted.*Renyi composition would reach epsilon 5\.018/s,
		"$what: carol is refused the 72nd");
	is($stdout, '', "$what: nothing released");
	is($target->safe_psql($db, $carol_sql), '71|35.5|rdp|true|4.97833',
		"$what: the new charge adds its curve to the restored one");

	# the privacy unit is the same column, whatever its number now
	is($target->safe_psql($db, $unit_sql), 'pu|person|2|person',
		"$what: the privacy unit of pu is its column person");
	is( $target->safe_psql(
			$db, q{SELECT attnum FROM pg_attribute WHERE attrelid = 'pu'::regclass AND attname = 'person'}),
		'1', "$what: which the restore numbered 1");
	$target->safe_psql($db, q{SELECT dp_agg.set_budget(current_user::regrole, 1e12)});
	is($target->safe_psql($db, $units_sql), '10',
		"$what: a count over pu counts its 10 units");

	# the public domain is the declared one, and applies
	is($target->safe_psql($db, $domain_sql), $src_domain,
		"$what: the public domain of pd.dept is identical");
	is($target->safe_psql($db, $domain_release_sql), 'a=10,b=10,z=0',
		"$what: a GROUP BY of pd.dept releases every declared key");
	return;
}

# 1. custom format, restored into a fresh database of the same server
command_ok(
	[
		'pg_dump', '-Fc', '-d', $node->connstr('src'),
		'-f', "$tempdir/src.dump"
	],
	'pg_dump -Fc');
$node->safe_psql('postgres', 'CREATE DATABASE dst');
command_ok(
	[
		'pg_restore', '--exit-on-error', '-d', $node->connstr('dst'),
		"$tempdir/src.dump"
	],
	'pg_restore into a fresh database');
check_restored($node, 'dst', 'pg_restore');

# 2. plain format, restored into a fresh server
command_ok(
	[ 'pg_dump', '-d', $node->connstr('src'), '-f', "$tempdir/src.sql" ],
	'pg_dump (plain)');
command_ok(
	[
		'pg_dumpall', '--roles-only', '-d', $node->connstr('postgres'),
		'-f', "$tempdir/roles.sql"
	],
	'pg_dumpall --roles-only');

my $fresh = preloaded_node('fresh', conf => "dp_agg.lease_time = 0\n");
# the roles first (the budget and ledger name them); "role postgres already
# exists" is expected
$fresh->psql('postgres', undef,
	extra_params => [ '-f', "$tempdir/roles.sql" ],
	on_error_stop => 0);
# a role created before the restore, so that the role OIDs differ
$fresh->safe_psql('postgres', 'CREATE ROLE unrelated');
$fresh->safe_psql('postgres', 'CREATE DATABASE dst');
my ($ret, $stdout, $stderr) = $fresh->psql('dst', undef,
	extra_params => [ '-f', "$tempdir/src.sql" ]);
is($ret, 0, 'plain dump restored with psql');
is($stderr, '', 'without errors');
check_restored($fresh, 'dst', 'fresh server');

$fresh->stop;
$node->stop;
done_testing();
