#!/usr/bin/env bash
# The dblp-sized load at BASE (its module, and its graph-bench, whose client sends the calls)
# against the working tree's, side by side: ROUNDS rounds (default 4), each loading the graph
# once with each, alternating, into a fresh durable graph-host (commit log on disk), over the
# SDK's WebSocket in calls of 200,000 arcs; graph-host is the working tree's for both. Then one
# more load of each under `perf` (graph-host built with the engine's perfmap switch, so module
# functions have names) for where the executor thread's time goes. Writes loads.txt (one line
# per load: side, seconds, host RSS after it), summary.txt (medians) and profile-{base,tree}.txt
# (the executor thread's top 40 functions) into OUT (default: beside this script). PROFILE=0
# skips the profiles (and the perfmap build of graph-host they need).
#
#   results/load-dblp/ab/run.sh BASE [ROUNDS] [OUT]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "${3:-$here}" && cd "${3:-$here}" && pwd)"
cd "$here/../../.."
source scripts/lib.sh
ensure_toolchain
build_all
base="$(git rev-parse --short "${1:?usage: run.sh BASE [ROUNDS]}")"
rounds="${2:-4}"
tree_rev="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- module client bench-client || echo +changes)"
profile="${PROFILE:-1}"
if [ "$profile" != 0 ]; then
  cargo build --release --locked -p graph-host --features perfmap --target-dir "$CARGO_TARGET_DIR/perfmap"
fi
build_at "$base" "$CARGO_TARGET_DIR/ab-base" graph-bench
base_wasm="$CARGO_TARGET_DIR/ab-base/wasm32-unknown-unknown/release/graph_module.wasm"
base_bench="$CARGO_TARGET_DIR/ab-base/release/graph-bench"
listen="${GRAPH_LISTEN:-127.0.0.1:3314}"
data="$(mktemp -d)"
on_exit() { rm -rf "$data"; }
trap on_exit EXIT
stop_host() { kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true; HOST_PID=; }

# One load of module $2 by graph-bench $3 (named $1) into a fresh durable host; prints
# "name seconds rss_mb".
load() {
  local name="$1" wasm="$2" bench="$3" log="$data/bench.log"
  rm -rf "$data/db"
  start_host "$listen" --data-dir "$data/db"
  "$bench" --server "http://$listen" --publish "$wasm" --dataset dblp "${LOAD_ONLY[@]}" \
    --out "$data/report" >"$log" 2>&1 || { cat "$log" >&2; die "graph-bench failed"; }
  local secs rss
  secs="$(sed -n 's/^stdb: loaded [0-9]* edges in \([0-9.]*\) s.*/\1/p' "$log")"
  rss="$(awk '/VmRSS/ {printf "%.0f", $2 / 1024}' "/proc/$HOST_PID/status")"
  stop_host
  echo "$name $secs $rss"
}

{
  echo "# base $base, tree $tree_rev; one fresh durable host per load: side seconds rss_mb"
  for _ in $(seq "$rounds"); do
    load base "$base_wasm" "$base_bench"
    load tree "$MODULE_WASM" "$BENCH_BIN"
  done
} | tee "$out/loads.txt"

median() { grep "^$1 " "$out/loads.txt" | awk '{print $2}' | sort -n | awk '{a[NR]=$1} END {print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}'; }
{
  echo "dblp-sized load (1,049,866 arcs), $rounds rounds, medians"
  echo "base $base: $(median base) s"
  echo "tree $tree_rev: $(median tree) s"
} | tee "$out/summary.txt"

[ "$profile" != 0 ] || exit 0
for side in base tree; do
  wasm="$MODULE_WASM" bench="$BENCH_BIN"
  [ "$side" = base ] && wasm="$base_wasm" bench="$base_bench"
  HOST_BIN="$CARGO_TARGET_DIR/perfmap/release/graph-host" start_host "$listen" --data-dir "$data/db-$side"
  perf record -F 999 -g -p "$HOST_PID" -o "$data/perf.data" 2>/dev/null &
  perf_pid=$!
  "$bench" --server "http://$listen" --publish "$wasm" --dataset dblp "${LOAD_ONLY[@]}" \
    --out "$data/report" >"$data/bench.log" 2>&1 || { cat "$data/bench.log" >&2; die "graph-bench failed"; }
  kill -INT "$perf_pid"; wait "$perf_pid" || true
  stop_host
  executor="$(perf report -i "$data/perf.data" --sort comm -g none --stdio 2>/dev/null | grep -o 'wasm-[0-9a-f]*' | head -1 || true)"
  {
    echo "# $side ($([ "$side" = base ] && echo "$base" || echo "$tree_rev")): $(grep -o 'loaded.*' "$data/bench.log" | head -1)"
    echo "# the executor thread ($executor), share of all samples of the host"
    perf report -i "$data/perf.data" --no-children -g none --stdio --comm "$executor" --sort sym 2>/dev/null |
      grep -v '^#' | grep -v '^$' | head -40 | sed 's/^\(.\{200\}\).*/\1/' || true
  } >"$out/profile-$side.txt"
done
