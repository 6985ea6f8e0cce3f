use crate::{
    Direction, Ends, ListCursor, Neighbor, NeighborSource, Progress, Work, check_ends,
    discoveries_per_step, lower_bound, read_page,
};
use hashbrown::HashMap;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What a [`WeightedPath`] should compute: a path of least total weight from `source` to
/// `target`, following arcs in `dir`, over the arcs its source keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeightedQuery {
    pub source: u64,
    pub target: u64,
    pub dir: Direction,
}

/// The answer of a finished [`WeightedPath`].
#[derive(Debug, Clone, PartialEq)]
pub enum WeightedOutcome {
    /// A path of least total weight, source first and target last, and that weight (the sum of
    /// its arcs' weights, in `f64`).
    Found {
        path: Vec<u64>,
        weight: f64,
    },
    /// No path exists.
    Unreachable,
    UnknownSource,
    UnknownTarget,
}

/// A vertex's tentative distance from one side's root, the vertex it was reached from (the
/// root is its own parent), and its side's potential (see [`Guide`]): the side orders its
/// queue by `dist + bias`.
#[derive(Debug, Clone, Copy)]
struct Label {
    dist: f64,
    parent: u64,
    settled: bool,
    bias: f64,
}

impl Label {
    /// The label's place in its side's queue.
    fn key(&self) -> f64 {
        self.dist + self.bias
    }
}

