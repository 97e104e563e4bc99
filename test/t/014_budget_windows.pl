# dp_agg: renewing budgets across window boundaries, with statements in
# flight and the server crashing around a boundary; a member removed from a
# group in the middle of the group's window.
#
# The group "team" has a budget that renews every 4 seconds (windows
# counted from midnight UTC) and pays for 10 releases of epsilon 0.25 per
# window, under a lifetime limit; four members release as fast as they
# can, so that every window is exhausted and refusals are in flight at its
# end.  The server is killed (kill -9 of every process) 0.1 s after one
# boundary, restarted, then killed again 0.1 s before another.  After each
# restart the ledger and the budget must say that:
#   - every charge counts in the window it was charged in: its window in
#     the ledger is the window of its own instant (the charger's clock when
#     it decided, recorded as "at"), whatever the statement did after;
#   - no window was overspent: at most 10 charges, 2.5 epsilon, in each;
#   - the budget row holds the window of the last charge that survived,
#     with exactly the charges of that window, and the lifetime sums of
#     every charge;
#   - every value a client received was charged: each member has at least
#     as many charges in the ledger as it saw releases (a crash loses only
#     charges whose statements released nothing);
#   - the members' own budgets were charged for exactly their charges.
# Then a member leaves a group whose window has not ended: its earlier
# charges stay counted in the window, its later statements (also a
# statement prepared before) are charged to its own budget only, and the
# views agree, also after a crash.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep time);

use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;

my $node = crash_test_node('windows');
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION dp_agg;
CREATE ROLE team;
CREATE ROLE a1 IN ROLE team;
CREATE ROLE a2 IN ROLE team;
CREATE ROLE a3 IN ROLE team;
CREATE ROLE a4 IN ROLE team;
CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 1000) g;
GRANT SELECT ON t TO a1, a2, a3, a4;
SELECT dp_agg.set_group_budget('team', 2.5);
SELECT dp_agg.set_budget_window('team', '4 seconds', 'UTC');
SELECT dp_agg.set_lifetime_limit('team', 1000);
SELECT dp_agg.set_budget('a1', 1000);
SELECT dp_agg.set_budget('a2', 1000);
});

# the members release as fast as they can: each client a psql reading a
# script of statements, each printing "t" when it released (errors go to
# stderr); psql exits when the server crashes
my @members = qw(a1 a2 a3 a4);
my %seen = map { $_ => 0 } @members;
my $tempdir = PostgreSQL::Test::Utils::tempdir;
foreach my $m (@members)
{
	open(my $fh, '>', "$tempdir/$m.sql") or die "cannot write $tempdir/$m.sql: $!";
	print $fh "SET ROLE $m;\n";
	print $fh "SELECT dp_count(x, 0.25) IS NOT NULL AS released FROM t;\n" x 20000;
	close $fh;
}

sub start_clients
{
	my @clients;
	foreach my $m (@members)
	{
		# to files: a pipe nobody reads would stop psql when it fills
		my $h = IPC::Run::start(
			[
				'psql', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=0',
				'-d', $node->connstr('postgres'), '-f', "$tempdir/$m.sql"
			],
			'>', "$tempdir/$m.out", '2>', '/dev/null');
		push @clients, [ $m, $h ];
	}
	return @clients;
}

# after a crash: what each client saw released
sub collect_clients
{
	my (@clients) = @_;
	foreach my $c (@clients)
	{
		my ($m, $h) = @$c;
		eval { $h->finish; };
		eval { $h->kill_kill; };
		my $n = () = slurp_file("$tempdir/$m.out") =~ /^t$/mg;
		$seen{$m} += $n;
	}
	return;
}

# sleep until $offset seconds after the next window boundary (negative:
# before it)
sub sleep_to_boundary
{
	my ($offset) = @_;
	my $wait = $node->safe_psql('postgres',
		q{SELECT extract(epoch FROM dp_agg_internal.window_end('4 seconds', 'UTC', clock_timestamp()) - clock_timestamp())});
	$wait += 4 if $wait + $offset < 0.3;
	usleep(int(($wait + $offset) * 1_000_000));
	return;
}

