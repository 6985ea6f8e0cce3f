#!/usr/bin/env bash
# The LJ-sized graph loaded in (src, dst) order, so that each vertex's out-arcs sit together in
# the table's pages; then the same 100 depth-3 BFS as on the file-order load.
set -euo pipefail
T=$HOME/.cache/stdb-graph/target
OUT=/tmp/lj-sorted
S=http://127.0.0.1:3200
"$T/release/graph-host" --listen 127.0.0.1:3200 --in-memory --data-dir "$OUT/host" >"$OUT/host.log" 2>&1 &
echo $! > "$OUT/host.pid"
for _ in $(seq 100); do curl -fsS $S/v1/ping >/dev/null 2>&1 && break; sleep 0.2; done
TOKEN=$(curl -fsS -X POST $S/v1/identity | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
echo "$TOKEN" > "$OUT/token"
GRAPH_SORTED_LOAD=1 /tmp/lj-exp/graph-bench-sorted --server $S --token "$TOKEN" --publish "$OUT/head.wasm" \
  --dataset lj --systems stdb --workloads neighbors --runs 5 --writes 0 --roundtrip-calls 0 --out "$OUT/load" > "$OUT/load.txt" 2>&1
for r in 1 2; do OUT=$OUT WASM=head.wasm TAG=sorted-r$r N=100 SEED=$((20+r)) ./phase4.sh > /dev/null 2>&1; done
echo done
