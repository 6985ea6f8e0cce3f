#!/usr/bin/env bash
# Phase 2 with plain HTTP calls: 3 full BFS and 200 depth-3 BFS on the loaded graph under a
# system-wide scheduler and page-fault trace; then the module log.
set -euo pipefail
OUT=${OUT:-/tmp/lj-exp}
S=http://127.0.0.1:3100
TOKEN=$(cat "$OUT/token")
call() { curl -fsS -X POST -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" \
  --data "$2" "$S/v1/database/graph/call/$1"; echo; }
python3 -c "import time; print(time.clock_gettime(time.CLOCK_REALTIME)-time.clock_gettime(time.CLOCK_MONOTONIC))" > "$OUT/clock-offset"
perf record -a -k mono -e sched:sched_switch -e page-faults -c 1 -o "$OUT/sched.data" 2>"$OUT/perf.err" &
PERF=$!
sleep 2
: > "$OUT/calls.jsonl"
for start in 716302 12345 2000000; do
  call bfs "[$start, \"both\", {\"none\": {}}, 0, 0, 0]" >> "$OUT/calls.jsonl"
done
for start in $(python3 -c "import random; r=random.Random(7); print(' '.join(str(r.randrange(3997958)) for _ in range(200)))"); do
  call bfs "[$start, \"both\", {\"some\": 3}, 0, 0, 0]" >> "$OUT/calls.jsonl" || true
done
kill -INT $PERF; wait $PERF || true
curl -fsS -H "Authorization: Bearer $TOKEN" "$S/v1/database/graph/logs?num_lines=100000" > "$OUT/module-logs.ndjson"
grep -c "slow transaction" "$OUT/module-logs.ndjson" || true
