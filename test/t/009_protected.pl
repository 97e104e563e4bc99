# dp_agg: protected relations, their grants and the allow-list survive a
# restart, pg_dump and restore (into the same server, and into a fresh one
# whose role OIDs differ); a role dropped and created again has no access.
#
# Role analyst has a grant on t and on the partitioned table p, and no
# SELECT: after each step a plain SELECT must be refused as "protected",
# a DP statement must be released and charged, and the allowed function
# int4pl must still be usable on rows.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use DpAggTest qw(preloaded_node);

my $tempdir = PostgreSQL::Test::Utils::tempdir;

my $node = preloaded_node('protect');

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql(
	'src', q{
CREATE EXTENSION dp_agg;
CREATE ROLE owner;
CREATE ROLE analyst;
CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 1000) g;
CREATE TABLE p (x int) PARTITION BY RANGE (x);
CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (0) TO (500);
CREATE TABLE p2 PARTITION OF p FOR VALUES FROM (500) TO (2000);
INSERT INTO p SELECT g FROM generate_series(1, 1000) g;
ALTER TABLE t OWNER TO owner;
ALTER TABLE p OWNER TO owner;
SELECT dp_agg.protect('t');
SELECT dp_agg.protect('p');
SELECT dp_agg.grant_access('t', 'analyst');
SELECT dp_agg.grant_access('p', 'analyst');
SELECT dp_agg.allow_function('int4pl(integer, integer)');
SELECT dp_agg.set_budget('analyst', 1e12);
});

my $catalog_sql = q{
SELECT 'protected ' || string_agg(relation::text, ',' ORDER BY relation::text) FROM dp_agg.protected
UNION ALL
SELECT 'access ' || string_agg(relation::text || ':' || role::text, ',' ORDER BY relation::text) FROM dp_agg.access
UNION ALL
SELECT 'allowed ' || string_agg(function::text, ',' ORDER BY function::text) FROM dp_agg.allowed_function};
my $expected_catalog =
  "protected p,t\naccess p:analyst,t:analyst\nallowed pg_catalog.int4pl(integer,integer)";

sub check_protected
{
	my ($target, $db, $what) = @_;

	is($target->safe_psql($db, $catalog_sql),
		$expected_catalog, "$what: protections, grants and allow-list kept");
	my ($ret, $stdout, $stderr) =
	  $target->psql($db, 'SET ROLE analyst; SELECT x FROM t LIMIT 1');
	like($stderr, qr/relation "t" is protected/, "$what: a plain SELECT is refused");
	($ret, $stdout, $stderr) =
	  $target->psql($db, 'SET ROLE analyst; SELECT x FROM p1 LIMIT 1');
	like($stderr, qr/relation "p1" is protected/, "$what: a partition is protected");
	my $before = $target->safe_psql($db,
		q{SELECT count(*) FROM dp_agg.ledger WHERE role = 'analyst'::regrole});
	# at epsilon 1e9 the counts are exact except with probability about
	# 2 exp(-1e9) (discrete Laplace noise of scale 1e-9)
	is( $target->safe_psql(
			$db, q{
SET ROLE analyst;
SELECT dp_count(x, 1e9) FROM t WHERE x + 1 <= 100;
SELECT dp_count(x, 1e9) FROM p}),
		"99\n1000",
		"$what: DP statements work with the grant and no SELECT");
	is( $target->safe_psql(
			$db, q{SELECT count(*) FROM dp_agg.ledger WHERE role = 'analyst'::regrole})
		  - $before,
		2, "$what: and are charged");
	return;
}

check_protected($node, 'src', 'source');

# a restart keeps everything (the catalogs are tables)
$node->restart;
check_protected($node, 'src', 'after a restart');

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
check_protected($node, 'dst', 'pg_restore');

# 2. plain format, restored into a fresh server with other role OIDs
command_ok(
	[ 'pg_dump', '-d', $node->connstr('src'), '-f', "$tempdir/src.sql" ],
	'pg_dump (plain)');
command_ok(
	[
		'pg_dumpall', '--roles-only', '-d', $node->connstr('postgres'),
		'-f', "$tempdir/roles.sql"
	],
	'pg_dumpall --roles-only');
