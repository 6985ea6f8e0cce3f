#!/usr/bin/env python3
"""Matches the module's slow-transaction log lines against a system-wide scheduler trace.

Usage: correlate.py LOGS.ndjson PERF_SCRIPT.txt HOST_PID CLOCK_OFFSET
LOGS: the module log (GET /v1/database/graph/logs); PERF_SCRIPT: `perf script` output of a
`perf record -k mono -a -e sched:sched_switch -e page-faults -c 1` trace; CLOCK_OFFSET is
CLOCK_REALTIME - CLOCK_MONOTONIC in seconds, read when the trace started.

For each slow transaction (start, hold) it reports, for the host thread that ran it (the host
thread with the most on-CPU time inside the window): time on CPU, time off CPU while runnable
(preempted), time off CPU while blocked, what ran on the CPU instead, and the thread's page
faults. The same numbers for every other transaction-sized window give the baseline.
"""
import json, re, sys, collections

logs, trace, host_pid = sys.argv[1], sys.argv[2], sys.argv[3]
offset = float(open(sys.argv[4]).read())
slow = []
for line in open(logs):
    line = line.strip()
    if not line:
        continue
    try:
        rec = json.loads(line)
    except ValueError:
        continue
    msg = rec.get("message", "")
    m = re.search(r"held (\d+) µs for (\d+) work units \(budget (\d+)\).*started at (\d+) µs", msg)
    if m:
        hold, units, budget, start = map(int, m.groups())
        slow.append((start / 1e6 - offset, hold / 1e6, units, budget))

sw = re.compile(r"^\s*(\S.*?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+sched:sched_switch:\s+prev_comm=(.*?) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=(.*?) next_pid=(\d+)")
pf = re.compile(r"^\s*(\S.*?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+\d*\s*page-faults")
# Per thread: list of (on_cpu_start, on_cpu_end, cpu); off-CPU reasons keyed by switch-out time.
running = {}            # cpu -> (tid, since)
intervals = collections.defaultdict(list)
switch_out = collections.defaultdict(list)   # tid -> [(t, prev_state, next_comm)]
faults = collections.defaultdict(list)
tids_of_host = set()
comm_of = {}
for line in open(trace):
    m = sw.match(line)
    if m:
        comm, tid, cpu, t, pcomm, ppid, pstate, ncomm, npid = m.groups()
        t = float(t); cpu = int(cpu); ppid = int(ppid); npid = int(npid)
        if cpu in running and running[cpu][0] == ppid:
            intervals[ppid].append((running[cpu][1], t, cpu))
        switch_out[ppid].append((t, pstate, ncomm))
        running[cpu] = (npid, t)
        comm_of[ppid] = pcomm; comm_of[npid] = ncomm
        continue
    m = pf.match(line)
    if m:
        faults[int(m.group(2))].append(float(m.group(4)))

import os
host_tids = {int(t) for t in os.listdir(f"/proc/{host_pid}/task")} if os.path.exists(f"/proc/{host_pid}/task") else set()

def on_cpu(tid, a, b):
    return sum(max(0.0, min(e, b) - max(s, a)) for s, e, _ in intervals[tid])

def report(a, b):
    cands = host_tids or set(intervals)
    tid = max(cands, key=lambda t: on_cpu(t, a, b))
    run = on_cpu(tid, a, b)
    outs = [(t, st, nc) for t, st, nc in switch_out[tid] if a <= t < b]
    nf = sum(1 for t in faults[tid] if a <= t < b)
    return tid, run, outs, nf

first = min(s for ivs in intervals.values() for s, _, _ in ivs)
last = max(e for ivs in intervals.values() for _, e, _ in ivs)
traced = [t for t in slow if first <= t[0] and t[0] + t[1] <= last]
print(f"{len(slow)} slow transactions in the log, {len(traced)} inside the trace")
for start, hold, units, budget in traced:
    tid, run, outs, nf = report(start, start + hold)
    off = hold - run
    states = collections.Counter(st for _, st, _ in outs)
    instead = collections.Counter(nc for _, _, nc in outs)
    print(f"start {start:.6f} held {hold*1e3:6.2f} ms units {units:6d} budget {budget:6d} | "
          f"thread {tid} ({comm_of.get(tid,'?')}) on CPU {run*1e3:6.2f} ms, off {off*1e3:6.2f} ms, "
          f"switched out {len(outs)}x {dict(states)} for {dict(instead)}; page faults {nf}")
