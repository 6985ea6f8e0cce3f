#!/usr/bin/env bash
# Starts the embedded host on :3000 with data in /data, and publishes the bundled module as
# `graph` the first time (the owner's token is kept in /data/owner-token).
set -euo pipefail
graph-host --listen 0.0.0.0:3000 --data-dir /data/stdb &
host=$!
trap 'kill -TERM "$host"; wait "$host"' TERM INT
until curl -fsS http://127.0.0.1:3000/v1/ping >/dev/null 2>&1; do
  kill -0 "$host" || exit 1
  sleep 0.2
done
if [ ! -s /data/owner-token ]; then
  curl -fsS -X POST http://127.0.0.1:3000/v1/identity \
    | sed -n 's/.*"token":"\([^"]*\)".*/\1/p' > /data/owner-token
fi
token=$(cat /data/owner-token)
status=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" \
  -X POST -H 'Content-Type: application/json' -d '[]' \
  http://127.0.0.1:3000/v1/database/graph/call/graph_info)
if [ "$status" = 404 ]; then
  curl -fsS -X PUT -H "Authorization: Bearer $token" --data-binary @/opt/stdb-graph/graph_module.wasm \
    http://127.0.0.1:3000/v1/database/graph >/dev/null
  echo "published the graph module as \`graph\`"
fi
wait "$host"
