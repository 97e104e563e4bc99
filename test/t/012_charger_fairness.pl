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
# Measured in four pairs of 6-second periods, in the order alone, beside,
# beside, alone, alone, ... (so that a drift of the machine's speed weighs
# on both sides alike).  Asserted, on the medians of the pairs:
# the bystander's throughput beside the attacker is above 80% of its
# throughput alone, and the 99th percentile of its latencies beside the
# attacker (every transaction of the four periods) is under 50 ms.  And
# the attacker did compose: it was admitted beyond its basic composition,
# refused, and cancelled.
#
# Why it holds: the charger never composes (src/charger.c, admits): its work
# per request is a comparison of counts.  The attacker's compositions run
# in its own backends, one at a time per role (src/budget.c), so they keep
# at most one CPU busy; the bystander's statement, its backend and the
# charger have the other.  Assumptions (stated, not checked): at least two
# CPUs, and no other heavy load on the machine while the test runs (CI's
# machine: two CPUs, one test at a time).  Without the fix the bystander
# waited seconds for every composition the charger ran (issue: 1,454 ->
# 8 statements per second).
use strict;
use warnings;

use IPC::Run;
use List::Util qw(sum);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);

my $period = 6;    # seconds of each measured period
my $pairs = 4;

my $node = PostgreSQL::Test::Cluster->new('fairness');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'dp_agg'
fsync = on
dp_agg.charger_idle_timeout = '10min'
});
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION dp_agg;
CREATE ROLE attacker;
CREATE ROLE bystander;
CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 1000) g;
GRANT SELECT ON t TO attacker, bystander;
SELECT dp_agg.set_budget('attacker', 5, 1e-5, 'pld');
SELECT dp_agg.set_budget('bystander', 1e12, 0.5);
});

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

# one period of the bystander: (tps, latencies in ms)
sub bystander_period
{
	my ($tag) = @_;
	my ($out, $err) = ('', '');
	my $prefix = "$dir/log_$tag";
	IPC::Run::run(
		[
			'pgbench', '-n', '-c', '1', '-T', $period, '-f',
			"$dir/bystander.sql", '--log', "--log-prefix=$prefix",
			'-d', $node->connstr('postgres') . " options='-c role=bystander'"
		],
		'>', \$out, '2>', \$err,
		IPC::Run::timeout(10 * $period))
	  or die "pgbench failed: $err";
	my ($tps) = $out =~ /tps = ([0-9.]+) \(without initial connection time\)/;
	die "no tps in pgbench's output: $out" unless defined $tps;
	die "pgbench reported failures: $out" if $out =~ /number of failed transactions: [1-9]/;
	my @lat;
	for my $log (glob("$prefix*"))
	{
		open(my $lfh, '<', $log) or die;
		while (<$lfh>)
		{
			my @f = split;
			push @lat, $f[2] / 1000.0;
		}
		close $lfh;
		unlink $log;
	}
	return ($tps, \@lat);
}

# the attackers and the DBA's resets, in the background; their errors go to files
my $run = 0;

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

# stop them; their errors
sub stop_attackers
{
	my ($hs) = @_;
	my $errors = '';
	$_->kill_kill for @$hs;
	for my $f (glob("$dir/*.$run.*.err"))
	{
		open(my $efh, '<', $f) or die;
		local $/;
		$errors .= <$efh> // '';
		close $efh;
	}
	return $errors;
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

my (@solo, @shared, @lat_shared, @lat_solo);
my $attacker_errors = '';

sub solo_period
{
	my ($tag) = @_;
	my ($tps, $lat) = bystander_period($tag);
	push @solo, $tps;
	push @lat_solo, @$lat;
}

sub shared_period
{
	my ($tag) = @_;
	my $att = start_attackers();
	sleep 2;    # the attacker is composing
	my ($tps, $lat) = bystander_period($tag);
	push @shared, $tps;
	push @lat_shared, @$lat;
	$attacker_errors .= stop_attackers($att);
}

bystander_period('warm');
# alone, beside, beside, alone, ...: a drift of the machine's speed
# weighs on both sides alike
for my $pair (1 .. $pairs)
{
	if ($pair % 2)
	{
		solo_period("solo$pair");
		shared_period("shared$pair");
	}
	else
	{
		shared_period("shared$pair");
		solo_period("solo$pair");
	}
	note sprintf("pair %d: bystander alone %.0f tps, beside the attacker %.0f tps",
		$pair, $solo[-1], $shared[-1]);
}

my $ratio = median(@shared) / median(@solo);
my $p99 = p99(@lat_shared);
note sprintf(
	"bystander: alone %s tps (p99 %.1f ms), beside the attacker %s tps (p99 %.1f ms); ratio of medians %.3f",
	join(', ', map { sprintf('%.0f', $_) } @solo),
	p99(@lat_solo),
	join(', ', map { sprintf('%.0f', $_) } @shared),
	$p99, $ratio);
cmp_ok($ratio, '>', 0.8,
	'the bystander keeps more than 80% of its throughput beside the attacker');
cmp_ok($p99, '<', 50, "the bystander's p99 latency beside the attacker is under 50 ms");

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
