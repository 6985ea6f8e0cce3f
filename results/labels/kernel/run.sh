#!/usr/bin/env bash
# What a label filter costs the in-memory kernel, natively: criterion's labels/* benchmarks
# (traverse/benches/algorithms.rs), each workload unfiltered then filtered, ROUNDS times over,
# so that this noisy 2-core machine's slow spells fall on both sides. Prints one line per
# measurement: round, workload, filter, criterion's estimate (the middle of its interval).
# Usage (from the repository root): results/labels/kernel/run.sh [ROUNDS] > results/labels/kernel/runs.txt
set -euo pipefail
rounds=${1:-5}
for round in $(seq "$rounds"); do
  for workload in bfs_full bfs_depth3 shortest_path_pairs; do
    for filter in unfiltered every_label; do
      cargo bench --locked -p graph-traverse --bench algorithms -- "labels/DBLP-sized/$workload/$filter\$" 2>&1 |
        awk -v r="$round" -v w="$workload" -v f="$filter" '/time:/ { print r, w, f, $4, $5 }'
    done
  done
done
