#!/usr/bin/env python3
"""Where the server's CPU time goes, for test/bench/throughput.sh: the CPU
time and the context switches of a cluster's processes, by kind of process
(client backends, the dp_agg charger, the WAL writer, the others), per
transaction of a pgbench run.  Timings of this machine move by 20% and more
between runs; the CPU time per transaction and the context switches show
what a statement costs whatever the speed of the moment (the kernel's part
too, which instruction counts miss).

    proc_usage.py watch POSTMASTER_PID DELAY SECONDS PREFIX
        started before the load (python's start takes 0.4 s of CPU, which
        a saturated machine stretches to seconds), which begins when
        PREFIX.ready exists: DELAY seconds after that and SECONDS later,
        snapshots of the processes the postmaster started, with their CPU
        time (user and system) and their voluntary and involuntary context
        switches, in PREFIX.before and PREFIX.after, and the times of both
        in PREFIX.times (epoch seconds)
    proc_usage.py diff BEFORE AFTER T0 T1 LOG...
        one line of JSON: per kind, what the processes alive at both
        snapshots spent between them, and the transactions that pgbench's
        logs (--log) put between the times T0 and T1

throughput.sh sums the lines of diff per transaction with summary().
"""
import json
import os
import sys
import time

KINDS = ("backend", "charger", "walwriter", "other")


def kind_of(cmdline):
    if "dp_agg charger" in cmdline:
        return "charger"
    if "walwriter" in cmdline:
        return "walwriter"
    for k in ("checkpointer", "background writer", "autovacuum", "logical replication", "stats",
              "parallel worker", "archiver"):
        if k in cmdline:
            return "other"
    return "backend"


def snapshot(postmaster):
    procs = {}
    hz = os.sysconf("SC_CLK_TCK")
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) != postmaster:      # ppid
                continue
            with open(f"/proc/{pid}/cmdline") as f:
                cmdline = f.read().replace("\0", " ")
            status = {}
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    k, _, v = line.partition(":")
                    status[k] = v.strip()
        except (OSError, IndexError, ValueError):
            continue                              # gone meanwhile
        cpu_us = (int(fields[11]) + int(fields[12])) * 1e6 / hz
        procs[pid] = [kind_of(cmdline), cpu_us, int(status["voluntary_ctxt_switches"]),
                      int(status["nonvoluntary_ctxt_switches"])]
    return procs


def watch(postmaster, delay, seconds, prefix):
    with open(f"{prefix}.ready", "w") as f:       # the caller starts the load now
        f.write("ready\n")
    time.sleep(delay)
    t0 = time.time()
    before = snapshot(postmaster)
    time.sleep(seconds)
    t1 = time.time()
    after = snapshot(postmaster)
    for name, d in (("before", before), ("after", after)):
        with open(f"{prefix}.{name}", "w") as f:
            json.dump(d, f)
    with open(f"{prefix}.times", "w") as f:
        f.write(f"{t0} {t1}\n")


def diff(before, after, t0, t1, logs):
    with open(before) as f:
        a = json.load(f)
    with open(after) as f:
        b = json.load(f)
    out = {k: [0.0, 0, 0] for k in KINDS}
    for pid, (kind, cpu, vol, invol) in b.items():
        if pid in a:
            out[kind][0] += cpu - a[pid][1]
            out[kind][1] += vol - a[pid][2]
            out[kind][2] += invol - a[pid][3]
    xacts = 0
    for path in logs:
        with open(path) as f:
            for line in f:
                fields = line.split()
                # client_id transaction_no time_us script_no time_epoch time_us
                t = int(fields[4]) + int(fields[5]) / 1e6
                if t0 <= t < t1:
                    xacts += 1
    print(json.dumps({"xacts": xacts, "usage": out}))


def summary(paths):
    """the sums of the lines of diff in paths, per transaction (None: none)"""
    xacts = 0
    tot = {k: [0.0, 0, 0] for k in KINDS}
    for path in paths:
        with open(path) as f:
            for line in f:
                d = json.loads(line)
                xacts += d["xacts"]
                for k in KINDS:
                    for i in range(3):
                        tot[k][i] += d["usage"][k][i]
    if xacts == 0:
        return None
    return {"xacts": xacts,
            "per_xact": {k: [v[0] / xacts, v[1] / xacts, v[2] / xacts] for k, v in tot.items()}}


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "watch":
        watch(int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
    elif cmd == "diff":
        diff(sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5]), sys.argv[6:])
    else:
        sys.exit(__doc__)
