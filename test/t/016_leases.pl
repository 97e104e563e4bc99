# dp_agg: charges decided in the backends on leased budgets
# (src/accounting/lease.c, dp_agg.lease_time; the charger's side in
# charge_batch.c, "Folding", and charge_lease.c).  A session repeating a statement
# charges it itself, journals the charge and flushes it before it reads a
# row; the charger folds the journal into dp_agg.budget and dp_agg.ledger.
#
# Asserted:
#   1. repeated statements are charged on leases (the ledger holds rows of
#      several statements folded), and the budget ends bit for bit where
#      the same statements charged one by one by the charger leave it
#      (epsilon, delta, lifetime sums and the Renyi curve);
#   2. readers see every charge at once (fold on read): my_budget,
#      my_ledger, spent_epsilon and preview;
#   3. sessions racing for a budget's last statements on leases: exactly as
#      many succeed as the budget pays for, and the ledger counts them;
#   4. a DBA's set_budget applies to the very next statement, and
#      reset_budget starts from what was spent up to it;
#   5. kill -9 right after statements charged on leases (with and without
#      a checkpoint between): after the restart each is in the ledger and
#      the budget once;
#   6. with dp_agg.lease_time = 0 nothing is leased;
#   7. a lease ends with its budget's window: a window pays for at most
#      its limit, also for statements that started on a lease of the
#      window before.
use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

use FindBin;
use lib $FindBin::RealBin;
use DpAggTest qw(preloaded_node create_budget_roles);

my $node = preloaded_node(
	'leases', conf => q{
fsync = on
synchronous_commit = off
restart_after_crash = on
wal_writer_delay = 10s
wal_writer_flush_after = 0
dp_agg.charger_idle_timeout = '10min'
dp_agg.lease_time = '5s'
max_prepared_transactions = 2
});
# (the WAL writer flushes nothing on its own before the kills of 5: a
# journal row survives them only because its statement flushed it)
create_budget_roles($node,
	leased => '1000, 0.5',
	alone => '1000, 0.5',
	racer => '5, 0',
	windowed => '1, 0',
	crash => '1000, 0.5');

# a group of leased, without a budget yet
$node->safe_psql('postgres', 'CREATE ROLE lteam; GRANT lteam TO leased');

# run a statement n times in one session as a role; the values it printed
sub repeat
{
	my ($role, $sql, $n) = @_;
	return $node->safe_psql('postgres', "SET ROLE $role;\n" . ("$sql;\n" x $n));
}

# the budget row of a role, as text (every amount bit for bit)
sub amounts
{
	my ($role) = @_;
	return $node->safe_psql('postgres',
		qq{SELECT epsilon_spent::text, delta_spent::text, lifetime_epsilon_spent::text,
		          lifetime_delta_spent::text, rdp::text
		   FROM dp_agg.budget WHERE role = '$role'::regrole});
}

# the ledger's statements of a role: how many, and in how many rows
sub ledger
{
	my ($role) = @_;
	return $node->safe_psql('postgres',
		qq{SELECT coalesce(sum(statements), 0), count(*), coalesce(max(statements), 0)
		   FROM dp_agg.ledger WHERE role = '$role'::regrole AND kind = 'charge'});
}

my $stmt = 'SELECT dp_count(x, 0.1, 1e-7) IS NOT NULL FROM t';

# 1. the same 30 statements, on leases and one by one
repeat('leased', $stmt, 30);
$node->safe_psql('postgres', q{ALTER SYSTEM SET dp_agg.lease_time = 0; SELECT pg_reload_conf()});
sleep 1;
repeat('alone', $stmt, 30);
$node->safe_psql('postgres', q{ALTER SYSTEM SET dp_agg.lease_time = '5s'; SELECT pg_reload_conf()});
sleep 1;
my ($n, $rows, $max) = split /\|/, ledger('leased');
is($n, 30, 'the ledger holds each of the 30 statements once');
cmp_ok($max, '>', 1, 'statements were charged on leases and folded together');
is(amounts('leased'), amounts('alone'),
	'the budget ends bit for bit where the charger alone leaves it');
is(ledger('alone'), '30|30|1', 'with dp_agg.lease_time = 0 every statement is charged alone');

# 2. readers see every charge at once
repeat('leased', $stmt, 10);
is( $node->safe_psql(
		'postgres', q{SET ROLE leased;
SELECT epsilon_spent = 4, (SELECT sum(statements) FROM dp_agg.my_ledger WHERE kind = 'charge') FROM dp_agg.my_budget}
	),
	't|40',
	'my_budget and my_ledger read right after hold every charge');
