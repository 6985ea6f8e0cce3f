#!/usr/bin/env bash
# SpacetimeDB alone on the LiveJournal-sized graph: its traversals under writes at 100, 1,000
# and 10,000 edges/s (fresh vertices far above the graph's ids, as in lj-all), after the snapshot
# is built (--warm-snapshot), with a depth-3 BFS and a shortest path measured first. The check
# that a write adding a far-off vertex no longer stalls a catch-up (lj-all had one 473 ms
# catch-up, and a 468 ms write behind it, at 100 edges/s).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
export NEO4J_HEAP=512m NEO4J_PAGECACHE=128m PG_SHARED_BUFFERS=128MB KUZU_BUFFER_POOL=1g
bench_beside_peers lj lj-under-writes --systems stdb --warm-snapshot --workloads bfs-depth,path \
  --runs 10 --warmup 0 --writes 0 --roundtrip-calls 0 --mixed-secs 0 --propagation-writes 0 \
  --throughput-inserts 0
