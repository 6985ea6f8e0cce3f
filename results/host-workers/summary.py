"""Tables of run.sh's rounds, one column per round, from each round's JSON report."""
import json
import pathlib
import sys

here = pathlib.Path(sys.argv[1])


def rounds(kind, workers):
    found = sorted(here.glob(f"{kind}/workers-{workers}-round-*/*.json"))
    return [json.loads(p.read_text()) for p in found if not p.name.endswith("samples.json")]


def us(x):
    return f"{x:.0f} µs"


print("## Calls after 3 ms of quiet, p50 (p99), one column per round\n")
print("| call | worker threads | rounds |")
print("|---|---:|---|")
for system, workload, name in [
    ("stdb", "empty procedure", "empty procedure, SDK"),
    ("stdb-ws-raw", "empty procedure", "empty procedure, raw frames"),
    ("stdb", "empty reducer", "empty reducer, SDK"),
    ("stdb-ws-raw", "empty reducer", "empty reducer, raw frames"),
    ("stdb", "neighbors", "neighbor count, SDK"),
]:
    for workers in (2, 1):
        cells = []
        for report in rounds("calls", workers):
            row = next(r for r in report["results"] if r["system"] == system and r["workload"] == workload)
            cells.append(f"{us(row['e2e']['p50'])} ({us(row['e2e']['p99'])})")
        print(f"| {name} | {workers} | {' · '.join(cells)} |")

print("\n## 50 connections, single-call reducers, calls/s, one column per round\n")
print("| calls | in flight | worker threads | rounds |")
print("|---|---:|---:|---|")
for reducer, keys, name in [
    ("add_edges", "uniform", "inserts, uniform"),
    ("add_edges", "zipf s=1.3", "inserts, Zipf"),
    ("noop_reducer", "\u2013", "empty reducer"),
]:
    for in_flight in (1, 16):
        for workers in (2, 1):
            cells = []
            for report in rounds("throughput", workers):
                row = next(
                    t
                    for t in report["throughput"]
                    if t["reducer"] == reducer and t["keys"] == keys and t["in_flight"] == in_flight
                )
                cells.append(f"{row['per_second'] / 1000:.1f}K")
            print(f"| {name} | {in_flight} | {workers} | {' · '.join(cells)} |")
