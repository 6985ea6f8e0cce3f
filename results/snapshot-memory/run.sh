#!/usr/bin/env bash
# What an instance that built the in-memory snapshot holds, with the module built at two
# commits: both in one fresh in-memory graph-host, one database each, each loaded by graph-bench
# with DATASET and its snapshots limited to one instance, then graph-bench's unmeasured full BFS
# (--warm-bfs, which builds the snapshot) and one measured full BFS. Prints the report's
# snapshot row: the snapshot's live heap bytes (the module's allocator) and the whole linear
# memory of the instance that holds it, which wasm never gives back, so it keeps the build's peak.
#
#   results/snapshot-memory/run.sh BEFORE AFTER [DATASET [FLAG...]]   (default dataset: dblp)
#
# FLAGs go to both graph-bench runs (e.g. `--random-labels 8` for a labelled graph).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../../scripts/lib.sh"
[ $# -ge 2 ] || die "usage: $0 BEFORE AFTER [DATASET [FLAG...]]"
dataset="${3:-dblp}"
flags=("${@:4}")
commits=("$(git -C "$ROOT" rev-parse --short "$1")" "$(git -C "$ROOT" rev-parse --short "$2")")
ensure_toolchain
build_all
work=$(mktemp -d)
# Run by lib.sh's `cleanup`, the EXIT trap.
on_exit() {
  for c in "${commits[@]}"; do git -C "$ROOT" worktree remove --force "$work/$c" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
for c in "${commits[@]}"; do
  say "building the module at $c"
  git -C "$ROOT" worktree add --detach "$work/$c" "$c" >/dev/null
  (cd "$work/$c" && CARGO_TARGET_DIR="$work/target-$c" cargo build --release --locked \
    -p graph-module --target "$WASM_TARGET" >/dev/null 2>&1)
done
listen="${GRAPH_LISTEN:-127.0.0.1:3360}"
start_host "$listen" --in-memory
token=$(curl -fsS -X POST "http://$listen/v1/identity" | sed -n 's/.*"token": *"\([^"]*\)".*/\1/p')
graph=("$CARGO_TARGET_DIR/release/graph" --server "http://$listen" --token "$token" --transport http)
echo "# $(date -u +%FT%TZ), dataset $dataset${flags[*]:+ (${flags[*]})}, host and graph-bench at $(git -C "$ROOT" rev-parse --short HEAD)"
for c in "${commits[@]}"; do
  db="m$c"
  "$BENCH_BIN" --server "http://$listen" --token "$token" --database "$db" \
    --publish "$work/target-$c/$WASM_TARGET/release/graph_module.wasm" --dataset "$dataset" \
    "${flags[@]}" "${LOAD_ONLY[@]}" --out "$work/load-$c" >"$work/load-$c.log" 2>&1 ||
    { cat "$work/load-$c.log" >&2; die "graph-bench failed loading the module at $c"; }
  "${graph[@]}" --database "$db" snapshot-policy --max 1 >/dev/null
  "$BENCH_BIN" --server "http://$listen" --token "$token" --database "$db" --dataset "$dataset" \
    "${flags[@]}" --skip-load --systems stdb --workloads bfs --bfs-runs 1 --runs 1 --warmup 0 --warm-bfs \
    --writes 0 --roundtrip-calls 0 --propagation-writes 0 --under-writes-secs 0 --mixed-secs 0 \
    --throughput-inserts 0 --out "$work/bfs-$c" >"$work/bfs-$c.log" 2>&1 ||
    { cat "$work/bfs-$c.log" >&2; die "graph-bench failed on the module at $c"; }
  grep -A3 '^| in-memory snapshot' "$work/bfs-$c/$dataset.md" | sed "s/^| instance/| module at $c, instance/"
  # The module's own account of the build (since 0eccedb): memory before, after the scan, at the end.
  curl -fsS -H "Authorization: Bearer $token" "http://$listen/v1/database/$db/logs?num_lines=100000" |
    grep -o 'snapshot built from version[^"]*' | sed "s/^/module at $c: /" || true
done
