# dp_agg: without shared_preload_libraries, every DP aggregate fails closed.
#
# CREATE EXTENSION and the calculators work, budgets can be set, but a DP
# aggregate cannot be priced or charged, so it fails with an error whose
# hint names shared_preload_libraries: nothing is charged, nothing is
# released (no row reaches the client), in every way the library can be
# loaded late (on first use, LOAD, session_preload_libraries) and in
# parallel query.  Once the library is preloaded (restart), the same
# statement is released and charged.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('not_preloaded');
$node->init;
$node->append_conf('postgresql.conf', "max_worker_processes = 8\n");
$node->start;

is($node->safe_psql('postgres', 'SHOW shared_preload_libraries'),
	'', 'dp_agg is not preloaded');

my ($ret, $stdout, $stderr) =
  $node->psql('postgres', 'CREATE EXTENSION dp_agg');
is($ret, 0, 'CREATE EXTENSION works');
is($stderr, '', 'without a complaint');
if ($ret != 0)
{
	# nothing else can be checked
	diag("CREATE EXTENSION failed without shared_preload_libraries: $stderr");
	$node->stop('immediate');
	done_testing();
	exit;
}

$node->safe_psql(
	'postgres', q{
CREATE ROLE analyst;
CREATE TABLE t AS SELECT g AS x, (g % 7)::numeric AS n, g::float8 AS f FROM generate_series(1, 10000) g;
GRANT SELECT ON t TO analyst;
SELECT dp_agg.set_budget('analyst', 100, 0.001);
});
is( $node->safe_psql(
		'postgres',
		q{SELECT epsilon_limit || '|' || epsilon_spent FROM dp_agg.budget}),
	'100|0',
	'a budget can be set');
is($node->safe_psql('postgres', 'SELECT dp_agg.laplace_scale(0.5, 1)'),
	'2', 'the calculators work');

# nothing charged and nothing in the ledger
sub untouched
{
	return $node->safe_psql(
		'postgres', q{
SELECT (SELECT epsilon_spent || '|' || delta_spent FROM dp_agg.budget
        WHERE role = 'analyst'::regrole)
       || '|' || (SELECT count(*) FROM dp_agg.ledger)});
}

# the setting that forces parallel plans was renamed in PostgreSQL 16
my $force_parallel =
  $node->pg_version >= 16 ? 'debug_parallel_query' : 'force_parallel_mode';

my @statements = (
	'SELECT dp_count(x, 0.5) FROM t',
	'SET dp_agg.epsilon = 1; SELECT dp_count(*) FROM t',
	'SELECT dp_sum(x, 0, 10000, 0.5) FROM t',
	'SELECT dp_sum(f, 0, 10000, 0.5, 0.0001) FROM t',
	'SELECT dp_avg(n, 0, 7, 0.5) FROM t',
	'SELECT x % 3 AS g, dp_count(x, 0.5) FROM t GROUP BY 1',
	'DO $$ DECLARE v bigint; BEGIN SELECT dp_count(x, 0.5) INTO v FROM t; RAISE NOTICE \'%\', v; END $$',
	'RESET ROLE; LOAD \'dp_agg\'; SET ROLE analyst; SELECT dp_count(x, 0.5) FROM t',
	# parallel query: the workers load the library too
	'SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; '
	  . 'SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; '
	  . "SET $force_parallel = on; SELECT dp_count(x, 0.5) FROM t",
);

foreach my $sql (@statements)
{
	($ret, $stdout, $stderr) = $node->psql(
		'postgres', "SET ROLE analyst; $sql",
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	isnt($ret, 0, "fails: $sql");
	like(
		$stderr,
		qr/dp_agg must be loaded via shared_preload_libraries/,
		"with the error: $sql");
	like($stderr, qr/HINT:.*shared_preload_libraries/,
		"and a hint: $sql");
	is($stdout, '', "nothing released: $sql");
	unlike($stderr, qr/NOTICE/, "nothing reached PL/pgSQL: $sql");
}
is(untouched(), '0|0|0', 'nothing was charged, the ledger is empty');

# session_preload_libraries loads the library in each new session: still
# not preloaded in the postmaster, so still closed
$node->append_conf('postgresql.conf', "session_preload_libraries = 'dp_agg'\n");
$node->reload;
($ret, $stdout, $stderr) =
  $node->psql('postgres', 'SET ROLE analyst; SELECT dp_count(x, 0.5) FROM t');
isnt($ret, 0, 'fails with session_preload_libraries');
like(
	$stderr,
	qr/dp_agg must be loaded via shared_preload_libraries/,
	'with the same error');
is($stdout, '', 'nothing released with session_preload_libraries');
is(untouched(), '0|0|0', 'still nothing charged');

# now preload it: the same statement is released and charged
$node->append_conf('postgresql.conf',
	"session_preload_libraries = ''\nshared_preload_libraries = 'dp_agg'\n");
$node->restart;
$stdout = $node->safe_psql('postgres',
	'SET ROLE analyst; SELECT dp_count(x, 0.5) IS NOT NULL FROM t');
is($stdout, 't', 'preloaded: released');
is(untouched(), '0.5|0|1', 'and charged');

$node->stop;
done_testing();
