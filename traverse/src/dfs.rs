use crate::{
    Direction, ListCursor, Neighbor, NeighborSource, Progress, Visited, Work, discoveries_per_step,
    read_page,
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
///   the order in which the stack finds them; each vertex is entered at most `d` times.
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
        let marks = match query.max_depth {
            None => Marks::Seen(Visited::new(id_bound)),
            Some(_) => Marks::Entered(HashMap::new()),
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
            outcome: None,
            work: Work::default(),
            scratch: Vec::new(),
        }
    }

    /// Advances the search until it finishes or `budget` more units have been spent (see the
    /// type's documentation for what a unit is). Long lists are read in pages that fit the
    /// budget; at least one unit is spent per call, so progress never stalls.
    pub fn step<S: NeighborSource + ?Sized>(&mut self, src: &S, budget: u64) -> Progress {
        if self.outcome.is_some() {
            return Progress::Done;
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
        self.arena = Vec::new();
        self.frames = Vec::new();
        Progress::Done
    }

    /// Makes room in every growing buffer for all that the next `step(_, budget)` can add (a
    /// step reads at most about `budget` arcs and stacks at most about `budget` frames), so
    /// that no buffer grows inside that step. Call it between transactions.
    pub fn reserve(&mut self, budget: u64) {
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
