#!/usr/bin/env bash
# The mixed concurrent workload on the dblp-like graph, SpacetimeDB beside every peer that takes
# concurrent clients (Neo4j, PostgreSQL, FalkorDB; Kuzu is reached through one worker pipe and
# skips it): 2 writers and 4 readers for 30 s uniform, then 30 s Zipf-skewed, each after the
# default 5 s warm-up (--mixed-warmup-secs), on a fresh in-memory host with the module's default
# snapshot policy (2 snapshots, small traversals build one once they have paid for it).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
bench_beside_peers dblp dblp-mixed --systems stdb,neo4j,postgres,kuzu,falkordb \
  --workloads neighbors,bfs-depth,path --writes 0 --roundtrip-calls 0 --propagation-writes 0 \
  --throughput-inserts 0 --under-writes-secs 0 --mixed-secs 30
