#!/usr/bin/env bash
# The slow-transaction experiment: an LJ-sized graph, full BFS under a system-wide scheduler trace.
set -euo pipefail
T=$HOME/.cache/stdb-graph/target
OUT=${OUT:-/tmp/lj-exp}
PORT=3100
S=http://127.0.0.1:$PORT
mkdir -p "$OUT"
"$T/release/graph-host" --listen 127.0.0.1:$PORT --in-memory --data-dir "$OUT/host" >"$OUT/host.log" 2>&1 &
echo $! > "$OUT/host.pid"
for _ in $(seq 100); do curl -fsS $S/v1/ping >/dev/null 2>&1 && break; sleep 0.2; done
TOKEN=$(curl -fsS -X POST $S/v1/identity | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
echo "$TOKEN" > "$OUT/token"
"$T/release/graph-bench" --server $S --token "$TOKEN" --publish "$T/wasm32-unknown-unknown/release/graph_module.wasm" \
  --dataset lj --systems stdb --workloads neighbors --runs 5 --writes 0 --roundtrip-calls 0 --out "$OUT/load" 2>&1 | tee "$OUT/load.txt"
echo loaded
