#!/usr/bin/env bash
# The module's shortest paths on its snapshot before (ba3446e, by vertex id) and after (d496512)
# they searched by slot, on the DBLP-sized graph (scripts/bench-paths-ab). The summary committed
# here came from this script's first version, which compared BEFORE with HEAD and ran no
# criterion rounds; the run directories are named by-id-N and by-slot-N as then.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
CRITERION_ROUNDS="${CRITERION_ROUNDS:-0}" \
  exec "$here/../../scripts/bench-paths-ab" "$here" "${BEFORE:-ba3446e}" "${AFTER:-d496512}" by-id by-slot
