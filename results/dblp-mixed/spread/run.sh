#!/usr/bin/env bash
# The spread of SpacetimeDB's figures under the mixed workload: ../run.sh's graph-bench command
# with --systems stdb (2 writers and 4 readers for 30 s uniform, then 30 s Zipf-skewed), ROUNDS
# times (default 3), each on a fresh in-memory host, no peer running. Writes round-N/ beside
# this script and prints each round's operation tables.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../../.."
source scripts/lib.sh
ensure_toolchain
build_all
rounds="${ROUNDS:-3}"
listen="${GRAPH_LISTEN:-127.0.0.1:3304}"
for round in $(seq 1 "$rounds"); do
  start_host "$listen" --in-memory
  out="$here/round-$round"
  rm -rf "$out"
  "$BENCH_BIN" --server "http://$listen" \
    --server-kind "embedded graph-host (spacetimedb-core 2.14.0, in memory)" \
    --publish "$MODULE_WASM" --dataset dblp --out "$out" --server-pid "$HOST_PID" \
    --systems stdb --workloads neighbors,bfs-depth,path --writes 0 --roundtrip-calls 0 \
    --propagation-writes 0 --throughput-inserts 0 --under-writes-secs 0 --mixed-secs 30 \
    >/dev/null
  rm -f "$out"/*.png "$out"/dblp-samples.csv
  gzip -f "$out/dblp-samples.jsonl"
  kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true
  HOST_PID=
done
for round in $(seq 1 "$rounds"); do
  echo "round $round"
  grep -A8 "^| operation | count" "$here/round-$round/dblp.md"
done
