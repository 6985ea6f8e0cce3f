#!/usr/bin/env bash
# Single-edge inserts over 50 WebSocket connections on the DBLP-sized graph, uniform and
# Zipf-skewed sources, 1 and 16 calls in flight per connection, ROUNDS times (default 3), each
# on a fresh in-memory host. Also records the CPU time the host and graph-bench each used over
# the whole run (utime + stime from /proc), since client and server share this machine's cores.
# Writes round-N/ (report and samples) and cpu.txt beside this script.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
source scripts/lib.sh
ensure_toolchain
build_all
rounds="${ROUNDS:-3}"
listen="${GRAPH_LISTEN:-127.0.0.1:3303}"
ticks=$(getconf CLK_TCK)
cpu_seconds() { awk -v t="$ticks" '{printf "%.1f", ($14 + $15) / t}' "/proc/$1/stat"; }
echo "round wall_s host_cpu_s client_cpu_s" >"$here/cpu.txt"
for round in $(seq 1 "$rounds"); do
  start_host "$listen" --in-memory
  out="$here/round-$round"
  rm -rf "$out"
  started=$(date +%s.%N)
  "$BENCH_BIN" --server "http://$listen" \
    --server-kind "embedded graph-host (spacetimedb-core 2.14.0, in memory)" \
    --publish "$MODULE_WASM" --dataset dblp --systems stdb --workloads neighbors --runs 1 \
    --writes 0 --roundtrip-calls 0 --propagation-writes 0 --under-writes-secs 0 --mixed-secs 0 \
    --throughput-inserts 100000 --in-flight 1,16 --server-pid "$HOST_PID" --out "$out" \
    >"$out.log" 2>&1 &
  bench=$!
  # The bench's CPU is read just before it exits: poll until only its final report remains.
  client_cpu=0
  while kill -0 "$bench" 2>/dev/null; do
    client_cpu=$(cpu_seconds "$bench" 2>/dev/null || echo "$client_cpu")
    sleep 0.2
  done
  wait "$bench"
  wall=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  echo "$round $wall $(cpu_seconds "$HOST_PID") $client_cpu" >>"$here/cpu.txt"
  mv "$out.log" "$out/bench.log"
  rm -f "$out"/*.png
  kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true
  HOST_PID=
done
grep -h "50 connections" "$here"/round-*/dblp.md
cat "$here/cpu.txt"
