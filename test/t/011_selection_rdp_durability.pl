# dp_agg: the sums of an rdp role's private selections survive a crash of
# the server right after the release (Renyi accounting of selections).
#
# A GROUP BY statement's selection is composed beside the role's Renyi DP
# curve: the charger adds its epsilon and delta to dp_agg.budget's
# selection_epsilon and selection_delta, in the same transaction
# (synchronous commit, fsync on) as the curve and the ledger row, committed
# before the statement reads a row.  So after kill -9 of every server
# process and a restart the sums are those of the ledger's selections, and
# admission by the hybrid certificate goes on from them: under limits (5,
# 1e-5), GROUP BY statements with a Gaussian count (0.1, 1e-7) and a
# selection (0.1, 1e-7) are admitted 43 times (basic composition: 24;
# sql/selection_rdp.sql computes the 43), and the 44th is refused after the
# restart.  Also after kill -9 of the charger alone.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;

my $node = crash_test_node('selection_rdp_crash');
# each statement charged alone: every ledger row holds one statement's
# curve (charges on leases are folded into rows of several: 016_leases.pl)
$node->append_conf('postgresql.conf', "dp_agg.lease_time = 0\n");
$node->reload;
create_budget_roles($node, renyi => "5, 1e-5, 'rdp'");

my $settings = q{SET dp_agg.selection_epsilon = 0.1; SET dp_agg.selection_delta = 1e-7; SET ROLE renyi;};
my $release =
  q{SELECT count(s.dc) FROM (SELECT x % 5 AS g, dp_count(x, 0.1, 1e-7) AS dc FROM t GROUP BY 1) s};

# charges|sums consistent|curve finite|within limit, for role renyi.  "Sums
# consistent": the budget's selection_epsilon and selection_delta are within
# relative 1e-12 of the sums of the ledger's selections; "curve finite":
# budget.rdp is finite and positive at every order; "within limit": the
# composed (hybrid) epsilon at delta_limit is at most epsilon_limit.
sub state
{
	return $node->safe_psql(
		'postgres', q{
WITH b AS (SELECT * FROM dp_agg.budget WHERE role = 'renyi'::regrole),
     l AS (SELECT l.* FROM dp_agg.ledger l, b WHERE l.role = b.role AND l.kind = 'charge'),
     s AS (SELECT sum((e->'selection'->>'epsilon')::float8) AS eps,
                  sum((e->'selection'->>'delta')::float8) AS dl
           FROM l, jsonb_array_elements(l.detail) e WHERE e ? 'selection')
SELECT (SELECT count(*) FROM l) || '|' ||
       (abs(b.selection_epsilon - s.eps) <= 1e-12 * s.eps
        AND abs(b.selection_delta - s.dl) <= 1e-12 * s.dl) || '|' ||
       (SELECT bool_and(c > 0 AND c < 'Infinity') FROM unnest(b.rdp) c) || '|' ||
       (dp_agg.spent_epsilon(b.role, b.delta_limit) <= b.epsilon_limit)
FROM b, s});
}

# 1. autocommit: the groups reached the client, then everything is killed
release_then_crash($node, "$settings $release", qr/^\d+$/, 'released a GROUP BY statement');
is(state(), '1|true|true|true',
	'after kill -9 and restart, the charge and the sums of its selection are there');

# 2. the 43rd statement, which only the hybrid certificate pays for (basic
# composition ran out after 24), just before the crash
release_times($node, $settings,
	'SELECT count(s.dc) INTO v FROM (SELECT x % 5 AS g, dp_count(x, 0.1, 1e-7) AS dc FROM t GROUP BY 1) s',
	41);
is(state(), '42|true|true|true', '42 statements charged');
release_then_crash($node, "$settings $release",
	qr/^\d+$/, 'the 43rd statement, beyond basic composition');
is(state(), '43|true|true|true',
	'after kill -9 and restart, the 43rd charge and the sums are there');
refused(
	$node,
	"$settings $release",
	qr/PB001.*privacy budget of role "renyi" is exhausted.*Renyi composition would reach epsilon 5\./s,
	'the 44th statement is refused by the restored sums and curve');
is(state(), '43|true|true|true', 'and nothing charged');

# 3. kill -9 of the charger right after a statement: the sums are not lost
$node->safe_psql('postgres',
	q{SELECT dp_agg.set_budget('renyi', 6, 1e-5, 'rdp')});
my $out = $node->safe_psql('postgres', "$settings $release");
like(bg_output($out), qr/^\d+$/, 'the 44th statement under a limit of 6');
kill_charger($node);
is(state(), '44|true|true|true', 'no sum lost when the charger was killed');

$node->stop;
done_testing();
