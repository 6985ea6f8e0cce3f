#!/usr/bin/env bash
# Where the CPU goes while 50 connections insert single edges, 16 calls in flight each: `perf`
# samples graph-host (built with the engine's perfmap switch, so the module's JIT functions have
# names) and graph-bench for 6 s of the uniform insert phase, on the DBLP-sized graph. The host
# and the module are the working tree's; with REV given, the module and graph-bench are built at
# that commit instead (a git worktree), to profile an earlier client or module on the same host.
# Writes REV/ (by default the checked-out commit) with summary.txt (inserts/s, samples per
# thread), host.txt and client.txt (the top 60 functions) beside this script.
#
#   results/ws-throughput/profile/run.sh [REV]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../../.."
source scripts/lib.sh
ensure_toolchain
build_all
rev="${1:-}"
out="$here/${rev:-$(git rev-parse --short HEAD)}"
rm -rf "$out"; mkdir -p "$out"
cargo build --release --locked -p graph-host --features perfmap --target-dir "$CARGO_TARGET_DIR/perfmap"
host_bin="$CARGO_TARGET_DIR/perfmap/release/graph-host"
bench_bin="$BENCH_BIN" wasm="$MODULE_WASM"
if [ -n "$rev" ]; then
  tree="$CARGO_TARGET_DIR/profile-tree"
  git worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
  git worktree add --detach "$tree" "$rev" >/dev/null
  (cd "$tree" &&
    cargo build --release --locked -p graph-bench --target-dir "$CARGO_TARGET_DIR/profile-rev" &&
    cargo build --release --locked -p graph-module --target wasm32-unknown-unknown \
      --target-dir "$CARGO_TARGET_DIR/profile-rev")
  bench_bin="$CARGO_TARGET_DIR/profile-rev/release/graph-bench"
  wasm="$CARGO_TARGET_DIR/profile-rev/wasm32-unknown-unknown/release/graph_module.wasm"
  git worktree remove --force "$tree"
fi
listen="${GRAPH_LISTEN:-127.0.0.1:3313}"
HOST_BIN="$host_bin" start_host "$listen" --in-memory
"$bench_bin" --server "http://$listen" --publish "$wasm" --dataset dblp --systems stdb \
  --workloads neighbors --runs 1 --writes 0 --roundtrip-calls 0 --propagation-writes 0 \
  --under-writes-secs 0 --mixed-secs 0 --throughput-inserts 400000 --in-flight 16 \
  --out "$out/report" >"$out/bench.log" 2>&1 &
bench=$!
until grep -q "^neighbors" "$out/bench.log"; do
  kill -0 "$bench" 2>/dev/null || { cat "$out/bench.log" >&2; die "graph-bench exited"; }
  sleep 0.2
done
sleep 1
perf record -F 999 -g -p "$HOST_PID,$bench" -o "$out/perf.data" -- sleep 6 2>/dev/null
wait "$bench"
report() { perf report -i "$out/perf.data" --no-children -g none --stdio "$@" 2>/dev/null | grep -v '^#' | grep -v '^$' || true; }
{
  echo "commit: ${rev:-$(git rev-parse --short HEAD)} (module and graph-bench); host: working tree, perfmap"
  grep "connections," "$out/bench.log"
  echo; echo "samples per thread name (999 Hz for 6 s: 5,994 samples are one core busy)"
  report -n --sort comm
} >"$out/summary.txt"
report --pid "$HOST_PID" --sort sym >"$out/host.txt"
report --pid "$bench" --sort sym >"$out/client.txt"
sed -i '61,$d; s/^\(.\{220\}\).*/\1/' "$out/host.txt" "$out/client.txt"
rm -rf "$out/perf.data" "$out/report"
cat "$out/summary.txt"
