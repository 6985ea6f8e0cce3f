#!/usr/bin/env bash
# Stage 2 against its native floor on the LiveJournal-sized graph, in one run: SpacetimeDB
# (WebSocket, snapshot warmed) and the native floor (the module's own operator run natively in
# the benchmark's process on the same edges); 10 queries per workload, 3 full BFS. The peers on
# this graph are in lj-all/.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
ensure_toolchain
build_all
listen="${GRAPH_LISTEN:-127.0.0.1:3000}"
start_host "$listen" --in-memory
"$BENCH_BIN" --server "http://$listen" \
  --server-kind "embedded graph-host (spacetimedb-core 2.14.0, in memory)" \
  --publish "$MODULE_WASM" --dataset lj --out "$ROOT/results/lj-floor" --server-pid "$HOST_PID" \
  --systems stdb,native --warm-snapshot --workloads neighbors,bfs,bfs-depth,path \
  --runs 10 --bfs-runs 3 --warmup 1 --roundtrip-calls 0 \
  --writes 0 --under-writes-secs 0 --mixed-secs 0 --propagation-writes 0 --throughput-inserts 0
kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true
