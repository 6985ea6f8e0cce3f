#!/usr/bin/env bash
# The LiveJournal-sized graph, SpacetimeDB beside PostgreSQL, Kuzu (LadybugDB) and FalkorDB in
# one run, every answer prepared before anything is timed (the driver since ce02d40): 10 queries
# per workload, one full BFS each, the same seed as scripts/bench. SpacetimeDB's queries run on
# its snapshot (--warm-snapshot), then its traversals under writes at 100, 1,000 and 10,000
# edges/s. Neo4j is left out: its load alone takes 19 minutes here (results/lj-peers). The mixed
# workload is left out: PostgreSQL's reader paths take up to 80 s each on this graph.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
ensure_toolchain
build_all
export NEO4J_HEAP=1g NEO4J_PAGECACHE=512m PG_SHARED_BUFFERS=2GB
start_peers
listen="${GRAPH_LISTEN:-127.0.0.1:3000}"
start_host "$listen" --in-memory
"$BENCH_BIN" --server "http://$listen" \
  --server-kind "embedded graph-host (spacetimedb-core 2.14.0, in memory)" \
  --publish "$MODULE_WASM" --dataset lj --out "$ROOT/results/lj-all" --server-pid "$HOST_PID" \
  "${PEER_ARGS[@]:2}" --systems stdb,postgres,kuzu,falkordb --warm-snapshot \
  --runs 10 --bfs-runs 1 --warmup 0 --writes 0 --roundtrip-calls 0 --mixed-secs 0
kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true
