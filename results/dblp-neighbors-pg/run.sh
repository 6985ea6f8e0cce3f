#!/usr/bin/env bash
# Neighbor counts on the DBLP-sized graph, Stage 2 over the SDK's WebSocket and over HTTP beside
# PostgreSQL alone (no other peer running), after 3 ms of quiet before every call (outside the
# clock), 2,000 sampled vertices per system, with the round-trip floor (the empty procedure and
# reducer, SDK and raw frames). ROUNDS rounds, each on a fresh in-memory host, one PostgreSQL.
# WS_DRIVE (caller, the default, or background) is graph-bench's --ws-drive; the rounds go to
# WS_DRIVE/round-N.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
source scripts/lib.sh
ensure_toolchain
build_all
"$ROOT/scripts/peers" install postgres
PEERS_DIR="$(mktemp -d "${TMPDIR:-/tmp}/stdb-graph-peers.XXXXXX")"
chmod 755 "$PEERS_DIR"
trap cleanup EXIT
postgres="$("$ROOT/scripts/peers" start postgres --port "${PG_PORT:-5439}" --dir "$PEERS_DIR")"
rounds="${ROUNDS:-3}"
listen="${GRAPH_LISTEN:-127.0.0.1:3305}"
drive="${WS_DRIVE:-caller}"
for round in $(seq 1 "$rounds"); do
  mkdir -p "$here/$drive"
  out="$here/$drive/round-$round"
  rm -rf "$out"
  start_host "$listen" --in-memory
  "$BENCH_BIN" --server "http://$listen" \
    --server-kind "embedded graph-host (spacetimedb-core 2.14.0, in memory)" \
    --publish "$MODULE_WASM" --dataset dblp --systems stdb,stdb-http,postgres --postgres "$postgres" \
    --ws-drive "$drive" --workloads neighbors --runs 2000 --idle-ms 3 --roundtrip-calls 2000 --server-pid "$HOST_PID" \
    --writes 0 --propagation-writes 0 --throughput-inserts 0 --under-writes-secs 0 --mixed-secs 0 \
    --out "$out" >"$out.log" 2>&1
  kill "$HOST_PID"; wait "$HOST_PID" 2>/dev/null || true
  rm -f "$out"/*.png "$out"/*-samples.csv
  gzip -9f "$out"/*-samples.jsonl
done
