#!/usr/bin/env bash
# The LiveJournal-sized graph, SpacetimeDB beside Neo4j (plain Cypher and APOC), PostgreSQL, Kuzu
# (LadybugDB) and FalkorDB in one run, every answer prepared before anything is timed: 10 queries
# per workload, one full BFS each, the same seed as scripts/bench. Every system first runs one
# unmeasured full BFS (--warm-bfs), which also builds SpacetimeDB's snapshot, so its queries run
# on it; then SpacetimeDB's traversals under writes at 100, 1,000 and 10,000 edges/s.
# graph-bench releases each peer's store once it is measured (System::release), and
# Neo4j, whose JVM keeps its heap and page cache whatever they hold, runs last: before that,
# the six systems did not fit in this 24 GiB machine (six-systems-oom.log). The mixed workload
# is left out: PostgreSQL's reader paths take up to 80 s each on this graph.
# Every call of every system follows 3 ms of quiet (--idle-ms 3, outside the clock): back to back,
# 2.14's send worker holds each WebSocket result until its next 1 ms tick (README, "calls back to
# back"), which would hide the per-call time of the queries that take less than that.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
export NEO4J_HEAP=2g NEO4J_PAGECACHE=3g PG_SHARED_BUFFERS=2GB KUZU_BUFFER_POOL=4g
bench_beside_peers lj lj-all --systems stdb,postgres,kuzu,falkordb,neo4j,neo4j-apoc \
  --warm-bfs --idle-ms 3 --runs 10 --bfs-runs 1 --warmup 0 --writes 0 --roundtrip-calls 0 --mixed-secs 0
