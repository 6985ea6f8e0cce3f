#!/usr/bin/env bash
# A/B of the module alone: single-edge inserts (and the empty reducer beside them) over 50
# WebSocket connections, 16 calls in flight each, with BASE's module and with the working
# tree's, alternating, ROUNDS rounds (default 4), a fresh in-memory graph-host (the working
# tree's) and the DBLP-sized graph for each run; graph-bench is the working tree's for both.
# Appends one line per run to result.txt beside this script: side, then reducer | keys | calls/s
# for the uniform, Zipf-skewed and empty-reducer phases.
#
#   results/ws-throughput/ab-insert-if-absent/run.sh BASE [ROUNDS]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../../.."
source scripts/lib.sh
ensure_toolchain
build_all
base="$(git rev-parse --short "${1:?usage: run.sh BASE [ROUNDS]}")"
rounds="${2:-4}"
tree="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- module || echo +changes)"
build_at "$base" "$CARGO_TARGET_DIR/ab-base"
base_wasm="$CARGO_TARGET_DIR/ab-base/wasm32-unknown-unknown/release/graph_module.wasm"
listen="${GRAPH_LISTEN:-127.0.0.1:3316}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "# $(date -u '+%F %H:%M') base $base, tree $tree: side | reducer | keys | calls/s (50 connections, 16 in flight, 100,000 calls a phase)" >>"$here/result.txt"
for round in $(seq "$rounds"); do
  for side in base tree; do
    wasm="$MODULE_WASM"
    [ "$side" = base ] && wasm="$base_wasm"
    start_host "$listen" --in-memory
    "$BENCH_BIN" --server "http://$listen" --publish "$wasm" --dataset dblp --systems stdb \
      --workloads neighbors --runs 1 --writes 0 --roundtrip-calls 0 --propagation-writes 0 \
      --under-writes-secs 0 --mixed-secs 0 --throughput-inserts 100000 --in-flight 16 \
      --out "$work/$side-$round" >"$work/$side-$round.log" 2>&1 ||
      { cat "$work/$side-$round.log" >&2; die "graph-bench failed"; }
    kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true
    echo "$side $round: $(grep -A8 'concurrent single-call reducers (WebSocket)' "$work/$side-$round/dblp.md" |
      grep '^| ' | tail -3 | cut -d'|' -f3,5,9 | tr '\n' ';')" | tee -a "$here/result.txt"
  done
done