sub check_windows
{
	my ($what) = @_;
	my $team = $node->safe_psql('postgres', q{SELECT id FROM dp_agg.budget WHERE role = 'team'::regrole});

	# the window of each charge is that of its own instant
	is( $node->safe_psql(
			'postgres', qq{
SELECT count(*) FROM dp_agg.ledger l,
       LATERAL (SELECT l.windows[array_position(l.budgets, $team)] AS w) x
WHERE l.kind = 'charge' AND $team = ANY (l.budgets)
  AND x.w IS DISTINCT FROM dp_agg_internal.window_start('4 seconds', 'UTC', l.at)}),
		'0', "$what: every charge counts in the window it was charged in");
	my $per_window = $node->safe_psql(
		'postgres', qq{
SELECT count(*) || '|' || max(n) || '|' || max(e) || '|' || sum(n)
FROM (SELECT l.windows[array_position(l.budgets, $team)] AS w, sum(l.statements) AS n, sum(l.epsilon) AS e
      FROM dp_agg.ledger l WHERE l.kind = 'charge' AND $team = ANY (l.budgets) GROUP BY 1) s});
	my ($windows, $most, $most_epsilon, $charges) = split /\|/, $per_window;
	note "$what: $charges charges in $windows windows, at most $most ($most_epsilon) in one";
	cmp_ok($windows, '>=', 2, "$what: the charges span window boundaries");
	cmp_ok($most, '<=', 10, "$what: no window has more than its 10 charges");
	cmp_ok($most_epsilon, '<=', 2.5, "$what: no window spent more than its limit");

	# the budget row: the window of the last charge, its charges, the lifetime
	is( $node->safe_psql(
			'postgres', qq{
WITH c AS (SELECT l.epsilon, l.windows[array_position(l.budgets, $team)] AS w
           FROM dp_agg.ledger l WHERE l.kind = 'charge' AND $team = ANY (l.budgets))
SELECT (b.window_start = (SELECT max(w) FROM c))
       || '|' || (b.epsilon_spent = (SELECT sum(epsilon) FROM c WHERE w = b.window_start))
       || '|' || (b.lifetime_epsilon_spent = (SELECT sum(epsilon) FROM c))
FROM dp_agg.budget b WHERE b.id = $team}),
		'true|true|true',
		"$what: the budget holds the last charge's window, its charges, and the lifetime sums");

	# every release seen by a client was charged; the own budgets agree
	foreach my $m (@members)
	{
		my $charged = $node->safe_psql('postgres',
			qq{SELECT coalesce(sum(statements), 0) FROM dp_agg.ledger WHERE role = '$m'::regrole AND kind = 'charge'});
		cmp_ok($charged, '>=', $seen{$m},
			"$what: $m saw $seen{$m} releases, the ledger has $charged charges");
	}
	is( $node->safe_psql(
			'postgres', q{
SELECT bool_and(b.epsilon_spent = (SELECT coalesce(sum(l.epsilon), 0) FROM dp_agg.ledger l
                                  WHERE l.role = b.role AND l.kind = 'charge'))
FROM dp_agg.budget b WHERE b.role IN ('a1'::regrole, 'a2'::regrole)}),
		't', "$what: the members' own budgets were charged for exactly their charges");
	return;
}

# 1. crash 0.1 s after a boundary, statements in flight
my @clients = start_clients();
sleep(5);
sleep_to_boundary(0.1);
crash_and_restart($node, sub { collect_clients(@clients) });
cmp_ok($seen{a1} + $seen{a2} + $seen{a3} + $seen{a4}, '>', 0, 'the clients released values');
check_windows('crash after a boundary');

# 2. crash 0.1 s before a boundary
@clients = start_clients();
sleep(5);
sleep_to_boundary(-0.1);
crash_and_restart($node, sub { collect_clients(@clients) });
check_windows('crash before a boundary');