my $fresh = preloaded_node('fresh');
$fresh->safe_psql('postgres', 'CREATE ROLE unrelated');
$fresh->psql('postgres', undef,
	extra_params => [ '-f', "$tempdir/roles.sql" ],
	on_error_stop => 0);
$fresh->safe_psql('postgres', 'CREATE DATABASE dst');
my ($ret, $stdout, $stderr) =
  $fresh->psql('dst', undef, extra_params => [ '-f', "$tempdir/src.sql" ]);
is($ret, 0, 'plain dump restored with psql');
is($stderr, '', 'without errors');
check_protected($fresh, 'dst', 'fresh server');

# a role dropped and created again is another role: no access
$node->safe_psql(
	'src', q{
DROP ROLE analyst;
CREATE ROLE analyst;
SELECT dp_agg.set_budget('analyst', 1e12);
});
($ret, $stdout, $stderr) =
  $node->psql('src', 'SET ROLE analyst; SELECT dp_count(x, 1) FROM t');
like($stderr, qr/permission denied for table t/,
	'a role created again has no grant: the standard permission error');
is($node->safe_psql('src', 'SET ROLE analyst; SELECT count(*) FROM dp_agg.my_access'),
	'0', 'and my_access shows none');

# The planner estimates an untrusted role's statements without the
# statistics of protected relations: its plan choices (shown here by
# auto_explain, which a superuser configured to send plans as notices)
# would tell their most common values and frequencies.  x < 100 on 1..1000
# is estimated at 1/3 of the rows (333), not at the 99 the histogram says.
$node->safe_psql(
	'src', q{
ANALYZE t;
CREATE ROLE estimator;
SELECT dp_agg.grant_access('t', 'estimator');
SELECT dp_agg.set_budget('estimator', 1e12);
});
# debug_print_plan, which any role sets, prints the plan (its estimates too)
# as a LOG message: the role's own EXPLAIN (17 and later name the field
# :scan.plan.plan_rows)
($ret, $stdout, $stderr) = $node->psql('src',
	'SET client_min_messages = log; SET debug_print_plan = on; '
	  . 'SET ROLE estimator; SELECT dp_count(x, 1) FROM t WHERE x < 100');
like($stderr, qr/:(?:[a-z]+\.)*plan_rows 333\b/,
	'debug_print_plan shows an untrusted role estimates without the statistics');
unlike($stderr, qr/:(?:[a-z]+\.)*plan_rows 99\b/, 'and not the estimate of the histogram');
SKIP:
{
	($ret, $stdout, $stderr) = $node->psql('src', "LOAD 'auto_explain'");
	skip 'auto_explain is not installed', 2 if $ret != 0;
	my $explained = q{
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_level = notice;
SET client_min_messages = notice;
};
	like($node->safe_psql('src', 'EXPLAIN SELECT dp_count(x, 1e9) FROM t WHERE x < 100'),
		qr/Seq Scan on t .*rows=99 /, 'a trusted role plans with the statistics');
	($ret, $stdout, $stderr) = $node->psql('src',
		$explained . 'SET ROLE estimator; SELECT dp_count(x, 1) FROM t WHERE x < 100');
	like($stderr, qr/Seq Scan on t .*rows=333 /,
		'an untrusted role plans without the statistics of a protected table');
}

# pg_stat_statements, when installed, shows every role the buffer hits of
# its own statements: refused to untrusted roles (at planning, so the
# module need not be preloaded for the refusal to show)
SKIP:
{
	skip 'pg_stat_statements is not installed', 1
	  unless $node->safe_psql('src',
		"SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_stat_statements'"
	  ) eq '1';
	$node->safe_psql('src', 'CREATE EXTENSION pg_stat_statements');
	my ($ret, $stdout, $stderr) = $node->psql('src',
		'SET ROLE analyst; SELECT shared_blks_hit FROM pg_stat_statements');
	like($stderr, qr/statistics function pg_stat_statements\w* is not available to role "analyst"/,
		'pg_stat_statements is refused to an untrusted role');
}

done_testing();
