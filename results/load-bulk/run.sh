#!/usr/bin/env bash
# A bulk load (edges first, vertex rows written once at the end) against the same load keeping
# every vertex row exact after each call (graph-bench --no-bulk-load), alternating, each into a
# fresh durable graph-host (commit log and snapshots on disk, as bench-load runs it), loaded by
# graph-bench (calls of 200,000 arcs sorted by (src, dst), two out at once). Per load: the load
# time, for the bulk load its two phases, and the host's RSS right after and 15 s later.
#
#   results/load-bulk/run.sh [DATASET] [ROUNDS] [OUT]     (default: lj, 1 round, this directory)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dataset="${1:-lj}"
rounds="${2:-1}"
out="$(mkdir -p "${3:-$here}" && cd "${3:-$here}" && pwd)"
cd "$here/../.."
source scripts/lib.sh
ensure_toolchain
build_all
listen="${GRAPH_LISTEN:-127.0.0.1:3318}"
rss() { echo $(( $(awk '/^VmRSS/ {print $2}' "/proc/$1/status") * 1024 )); }
summary="$out/summary-$dataset.txt"
echo "# $(git rev-parse --short HEAD), $(date -u +%FT%TZ), dataset $dataset" >"$summary"
for round in $(seq "$rounds"); do
  for mode in bulk plain; do
    flag=()
    [ "$mode" = plain ] && flag=(--no-bulk-load)
    data="$(mktemp -d "${TMPDIR:-/tmp}/stdb-graph-bulk.XXXXXX")"
    start_host "$listen" --data-dir "$data"
    log="$out/$dataset-$mode-$round.log"
    "$BENCH_BIN" --server "http://$listen" --publish "$MODULE_WASM" --dataset "$dataset" \
      "${LOAD_ONLY[@]}" "${flag[@]}" --out "$data/bench" >"$log" 2>&1 ||
      { cat "$log" >&2; die "$mode: graph-bench failed"; }
    loaded=$(rss "$HOST_PID")
    sleep 15
    settled=$(rss "$HOST_PID")
    {
      echo "round $round, $mode: $(grep -m1 '^stdb: loaded' "$log")"
      grep -m1 'bulk load: edges stored' "$log" | sed 's/^/  /' || true
      echo "  host RSS after the load $((loaded / 1048576)) MiB, 15 s later $((settled / 1048576)) MiB"
    } | tee -a "$summary"
    kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true; HOST_PID=
    rm -rf "$data"
  done
done
