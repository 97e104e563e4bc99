# dp_agg: pg_upgrade to a new major version of PostgreSQL keeps every
# budget, ledger entry, protection, grant, allow-list entry and privacy
# unit, and charging goes on from them.
#
# The old cluster is of the installation DP_UPGRADE_FROM names (the prefix
# of a PostgreSQL with dp_agg installed, such as /usr/lib/postgresql/15);
# the new one of the installation the test runs with (pg_config).  Without
# DP_UPGRADE_FROM both are the same installation (pg_upgrade accepts a
# cluster of its own major version); with DP_UPGRADE_FROM=none the test is
# skipped (test/pg-matrix.sh runs it for each pair of versions instead).
# When the new version cannot restore the old cluster's tables at all (a
# column option it does not know, below), only the pg_upgrade --check steps
# run, and the test says why ("pg_upgrade NOT POSSIBLE: ...").
#
# Database dp holds dp_agg 0.3 (the version before the allow-list was
# stored by signature): roles alice (basic accounting, limit 1, 0.5
# spent), carol (rdp, limits (5, 1e-5), 70 Gaussian releases at
# (0.5, 1e-6): test/reference/rdp.py gives epsilon 4.93763, 4.97833 and
# 5.01838 for 70, 71 and 72 of them, as in 008_upgrade.pl) and erin (pld,
# limits (5, 1e-5), 127 Laplace counts at epsilon 0.1: the optimal
# composition pays for 128, basic for 50 and Renyi for 114, as in
# 010_pld_durability.pl); a protected table pt owned by another role with
# a grant to analyst, the allowed function int4pl, and a table u whose
# privacy unit is its column unit (10 rows for each of 100 units).
# pg_upgrade --check refuses it for the regprocedure column of the
# allow-list (the negative control: the check does see dp_agg's tables),
# and passes once ALTER EXTENSION dp_agg UPDATE has made it 0.4.  Database
# legacy holds dp_agg 0.1 (which has no allow-list) and is updated after
# the upgrade, as the script update_extensions.sql pg_upgrade writes says.
#
# After the upgrade: every row of every catalog of dp_agg is the same (and
# the ledger's sequence); a plain SELECT of pt is refused, a DP statement
# using int4pl on its rows is released and charged, one using factorial is
# refused; a count over u counts units; alice is refused 0.75 and spends
# her last 0.5; carol makes the 71st release and is refused the 72nd;
# erin makes the 128th and is refused the 129th: composition goes on from
# the stored curve and releases by kind.  The allow-list entry names int4pl
# of the new version, and dropping the tables forgets their protection,
# grant and privacy unit (the event triggers came along).
use strict;
use warnings;

use Cwd;
use File::Glob ':bsd_glob';
use File::Path qw(rmtree);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $from = $ENV{DP_UPGRADE_FROM};
plan skip_all => 'DP_UPGRADE_FROM=none: run by test/pg-matrix.sh for pairs of versions'
  if defined $from && $from eq 'none';

my $tempdir = PostgreSQL::Test::Utils::tempdir;

# both clusters with data checksums (the default of initdb from 18 on):
# pg_upgrade needs the same setting in both
my $old = PostgreSQL::Test::Cluster->new('old',
	defined $from && $from ne '' ? (install_path => $from) : ());
$old->init(extra => ['--data-checksums']);
$old->append_conf('postgresql.conf', "shared_preload_libraries = 'dp_agg'\n");
$old->start;
my $new = PostgreSQL::Test::Cluster->new('new');
$new->init(extra => ['--data-checksums']);
$new->append_conf('postgresql.conf', "shared_preload_libraries = 'dp_agg'\n");
note 'from PostgreSQL ' . $old->pg_version . ' to ' . $new->pg_version;

my $version_sql =
  q{SELECT extversion FROM pg_extension WHERE extname = 'dp_agg'};