/// The queue order of key `x`: the bits of an `f64`, turned so that they order as the numbers
/// do, negative ones included.
#[inline]
fn order(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// The landmark rows of a search's two ends, from which each vertex's potential is computed.
///
/// With `π_t(v)` and `π_s(v)` the landmarks' lower bounds on the weight between `v` and the
/// target and source, the forward potential is `p(v) = (π_t(v) - π_s(v)) / 2` and the
/// backward one `-p(v)` (Goldberg and Harrelson's average potentials). Both searches then run
/// Dijkstra on one graph of reduced arc weights `w(u, v) - p(u) + p(v)`, which are never
/// negative since `p` changes by at most `w` along an arc, and the usual stopping rule (the two
/// least keys add up to at least the best path found) stays exact. A vertex that cannot reach
/// the other end at all has an infinite key and is never expanded.
#[derive(Debug)]
struct Guide {
    source: Vec<f64>,
    target: Vec<f64>,
}

impl Guide {
    /// The forward potential of the vertex whose landmark row is `row`.
    fn potential(&self, row: &[f64]) -> f64 {
        let p = (lower_bound(row, &self.target) - lower_bound(row, &self.source)) / 2.0;
        if p.is_nan() { 0.0 } else { p }
    }
}

/// Largest id bound for which labels are found through a dense index (4 bytes an id: 128 MiB).
const DENSE_LIMIT: u64 = 1 << 25;

/// The labels of one side: found through a dense index when ids are known to be small (as
/// [`crate::Visited`] does for BFS), through a hash map otherwise. Ids at or above the bound
/// (e.g. vertices added while a multi-transaction search runs) go to the map, so a wrong bound
/// costs speed, never correctness (ids are converted to indices with a check: see
/// [`crate::Visited`]).
#[derive(Debug, Default)]
struct Labels {
    /// `dense[v]`: 1 + the index of `v`'s label in `entries`, 0 if `v` has none.
    dense: Vec<u32>,
    sparse: HashMap<u64, u32>,
    entries: Vec<Label>,
}

impl Labels {
    fn new(id_bound: Option<u64>) -> Self {
        let dense = match id_bound {
            Some(bound) if bound <= DENSE_LIMIT => vec![0; bound as usize],
            _ => Vec::new(),
        };
        Self {
            dense,
            ..Self::default()
        }
    }

    #[inline]
    fn index(&self, v: u64) -> Option<usize> {
        match usize::try_from(v).ok().and_then(|at| self.dense.get(at)) {
            Some(&at) => at.checked_sub(1).map(|at| at as usize),
            None => self.sparse.get(&v).map(|&at| at as usize),
        }
    }

    #[inline]
    fn get(&self, v: u64) -> Option<&Label> {
        self.index(v).map(|at| &self.entries[at])
    }

    #[inline]
    fn get_mut(&mut self, v: u64) -> Option<&mut Label> {
        self.index(v).map(|at| &mut self.entries[at])
    }

    /// Sets `v`'s label, adding one if it has none.
    #[inline]
    fn set(&mut self, v: u64, label: Label) {
        if let Some(old) = self.get_mut(v) {
            *old = label;
            return;
        }
        let at = u32::try_from(self.entries.len()).expect("fewer than 2^32 labels");
        self.entries.push(label);
        match usize::try_from(v)
            .ok()
            .and_then(|at| self.dense.get_mut(at))
        {
            Some(slot) => *slot = at + 1,
            None => {
                self.sparse.insert(v, at);
            }
        }
    }

    fn reserve(&mut self, n: usize) {
        self.entries.reserve(n);
        if self.dense.is_empty() {
            self.sparse.reserve(n);
        }
    }
}

/// One half of the bidirectional search: a Dijkstra from its root.
#[derive(Debug, Default)]
struct Side {
    labels: Labels,
    /// Labelled vertices by key ([`Label::key`], as its [`order`]); entries made stale by a
    /// shorter distance are skipped when popped.
    heap: BinaryHeap<Reverse<(u64, u64)>>,
}

impl Side {
    fn rooted_at(root: u64, bias: f64, id_bound: Option<u64>) -> Self {
        let mut side = Side {
            labels: Labels::new(id_bound),
            heap: BinaryHeap::new(),
        };
        side.label(root, 0.0, root, bias);
        side
    }

    fn label(&mut self, v: u64, dist: f64, parent: u64, bias: f64) {
        let label = Label {
            dist,
            parent,
            settled: false,
            bias,
        };
        self.labels.set(v, label);
        self.heap.push(Reverse((order(label.key()), v)));
    }

    /// Drops stale entries from the top of the heap; returns the least key of a vertex not yet
    /// settled, if any remains.
    fn top(&mut self) -> Option<f64> {
        while let Some(&Reverse((bits, v))) = self.heap.peek() {
            let label = *self.labels.get(v).expect("a queued vertex is labelled");
            if !label.settled && order(label.key()) == bits {
                return Some(label.key());
            }
            self.heap.pop();
        }
        None
    }

    /// The path from this side's root to `v`, root first.
    fn path_from_root(&self, mut v: u64) -> Vec<u64> {
        let mut path = vec![v];
        while let Some(label) = self.labels.get(v).filter(|l| l.parent != v) {
            v = label.parent;
            path.push(v);
        }
        path.reverse();
        path
    }
}

/// The forward potential of `v` under `guide` (0 without one, or for a vertex the landmarks do
/// not cover).
fn potential<S: NeighborSource + ?Sized>(guide: Option<&Guide>, src: &S, v: u64) -> f64 {
    match (guide, src.landmark_row(v)) {
        (Some(guide), Some(row)) => guide.potential(row),
        _ => 0.0,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Forward,
    Backward,
}

/// Bidirectional Dijkstra over non-negative arc weights, resumable between transactions.
///
/// A forward search from the source and a backward one from the target each settle vertices
/// in order of distance; the side with fewer vertices waiting is grown next (balanced, like
/// [`crate::ShortestPath`]). Every time a vertex gets a shorter distance on one side while the
/// other side has reached it, the path through it is a candidate; the search stops once the two
/// least waiting distances add up to at least the best candidate, which is then a path of least
/// weight (or when a side runs out: then the best candidate, if any, is one). A hub's list is
/// read in pages that fit the budget, so a step's work stays near it whatever the degrees.
///
/// When the source has landmarks for both ends ([`NeighborSource::landmark_row`]), each side
/// orders its queue by distance plus a potential that steers it towards the other end (see
/// [`Guide`]): the same answer, from far fewer vertices on road-like graphs.
#[derive(Debug)]
pub struct WeightedPath {
    query: WeightedQuery,
    id_bound: Option<u64>,
    forward: Side,
    backward: Side,
    /// The landmark rows of both ends, when the source has them.
    guide: Option<Guide>,
    /// The vertex being expanded: its side and distance; its list is read from `list`.
    current: Option<(Which, u64, f64)>,
    list: Option<ListCursor>,
    /// The best path found so far: its weight and a vertex on it that both sides reached.
    best: Option<(f64, u64)>,
    started: bool,
    outcome: Option<WeightedOutcome>,
    work: Work,
    scratch: Vec<Neighbor>,
}

impl WeightedPath {
    /// A search for `query`; `id_bound`, if known, bounds the vertex ids (see
    /// [`crate::Bfs::new`]): labels are then found through a dense index.
    pub fn new(query: WeightedQuery, id_bound: Option<u64>) -> Self {
        Self {
            query,
            id_bound,
            forward: Side::default(),
            backward: Side::default(),
            guide: None,
            current: None,
            list: None,
            best: None,
            started: false,
            outcome: None,
            work: Work::default(),
            scratch: Vec::new(),
        }
    }

    /// Advances the search until it finishes or `budget` more work units have been spent (an
    /// arc read, a vertex expanded, a vertex taken from a queue); at least one unit per call.
    pub fn step<S: NeighborSource + ?Sized>(&mut self, src: &S, budget: u64) -> Progress {
        if self.outcome.is_some() {
            return Progress::Done;
        }
        let limit = self.work.units().saturating_add(budget.max(1));
        if !self.started {
            self.started = true;
            if let Some(outcome) = self.start(src) {
                return self.finish(outcome);
            }
        }
        loop {
            if self.work.units() >= limit {
                return Progress::Suspended;
            }
            let Some((which, u, dist)) = self.current else {
                if let Err(outcome) = self.settle_next() {
                    return self.finish(outcome);
                }
                continue;
            };
            let dir = match which {
                Which::Forward => self.query.dir,
                Which::Backward => self.query.dir.reverse(),
            };
            let room = limit.saturating_sub(self.work.units());
            let mut page = std::mem::take(&mut self.scratch);
            if read_page(src, u, dir, &mut self.list, &mut self.work, room, &mut page) {
                self.current = None;
            }
            let (side, other, sign) = match which {
                Which::Forward => (&mut self.forward, &self.backward, 1.0),
                Which::Backward => (&mut self.backward, &self.forward, -1.0),
            };
            for n in &page {
                let through = dist + n.attrs.weight as f64;
                let bias = match side.labels.get(n.id) {
                    Some(l) if through >= l.dist => continue,
                    Some(l) => l.bias,
                    None => potential(self.guide.as_ref(), src, n.id) * sign,
                };
                side.label(n.id, through, u, bias);
                if let Some(there) = other.labels.get(n.id) {
                    let total = through + there.dist;
                    if self.best.is_none_or(|(best, _)| total < best) {
                        self.best = Some((total, n.id));
                    }
                }
            }
            self.scratch = page;
        }
    }

    /// Checks both endpoints and seeds the two sides; returns an outcome if the search is
    /// already decided.
    fn start<S: NeighborSource + ?Sized>(&mut self, src: &S) -> Option<WeightedOutcome> {
        let WeightedQuery { source, target, .. } = self.query;
        self.work.lookups += 2;
        if let Some(ends) = check_ends(src, source, target) {
            return Some(match ends {
                Ends::UnknownSource => WeightedOutcome::UnknownSource,
                Ends::UnknownTarget => WeightedOutcome::UnknownTarget,
                Ends::Same => WeightedOutcome::Found {
                    path: vec![source],
                    weight: 0.0,
                },
                Ends::Unreachable => WeightedOutcome::Unreachable,
            });
        }
        self.guide = match (src.landmark_row(source), src.landmark_row(target)) {
            (Some(s), Some(t)) => Some(Guide {
                source: s.to_vec(),
                target: t.to_vec(),
            }),
            _ => None,
        };
        let guide = self.guide.as_ref();
        self.forward = Side::rooted_at(source, potential(guide, src, source), self.id_bound);
        self.backward = Side::rooted_at(target, -potential(guide, src, target), self.id_bound);
        None
    }

    /// Between expansions: stops if no lighter path can exist, else takes the nearest waiting
    /// vertex of the side with fewer waiting, settles it and makes it the one to expand.
    fn settle_next(&mut self) -> Result<(), WeightedOutcome> {
        let (Some(f), Some(b)) = (self.forward.top(), self.backward.top()) else {
            return Err(self.outcome_now());
        };
        // An infinite key: no vertex left on that side can reach the other end.
        if f == f64::INFINITY
            || b == f64::INFINITY
            || self.best.is_some_and(|(best, _)| f + b >= best)
        {
            return Err(self.outcome_now());
        }
        let which = if self.backward.heap.len() < self.forward.heap.len() {
            Which::Backward
        } else {
            Which::Forward
        };
        let side = match which {
            Which::Forward => &mut self.forward,
            Which::Backward => &mut self.backward,
        };
        let Reverse((_, v)) = side.heap.pop().expect("top() found a waiting vertex");
        let label = side.labels.get_mut(v).expect("a queued vertex is labelled");
        label.settled = true;
        self.work.lookups += 1;
        self.current = Some((which, v, label.dist));
        Ok(())
    }

    /// The best path found, or unreachable if none was.
    fn outcome_now(&self) -> WeightedOutcome {
        match self.best {
            Some((weight, meet)) => {
                let mut path = self.forward.path_from_root(meet);
                let back = self.backward.path_from_root(meet);
                path.extend(back.into_iter().rev().skip(1));
                WeightedOutcome::Found { path, weight }
            }
            None => WeightedOutcome::Unreachable,
        }
    }

    fn finish(&mut self, outcome: WeightedOutcome) -> Progress {
        self.outcome = Some(outcome);
        Progress::Done
    }

    /// Makes room in both sides' buffers for all that the next `step(_, budget)` can add, so
    /// that no hash map rehashes, nor heap copies itself, inside that step (see
    /// [`crate::Bfs::reserve`]). Call it between transactions.
    pub fn reserve(&mut self, budget: u64) {
        let n = discoveries_per_step(budget);
        for side in [&mut self.forward, &mut self.backward] {
            side.labels.reserve(n);
            side.heap.reserve(n);
        }
        self.scratch.reserve(n.min(1 << 16));
    }

    /// The work spent so far.
    pub fn work(&self) -> Work {
        self.work
    }

    /// Runs the search to completion in one go (tests and in-memory sources).
    pub fn run<S: NeighborSource + ?Sized>(mut self, src: &S) -> (WeightedOutcome, Work) {
        while self.step(src, u64::MAX) == Progress::Suspended {}
        self.into_outcome()
    }

    /// The outcome and the work spent; panics if the search has not finished.
    pub fn into_outcome(self) -> (WeightedOutcome, Work) {
        (
            self.outcome.expect("weighted path has not finished"),
            self.work,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AdjacencyGraph, ArcAttrs};

    fn arc(s: u64, d: u64, weight: f32) -> (u64, u64, ArcAttrs) {
        (s, d, ArcAttrs { label: 0, weight })
    }

    #[test]
    fn prefers_the_lighter_longer_path_and_is_the_same_in_any_budget() {
        // 1 → 2 → 3 costs 10 + 10; 1 → 4 → 5 → 6 → 3 costs 1 + 1 + 1 + 1.
        let g = AdjacencyGraph::with_attrs(
            [],
            [
                arc(1, 2, 10.0),
                arc(2, 3, 10.0),
                arc(1, 4, 1.0),
                arc(4, 5, 1.0),
                arc(5, 6, 1.0),
                arc(6, 3, 1.0),
            ],
        );
        for budget in [1, 2, 3, 7, u64::MAX] {
            let mut search = WeightedPath::new(
                WeightedQuery {
                    source: 1,
                    target: 3,
                    dir: Direction::Out,
                },
                [None, Some(4), Some(100)][budget as usize % 3],
            );
            loop {
                search.reserve(budget);
                if search.step(&g, budget) == Progress::Done {
                    break;
                }
            }
            let (outcome, _) = search.into_outcome();
            assert_eq!(
                outcome,
                WeightedOutcome::Found {
                    path: vec![1, 4, 5, 6, 3],
                    weight: 4.0
                },
                "budget {budget}"
            );
        }
        let back = WeightedQuery {
            source: 3,
            target: 1,
            dir: Direction::Out,
        };
        assert_eq!(
            WeightedPath::new(back, None).run(&g).0,
            WeightedOutcome::Unreachable
        );
    }
}
