# dp_agg: killing the charger or the backends that wait for it, at several
# points, never releases an unpaid value, never loses a paid one, and never
# leaves a statement hanging.
#
# Each releasing statement carries a tag in its text ('k-...'), which the
# ledger records, so that after every scenario we can check:
#   no over-release: every statement that returned a value has a ledger row;
#   no lost charge: the same, after a crash restart (the charger commits
#     before it answers);
#   consistency: the budget's spent epsilon is the sum of the ledger's
#     charges (charges are multiples of 2^-10, so the sums are exact);
#   no hang: every statement returns or fails within its timeout.
# A statement whose charger died while holding its request may be charged
# without releasing (an over-charge, never an under-charge): the checks
# allow ledger rows of statements that failed.
#
# Kill points: an idle charger (SIGTERM, SIGKILL); a charger inside its
# transaction with several requests, blocked on the budget row that a DBA
# session holds (SIGTERM, SIGKILL); a backend terminated while it waits,
# whose request slot a new backend then reuses; and charger and backends
# killed at random moments under load from four clients, which hits the
# points between commit and reply that cannot be reached deterministically.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;

# seconds within which every statement must return or fail
my $statement_timeout = 60;

my $node = crash_test_node('charger_kill');
create_budget_roles($node, analyst => '100000');

# the tags of the statements that returned a value
my @released;

sub release_sql
{
	my ($tag) = @_;
	return
	  "SET ROLE analyst; SELECT 'k-$tag' AS tag, dp_count(x, 0.0078125) IS NOT NULL FROM t";
}

# a release in a session of its own, in the background: returns its handle
sub start_release
{
	my ($tag) = @_;
	my ($stdout, $stderr) = ('', '');
	my $h = IPC::Run::start(
		[
			'psql', '-X', '-At', '-d', $node->connstr('postgres'),
			'-c', release_sql($tag)
		],
		'>', \$stdout, '2>', \$stderr,
		IPC::Run::timeout($statement_timeout));
	return { h => $h, tag => $tag, out => \$stdout, err => \$stderr };
}

# wait for a background release; true if it returned a value
sub finish_release
{
	my ($r) = @_;
	eval { $r->{h}->finish; };
	ok(!$@, "statement $r->{tag} returned or failed in time")
	  or $r->{h}->kill_kill;
	my $released = ${ $r->{out} } =~ /^k-\Q$r->{tag}\E\|t$/m;
	push @released, $r->{tag} if $released;
	return $released;
}

sub release_now
{
	my ($tag) = @_;
	return finish_release(start_release($tag));
}

# n charger waits for the budget row lock, or backends for the charger
sub waiting_backends
{
	my ($n) = @_;
	return $node->poll_query_until(
		'postgres', qq{SELECT count(*) = $n FROM pg_stat_activity
		   WHERE query LIKE '%k-%' AND wait_event_type = 'Extension'});
}

