#!/usr/bin/env bash
# `graph export` while a writer changes the graph, with the module built at BEFORE and at the
# working tree: one fresh in-memory graph-host, one database per module, each loaded by
# graph-bench with DATASET; then graph-export-writes exports it once per write rate (edges
# changed per second: graph-bench's under-writes writer, each added edge bringing two new
# vertices, so the log takes about twice as many changes) and checks every export against the
# dataset. BEFORE's module is loaded by BEFORE's graph-bench, which decodes what that module
# answers (a module type that gained a field since, as `graph_info`'s did at f718d00, fails to
# decode in newer clients). Appends its lines to under-writes-DATASET.txt beside this script.
#
#   results/export/under-writes.sh BEFORE [DATASET [RATES]]   (defaults: lj, 0,5000,10000)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../../scripts/lib.sh"
[ $# -ge 1 ] || die "usage: $0 BEFORE [DATASET [RATES]]"
before="$(git -C "$ROOT" rev-parse --short "$1")"
dataset="${2:-lj}"
rates="${3:-0,5000,10000}"
ensure_toolchain
build_all
before_dir="$CARGO_TARGET_DIR/export-before-$before"
say "building the module at $before"
build_at "$before" "$before_dir" graph-bench >/dev/null 2>&1
work="$CARGO_TARGET_DIR/export-under-writes"
rm -rf "$work" && mkdir -p "$work"
listen="${GRAPH_LISTEN:-127.0.0.1:3364}"
start_host "$listen" --in-memory
token=$(curl -fsS -X POST "http://$listen/v1/identity" | sed -n 's/.*"token": *"\([^"]*\)".*/\1/p')
{
  echo "# $(date -u +%FT%TZ), dataset $dataset, host, graph-bench and graph-export-writes at $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD || echo +changes)"
  for side in "$before" "HEAD$(git -C "$ROOT" diff --quiet HEAD -- module || echo +changes)"; do
    if [ "$side" = "$before" ]; then
      wasm="$before_dir/$WASM_TARGET/release/graph_module.wasm" db=before bench="$before_dir/release/graph-bench"
    else
      wasm="$MODULE_WASM" db=after bench="$BENCH_BIN"
    fi
    "$bench" --server "http://$listen" --token "$token" --database "$db" --publish "$wasm" \
      --dataset "$dataset" --out "$work/$db" "${LOAD_ONLY[@]}" >"$work/$db.log"
    echo "## the module at $side"
    "$CARGO_TARGET_DIR/release/graph-export-writes" --server "http://$listen" --token "$token" \
      --database "$db" --dataset "$dataset" --write-rates "$rates"
  done
} | tee -a "$here/under-writes-$dataset.txt"
