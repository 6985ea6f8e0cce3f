#!/usr/bin/env bash
# A/B: graph-host writing each WebSocket frame with its own flush (old, 1adad76) against one
# flush per batch of the engine's messages (new), alternating, the ws-throughput bench's
# 16-in-flight phases on a fresh in-memory host each. The two binaries were built first (after
# `source scripts/lib.sh`): at 1adad76 `cargo build --release --locked -p graph-host && cp
# "$HOST_BIN" /tmp/graph-host-old`, then the same with the change for /tmp/graph-host-new.
# SIDES names other binaries (/tmp/graph-host-NAME) and RESULT the file the lines go to.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../../.."
source scripts/lib.sh
rounds="${ROUNDS:-4}"
mkdir -p /tmp/ab-ws
result="$here/${RESULT:-result.txt}"
: >"$result"
for round in $(seq 1 "$rounds"); do
  for side in ${SIDES:-old new}; do
    /tmp/graph-host-$side --listen 127.0.0.1:3304 --in-memory >/tmp/ab-ws/host-$side.log 2>&1 &
    pid=$!
    until curl -fsS http://127.0.0.1:3304/v1/ping >/dev/null 2>&1; do sleep 0.1; done
    out=/tmp/ab-ws/$side-$round
    "$BENCH_BIN" --server http://127.0.0.1:3304 --publish "$MODULE_WASM" --dataset dblp --systems stdb \
      --workloads neighbors --runs 1 --writes 0 --roundtrip-calls 0 --propagation-writes 0 \
      --under-writes-secs 0 --mixed-secs 0 --throughput-inserts 100000 --in-flight 16 \
      --out "$out" >"$out.log" 2>&1
    kill -INT $pid; wait $pid || true
    line="$side $round: $(grep -A8 'concurrent single-call reducers (WebSocket)' $out/dblp.md | grep '^| ' | tail -3 | cut -d'|' -f3,5,9 | tr '\n' ';')"
    echo "$line" | tee -a "$result"
  done
done
