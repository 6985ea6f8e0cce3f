#!/usr/bin/env bash
# Stage 2 against its native floor and the in-memory peers on the DBLP-sized graph, in one run:
# SpacetimeDB (WebSocket, snapshot warmed), the native floor (the module's own operator run
# natively in the benchmark's process on the same edges), PostgreSQL, Kuzu (LadybugDB) and
# FalkorDB. The report's comparison gives "stdb ÷ native floor" per workload.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
bench_beside_peers dblp dblp-floor --systems stdb,native,postgres,kuzu,falkordb --warm-snapshot \
  --workloads neighbors,bfs,bfs-depth,path \
  --writes 0 --under-writes-secs 0 --mixed-secs 0 --propagation-writes 0 --throughput-inserts 0