$old->safe_psql('postgres', 'CREATE DATABASE dp');
$old->safe_psql(
	'dp', q{
CREATE EXTENSION dp_agg VERSION '0.3';
CREATE ROLE alice;
CREATE ROLE carol;
CREATE ROLE erin;
CREATE ROLE analyst;
CREATE ROLE owner;
CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 1000) g;
GRANT SELECT ON t TO alice, carol, erin;
CREATE TABLE pt AS SELECT g AS x FROM generate_series(1, 100) g;
ALTER TABLE pt OWNER TO owner;
CREATE TABLE u AS SELECT g % 100 AS unit, g AS x FROM generate_series(1, 1000) g;
SELECT dp_agg.set_budget('alice', 1);
SELECT dp_agg.set_budget('carol', 5, 1e-5, 'rdp');
SELECT dp_agg.set_budget('erin', 5, 1e-5, 'pld');
SELECT dp_agg.set_budget('analyst', 1e12);
SELECT dp_agg.set_budget('postgres', 1e12);
SELECT dp_agg.protect('pt');
SELECT dp_agg.grant_access('pt', 'analyst');
SELECT dp_agg.allow_function('int4pl(integer, integer)');
SELECT dp_agg.set_privacy_unit('u', 'unit', 2);
SET ROLE alice;
SELECT dp_count(x, 0.25) FROM t;
SELECT dp_sum(x, 0, 1000, 0.125), dp_count(x, 0.125) FROM t;
RESET ROLE;
SET ROLE carol;
DO $$ DECLARE v bigint; BEGIN
    FOR i IN 1 .. 70 LOOP SELECT dp_count(x, 0.5, 1e-6) INTO v FROM t; END LOOP;
END $$;
RESET ROLE;
SET ROLE erin;
DO $$ DECLARE v bigint; BEGIN
    FOR i IN 1 .. 127 LOOP SELECT dp_count(x, 0.1) INTO v FROM t; END LOOP;
END $$;
});

# at epsilon 1e9 the counts below are exact except with probability about
# 2 exp(-1e9) each (discrete Laplace noise of scale 1e-9)
my $allowed_sql =
  'SET ROLE analyst; SELECT dp_count(x, 1e9) FROM pt WHERE x + 1 <= 50';
# the 0.4 library evaluates an untrusted role's row expressions through
# the row path's functions, which the 0.3 objects lack: refused until the
# update, with a hint that says so
my (undef, undef, $old_err) = $old->psql('dp', $allowed_sql);
like($old_err, qr/dp_agg must be updated to version 0\.4 to read protected relation "pt".*\n.*ALTER EXTENSION dp_agg UPDATE/s,
	'old cluster, 0.3 objects: a DP statement of analyst over pt waits for the update');

$old->safe_psql('postgres', 'CREATE DATABASE legacy');
$old->safe_psql(
	'legacy', q{
CREATE EXTENSION dp_agg VERSION '0.1';
CREATE ROLE bob;
CREATE TABLE t AS SELECT g AS x FROM generate_series(1, 1000) g;
GRANT SELECT ON t TO bob;
SELECT dp_agg.set_budget('bob', 1);
SET ROLE bob;
SELECT dp_count(x, 0.25) FROM t;
SELECT dp_count(x, 0.25) FROM t;
});

# Can the new version restore the old cluster's tables at all?  pg_dump
# copies the options of every column (pg_attribute.attoptions), and a
# server refuses options it does not know.  Debian 12's PostgreSQL 15.20
# stamps every column with an option pg_attver that the 17 and 18 built by
# test/pg-matrix.sh (older point releases) do not know: pg_upgrade from it
# fails for any table, with or without dp_agg.  Each option of the old
# columns is tried on a temporary table of the new version; if one is
# refused, only the checks (pg_upgrade --check) are run.
my $options = $old->safe_psql(
	'dp', q{
SELECT string_agg(DISTINCT o, ' ')
FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid, unnest(a.attoptions) AS o
WHERE c.relnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
  AND NOT c.relnamespace::regnamespace::text LIKE 'pg\_toast%'
  AND a.attnum > 0});
$old->stop;
my %option_value = map { split /=/, $_, 2 } split / /, $options;
my $not_possible = '';
$new->start;
foreach my $option (sort keys %option_value)
{
	my ($ret, $out, $err) = $new->psql('postgres',
		"CREATE TEMP TABLE probe (a int); ALTER TABLE probe ALTER COLUMN a SET ($option = $option_value{$option})");
	$not_possible .=
	  "PostgreSQL " . $new->pg_version . " refuses the column option $option of every table of PostgreSQL " . $old->pg_version . " ($err)"
	  if $ret != 0;
}
$new->stop;
$not_possible =~ s/\n/ /g;

