# dp_agg: helpers shared by the TAP tests in test/t.
#
#   use FindBin;
#   use lib $FindBin::RealBin;
#   use DpAggTest;
package DpAggTest;

use strict;
use warnings;

use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT =
  qw(crash_test_node budget_state crash_and_restart bg_output wait_for_crash_restart);

# a started node for crash tests: dp_agg preloaded, fsync on (durability is
# what is tested) but synchronous_commit off (the charger must force it on
# for its own commits), restarts after a crash, a charger that stays up
sub crash_test_node
{
	my ($name) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf(
		'postgresql.conf', q{
shared_preload_libraries = 'dp_agg'
fsync = on
synchronous_commit = off
restart_after_crash = on
dp_agg.charger_idle_timeout = '10min'
});
	$node->start;
	return $node;
}

# the output of a BackgroundPsql query.  The BackgroundPsql of early
# PostgreSQL 16 minor releases (16.2 here) leaves a final newline, or after
# an error its own separator line, in the output; later ones do not.
sub bg_output
{
	my ($out) = @_;
	$out =~ s/\n\z//;
	$out =~ s/\n?background_psql: QUERY_SEPARATOR\z//;
	return $out;
}

# spent|number of charges|sum of the charges of a role, on a node
sub budget_state
{
	my ($node, $role) = @_;
	$role //= 'analyst';
	return $node->safe_psql(
		'postgres', qq{
SELECT b.epsilon_spent || '|' || count(l.id) || '|' || coalesce(sum(l.epsilon), 0)
FROM dp_agg.budget b
LEFT JOIN dp_agg.ledger l ON l.role = b.role AND l.kind = 'charge'
WHERE b.role = '$role'::regrole
GROUP BY b.epsilon_spent});
}

# the state of a process (Z: a zombie) and the pid of its parent, from /proc
sub proc_stat
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/stat") or return;
	my $stat = <$fh>;
	close $fh;
	return unless defined $stat && $stat =~ /^\d+ \(.*\) (\S) (\d+)/s;
	return ($1, $2);
}

# the processes whose parent is $ppid
sub children_of
{
	my ($ppid) = @_;
	opendir(my $dh, '/proc') or die "cannot read /proc: $!";
	my @pids = grep { /^\d+$/ } readdir $dh;
	closedir $dh;
	return grep {
		my ($state, $parent) = proc_stat($_);
		defined $parent && $parent == $ppid
	} @pids;
}

# wait until the postmaster has restarted every process after one of them
# crashed (not killed by crash_and_restart) and accepts connections again;
# true if it does within $timeout seconds.  Each try in an eval: while the
# server refuses connections psql may exit before reading its query, and
# IPC::Run dies of the broken pipe (poll_query_until does not survive it).
sub wait_for_crash_restart
{
	my ($node, $log_offset, $timeout) = @_;
	$timeout //= $PostgreSQL::Test::Utils::timeout_default;
	$node->wait_for_log(qr/all server processes terminated; reinitializing/,
		$log_offset);
	for (1 .. $timeout * 10)
	{
		my $up = eval { $node->safe_psql('postgres', 'SELECT 1') eq '1' };
		return 1 if $up;
		usleep(100_000);
	}
	return 0;
}

# kill -9 the postmaster and every child at once, wait until they are all
# gone, run $while_down if given, start again (crash recovery)
sub crash_and_restart
{
	my ($node, $while_down) = @_;
	my $pidfile = $node->data_dir . '/postmaster.pid';
	my ($pm) = slurp_file($pidfile) =~ /^(\d+)/;
	my @children = children_of($pm);
	$node->kill9;
	kill 'KILL', @children;
	# the children must have exited (zombies have: they hold no shared memory)
	foreach my $pid (@children)
	{
		my $tries = 0;
		while ($tries++ < 300)
		{
			my ($state) = proc_stat($pid);
			last if !defined $state || $state eq 'Z';
			usleep(100_000);
		}
	}
	# the new postmaster refuses to start while the old PID exists: wait
	# until the old one has been reaped; if nobody reaps it (an init that
	# does not), its postmaster.pid is stale: remove it
	my $tries = 0;
	while (defined((proc_stat($pm))[0]) && $tries++ < 300)
	{
		usleep(100_000);
	}
	if (defined((proc_stat($pm))[0]))
	{
		note "the killed postmaster $pm was not reaped; removing $pidfile";
		unlink $pidfile;
	}
	$while_down->() if defined $while_down;
	$node->start;
	return;
}

1;
