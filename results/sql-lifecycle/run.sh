#!/usr/bin/env bash
# What running each SQL request as a connection of its own (client_connected, then the
# statement, then client_disconnected, as the official server does) costs: bench.py against an
# in-memory graph-host built before that change (OLD_HOST, e.g. one built at 361a76c) and the
# working tree's, in A B B A order, 2,000 requests of each kind per run.
#
#   results/sql-lifecycle/run.sh OLD_HOST        (writes summary.txt beside this script)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../.."
source scripts/lib.sh
build_all
old="$1"
for side in old new new old; do
  bin="$HOST_BIN"; [ "$side" = old ] && bin="$old"
  "$bin" --listen 127.0.0.1:3462 --in-memory >/dev/null 2>&1 &
  pid=$!
  trap 'kill "$pid" 2>/dev/null || true' EXIT
  until curl -fsS http://127.0.0.1:3462/v1/ping >/dev/null 2>&1; do sleep 0.1; done
  python3 "$here/bench.py" 3462 2000 "$MODULE_WASM" | sed "s/^/$side /"
  kill "$pid"; wait "$pid" || true
done | tee "$here/summary.txt"
