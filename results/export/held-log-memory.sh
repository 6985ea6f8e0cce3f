#!/usr/bin/env bash
# What a held change log costs the host: one fresh in-memory graph-host, the module published,
# the path 0 → 1 → … → 9,999 loaded, one export page taken (its hold keeps the log from that
# version on), then rounds of 10,000 logged changes that leave the graph's size as it was (each
# round adds 5,000 edges between the path's vertices and removes the 5,000 of the round before).
# Every 100,000 changes it prints the log's changes (`graph stats`) and the host's RSS; the
# growth per change is what the held log costs, the engine's rows and index included; then the
# export's next page follows them all, and the RSS after it adds what that costs. Appends
# its lines to held-log-memory.txt beside this script.
#
#   results/export/held-log-memory.sh [CHANGES]   (default 1,000,000: the most a hold keeps)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/../../scripts/lib.sh"
changes="${1:-1000000}"
ensure_toolchain
build_all
listen="${GRAPH_LISTEN:-127.0.0.1:3366}"
start_host "$listen" --in-memory
url="http://$listen"
token=$(curl -fsS -X POST "$url/v1/identity" | sed -n 's/.*"token": *"\([^"]*\)".*/\1/p')
curl -fsS -X PUT -H "Authorization: Bearer $token" --data-binary @"$MODULE_WASM" "$url/v1/database/held" >/dev/null
call() {
  curl -fsS -X POST -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    --data-binary "$2" "$url/v1/database/held/call/$1"
}
# `add_edges`/`remove_edges` arguments: i → i + offset for i in [0, count).
edges() { echo "[[$(seq -s, 0 $(($2 - 1)))],[$(seq -s, "$1" $(($1 + $2 - 1)))]]"; }
call add_edges "$(edges 1 9999)" >/dev/null
first=$(call export_page '[{"none":[]},{"none":[]},1000]')
# The next page's arguments: the version and cursor the first page gave (the answer is
# positional JSON: [version, vertices, edges, next, stats], an Option being [0, value] or [1, []]).
next_args=$(python3 -c '
import json, sys
ok, (version, _, _, (_, (vertex, (some, n))), _) = json.loads(sys.argv[1])
neighbor = {"some": n} if some == 0 else {"none": []}
print(json.dumps([{"some": version}, {"some": {"vertex": vertex, "neighbor": neighbor}}, 1000]))' "$first")
graph=("$CARGO_TARGET_DIR/release/graph" --server "$url" --token "$token" --database held --transport http)
rss() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$HOST_PID/status"; }
logged() { "${graph[@]}" stats --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["change_log"]["changes"])'; }
{
  echo "# $(date -u +%FT%TZ), host and module at $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD || echo +changes): changes in the log | host RSS MiB"
  echo "$(logged) | $(rss)"
  for ((k = 0; k < changes / 10000; k++)); do
    call add_edges "$(edges $((k + 2)) 5000)" >/dev/null
    call remove_edges "$(edges $((k + 1)) 5000)" >/dev/null
    if (((k + 1) % 10 == 0)); then echo "$(logged) | $(rss)"; fi
  done
  "${graph[@]}" stats | grep 'change log'
  # The export's next page brings its state over every change held: what that costs too.
  call export_page "$next_args" >/dev/null
  echo "after the export's next page, which followed them all: host RSS $(rss) MiB"
} | tee -a "$here/held-log-memory.txt"
