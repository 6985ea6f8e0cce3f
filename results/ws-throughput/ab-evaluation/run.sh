#!/usr/bin/env bash
# A/B: graph-host before (864557a's WebSocket route) and after (evaluation polled beside the
# socket), alternating, the ws-throughput bench's 16-in-flight phases on a fresh host each.
# The two binaries were built first (after `source scripts/lib.sh`):
#   git show 864557a:host/src/routes/subscribe.rs > host/src/routes/subscribe.rs
#   cargo build --release --locked -p graph-host && cp "$HOST_BIN" /tmp/graph-host-old
#   git checkout host/src/routes/subscribe.rs     # 1267eff's
#   cargo build --release --locked -p graph-host && cp "$HOST_BIN" /tmp/graph-host-new
set -euo pipefail
cd /work/main; source scripts/lib.sh
for round in 1 2 3 4; do
  for side in old new; do
    /tmp/graph-host-$side --listen 127.0.0.1:3304 --in-memory >/tmp/ab-ws/host-$side.log 2>&1 &
    pid=$!
    until curl -fsS http://127.0.0.1:3304/v1/ping >/dev/null 2>&1; do sleep 0.1; done
    out=/tmp/ab-ws/$side-$round
    "$BENCH_BIN" --server http://127.0.0.1:3304 --publish "$MODULE_WASM" --dataset dblp --systems stdb \
      --workloads neighbors --runs 1 --writes 0 --roundtrip-calls 0 --propagation-writes 0 \
      --under-writes-secs 0 --mixed-secs 0 --throughput-inserts 100000 --in-flight 16 \
      --out "$out" >"$out.log" 2>&1
    kill -INT $pid; wait $pid || true
    echo "$side $round: $(grep -A8 'concurrent single-call reducers (WebSocket)' $out/dblp.md | grep '^| ' | tail -3 | cut -d'|' -f3,5,9 | tr '\n' ';')"
  done
done
