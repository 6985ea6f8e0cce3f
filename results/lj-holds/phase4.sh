#!/usr/bin/env bash
# Per-transaction cost: the module updated in place to a build that logs every transaction's
# hold and cumulative work; 100 depth-3 BFS through the indexes.
set -euo pipefail
OUT=${OUT:-/tmp/lj-exp}
S=http://127.0.0.1:3100
TOKEN=$(cat "$OUT/token")
curl -fsS -X PUT -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/wasm" \
  --data-binary @"$OUT/${WASM:-graph_module_txcost.wasm}" "$S/v1/database/graph"; echo
call() { curl -fsS -X POST -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" \
  --data "$2" "$S/v1/database/graph/call/$1"; echo; }
: > "$OUT/${TAG:-txcost}-calls.jsonl"
for start in $(python3 -c "import random; r=random.Random(${SEED:-11}); print(' '.join(str(r.randrange(3997958)) for _ in range(${N:-100})))"); do
  call bfs "[$start, \"both\", {\"some\": 3}, 0, 0, 0]" >> "$OUT/${TAG:-txcost}-calls.jsonl" || true
done
curl -fsS -H "Authorization: Bearer $TOKEN" "$S/v1/database/graph/logs?num_lines=1000000" > "$OUT/${TAG:-txcost}-logs.ndjson"