# the rows of every table of dp_agg (the extension's configuration tables,
# which pg_dump and pg_upgrade keep), in a canonical order, and the
# ledger's sequence; regclass and regrole values by name
sub catalogs
{
	my ($node, $db) = @_;
	my @tables = split /\n/, $node->safe_psql(
		$db, q{
SELECT c.oid::regclass
FROM pg_extension e, unnest(e.extconfig) AS x(oid) JOIN pg_class c ON c.oid = x.oid
WHERE e.extname = 'dp_agg' AND c.relkind = 'r'
ORDER BY c.oid::regclass::text});
	my $out = '';
	foreach my $table (@tables)
	{
		$out .= "$table\n"
		  . $node->safe_psql(
			$db, qq{
SELECT count(*) || E'\\n' || coalesce(string_agg(r, E'\\n' ORDER BY r), '')
FROM (SELECT to_jsonb(x)::text AS r FROM $table x) s})
		  . "\n";
	}
	return $out
	  . $node->safe_psql($db,
		'SELECT last_value || E\'|\' || is_called FROM dp_agg.ledger_id_seq');
}

# for role carol: charges|epsilon_spent|accounting|curves consistent|
# composed epsilon at delta_limit (5 decimals), as in 008_upgrade.pl
my $carol_sql = q{
WITH b AS (SELECT * FROM dp_agg.budget WHERE role = 'carol'::regrole),
     l AS (SELECT l.* FROM dp_agg.ledger l, b WHERE l.role = b.role AND l.kind = 'charge'),
     s AS (SELECT u.o, sum(u.v) AS v FROM l, unnest(l.rdp) WITH ORDINALITY u(v, o) GROUP BY u.o),
     n AS (SELECT cardinality(dp_agg.rdp_orders()) AS orders)
SELECT (SELECT count(*) FROM l) || '|' || b.epsilon_spent || '|' || b.accounting || '|' ||
       ((SELECT count(*) FROM l, n WHERE cardinality(l.rdp) = n.orders) = (SELECT count(*) FROM l)
        AND cardinality(b.rdp) = (SELECT orders FROM n)
        AND (SELECT count(*) FROM s) = (SELECT orders FROM n)
        AND (SELECT bool_and(abs(b.rdp[s.o] - s.v) <= 1e-12 * s.v AND s.v > 0) FROM s)) || '|' ||
       round(dp_agg.spent_epsilon(b.role, b.delta_limit)::numeric, 5)
FROM b};

# for role erin: charges|releases counted in budget.pld|kinds|pld epsilon
# within the limit, as in 010_pld_durability.pl
my $erin_sql = q{
WITH b AS (SELECT * FROM dp_agg.budget WHERE role = 'erin'::regrole)
SELECT (SELECT count(*) FROM dp_agg.ledger l, b WHERE l.role = b.role AND l.kind = 'charge')
       || '|' || coalesce((SELECT sum((e->>'count')::int) FROM b, jsonb_array_elements(b.pld) e), 0)
       || '|' || coalesce(jsonb_array_length(b.pld), 0)
       || '|' || (coalesce(dp_agg.pld_state_epsilon(b.pld, 1e-5), 0) <= b.epsilon_limit)
FROM b};

# pg_upgrade from the old cluster (stopped) to the new one (never
# started: empty); writes update_extensions.sql and its logs into the
# current directory and the new data directory
my @pg_upgrade = (
	'pg_upgrade', '--no-sync',
	'-d', $old->data_dir,
	'-D', $new->data_dir,
	'-b', $old->config_data('--bindir'),
	'-B', $new->config_data('--bindir'),
	'-s', $new->host,
	'-p', $old->port,
	'-P', $new->port);
my $cwd = getcwd();
chdir $tempdir or die "cannot chdir to $tempdir: $!";

# 1. dp_agg 0.3: its allow-list is a regprocedure column, which pg_upgrade
# refuses; the report names it, in database dp only
my ($stdout, $stderr);
my $ok = IPC::Run::run [ @pg_upgrade, '--check' ], '>', \$stdout, '2>', \$stderr;
ok(!$ok, 'pg_upgrade --check fails with dp_agg 0.3');
like(
	$stdout,
	qr/Checking for reg\* data types in user tables/,
	'at the check of reg* data types');
my @reports = bsd_glob($new->data_dir . '/pg_upgrade_output.d/*/tables_using_reg.txt');
is(scalar(@reports), 1, 'which writes one report');
is(join('|', sort split /\n/, slurp_file($reports[0])),
	'  dp_agg.allowed_function.function|  dp_agg.allowed_function_pkey.function|In database: dp',
	'naming the allow-list of database dp (0.3), and nothing of legacy (0.1)');
rmtree($new->data_dir . '/pg_upgrade_output.d');

