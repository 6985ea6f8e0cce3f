# Shared by the scripts: the pinned toolchain, where build output goes, and artifact paths.
# Sourced, not run.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLCHAIN="1.97.0"
WASM_TARGET="wasm32-unknown-unknown"
# Build output lives outside the checkout, where the machine keeps it between runs and clones.
CACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/stdb-graph"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$CACHE_DIR/target}"
# The V8 stub archive (an empty `ar` archive, see host/v8-stubs/README.md) lives beside the build
# output, at a path that does not depend on where the checkout is: the `v8` crate's build script
# reruns whenever this variable's value changes, and everything above it (the whole engine) is
# then rebuilt. `.cargo/config.toml` names the copy in the checkout for plain `cargo` commands.
export RUSTY_V8_ARCHIVE="${RUSTY_V8_ARCHIVE:-$CACHE_DIR/empty-librusty_v8.a}"
if [ ! -f "$RUSTY_V8_ARCHIVE" ]; then
  mkdir -p "$(dirname "$RUSTY_V8_ARCHIVE")"
  printf '!<arch>\n' >"$RUSTY_V8_ARCHIVE"
fi
HOST_BIN="$CARGO_TARGET_DIR/release/graph-host"
BENCH_BIN="$CARGO_TARGET_DIR/release/graph-bench"
MODULE_WASM="$CARGO_TARGET_DIR/$WASM_TARGET/release/graph_module.wasm"

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Installs the pinned toolchain and the wasm target if missing (RUSTUP_AUTO_INSTALL may be off).
ensure_toolchain() {
  command -v rustup >/dev/null || die "rustup is required: install it from your package manager or rustup.rs"
  if ! rustup run "$TOOLCHAIN" rustc --version >/dev/null 2>&1 \
     || ! rustup target list --installed --toolchain "$TOOLCHAIN" | grep -qx "$WASM_TARGET"; then
    say "installing Rust $TOOLCHAIN with $WASM_TARGET"
    rustup toolchain install "$TOOLCHAIN" --profile minimal -c rustfmt -c clippy -t "$WASM_TARGET"
  fi
}

# The report's charts need the DejaVu Sans font (Debian's fonts-dejavu-core). Installs it when
# missing and this user can; otherwise says how (the chart tests fail without it).
ensure_font() {
  local f
  for f in /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf /usr/share/fonts/dejavu/DejaVuSans.ttf \
           /usr/share/fonts/TTF/DejaVuSans.ttf /usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf; do
    [[ -f "$f" ]] && return 0
  done
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    say "installing fonts-dejavu-core (the report's charts draw their text with it)"
    apt-get install -y -q fonts-dejavu-core >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q fonts-dejavu-core >/dev/null; }
  else
    die "the DejaVu Sans font is missing: install fonts-dejavu-core (or your system's DejaVu fonts package)"
  fi
}

# Builds the module wasm, then every native target: the embedded host (which links the V8 stub
# archive), the clients and the tests. Always the whole workspace with all targets: that is the
# package and feature selection `cargo test --workspace` uses, so spacetimedb-core is compiled
# once, not once per differently-featured subset.
build_all() {
  cd "$ROOT"
  say "building the modules ($WASM_TARGET)"
  cargo build --release --locked -p graph-module -p graph-conformance-module --target "$WASM_TARGET"
  say "building the workspace (target dir: $CARGO_TARGET_DIR)"
  cargo build --release --locked --workspace --all-targets
}

# On exit: stops the host and the peers this script started, and runs the script's own
# `on_exit` if it defines one (start_host and start_peers set this as the EXIT trap, replacing
# any trap the script set itself).
cleanup() {
  if declare -F on_exit >/dev/null; then on_exit || true; fi
  if [ -n "${HOST_PID:-}" ]; then kill "$HOST_PID" 2>/dev/null || true; fi
  if [ -n "${PEERS_DIR:-}" ]; then
    "$ROOT/scripts/peers" stop --dir "$PEERS_DIR" || true
    rm -rf "$PEERS_DIR"
  fi
}

# build_at REV DIR [PACKAGE...]: builds commit REV's module (wasm), and its PACKAGEs (native
# binaries), into the target dir DIR from a temporary worktree: the "before" side of an A/B.
build_at() {
  local rev="$1" dir="$2" worktree="$2-src"
  shift 2
  git -C "$ROOT" worktree remove --force "$worktree" 2>/dev/null || rm -rf "$worktree"
  git -C "$ROOT" worktree add --detach "$worktree" "$rev" >/dev/null
  (cd "$worktree" &&
    cargo build --release --locked -p graph-module --target wasm32-unknown-unknown --target-dir "$dir" &&
    for package in "$@"; do cargo build --release --locked -p "$package" --target-dir "$dir"; done)
  git -C "$ROOT" worktree remove --force "$worktree"
}

