//! The one check of every answer, whichever system gave it: the reply must agree with the
//! reference graph. `measure` calls it after the call's clock has stopped.

use crate::system::{Query, Reply};
use anyhow::{bail, ensure};
use graph_reference::ReferenceGraph;
use graph_reference::{Follow, LabelledGraph};
use std::collections::HashMap;

/// Whether `reply` answers `query` on `reference`; the error says what is wrong. A shortest path
/// is checked by length, ends and arcs, since a graph may hold many shortest paths.
pub fn verify(reference: &ReferenceGraph, query: &Query, reply: &Reply) -> anyhow::Result<()> {
    match *query {
        Query::NeighborCount { vertex, dir } => match (reference.degree(vertex, dir), reply) {
            (None, Reply::UnknownVertex) => Ok(()),
            (Some(want), Reply::Count(got)) if *got == want => Ok(()),
            (want, got) => bail!("got {got:?}, the reference count is {want:?}"),
        },
        Query::Bfs {
            start,
            dir,
            max_depth,
        } => match (reference.bfs_levels(start, dir, max_depth), reply) {
            (None, Reply::UnknownVertex) => Ok(()),
            (Some(want), Reply::Levels(got)) if *got == want => Ok(()),
            (Some(want), Reply::Reached(got)) if *got == want.iter().sum::<u64>() => Ok(()),
            (want, got) => bail!("got {got:?}, the reference levels are {want:?}"),
        },
        Query::ShortestPath {
            source,
            target,
            dir,
        } => match (reference.distance(source, target, dir, None), reply) {
            (None, Reply::UnknownVertex) | (Some(None), Reply::Unreachable) => Ok(()),
            (Some(Some(want)), Reply::Distance(got)) => {
                ensure!(*got == want, "distance {got}, the reference says {want}");
                Ok(())
            }
            (Some(Some(want)), Reply::Path(path)) => {
                ensure!(
                    path.len() == want as usize + 1
                        && path.first() == Some(&source)
                        && path.last() == Some(&target)
                        && reference.is_path(path, dir),
                    "{path:?} is not a shortest path from {source} to {target} ({want} hops)"
                );
                Ok(())
            }
            (want, got) => bail!("got {got:?}, the reference distance is {want:?}"),
        },
        Query::BfsLabels { .. } | Query::WeightedPath { .. } => {
            bail!("{query} needs the labelled reference (`Labelled`)")
        }
    }
}

/// What the labelled reference expects of a query, computed once per query (the reference
/// rebuilds its adjacency for each call, and every system is asked the same queries).
#[derive(Debug, Clone, PartialEq)]
enum Expected {
    Levels(Option<Vec<u64>>),
    Weight(Option<Option<f64>>),
}

/// The check of label-filtered and weighted queries against [`LabelledGraph`] (the label
/// `l{i}` of `--random-labels` is its label id `i + 1`), and of every other query against the
/// plain reference.
pub struct Labelled<'a> {
    pub plain: &'a ReferenceGraph,
    pub graph: &'a LabelledGraph,
    expected: HashMap<String, Expected>,
}

/// Weights are `f32`s summed in `f64`: equal up to rounding.
fn same_weight(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1.0)
}

impl<'a> Labelled<'a> {
    pub fn new(plain: &'a ReferenceGraph, graph: &'a LabelledGraph) -> Self {
        Labelled {
            plain,
            graph,
            expected: HashMap::new(),
        }
    }