my $err;
my $spent = $node->safe_psql('postgres', q{SELECT dp_agg.spent_epsilon('leased', 1e-5)});
repeat('leased', $stmt, 10);
is( $node->safe_psql(
		'postgres', qq{SELECT dp_agg.spent_epsilon('leased', 1e-5) > $spent}),
	't', 'spent_epsilon reads the charges journaled just before');

# 3. racing for the last statements: 5 / 0.125 = 40 statements are paid for
$node->safe_psql('postgres', q{
CREATE FUNCTION race(k int) RETURNS int LANGUAGE plpgsql AS $$
DECLARE n int := 0; v bigint;
BEGIN
    FOR j IN 1 .. k LOOP
        BEGIN
            SELECT dp_count(x, 0.125) INTO v FROM t;
            n := n + 1;
        EXCEPTION WHEN SQLSTATE 'PB001' THEN NULL;
        END;
    END LOOP;
    RETURN n;
END $$;
GRANT EXECUTE ON FUNCTION race(int) TO racer;
});
# four sessions at once, each trying 31 statements
my @racers;
for my $i (1 .. 4)
{
	my $out = '';
	push @racers,
	  [
		IPC::Run::start(
			[
				'psql', '-X', '-A', '-t', '-q', '-d', $node->connstr('postgres'),
				'-c', 'SET ROLE racer', '-c', 'SELECT race(31)'
			],
			'>', \$out),
		\$out
	  ];
}
my $won = 0;
for my $r (@racers)
{
	$r->[0]->finish;
	$won += ${ $r->[1] } =~ /^(\d+)$/m ? $1 : 0;
}
is($won, 40, 'sessions racing on leases: exactly the 40 statements the budget pays for');
is( $node->safe_psql('postgres',
		q{SELECT epsilon_spent FROM dp_agg.budget WHERE role = 'racer'::regrole}),
	'5', 'and the budget is spent exactly');
my ($rn, $rrows, $rmax) = split /\|/, ledger('racer');
is($rn, 40, 'and the ledger counts each of them once');
cmp_ok($rmax, '>', 1, 'the racing statements were charged on leases');

# 4. a DBA's change applies to the next statement of a session holding leases
my ($in, $out, $errout) = ('', '', '');
my $session = IPC::Run::start(
	[ 'psql', '-X', '-A', '-t', '-d', $node->connstr('postgres') ],
	'<', \$in, '>', \$out, '2>', \$errout);

# run SQL in that session; what it printed, and its errors
sub in_session
{
	my ($sql) = @_;
	($out, $errout) = ('', '');
	$in .= "$sql\n\\echo __done\n";
	$session->pump until $out =~ /__done/;
	return ($out, $errout);
}
in_session("SET ROLE leased;");
in_session("$stmt;\n$stmt;\n$stmt;");    # the second and third on leases
# spent: 53 statements of 0.1; the next would make it 5.4
$node->safe_psql('postgres', q{SELECT dp_agg.set_budget('leased', 5.35, 0.5)});
(undef, $err) = in_session("$stmt;");
like($err, qr/privacy budget of role "leased" is exhausted/,
	'a lowered limit refuses the next statement of a session that held leases');
# a new budget that pays for the statement: the group's.  Another session's
# charge leases the role's budget again before this session's next
# statement, which must still pay the group's budget too.
$node->safe_psql('postgres', q{SELECT dp_agg.set_budget('leased', 1000, 0.5)});
in_session("$stmt;\n$stmt;");
$node->safe_psql('postgres', q{SELECT dp_agg.set_group_budget('lteam', 1000, 0.5)});
repeat('leased', $stmt, 1);
in_session("$stmt;");
is( $node->safe_psql('postgres',
		q{SELECT abs(epsilon_spent - 0.2) < 1e-12 FROM dp_agg.budget WHERE role = 'lteam'::regrole}),
	't', "a new budget pays for the next statement of a session that held leases, also after another session's lease");
# a change of caps prepared: no lease is granted until it ends (COMMIT
# PREPARED runs nowhere the leases could hear of), so statements charged
# meanwhile do not carry a lease past it
$node->safe_psql('postgres',
	q{BEGIN; SELECT dp_agg.set_cap('leased', statement_epsilon => 0.05); PREPARE TRANSACTION 'dba'});
in_session("$stmt;\n$stmt;\n$stmt;");
$node->safe_psql('postgres', q{COMMIT PREPARED 'dba'});
(undef, $err) = in_session("$stmt;");
like($err, qr/above|cap/i,
	'a cap committed with COMMIT PREPARED applies to the next statement of a session');
