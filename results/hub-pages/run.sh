#!/usr/bin/env bash
# A hub's list read through the indexes in paced transactions: BFS (depth 1) and DFS from the
# centre of a star of K out-arcs, with snapshots off (`graph snapshot-policy --max 0`), with
# BASE's module and with the working tree's, on a fresh in-memory graph-host (the working
# tree's) each. Prints and appends to result.txt beside this script one line per query: side,
# K, query, wall time, transactions, longest hold, transactions over 5 ms; the visited count is
# checked (K + 1). BASE runs only the sizes in BASE_SIZES (its cost grows with K²).
#
#   results/hub-pages/run.sh BASE ["SIZES"] ["BASE_SIZES"]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
source scripts/lib.sh
ensure_toolchain
build_all
base="$(git rev-parse --short "${1:?usage: run.sh BASE [SIZES] [BASE_SIZES]}")"
sizes="${2:-100000 200000 400000 1000000}"
base_sizes="${3:-100000 200000 400000}"
tree="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- module traverse || echo +changes)"
build_at "$base" "$CARGO_TARGET_DIR/ab-base"
base_wasm="$CARGO_TARGET_DIR/ab-base/wasm32-unknown-unknown/release/graph_module.wasm"
graph="$CARGO_TARGET_DIR/release/graph"
listen="${GRAPH_LISTEN:-127.0.0.1:3317}"
work="$CARGO_TARGET_DIR/hub-pages"
mkdir -p "$work"
echo "# $(date -u '+%F %H:%M') base $base, tree $tree: side | K | query | wall s | transactions | max hold µs | over 5 ms" >>"$here/result.txt"
for k in $sizes; do
  awk -v k="$k" 'BEGIN { for (i = 1; i <= k; i++) print 0 "\t" i }' >"$work/star.txt"
  for side in base tree; do
    wasm="$MODULE_WASM"
    if [ "$side" = base ]; then
      case " $base_sizes " in *" $k "*) wasm="$base_wasm" ;; *) continue ;; esac
    fi
    start_host "$listen" --in-memory
    token="$(curl -fsS -X POST "http://$listen/v1/identity" | sed 's/.*"token":"\([^"]*\)".*/\1/')"
    curl -fsS -X PUT -H "Authorization: Bearer $token" --data-binary @"$wasm" \
      "http://$listen/v1/database/hub" >/dev/null
    g() { "$graph" --server "http://$listen" --database hub --token "$token" "$@"; }
    g load "$work/star.txt" >/dev/null
    g snapshot-policy --max 0 >/dev/null
    for query in bfs dfs; do
      start=$(date +%s.%N)
      g "$query" 0 --limit 0 --json --stats >"$work/answer.json"
      wall=$(echo "$(date +%s.%N) - $start" | bc)
      python3 - "$side" "$k" "$query" "$wall" "$work/answer.json" <<'PY' | tee -a "$here/result.txt"
import json, sys
side, k, query, wall, path = sys.argv[1:]
answer = json.load(open(path))
assert answer["visited"] == int(k) + 1, answer["visited"]
s = answer["stats"]
print(f"{side} | {k} | {query} | {float(wall):.2f} | {s['transactions']} | {s['max_hold_us']} | {s['slow_transactions']}")
PY
    done
    kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true
  done
done
