#!/usr/bin/env bash
# The reducer's own time for a single-edge add_edges, with BASE's module and the working
# tree's published side by side on one fresh in-memory graph-host (databases `a` and `b`), each
# loaded with the same 200,000 random edges over 50,000 vertices, then six interleaved rounds
# of 1,900 single-edge calls (after 100 unrecorded) per database over keep-alive HTTP. The
# figure is the mean of the `spacetime-execution-duration-micros` header: the engine's timing
# of the module's call, without the transaction's commit. Appends to body-time.txt.
#
#   results/ws-throughput/ab-insert-if-absent/body-time.sh BASE
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/../../.."
source scripts/lib.sh
ensure_toolchain
build_all
base="$(git rev-parse --short "${1:?usage: body-time.sh BASE}")"
tree="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- module || echo +changes)"
build_at "$base" "$CARGO_TARGET_DIR/ab-base"
base_wasm="$CARGO_TARGET_DIR/ab-base/wasm32-unknown-unknown/release/graph_module.wasm"
listen="${GRAPH_LISTEN:-127.0.0.1:3317}"
start_host "$listen" --in-memory
token=$(curl -fsS -X POST "http://$listen/v1/identity" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
for side in a b; do
  wasm="$MODULE_WASM"
  [ "$side" = a ] && wasm="$base_wasm"
  curl -fsS -X PUT -H "Authorization: Bearer $token" --data-binary "@$wasm" \
    "http://$listen/v1/database/$side" >/dev/null
done
{
  echo "# $(date -u '+%F %H:%M') a = base $base, b = tree $tree: add_edges(1 edge), reducer time, mean µs per round"
  python3 - "$listen" "$token" <<'PY'
import http.client, json, random, statistics, sys
host, port = sys.argv[1].split(":")
token = sys.argv[2]
conn = http.client.HTTPConnection(host, int(port))
def call(db, args):
    conn.request("POST", f"/v1/database/{db}/call/add_edges", json.dumps(args),
                 {"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    r = conn.getresponse(); body = r.read()
    if r.status != 200:
        sys.exit(f"add_edges on {db}: {r.status} {body!r}")
    return int(r.getheader("spacetime-execution-duration-micros"))
for db in ["a", "b"]:
    rng = random.Random(1)
    for _ in range(20):
        call(db, [[rng.randrange(50000) for _ in range(10000)],
                  [rng.randrange(50000) for _ in range(10000)]])
rng = random.Random(2)
rounds = {"a": [], "b": []}
for _ in range(6):
    for db in ["a", "b"]:
        xs = [call(db, [[rng.randrange(50000)], [rng.randrange(50000)]]) for _ in range(2000)][100:]
        rounds[db].append(round(statistics.mean(xs), 1))
for db, xs in rounds.items():
    print(f"{db}: {xs}")
PY
} | tee -a "$here/body-time.txt"
