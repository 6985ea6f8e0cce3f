use crate::{
    Bfs, BfsOutcome, BfsQuery, Direction, ListCursor, Neighbor, NeighborSource, Progress, Visited,
    Work, discoveries_per_step, read_page,
};
use hashbrown::HashMap;

/// What a [`Dfs`] should compute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DfsQuery {
    pub start: u64,
    pub dir: Direction,
    /// Most hops from `start` to go; `None` for a full traversal.
    pub max_depth: Option<u32>,
    /// How many visited vertices to return, in preorder.
    pub collect_limit: usize,
}

/// The answer of a finished [`Dfs`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DfsOutcome {
    /// The start vertex does not exist.
    UnknownStart,
    Visited {
        /// How many vertices were reached, the start included.
        visited: u64,
        /// The first `collect_limit` vertices in preorder (the order of first discovery).
        vertices: Vec<u64>,
        /// The most hops from the start at which a vertex was first discovered.
        deepest: u32,
    },
    /// A depth-bounded search gave up before it had discovered every vertex within its bound:
    /// re-entering vertices reached again by shorter routes had cost `spent` units, more than
    /// [`REENTRY_LIMIT`] allows after `ball` units spent reading the ball (and running its
    /// unbounded DFS, when there was one).
    TooCostly { spent: u64, ball: u64 },
}

/// What a depth-bounded search may spend beyond reading its ball, in units of work: this many
/// times the ball's own cost plus [`REENTRY_ALLOWANCE`], and never more than
/// [`REENTRY_CEILING`]. Finding every vertex within `d` hops in DFS order can take up to `d`
/// entries per vertex: on a small-world graph with `d` far beyond its diameter that is about
/// `d` times the edges, minutes of work that the engine would end by exhausting the call's fuel
/// (about a minute of execution), taking the module instance with it. A clear error is better.
pub const REENTRY_LIMIT: u64 = 32;
/// See [`REENTRY_LIMIT`]: what any bounded search may spend, however small its ball.
pub const REENTRY_ALLOWANCE: u64 = 10_000_000;
/// See [`REENTRY_LIMIT`]: what no bounded search may spend, however large its ball.
pub const REENTRY_CEILING: u64 = 400_000_000;

/// A depth-bounded search first reads its ball (every vertex within `d` hops) with a BFS: the
/// search is done as soon as it has discovered that many vertices (the rest of its work could
/// only re-enter vertices), and what the ball cost bounds what the search may spend.
///
/// When the ball is everything the start reaches (the bound is beyond its eccentricity), an
/// unbounded DFS costs no more than the BFS did, and if it goes no deeper than the bound its
/// answer is the bounded one: no vertex is then cut off by the bound, and a vertex reached
/// again by a shorter route was finished before, so entering it again finds nothing new (when
/// a DFS finishes a vertex, everything reachable from it has been found). A bound given as a
/// safeguard (`max_depth` 1,000,000) so costs one unbounded DFS.
#[derive(Debug)]
enum Ball {
    /// Unbounded: no ball to read.
    None,
    Reading(Box<Bfs>),
    /// The ball is all the start reaches, of this many vertices, read with this work: its
    /// unbounded DFS.
    Unbounded(Box<Dfs>, u64, Work),
    /// Its size, the units spent before the bounded search began, and what that search may
    /// spend (see [`REENTRY_LIMIT`]).
    Read {
        vertices: u64,
        units: u64,
        cap: u64,
    },
}

impl Ball {
    fn read(vertices: u64, units: u64) -> Self {
        let cap = units
            .saturating_mul(REENTRY_LIMIT)
            .saturating_add(REENTRY_ALLOWANCE)
            .min(REENTRY_CEILING);
        Ball::Read {
            vertices,
            units,
            cap,
        }
    }
}

/// A vertex on the DFS stack: its distinct neighbors, once read, are `arena[start..]` up to the
/// next frame's `start`, and `arena[next]` is the next one to try.
#[derive(Debug, Clone, Copy)]
struct Frame {
    vertex: u64,
    depth: u32,
    start: usize,
    next: usize,
    /// Whether the whole neighbor list has been read (and sorted); until then the top frame's
    /// list is being read, page by page.
    listed: bool,
}

/// Which vertices were found, and for a depth-bounded search how close to the start each was
/// entered.
#[derive(Debug)]
enum Marks {
    Seen(Visited),
    /// Fewest hops at which each found vertex was entered.
    Entered(HashMap<u64, u32>),
}

