# dp_agg: pg_dump and restore keep the privacy budgets and the ledger.
#
# dp_agg.budget and dp_agg.ledger are extension configuration tables, so
# pg_dump dumps their rows (and the ledger's id sequence).  After a restore
# into a fresh database of the same server (custom format, pg_restore) and
# into a fresh server (plain format, psql, roles from pg_dumpall --roles-only),
# the rows are identical, the amounts spent still count (a statement the
# remaining budget cannot pay for fails), and new charges get ledger ids
# after the restored ones (no id is reused).
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $tempdir = PostgreSQL::Test::Utils::tempdir;

my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'dp_agg'\n");
$node->start;

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql(
	'src', q{
CREATE EXTENSION dp_agg;
CREATE ROLE alice;
CREATE ROLE "Bob Smith";
CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 1000) g;
GRANT SELECT ON t TO alice, "Bob Smith";
SELECT dp_agg.set_budget('alice', 1);
SELECT dp_agg.set_budget('"Bob Smith"', 2, 0.001);
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
});

my $budget_sql = q{
SELECT role::text, epsilon_limit, delta_limit, epsilon_spent, delta_spent,
       created_at, updated_at
FROM dp_agg.budget ORDER BY 1};
my $ledger_sql = q{
SELECT id, at, role::text, kind, epsilon, delta, query, detail
FROM dp_agg.ledger ORDER BY id};

my $src_budget = $node->safe_psql('src', $budget_sql);
my $src_ledger = $node->safe_psql('src', $ledger_sql);
my $src_max_id = $node->safe_psql('src', 'SELECT max(id) FROM dp_agg.ledger');
like($src_budget, qr/^"?Bob Smith"?\|2\|0\.001\|0\.5\|/m,
	'source: Bob has spent 0.5 since his reset');
like($src_budget, qr/^alice\|1\|0\|0\.625\|/m, 'source: alice has spent 0.625');
is($src_max_id, '6', 'source: six ledger entries');

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

my $fresh = PostgreSQL::Test::Cluster->new('fresh');
$fresh->init;
$fresh->append_conf('postgresql.conf', "shared_preload_libraries = 'dp_agg'\n");
$fresh->start;
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
