//! The one check of every answer, whichever system gave it: the reply must agree with the
//! reference graph. `measure` calls it after the call's clock has stopped.
//!
//! The reference's answers are computed before anything is timed ([`Answers::prepare`]): a
//! reference BFS between two timed calls would evict the caches the next call uses (on this
//! 2-core machine, the server's as well as the client's) and slow it by a share that depends on
//! the system and on whether it ran first, so checking after the clock stopped would not be
//! enough to keep the check out of the figures.

use crate::report::model::PairMix;
use crate::system::{Query, Reply};
use anyhow::{bail, ensure};
use graph_client::graph::Direction;
use graph_reference::ReferenceGraph;
use graph_reference::{Follow, LabelledGraph};
use std::collections::HashMap;

/// Whether `reply` answers `query` on `reference`; the error says what is wrong. A shortest path
/// is checked by length, ends and arcs, since a graph may hold many shortest paths. Computes the
/// reference's answer now: for checks between timed calls, see [`Answers`].
pub fn verify(reference: &ReferenceGraph, query: &Query, reply: &Reply) -> anyhow::Result<()> {
    Answers::new(reference, None).verify(query, reply)
}

/// What the reference answers to a query; `None` (the outer one) for an unknown vertex.
#[derive(Debug, Clone, PartialEq)]
enum Expected {
    Count(Option<u64>),
    Levels(Option<Vec<u64>>),
    Hops(Option<Option<u32>>),
    Weight(Option<Option<f64>>),
}

/// The reference's answers to the queries a run asks, and the check of replies against them.
/// Label-filtered and weighted queries need the labelled reference (the label `l{i}` of
/// `--random-labels` is its label id `i + 1`); every other query is answered by the plain one.
pub struct Answers<'a> {
    plain: &'a ReferenceGraph,
    labelled: Option<&'a LabelledGraph>,
    expected: HashMap<Query, Expected>,
}

/// Whether a system's own sum of a path's weights can be the least weight `want`: equal up to
/// the rounding of a sum in `f32`, which some systems use, over about a hundred arcs. Relative
/// only: an absolute floor would pass any path on a graph of small weights (a path six times as
/// heavy as the least passed when weights were below 1e-6).
fn same_reported_weight(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-5 * got.abs().max(want.abs())
}

/// Whether a path whose arcs' `f32` weights add up to `sum` (in `f64`, in path order) is of
/// least weight `want` (the reference's `f64` sum along its own path): equal up to the order
/// of `f64` additions, which no graph here comes near.
fn same_sum(sum: f64, want: f64) -> bool {
    (sum - want).abs() <= 1e-9 * sum.abs().max(want.abs())
}

impl<'a> Answers<'a> {
    pub fn new(plain: &'a ReferenceGraph, labelled: Option<&'a LabelledGraph>) -> Self {
        Answers {
            plain,
            labelled,
            expected: HashMap::new(),
        }
    }

