#!/usr/bin/env bash
# The module's shortest paths on its snapshot before and after they searched by slot (commit
# d496512), on the DBLP-sized graph: the module built at BEFORE (default ba3446e, by vertex id)
# and at HEAD (by slot) runs the same 1,000 sampled out-direction pairs on a fresh in-memory host,
# alternately, ROUNDS times each (default 3), with the native floor beside it in each run as a
# gauge of the machine's speed at that moment. compare.py then sets each pair's server time by
# slot against its time by id in the same round. Writes summary.md and each run's report and
# samples beside this script.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
source scripts/lib.sh
ensure_toolchain
build_all
before="${BEFORE:-ba3446e}"
rounds="${ROUNDS:-3}"
listen="${GRAPH_LISTEN:-127.0.0.1:3302}"
work=$(mktemp -d)
cp "$MODULE_WASM" "$work/by-slot.wasm"
say "building the module at $before"
git worktree add --detach "$work/before" "$before" >/dev/null
# A target dir of its own, so that HEAD's build output stays as it is.
before_target="$CARGO_TARGET_DIR/path-slots-before"
(cd "$work/before" && CARGO_TARGET_DIR="$before_target" \
  cargo build --release --locked -p graph-module --target "$WASM_TARGET")
cp "$before_target/$WASM_TARGET/release/graph_module.wasm" "$work/by-id.wasm"
git worktree remove --force "$work/before"
for round in $(seq 1 "$rounds"); do
  for variant in by-id by-slot; do
    start_host "$listen" --in-memory
    token=$(curl -fsS -X POST "http://$listen/v1/identity" | sed -n 's/.*"token": *"\([^"]*\)".*/\1/p')
    out="$here/$variant-$round"
    rm -rf "$out"
    "$BENCH_BIN" --server "http://$listen" --server-kind embedded --token "$token" \
      --publish "$work/$variant.wasm" --dataset dblp --systems stdb,native --workloads path \
      --direction out --runs 1000 --warm-snapshot --writes 0 --roundtrip-calls 0 \
      --propagation-writes 0 --throughput-inserts 0 --under-writes-secs 0 --mixed-secs 0 \
      --out "$out" >/dev/null
    rm -f "$out"/*.png "$out"/dblp-samples.csv
    gzip -f "$out/dblp-samples.jsonl"
    kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true
  done
done
rm -rf "$work"
python3 "$here/compare.py" "$here" "$rounds" "$before" | tee "$here/summary.md"