# 2. ALTER EXTENSION dp_agg UPDATE in the old cluster first
$old->start;
$old->safe_psql('dp', 'ALTER EXTENSION dp_agg UPDATE');
is($old->safe_psql('dp', $version_sql), '0.4', 'dp updated to 0.4 in the old cluster');
is($old->safe_psql('dp', 'SELECT function FROM dp_agg.allowed_function'),
	'pg_catalog.int4pl(integer,integer)', 'its allow-list by signature');
is($old->safe_psql('dp', $allowed_sql), '49', 'and int4pl still allowed on rows');
my %before = (dp => catalogs($old, 'dp'), legacy => catalogs($old, 'legacy'));
like($before{dp}, qr/^dp_agg\.budget\n5\n/m, 'old cluster: 5 budgets');
like($before{dp}, qr/^dp_agg\.ledger\n200\n/m,
	'old cluster: 200 ledger entries (alice 2, carol 70, erin 127, analyst 1: refused before the update)');
is($old->safe_psql('dp', $carol_sql), '70|35|rdp|true|4.93763',
	'old cluster: carol\'s curve is the sum of her 70 charges');
is($old->safe_psql('dp', $erin_sql), '127|127|1|true',
	'old cluster: erin\'s 127 releases counted by kind');
my $max_id = $old->safe_psql('dp', 'SELECT max(id) FROM dp_agg.ledger');
$old->stop;

# 3. the check passes; the upgrade
command_ok([ @pg_upgrade, '--check' ],
	'pg_upgrade --check passes with dp_agg 0.4 (an allow-list entry) and 0.1');
if ($not_possible ne '')
{
	diag("pg_upgrade NOT POSSIBLE: $not_possible");
	chdir $cwd or die "cannot chdir to $cwd: $!";
	done_testing();
	exit 0;
}
if (!ok(run_log(\@pg_upgrade), 'pg_upgrade'))
{
	chdir $cwd or die "cannot chdir to $cwd: $!";
	done_testing();
	exit 1;
}
ok(-f 'update_extensions.sql', 'pg_upgrade wrote update_extensions.sql');
like(slurp_file('update_extensions.sql'),
	qr/\\connect .*legacy.*\nALTER EXTENSION "?dp_agg"? UPDATE;/,
	'which updates dp_agg in legacy');
unlike(slurp_file('update_extensions.sql'), qr/\\connect .*\bdp\b/,
	'and leaves dp alone');
chdir $cwd or die "cannot chdir to $cwd: $!";

$new->start;
is($new->safe_psql('dp', $version_sql), '0.4', 'new cluster: dp at 0.4');
is($new->safe_psql('legacy', $version_sql), '0.1', 'new cluster: legacy at 0.1');
is(catalogs($new, 'dp'), $before{dp},
	'new cluster: every row of every catalog of dp is the same');
is(catalogs($new, 'legacy'), $before{legacy},
	'new cluster: every row of every catalog of legacy is the same');
is( $new->safe_psql(
		'dp', q{SELECT string_agg(relation::oid::text, ',' ORDER BY relation::oid)
FROM dp_agg.protected WHERE relation = 'pt'::regclass}),
	$new->safe_psql('dp', q{SELECT 'pt'::regclass::oid}),
	'new cluster: the protected relation is pt by OID');

# 4. protection enforced
my $ret;
($ret, $stdout, $stderr) = $new->psql('dp', 'SET ROLE analyst; SELECT x FROM pt LIMIT 1');
like($stderr, qr/relation "pt" is protected/, 'new cluster: a plain SELECT of pt is refused');
is($new->safe_psql('dp', $allowed_sql),
	'49', 'new cluster: a DP statement over pt with int4pl on rows is released');
is( $new->safe_psql(
		'dp', q{SELECT count(*) || '|' || min(id) FROM dp_agg.ledger
WHERE role = 'analyst'::regrole AND id > } . $max_id),
	'1|' . ($max_id + 1),
	'new cluster: and charged, after the old ledger');
($ret, $stdout, $stderr) = $new->psql('dp',
	'SET ROLE analyst; SELECT dp_count(x, 1e9) FROM pt WHERE factorial(x) <= 50');
like(
	$stderr,
	qr/function factorial\(bigint\) is not allowed on the rows of protected relation "pt"/,
	'new cluster: a function that is not allowed is refused');
is($new->safe_psql('dp', q{SET dp_agg.epsilon = 1e9; SELECT dp_count(*) FROM u}),
	'100', 'new cluster: a count over u counts its 100 units');

