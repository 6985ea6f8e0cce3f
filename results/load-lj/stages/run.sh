#!/usr/bin/env bash
# Where an LJ-sized load spends its time, by leaving parts of `add_edges` out: the module at
# BASE (default HEAD) and three variants built from it with variants.patch, each loaded into a
# fresh in-memory graph-host by graph-bench (calls of 200,000 arcs sorted by (src, dst), two
# out at once), load time only:
#   base       the module as it is;
#   no-update  reads and creates vertex rows but does not update existing ones (EXP_NOUPD);
#   no-upkeep  keeps no vertex rows at all: no reads, creations or updates (EXP_NODEG);
#   no-edges   keeps the vertex rows but inserts no edge rows (EXP_NOEDGE).
# The variants store wrong graphs on purpose (graph-bench's check after the load fails for
# them); only the load line counts. touches.rs counts the vertex rows each call touches.
#
#   results/load-lj/stages/run.sh [BASE] [OUT]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mkdir -p "${2:-$here}" && cd "${2:-$here}" && pwd)"
cd "$here/../../.."
source scripts/lib.sh
ensure_toolchain
build_all
base="$(git rev-parse --short "${1:-HEAD}")"
dir="$CARGO_TARGET_DIR/stages"
src="$dir-src"
git worktree remove --force "$src" 2>/dev/null || rm -rf "$src"
git worktree add --detach "$src" "$base" >/dev/null
git -C "$src" apply "$here/variants.patch"
declare -A wasm
for variant in base:NONE no-update:EXP_NOUPD no-upkeep:EXP_NODEG no-edges:EXP_NOEDGE; do
  name="${variant%%:*}"
  (cd "$src" && env "${variant#*:}=1" cargo build --release --locked -p graph-module \
    --target wasm32-unknown-unknown --target-dir "$dir")
  cp "$dir/wasm32-unknown-unknown/release/graph_module.wasm" "$dir/$name.wasm"
  wasm[$name]="$dir/$name.wasm"
done
git worktree remove --force "$src"
listen="${GRAPH_LISTEN:-127.0.0.1:3319}"
for name in base no-update no-upkeep no-edges; do
  start_host "$listen" --in-memory
  token="$(curl -fsS -X POST "http://$listen/v1/identity" | sed -n 's/.*"token": *"\([^"]*\)".*/\1/p')"
  "$BENCH_BIN" --server "http://$listen" --token "$token" --publish "${wasm[$name]}" --dataset lj \
    "${LOAD_ONLY[@]}" --out "$dir/$name" >"$dir/$name.log" 2>&1 || true
  grep -m1 '^stdb: loaded' "$dir/$name.log" >/dev/null || { cat "$dir/$name.log" >&2; die "$name: no load line"; }
  echo "$name: $(grep -m1 '^stdb: loaded' "$dir/$name.log")"
  kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true; HOST_PID=
done | tee "$out/summary.txt"

# The vertex rows each call touches, at this call size and larger ones.
crate="$dir/touches"
mkdir -p "$crate/src"
cp "$here/touches.rs" "$crate/src/main.rs"
cp rust-toolchain.toml Cargo.lock "$crate/"
cat >"$crate/Cargo.toml" <<TOML
[package]
name = "touches"
version = "0.1.0"
edition = "2024"
[dependencies]
graph-reference = { path = "$PWD/reference" }
[workspace]
TOML
(cd "$crate" && cargo run --release --quiet --target-dir "$dir" -- 200000 500000 1000000 2000000) | tee -a "$out/summary.txt"
