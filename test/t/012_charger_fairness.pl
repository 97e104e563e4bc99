# dp_agg: no role delays another role's charges.  A 'pld' role composing
# privacy loss distributions as fast as it can does not slow down the DP
# statements of a bystander role in the same database.
#
# The attacker (accounting 'pld', limits (5, 1e-5)) runs, in two sessions,
# statements of 50 kinds of releases (Laplace counts and sums at 50
# epsilons, so 50 noise scales) in a cycle of shapes: admitted ones, ones
# refused once its budget is exhausted, and ones cancelled by a
# statement_timeout of 50 ms in the middle of their composition.  Its budget
# is reset every second, so that its history keeps growing again and every
# new shape needs a composition.  The bystander (accounting 'basic') runs
# one simple DP statement after another (pgbench, one client).
#
# Measured over 64 seconds in which the bystander runs without a pause and
# the attacker is stopped and continued every 4 seconds (details below).
# Asserted, on the medians of the windows: the bystander's throughput
# beside the attacker is above 80% of its throughput alone, and the 99th
# percentile of its latencies beside the attacker (every transaction of
# those windows) is under 50 ms.  And
# the attacker did compose: it was admitted beyond its basic composition,
# refused, and cancelled.
#
# Why it holds: the charger never composes (src/accounting/charger.c, admits): its work
# per request is a comparison of counts.  The attacker's compositions run
# in its own backends, one at a time per role (src/accounting/budget.c), so they keep
# at most one CPU busy; the bystander's statement, its backend and the
# charger have the other.  Assumptions: at least two CPUs, and no other
# heavy load on the machine while the test runs (CI's machine: two CPUs, one
# test at a time).  The second is checked: when the load average before the
# measurement exceeds the number of CPUs (other work keeps them busy, and
# every extra process, the attacker's too, then takes a share of the
# bystander's CPU time), the 80% assertion is skipped with its measured
# value, and only a ratio above 25% is asserted, and the p99 latency beside
# the attacker is held to at most 3 times the p99 alone (or 50 ms); the
# other assertions always run.  Before the charger stopped composing, the
# bystander waited seconds for every composition the charger ran (1,454 ->
# 8 statements per second, waits up to 7.8 s): both assertions fail then.
use strict;
use warnings;

use IPC::Run;
use List::Util qw(sum);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);

use FindBin;
use lib $FindBin::RealBin;
use DpAggTest qw(preloaded_node create_budget_roles);

my $node = preloaded_node(
	'fairness', conf => q{
fsync = on
dp_agg.charger_idle_timeout = '10min'
});
create_budget_roles($node,
	attacker => "5, 1e-5, 'pld'",
	bystander => '1e12, 0.5');

my $dir = PostgreSQL::Test::Utils::tempdir;

# the bystander's statement
open(my $fh, '>', "$dir/bystander.sql") or die;
print $fh "SELECT dp_count(x, 0.01) FROM t;\n";
close $fh;

# the attacker's script: 50 kinds of releases, one cycle of shapes after
# another; every third statement under a timeout of 50 ms.  psql goes on
# after errors (refusals, cancels).
open($fh, '>', "$dir/attacker.sql") or die;
print $fh "SET ROLE attacker;\n";
for my $round (1 .. 400)
{
	for my $k (10 .. 59)
	{
		my $j = 10 + ($k * 7 + $round) % 50;
		print $fh ($k % 3 == 0)
		  ? "SET statement_timeout = '50ms';\n"
		  : "SET statement_timeout = 0;\n";
		print $fh ($k % 2 == 0)
		  ? "SELECT dp_count(x, 0.$k) FROM t;\n"
		  : "SELECT dp_count(x, 0.$k), dp_sum(x, 0, 10, 0.$j) FROM t;\n";
	}
}
close $fh;

# the DBA resets the attacker's budget every second
open($fh, '>', "$dir/reset.sql") or die;
print $fh "SELECT dp_agg.reset_budget('attacker');\nSELECT pg_sleep(1);\n" for 1 .. 600;
close $fh;

