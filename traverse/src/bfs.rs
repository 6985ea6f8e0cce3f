use crate::{
    Direction, ListCursor, Neighbor, NeighborSource, Progress, Visited, Work, discoveries_per_step,
    read_page,
};
use hashbrown::HashMap;

/// What a [`Bfs`] should compute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BfsQuery {
    pub start: u64,
    pub dir: Direction,
    /// Deepest level to reach; `None` for a full traversal.
    pub max_depth: Option<u32>,
    /// Stop as soon as this vertex is reached and return the path to it (unidirectional
    /// shortest path, as the Stage-1 baseline does it).
    pub target: Option<u64>,
    /// How many visited vertices to return, in BFS order.
    pub collect_limit: usize,
}

/// The answer of a finished [`Bfs`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BfsOutcome {
    /// The start vertex does not exist.
    UnknownStart,
    /// The traversal ran to completion (or to `max_depth`, or to the target).
    Visited {
        /// `levels[d]` is the number of vertices first reached at depth `d`; `levels[0] == 1`.
        levels: Vec<u64>,
        /// The first `collect_limit` visited vertices in BFS order.
        vertices: Vec<u64>,
        /// With a target: the path from start to target, if it was reached.
        path: Option<Vec<u64>>,
    },
}

/// Level-synchronous breadth-first search, resumable between transactions.
#[derive(Debug)]
pub struct Bfs {
    query: BfsQuery,
    visited: Visited,
    /// Parent of each visited vertex; only kept when a target asks for a path.
    parents: Option<HashMap<u64, u64>>,
    frontier: Vec<u64>,
    next: Vec<u64>,
    cursor: usize,
    /// Where reading `frontier[cursor]`'s neighbors continues, once begun.
    list: Option<ListCursor>,
    levels: Vec<u64>,
    vertices: Vec<u64>,
    path: Option<Vec<u64>>,
    started: bool,
    outcome: Option<BfsOutcome>,
    work: Work,
    scratch: Vec<Neighbor>,
}

impl Bfs {
    /// `id_bound`, when known (largest vertex id + 1), lets the visited set be a dense bitset.
    pub fn new(query: BfsQuery, id_bound: Option<u64>) -> Self {
        let parents = query.target.map(|_| HashMap::new());
        Self {
            visited: Visited::new(id_bound),
            parents,
            frontier: Vec::new(),
            next: Vec::new(),
            cursor: 0,
            list: None,
            levels: Vec::new(),
            vertices: Vec::new(),
            path: None,
            started: false,
            outcome: None,
            work: Work::default(),
            scratch: Vec::new(),
            query,
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
            self.work.lookups += 1;
            if !src.contains(self.query.start) {
                self.outcome = Some(BfsOutcome::UnknownStart);
                return Progress::Done;
            }
            let start = self.query.start;
            self.discover(start, start);
            if self.query.target == Some(start) {
                self.path = Some(vec![start]);
                self.levels.push(1);
                return self.finish();
            }
        }
        loop {
            if self.cursor == self.frontier.len() {
                // Level boundary (the start vertex enters as level 0 the same way).
                if self.next.is_empty() {
                    return self.finish();
                }
                self.frontier.clear();
                std::mem::swap(&mut self.frontier, &mut self.next);
                self.cursor = 0;
                self.levels.push(self.frontier.len() as u64);
                let depth = self.levels.len() as u32 - 1;
                if self.query.max_depth.is_some_and(|max| depth >= max) {
                    return self.finish();
                }
                continue;
            }
            if self.work.units() >= limit {
                return Progress::Suspended;
            }
            let v = self.frontier[self.cursor];
            let room = limit.saturating_sub(self.work.units());
            let mut page = std::mem::take(&mut self.scratch);
            let (dir, list, work) = (self.query.dir, &mut self.list, &mut self.work);
            if read_page(src, v, dir, list, work, room, &mut page) {
                self.cursor += 1;
            }
            for &Neighbor { id: w, .. } in &page {
                if self.discover(w, v) && self.query.target == Some(w) {
                    self.path = Some(self.path_to(w));
                    self.scratch = page;
                    return self.finish_at_target();
                }
            }
            self.scratch = page;
        }
    }

