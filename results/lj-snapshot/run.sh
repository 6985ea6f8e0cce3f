#!/usr/bin/env bash
# Phase 3: the same loaded graph, the module updated in place (no data cleared) to the snapshot
# build, Stage 2 beside Stage 1 in one run.
set -euo pipefail
T=$HOME/.cache/stdb-graph/target
OUT=${OUT:-/tmp/lj-exp}
S=http://127.0.0.1:3100
TOKEN=$(cat "$OUT/token")
curl -fsS -X PUT -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/wasm" \
  --data-binary @"$T/wasm32-unknown-unknown/release/graph_module.wasm" "$S/v1/database/graph"; echo
"$T/release/graph-bench" --server $S --token "$TOKEN" --skip-load --dataset lj --systems stdb,stdb-stage1 \
  --server-kind "embedded graph-host (spacetimedb-core 2.14.0, in memory)" \
  --workloads neighbors,bfs,bfs-depth,path --bfs-runs 4 --runs 30 --stage1-runs 2 --warmup 0 \
  --roundtrip-calls 0 --out "$OUT/snapshot" 2>&1 | tee "$OUT/snapshot.txt"
