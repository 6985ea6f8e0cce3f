#!/usr/bin/env bash
# Where the host's time goes while it loads the LiveJournal-sized graph: one load (graph-bench's
# `lj` dataset, 34.7M arcs, over the SDK's WebSocket in calls of 200,000, two out at once) into a
# fresh durable graph-host, sampled by `perf record` (499 Hz, no call graphs). Writes into OUT
# (default: beside this script) load.txt (graph-bench's load line), threads.txt (samples per
# host thread) and symbols-executor.txt / symbols-other.txt (the top 60 functions of the
# database's executor thread, and of every other thread). The module's own code is JIT-compiled
# wasm: perf shows it as unnamed addresses ([unknown] or JIT-… entries). Sampling slows the load
# (the bulk load of a1e0e4e: 302 s instead of 190 s on the machine of 2026-11-27), so read
# shares from it, not times.
#
#   results/load-lj/profile/run.sh [OUT]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "${1:-$here}" && cd "${1:-$here}" && pwd)"
cd "$here/../../.."
source scripts/lib.sh
ensure_toolchain
build_all
command -v perf >/dev/null || die "perf is required (Debian: linux-perf)"
listen="${GRAPH_LISTEN:-127.0.0.1:3315}"
data="$(mktemp -d)"
on_exit() { rm -rf "$data"; }
start_host "$listen" --data-dir "$data/db"
perf record -F 499 -p "$HOST_PID" -o "$data/perf.data" 2>"$data/perf.log" &
perf_pid=$!
"$BENCH_BIN" --server "http://$listen" --publish "$MODULE_WASM" --dataset lj "${LOAD_ONLY[@]}" \
  --out "$data/report" >"$data/bench.log" 2>&1 || { cat "$data/bench.log" >&2; die "graph-bench failed"; }
kill -INT "$perf_pid"; wait "$perf_pid" || true
kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true; HOST_PID=
{
  echo "# commit $(git rev-parse --short HEAD), $(date -u +%FT%TZ)"
  grep -o 'loaded.*' "$data/bench.log" | sed -n 1p
} >"$out/load.txt"
report() { perf report -i "$data/perf.data" --no-children --stdio "$@" 2>/dev/null | grep -v '^#' | grep -v '^$'; }
report --sort comm | sed -n 1,20p >"$out/threads.txt"
executor="$(grep -o "wasm-[0-9a-f]*" "$out/threads.txt" | sed -n 1p)"
{
  echo "# the executor thread ($executor): share of all the host's samples"
  report --comms "$executor" --sort sym | sed -n 1,60p | cut -c1-200
} >"$out/symbols-executor.txt"
others="$(awk '{print $2}' "$out/threads.txt" | grep -v "^$executor$" | paste -sd, -)"
{
  echo "# every other thread ($others): share of all the host's samples"
  report --comms "$others" --sort comm,sym | sed -n 1,60p | cut -c1-200
} >"$out/symbols-other.txt"
cat "$out/load.txt" "$out/threads.txt"
