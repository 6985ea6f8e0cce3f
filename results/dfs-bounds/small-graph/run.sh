#!/usr/bin/env bash
# A bounded DFS refused on a small graph: the audit's graph of 2,992 vertices and 8,995 edges
# (ids near 2^64), loaded into a fresh in-memory graph-host, then DFS from one vertex at several
# depths, each answer beside the BFS count of the same ball.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../../.."
source scripts/lib.sh
build_all
start_host 127.0.0.1:3756 --in-memory
server=http://127.0.0.1:3756
token=$(curl -fsS -X POST "$server/v1/identity" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
curl -fsS -X PUT -H "Authorization: Bearer $token" --data-binary "@$MODULE_WASM" \
  "$server/v1/database/graph" >/dev/null
graph() { "$CARGO_TARGET_DIR/release/graph" --server "$server" --token "$token" "$@"; }
graph load "$here/edges.txt.gz"
start=18446744073709549185
for depth in 100 700 900 1000 2228 2229; do
  echo "== dfs --depth $depth"
  graph dfs "$start" --dir both --depth "$depth" --limit 1 || true
done
echo "== bfs --depth 1000"
graph bfs "$start" --dir both --depth 1000 --limit 0
