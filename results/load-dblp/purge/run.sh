#!/usr/bin/env bash
# What graph-host's jemalloc background threads change (its `_rjem_malloc_conf`): the dblp-sized
# load into a fresh durable graph-host, ROUNDS rounds (default 4), alternating the same binary
# with the setting off (`_RJEM_MALLOC_CONF=background_thread:false` in its environment) and as
# built (on). Each load: seconds, host RSS right after it and 15 s later (anonymous memory, MB).
# Writes loads.txt and summary.txt (medians) into OUT (default: beside this script).
#
#   results/load-dblp/purge/run.sh [ROUNDS] [OUT]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "${2:-$here}" && cd "${2:-$here}" && pwd)"
cd "$here/../../.."
source scripts/lib.sh
ensure_toolchain
build_all
rounds="${1:-4}"
listen="${GRAPH_LISTEN:-127.0.0.1:3316}"
data="$(mktemp -d)"
on_exit() { rm -rf "$data"; }
trap on_exit EXIT
anon_mb() { awk '/^RssAnon/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }

# One load with background purging $1 (on/off); prints "side seconds rss_mb rss_15s_mb".
load() {
  local side="$1" log="$data/bench.log"
  rm -rf "$data/db"
  if [ "$side" = off ]; then
    _RJEM_MALLOC_CONF=background_thread:false start_host "$listen" --data-dir "$data/db"
  else
    start_host "$listen" --data-dir "$data/db"
  fi
  "$BENCH_BIN" --server "http://$listen" --publish "$MODULE_WASM" --dataset dblp "${LOAD_ONLY[@]}" \
    --out "$data/report" >"$log" 2>&1 || { cat "$log" >&2; die "graph-bench failed"; }
  local secs rss
  secs="$(sed -n 's/^stdb: loaded [0-9]* edges in \([0-9.]*\) s.*/\1/p' "$log")"
  rss="$(anon_mb "$HOST_PID")"
  sleep 15
  echo "$side $secs $rss $(anon_mb "$HOST_PID")"
  kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true; HOST_PID=
}

{
  echo "# $(git rev-parse --short HEAD); one fresh durable host per load: side seconds rss_mb rss_15s_mb"
  for _ in $(seq "$rounds"); do
    load off
    load on
  done
} | tee "$out/loads.txt"

median() { grep "^$1 " "$out/loads.txt" | awk -v c="$2" '{print $c}' | sort -n | awk '{a[NR]=$1} END {print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}'; }
{
  echo "dblp-sized load (1,049,866 arcs), $rounds rounds, medians: seconds, RSS MB after, RSS MB 15 s after"
  for side in off on; do
    echo "background purging $side: $(median "$side" 2) s, $(median "$side" 3) MB, $(median "$side" 4) MB"
  done
} | tee "$out/summary.txt"