# The bystander runs without a pause for the whole measurement (pgbench,
# one client, every transaction logged with the time it ended), while the
# attacker's sessions are stopped and continued (SIGSTOP, SIGCONT on their
# clients) in windows of $window seconds: off, on, off, on, ...  The first
# second of each window is not counted (a statement the attacker had
# started finishes in it).  Throughput is counted per window; the ratio is
# that of the medians of the on and the off windows, so that the load of
# the machine, which drifts over seconds to minutes, weighs on both alike.
my $window = 4;
my $windows = 16;
my $guard = 1;

my $run = 0;

# the attackers and the DBA's resets, in the background; their errors go to files
sub start_attackers
{
	my @h;
	$run++;
	for my $script ('attacker', 'attacker', 'reset')
	{
		push @h,
		  IPC::Run::start(
			[
				'psql', '-X', '-q', '-d', $node->connstr('postgres'),
				'-f', "$dir/$script.sql"
			],
			'>', '/dev/null', '2>', "$dir/$script.$run." . scalar(@h) . ".err");
	}
	return \@h;
}

# the pids of the attackers' clients
sub client_pids
{
	my ($hs) = @_;
	return map { map { $_->{PID} } @{ $_->{KIDS} } } @$hs;
}

sub median
{
	my @v = sort { $a <=> $b } @_;
	return $v[ int(@v / 2) ];
}

sub p99
{
	my @v = sort { $a <=> $b } @_;
	return $v[ int(0.99 * (@v - 1) + 0.5) ];
}

# the load of the machine before the test adds its own (1-minute average)
my ($load_before) = split ' ', slurp_file('/proc/loadavg');
my $ncpu = () = slurp_file('/proc/cpuinfo') =~ /^processor\s*:/mg;
note "load average $load_before on $ncpu CPUs before the measurement";

my $att = start_attackers();
my @pids = client_pids($att);
kill 'STOP', @pids;
my $total = $window * $windows + 2;
my $bystander = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '1', '-T', $total, '-f',
		"$dir/bystander.sql", '--log', "--log-prefix=$dir/bystander",
		'-d', $node->connstr('postgres') . " options='-c role=bystander'"
	],
	'>', "$dir/bystander.out", '2>', "$dir/bystander.err",    # files: pipes would fill
	IPC::Run::timeout(10 * $total));
sleep 2;    # the bystander is connected and running
my @edges;
for my $w (0 .. $windows - 1)
{
	my $on = $w % 2;
	kill($on ? 'CONT' : 'STOP', @pids);
	push @edges, [ time(), $on ];
	Time::HiRes::sleep($window);
}
push @edges, [ time(), -1 ];
kill 'CONT', @pids;
$bystander->finish or die "pgbench failed: " . slurp_file("$dir/bystander.err");
my $out = slurp_file("$dir/bystander.out");
die "pgbench reported failures: $out" if $out =~ /number of failed transactions: [1-9]/;
$_->kill_kill for @$att;
my $attacker_errors = '';
for my $f (glob("$dir/*.err"))
{
	open(my $efh, '<', $f) or die;
	local $/;
	$attacker_errors .= <$efh> // '';
	close $efh;
}

# the bystander's transactions by window: (end time, latency in ms)
my @tx;
for my $log (glob("$dir/bystander*"))
{
	next if $log =~ /\.(sql|out|err)$/;
	open(my $lfh, '<', $log) or die;
	while (<$lfh>)
	{
		# client_id transaction_no time script_no time_epoch time_us
		my @f = split;
		push @tx, [ $f[4] + $f[5] / 1e6, $f[2] / 1000.0 ];
	}
	close $lfh;
}
note sprintf("%d bystander transactions logged, from %.1f to %.1f; windows from %.1f to %.1f",
	scalar(@tx), (@tx ? $tx[0][0] : 0), (@tx ? $tx[-1][0] : 0), $edges[0][0], $edges[-1][0]);
