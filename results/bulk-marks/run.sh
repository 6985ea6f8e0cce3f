#!/usr/bin/env bash
# What the marks of where a bulk load's arcs end cost the load: the ingestion matrix's bulk
# cell (graph-ingest: a seeded sample of the LiveJournal-sized graph, a fresh durable
# graph-host, calls of 200,000 edges over the WebSocket, then finish_bulk_load) with BASE's
# module (default ebc639b, no marks) and the working tree's, sides in A B B A order per size.
# Each run's cell (JSONL, CSV) goes to OUT/<n>-<side>-<size>/ (default: beside this script); summary.txt
# gets the seconds, edges/s and finish calls of every run.
#
#   results/bulk-marks/run.sh [BASE] [SIZES] [OUT]      (SIZES: comma-separated edge counts)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "${3:-$here}" && cd "${3:-$here}" && pwd)"
cd "$here/../.."
source scripts/lib.sh
ensure_toolchain
build_all
base="$(git rev-parse --short "${1:-ebc639b}")"
base_dir="$CARGO_TARGET_DIR/marks-base"
build_at "$base" "$base_dir"
declare -A wasm=([base]="$base_dir/wasm32-unknown-unknown/release/graph_module.wasm"
                 [tree]="$MODULE_WASM")
n=0
for size in ${2//,/ }; do
  for side in base tree tree base; do
    n=$((n + 1))
    "$CARGO_TARGET_DIR/release/graph-ingest" --host-bin "$HOST_BIN" --publish "${wasm[$side]}" \
      --out "$out/$n-$side-$size" --sizes "$size" --batches 200000 --transports ws --loads bulk
    rm -f "$out/$n-$side-$size/ingest.png" "$out/$n-$side-$size/ingest.md" # one cell: no chart
  done
done
{
  echo "# base $base, tree $(git rev-parse --short HEAD) (+ working tree); run side edges seconds edges/s finish_calls"
  for cell in "$out"/*-*-*/ingest.jsonl; do
    python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); print(sys.argv[2], r["edges"], round(r["seconds"], 2), round(r["edges_per_s"]), r["finish_calls"])' \
      "$cell" "$(basename "$(dirname "$cell")")"
  done | sort -n
} | tee "$out/summary.txt"