    /// Computes the answers to `queries` that are not known yet, so that checking their replies
    /// costs a comparison.
    pub fn prepare<'q>(
        &mut self,
        queries: impl IntoIterator<Item = &'q Query>,
    ) -> anyhow::Result<()> {
        for query in queries {
            if !self.expected.contains_key(query) {
                let want = self.expect(query)?;
                self.expected.insert(*query, want);
            }
        }
        Ok(())
    }

    fn expect(&self, query: &Query) -> anyhow::Result<Expected> {
        let plain = self.plain;
        Ok(match *query {
            Query::NeighborCount { vertex, dir } => Expected::Count(plain.degree(vertex, dir)),
            Query::Bfs {
                start,
                dir,
                max_depth,
            } => Expected::Levels(plain.bfs_levels(start, dir, max_depth)),
            Query::ShortestPath {
                source,
                target,
                dir,
            } => Expected::Hops(plain.distance(source, target, dir, None)),
            Query::BfsLabels {
                start,
                dir,
                max_depth,
                labels,
            } => {
                let ids: Vec<u32> = labels.indices().iter().map(|i| i + 1).collect();
                let follow = Follow::edges(Some(&ids));
                Expected::Levels(
                    self.labelled(query)?
                        .bfs_levels(start, dir, max_depth, follow),
                )
            }
            Query::WeightedPath {
                source,
                target,
                dir,
            } => Expected::Weight(
                self.labelled(query)?
                    .dijkstra(source, target, dir, Follow::ALL),
            ),
        })
    }

    /// What the shortest-path `pairs` ask, from the answers prepared for them in direction
    /// `dir` (`None` if some were not prepared: the workload did not run, or ran only on the
    /// Stage-1 systems, which ask the first `--stage1-runs` of them).
    pub fn pair_mix(&self, pairs: &[(u64, u64)], dir: Direction) -> Option<PairMix> {
        let mut mix = PairMix::default();
        for &(source, target) in pairs {
            let query = Query::ShortestPath {
                source,
                target,
                dir,
            };
            match self.expected.get(&query)? {
                Expected::Hops(None) => mix.unknown += 1,
                Expected::Hops(Some(None)) => mix.unreachable += 1,
                Expected::Hops(Some(Some(_))) => mix.reachable += 1,
                _ => return None,
            }
        }
        Some(mix)
    }

    fn labelled(&self, query: &Query) -> anyhow::Result<&'a LabelledGraph> {
        match self.labelled {
            Some(graph) => Ok(graph),
            None => bail!("{query} needs the labelled reference"),
        }
    }

    /// Whether `reply` answers `query` (see [`verify`]), against the prepared answer, or one
    /// computed now if `query` was not prepared.
    pub fn verify(&self, query: &Query, reply: &Reply) -> anyhow::Result<()> {
        let computed;
        let want = match self.expected.get(query) {
            Some(want) => want,
            None => {
                computed = self.expect(query)?;
                &computed
            }
        };
        match (want, reply) {
            (Expected::Count(None), Reply::UnknownVertex)
            | (Expected::Levels(None), Reply::UnknownVertex)
            | (Expected::Hops(None), Reply::UnknownVertex)
            | (Expected::Hops(Some(None)), Reply::Unreachable)
            | (Expected::Weight(None), Reply::UnknownVertex)
            | (Expected::Weight(Some(None)), Reply::Unreachable) => Ok(()),
            (Expected::Count(Some(want)), Reply::Count(got)) if got == want => Ok(()),
            (Expected::Levels(Some(want)), Reply::Levels(got)) if got == want => Ok(()),
            (Expected::Levels(Some(want)), Reply::Reached(got))
                if *got == want.iter().sum::<u64>() =>
            {
                Ok(())
            }
            (Expected::Hops(Some(Some(want))), Reply::Path(path)) => {
                let (source, target, dir) = ends(query);
                ensure!(
                    path.len() == *want as usize + 1
                        && path.first() == Some(&source)
                        && path.last() == Some(&target)
                        && self.plain.is_path(path, dir),
                    "{} is not a shortest path from {source} to {target} ({want} hops)",
                    shown(path)
                );
                Ok(())
            }
            (Expected::Weight(Some(Some(want))), Reply::WeightedPath { path, weight }) => {
                let (source, target, dir) = ends(query);
                ensure!(
                    same_reported_weight(*weight, *want),
                    "weight {weight}, the reference's least weight is {want}"
                );
                ensure!(
                    path.first() == Some(&source) && path.last() == Some(&target),
                    "{} does not join {source} to {target}",
                    shown(path)
                );
                // A walk round a cycle of weight 0 weighs the least too, but is no path.
                let mut seen = path.clone();
                seen.sort_unstable();
                ensure!(
                    seen.windows(2).all(|w| w[0] != w[1]),
                    "{} enters a vertex twice",
                    shown(path)
                );
                match self.labelled(query)?.path_weight(path, dir, Follow::ALL) {
                    Some(w) if same_sum(w, *want) => Ok(()),
                    Some(w) => bail!("{} weighs {w}, the least weight is {want}", shown(path)),
                    None => bail!("{} is not a path of the graph ({dir})", shown(path)),
                }
            }
            (Expected::Levels(Some(want)), Reply::Levels(got)) => bail!(levels_differ(got, want)),
            (Expected::Levels(Some(want)), Reply::Reached(got)) => bail!(
                "reached {got} vertices, the reference {} in {} levels",
                want.iter().sum::<u64>(),
                want.len()
            ),
            (want, got) => bail!("got {}, the reference expects {}", brief(got), brief(want)),
        }
    }
}

