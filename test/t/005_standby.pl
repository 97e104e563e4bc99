# dp_agg: no release where the charge cannot be made durable.
#
# On a hot standby (streaming replica made from a base backup) nothing can
# be written, so every DP aggregate fails closed: an error, no row, no
# charge on the primary.  The same on the primary in a read-only
# transaction (BEGIN READ ONLY, SET TRANSACTION READ ONLY,
# default_transaction_read_only).  Once the standby is promoted, it
# releases and charges like a primary.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use DpAggTest qw(preloaded_node);

my $primary = preloaded_node('primary', init => { allows_streaming => 1 });

$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION dp_agg;
CREATE ROLE analyst;
CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 1000) g;
GRANT SELECT ON t TO analyst;
SELECT dp_agg.set_budget('analyst', 10);
SET ROLE analyst;
SELECT dp_count(x, 0.25) FROM t;
});

$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

# after this charge the standby must have replayed it
$primary->safe_psql('postgres',
	'SET ROLE analyst; SELECT dp_count(x, 0.25) FROM t');
$primary->wait_for_catchup($standby);

sub budget_state
{
	my ($node) = @_;
	return $node->safe_psql(
		'postgres', q{
SELECT b.epsilon_spent || '|' || count(l.id)
FROM dp_agg.budget b
LEFT JOIN dp_agg.ledger l ON l.role = b.role AND l.kind = 'charge'
WHERE b.role = 'analyst'::regrole
GROUP BY b.epsilon_spent});
}

is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'the standby is in recovery');
is(budget_state($standby), '0.5|2', 'the standby has replayed the charges');
is($standby->safe_psql('postgres', 'SHOW shared_preload_libraries'),
	'dp_agg', 'dp_agg is preloaded on the standby');

# fails with the given error; nothing reaches the client
sub fails_closed
{
	my ($node, $sql, $error, $what) = @_;
	my ($ret, $stdout, $stderr) = $node->psql('postgres', $sql);
	isnt($ret, 0, "$what: fails");
	like($stderr, qr/$error/, "$what: with the error");
	is($stdout, '', "$what: nothing released");
	return;
}

my $on_standby = qr/DP aggregates cannot release values on a standby/;
fails_closed($standby, 'SET ROLE analyst; SELECT dp_count(x, 0.25) FROM t',
	$on_standby, 'standby, count');
fails_closed($standby,
	'SET ROLE analyst; SELECT dp_sum(x, 0, 1000, 0.25), dp_avg(x, 0, 1000, 0.25) FROM t',
	$on_standby, 'standby, sum and average');
fails_closed($standby, 'SELECT dp_count(x, 0.25) FROM t',
	$on_standby, 'standby, as superuser');
fails_closed(
	$standby,
	'SET ROLE analyst; PREPARE p AS SELECT dp_count(x, 0.25) FROM t; EXECUTE p',
	$on_standby,
	'standby, prepared statement');
fails_closed(
	$standby,
	'SET ROLE analyst; BEGIN; DECLARE c CURSOR FOR SELECT dp_count(x, 0.25) FROM t; FETCH c',
	$on_standby,
	'standby, cursor');
is( $standby->safe_psql(
		'postgres',
		q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'dp_agg charger'}
	),
	'0',
	'no charger runs on the standby');

# the primary has charged nothing more
is(budget_state($primary), '0.5|2', 'nothing charged on the primary');

# read-only transactions on the primary
my $read_only =
  qr/DP aggregates cannot release values in a read-only transaction/;
fails_closed($primary,
	'SET ROLE analyst; BEGIN READ ONLY; SELECT dp_count(x, 0.25) FROM t',
	$read_only, 'BEGIN READ ONLY');
fails_closed(
	$primary,
	'SET ROLE analyst; BEGIN; SET TRANSACTION READ ONLY; SELECT dp_count(x, 0.25) FROM t',
	$read_only,
	'SET TRANSACTION READ ONLY');
fails_closed(
	$primary,
	'SET ROLE analyst; SET default_transaction_read_only = on; SELECT dp_count(x, 0.25) FROM t',
	$read_only,
	'default_transaction_read_only');
fails_closed(
	$primary,
	'SET ROLE analyst; START TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY, DEFERRABLE; SELECT dp_count(x, 0.25) FROM t',
	$read_only,
	'serializable read-only deferrable');
is(budget_state($primary), '0.5|2',
	'read-only transactions charged nothing');

# and read-write still works on the primary
is( $primary->safe_psql(
		'postgres',
		'SET ROLE analyst; BEGIN READ WRITE; SELECT dp_count(x, 0.25) IS NOT NULL FROM t; COMMIT'
	),
	't',
	'a read-write transaction releases');
is(budget_state($primary), '0.75|3', 'and is charged');
$primary->wait_for_catchup($standby);
is(budget_state($standby), '0.75|3', 'the standby replays the charge');

# promoted, the standby releases and charges its own copy of the budget
$standby->promote;
is( $standby->safe_psql(
		'postgres',
		'SET ROLE analyst; SELECT dp_count(x, 0.25) IS NOT NULL FROM t'),
	't',
	'the promoted standby releases');
is(budget_state($standby), '1|4', 'and charges');

$standby->stop;
$primary->stop;
done_testing();