# 5. charging goes on from the old composition
($ret, $stdout, $stderr) = $new->psql('dp',
	'SET ROLE alice; SELECT dp_count(x, 0.75) FROM t',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($stderr, qr/PB001.*privacy budget of role "alice" is exhausted/s,
	'basic: alice cannot spend more than she has left');
is($new->safe_psql('dp', 'SET ROLE alice; SELECT dp_count(x, 0.5) IS NOT NULL FROM t'),
	't', 'basic: alice spends what she has left');
is($new->safe_psql('dp', q{SELECT epsilon_spent FROM dp_agg.budget WHERE role = 'alice'::regrole}),
	'1', 'basic: and is charged for it');

is($new->safe_psql('dp', 'SET ROLE carol; SELECT dp_count(x, 0.5, 1e-6) IS NOT NULL FROM t'),
	't', 'rdp: carol makes the 71st release, which only her old curve pays for');
($ret, $stdout, $stderr) = $new->psql('dp',
	'SET ROLE carol; SELECT dp_count(x, 0.5, 1e-6) FROM t',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like(
	$stderr,
	qr/PB001.*privacy budget of role "carol" is exhausted.*Renyi composition would reach epsilon 5\.018/s,
	'rdp: carol is refused the 72nd');
is($stdout, '', 'rdp: nothing released');
is($new->safe_psql('dp', $carol_sql), '71|35.5|rdp|true|4.97833',
	'rdp: the new charge adds its curve to the old ones');

is($new->safe_psql('dp', 'SET ROLE erin; SELECT dp_count(x, 0.1) IS NOT NULL FROM t'),
	't', 'pld: erin makes the 128th release, beyond basic and Renyi composition');
($ret, $stdout, $stderr) = $new->psql('dp',
	'SET ROLE erin; SELECT dp_count(x, 0.1) FROM t',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($stderr, qr/PB001.*privacy budget of role "erin" is exhausted/s,
	'pld: erin is refused the 129th');
is($stdout, '', 'pld: nothing released');
is($new->safe_psql('dp', $erin_sql), '128|128|1|true',
	'pld: the new release is counted with the old ones');

# 6. the allow-list resolved in the new version, and the event triggers
# that forget dropped relations
is( $new->safe_psql(
		'dp', q{SELECT function || ' ' || dp_agg.resolve_allowed_function(function)::oid::text
FROM dp_agg.allowed_function}),
	'pg_catalog.int4pl(integer,integer) '
	  . $new->safe_psql('dp', q{SELECT 'int4pl(integer,integer)'::regprocedure::oid}),
	'new cluster: the allow-list entry names int4pl of the new version');
$new->safe_psql('dp', 'DROP TABLE pt; DROP TABLE u');
is( $new->safe_psql(
		'dp', q{SELECT (SELECT count(*) FROM dp_agg.protected) || '|' || (SELECT count(*) FROM dp_agg.access)
|| '|' || (SELECT count(*) FROM dp_agg.privacy_unit)}),
	'0|0|0',
	'new cluster: dropping the tables forgets their protection, grant and privacy unit');

# 7. legacy: dp_agg 0.1 updated in the new cluster by pg_upgrade's script,
# then charging goes on
command_ok(
	[
		'psql', '-X', '-v', 'ON_ERROR_STOP=1', '-d', $new->connstr('postgres'),
		'-f', "$tempdir/update_extensions.sql"
	],
	'update_extensions.sql runs');
is($new->safe_psql('legacy', $version_sql), '0.4', 'legacy updated to 0.4');
is( $new->safe_psql(
		'legacy', q{SELECT epsilon_spent || '|' || accounting || '|' || cardinality(rdp)
FROM dp_agg.budget WHERE role = 'bob'::regrole}),
	'0.5|basic|' . $new->safe_psql('legacy', 'SELECT cardinality(dp_agg.rdp_orders())'),
	'legacy: bob\'s budget and curve kept through the upgrade and the update');
($ret, $stdout, $stderr) = $new->psql('legacy',
	'SET ROLE bob; SELECT dp_count(x, 0.75) FROM t',
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($stderr, qr/PB001.*privacy budget of role "bob" is exhausted/s,
	'legacy: bob cannot spend more than he has left');
is($new->safe_psql('legacy', 'SET ROLE bob; SELECT dp_count(x, 0.25) IS NOT NULL FROM t'),
	't', 'legacy: bob releases within what he has left');
is( $new->safe_psql(
		'legacy', q{SELECT count(*) FROM dp_agg.ledger WHERE role = 'bob'::regrole AND kind = 'charge'}),
	'3', 'legacy: and is charged after his old entries');

$new->stop;
done_testing();
