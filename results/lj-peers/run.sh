#!/usr/bin/env bash
# LiveJournal-sized graph, the peers only (the embedded host's copy of the graph and Neo4j's and
# PostgreSQL's do not fit in 24 GiB together): 10 queries each, 1 full BFS, same seed as scripts/bench.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
export NEO4J_HEAP=4g NEO4J_PAGECACHE=4g PG_SHARED_BUFFERS=2GB
start_peers
"$BENCH_BIN" --dataset lj --out "$ROOT/results/lj-peers" \
  --systems neo4j,neo4j-apoc,postgres --neo4j bolt://127.0.0.1:7687 \
  --postgres "host=127.0.0.1 port=5439 user=postgres dbname=postgres" \
  --runs 10 --bfs-runs 1 --warmup 0 --writes 0 --roundtrip-calls 0
