#!/usr/bin/env bash
# The module's shortest paths on its snapshot before (7646c5d: each half of the search keeps
# its parents in an array of its own, and a snapshot row is read through calls the wasm build
# left out of line) and after 67739f6 (one array for both halves, rows read inline), on the
# DBLP-sized graph: scripts/bench-paths-ab, which also times the native search alone at both
# commits.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../../scripts/bench-paths-ab" "$here" "${BEFORE:-7646c5d}" "${AFTER:-67739f6}" before after