# the checks of the head comment
sub check_ledger
{
	my ($label) = @_;
	my $list = join(',', map { "'k-$_'" } @released) || 'NULL';
	my $missing = $node->safe_psql(
		'postgres', qq{
SELECT coalesce(string_agg(tag, ' '), '') FROM unnest(ARRAY[$list]::text[]) tag
WHERE tag IS NOT NULL AND NOT EXISTS
  (SELECT 1 FROM dp_agg.ledger l WHERE l.kind = 'charge'
     AND strpos(l.query, '''' || tag || '''') > 0)});
	is($missing, '', "$label: every released value is in the ledger");
	my ($spent, $n, $sum) = split /\|/, budget_state($node);
	is($spent, $sum, "$label: spent equals the sum of the ledger ($n charges)");
	cmp_ok($n, '>=', scalar(@released),
		"$label: at least one charge per released value");
	return;
}

# --- 1. an idle charger, SIGTERM: a new one starts on demand ---
ok(release_now('idle-term-1'), 'a release starts the charger');
my $pid = charger_pid($node);
like($pid, qr/^\d+$/, 'one charger runs');
kill 'TERM', $pid;
ok( $node->poll_query_until(
		'postgres', q{SELECT count(*) = 0 FROM pg_stat_activity
		   WHERE backend_type = 'dp_agg charger'}),
	'the idle charger exits on SIGTERM');
ok(release_now('idle-term-2'), 'the next release starts another charger');
check_ledger('idle charger, SIGTERM');

# --- 2. an idle charger, SIGKILL: the postmaster restarts every process ---
my $log_offset = -s $node->logfile;
kill 'KILL', charger_pid($node);
ok(wait_for_crash_restart($node, $log_offset, $statement_timeout), 'the server restarts after kill -9 of the charger');
ok(release_now('idle-kill'), 'releases work after the restart');
check_ledger('idle charger, SIGKILL');

# --- 3 and 4. a charger blocked inside its batch, with three requests ---
# The DBA locks the budget row, so the charger's transaction waits for it
# while it holds the requests it took (the first, or more in one batch; the
# others stay pending): a kill there cannot have committed.
sub blocked_batch
{
	my ($signal, $label) = @_;
	my $before = budget_state($node);
	my $dba = $node->background_psql('postgres');
	$dba->query_safe('BEGIN');
	$dba->query_safe(
		q{SELECT 1 FROM dp_agg.budget WHERE role = 'analyst'::regrole FOR UPDATE});
	my @r = map { start_release("$label-$_") } 1 .. 3;
	ok( $node->poll_query_until(
			'postgres', q{SELECT count(*) = 1 FROM pg_stat_activity
			   WHERE backend_type = 'dp_agg charger' AND wait_event_type = 'Lock'}),
		"$label: the charger waits for the budget row");
	ok(waiting_backends(3), "$label: three statements wait for the charger");
	my $offset = -s $node->logfile;
	my $charger = charger_pid($node);
	kill $signal, $charger;
	if ($signal eq 'KILL')
	{
		ok(wait_for_crash_restart($node, $offset, $statement_timeout), "$label: the server restarted");
		my $n_released = grep { finish_release($_) } @r;
		is($n_released, 0, "$label: no statement released a value");
		eval { $dba->quit; };
		is(budget_state($node), $before,
			"$label: the uncommitted batch charged nothing");
	}
	else
	{
		# the requests the charger held fail; those still pending go to
		# the next charger, which waits for the DBA like the first
		ok( $node->poll_query_until(
				'postgres', qq{SELECT count(*) = 0 FROM pg_stat_activity
				   WHERE pid = $charger}),
			"$label: the charger exits");
		$dba->query_safe('COMMIT');
		$dba->quit;
		my $n_released = grep { finish_release($_) } @r;
		my $n_failed =
		  grep { ${ $_->{err} } =~ /the dp_agg charger exited while charging this statement/ }
		  @r;
		cmp_ok($n_failed, '>=', 1,
			"$label: the statements the charger held fail with its exit");
		is($n_released + $n_failed, 3,
			"$label: the others are released ($n_released)");
		my ($spent, $n) = split /\|/, budget_state($node);
		my ($spent0, $n0) = split /\|/, $before;
		is($n, $n0 + $n_released,
			"$label: only the released statements are charged");
	}
	ok(release_now("$label-after"), "$label: releases work again");
	check_ledger($label);
	return;
}
blocked_batch('TERM', 'batch-term');
blocked_batch('KILL', 'batch-kill');

# --- 5. a backend terminated while it waits; a new one takes its slot ---
# The charger holds the terminated backend's request until the DBA lets
# go; one of the backends connecting right after most likely gets its
# PGPROC (PostgreSQL 15 hands out the most recently freed one), and with it
# its request slot: each must get its own reply, not the dead one's.
{
	my $dba = $node->background_psql('postgres');
	$dba->query_safe('BEGIN');
	$dba->query_safe(
		q{SELECT 1 FROM dp_agg.budget WHERE role = 'analyst'::regrole FOR UPDATE});
	my $victim = start_release('victim');
	ok(waiting_backends(1), 'the victim waits for the charger');
	is( $node->safe_psql(
			'postgres', q{SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			   WHERE query LIKE '%k-victim%' AND pid <> pg_backend_pid()}),
		't',
		'the waiting victim is terminated');
	ok(!finish_release($victim), 'the terminated statement released nothing');
	my @next = map { start_release("reuse-$_") } 1 .. 3;
	ok(waiting_backends(3), 'the next statements wait');
	$dba->query_safe('COMMIT');
	$dba->quit;
	my $n_released = grep { finish_release($_) } @next;
	is($n_released, 3, 'each of the next statements is released');
	check_ledger('terminated backend');
	is( $node->safe_psql(
			'postgres', q{SELECT count(*) FROM dp_agg.ledger
			   WHERE query LIKE '%k-reuse-%'}),
		'3',
		'each of the next statements is charged once');
}

# --- 6. random kills under load ---
# Four clients release in a loop, one session per statement (a crash
# restart ends sessions); meanwhile the charger gets SIGTERM eight times
# and SIGKILL twice, and a waiting backend SIGTERM, at random moments.
{
	my $clients = 4;
	my $per_client = 60;
	my @h;
	my @out;
	local $ENV{DSN} = $node->connstr('postgres');
	for my $c (1 .. $clients)
	{
		my $script = '';
		for my $i (1 .. $per_client)
		{
			my $sql = release_sql("load-$c-$i");
			$script .=
			  "timeout $statement_timeout psql -X -At -d \"\$DSN\" -c \"$sql\" 2>/dev/null;"
			  . " [ \$? = 124 ] && echo TIMEOUT;\n";
		}
		my $out = '';
		push @out, \$out;
		push @h, IPC::Run::start([ 'bash', '-c', $script ], '>', \$out);
	}
	for my $round (1 .. 10)
	{
		usleep(100_000 + int(rand(400_000)));
		my $p = charger_pid($node);
		next unless $p =~ /^\d+$/;
		if ($round == 4 || $round == 8)
		{
			my $offset = -s $node->logfile;
			wait_for_crash_restart($node, $offset, $statement_timeout) if kill 'KILL', $p;
		}
		else
		{
			kill 'TERM', $p;
		}
		$node->safe_psql('postgres',
			q{SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			  WHERE query LIKE '%k-load-%' AND wait_event_type = 'Extension'
			    AND pid <> pg_backend_pid() LIMIT 1});
	}
	$_->finish for @h;
	my $all = join('', map { $$_ } @out);
	unlike($all, qr/TIMEOUT/, 'under random kills, no statement hung');
	my @tags = $all =~ /^k-(load-\d+-\d+)\|t$/mg;
	push @released, @tags;
	note scalar(@tags) . " of " . ($clients * $per_client)
	  . " statements released under random kills";
	cmp_ok(scalar(@tags), '>', 0, 'some statements were released under random kills');
	check_ledger('random kills');
}

# --- 7. a clean shutdown and restart loses no charge ---
$node->restart;
check_ledger('after restart');

$node->stop;
done_testing();