# after the restarts, a charge counts in the current window (one that has
# just begun: the clients may have spent the window of the crash)
sleep_to_boundary(0.2);
is( $node->safe_psql(
		'postgres', q{
SET ROLE a1;
SELECT dp_count(x, 0.25) IS NOT NULL FROM t;
SELECT windows[2] = dp_agg_internal.window_start('4 seconds', 'UTC', at)
FROM dp_agg.my_ledger ORDER BY id DESC LIMIT 1}),
	"t\nt", 'a charge after the restarts counts in its own window');

# a refusal by a window says when the budget renews
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	'SET ROLE a2; SELECT dp_count(x, 3) FROM t',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like(
	$stderr,
	qr/PB001.*privacy budget of group "team" is exhausted.*HINT:  The budget renews at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d/s,
	'a refusal names the group and when its budget renews');

# 3. a member removed from a group in the middle of the group's window
$node->safe_psql(
	'postgres', q{
CREATE ROLE squad;
CREATE ROLE sub IN ROLE squad;
CREATE ROLE b1 IN ROLE squad;
CREATE ROLE b2 IN ROLE sub;
GRANT SELECT ON t TO b1, b2;
SELECT dp_agg.set_group_budget('squad', 1);
SELECT dp_agg.set_budget_window('squad', '1 year', 'UTC');
SELECT dp_agg.set_budget('b1', 10);
SELECT dp_agg.set_budget('b2', 10);
});
my $b1 = $node->background_psql('postgres', on_error_stop => 0);
$b1->query_safe('SET ROLE b1');
$b1->query_safe('PREPARE q AS SELECT dp_count(x, 0.25) IS NOT NULL FROM t');
is(bg_output($b1->query_safe('EXECUTE q')), 't', 'b1 releases, charged to the squad');
$node->safe_psql('postgres', 'SET ROLE b2; SELECT dp_count(x, 0.25) FROM t');
$node->safe_psql('postgres', 'REVOKE squad FROM b1; REVOKE squad FROM sub');
is(bg_output($b1->query_safe('EXECUTE q')), 't', 'b1 releases the prepared statement after leaving');
is(bg_output($b1->query_safe('SELECT dp_count(x, 0.25) IS NOT NULL FROM t')), 't',
	'and a new one');
$node->safe_psql('postgres', 'SET ROLE b2; SELECT dp_count(x, 0.25) FROM t');

my $squad_sql = q{
SELECT b.epsilon_spent || '|' ||
       (SELECT string_agg(s.role::text || ':' || s.statements, ',' ORDER BY s.role::text)
        FROM dp_agg.budget_spending s WHERE s.budget = b.id) || '|' ||
       (SELECT string_agg(l.role::text || ':' || (b.id = ANY (l.budgets)), ',' ORDER BY l.id)
        FROM dp_agg.ledger l WHERE l.role IN ('b1'::regrole, 'b2'::regrole)) || '|' ||
       (SELECT string_agg(x.role::text || ':' || x.epsilon_spent, ',' ORDER BY x.role::text)
        FROM dp_agg.budget x WHERE x.role IN ('b1'::regrole, 'b2'::regrole))
FROM dp_agg.budget b WHERE b.role = 'squad'::regrole};
my $expect = '0.5|b1:1,b2:1|b1:true,b2:true,b1:false,b1:false,b2:false|b1:0.75,b2:0.5';
is($node->safe_psql('postgres', $squad_sql), $expect,
	'the squad keeps the charges of its former members in its window, and pays for none after');
is( bg_output($b1->query_safe(
		q{SELECT string_agg(kind || ':' || role::text, ',' ORDER BY budget) FROM dp_agg.my_budget})),
	'role:b1', "b1's views no longer show the squad's budget");
$b1->quit;
crash_and_restart($node);
is($node->safe_psql('postgres', $squad_sql), $expect, 'the same after a crash');
$node->safe_psql('postgres', 'GRANT squad TO b1');
is( $node->safe_psql(
		'postgres', q{
SET ROLE b1;
SELECT dp_count(x, 0.25) IS NOT NULL FROM t;
SELECT kind || ':' || epsilon_spent FROM dp_agg.my_budget WHERE kind = 'group'}),
	"t\ngroup:0.75", 'back in the squad, b1 is charged to it again');

$node->stop;
done_testing();
