#!/usr/bin/env bash
# The server's execution time of a neighbor count against a warm empty procedure and
# graph_info: a fresh in-memory host, the module, a 4-edge graph, 2,000 calls each back to back
# over keep-alive HTTP, the first 100 dropped; the figure is the
# `spacetime-execution-duration-micros` header (p50 and mean).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
ensure_toolchain
build_all
listen="${GRAPH_LISTEN:-127.0.0.1:3306}"
start_host "$listen" --in-memory
token=$(curl -fsS -X POST "http://$listen/v1/identity" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
curl -fsS -X PUT -H "Authorization: Bearer $token" --data-binary "@$MODULE_WASM" \
  "http://$listen/v1/database/g" >/dev/null
curl -fsS -X POST -H "Authorization: Bearer $token" -H "Content-Type: application/json" \
  -d '[[1,2,3,1],[2,3,1,4]]' "http://$listen/v1/database/g/call/add_edges"
python3 - "$listen" "$token" <<'PY'
import http.client, json, statistics, sys
host, port = sys.argv[1].split(":")
token = sys.argv[2]
c = http.client.HTTPConnection(host, int(port))
for f, args in [("noop_procedure", []), ("neighbor_count", [1, "both", [], []]), ("graph_info", [])]:
    xs = []
    for _ in range(2000):
        c.request("POST", f"/v1/database/g/call/{f}", json.dumps(args),
                  {"Authorization": "Bearer " + token, "Content-Type": "application/json"})
        r = c.getresponse(); r.read()
        xs.append(int(r.getheader("spacetime-execution-duration-micros")))
    xs = xs[100:]
    print(f"{f}: server p50 {statistics.median(xs)} µs, mean {statistics.mean(xs):.1f} µs")
PY
