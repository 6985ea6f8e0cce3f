#!/usr/bin/env bash
# What the order of a load call's row inserts does to the queries that read the rows: the
# LiveJournal-sized graph loaded by BASE's module (default ba6c735: each call's new edges
# inserted in (src, dst) order, a vertex's out-arcs on neighbouring rows) and by the working
# tree's (d55631a on: (dst, src) order, for the load's speed), each into a fresh in-memory
# graph-host, then the same sampled neighbor counts, depth-3 BFS and shortest paths after 3 ms
# of quiet over the WebSocket and HTTP, all through the indexes (the snapshot policy set to
# none, so that no query reads the module's in-memory snapshot, whose layout does not follow
# the rows'). ROUNDS rounds (default 1), sides
# alternating; each side's graph-bench report goes to OUT/<side>-<round>/ (default: beside this
# script), and summary.txt gets the load times and the p50/p99 of every workload.
#
#   results/load-order/run.sh [BASE] [ROUNDS] [OUT]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "${3:-$here}" && cd "${3:-$here}" && pwd)"
cd "$here/../.."
source scripts/lib.sh
ensure_toolchain
build_all
base="$(git rev-parse --short "${1:-ba6c735}")"
rounds="${2:-1}"
base_dir="$CARGO_TARGET_DIR/order-base"
build_at "$base" "$base_dir"
base_wasm="$base_dir/wasm32-unknown-unknown/release/graph_module.wasm"
listen="${GRAPH_LISTEN:-127.0.0.1:3317}"

# One side: load with module $2, then stop the module's in-memory snapshots (policy: none) so
# that every query reads the tables through their indexes, then measure.
run() {
  local side="$1" wasm="$2" dir="$out/$1-$3" token
  start_host "$listen" --in-memory
  token="$(curl -fsS -X POST "http://$listen/v1/identity" | sed -n 's/.*"token": *"\([^"]*\)".*/\1/p')"
  "$BENCH_BIN" --server "http://$listen" --token "$token" --publish "$wasm" --dataset lj \
    "${LOAD_ONLY[@]}" --out "$dir-load" >"$dir-load.log" 2>&1 || { cat "$dir-load.log" >&2; die "graph-bench failed"; }
  "$CARGO_TARGET_DIR/release/graph" --server "http://$listen" --token "$token" --database graph \
    snapshot-policy --max 0 --small-traversals false
  "$BENCH_BIN" --server "http://$listen" --token "$token" --dataset lj --skip-load \
    --systems stdb,stdb-http --workloads neighbors,bfs-depth,path --runs 100 --idle-ms 3 \
    --writes 0 --roundtrip-calls 0 --propagation-writes 0 --under-writes-secs 0 --mixed-secs 0 \
    --throughput-inserts 0 --out "$dir" >"$dir.log" 2>&1 || { cat "$dir.log" >&2; die "graph-bench failed"; }
  kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true; HOST_PID=
}

for round in $(seq "$rounds"); do
  run base "$base_wasm" "$round"
  run tree "$MODULE_WASM" "$round"
done
{
  echo "# base $base, tree $(git rev-parse --short HEAD); p50 | p99 per workload and mode"
  for log in "$out"/*-[0-9].log; do
    echo "## $(basename "$log" .log)"
    grep -m1 '^stdb: loaded' "${log%.log}-load.log"
    grep -E '^\| (neighbors|bfs-depth|path) \| stage2' "${log%.log}/lj.md" | awk -F'|' '{print $2 "|" $3 "|" $5 "|" $7}'
  done
} | tee "$out/summary.txt"
