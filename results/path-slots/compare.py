"""Sets the module's shortest paths by slot against the same pairs by id (results/path-slots)."""
import gzip
import json
import statistics
import subprocess
import sys

here, rounds, before = sys.argv[1], int(sys.argv[2]), sys.argv[3]


def load(run):
    rows = [json.loads(line) for line in gzip.open(f"{here}/{run}/dblp-samples.jsonl.gz")]
    stdb = {(r["a"], r["b"]): r for r in rows
            if r["system"] == "stdb" and r.get("total_us") and r["from_snapshot"]}
    native = {(r["a"], r["b"]): r["e2e_us"] for r in rows if r["system"] == "native"}
    return stdb, native


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
print(f"# Shortest paths on the snapshot: by id ({before}) and by slot ({head})\n")
print("Command: `results/path-slots/run.sh`. DBLP-sized graph, 1,000 sampled out-direction pairs, "
      "one at a time over HTTP; server time is the module's own clock over the whole call. Only "
      "pairs answered from the snapshot in both runs of a round count (the first ~340 calls walk "
      "the indexes until the snapshot has paid for itself). The native floor is the same search "
      "by slot, compiled natively, in the benchmark's process.\n")
print("| round | pairs | by id: server p50 / p90 / p99 | by slot: server p50 / p90 / p99 "
      "| ns per arc, paths of > 2,000 arcs: id / slot / native floor | slot ÷ id per pair (median, > 2,000 arcs) "
      "| native floor, second run ÷ first |")
print("|---|---:|---|---|---|---:|---:|")
for r in range(1, rounds + 1):
    (a, na), (b, nb) = load(f"by-id-{r}"), load(f"by-slot-{r}")
    keys = [k for k in a if k in b]
    big = [k for k in keys if a[k]["edges_scanned"] > 2000]
    t = lambda runs: " / ".join(f"{pct([runs[k]['total_us'] for k in keys], p) / 1000:.2f}" for p in (50, 90, 99)) + " ms"
    per_arc = lambda runs: statistics.median(1000 * runs[k]["total_us"] / runs[k]["edges_scanned"] for k in big)
    native = statistics.median(1000 * nb[k] / b[k]["edges_scanned"] for k in big if k in nb)
    ratio = statistics.median(b[k]["total_us"] / a[k]["total_us"] for k in big)
    drift = statistics.median(nb[k] / na[k] for k in keys if k in na and k in nb)
    print(f"| {r} | {len(keys)} | {t(a)} | {t(b)} | {per_arc(a):.0f} / {per_arc(b):.0f} / {native:.0f} "
          f"| {ratio:.2f} | {drift:.2f} |")
