"""Summarizes scripts/bench-paths-ab: the module's shortest paths at two commits, pair by pair.

usage: bench-paths-ab.py OUT ROUNDS CRITERION_ROUNDS NAME_BEFORE=COMMIT NAME_AFTER=COMMIT
"""
import gzip
import json
import re
import statistics
import sys

out, rounds, criterion_rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
(a_name, a_commit), (b_name, b_commit) = (arg.split("=", 1) for arg in sys.argv[4:6])


def load(run):
    rows = [json.loads(line) for line in gzip.open(f"{out}/{run}/dblp-samples.jsonl.gz")]
    stdb = {(r["a"], r["b"]): r for r in rows
            if r["system"] == "stdb" and r.get("total_us") and r["from_snapshot"]}
    native = {(r["a"], r["b"]): r["e2e_us"] for r in rows if r["system"] == "native"}
    return stdb, native


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


UNITS = {"ns": 1e-3, "µs": 1.0, "us": 1.0, "ms": 1e3, "s": 1e6}


def criterion_us(path):
    """The median estimate of criterion's `time: [low median high]` line, in µs."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r"time:\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]", text)
    if not m:
        sys.exit(f"{path}: no criterion time line")
    return float(m.group(1)) * UNITS[m.group(2)]


print(f"# Shortest paths on the snapshot: {a_name} ({a_commit}) and {b_name} ({b_commit})\n")
print(f"Command: `scripts/bench-paths-ab OUT {a_commit} {b_commit} {a_name} {b_name}`. DBLP-sized "
      "graph, 1,000 sampled out-direction pairs, one at a time over HTTP; server time is the "
      "module's own clock over the whole call. Only pairs answered from the snapshot in both runs "
      "of a round count (the calls before the snapshot has paid for itself walk the indexes). The "
      "native floor is the current search by slot, compiled natively, in the benchmark's process: "
      "a gauge of the machine's speed during each run.\n")
print(f"| round | pairs | {a_name}: server p50 / p90 / p99 | {b_name}: server p50 / p90 / p99 "
      f"| ns per arc, paths of > 2,000 arcs: {a_name} / {b_name} / native floor "
      f"| {b_name} ÷ {a_name} per pair (median, > 2,000 arcs) | native floor, second run ÷ first |")
print("|---|---:|---|---|---|---:|---:|")
for r in range(1, rounds + 1):
    (a, na), (b, nb) = load(f"{a_name}-{r}"), load(f"{b_name}-{r}")
    keys = [k for k in a if k in b]
    big = [k for k in keys if a[k]["edges_scanned"] > 2000]
    t = lambda runs: " / ".join(f"{pct([runs[k]['total_us'] for k in keys], p) / 1000:.2f}" for p in (50, 90, 99)) + " ms"
    per_arc = lambda runs: statistics.median(1000 * runs[k]["total_us"] / runs[k]["edges_scanned"] for k in big)
    native = statistics.median(1000 * nb[k] / b[k]["edges_scanned"] for k in big if k in nb)
    ratio = statistics.median(b[k]["total_us"] / a[k]["total_us"] for k in big)
    drift = statistics.median(nb[k] / na[k] for k in keys if k in na and k in nb)
    print(f"| {r} | {len(keys)} | {t(a)} | {t(b)} | {per_arc(a):.0f} / {per_arc(b):.0f} / {native:.0f} "
          f"| {ratio:.2f} | {drift:.2f} |")

if criterion_rounds:
    print("\nThe native search alone at both commits: criterion's "
          "`floor/DBLP-sized/shortest_path_pairs` (64 pairs per iteration, both directions), "
          "median time per iteration, rounds alternating:\n")
    print(f"| round | {a_name} | {b_name} | {b_name} ÷ {a_name} |")
    print("|---|---:|---:|---:|")
    for r in range(1, criterion_rounds + 1):
        x, y = (criterion_us(f"{out}/criterion-{n}-{r}.txt") for n in (a_name, b_name))
        print(f"| {r} | {x / 1000:.2f} ms | {y / 1000:.2f} ms | {y / x:.2f} |")
