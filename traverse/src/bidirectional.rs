use crate::{
    Direction, Ends, ListCursor, Neighbor, NeighborSource, Progress, Work, check_ends,
    discoveries_per_step, read_page,
};
use hashbrown::HashMap;

/// What a [`ShortestPath`] should compute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathQuery {
    pub source: u64,
    pub target: u64,
    /// Direction of the path from source to target.
    pub dir: Direction,
    /// Longest path (in hops) worth finding; `None` for no limit.
    pub max_depth: Option<u32>,
}

/// The answer of a finished [`ShortestPath`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathOutcome {
    /// A shortest path, source first and target last.
    Found(Vec<u64>),
    /// One search ran out of vertices: no path exists.
    Unreachable,
    /// No path of at most `max_depth` hops exists (a longer one may).
    BeyondMaxDepth,
    UnknownSource,
    UnknownTarget,
}

/// One half of the bidirectional search.
#[derive(Debug, Default)]
struct Side {
    /// Parent of every vertex this side reached (its root maps to itself).
    parents: HashMap<u64, u64>,
    frontier: Vec<u64>,
    next: Vec<u64>,
    cursor: usize,
    /// Where reading `frontier[cursor]`'s neighbors continues, once begun.
    list: Option<ListCursor>,
    /// Levels completed: every vertex within this distance of the root has been found.
    depth: u32,
    /// Sum of the degrees of `frontier` (the arcs its expansion will read) and of `next`.
    frontier_degree: u64,
    next_degree: u64,
}

impl Side {
    fn rooted_at(root: u64, degree: u64) -> Self {
        let mut side = Side {
            frontier: vec![root],
            frontier_degree: degree,
            ..Side::default()
        };
        side.parents.insert(root, root);
        side
    }

    /// The path from this side's root to `v`, root first.
    fn path_from_root(&self, mut v: u64) -> Vec<u64> {
        let mut path = vec![v];
        while self.parents[&v] != v {
            v = self.parents[&v];
            path.push(v);
        }
        path.reverse();
        path
    }

    fn advance_level(&mut self) {
        self.frontier.clear();
        std::mem::swap(&mut self.frontier, &mut self.next);
        self.frontier_degree = std::mem::take(&mut self.next_degree);
        self.cursor = 0;
        self.depth += 1;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Forward,
    Backward,
}

/// Balanced bidirectional BFS, resumable between transactions.
///
/// Grows one whole level at a time on the side whose frontier has the smaller degree sum (the
/// cheaper expansion), not in strict alternation: on power-law graphs this avoids expanding a
/// hub-heavy frontier when the other side is cheap. The first meeting is a shortest path: before
/// a level of side A is grown, the two visited sets are disjoint, so the distance exceeds
/// `depth_A + depth_B`; a vertex found at `depth_A + 1` that the other side knows closes a path
/// of exactly `depth_A + 1 + depth_B`.
#[derive(Debug)]
pub struct ShortestPath {
    query: PathQuery,
    forward: Side,
    backward: Side,
    /// The side whose level is being grown; `None` at a level boundary.
    growing: Option<Which>,
    started: bool,
    outcome: Option<PathOutcome>,
    work: Work,
    scratch: Vec<Neighbor>,
}

impl ShortestPath {
    pub fn new(query: PathQuery) -> Self {
        Self {
            query,
            forward: Side::default(),
            backward: Side::default(),
            growing: None,
            started: false,
            outcome: None,
            work: Work::default(),
            scratch: Vec::new(),
        }
    }

