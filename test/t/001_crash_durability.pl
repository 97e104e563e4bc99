# dp_agg: a charge survives a crash of the server right after the release.
#
# The charger commits each charge (synchronous commit, fsync on) before the
# statement reads a row, so once a DP value has reached the client, the
# charge is on disk: after kill -9 of every server process and a restart,
# it is in dp_agg.budget and dp_agg.ledger, whether the releasing statement
# ran in autocommit mode or in a transaction that never committed.  Also:
# kill -9 of the charger itself (a crash restart) loses no charge, and a
# charger that exits while it holds a request makes the statement fail
# without releasing anything.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;

my $node = crash_test_node('crash');
create_budget_roles($node, analyst => '4');

# 1. autocommit: the value reached the client, then everything is killed
release_then_crash($node,
	'SET ROLE analyst; SELECT dp_count(x, 0.25) IS NOT NULL FROM t',
	't', 'released a count');
is(budget_state($node), '0.25|1|0.25',
	'after kill -9 and restart, the release is charged');
is( $node->safe_psql(
		'postgres', q{SELECT query FROM dp_agg.ledger
		   WHERE role = 'analyst'::regrole AND kind = 'charge'}),
	'SELECT dp_count(x, 0.25) IS NOT NULL FROM t',
	'the ledger row names the statement');

# 2. the releasing transaction is still open (it will never commit)
release_in_open_transaction($node, 'analyst',
	'SELECT dp_sum(x, 0, 1000, 0.5) IS NOT NULL FROM t',
	't', 'released a sum in an open transaction');
is(budget_state($node), '0.75|2|0.75',
	'the release of a transaction that never committed stays charged after kill -9'
);

# 3. one statement with two aggregates, charged once
release_then_crash($node,
	'SET ROLE analyst; SELECT dp_count(x, 0.125) IS NOT NULL AND dp_avg(x, 0, 1000, 0.125) IS NOT NULL FROM t',
	't', 'released a count and an average');
is(budget_state($node), '1|3|1', 'a statement with two aggregates, charged once, survives');

# 4. kill -9 of the charger: the postmaster restarts every process (crash
# recovery); no charge is lost and releases work again
$node->safe_psql('postgres',
	'SET ROLE analyst; SELECT dp_count(x, 0.25) IS NOT NULL FROM t');
kill_charger($node);
is(budget_state($node), '1.25|4|1.25', 'no charge lost when the charger was killed');
my $out = $node->safe_psql('postgres',
	'SET ROLE analyst; SELECT dp_count(x, 0.25) IS NOT NULL FROM t');
is(bg_output($out), 't', 'releases work after the crash restart');
is(budget_state($node), '1.5|5|1.5', 'and are charged');

# 5. the charger exits (SIGTERM) while it holds a request: the statement
# fails, nothing is released, nothing is charged
my $dba = $node->background_psql('postgres');
$dba->query_safe('BEGIN');
$dba->query_safe(
	q{SELECT 1 FROM dp_agg.budget WHERE role = 'analyst'::regrole FOR UPDATE});
my $analyst = $node->background_psql('postgres', on_error_stop => 0);
$analyst->query_safe('SET ROLE analyst');
$analyst->{stdin} .=
  "SELECT dp_count(x, 0.25) AS released FROM t;\n\\echo DONE\n\\warn DONE\n";
$analyst->{run}->pump_nb();
ok( $node->poll_query_until(
		'postgres', q{SELECT count(*) = 1 FROM pg_stat_activity
		   WHERE backend_type = 'dp_agg charger' AND wait_event_type = 'Lock'}),
	'the charger waits for the budget row');
kill 'TERM', charger_pid($node);
pump_until($analyst->{run}, $analyst->{timeout}, \$analyst->{stderr},
	qr/DONE/);
pump_until($analyst->{run}, $analyst->{timeout}, \$analyst->{stdout},
	qr/DONE/);
like(
	$analyst->{stderr},
	qr/the dp_agg charger exited while charging this statement/,
	'the statement fails when the charger exits');
unlike($analyst->{stdout}, qr/released|^\d/m, 'nothing was released');
$dba->query_safe('COMMIT');
$dba->quit;
$analyst->{stdout} = $analyst->{stderr} = '';
is(budget_state($node), '1.5|5|1.5',
	'the charge of the charger that exited was not committed');
$out = $analyst->query_safe('SELECT dp_count(x, 0.25) IS NOT NULL FROM t');
is(bg_output($out), 't', 'the same backend releases again with a new charger');
is(budget_state($node), '1.75|6|1.75', 'and is charged once');
$analyst->quit;

# 6. prepaid statements (dp_agg.prepay): the charge that pays for them is
# on disk before the first of them releases, so after a crash every
# statement released is still paid for: the second charge paid for 4
# statements, of which 3 ran
release_then_crash($node,
	q{SET dp_agg.prepay = 4; SET dp_agg.prepay_time = '10s'; SET ROLE analyst;
	  SELECT dp_count(x, 0.125) IS NOT NULL FROM t;
	  SELECT dp_count(x, 0.125) IS NOT NULL FROM t;
	  SELECT dp_count(x, 0.125) IS NOT NULL FROM t;
	  SELECT dp_count(x, 0.125) IS NOT NULL FROM t},
	"t\nt\nt\nt", 'released four counts, the last two on prepaid statements');
is(budget_state($node), '2.375|8|2.375',
	'after kill -9 and restart, the prepaid statements are charged');
is( $node->safe_psql(
		'postgres', q{SELECT string_agg(statements::text, ',' ORDER BY id) FROM
		   (SELECT id, statements FROM dp_agg.ledger
		    WHERE role = 'analyst'::regrole AND kind = 'charge' ORDER BY id DESC LIMIT 2) l}),
	'1,4', 'the ledger row of the prepayment counts its statements');

$node->stop;
done_testing();
