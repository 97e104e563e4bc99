# dp_agg: the Renyi DP curve of a charge survives a crash of the server
# right after the release.
#
# Every charge records the statement's Renyi DP curve in dp_agg.ledger.rdp
# and adds it to dp_agg.budget.rdp, in the charger's transaction
# (synchronous commit, fsync on) committed before the statement reads a
# row.  So once a DP value has reached the client, after kill -9 of every
# server process and a restart, the curve is in the ledger row and in the
# budget's composed curve, the composed curve is the sum of the ledger's
# curves, and admission under 'rdp' accounting goes on from it: the role
# whose curve pays for 71 Gaussian releases at (0.5, 1e-6) under limits
# (5, 1e-5) is refused the 72nd after the restart.  Also after kill -9 of
# the charger alone (a crash restart).
#
# Composed epsilons at delta 1e-5 of k such releases, from
# test/reference/rdp.py: 1: 0.47388, 2: 0.68948, 71: 4.97833, 72: 5.01838.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;

my $node = crash_test_node('rdp_crash');
# each statement charged alone: every ledger row holds one statement's
# curve (charges on leases are folded into rows of several: 016_leases.pl)
$node->append_conf('postgresql.conf', "dp_agg.lease_time = 0\n");
$node->reload;
create_budget_roles($node, renyi => "5, 1e-5, 'rdp'", probe => '1, 1e-6');

my $release = 'SELECT dp_count(x, 0.5, 1e-6) IS NOT NULL FROM t';

# charges|epsilon_spent|curves consistent|composed epsilon at 1e-5 (5
# decimals), for role renyi.  "Curves consistent": every ledger charge has
# a curve on the whole order grid, and budget.rdp has a positive value at
# every order within relative 1e-12 of the sum of the ledger curves.
sub rdp_state
{
	return $node->safe_psql(
		'postgres', q{
WITH b AS (SELECT * FROM dp_agg.budget WHERE role = 'renyi'::regrole),
     l AS (SELECT l.* FROM dp_agg.ledger l, b WHERE l.role = b.role AND l.kind = 'charge'),
     s AS (SELECT u.o, sum(u.v) AS v FROM l, unnest(l.rdp) WITH ORDINALITY u(v, o) GROUP BY u.o),
     n AS (SELECT cardinality(dp_agg.rdp_orders()) AS orders)
SELECT (SELECT count(*) FROM l) || '|' || b.epsilon_spent || '|' ||
       ((SELECT count(*) FROM l, n WHERE cardinality(l.rdp) = n.orders) = (SELECT count(*) FROM l)
        AND cardinality(b.rdp) = (SELECT orders FROM n)
        AND (SELECT count(*) FROM s) = (SELECT orders FROM n)
        AND (SELECT bool_and(abs(b.rdp[s.o] - s.v) <= 1e-12 * s.v AND s.v > 0) FROM s)) || '|' ||
       round(dp_agg.spent_epsilon(b.role, 1e-5)::numeric, 5)
FROM b});
}

# 1. autocommit: the value reached the client, then everything is killed
release_then_crash($node, "SET ROLE renyi; $release", 't', 'released a Gaussian count');
is(rdp_state(), '1|0.5|true|0.47388',
	'after kill -9 and restart, the charge and its curve are there');
# the curve of the same release made after the restart, by another role
$node->safe_psql('postgres', "SET ROLE probe; $release");
is( $node->safe_psql(
		'postgres', q{
SELECT (SELECT l.rdp FROM dp_agg.ledger l
        WHERE l.role = 'renyi'::regrole AND l.kind = 'charge')
       = (SELECT l.rdp FROM dp_agg.ledger l
          WHERE l.role = 'probe'::regrole AND l.kind = 'charge')
   AND (SELECT l.rdp FROM dp_agg.ledger l
        WHERE l.role = 'renyi'::regrole AND l.kind = 'charge')
       = (SELECT b.rdp FROM dp_agg.budget b WHERE b.role = 'renyi'::regrole)}),
	't',
	'the ledger curve is that of the release, and the budget curve is that curve');

# 2. the releasing transaction is still open (it will never commit)
release_in_open_transaction($node, 'renyi',
	'SELECT dp_sum(x, 0, 1000, 0.5, 1e-6) IS NOT NULL FROM t',
	't', 'released a Gaussian sum in an open transaction');
is(rdp_state(), '2|1|true|0.68948',
	'the curve of a transaction that never committed stays after kill -9');

# 3. the 71st release, which only the Renyi curve pays for (basic
# composition ran out after 9), just before the crash
release_times($node, 'SET ROLE renyi;',
	'SELECT dp_count(x, 0.5, 1e-6) INTO v FROM t', 68);
is(rdp_state(), '70|35|true|4.93763', '70 releases charged');
release_then_crash($node, "SET ROLE renyi; $release",
	't', 'the 71st release, beyond basic composition');
is(rdp_state(), '71|35.5|true|4.97833',
	'after kill -9 and restart, the 71st charge and its curve are there');
is( $node->safe_psql(
		'postgres', q{
SET ROLE renyi;
SELECT accounting || '|' || (composed_epsilon = dp_agg.spent_epsilon('renyi', 1e-5)) || '|'
       || (composed_epsilon <= epsilon_limit)
FROM dp_agg.my_budget_curves}),
	'rdp|true|true',
	'my_budget_curves shows the composed epsilon within the limit');
refused(
	$node,
	"SET ROLE renyi; $release",
	qr/PB001.*privacy budget of role "renyi" is exhausted.*Renyi composition would reach epsilon 5\.018/s,
	'the 72nd release is refused by the restored curve');
is(rdp_state(), '71|35.5|true|4.97833', 'and nothing charged');

# 4. kill -9 of the charger right after a release: the postmaster restarts
# every process (crash recovery); the curve is not lost
$node->safe_psql('postgres',
	q{SELECT dp_agg.set_budget('renyi', 5.02, 1e-5, 'rdp')});
my $out = $node->safe_psql('postgres', "SET ROLE renyi; $release");
is(bg_output($out), 't', 'the 72nd release under a limit of 5.02');
kill_charger($node);
is(rdp_state(), '72|36|true|5.01838',
	'no curve lost when the charger was killed');
refused($node, "SET ROLE renyi; $release",
	qr/privacy budget of role "renyi" is exhausted/,
	'the 73rd release is refused');
is(rdp_state(), '72|36|true|5.01838', 'and nothing charged');

$node->stop;
done_testing();
