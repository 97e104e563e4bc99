# dp_agg: helpers shared by the TAP tests in test/t.
#
#   use FindBin;
#   use lib $FindBin::RealBin;
#   use DpAggTest;
#
# Nodes: preloaded_node (dp_agg in shared_preload_libraries), crash_test_node
# (and durable settings).  Set-up: create_budget_roles (the extension, the
# table t, roles and their budgets).  The steps of the durability tests
# (001, 006, 010, 011): release_then_crash, release_in_open_transaction,
# release_times, refused, kill_charger; budget_state, charger_pid.  Crashes:
# crash_and_restart, wait_for_crash_restart.  Helpers that assert say so:
# each assertion is one test of the calling file, named as given.
package DpAggTest;

use strict;
use warnings;

use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT = qw(preloaded_node crash_test_node create_budget_roles budget_state
  charger_pid crash_and_restart bg_output wait_for_crash_restart
  release_then_crash release_in_open_transaction release_times refused
  kill_charger);

# a node with dp_agg in shared_preload_libraries, started unless
# start => 0; conf => more lines of postgresql.conf, init => the arguments
# of init (such as allows_streaming => 1)
sub preloaded_node
{
	my ($name, %opt) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%{ $opt{init} // {} });
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'dp_agg'\n" . ($opt{conf} // ''));
	$node->start if $opt{start} // 1;
	return $node;
}

# a started node for crash tests: dp_agg preloaded, fsync on (durability is
# what is tested) but synchronous_commit off (the charger must force it on
# for its own commits), restarts after a crash, a charger that stays up
sub crash_test_node
{
	my ($name) = @_;
	return preloaded_node(
		$name, conf => q{
fsync = on
synchronous_commit = off
restart_after_crash = on
dp_agg.charger_idle_timeout = '10min'
});
}

# in database postgres: CREATE EXTENSION dp_agg, a table t of the integers
# 1 .. 1000 (column x), and for each role (name => the arguments of
# dp_agg.set_budget after the role, such as "5, 1e-5, 'rdp'") the role,
# SELECT on t and its budget; roles in the order given
sub create_budget_roles
{
	my ($node, @budgets) = @_;
	my ($roles, $set) = ('', '');
	my @names;
	while (my ($role, $args) = splice(@budgets, 0, 2))
	{
		push @names, $role;
		$roles .= "CREATE ROLE $role;\n";
		$set .= "SELECT dp_agg.set_budget('$role', $args);\n";
	}
	$node->safe_psql('postgres',
		    "CREATE EXTENSION dp_agg;\n$roles"
		  . "CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 1000) g;\n"
		  . 'GRANT SELECT ON t TO ' . join(', ', @names) . ";\n$set");
	return;
}

# the pid of the charger of a node ('' if none runs)
sub charger_pid
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'dp_agg charger'});
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

# Asserts that $got equals $expected, or matches it if it is a qr//.
sub is_or_like
{
	my ($got, $expected, $name) = @_;
	return ref $expected eq 'Regexp'
	  ? like($got, $expected, $name)
	  : is($got, $expected, $name);
}

# Runs $sql (which releases: SET ROLE ...; SELECT ...) in its own session
# and asserts that its output is $expected (a string, or a qr//): the value
# has reached the client.  Then kills every server process and restarts
# (crash_and_restart).
sub release_then_crash
{
	my ($node, $sql, $expected, $name) = @_;
	is_or_like(bg_output($node->safe_psql('postgres', $sql)), $expected, $name);
	crash_and_restart($node);
	return;
}

# Runs $sql as $role in a transaction that stays open (it never commits)
# and asserts that its output is $expected: the value has reached the
# client.  Then kills every server process and restarts, ending that
# session with the server.
sub release_in_open_transaction
{
	my ($node, $role, $sql, $expected, $name) = @_;
	my $bg = $node->background_psql('postgres', on_error_stop => 0);
	$bg->query_safe('BEGIN');
	$bg->query_safe("SET ROLE $role");
	is_or_like(bg_output($bg->query_safe($sql)), $expected, $name);
	crash_and_restart($node);
	eval { $bg->quit; };
	return;
}

# Runs $select, a statement that stores one value INTO v (bigint), $n
# times in one DO block, after $setup (SET ROLE ..., settings): many
# releases in one session, each charged as usual.
sub release_times
{
	my ($node, $setup, $select, $n) = @_;
	$node->safe_psql(
		'postgres', qq{$setup
DO \$\$ DECLARE v bigint; BEGIN
    FOR i IN 1 .. $n LOOP $select; END LOOP;
END \$\$;
});
	return;
}

# Runs $sql and asserts that it fails with an error whose verbose text
# (with its SQLSTATE) matches $error, under the name $name, and that it
# printed nothing (the test "nothing released").
sub refused
{
	my ($node, $sql, $error, $name) = @_;
	my ($ret, $stdout, $stderr) = $node->psql('postgres', $sql,
		extra_params => [ '-v', 'VERBOSITY=verbose' ]);
	like($stderr, $error, $name);
	is($stdout, '', 'nothing released');
	return;
}

# kill -9 of the charger alone: the postmaster restarts every process
# (crash recovery).  Asserts that one charger runs ("one charger runs")
# and that the server accepts connections again after the restart ("the
# server restarted after the charger was killed").
sub kill_charger
{
	my ($node) = @_;
	my $charger = charger_pid($node);
	like($charger, qr/^\d+$/, 'one charger runs');
	my $log_offset = -s $node->logfile;
	kill 'KILL', $charger;
	ok(wait_for_crash_restart($node, $log_offset),
		'the server restarted after the charger was killed');
	return;
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
