#!/usr/bin/env bash
# `graph export` on the dblp-sized graph (graph-bench's `dblp`: 317K vertices, 1.05M arcs),
# loaded by graph-bench into a fresh in-memory graph-host: the export's wall time, pages and
# longest page hold at 10,000 (the default), 20,000 and 200,000 edges per page over the WebSocket and
# HTTP; then the export is loaded into a second database, exported from there, and the two
# files compared byte for byte. Appends its lines to result.txt beside this script.
#
#   results/export/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
source scripts/lib.sh
ensure_toolchain
build_all
listen="${GRAPH_LISTEN:-127.0.0.1:3318}"
work="$CARGO_TARGET_DIR/export-run"
rm -rf "$work" && mkdir -p "$work"
start_host "$listen" --in-memory
"$BENCH_BIN" --server "http://$listen" --database graph --publish "$MODULE_WASM" --dataset dblp \
  --out "$work/load" "${LOAD_ONLY[@]}" >"$work/load.log"
token() { curl -fsS -X POST "http://$listen/v1/identity" | sed 's/.*"token":"\([^"]*\)".*/\1/'; }
owner="$(token)"
graph="$CARGO_TARGET_DIR/release/graph"
g() { "$graph" --server "http://$listen" --token "$owner" "$@"; }
{
  echo "# $(date -u '+%F %H:%M') $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo +changes): transport | page | wall s | edges | vertices | pages | longest page hold µs"
  for transport in ws http; do
    for page in 10000 20000 200000; do
      start=$(date +%s.%N)
      out="$(g --database graph --transport "$transport" export "$work/e.csv" --vertices "$work/v.csv" --page "$page" --json)"
      end=$(date +%s.%N)
      echo "$transport | $page | $(echo "$end - $start" | bc) | $(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["edges"], "|", d["vertices"], "|", d["pages"], "|", d["max_hold_us"])')"
    done
  done
  curl -fsS -X PUT -H "Authorization: Bearer $owner" --data-binary @"$MODULE_WASM" \
    "http://$listen/v1/database/copy" >/dev/null
  g --database copy load "$work/e.csv" >/dev/null
  g --database copy label-vertices "$work/v.csv" >/dev/null
  g --database copy export "$work/e2.csv" --vertices "$work/v2.csv" >/dev/null
  cmp "$work/e.csv" "$work/e2.csv" && cmp "$work/v.csv" "$work/v2.csv" &&
    echo "reloaded into a second database and exported again: both files identical ($(wc -c <"$work/e.csv") + $(wc -c <"$work/v.csv") bytes)"
  # Ids with a gap before a dense run: the windows that grew over the gap take in the run.
  awk 'BEGIN { print "id,label"; for (i = 1000000; i < 1250000; i++) print i "," }' >"$work/run.csv"
  awk 'BEGIN { print 0 "\t" 1; for (i = 1000001; i <= 1250000; i++) print 1000000 "\t" i }' >"$work/hub.txt"
  for case in gap hub-gap; do
    curl -fsS -X PUT -H "Authorization: Bearer $owner" --data-binary @"$MODULE_WASM" \
      "http://$listen/v1/database/$case" >/dev/null
    if [ "$case" = gap ]; then
      g --database gap add-edge 0 1 >/dev/null
      g --database gap label-vertices "$work/run.csv" >/dev/null
    else
      g --database hub-gap load "$work/hub.txt" >/dev/null
    fi
    out="$(g --database "$case" export "$work/$case.csv" --json)"
    case "$case" in
      gap) what="vertices 0 and 1, then 1,000,000-1,249,999 (250,000 without edges)" ;;
      *) what="0 -> 1, then 1,000,000 -> 1,000,001-1,250,000 (a hub)" ;;
    esac
    echo "$case: $what | 10000 | $(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["edges"], "|", d["vertices"], "|", d["pages"], "|", d["max_hold_us"])')"
  done
} | tee -a "$here/result.txt"
