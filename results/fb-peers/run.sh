#!/usr/bin/env bash
# Stage 2 beside every peer on the fb-like graph: Neo4j (plain and APOC), PostgreSQL, Kuzu
# (LadybugDB) and FalkorDB, started as start_peers starts them, one fresh in-memory host; the
# SpacetimeDB-only workloads are off. Every answer of every system is verified, outside the clock.
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
  --publish "$MODULE_WASM" --dataset fb --out "$ROOT/results/fb-peers" --server-pid "$HOST_PID" \
  "${PEER_ARGS[@]:2}" --systems stdb,neo4j,neo4j-apoc,postgres,kuzu,falkordb \
  --writes 0 --under-writes-secs 0 --mixed-secs 0 --propagation-writes 0 --throughput-inserts 0
kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true