    /// Records `w` (reached from `parent`) if it is new; returns whether it was.
    fn discover(&mut self, w: u64, parent: u64) -> bool {
        if !self.visited.insert(w) {
            return false;
        }
        if let Some(parents) = &mut self.parents {
            parents.insert(w, parent);
        }
        if self.vertices.len() < self.query.collect_limit {
            self.vertices.push(w);
        }
        self.next.push(w);
        true
    }

    fn path_to(&self, mut v: u64) -> Vec<u64> {
        let parents = self.parents.as_ref().expect("paths need parents");
        let mut path = vec![v];
        while v != self.query.start {
            v = parents[&v];
            path.push(v);
        }
        path.reverse();
        path
    }

    /// The target was reached mid-level: the last level counts what was found before stopping.
    fn finish_at_target(&mut self) -> Progress {
        self.levels.push(self.next.len() as u64);
        self.finish()
    }

    fn finish(&mut self) -> Progress {
        self.outcome = Some(BfsOutcome::Visited {
            levels: std::mem::take(&mut self.levels),
            vertices: std::mem::take(&mut self.vertices),
            path: self.path.take(),
        });
        Progress::Done
    }

    /// Makes room in every growing buffer for all that the next `step(_, budget)` can add, so
    /// that no buffer grows, and copies itself, inside that step: a LiveJournal-sized level
    /// holds millions of vertices, and doubling such a buffer took over 20 ms. Call it between
    /// transactions.
    pub fn reserve(&mut self, budget: u64) {
        let n = discoveries_per_step(budget);
        self.frontier.reserve(n);
        self.next.reserve(n);
        self.visited.reserve(n);
        if let Some(parents) = &mut self.parents {
            parents.reserve(n);
        }
        let room = self.query.collect_limit.saturating_sub(self.vertices.len());
        self.vertices.reserve(room.min(n));
    }

    /// The work spent so far.
    pub fn work(&self) -> Work {
        self.work
    }

    /// Runs the search to completion in one go (tests and in-memory sources).
    pub fn run<S: NeighborSource + ?Sized>(mut self, src: &S) -> (BfsOutcome, Work) {
        while self.step(src, u64::MAX) == Progress::Suspended {}
        self.into_outcome()
    }

    /// The outcome and the work spent; panics if the search has not finished.
    pub fn into_outcome(self) -> (BfsOutcome, Work) {
        (self.outcome.expect("BFS has not finished"), self.work)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AdjacencyGraph;

    /// Capacities of the buffers a step may grow (the two level buffers swap, so as a pair).
    fn capacities(bfs: &Bfs) -> ([usize; 2], usize, usize, usize) {
        let mut levels = [bfs.frontier.capacity(), bfs.next.capacity()];
        levels.sort_unstable();
        let parents = bfs.parents.as_ref().map_or(0, |p| p.capacity());
        (
            levels,
            parents,
            bfs.visited.capacity(),
            bfs.vertices.capacity(),
        )
    }

    #[test]
    fn after_reserve_a_step_grows_no_buffer() {
        // A hub with 3,000 leaves, each leaf with 2 more: levels of 1, 3,000 and 6,000.
        let mut arcs: Vec<(u64, u64)> = (0..3000).map(|i| (7, 1_000 + i)).collect();
        arcs.extend((0..6000).map(|i| (1_000 + i / 2, 100_000 + i)));
        let g = AdjacencyGraph::new([], &arcs);
        for (bound, target, collect) in [(None, None, 0), (Some(200_000), Some(105_999), 10_000)] {
            for budget in [1, 40, 1000] {
                let query = BfsQuery {
                    start: 7,
                    dir: Direction::Out,
                    max_depth: None,
                    target,
                    collect_limit: collect,
                };
                let mut bfs = Bfs::new(query, bound);
                let mut steps = 0;
                loop {
                    bfs.reserve(budget);
                    let before = capacities(&bfs);
                    let progress = bfs.step(&g, budget);
                    if progress == Progress::Done {
                        break;
                    }
                    assert_eq!(capacities(&bfs), before, "budget {budget}, step {steps}");
                    steps += 1;
                }
                assert!(steps > 0);
            }
        }
    }
}
