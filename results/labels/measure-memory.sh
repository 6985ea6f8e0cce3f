#!/usr/bin/env bash
# measure.sh HOST WASM CLI FILE PORT: host RSS (KiB) before and after `graph load FILE`.
set -euo pipefail
host=$1 wasm=$2 cli=$3 file=$4 port=$5
mkdir -p /tmp/mem
server=http://127.0.0.1:$port
"$host" --listen 127.0.0.1:$port --in-memory >/tmp/mem/host-$port.log 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
for i in $(seq 50); do curl -fsS "$server/v1/ping" >/dev/null 2>&1 && break; sleep 0.2; done
token=$(curl -fsS -X POST "$server/v1/identity" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
curl -fsS -X PUT -H "Authorization: Bearer $token" --data-binary "@$wasm" "$server/v1/database/graph" >/dev/null
rss() { awk '/VmRSS/{print $2}' /proc/$pid/status; }
before=$(rss)
start=$(date +%s.%N)
"$cli" --server "$server" --database graph --token "$token" --transport http load "$file" >/tmp/mem/load-$port.log 2>&1
end=$(date +%s.%N)
sleep 2
after=$(rss)
echo "rss_before_kib=$before rss_after_kib=$after load_s=$(python3 -c "print(round($end - $start, 2))")"
"$cli" --server "$server" --database graph --token "$token" --transport http stats --json
if [ "${SNAPSHOT:-0}" = 1 ]; then
  for i in 1 2 3; do "$cli" --server "$server" --database graph --token "$token" --transport http bfs 0 --dir both --limit 0 >/dev/null; done
  "$cli" --server "$server" --database graph --token "$token" --transport http stats --json
  echo "rss_after_snapshot_kib=$(rss)"
fi
