# dp_agg: a release stays charged whatever happens after it.
#
# The charge is committed by the charger before the statement reads a row,
# outside the statement's transaction.  So it stays when
#  - a PL/pgSQL EXCEPTION block swallows an error raised after the release
#    (the block's subtransaction is rolled back), or the DP statement itself
#    fails while it reads rows;
#  - a later statement of the same query string fails (the implicit
#    transaction of the string is rolled back);
#  - the client disconnects while the statement runs.
# And a statement cancelled while it waits for the charger releases nothing;
# its charge may or may not be committed, but the budget always equals the
# ledger, and the next statement of the same backend gets its own answer.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;

my $node = preloaded_node('errors',
	conf => "client_connection_check_interval = '100ms'\n");

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION dp_agg;
CREATE ROLE analyst LOGIN;
CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 1000) g;
GRANT SELECT ON t TO analyst;
SELECT dp_agg.set_budget('analyst', 10);
});

# run psql as analyst with the given arguments; (exit code, stdout, stderr)
sub psql_analyst
{
	my @args = @_;
	my ($stdout, $stderr) = ('', '');
	my $ok = IPC::Run::run(
		[
			'psql', '-X', '-A', '-t', '-d', $node->connstr('postgres'),
			'-U', 'analyst', @args
		],
		'>', \$stdout, '2>', \$stderr);
	chomp $stdout;
	return ($ok ? 0 : $? >> 8, $stdout, $stderr);
}

my ($ret, $stdout, $stderr);

# --- PL/pgSQL EXCEPTION blocks ---

($ret, $stdout, $stderr) = psql_analyst(
	'-c', q{
DO $$
DECLARE
    v bigint;
BEGIN
    BEGIN
        SELECT dp_count(x, 0.25) INTO v FROM t;
        RAISE NOTICE 'released: %', v IS NOT NULL;
        RAISE EXCEPTION 'an error after the release';
    EXCEPTION WHEN others THEN
        RAISE NOTICE 'swallowed: %', SQLERRM;
    END;
END $$});
is($ret, 0, 'the DO block succeeds');
like($stderr, qr/released: t.*swallowed: an error after the release/s,
	'the value was released, then the error swallowed');
is(budget_state($node), '0.25|1|0.25',
	'the release is charged although its subtransaction was rolled back');
like(
	$node->safe_psql(
		'postgres',
		q{SELECT query FROM dp_agg.ledger WHERE kind = 'charge' ORDER BY id DESC LIMIT 1}
	),
	qr/^SELECT dp_count\(x, 0\.25\)\s+FROM t$/,
	'the ledger names the statement inside the block');

# the DP statement itself fails while reading rows (after it was charged)
($ret, $stdout, $stderr) = psql_analyst(
	'-c', q{
DO $$
DECLARE
    v bigint;
BEGIN
    SELECT dp_sum(1000 / (x - 500), -1000, 1000, 0.5) INTO v FROM t;
    RAISE NOTICE 'not reached';
EXCEPTION WHEN division_by_zero THEN
    RAISE NOTICE 'caught: %', SQLERRM;
END $$});
is($ret, 0, 'the DO block catches the error of the DP statement');
like($stderr, qr/caught: division by zero/, 'the DP statement failed');
unlike($stderr, qr/not reached/, 'and released nothing');
is(budget_state($node), '0.75|2|0.75',
	'a DP statement that fails after its charge stays charged');

# the final function fails when the value is computed
($ret, $stdout, $stderr) = psql_analyst(
	'-c', q{
DO $$
BEGIN
    PERFORM dp_count(x, 0.125) / 0 FROM t;
EXCEPTION WHEN division_by_zero THEN
    NULL;
END $$});
is($ret, 0, 'an error above the aggregate is caught');
is(budget_state($node), '0.875|3|0.875', 'and the statement stays charged');

# --- several statements in one query string ---

($ret, $stdout, $stderr) =
  psql_analyst('-c', 'SELECT dp_count(x, 0.25) FROM t; SELECT 1/0;');
isnt($ret, 0, 'the query string fails');
like($stderr, qr/division by zero/, 'in its second statement');
is(budget_state($node), '1.125|4|1.125',
	'the first statement stays charged when the implicit transaction is rolled back'
);

($ret, $stdout, $stderr) = psql_analyst('-c',
	'BEGIN; SELECT dp_count(x, 0.25) IS NOT NULL FROM t; ROLLBACK; SELECT 1');
