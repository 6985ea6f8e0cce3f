#!/usr/bin/env bash
# A/B of graph-bench's throughput phase (50 WebSocket connections, 16 calls in flight each):
# graph-bench built at OLD (default 25d8f69, before the `_then` registry) against the
# checkout's, alternating, ROUNDS times (default 3), each on a fresh in-memory host of the
# checkout's build. Prints each run's rows of the report's throughput table.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../../.."
source scripts/lib.sh
ensure_toolchain
build_all
old_dir="$CARGO_TARGET_DIR-ab-old"
build_at "${OLD:-25d8f69}" "$old_dir" graph-bench
declare -A bench=([old]="$old_dir/release/graph-bench" [new]="$BENCH_BIN")
listen="${GRAPH_LISTEN:-127.0.0.1:3311}"
out="$(mktemp -d)"
for round in $(seq 1 "${ROUNDS:-3}"); do
  for side in old new; do
    start_host "$listen" --in-memory
    "${bench[$side]}" --server "http://$listen" --publish "$MODULE_WASM" --dataset dblp \
      --systems stdb --workloads neighbors --runs 1 --writes 0 --roundtrip-calls 0 \
      --propagation-writes 0 --under-writes-secs 0 --mixed-secs 0 \
      --throughput-inserts 100000 --in-flight 16 --server-pid "$HOST_PID" \
      --out "$out/$side-$round" >"$out/$side-$round.log" 2>&1
    kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true
    HOST_PID=
    echo "== $side $round"
    grep -h "50 connections" "$out/$side-$round/dblp.md"
  done
done
