# dp_agg: the journal's rows (src/accounting/journal.c) are written outside
# the transaction that writes them, and are durable once written.
#
# A row appended to dp_agg.journal is a frozen heap tuple added to a page
# through generic WAL: it stays whatever becomes of the transaction that
# wrote it (ROLLBACK, ROLLBACK TO SAVEPOINT, a transaction left open when
# every server process is killed), it is replayed by a standby, and the
# pages stay heap pages that amcheck finds sound and that DELETE and
# VACUUM handle as usual.  A journal that could lose its rows is refused:
# one with an index, an unlogged one, one truncated in the same
# transaction.  Mutants: journal.mut.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use DpAggTest;

# a crash-test node (DpAggTest.pm) that a standby can stream from
my $node = preloaded_node(
	'journal',
	init => { allows_streaming => 1 },
	conf => q{
fsync = on
synchronous_commit = off
restart_after_crash = on
wal_writer_delay = 10s
wal_writer_flush_after = 0
});
# (the WAL writer flushes nothing on its own before the kill of 2: a row
# survives it only because its append flushed the WAL to it)
$node->safe_psql('postgres', 'CREATE EXTENSION dp_agg');
# amcheck where it is installed: Debian's PostgreSQL packages ship it, the
# source builds of test/pg-matrix.sh install only the contrib modules the
# other suites need
my $amcheck = $node->safe_psql('postgres',
	q{SELECT count(*) FROM pg_available_extensions WHERE name = 'amcheck'}) eq '1';
$node->safe_psql('postgres', 'CREATE EXTENSION amcheck') if $amcheck;

sub journal
{
	return $node->safe_psql('postgres',
		'SELECT count(*), coalesce(sum(epsilon), 0) FROM dp_agg.journal');
}

sub sound
{
	my ($name) = @_;
  SKIP:
	{
		skip "amcheck is not installed: $name", 1 unless $amcheck;
		is( $node->safe_psql('postgres',
				q{SELECT count(*) FROM verify_heapam('dp_agg.journal', check_toast => false)}),
			'0', "amcheck finds the journal's pages sound: $name");
	}
	return;
}

# 1. ROLLBACK and ROLLBACK TO SAVEPOINT keep the rows
$node->safe_psql('postgres', q{
BEGIN;
SELECT dp_agg_internal.journal_append('postgres', 1, 0) FROM generate_series(1, 3);
ROLLBACK;
});
is(journal(), '3|3', 'rows appended in a transaction rolled back stay');
$node->safe_psql('postgres', q{
BEGIN;
SELECT dp_agg_internal.journal_append('postgres', 0.5, 1e-6) FROM generate_series(1, 500);
SAVEPOINT s;
SELECT dp_agg_internal.journal_append('postgres', 2, 0);
ROLLBACK TO SAVEPOINT s;
COMMIT;
});
is(journal(), '504|255', 'and rows appended before a ROLLBACK TO SAVEPOINT, over several pages');
is( $node->safe_psql('postgres',
		q{SELECT count(*) FROM dp_agg.journal WHERE xmin::text::bigint <> 2}),
	'0', 'every row is frozen');
sound('after appends');

# 2. a row of a transaction left open when every process is killed
my $bg = $node->background_psql('postgres', on_error_stop => 0);
$bg->query_safe('BEGIN');
$bg->query_safe(q{SELECT dp_agg_internal.journal_append('postgres', 7, 0)});
crash_and_restart($node);
eval { $bg->quit; };
is(journal(), '505|262', 'a row of a transaction that never committed survives kill -9');
sound('after crash recovery');

# 3. DELETE and VACUUM, then appends again
$node->safe_psql('postgres', 'DELETE FROM dp_agg.journal WHERE epsilon = 0.5');
$node->safe_psql('postgres', 'VACUUM dp_agg.journal');
$node->safe_psql('postgres', q{SELECT dp_agg_internal.journal_append('postgres', 3, 0)});
is(journal(), '6|15', 'rows are deleted and vacuumed as usual, and appended again');
sound('after DELETE, VACUUM and an append');

# 4. a standby replays the rows
$node->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('journal_standby');
$standby->init_from_backup($node, 'base', has_streaming => 1);
$standby->start;
$node->safe_psql('postgres', q{
BEGIN;
SELECT dp_agg_internal.journal_append('postgres', 10, 0);
ROLLBACK;
});
$node->wait_for_catchup($standby);
is( $standby->safe_psql('postgres',
		'SELECT count(*), sum(epsilon) FROM dp_agg.journal'),
	'7|25', 'a standby replays a row whose transaction rolled back');
my ($ret, $out, $err) = $standby->psql('postgres',
	q{SELECT dp_agg_internal.journal_append('postgres', 1, 0)});
like($err, qr/cannot execute .* during recovery/, 'nothing is appended on a standby');
$standby->stop;

# 5. a journal that could lose its rows is refused, and nothing is appended
($ret, $out, $err) = $node->psql('postgres', q{
BEGIN;
TRUNCATE dp_agg.journal;
SELECT dp_agg_internal.journal_append('postgres', 1, 0);
});
like($err, qr/was created, truncated or rewritten in this transaction/,
	'refused after a TRUNCATE in the same transaction (a ROLLBACK would discard the file)');
$node->safe_psql('postgres', 'CREATE INDEX journal_role ON dp_agg.journal (role)');
($ret, $out, $err) = $node->psql('postgres',
	q{SELECT dp_agg_internal.journal_append('postgres', 1, 0)});
like($err, qr/has an index/, 'refused with an index (its entries would be missing)');
$node->safe_psql('postgres', 'DROP INDEX dp_agg.journal_role');
$node->safe_psql('postgres', 'ALTER TABLE dp_agg.journal SET UNLOGGED');
($ret, $out, $err) = $node->psql('postgres',
	q{SELECT dp_agg_internal.journal_append('postgres', 1, 0)});
like($err, qr/is not WAL-logged/, 'refused when unlogged');
$node->safe_psql('postgres', 'ALTER TABLE dp_agg.journal SET LOGGED');
is(journal(), '7|25', 'the refused appends wrote nothing');

# 6. only a superuser may append
$node->safe_psql('postgres', 'CREATE ROLE someone LOGIN');
($ret, $out, $err) = $node->psql('postgres',
	q{SET ROLE someone; SELECT dp_agg_internal.journal_append('someone', 1, 0)});
like($err, qr/permission denied/, 'a role without the right cannot append');

$node->stop;
done_testing();