my (@rate_on, @rate_off, @lat_on, @lat_off);
for my $w (0 .. $windows - 1)
{
	my ($from, $on) = @{ $edges[$w] };
	my $to = $edges[ $w + 1 ][0];
	my @in = grep { $_->[0] >= $from + $guard && $_->[0] < $to } @tx;
	my $rate = @in / ($to - $from - $guard);
	if ($on)
	{
		push @rate_on, $rate;
		push @lat_on, map { $_->[1] } @in;
	}
	else
	{
		push @rate_off, $rate;
		push @lat_off, map { $_->[1] } @in;
	}
}
my $ratio = median(@rate_off) > 0 ? median(@rate_on) / median(@rate_off) : 0;
my $p99 = p99(@lat_on);
note sprintf(
	"bystander per window: alone %s tps (p99 %.1f ms), beside the attacker %s tps (p99 %.1f ms); ratio of medians %.3f",
	join(', ', map { sprintf('%.0f', $_) } @rate_off),
	p99(@lat_off),
	join(', ', map { sprintf('%.0f', $_) } @rate_on),
	$p99, $ratio);
cmp_ok($ratio, '>', 0.25, 'the bystander is never starved beside the attacker');
SKIP:
{
	# the assumption, checked: the machine had no other heavy load
	skip "the machine was busy with other work (load average $load_before on $ncpu CPUs); "
	  . "the throughput ratio was $ratio", 1
	  if $load_before > $ncpu + 0.5;
	cmp_ok($ratio, '>', 0.8,
		'the bystander keeps more than 80% of its throughput beside the attacker');
}
if ($load_before > $ncpu + 0.5)
{
	# a busy machine stretches every latency: the attacker must not stretch
	# the bystander's tail much beyond what the machine does alone (a
	# composition in the charger made it seconds)
	my $bound = 3 * p99(@lat_off) > 50 ? 3 * p99(@lat_off) : 50;
	cmp_ok($p99, '<', $bound,
		"the bystander's p99 latency beside the attacker is under max(50 ms, 3 times alone) (busy machine)");
}
else
{
	cmp_ok($p99, '<', 50, "the bystander's p99 latency beside the attacker is under 50 ms");
}

# the attacker did what it was meant to: composed (admitted beyond basic
# composition), was refused and was cancelled
my $refused = () = $attacker_errors =~ /privacy budget of role "attacker" is exhausted/g;
my $cancelled = () = $attacker_errors =~ /canceling statement due to statement timeout/g;
note "attacker: $refused refusals and $cancelled cancels";
ok($refused > 0,   'the attacker was refused');
ok($cancelled > 0, 'the attacker was cancelled');
my $beyond = $node->safe_psql(
	'postgres', q{
SELECT count(*) > 0 FROM dp_agg.ledger l
WHERE l.role = 'attacker'::regrole AND l.kind = 'charge'
  AND (SELECT sum(epsilon) FROM dp_agg.ledger m
       WHERE m.role = l.role AND m.kind = 'charge' AND m.id <= l.id
         AND m.id > coalesce((SELECT max(id) FROM dp_agg.ledger r
                              WHERE r.role = l.role AND r.kind = 'reset' AND r.id < l.id), 0)) > 5});
is($beyond, 't', 'the attacker was admitted beyond basic composition');
is( $node->safe_psql(
		'postgres',
		q{SELECT pld_frontier ? 'fit' FROM dp_agg.budget WHERE role = 'attacker'::regrole}),
	't',
	"the attacker's backends composed a frontier");
unlike($attacker_errors, qr/could not charge|charger exited|FATAL|PANIC/,
	'the attacker saw no error but refusals and cancels');

# no charge lost or invented: the bystander's budget is the sum of its ledger
is( $node->safe_psql(
		'postgres', q{
SELECT abs(b.epsilon_spent - (SELECT sum(epsilon) FROM dp_agg.ledger l
                              WHERE l.role = b.role AND l.kind = 'charge')) < 1e-6
FROM dp_agg.budget b WHERE b.role = 'bystander'::regrole}),
	't',
	"the bystander's spent epsilon is the sum of its charges");

$node->stop;
done_testing();