$node->safe_psql('postgres', q{SELECT dp_agg.set_cap('leased')});
$node->safe_psql('postgres', q{SELECT dp_agg.set_budget('leased', 1000, 0.5)});
$in .= "\\q\n";
$session->finish;
$node->safe_psql('postgres', q{SELECT dp_agg.set_budget('leased', 1000, 0.5)});
repeat('leased', $stmt, 5);
$node->safe_psql('postgres', q{SELECT dp_agg.reset_budget('leased')});
is( $node->safe_psql('postgres',
		q{SELECT epsilon_spent FROM dp_agg.budget WHERE role = 'leased'::regrole}),
	'0', 'reset_budget starts from nothing: the charges before it were folded first');
repeat('leased', $stmt, 4);
is( $node->safe_psql('postgres',
		q{SELECT abs(epsilon_spent - 0.4) < 1e-12 FROM dp_agg.budget WHERE role = 'leased'::regrole}),
	't', 'and counts only the statements after it');

# 5. kill -9 right after statements charged on leases
for my $checkpoint (0, 1)
{
	my $before = (split /\|/, ledger('crash'))[0];
	my $exact = 'SELECT dp_count(x, 0.125) IS NOT NULL FROM t';    # sums exact in binary
	repeat('crash', $exact, 5);
	$node->safe_psql('postgres', 'CHECKPOINT') if $checkpoint;
	repeat('crash', $exact, 5);
	# the journal as it is (a snapshot taken before: no fold on read)
	cmp_ok(
		$node->safe_psql(
			'postgres', q{BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1 \g /dev/null
SELECT count(*) FROM dp_agg.journal; COMMIT}),
		'>', 0, "statements charged on leases are in the journal at the kill (checkpoint: $checkpoint)");
	$node->stop('immediate');
	$node->start;
	is((split /\|/, ledger('crash'))[0], $before + 10,
		"after kill -9 each statement is in the ledger once (checkpoint: $checkpoint)");
	is( $node->safe_psql('postgres',
			q{SELECT epsilon_spent = 0.125 * (SELECT sum(statements) FROM dp_agg.ledger
			                                  WHERE role = 'crash'::regrole AND kind = 'charge')
			  FROM dp_agg.budget WHERE role = 'crash'::regrole}),
		't', "and in the budget once (checkpoint: $checkpoint)");
}
# 7. a window of 3 seconds pays for 8 statements of 0.125; statements every
# 0.08 s from 0.3 s before a boundary to about 2.4 s after it: those after it
# (recorded at their end, 0.05 s of margin) are at most 8.  A lease that
# outlived its window would let the statements after the boundary spend
# what the window before had left (about 5 of 8: few ran before it), and
# then the new window's 8 besides.
$node->safe_psql('postgres', q{
SELECT dp_agg.set_budget_window('windowed', '3 seconds', 'UTC');
CREATE TABLE admitted (at timestamptz);
GRANT INSERT ON admitted TO windowed;
CREATE FUNCTION every(k int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE v bigint;
BEGIN
    FOR j IN 1 .. k LOOP
        BEGIN
            SELECT dp_count(x, 0.125) INTO v FROM t;
            INSERT INTO admitted VALUES (clock_timestamp());
        EXCEPTION WHEN SQLSTATE 'PB001' THEN NULL;
        END;
        PERFORM pg_sleep(0.08);
    END LOOP;
END $$;
GRANT EXECUTE ON FUNCTION every(int) TO windowed;
});
# in one session: sleep until 0.3 s before a boundary, then the statements
# (the window of the first one admitted is the one before the boundary)
$node->safe_psql('postgres', q{
SELECT pg_sleep(w - 0.3 + CASE WHEN w < 0.5 THEN 3 ELSE 0 END)
FROM (SELECT extract(epoch FROM dp_agg_internal.window_end('3 seconds', 'UTC', clock_timestamp())
                               - clock_timestamp()) AS w) s;
SET ROLE windowed;
} . ("SELECT every(1);\n" x 30));
my ($after, $before) = split /\|/,
  $node->safe_psql('postgres', q{
WITH b AS (SELECT dp_agg_internal.window_end('3 seconds', 'UTC', min(at)) AS boundary FROM admitted)
SELECT count(*) FILTER (WHERE at >= b.boundary + interval '0.05 s'),
       count(*) FILTER (WHERE at < b.boundary)
FROM admitted, b});
cmp_ok($before, '>=', 1, "statements ran before the boundary ($before)");
cmp_ok($after, '<=', 8, "a window pays for at most its limit after a boundary ($before before it, $after after)");
cmp_ok($after, '>=', 1, 'statements ran after the boundary');

is($node->safe_psql('postgres', 'SELECT count(*) FROM dp_agg.journal'),
	'0', 'nothing is left in the journal');

done_testing();
