"""Talking to the server: psql -XAtq in a subprocess, and the ledger.

The connection comes from the environment (PGHOST, PGPORT, PGUSER, as
test/run-suites.sh sets them); the database is DP_STAT_DB (default dp_stat),
created if absent.  setup() prepares it: the extension, a budget for the
current role large enough for any number of runs (reset at every run), and a
schema "stat" for the tests' fixed data.
"""

import json
import os
import shutil
import subprocess

DATABASE = os.environ.get("DP_STAT_DB", "dp_stat")


class SqlError(Exception):
    pass


def _psql():
    """psql of the PostgreSQL that PG_CONFIG names (as test/lib.sh), else
    the first on PATH, else Debian's postgresql-15."""
    pg_config = os.environ.get("PG_CONFIG", "pg_config")
    if pg_config != "pg_config":
        bindir = subprocess.run([pg_config, "--bindir"], capture_output=True,
                                text=True, check=True).stdout.strip()
        return os.path.join(bindir, "psql")
    exe = shutil.which("psql")
    if exe:
        return exe
    return "/usr/lib/postgresql/15/bin/psql"


def run(script, database=None, timeout=600):
    """Run an SQL script with psql -XAtq (tab-separated); return stdout.

    Raises SqlError (with psql's message) if any statement fails."""
    cmd = [_psql(), "-XAtq", "-v", "ON_ERROR_STOP=1", "-F", "\t",
           "-d", database or DATABASE]
    proc = subprocess.run(cmd, input=script, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        msg = proc.stderr.strip() or ("psql exited with %d" % proc.returncode)
        raise SqlError(msg)
    return proc.stdout


def rows(script, database=None):
    """Rows of the output of script (every field a string; NULL is '')."""
    out = run(script, database)
    return [line.split("\t") for line in out.splitlines()]


def scalar(query, database=None):
    r = rows(query, database)
    if len(r) != 1 or len(r[0]) != 1:
        raise SqlError("expected one value from %r, got %r" % (query, r[:3]))
    return r[0][0]


def literal(s):
    """An SQL string literal."""
    return "'" + str(s).replace("'", "''") + "'"


def setup():
    """Create and prepare the test database (idempotent)."""
    exists = scalar("SELECT count(*) FROM pg_database WHERE datname = %s;"
                    % literal(DATABASE), database="postgres")
    if exists == "0":
        run('CREATE DATABASE "%s";' % DATABASE.replace('"', '""'), database="postgres")
    run("""
        CREATE EXTENSION IF NOT EXISTS dp_agg;
        SELECT dp_agg.set_budget(current_user::regrole, 1e9, 0.9);
        SELECT dp_agg.reset_budget(current_user::regrole);
        CREATE SCHEMA IF NOT EXISTS stat;
    """)


_created = set()


def fixed_table(name, definition_sql):
    """Table stat.<name>, (re)created from a query (CREATE TABLE ... AS) the
    first time a run asks for it; returns its qualified name."""
    if name not in _created:
        create_table(name, definition_sql)
        _created.add(name)
    return "stat." + name


def create_table(name, definition_sql):
    """(Re)create table stat.<name> from a query (CREATE TABLE ... AS)."""
    run("DROP TABLE IF EXISTS stat.%s;\nCREATE TABLE stat.%s AS %s;\nANALYZE stat.%s;\n"
        % (name, name, definition_sql, name))


def last_ledger_id():
    return int(scalar("SELECT coalesce(max(id), 0) FROM dp_agg.ledger;"))


class Release:
    """The output of one DP statement and its ledger entry."""

    def __init__(self, rows, ledger_id, epsilon, delta, query, detail):
        self.rows = rows
        self.ledger_id = ledger_id
        self.epsilon = epsilon
        self.delta = delta
        self.query = query
        self.detail = detail        # list: one object per DP aggregate call

    def call(self, i=0):
        return self.detail[i]

    def noise(self, i=0, part=None):
        """The release object of call i: the only one, or the one named part
        ("count", "sum" or "centred_sum")."""
        rel = self.detail[i]["releases"]
        if part is None:
            if len(rel) != 1:
                raise SqlError("call %d has %d releases; name one" % (i, len(rel)))
            return rel[0]
        for r in rel:
            if r["release"] == part:
                return r
        raise SqlError("call %d has no %s release" % (i, part))


def release(query, settings=None):
    """Run one DP statement (a SELECT) through COPY ... TO STDOUT, after SET
    of the given settings, and fetch the one ledger entry it must have made.

    Fails if the statement made no charge or more than one."""
    before = last_ledger_id()
    out = rows(settings_script(settings) + "COPY (%s) TO STDOUT;\n" % query)
    entries = _charges_since(before)
    if len(entries) != 1:
        raise SqlError("expected one ledger charge for the statement, found %d" % len(entries))
    return _release_of(out, entries[0])


_END_MARK = "--dp-stat-end-of-statement--"


def releases(query, times, settings=None):
    """Run the same DP statement `times` times in one psql session (after
    SET of the given settings): `times` independent releases, each with its
    own ledger charge.  Returns the list of Release objects, in order.

    Much faster than calling release() `times` times (one psql for all).
    Fails unless every execution made exactly one charge."""
    before = last_ledger_id()
    script = settings_script(settings)
    script += ("COPY (%s) TO STDOUT;\n\\echo %s\n" % (query, _END_MARK)) * times
    chunks, current = [], []
    for line in run(script).splitlines():
        if line == _END_MARK:
            chunks.append(current)
            current = []
        else:
            current.append(line.split("\t"))
    if current or len(chunks) != times:
        raise SqlError("expected the output of %d statements, got %d" % (times, len(chunks)))
    entries = _charges_since(before)
    if len(entries) != times:
        raise SqlError("expected %d ledger charges for %d statements, found %d"
                       % (times, times, len(entries)))
    return [_release_of(out, e) for out, e in zip(chunks, entries)]


# The aggregates' tests group tables whose keys are public: their groups are
# released without private selection (test_selection.py tests that).
DEFAULT_SETTINGS = {"dp_agg.group_keys": "public"}


def settings_script(settings):
    merged = dict(DEFAULT_SETTINGS)
    merged.update(settings or {})
    return "".join("SET %s = %s;\n" % (k, literal(v)) for k, v in merged.items())


def _charges_since(before):
    """The ledger charges of the current role after entry `before`, oldest first."""
    return rows("SELECT id, epsilon, delta, translate(query, E'\\n\\t\\r', '   '), detail::text "
                "FROM dp_agg.ledger "
                "WHERE id > %d AND kind = 'charge' AND role = current_user::regrole "
                "ORDER BY id;" % before)


def _release_of(out, e):
    return Release(out, int(e[0]), float(e[1]), float(e[2]), e[3], json.loads(e[4]))
