#!/usr/bin/env bash
# The module's shortest paths on its snapshot with each side's parents in a hash map (bb6086d)
# and in an array by slot (d70f281), on the DBLP-sized graph: scripts/bench-paths-ab, which also
# times the native search alone at both commits.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../../scripts/bench-paths-ab" "$here" "${BEFORE:-bb6086d}" "${AFTER:-d70f281}" hash-map slot-array
