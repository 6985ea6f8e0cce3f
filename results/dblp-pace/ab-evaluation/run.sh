#!/usr/bin/env bash
# A/B: graph-host before (864557a's WebSocket route) and after (1267eff's), alternating: the
# empty calls and write -> subscriber after 3 ms of quiet (dblp-pace's idle-3 pattern), over
# the WebSocket, on a fresh in-memory host each. Binaries as in ../../ws-throughput/ab-evaluation/.
set -euo pipefail
cd /work/main; source scripts/lib.sh
for round in 1 2 3; do
  for side in old new; do
    /tmp/graph-host-$side --listen 127.0.0.1:3305 --in-memory >/tmp/ab-pace/host-$side.log 2>&1 &
    pid=$!
    until curl -fsS http://127.0.0.1:3305/v1/ping >/dev/null 2>&1; do sleep 0.1; done
    out=/tmp/ab-pace/$side-$round
    "$BENCH_BIN" --server http://127.0.0.1:3305 --publish "$MODULE_WASM" --dataset dblp --systems stdb \
      --workloads neighbors --idle-ms 3 --writes 0 --under-writes-secs 0 --mixed-secs 0 \
      --throughput-inserts 0 --out "$out" >"$out.log" 2>&1
    kill -INT $pid; wait $pid || true
    empty=$(grep -E "^\| empty procedure \| stage2 " $out/dblp.md | cut -d'|' -f5,7 | tr -s ' ')
    neigh=$(grep -E "^\| neighbors \| stage2 " $out/dblp.md | cut -d'|' -f5,7 | tr -s ' ')
    live=$(grep -E "subscriber sees graph_meta change \| on" $out/dblp.md | cut -d'|' -f5,6 | tr -s ' ')
    echo "$side $round: empty procedure p50|p99 $empty; neighbor count $neigh; write->subscriber (confirmed) $live"
  done
done
