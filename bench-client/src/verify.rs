//! The one check of every answer, whichever system gave it: the reply must agree with the
//! reference graph. `measure` calls it after the call's clock has stopped.

use crate::system::{Query, Reply};
use anyhow::{bail, ensure};
use graph_reference::ReferenceGraph;

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