is($ret, 0, 'BEGIN; release; ROLLBACK in one string');
is(budget_state($node), '1.375|5|1.375', 'stays charged');

# --- the client disconnects while the statement runs ---

my $charges = $node->safe_psql('postgres',
	q{SELECT count(*) FROM dp_agg.ledger WHERE kind = 'charge'});
my ($bg_out, $bg_err) = ('', '');
my $h = IPC::Run::start(
	[
		'psql', '-X', '-A', '-t', '-d', $node->connstr('postgres'),
		'-U', 'analyst', '-c',
		'SELECT dp_count(x, 0.25) FROM t WHERE pg_sleep(0.05) IS NOT NULL'
	],
	'>', \$bg_out, '2>', \$bg_err);
ok( $node->poll_query_until(
		'postgres',
		q{SELECT count(*) = } . ($charges + 1)
		  . q{ FROM dp_agg.ledger WHERE kind = 'charge'}),
	'the long statement was charged');
ok( $node->poll_query_until(
		'postgres', q{SELECT count(*) = 1 FROM pg_stat_activity
		   WHERE usename = 'analyst' AND state = 'active'
		     AND query LIKE '%pg_sleep%' AND wait_event = 'PgSleep'}),
	'and reads rows');
$h->kill_kill;
eval { $h->finish; };
is($bg_out, '', 'the client got nothing');
ok( $node->poll_query_until(
		'postgres', q{SELECT count(*) = 0 FROM pg_stat_activity
		   WHERE usename = 'analyst'}),
	'the backend of the killed client exits');
is(budget_state($node), '1.625|6|1.625',
	'the statement of the disconnected client stays charged (once)');

# --- a statement cancelled while it waits for the charger ---

my $last_id = $node->safe_psql('postgres', 'SELECT max(id) FROM dp_agg.ledger');
my $dba = $node->background_psql('postgres');
$dba->query_safe('BEGIN');
$dba->query_safe(
	q{SELECT 1 FROM dp_agg.budget WHERE role = 'analyst'::regrole FOR UPDATE});
my $analyst = $node->background_psql('postgres', on_error_stop => 0);
$analyst->query_safe('SET ROLE analyst');
my ($out, $err) = $analyst->query(
	q{SET statement_timeout = '500ms'; SELECT dp_count(x, 0.125) FROM t});
like($analyst->{stderr}, qr/canceling statement due to statement timeout/,
	'a statement waiting for the charger is cancelled');
is(bg_output($out), '', 'and released nothing');
$analyst->{stderr} = '';
$analyst->query_safe('RESET statement_timeout');

# the next statement of the same backend, queued behind the cancelled one
$analyst->{stdin} .=
  "SELECT dp_count(x, 0.25) IS NOT NULL AS second FROM t;\n\\echo DONE\n\\warn DONE\n";
$analyst->{run}->pump_nb();
ok( $node->poll_query_until(
		'postgres', q{SELECT count(*) = 1 FROM pg_stat_activity
		   WHERE usename = 'postgres' AND query LIKE '%AS second%'
		     AND wait_event_type = 'Extension'}),
	'the next statement waits for the charger');
$dba->query_safe('COMMIT');
$dba->quit;
pump_until($analyst->{run}, $analyst->{timeout}, \$analyst->{stdout},
	qr/DONE/);
pump_until($analyst->{run}, $analyst->{timeout}, \$analyst->{stderr},
	qr/DONE/);
like($analyst->{stdout}, qr/^t\nDONE/, 'the next statement is released');
is($analyst->{stderr}, "DONE\n", 'without an error');
$analyst->{stdout} = $analyst->{stderr} = '';
$analyst->quit;

my $tail = $node->safe_psql(
	'postgres', qq{
SELECT count(*) FILTER (WHERE epsilon = 0.25) || '|' ||
       count(*) FILTER (WHERE epsilon = 0.125) || '|' ||
       (SELECT epsilon_spent = (SELECT sum(epsilon) FROM dp_agg.ledger WHERE kind = 'charge')
        FROM dp_agg.budget WHERE role = 'analyst'::regrole)
FROM dp_agg.ledger WHERE kind = 'charge' AND id > $last_id});
like($tail, qr/^1\|[01]\|true$/,
	'the next statement is charged once; the cancelled one at most once; spent equals the ledger'
);
note "charges after the cancelled statement (0.25|0.125|consistent): $tail";

$node->stop;
done_testing();
