"""psql sessions of the fuzz test, with client-side time limits.

A Session is one long-lived `psql -XAtq` reading commands from a pipe; each
call is sent as

    \\echo @@BEGIN <i>
    <statement> \\g /dev/null
    \\if :ERROR  \\echo @@END <i> ERR :SQLSTATE :LAST_ERROR_MESSAGE
    \\else       \\echo @@END <i> OK  \\endif

with \\timing on, so the output gives the outcome, the SQLSTATE, the
primary message and the time of every call.  psql flushes its output after
each command, and a reader thread queues the lines, so the harness never
blocks on the server: if @@END does not arrive within HANG_AFTER seconds
(statement_timeout plus a margin) the call has ignored statement_timeout,
and the harness ends the backend itself (Admin.end_backend: terminate, then
SIGKILL, which makes the postmaster restart the cluster; then it waits for
recovery).  A psql that exits or loses its connection is a crash.
"""

import os
import queue
import re
import shutil
import signal
import subprocess
import threading
import time

STATEMENT_TIMEOUT_S = 2.0
HANG_AFTER = STATEMENT_TIMEOUT_S + 1.5      # no answer by then: statement_timeout ignored
TERMINATE_WAIT = 1.0                        # pg_terminate_backend before SIGKILL
RECOVERY_WAIT = 120.0                       # crash restart of the cluster
ADMIN_TIMEOUT = 20.0                        # any administrative psql call


def psql_path():
    return shutil.which("psql") or "/usr/lib/postgresql/15/bin/psql"


class Outcome:
    """The outcome of one call: status OK, ERR, HANG (no answer in time,
    backend ended by the harness) or LOST (connection lost: crash)."""

    def __init__(self, status, sqlstate="", message="", seconds=None):
        self.status = status
        self.sqlstate = sqlstate
        self.message = message
        self.seconds = seconds


class Admin:
    """Short psql calls to database `postgres`, each with a time limit."""

    def __init__(self):
        self.killed = set()         # backend PIDs the harness SIGKILLed

    def query(self, sql, database="postgres", timeout=ADMIN_TIMEOUT):
        proc = subprocess.run([psql_path(), "-XAtq", "-v", "ON_ERROR_STOP=1", "-d", database,
                               "-c", sql], capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr.strip() or "psql exited with %d" % proc.returncode)
        return proc.stdout.strip()

    def alive(self):
        try:
            return self.query("SELECT 1", timeout=5) == "1"
        except (RuntimeError, subprocess.TimeoutExpired):
            return False

    def wait_recovery(self):
        deadline = time.time() + RECOVERY_WAIT
        while time.time() < deadline:
            if self.alive():
                return True
            time.sleep(0.3)
        return False

    def backend_exists(self, pid):
        try:
            return self.query("SELECT count(*) FROM pg_stat_activity WHERE pid = %d" % pid,
                              timeout=5) == "1"
        except (RuntimeError, subprocess.TimeoutExpired):
            return True

    def end_backend(self, pid):
        """End a backend that ignores cancel: pg_terminate_backend, then
        SIGKILL (a cluster restart).  Returns how it ended."""
        try:
            self.query("SELECT pg_terminate_backend(%d)" % pid, timeout=5)
        except (RuntimeError, subprocess.TimeoutExpired):
            pass
        deadline = time.time() + TERMINATE_WAIT
        while time.time() < deadline:
            if not self.backend_exists(pid):
                return "terminated"
            time.sleep(0.1)
        try:
            os.kill(pid, signal.SIGKILL)
            self.killed.add(pid)
        except ProcessLookupError:
            return "terminated"
        self.wait_recovery()
        return "killed (SIGKILL, cluster restarted)"


class Session:
    """One psql process in database `database` with the given settings."""

    def __init__(self, database, settings, appname="dp_fuzz"):
        env = dict(os.environ, PGAPPNAME=appname, PGDATABASE=database)
        self.proc = subprocess.Popen([psql_path(), "-XAtq"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, bufsize=1, env=env)
        self.lines = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.seq = 0
        self.pid = None
        script = "".join("SET %s = '%s';\n" % (k, v) for k, v in settings.items())
        script += "\\timing on\nSELECT 'pid=' || pg_backend_pid();\n\\echo @@READY\n"
        self._send(script)
        last = None
        for line in self._lines_until(lambda l: l == "@@READY", ADMIN_TIMEOUT):
            if line.startswith("pid="):
                self.pid = int(line[4:])
            last = line
        if self.pid is None:
            self.close()
            raise RuntimeError("could not start a psql session: %s" % last)

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)        # EOF

    def _send(self, text):
        try:
            self.proc.stdin.write(text)
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def _lines_until(self, stop, timeout):
        """Yield output lines until stop(line) (inclusive); raise
        TimeoutError after timeout seconds, EOFError at end of output."""
        deadline = time.time() + timeout
        while True:
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError()
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                raise TimeoutError()
            if line is None:
                raise EOFError()
            yield line
            if stop(line):
                return

    def call(self, statement, wait=HANG_AFTER):
        """Run one statement; return its Outcome.  After HANG or LOST the
        session is closed (the caller opens a new one)."""
        self.seq += 1
        i = self.seq
        ok = self._send("\\echo @@BEGIN %d\n%s \\g /dev/null\n"
                        "\\if :ERROR\n\\echo @@END %d ERR :SQLSTATE :LAST_ERROR_MESSAGE\n"
                        "\\else\n\\echo @@END %d OK\n\\endif\n" % (i, statement, i, i))
        if not ok:
            return Outcome("LOST", message="psql is gone")
        seconds, end, lost = None, None, False
        marker = "@@END %d " % i
        try:
            for line in self._lines_until(lambda l: l.startswith(marker), wait):
                m = re.match(r"^Time: ([0-9.]+) ms", line)
                if m:
                    seconds = float(m.group(1)) / 1000.0
                if "connection to server was lost" in line or \
                        "server closed the connection unexpectedly" in line:
                    lost = True
                if line.startswith(marker):
                    end = line[len(marker):]
        except TimeoutError:
            return Outcome("HANG", message="no answer in %.1f s" % wait)
        except EOFError:
            return Outcome("LOST", message="psql exited (connection lost)")
        if lost:
            return Outcome("LOST", message="server closed the connection")
        if end.startswith("OK"):
            return Outcome("OK", seconds=seconds)
        parts = end.split(" ", 2)
        return Outcome("ERR", sqlstate=parts[1] if len(parts) > 1 else "",
                       message=parts[2] if len(parts) > 2 else "", seconds=seconds)

    def wait_answer(self, timeout):
        """After a cancel: wait for the @@END of the current call."""
        marker = "@@END %d " % self.seq
        t0 = time.time()
        try:
            for line in self._lines_until(lambda l: l.startswith(marker), timeout):
                if line.startswith(marker):
                    end = line[len(marker):].split(" ", 2)
                    return end, time.time() - t0
        except (TimeoutError, EOFError):
            return None, time.time() - t0

    def start(self, statement):
        """Send a statement without waiting; returns once psql has read it."""
        self.seq += 1
        i = self.seq
        self._send("\\echo @@BEGIN %d\n%s \\g /dev/null\n"
                   "\\if :ERROR\n\\echo @@END %d ERR :SQLSTATE :LAST_ERROR_MESSAGE\n"
                   "\\else\n\\echo @@END %d OK\n\\endif\n" % (i, statement, i, i))
        for _ in self._lines_until(lambda l: l == "@@BEGIN %d" % i, ADMIN_TIMEOUT):
            pass
        return time.time()

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
