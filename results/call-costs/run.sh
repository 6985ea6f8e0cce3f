#!/usr/bin/env bash
# CPU time per call on graph-host's threads: the database's executor thread (`wasm-*`, where
# every reducer and procedure runs) and the whole process, over N calls of each procedure, made
# one after another over HTTP from a keep-alive Python client (calls.py), on a fresh in-memory
# host with the dblp-like graph loaded. Ticks come from /proc/PID/task/*/stat (10 ms each), so
# use N of a few thousand. Writes costs.txt beside this script.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
source scripts/lib.sh
ensure_toolchain
build_all
listen="${GRAPH_LISTEN:-127.0.0.1:3301}"
N="${N:-2000}"
start_host "$listen" --in-memory
token=$(curl -fsS -X POST "http://$listen/v1/identity" | sed -n 's/.*"token": *"\([^"]*\)".*/\1/p')
"$BENCH_BIN" --server "http://$listen" --server-kind embedded --token "$token" --publish "$MODULE_WASM" \
  --dataset dblp --out "$(mktemp -d)" --systems stdb --workloads neighbors --runs 1 --writes 0 \
  --roundtrip-calls 0 --propagation-writes 0 --throughput-inserts 0 --under-writes-secs 0 \
  --mixed-secs 0 >/dev/null
ticks() { # CPU ticks of the host's threads whose names match the pattern $1
  local pattern="$1" t
  for t in /proc/"$HOST_PID"/task/*; do
    # shellcheck disable=SC2254
    case "$(cat "$t/comm")" in $pattern) sed 's/.*) //' "$t/stat" | awk '{print $12 + $13}';; esac
  done | awk '{s += $1} END {print s + 0}'
}
{
  echo "# scripts: results/call-costs/run.sh (N=$N), commit $(git rev-parse --short HEAD)"
  echo "# call(args): executor-thread CPU, whole-host CPU, wall time per call"
  for call in 'noop_procedure:[]' 'graph_info:[]' 'neighbor_count:[5,"out",[],[]]' \
      'neighbors:[5,"both",[],[],0]' 'bfs:[5,"both",[],[],{"some":2},0,0,0]' \
      'shortest_path:[5,100000,"both",[],[],{"none":[]},0,0]'; do
    name=${call%%:*} args=${call#*:}
    w0=$(ticks 'wasm-*') a0=$(ticks '*') t0=$(date +%s%N)
    python3 "$here/calls.py" "$listen" "$token" "$name" "$args" "$N"
    w1=$(ticks 'wasm-*') a1=$(ticks '*') t1=$(date +%s%N)
    echo "$name($args): executor $(( (w1 - w0) * 10000 / N )) µs, host $(( (a1 - a0) * 10000 / N )) µs, wall $(( (t1 - t0) / 1000 / N )) µs"
  done
} | tee "$here/costs.txt"
kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true
