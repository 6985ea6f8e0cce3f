//! The kinds of query the benchmark measures, and the queries each asks of every system.

use crate::system::{LabelSet, Query};
use graph_client::graph::Direction;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// A kind of query the benchmark measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Workload {
    NeighborCount,
    BfsFull,
    BfsDepth,
    ShortestPath,
    /// The depth-bounded BFS over a random half of the `--random-labels` labels.
    BfsLabels,
    /// The depth-bounded BFS naming every label: the unfiltered BFS's visited set, with the
    /// filter's cost.
    BfsLabelsAll,
    /// Least total weight path.
    WeightedPath,
}

impl Workload {
    pub const ALL: [Workload; 7] = [
        Workload::NeighborCount,
        Workload::BfsFull,
        Workload::BfsDepth,
        Workload::ShortestPath,
        Workload::BfsLabels,
        Workload::BfsLabelsAll,
        Workload::WeightedPath,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Workload::NeighborCount => "neighbors",
            Workload::BfsFull => "bfs",
            Workload::BfsDepth => "bfs-depth",
            Workload::ShortestPath => "path",
            Workload::BfsLabels => "bfs-labels",
            Workload::BfsLabelsAll => "bfs-labels-all",
            Workload::WeightedPath => "wpath",
        }
    }

    /// Whether the workload names labels (it needs `--random-labels`).
    pub fn needs_labels(self) -> bool {
        matches!(self, Workload::BfsLabels | Workload::BfsLabelsAll)
    }

    /// Whether the workload's answers are checked against the labelled reference (labels
    /// filter it, or weights measure it).
    pub fn needs_labelled_reference(self) -> bool {
        self.needs_labels() || self == Workload::WeightedPath
    }

    /// This workload's queries: one per pair for shortest paths (`source → target`), one per
    /// vertex for the others; `depth` bounds the depth-bounded BFS. The label workloads name
    /// labels among `labels` (numbers below 64: `l{n}`, those some edge has, as a query of an
    /// unknown label is an error to SpacetimeDB): all of them, or for each query a random half
    /// (at least one), seeded by `seed` and the query's index.
    pub fn queries(
        self,
        vertices: &[u64],
        pairs: &[(u64, u64)],
        dir: Direction,
        depth: u32,
        labels: &[u32],
        seed: u64,
    ) -> Vec<Query> {
        match self {
            Workload::BfsLabels | Workload::BfsLabelsAll => {
                assert!(
                    !labels.is_empty() && labels.iter().all(|&l| l < 64),
                    "label workloads need labels, numbered below 64: {labels:?}"
                );
                vertices
                    .iter()
                    .enumerate()
                    .map(|(i, &start)| {
                        let mut all = labels.to_vec();
                        let take = if self == Workload::BfsLabelsAll {
                            all.len()
                        } else {
                            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ ((i as u64) << 32));
                            all.shuffle(&mut rng);
                            (all.len() / 2).max(1)
                        };
                        let mask = all[..take].iter().fold(0u64, |m, &l| m | 1 << l);
                        Query::BfsLabels {
                            start,
                            dir,
                            max_depth: Some(depth),
                            labels: LabelSet(mask),
                        }
                    })
                    .collect()
            }
            Workload::WeightedPath => pairs
                .iter()
                .map(|&(source, target)| Query::WeightedPath {
                    source,
                    target,
                    dir,
                })
                .collect(),
            Workload::NeighborCount => vertices
                .iter()
                .map(|&vertex| Query::NeighborCount { vertex, dir })
                .collect(),
            Workload::BfsFull | Workload::BfsDepth => {
                let max_depth = (self == Workload::BfsDepth).then_some(depth);
                vertices
                    .iter()
                    .map(|&start| Query::Bfs {
                        start,
                        dir,
                        max_depth,
                    })
                    .collect()
            }
            Workload::ShortestPath => pairs
                .iter()
                .map(|&(source, target)| Query::ShortestPath {
                    source,
                    target,
                    dir,
                })
                .collect(),
        }
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

impl FromStr for Workload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Workload::ALL
            .into_iter()
            .find(|w| w.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "workload `{s}`: expected neighbors, bfs, bfs-depth, path, bfs-labels, \
                     bfs-labels-all or wpath"
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_workloads_name_half_or_all_of_the_labels() {
        let vertices: Vec<u64> = (1..=40).collect();
        let half =
            Workload::BfsLabels.queries(&vertices, &[], Direction::Both, 2, &[0, 1, 2, 3], 9);
        assert_eq!(
            half,
            Workload::BfsLabels.queries(&vertices, &[], Direction::Both, 2, &[0, 1, 2, 3], 9)
        );
        let mut masks = std::collections::BTreeSet::new();
        for q in &half {
            let Query::BfsLabels {
                labels, max_depth, ..
            } = *q
            else {
                panic!("{q:?}")
            };
            assert_eq!((labels.0.count_ones(), max_depth), (2, Some(2)), "{q}");
            assert!(labels.0 < 16);
            masks.insert(labels.0);
        }
        assert!(masks.len() >= 4, "the halves vary: {masks:?}");
        for q in
            Workload::BfsLabelsAll.queries(&vertices, &[], Direction::Both, 2, &[0, 1, 2, 3], 9)
        {
            let Query::BfsLabels { labels, .. } = q else {
                panic!("{q:?}")
            };
            assert_eq!(labels.names(), ["l0", "l1", "l2", "l3"]);
        }
        let one = Workload::BfsLabels.queries(&vertices[..1], &[], Direction::Out, 2, &[0], 0);
        assert!(matches!(
            one[0],
            Query::BfsLabels {
                labels: LabelSet(1),
                ..
            }
        ));
        // Only the labels given: here the edges have `l1` and `l5` of eight.
        for q in Workload::BfsLabels.queries(&vertices, &[], Direction::Out, 2, &[1, 5], 3) {
            let Query::BfsLabels { labels, .. } = q else {
                panic!("{q:?}")
            };
            assert!(labels.0 == 1 << 1 || labels.0 == 1 << 5, "{q}");
        }
        for w in Workload::ALL {
            assert_eq!(w.as_str().parse::<Workload>(), Ok(w));
        }
    }
}
