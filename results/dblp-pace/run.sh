#!/usr/bin/env bash
# Calls back to back against calls after an idle pause, on the DBLP-sized graph: Stage 2 over the
# SDK's WebSocket and over HTTP beside PostgreSQL, in one host and one PostgreSQL, twice: with
# --idle-ms 0 (each call as soon as the previous answer is verified) and --idle-ms 3 (3 ms of
# nothing before each call, outside the clock: an application that calls now and then).
# SpacetimeDB 2.14's send worker delays a result that follows the previous one within about a
# millisecond (results/README.md), so the two differ on the WebSocket. Each pass also measures
# write → subscriber with the same pause, and the concurrent single-edge inserts of 50
# connections with 1 and 16 calls in flight per connection; so each pass loads the graph afresh,
# on a host of its own (a second graph-bench has an identity of its own, which may not replace
# the first one's database).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
ensure_toolchain
build_all
start_peers
listen="${GRAPH_LISTEN:-127.0.0.1:3000}"
for idle in 0 3; do
  start_host "$listen" --in-memory
  "$BENCH_BIN" --server "http://$listen" \
    --server-kind "embedded graph-host (spacetimedb-core 2.14.0, in memory)" \
    --publish "$MODULE_WASM" --dataset dblp --out "$ROOT/results/dblp-pace/idle-$idle" \
    --server-pid "$HOST_PID" "${PEER_ARGS[@]:2}" --systems stdb,stdb-http,postgres \
    --workloads neighbors,bfs-depth,path --idle-ms "$idle" --in-flight 1,16 \
    --writes 0 --under-writes-secs 0 --mixed-secs 0
  kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true
done