/// Where a BFS's level counts first differ from the reference's, readable when a BFS has
/// 100,000 levels (a long chain), which listing both would not be.
fn levels_differ(got: &[u64], want: &[u64]) -> String {
    let at = (got.iter().zip(want))
        .position(|(g, w)| g != w)
        .unwrap_or(got.len().min(want.len()));
    let level = |levels: &[u64]| match levels.get(at) {
        None => "no level".to_string(),
        Some(1) => "1 vertex".to_string(),
        Some(n) => format!("{n} vertices"),
    };
    format!(
        "got {} levels reaching {} vertices, the reference {} levels reaching {}; they first \
         differ at depth {at}: {} there, the reference {}",
        got.len(),
        got.iter().sum::<u64>(),
        want.len(),
        want.iter().sum::<u64>(),
        level(got),
        level(want)
    )
}

/// A reply or an expected answer for a message, its lists cut short (see [`shown`]).
fn brief(answer: &impl std::fmt::Debug) -> String {
    let text = format!("{answer:?}");
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}… ({} characters)", &text[..cut], text.chars().count()),
        None => text,
    }
}

/// A path for a message: whole if short, else its ends and length.
fn shown(path: &[u64]) -> String {
    match path.len() {
        0..=12 => format!("{path:?}"),
        n => format!("{:?} … {:?} ({n} vertices)", &path[..5], &path[n - 5..]),
    }
}