/// Iterative depth-first search, resumable between transactions, over any [`NeighborSource`].
///
/// The rules (the textbook recursive DFS; `graph_reference::ReferenceGraph::dfs` is an
/// independent implementation of them):
/// - A vertex's neighbors are tried in ascending id order, each distinct neighbor once: the
///   whole list is read (in pages that fit the budget, across steps if it is long) and sorted
///   before the first is tried, so the answer does not depend on the order a source returns.
/// - Unbounded, a vertex is entered once, when first discovered.
/// - With `max_depth = Some(d)`, a vertex discovered at depth `d` is not entered, and a vertex
///   reached again at fewer hops than any time before is entered again from there (it is not
///   counted or listed again). So exactly the vertices within `d` hops are visited, whatever
///   the order in which the stack finds them; each vertex is entered at most `d` times. The
///   search stops as soon as it has discovered all of them (counted by a BFS first, see
///   [`Ball`]), and gives up ([`DfsOutcome::TooCostly`]) past [`REENTRY_LIMIT`].
///
/// The stack is a vector of frames over one arena of neighbor ids (no recursion: procedure
/// stacks are small). Neighbors that can never be entered (already found, or, bounded, already
/// entered at no more hops) are dropped as the list is read, which keeps the arena short.
///
/// Budget: a unit per arc read, vertex whose list is read, and lookup (the [`Work`]), and also
/// one per stacked neighbor tried, so that a step that walks back through many neighbors read in
/// earlier steps stays short; that last kind is not part of [`Work`].
#[derive(Debug)]
pub struct Dfs {
    query: DfsQuery,
    marks: Marks,
    frames: Vec<Frame>,
    arena: Vec<u64>,
    /// Where reading the top frame's list continues, once begun.
    list: Option<ListCursor>,
    visited: u64,
    vertices: Vec<u64>,
    deepest: u32,
    started: bool,
    /// As given to [`Dfs::new`], for the unbounded DFS of a bounded one's ball.
    id_bound: Option<u64>,
    ball: Ball,
    outcome: Option<DfsOutcome>,
    work: Work,
    scratch: Vec<Neighbor>,
}

/// What to do with a neighbor tried from a frame.
enum Enter {
    /// First discovery.
    New,
    /// Found before, now by fewer hops (bounded search only).
    Again,
    Skip,
}

impl Dfs {
    /// `id_bound`, when known (largest vertex id + 1), lets the visited set of an unbounded
    /// search be a dense bitset.
    pub fn new(query: DfsQuery, id_bound: Option<u64>) -> Self {
        let (marks, ball) = match query.max_depth {
            None => (Marks::Seen(Visited::new(id_bound)), Ball::None),
            Some(_) => {
                let bfs = Bfs::new(
                    BfsQuery {
                        start: query.start,
                        dir: query.dir,
                        max_depth: query.max_depth,
                        target: None,
                        collect_limit: 0,
                    },
                    id_bound,
                );
                (Marks::Entered(HashMap::new()), Ball::Reading(Box::new(bfs)))
            }
        };
        Self {
            query,
            marks,
            frames: Vec::new(),
            arena: Vec::new(),
            list: None,
            visited: 0,
            vertices: Vec::new(),
            deepest: 0,
            started: false,
            id_bound,
            ball,
            outcome: None,
            work: Work::default(),
            scratch: Vec::new(),
        }
    }

    /// Reads the ball with up to `budget` units (and runs the unbounded DFS, see [`Ball`]);
    /// `None` once that is done and the bounded search is to run, else what this step returns:
    /// a step that finishes a phase ends there, so that the next phase's buffers are reserved
    /// before it starts. Until the bounded search begins, its work is that of these phases.
    fn read_ball<S: NeighborSource + ?Sized>(&mut self, src: &S, budget: u64) -> Option<Progress> {
        let progress = match &mut self.ball {
            Ball::None | Ball::Read { .. } => return None,
            Ball::Reading(bfs) => {
                let progress = bfs.step(src, budget);
                self.work = bfs.work();
                progress
            }
            Ball::Unbounded(dfs, _, read) => {
                let progress = dfs.step(src, budget);
                self.work = *read;
                self.work += dfs.work();
                progress
            }
        };
        if progress == Progress::Suspended {
            return Some(Progress::Suspended);
        }
        let units = self.work.units();
        match std::mem::replace(&mut self.ball, Ball::None) {
            Ball::Reading(bfs) => match bfs.into_outcome().0 {
                BfsOutcome::UnknownStart => {
                    self.outcome = Some(DfsOutcome::UnknownStart);
                    return Some(Progress::Done);
                }
                BfsOutcome::Visited { levels, .. } => {
                    let vertices = levels.iter().sum();
                    let bound = self.query.max_depth.expect("a bounded search");
                    self.ball = if (levels.len() as u64) <= u64::from(bound) {
                        let unbounded = DfsQuery {
                            max_depth: None,
                            ..self.query.clone()
                        };
                        let dfs = Dfs::new(unbounded, self.id_bound);
                        Ball::Unbounded(Box::new(dfs), vertices, self.work)
                    } else {
                        Ball::read(vertices, units)
                    };
                }
            },
            Ball::Unbounded(dfs, vertices, _) => {
                let (outcome, _) = dfs.into_outcome();
                let max_depth = self.query.max_depth;
                if matches!(outcome, DfsOutcome::Visited { deepest, .. } if Some(deepest) <= max_depth)
                {
                    self.outcome = Some(outcome);
                    return Some(Progress::Done);
                }
                self.ball = Ball::read(vertices, units);
            }
            Ball::None | Ball::Read { .. } => unreachable!("a phase that had not ended"),
        }
        Some(Progress::Suspended)
    }

