#!/usr/bin/env bash
# The timer pump on and off (graph-host --no-timer-pump), same binaries, alternating, two
# rounds: 20 full BFS on the dblp-like graph (snapshot warmed) beside the native floor, and
# 1,000 empty calls back to back over the WebSocket. Reports: dblp-{pump,nopump}-{1,2}.{md,json}.
# Then, once per setting, a writer inserting 300 single edges over a second WebSocket while
# full BFS run back to back (`--writes 300`): dblp-writes-{pump,nopump}.{md,json}.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/lib.sh
ensure_toolchain
build_all
out=results/yield-curve/pump
listen=127.0.0.1:3100

# One fresh host with the pump on or off (`$1`), one graph-bench run (the rest of the
# arguments), its report saved as `$out/dblp-$name.{md,json}` (`$2`).
bench() {
  local mode="$1" name="$2"
  shift 2
  local flags=(--in-memory)
  [ "$mode" = nopump ] && flags+=(--no-timer-pump)
  start_host "$listen" "${flags[@]}"
  "$BENCH_BIN" --server "http://$listen" --publish "$MODULE_WASM" --dataset dblp \
    --warm-snapshot --workloads bfs --propagation-writes 0 --throughput-inserts 0 \
    --under-writes-secs 0 --mixed-secs 0 --out "/tmp/yield-pump-$name" "$@"
  kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true
  cp "/tmp/yield-pump-$name/dblp.md" "$out/dblp-$name.md"
  cp "/tmp/yield-pump-$name/dblp.json" "$out/dblp-$name.json"
}

for round in 1 2; do
  for mode in pump nopump; do
    bench "$mode" "$mode-$round" --systems stdb,native --bfs-runs 20 --runs 20 --writes 0 \
      --roundtrip-calls 1000
  done
done
for mode in pump nopump; do
  bench "$mode" "writes-$mode" --systems stdb --bfs-runs 10 --runs 10 --writes 300 \
    --roundtrip-calls 0
done
