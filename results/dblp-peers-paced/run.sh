#!/usr/bin/env bash
# The dblp-peers run with 3 ms of quiet before every call of every system (--idle-ms 3, outside
# the clock): SpacetimeDB over the SDK's WebSocket and over HTTP beside Neo4j (Cypher and APOC),
# PostgreSQL, Kuzu and FalkorDB. Back to back (../dblp-peers/), 2.14's send worker holds each
# WebSocket result until its next 1 ms tick (README, "calls back to back"); this is the pattern
# of an application that calls now and then.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
bench_beside_peers dblp dblp-peers-paced --systems stdb,stdb-http,neo4j,neo4j-apoc,postgres,kuzu,falkordb \
  --idle-ms 3 --writes 0 --under-writes-secs 0 --mixed-secs 0 --propagation-writes 0 --throughput-inserts 0
