#!/usr/bin/env python3
"""graph-bench's LadybugDB (Kuzu) worker: one embedded database, queried in-process through
the engine's own Python API, the way its users run it.

graph-bench starts this once per run and talks to it over stdin/stdout, one JSON object per
line. The first line written is

    {"ready": {"engine": ..., "version": ..., "storage_version": ..., "settings": {...}}}

and then each request line

    {"query": "<Cypher>", "params": {"name": value, ...}}

gets one reply line

    {"rows": [[value, ...], ...], "ns": <nanoseconds>}   or   {"error": "<message>"}

`ns` is measured here, around `Connection.execute` and the fetch of every row, so that the
pipe and the JSON encoding are not charged to the engine. The worker exits when stdin closes.
Written for LadybugDB (PyPI `ladybug`, the maintained fork of Kuzu, what `scripts/peers install
kuzu` installs); Kuzu's own archived package (`kuzu`, 0.11.3 tried by hand) has the same API and
is used when `ladybug` is not installed.
"""

import argparse
import json
import sys
import time

try:
    import ladybug as engine

    ENGINE = "LadybugDB"
except ImportError:  # the archived original
    import kuzu as engine

    ENGINE = "Kuzu"


def size(text):
    """`4g`, `512m`, `1048576` -> bytes."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    text = text.strip().lower().rstrip("b")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def fetch(result):
    """Every row of a query result (a statement of several queries returns a list)."""
    if isinstance(result, list):
        rows = []
        for r in result:
            rows.extend(fetch(r))
        return rows
    rows = []
    while result.has_next():
        rows.append(result.get_next())
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="database path (created if missing)")
    parser.add_argument("--buffer-pool", default="4g", help="buffer pool size, e.g. 4g")
    parser.add_argument("--threads", type=int, default=0, help="query threads (0: all cores)")
    args = parser.parse_args()

    pool = size(args.buffer_pool)
    db = engine.Database(args.db, buffer_pool_size=pool)
    conn = engine.Connection(db, num_threads=args.threads)
    settings = {}
    for name in ("threads", "var_length_extend_max_depth"):
        settings[name] = fetch(conn.execute(f"CALL current_setting('{name}') RETURN *"))[0][0]
    settings["buffer_pool_size"] = pool
    ready = {
        "engine": ENGINE,
        "version": engine.__version__,
        "storage_version": engine.storage_version,
        "settings": settings,
    }
    out = sys.stdout
    out.write(json.dumps({"ready": ready}) + "\n")
    out.flush()

    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            query, params = request["query"], request.get("params") or {}
            started = time.perf_counter_ns()
            rows = fetch(conn.execute(query, params))
            elapsed = time.perf_counter_ns() - started
            reply = {"rows": rows, "ns": elapsed}
        except Exception as e:  # the engine's errors go back to graph-bench, which fails the run
            reply = {"error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
