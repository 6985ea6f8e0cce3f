#!/usr/bin/env bash
# graph-host with two runtime worker threads (tokio's default on this 2-core machine) against
# one (`--worker-threads 1`), alternating, ROUNDS rounds of
# each: after 3 ms of quiet before every call (outside the clock), the empty procedure and the
# empty reducer over the SDK's WebSocket and as raw frames, and neighbor counts, on a 100-vertex
# ring; then 50 connections' concurrent single-edge inserts and empty reducers on the DBLP-sized
# graph, with 1 and 16 calls in flight. Every host is fresh and in memory.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
source scripts/lib.sh
ensure_toolchain
build_all
rounds="${ROUNDS:-3}"
listen="${GRAPH_LISTEN:-127.0.0.1:3304}"
mkdir -p "$here/calls" "$here/throughput"
common=(--writes 0 --propagation-writes 0 --under-writes-secs 0 --mixed-secs 0)
for round in $(seq 1 "$rounds"); do
  for workers in 2 1; do
    out="$here/calls/workers-$workers-round-$round"
    rm -rf "$out"
    start_host "$listen" --in-memory --worker-threads "$workers"
    "$BENCH_BIN" --server "http://$listen" --publish "$MODULE_WASM" --dataset ring:100 \
      --server-kind "embedded graph-host, $workers worker threads (in memory)" \
      --systems stdb --workloads neighbors --runs 2000 --idle-ms 3 --roundtrip-calls 2000 \
      --throughput-inserts 0 "${common[@]}" --out "$out" >"$out.log" 2>&1
    kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true
  done
done
for round in $(seq 1 "$rounds"); do
  for workers in 2 1; do
    out="$here/throughput/workers-$workers-round-$round"
    rm -rf "$out"
    start_host "$listen" --in-memory --worker-threads "$workers"
    "$BENCH_BIN" --server "http://$listen" --publish "$MODULE_WASM" --dataset dblp \
      --server-kind "embedded graph-host, $workers worker threads (in memory)" \
      --systems stdb --workloads neighbors --runs 1 --roundtrip-calls 0 \
      --throughput-inserts 60000 --in-flight 1,16 "${common[@]}" --out "$out" >"$out.log" 2>&1
    kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true
  done
done
python3 "$here/summary.py" "$here" >"$here/summary.md"
cat "$here/summary.md"
