#!/usr/bin/env bash
# Stage 2 against its native floor and the in-memory peers on the DBLP-sized graph, in one run:
# SpacetimeDB (WebSocket, snapshot warmed), the native floor (the module's own operator run
# natively in the benchmark's process on the same edges), PostgreSQL, Kuzu (LadybugDB) and
# FalkorDB. The report's comparison gives "stdb ÷ native floor" per workload.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
ensure_toolchain
build_all
start_peers
listen="${GRAPH_LISTEN:-127.0.0.1:3000}"
start_host "$listen" --in-memory
"$BENCH_BIN" --server "http://$listen" \
  --server-kind "embedded graph-host (spacetimedb-core 2.14.0, in memory)" \
  --publish "$MODULE_WASM" --dataset dblp --out "$ROOT/results/dblp-floor" --server-pid "$HOST_PID" \
  "${PEER_ARGS[@]:2}" --systems stdb,native,postgres,kuzu,falkordb --warm-snapshot \
  --workloads neighbors,bfs,bfs-depth,path \
  --writes 0 --under-writes-secs 0 --mixed-secs 0 --propagation-writes 0 --throughput-inserts 0
kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true