    /// Advances the search until it finishes or `budget` more units have been spent (see the
    /// type's documentation for what a unit is). Long lists are read in pages that fit the
    /// budget; at least one unit is spent per call, so progress never stalls.
    pub fn step<S: NeighborSource + ?Sized>(&mut self, src: &S, budget: u64) -> Progress {
        if self.outcome.is_some() {
            return Progress::Done;
        }
        if let Some(progress) = self.read_ball(src, budget.max(1)) {
            return progress;
        }
        let mut tried = 0u64;
        let limit = self.work.units().saturating_add(budget.max(1));
        if !self.started {
            self.started = true;
            self.work.lookups += 1;
            let start = self.query.start;
            if !src.contains(start) {
                self.outcome = Some(DfsOutcome::UnknownStart);
                return Progress::Done;
            }
            self.enter(start, 0, Enter::New);
        }
        loop {
            let spent = self.work.units().saturating_add(tried);
            if let Ball::Read {
                vertices,
                units,
                cap,
            } = self.ball
            {
                if self.visited == vertices {
                    return self.finish();
                }
                if spent - units > cap {
                    self.outcome = Some(DfsOutcome::TooCostly {
                        spent: spent - units,
                        ball: units,
                    });
                    return self.drop_search();
                }
            }
            let Some(top) = self.frames.last_mut() else {
                return self.finish();
            };
            if !top.listed {
                if spent >= limit {
                    return Progress::Suspended;
                }
                let (v, depth) = (top.vertex, top.depth);
                let mut page = std::mem::take(&mut self.scratch);
                let done = read_page(
                    src,
                    v,
                    self.query.dir,
                    &mut self.list,
                    &mut self.work,
                    limit - spent,
                    &mut page,
                );
                for &Neighbor { id: w, .. } in &page {
                    if !self.never_entered(w, depth + 1) {
                        self.arena.push(w);
                    }
                }
                self.scratch = page;
                if done {
                    let top = self.frames.last_mut().expect("the frame being read");
                    top.listed = true;
                    let list = &mut self.arena[top.start..];
                    list.sort_unstable();
                    let distinct = dedup_sorted(list);
                    self.arena.truncate(top.start + distinct);
                }
                continue;
            }
            if top.next == self.arena.len() {
                self.arena.truncate(top.start);
                self.frames.pop();
                continue;
            }
            if spent >= limit {
                return Progress::Suspended;
            }
            let w = self.arena[top.next];
            top.next += 1;
            tried += 1;
            let depth = top.depth + 1;
            let how = self.how_to_enter(w, depth);
            self.enter(w, depth, how);
        }
    }

    /// Whether `w`, reached at `depth`, can be skipped now and at any later time: marks only
    /// grow, and recorded depths only shrink.
    fn never_entered(&self, w: u64, depth: u32) -> bool {
        match &self.marks {
            Marks::Seen(seen) => seen.contains(w),
            Marks::Entered(entered) => entered.get(&w).is_some_and(|&d| d <= depth),
        }
    }

    fn how_to_enter(&self, w: u64, depth: u32) -> Enter {
        match &self.marks {
            Marks::Seen(seen) if seen.contains(w) => Enter::Skip,
            Marks::Entered(entered) => match entered.get(&w) {
                Some(&before) if before <= depth => Enter::Skip,
                Some(_) => Enter::Again,
                None => Enter::New,
            },
            Marks::Seen(_) => Enter::New,
        }
    }

    /// Records `w` at `depth` and stacks it, unless it is at the depth bound.
    fn enter(&mut self, w: u64, depth: u32, how: Enter) {
        match how {
            Enter::Skip => return,
            Enter::New => {
                self.visited += 1;
                self.deepest = self.deepest.max(depth);
                if self.vertices.len() < self.query.collect_limit {
                    self.vertices.push(w);
                }
            }
            Enter::Again => {}
        }
        match &mut self.marks {
            Marks::Seen(seen) => {
                seen.insert(w);
            }
            Marks::Entered(entered) => {
                entered.insert(w, depth);
            }
        }
        if self.query.max_depth != Some(depth) {
            let at = self.arena.len();
            self.frames.push(Frame {
                vertex: w,
                depth,
                start: at,
                next: at,
                listed: false,
            });
        }
    }