# graph-bench arguments that load the graph into SpacetimeDB and measure nothing else (one
# verified neighbor count): what the load, memory and restart scripts run.
LOAD_ONLY=(--systems stdb --workloads neighbors --runs 1 --warmup 0 --writes 0 --roundtrip-calls 0
           --propagation-writes 0 --under-writes-secs 0 --mixed-secs 0 --throughput-inserts 0)

# Starts the embedded host in the background on $1 (host:port) with extra args; sets HOST_PID.
start_host() {
  local listen="$1"; shift
  local log="$CARGO_TARGET_DIR/graph-host.log"
  say "starting graph-host on $listen (log: $log)"
  "$HOST_BIN" --listen "$listen" "$@" >"$log" 2>&1 &
  HOST_PID=$!
  trap cleanup EXIT
  for _ in $(seq 1 300); do
    if curl -fsS "http://$listen/v1/ping" >/dev/null 2>&1; then return 0; fi
    kill -0 "$HOST_PID" 2>/dev/null || { cat "$log" >&2; die "graph-host exited during start-up"; }
    sleep 0.1
  done
  die "graph-host did not answer on $listen within 30 s (log: $log)"
}

# bench_beside_peers DATASET OUT GRAPH_BENCH_ARGS...: builds everything, starts every peer
# (start_peers) and a fresh in-memory graph-host, and runs graph-bench on DATASET with the peers'
# addresses and GRAPH_BENCH_ARGS (which choose --systems), its report going to results/OUT. What
# the results/*/run.sh scripts of one-run comparisons share.
bench_beside_peers() {
  local dataset="$1" out="$2"
  shift 2
  ensure_toolchain
  build_all
  start_peers
  local listen="${GRAPH_LISTEN:-127.0.0.1:3000}"
  start_host "$listen" --in-memory
  "$BENCH_BIN" --server "http://$listen" \
    --server-kind "embedded graph-host (spacetimedb-core 2.14.0, in memory)" \
    --publish "$MODULE_WASM" --dataset "$dataset" --out "$ROOT/results/$out" \
    --server-pid "$HOST_PID" "${PEER_ARGS[@]:2}" "$@"
  kill "$HOST_PID"
  wait "$HOST_PID" 2>/dev/null || true
}

# Starts Neo4j, PostgreSQL and FalkorDB, and writes the Kuzu worker command (scripts/peers), in a
# temporary directory, stopped on exit (by `cleanup`; graph-bench ends its Kuzu worker itself),
# and sets PEER_ARGS to the graph-bench options that select and reach them. Heap and page cache:
# NEO4J_HEAP / NEO4J_PAGECACHE; PostgreSQL memory: PG_*; Kuzu's buffer pool: KUZU_BUFFER_POOL
# (see peers).
start_peers() {
  "$ROOT/scripts/peers" install all
  PEERS_DIR="$(mktemp -d "${TMPDIR:-/tmp}/stdb-graph-peers.XXXXXX")"
  chmod 755 "$PEERS_DIR"   # PostgreSQL runs as the postgres user when we are root
  trap cleanup EXIT
  local neo4j postgres kuzu falkordb
  neo4j="$("$ROOT/scripts/peers" start neo4j --port "${NEO4J_PORT:-7687}" --dir "$PEERS_DIR")"
  postgres="$("$ROOT/scripts/peers" start postgres --port "${PG_PORT:-5439}" --dir "$PEERS_DIR")"
  falkordb="$("$ROOT/scripts/peers" start falkordb --port "${FALKORDB_PORT:-6389}" --dir "$PEERS_DIR")"
  kuzu="$("$ROOT/scripts/peers" start kuzu --port 0 --dir "$PEERS_DIR")"
  PEER_ARGS=(--systems "stdb,stdb-http,stdb-stage1,stdb-stage1-reducer,neo4j,neo4j-apoc,postgres,kuzu,falkordb"
             --neo4j "$neo4j" --postgres "$postgres" --kuzu "$kuzu" --falkordb "$falkordb"
             --falkordb-bulk-insert "$PEERS_DIR/falkordb/bulk-insert" --peer-dir "$PEERS_DIR")
}