/// The ends and direction of a path query: what a reply's path must join and follow. Only path
/// queries have paths for answers ([`Expected::Hops`] and [`Expected::Weight`] come from them).
fn ends(query: &Query) -> (u64, u64, graph_client::graph::Direction) {
    match *query {
        Query::ShortestPath {
            source,
            target,
            dir,
        }
        | Query::WeightedPath {
            source,
            target,
            dir,
        } => (source, target, dir),
        _ => unreachable!("{query} is not a path query"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Reply::{Count, Levels, Path, Reached, UnknownVertex, Unreachable};
    use graph_client::graph::Direction::{Both, Out};

    /// 1 → 2 → 3 → 4, 1 → 3, and 5 → 6 apart.
    fn graph() -> ReferenceGraph {
        ReferenceGraph::new([(1, 2), (2, 3), (3, 4), (1, 3), (5, 6)])
    }

    /// The verdict on `reply`, the same whether the answer was prepared or not.
    fn check(query: Query, reply: Reply) -> bool {
        let g = graph();
        let now = verify(&g, &query, &reply).is_ok();
        let mut answers = Answers::new(&g, None);
        answers.prepare([&query]).unwrap();
        assert_eq!(answers.verify(&query, &reply).is_ok(), now, "{query}");
        now
    }

    #[test]
    fn long_answers_are_told_apart_briefly() {
        let chain: Vec<u64> = vec![1; 100_000];
        let mut cut = chain.clone();
        cut.truncate(65_536);
        let text = levels_differ(&cut, &chain);
        assert_eq!(
            text,
            "got 65536 levels reaching 65536 vertices, the reference 100000 levels reaching \
             100000; they first differ at depth 65536: no level there, the reference 1 vertex"
        );
        let mut off = chain.clone();
        off[7] = 2;
        assert!(
            levels_differ(&off, &chain)
                .ends_with("depth 7: 2 vertices there, the reference 1 vertex")
        );
        let path: Vec<u64> = (0..1000).collect();
        assert_eq!(
            shown(&path),
            "[0, 1, 2, 3, 4] … [995, 996, 997, 998, 999] (1000 vertices)"
        );
        assert_eq!(shown(&path[..3]), "[0, 1, 2]");
        // A full BFS that only counts what it reached, or any other mismatch, stays short too.
        let g = graph();
        let answers = Answers::new(&g, None);
        let bfs = Query::Bfs {
            start: 1,
            dir: Out,
            max_depth: None,
        };
        let err = answers.verify(&bfs, &Reached(3)).unwrap_err().to_string();
        assert_eq!(err, "reached 3 vertices, the reference 4 in 3 levels");
        let long = Path((0..100_000).collect());
        let err = answers.verify(&bfs, &long).unwrap_err().to_string();
        assert!(err.len() < 500 && err.contains("characters)"), "{err}");
    }

    #[test]
    fn the_pair_mix_counts_what_the_prepared_pairs_ask() {
        let paths = |pairs: &[(u64, u64)]| -> Vec<Query> {
            (pairs.iter())
                .map(|&(source, target)| Query::ShortestPath {
                    source,
                    target,
                    dir: Out,
                })
                .collect()
        };
        let g = graph();
        let pairs = [(1, 4), (1, 3), (4, 1), (5, 6), (1, 6), (1, 99), (99, 1)];
        let mut answers = Answers::new(&g, None);
        assert_eq!(answers.pair_mix(&pairs, Out), None, "nothing prepared");
        answers.prepare(&paths(&pairs)).unwrap();
        let mix = |reachable, unreachable, unknown| {
            Some(PairMix {
                reachable,
                unreachable,
                unknown,
            })
        };
        assert_eq!(answers.pair_mix(&pairs, Out), mix(3, 2, 2));
        assert_eq!(
            answers.pair_mix(&pairs, Both),
            None,
            "prepared for Out only"
        );
        // A graph of self-loops has no pair with a path: the sampler fills with unknown vertices.
        let loops = ReferenceGraph::new((1..=30).map(|v| (v, v)));
        let pairs = loops.sample_pairs(20, Out, 7);
        let mut answers = Answers::new(&loops, None);
        answers.prepare(&paths(&pairs)).unwrap();
        let m = answers.pair_mix(&pairs, Out).unwrap();
        assert_eq!((m.reachable, m.unknown > m.unreachable), (0, true), "{m:?}");
    }

    #[test]
    fn a_heavier_path_is_refused_however_small_the_weights() {
        // An audit's graph: 3 → 1 weighs 1.5e-7, 3 → 2 → 1 weighs 2.5e-8 (a peer answered the
        // first, which an absolute tolerance of 1e-6 passed).
        let g = LabelledGraph::new([], [(3, 1, 0, 1.5e-7), (3, 2, 0, 0.0), (2, 1, 0, 2.5e-8)]);
        let query = Query::WeightedPath {
            source: 3,
            target: 1,
            dir: Out,
        };
        let plain = graph();
        let answers = Answers::new(&plain, Some(&g));
        let reply = |path: &[u64], weight: f64| Reply::WeightedPath {
            path: path.to_vec(),
            weight,
        };
        let least = f64::from(2.5e-8f32);
        assert!(answers.verify(&query, &reply(&[3, 2, 1], least)).is_ok());
        for wrong in [reply(&[3, 1], f64::from(1.5e-7f32)), reply(&[3, 1], least)] {
            assert!(answers.verify(&query, &wrong).is_err(), "{wrong:?}");
        }
        // A weight summed in f32 by the system is still its path's weight.
        let rounded = f64::from(0.0f32 + 2.5e-8f32);
        assert!(answers.verify(&query, &reply(&[3, 2, 1], rounded)).is_ok());
    }

    #[test]
    fn a_walk_round_a_weightless_cycle_is_no_path() {
        // 1 ⇄ 2 at weight 0, 1 → 3 at weight 1: [1, 2, 1, 3] weighs the least, but is a walk.
        let g = LabelledGraph::new([], [(1, 2, 0, 0.0), (2, 1, 0, 0.0), (1, 3, 0, 1.0)]);
        let plain = graph();
        let answers = Answers::new(&plain, Some(&g));
        let query = Query::WeightedPath {
            source: 1,
            target: 3,
            dir: Out,
        };
        let reply = |path: &[u64]| Reply::WeightedPath {
            path: path.to_vec(),
            weight: 1.0,
        };
        assert!(answers.verify(&query, &reply(&[1, 3])).is_ok());
        let walk = answers.verify(&query, &reply(&[1, 2, 1, 3])).unwrap_err();
        assert!(walk.to_string().contains("enters a vertex twice"), "{walk}");
    }

    #[test]
    fn weighted_paths_and_label_filtered_bfs_against_the_labelled_reference() {
        use crate::system::LabelSet;
        // 1 -l0,5-> 2 -l0,5-> 3; 1 -l1,1-> 3 (label ids are l{i} + 1); 4 isolated.
        let plain = graph();
        let g = LabelledGraph::new([4], [(1, 2, 1, 5.0), (2, 3, 1, 5.0), (1, 3, 2, 1.0)]);
        let w = |source, target| Query::WeightedPath {
            source,
            target,
            dir: Out,
        };
        let wp = |path: &[u64], weight| Reply::WeightedPath {
            path: path.to_vec(),
            weight,
        };
        let b = |labels| Query::BfsLabels {
            start: 1,
            dir: Out,
            max_depth: Some(3),
            labels: LabelSet(labels),
        };
        let n = Query::NeighborCount {
            vertex: 3,
            dir: Both,
        };
        // (query, reply, whether the reply is right)
        let cases = [
            (w(1, 3), wp(&[1, 3], 1.0), true),
            // The right weight on a heavier path, a wrong weight on the right path, a non-path.
            (w(1, 3), wp(&[1, 2, 3], 1.0), false),
            (w(1, 3), wp(&[1, 3], 10.0), false),
            (w(1, 2), wp(&[1, 3, 2], 5.0), false),
            (w(1, 2), wp(&[1, 2], 5.0), true),
            (w(3, 1), Unreachable, true),
            (w(1, 3), Unreachable, false),
            (w(1, 9), UnknownVertex, true),
            (b(0b01), Levels(vec![1, 1, 1]), true),
            (b(0b10), Levels(vec![1, 1]), true),
            (b(0b11), Levels(vec![1, 2]), true),
            (b(0b10), Levels(vec![1, 1, 1]), false),
            (b(0b01), Reached(3), true),
            // The plain queries go to the plain reference.
            (n, Count(3), true),
            (n, Count(2), false),
        ];
        // Answers computed as replies arrive, and prepared before any reply: the same verdicts.
        let mut answers = Answers::new(&plain, Some(&g));
        for prepared in [false, true] {
            if prepared {
                answers.prepare(cases.iter().map(|(q, _, _)| q)).unwrap();
            }
            for (query, reply, right) in &cases {
                let verdict = answers.verify(query, reply);
                assert_eq!(verdict.is_ok(), *right, "{query}: {reply:?}: {verdict:?}");
            }
        }
        // Without the labelled reference, labelled queries cannot be checked (nor prepared).
        assert!(verify(&plain, &w(1, 3), &wp(&[1, 3], 1.0)).is_err());
        assert!(Answers::new(&plain, None).prepare([&b(1)]).is_err());
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
        assert!(check(q(1, 1), Path(vec![1])));
        // Too long, not ending at the target, not following arcs, against the arcs.
        assert!(!check(q(1, 4), Path(vec![1, 2, 3, 4])));
        assert!(!check(q(1, 4), Path(vec![1, 3])));
        assert!(!check(q(1, 4), Path(vec![1, 2, 4])));
        assert!(!check(q(4, 1), Path(vec![4, 3, 1])));
        assert!(check(q(4, 1), Unreachable));
        assert!(!check(q(1, 5), UnknownVertex));
        assert!(check(q(1, 5), Unreachable));
        assert!(check(q(1, 9), UnknownVertex));
        assert!(!check(q(9, 1), Unreachable));
        assert!(!check(q(1, 4), Count(2)));
    }
}
