#!/usr/bin/env bash
# A/B: the module before and after its read-only transactions were rolled back instead of
# committed (BASE: the commit before, whose every procedure transaction commits), alternating,
# each on a fresh in-memory graph-host (the same binary): graph-bench on the dblp-like graph,
# Stage 2 over the SDK's WebSocket and over HTTP, neighbor count, depth-3 BFS and shortest path
# (RUNS queries each) and the empty calls, after 3 ms of quiet and back to back. Writes each
# run's report to $OUT/<side>-idle<ms>-<round>/, its per-call samples to samples/ here (gzipped
# CSV) and one line per run to result.txt here.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
source scripts/lib.sh
ensure_toolchain
build_all
BASE="${BASE:-bc423e5}"
ROUNDS="${ROUNDS:-3}"
RUNS="${RUNS:-300}"
OUT="${OUT:-$(mktemp -d)}"
# The module at BASE, built in a worktree of its own, into a target dir beside the usual one.
base_src="$OUT/base-src"
[ -d "$base_src" ] || git worktree add --detach "$base_src" "$BASE" >/dev/null
(cd "$base_src" && CARGO_TARGET_DIR="$CARGO_TARGET_DIR-base" \
  cargo build --release --locked -p graph-module --target wasm32-unknown-unknown)
before_wasm="$CARGO_TARGET_DIR-base/wasm32-unknown-unknown/release/graph_module.wasm"
listen="${GRAPH_LISTEN:-127.0.0.1:3306}"
row() { # the p50 and p99 columns of report $1's row for workload $2 and mode $3
  grep -E "^\| $2 \| $3 \|" "$1" | cut -d'|' -f5,7 | tr -s ' '
}
{
  echo "# results/pace-readonly/run.sh: BASE=$BASE ($(git rev-parse --short "$BASE")) against $(git rev-parse --short HEAD), ROUNDS=$ROUNDS RUNS=$RUNS, $(date -u +%F)"
  echo "# p50 | p99 of each: WebSocket (stage2) and HTTP (stage2-http)"
  for round in $(seq 1 "$ROUNDS"); do
    for idle in 3 0; do
      for side in before after; do
        wasm="$MODULE_WASM"
        [ "$side" = before ] && wasm="$before_wasm"
        start_host "$listen" --in-memory >/dev/null
        out="$OUT/$side-idle$idle-$round"
        "$BENCH_BIN" --server "http://$listen" --publish "$wasm" --dataset dblp \
          --systems stdb,stdb-http --workloads neighbors,bfs-depth,path --runs "$RUNS" \
          --idle-ms "$idle" --writes 0 --under-writes-secs 0 --mixed-secs 0 \
          --throughput-inserts 0 --propagation-writes 0 --out "$out" >"$out.log" 2>&1
        kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true
        mkdir -p "$here/samples"
        gzip -9c "$out/dblp-samples.csv" >"$here/samples/$side-idle$idle-$round.csv.gz"
        md="$out/dblp.md"
        line="$side idle $idle ms, round $round:"
        for w in "empty procedure" neighbors bfs-depth path; do
          line="$line $w ws$(row "$md" "$w" stage2) http$(row "$md" "$w" stage2-http);"
        done
        echo "$line"
      done
    done
  done
} | tee "$here/result.txt"
git worktree remove --force "$base_src"