    pub fn verify(&mut self, query: &Query, reply: &Reply) -> anyhow::Result<()> {
        let graph = self.graph;
        match *query {
            Query::BfsLabels {
                start,
                dir,
                max_depth,
                labels,
            } => {
                let ids: Vec<u32> = labels.indices().iter().map(|i| i + 1).collect();
                let want = self
                    .expected
                    .entry(query.to_string())
                    .or_insert_with(|| {
                        Expected::Levels(graph.bfs_levels(
                            start,
                            dir,
                            max_depth,
                            Follow::edges(Some(&ids)),
                        ))
                    })
                    .clone();
                match (want, reply) {
                    (Expected::Levels(None), Reply::UnknownVertex) => Ok(()),
                    (Expected::Levels(Some(want)), Reply::Levels(got)) if *got == want => Ok(()),
                    (Expected::Levels(Some(want)), Reply::Reached(got))
                        if *got == want.iter().sum::<u64>() =>
                    {
                        Ok(())
                    }
                    (want, got) => bail!("got {got:?}, the reference levels are {want:?}"),
                }
            }
            Query::WeightedPath {
                source,
                target,
                dir,
            } => {
                let want = self
                    .expected
                    .entry(query.to_string())
                    .or_insert_with(|| {
                        Expected::Weight(graph.dijkstra(source, target, dir, Follow::ALL))
                    })
                    .clone();
                match (want, reply) {
                    (Expected::Weight(None), Reply::UnknownVertex)
                    | (Expected::Weight(Some(None)), Reply::Unreachable) => Ok(()),
                    (Expected::Weight(Some(Some(want))), Reply::WeightedPath { path, weight }) => {
                        ensure!(
                            same_weight(*weight, want),
                            "weight {weight}, the reference's least weight is {want}"
                        );
                        ensure!(
                            path.first() == Some(&source) && path.last() == Some(&target),
                            "{path:?} does not join {source} to {target}"
                        );
                        match graph.path_weight(path, dir, Follow::ALL) {
                            Some(w) if same_weight(w, want) => Ok(()),
                            Some(w) => bail!("{path:?} weighs {w}, the least weight is {want}"),
                            None => bail!("{path:?} is not a path of the graph ({dir})"),
                        }
                    }
                    (want, got) => bail!("got {got:?}, the reference expects {want:?}"),
                }
            }
            _ => verify(self.plain, query, reply),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Reply::{Count, Distance, Levels, Path, Reached, UnknownVertex, Unreachable};
    use graph_client::graph::Direction::{Both, Out};

    /// 1 → 2 → 3 → 4, 1 → 3, and 5 → 6 apart.
    fn graph() -> ReferenceGraph {
        ReferenceGraph::new([(1, 2), (2, 3), (3, 4), (1, 3), (5, 6)])
    }

    fn check(query: Query, reply: Reply) -> bool {
        verify(&graph(), &query, &reply).is_ok()
    }

    #[test]
    fn weighted_paths_and_label_filtered_bfs_against_the_labelled_reference() {
        use crate::system::LabelSet;
        // 1 -l0,5-> 2 -l0,5-> 3; 1 -l1,1-> 3 (label ids are l{i} + 1); 4 isolated.
        let plain = graph();
        let g = LabelledGraph::new([4], [(1, 2, 1, 5.0), (2, 3, 1, 5.0), (1, 3, 2, 1.0)]);
        let mut check = Labelled::new(&plain, &g);
        let w = |source, target| Query::WeightedPath {
            source,
            target,
            dir: Out,
        };
        let wp = |path: &[u64], weight| Reply::WeightedPath {
            path: path.to_vec(),
            weight,
        };
        assert!(check.verify(&w(1, 3), &wp(&[1, 3], 1.0)).is_ok());
        // The right weight on a heavier path, a wrong weight on the right path, a non-path.
        assert!(check.verify(&w(1, 3), &wp(&[1, 2, 3], 1.0)).is_err());
        assert!(check.verify(&w(1, 3), &wp(&[1, 3], 10.0)).is_err());
        assert!(check.verify(&w(1, 2), &wp(&[1, 3, 2], 5.0)).is_err());
        assert!(check.verify(&w(1, 2), &wp(&[1, 2], 5.0)).is_ok());
        assert!(check.verify(&w(3, 1), &Unreachable).is_ok());
        assert!(check.verify(&w(1, 3), &Unreachable).is_err());
        assert!(check.verify(&w(1, 9), &UnknownVertex).is_ok());
        let b = |labels| Query::BfsLabels {
            start: 1,
            dir: Out,
            max_depth: Some(3),
            labels: LabelSet(labels),
        };
        assert!(check.verify(&b(0b01), &Levels(vec![1, 1, 1])).is_ok());
        assert!(check.verify(&b(0b10), &Levels(vec![1, 1])).is_ok());
        assert!(check.verify(&b(0b11), &Levels(vec![1, 2])).is_ok());
        assert!(check.verify(&b(0b10), &Levels(vec![1, 1, 1])).is_err());
        assert!(check.verify(&b(0b01), &Reached(3)).is_ok());
        // The plain queries go to the plain reference.
        let n = Query::NeighborCount {
            vertex: 3,
            dir: Both,
        };
        assert!(check.verify(&n, &Count(3)).is_ok());
        assert!(verify(&plain, &w(1, 3), &wp(&[1, 3], 1.0)).is_err());
    }

    #[test]
    fn neighbor_counts() {
        let q = |vertex| Query::NeighborCount { vertex, dir: Both };
        assert!(check(q(3), Count(3)));
        assert!(!check(q(3), Count(2)));
        assert!(!check(q(3), UnknownVertex));
        assert!(check(q(9), UnknownVertex));
        assert!(!check(q(9), Count(0)));
    }

    #[test]
    fn bfs_by_levels_or_reached_count() {
        let full = Query::Bfs {
            start: 1,
            dir: Out,
            max_depth: None,
        };
        assert!(check(full, Levels(vec![1, 2, 1])));
        assert!(check(full, Reached(4)));
        assert!(!check(full, Levels(vec![1, 1, 2])));
        assert!(!check(full, Reached(3)));
        let bounded = Query::Bfs {
            start: 1,
            dir: Out,
            max_depth: Some(1),
        };
        assert!(check(bounded, Levels(vec![1, 2])));
        assert!(!check(bounded, Reached(4)));
        let unknown = Query::Bfs {
            start: 9,
            dir: Out,
            max_depth: None,
        };
        assert!(check(unknown, UnknownVertex));
        assert!(!check(unknown, Reached(1)));
    }

    #[test]
    fn shortest_paths_by_length_ends_and_arcs() {
        let q = |source, target| Query::ShortestPath {
            source,
            target,
            dir: Out,
        };
        assert!(check(q(1, 4), Path(vec![1, 3, 4])));
        assert!(check(q(1, 4), Distance(2)));
        assert!(check(q(1, 1), Path(vec![1])));
        // Too long, not ending at the target, not following arcs, against the arcs.
        assert!(!check(q(1, 4), Path(vec![1, 2, 3, 4])));
        assert!(!check(q(1, 4), Path(vec![1, 3])));
        assert!(!check(q(1, 4), Path(vec![1, 2, 4])));
        assert!(!check(q(4, 1), Path(vec![4, 3, 1])));
        assert!(!check(q(1, 4), Distance(3)));
        assert!(check(q(4, 1), Unreachable));
        assert!(!check(q(1, 5), UnknownVertex));
        assert!(check(q(1, 5), Unreachable));
        assert!(check(q(1, 9), UnknownVertex));
        assert!(!check(q(9, 1), Unreachable));
        assert!(!check(q(1, 4), Count(2)));
    }
}
