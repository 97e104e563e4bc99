# dp_agg: the releases by kind of a 'pld' role survive a crash of the
# server right after the release, and admission goes on from them.
#
# Every charge adds the statement's releases by kind to dp_agg.budget.pld
# in the charger's transaction (synchronous commit, fsync on), committed
# before the statement reads a row.  So once a DP value has reached the
# client, after kill -9 of every server process and a restart, the release
# is counted, and admission under 'pld' accounting goes on from the count:
# the role whose limits (5, 1e-5) pay for 128 Laplace counts at epsilon 0.1
# (their optimal composition, test/reference/pld.py; basic composition
# pays for 50, Renyi for 114) is refused the 129th after the restart.
# The role's frontier (budget.pld_frontier) is written with the budget, so
# the charger does not compose again after the restart.  Also
# after kill -9 of the charger alone (a crash restart), and for a release
# in a transaction that never commits.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;

my $node = crash_test_node('pld_crash');
create_budget_roles($node, tight => "5, 1e-5, 'pld'");

my $release = 'SELECT dp_count(x, 0.1) IS NOT NULL FROM t';

# charges|releases counted in budget.pld|kinds|pld epsilon within the limit
sub pld_state
{
	return $node->safe_psql(
		'postgres', q{
WITH b AS (SELECT * FROM dp_agg.budget WHERE role = 'tight'::regrole)
SELECT (SELECT count(*) FROM dp_agg.ledger l, b WHERE l.role = b.role AND l.kind = 'charge')
       || '|' || coalesce((SELECT sum((e->>'count')::int) FROM b, jsonb_array_elements(b.pld) e), 0)
       || '|' || coalesce(jsonb_array_length(b.pld), 0)
       || '|' || (coalesce(dp_agg.pld_state_epsilon(b.pld, 1e-5), 0) <= b.epsilon_limit)
FROM b});
}

# 1. autocommit: the value reached the client, then everything is killed
release_then_crash($node, "SET ROLE tight; $release", 't', 'released a Laplace count');
is(pld_state(), '1|1|1|true', 'after kill -9 and restart, the release is counted');

# 2. the releasing transaction is still open (it will never commit)
release_in_open_transaction($node, 'tight',
	'SELECT dp_count(x::text, 0.1) IS NOT NULL FROM t',
	't', 'released a count in an open transaction');
is(pld_state(), '2|2|1|true',
	'the release of a transaction that never committed is counted after kill -9');

# 3. the 128th release, which only the pld certificate pays for, just
# before the crash
release_times($node, 'SET ROLE tight;', 'SELECT dp_count(x, 0.1) INTO v FROM t', 125);
is(pld_state(), '127|127|1|true', '127 releases charged');
release_then_crash($node, "SET ROLE tight; $release",
	't', 'the 128th release, beyond basic and Renyi composition');
is(pld_state(), '128|128|1|true',
	'after kill -9 and restart, the 128th release is counted');
is( $node->safe_psql(
		'postgres', q{
SET ROLE tight;
SELECT accounting || '|' || (pld_epsilon <= epsilon_limit) || '|'
       || (epsilon_spent > epsilon_limit) || '|' || (composed_epsilon = pld_epsilon)
FROM dp_agg.my_budget_curves}),
	'pld|true|true|true',
	'my_budget_curves shows the pld epsilon within the limit, beyond basic composition');
refused(
	$node,
	"SET ROLE tight; $release",
	qr/PB001.*privacy budget of role "tight" is exhausted/s,
	'the 129th release is refused by the restored count');
is(pld_state(), '128|128|1|true', 'and nothing charged');

# 4. kill -9 of the charger right after a release: the postmaster restarts
# every process (crash recovery); the count is not lost
$node->safe_psql('postgres',
	q{SELECT dp_agg.set_budget('tight', 5.1, 1e-5, 'pld')});
my $out = $node->safe_psql('postgres', "SET ROLE tight; $release");
is(bg_output($out), 't', 'the 129th release under a limit of 5.1');
kill_charger($node);
is(pld_state(), '129|129|1|true', 'no release lost when the charger was killed');

$node->stop;
done_testing();