    /// Advances the search until it finishes or `budget` more work units have been spent.
    /// A hub's neighbor list is read in pages that fit the budget, so one step's work stays
    /// near `budget` whatever the degrees; at least one arc or vertex is read per call, so
    /// progress never stalls.
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
            let which = match self.growing {
                Some(which) => which,
                None => match self.choose_side() {
                    Ok(which) => which,
                    Err(outcome) => return self.finish(outcome),
                },
            };
            if self.work.units() >= limit {
                return Progress::Suspended;
            }
            let (side, other, dir) = match which {
                Which::Forward => (&mut self.forward, &self.backward, self.query.dir),
                Which::Backward => (&mut self.backward, &self.forward, self.query.dir.reverse()),
            };
            let v = side.frontier[side.cursor];
            // Each new vertex costs a degree lookup as well as its arc: pages of half the room.
            let room = limit.saturating_sub(self.work.units()).div_ceil(2);
            let mut page = std::mem::take(&mut self.scratch);
            if read_page(src, v, dir, &mut side.list, &mut self.work, room, &mut page) {
                side.cursor += 1;
            }
            for &Neighbor { id: w, .. } in &page {
                if side.parents.contains_key(&w) {
                    continue;
                }
                side.parents.insert(w, v);
                if other.parents.contains_key(&w) {
                    self.outcome = Some(PathOutcome::Found(self.path_through(w)));
                    return Progress::Done;
                }
                side.next.push(w);
                side.next_degree += src.degree(w, dir);
                self.work.lookups += 1;
            }
            self.scratch = page;
            if side.cursor == side.frontier.len() {
                side.advance_level();
                self.growing = None;
            } else {
                self.growing = Some(which);
            }
        }
    }

    /// Checks both endpoints and seeds the two sides; returns an outcome if the search is
    /// already decided.
    fn start<S: NeighborSource + ?Sized>(&mut self, src: &S) -> Option<PathOutcome> {
        let PathQuery {
            source,
            target,
            dir,
            ..
        } = self.query;
        self.work.lookups += 2;
        if let Some(ends) = check_ends(src, source, target) {
            return Some(match ends {
                Ends::UnknownSource => PathOutcome::UnknownSource,
                Ends::UnknownTarget => PathOutcome::UnknownTarget,
                Ends::Same => PathOutcome::Found(vec![source]),
                Ends::Unreachable => PathOutcome::Unreachable,
            });
        }
        self.work.lookups += 2;
        self.forward = Side::rooted_at(source, src.degree(source, dir));
        self.backward = Side::rooted_at(target, src.degree(target, dir.reverse()));
        None
    }

    /// At a level boundary: stops if no shorter path can exist, else picks the cheaper side.
    fn choose_side(&mut self) -> Result<Which, PathOutcome> {
        if self.forward.frontier.is_empty() || self.backward.frontier.is_empty() {
            return Err(PathOutcome::Unreachable);
        }
        let explored = self.forward.depth + self.backward.depth;
        if self.query.max_depth.is_some_and(|max| explored >= max) {
            return Err(PathOutcome::BeyondMaxDepth);
        }
        let cost = |side: &Side| (side.frontier_degree, side.frontier.len());
        let which = if cost(&self.backward) < cost(&self.forward) {
            Which::Backward
        } else {
            Which::Forward
        };
        self.growing = Some(which);
        Ok(which)
    }

    /// The path source → … → `meet` → … → target.
    fn path_through(&self, meet: u64) -> Vec<u64> {
        let mut path = self.forward.path_from_root(meet);
        let mut back = self.backward.path_from_root(meet);
        back.pop(); // `meet` is already the last vertex of `path`
        path.extend(back.into_iter().rev());
        path
    }

    fn finish(&mut self, outcome: PathOutcome) -> Progress {
        self.outcome = Some(outcome);
        Progress::Done
    }

    /// Makes room in both sides' buffers for all that the next `step(_, budget)` can add, so
    /// that no hash map rehashes, nor vector copies itself, inside that step (see
    /// [`crate::Bfs::reserve`]). Call it between transactions.
    pub fn reserve(&mut self, budget: u64) {
        let n = discoveries_per_step(budget);
        for side in [&mut self.forward, &mut self.backward] {
            side.parents.reserve(n);
            side.frontier.reserve(n);
            side.next.reserve(n);
        }
    }

    /// The work spent so far.
    pub fn work(&self) -> Work {
        self.work
    }

    /// Runs the search to completion in one go (tests and in-memory sources).
    pub fn run<S: NeighborSource + ?Sized>(mut self, src: &S) -> (PathOutcome, Work) {
        while self.step(src, u64::MAX) == Progress::Suspended {}
        self.into_outcome()
    }

    /// The outcome and the work spent; panics if the search has not finished.
    pub fn into_outcome(self) -> (PathOutcome, Work) {
        (
            self.outcome.expect("shortest path has not finished"),
            self.work,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AdjacencyGraph;

    fn capacities(sp: &ShortestPath) -> Vec<usize> {
        [&sp.forward, &sp.backward]
            .into_iter()
            .flat_map(|side| {
                let mut levels = [side.frontier.capacity(), side.next.capacity()];
                levels.sort_unstable();
                [levels[0], levels[1], side.parents.capacity()]
            })
            .collect()
    }

    #[test]
    fn after_reserve_a_step_grows_no_buffer() {
        // Two hubs of 3,000 leaves, joined only through leaf 1_000 → 2 and 2 → the target side.
        let mut arcs: Vec<(u64, u64)> = (0..3000).map(|i| (7, 1_000 + i)).collect();
        arcs.extend((0..3000).map(|i| (50_000 + i, 9)));
        arcs.extend([(3_999, 2), (2, 50_000)]);
        let g = AdjacencyGraph::new([], &arcs);
        for budget in [1, 40, 1000] {
            let mut sp = ShortestPath::new(PathQuery {
                source: 7,
                target: 9,
                dir: Direction::Both,
                max_depth: None,
            });
            // The first step seeds both sides.
            assert_eq!(sp.step(&g, 1), Progress::Suspended);
            loop {
                sp.reserve(budget);
                let before = capacities(&sp);
                if sp.step(&g, budget) == Progress::Done {
                    break;
                }
                assert_eq!(capacities(&sp), before, "budget {budget}");
            }
            let (outcome, _) = sp.into_outcome();
            assert_eq!(outcome, PathOutcome::Found(vec![7, 3_999, 2, 50_000, 9]));
        }
    }
}
