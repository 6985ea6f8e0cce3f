#!/usr/bin/env bash
# Stage 2 beside every peer on the fb-like graph: Neo4j (plain and APOC), PostgreSQL, Kuzu
# (LadybugDB) and FalkorDB, started as start_peers starts them, one fresh in-memory host; the
# SpacetimeDB-only workloads are off. Every answer of every system is verified, outside the clock.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
bench_beside_peers fb fb-peers --systems stdb,stdb-http,neo4j,neo4j-apoc,postgres,kuzu,falkordb \
  --writes 0 --under-writes-secs 0 --mixed-secs 0 --propagation-writes 0 --throughput-inserts 0