    fn finish(&mut self) -> Progress {
        self.outcome = Some(DfsOutcome::Visited {
            visited: self.visited,
            vertices: std::mem::take(&mut self.vertices),
            deepest: self.deepest,
        });
        self.drop_search()
    }

    /// Frees what only a search under way needs.
    fn drop_search(&mut self) -> Progress {
        self.arena = Vec::new();
        self.frames = Vec::new();
        self.marks = Marks::Entered(HashMap::new());
        Progress::Done
    }

    /// Makes room in every growing buffer for all that the next `step(_, budget)` can add (a
    /// step reads at most about `budget` arcs and stacks at most about `budget` frames), so
    /// that no buffer grows inside that step. Call it between transactions.
    pub fn reserve(&mut self, budget: u64) {
        match &mut self.ball {
            Ball::Reading(bfs) => return bfs.reserve(budget),
            Ball::Unbounded(dfs, _, _) => return dfs.reserve(budget),
            Ball::None | Ball::Read { .. } => {}
        }
        let n = discoveries_per_step(budget);
        self.frames.reserve(n);
        self.arena.reserve(n);
        self.scratch.reserve(n);
        match &mut self.marks {
            Marks::Seen(seen) => seen.reserve(n),
            Marks::Entered(entered) => entered.reserve(n),
        }
        let room = self.query.collect_limit.saturating_sub(self.vertices.len());
        self.vertices.reserve(room.min(n));
    }

    /// The work spent so far.
    pub fn work(&self) -> Work {
        self.work
    }

    /// Runs the search to completion in one go (tests and in-memory sources).
    pub fn run<S: NeighborSource + ?Sized>(mut self, src: &S) -> (DfsOutcome, Work) {
        while self.step(src, u64::MAX) == Progress::Suspended {}
        self.into_outcome()
    }

    /// The outcome and the work spent; panics if the search has not finished.
    pub fn into_outcome(self) -> (DfsOutcome, Work) {
        (self.outcome.expect("DFS has not finished"), self.work)
    }
}

/// Moves the distinct values of a sorted slice to its front; returns how many there are.
fn dedup_sorted(list: &mut [u64]) -> usize {
    let mut kept = 0;
    for i in 0..list.len() {
        if kept == 0 || list[i] != list[kept - 1] {
            list[kept] = list[i];
            kept += 1;
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AdjacencyGraph;

    fn capacities(dfs: &Dfs) -> [usize; 5] {
        let marks = match &dfs.marks {
            Marks::Seen(seen) => seen.capacity(),
            Marks::Entered(entered) => entered.capacity(),
        };
        [
            dfs.frames.capacity(),
            dfs.arena.capacity(),
            dfs.scratch.capacity(),
            marks,
            dfs.vertices.capacity(),
        ]
    }

    #[test]
    fn after_reserve_a_step_grows_no_buffer() {
        // A hub with 3,000 leaves, each leaf with 2 more, and a long path back to the hub.
        let mut arcs: Vec<(u64, u64)> = (0..3000).map(|i| (7, 1_000 + i)).collect();
        arcs.extend((0..6000).map(|i| (1_000 + i / 2, 100_000 + i)));
        arcs.extend((0..500).map(|i| (100_000 + i, 100_001 + i)));
        arcs.push((100_500, 7));
        let g = AdjacencyGraph::new([], &arcs);
        for max_depth in [None, Some(3), Some(400)] {
            for budget in [1, 40, 1000] {
                let query = DfsQuery {
                    start: 7,
                    dir: Direction::Both,
                    max_depth,
                    collect_limit: 5_000,
                };
                let mut dfs = Dfs::new(query, None);
                let mut steps = 0;
                loop {
                    dfs.reserve(budget);
                    let before = capacities(&dfs);
                    if dfs.step(&g, budget) == Progress::Done {
                        break;
                    }
                    assert_eq!(capacities(&dfs), before, "{max_depth:?} budget {budget}");
                    steps += 1;
                }
                assert!(steps > 0);
            }
        }
    }

    #[test]
    fn dedup_sorted_keeps_each_value_once() {
        let mut v = [1, 1, 2, 5, 5, 5, 9];
        assert_eq!(dedup_sorted(&mut v), 4);
        assert_eq!(v[..4], [1, 2, 5, 9]);
        assert_eq!(dedup_sorted(&mut []), 0);
    }
}
