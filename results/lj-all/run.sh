#!/usr/bin/env bash
# The LiveJournal-sized graph, SpacetimeDB beside PostgreSQL, Kuzu (LadybugDB) and FalkorDB in
# one run, every answer prepared before anything is timed (the driver since ce02d40): 10 queries
# per workload, one full BFS each, the same seed as scripts/bench. SpacetimeDB's queries run on
# its snapshot (--warm-snapshot), then its traversals under writes at 100, 1,000 and 10,000
# edges/s. Neo4j is left out: with it (2 GB heap, 3 GB page cache) the six systems do not fit in
# this 24 GiB machine, and the kernel killed graph-bench (4.4 GB RSS) during FalkorDB's load, the
# last one (six-systems-oom.log has what that run verified first). The mixed workload is left
# out: PostgreSQL's reader paths take up to 80 s each on this graph.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
export NEO4J_HEAP=1g NEO4J_PAGECACHE=512m PG_SHARED_BUFFERS=2GB
bench_beside_peers lj lj-all --systems stdb,postgres,kuzu,falkordb --warm-snapshot \
  --runs 10 --bfs-runs 1 --warmup 0 --writes 0 --roundtrip-calls 0 --mixed-secs 0
