#!/usr/bin/env bash
# The dblp-like query workloads with BASE's module against the working tree's, on the working
# tree's host and graph-bench, over HTTP and the SDK's WebSocket: ROUNDS rounds (default 2),
# alternating, each on a fresh in-memory host; prints each side's p50 and server p50.
#
#   results/dblp-peers/ab-query.sh BASE [ROUNDS] > OUT.txt
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
base="$1"; rounds="${2:-2}"
out="$(mktemp -d)"
on_exit() { rm -rf "$out"; }
build_all >&2
wt="$CARGO_TARGET_DIR/abq-tree"
git worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
git worktree add --detach "$wt" "$base" >/dev/null
(cd "$wt" && cargo build --release --locked -p graph-module --target wasm32-unknown-unknown --target-dir "$CARGO_TARGET_DIR/abq-base") >&2
git worktree remove --force "$wt"
base_wasm="$CARGO_TARGET_DIR/abq-base/wasm32-unknown-unknown/release/graph_module.wasm"
listen=127.0.0.1:3321
for r in $(seq 1 "$rounds"); do
  for side in base tree; do
    wasm="$MODULE_WASM"; [ "$side" = base ] && wasm="$base_wasm"
    start_host "$listen" --in-memory
    "$BENCH_BIN" --server "http://$listen" --publish "$wasm" --dataset dblp --systems stdb-http,stdb \
      --writes 0 --under-writes-secs 0 --mixed-secs 0 --propagation-writes 0 --throughput-inserts 0 \
      --roundtrip-calls 0 --out "$out/$side-$r" >"$out/$side-$r.log" 2>&1
    kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true; HOST_PID=
    echo "== $side round $r (workload | system | p50 | server p50)"; grep -E "^\| (neighbors|bfs|bfs-depth|path) \| stage2" "$out/$side-$r/dblp.md" | cut -d'|' -f2-3,5,9
  done
done
