use crate::parents::{Half, Parents, Vertex};
use crate::rows::{enters, row_len, span, span_labels};
use crate::{
    ArcLabels, DenseSource, Direction, Ends, LabelColumn, ListCursor, Neighbor, NeighborSource,
    Progress, Work, check_ends, discoveries_per_step, read_page,
};

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

/// How a [`ShortestPath`] names the vertices it reaches and reads their arcs: by id through any
/// [`NeighborSource`] ([`ById`]), or by slot through a [`DenseSource`] ([`BySlot`]).
trait Space {
    /// A vertex as the search keeps it.
    type V: Vertex;
    /// Every vertex as the search keeps it is below this (ids: 0, unbounded).
    fn bound(&self) -> usize;
    /// Checks both endpoints: an outcome if the search is decided before it starts.
    fn ends(&self, source: u64, target: u64) -> Option<Ends>;
    /// `v`, which exists, as the search keeps it; `None` if it has no arcs at all.
    fn root(&self, v: u64) -> Option<Self::V>;
    fn id(&self, v: Self::V) -> u64;
    /// The arcs expanding `v` in `dir` reads.
    fn degree(&self, v: Self::V, dir: Direction) -> u64;
    /// Reads the next page (at most `room` arcs, at least 1) of `v`'s list and counts it as
    /// [`read_page`] does; returns whether the list is done, and the neighbors the source's
    /// filter keeps, in two parts (in `buffers` when they had to be copied).
    fn page<'s>(
        &'s self,
        v: Self::V,
        dir: Direction,
        list: &mut Option<ListCursor>,
        work: &mut Work,
        room: u64,
        buffers: &'s mut Buffers<Self::V>,
    ) -> (bool, [&'s [Self::V]; 2]);
}

/// Where pages are kept when they are not read in place.
#[derive(Debug, Default)]
struct Buffers<V> {
    page: Vec<V>,
    /// A page as a [`NeighborSource`] hands it out.
    neighbors: Vec<Neighbor>,
}

/// Vertices by id, through any [`NeighborSource`].
struct ById<'a, S: ?Sized> {
    src: &'a S,
}

impl<S: NeighborSource + ?Sized> Space for ById<'_, S> {
    type V = u64;

    fn bound(&self) -> usize {
        0
    }

    fn ends(&self, source: u64, target: u64) -> Option<Ends> {
        check_ends(self.src, source, target)
    }

    fn root(&self, v: u64) -> Option<u64> {
        Some(v)
    }

    fn id(&self, v: u64) -> u64 {
        v
    }

    fn degree(&self, v: u64, dir: Direction) -> u64 {
        self.src.degree(v, dir)
    }

    fn page<'s>(
        &'s self,
        v: u64,
        dir: Direction,
        list: &mut Option<ListCursor>,
        work: &mut Work,
        room: u64,
        buffers: &'s mut Buffers<u64>,
    ) -> (bool, [&'s [u64]; 2]) {
        let Buffers { page, neighbors } = buffers;
        let done = read_page(self.src, v, dir, list, work, room, neighbors);
        page.clear();
        page.extend(neighbors.iter().map(|n| n.id));
        (done, [page, &[]])
    }
}

/// Vertices by slot, through a [`DenseSource`]. This spares every arc read the lookup of its
/// end's id, and every discovered vertex the lookup of its slot, which on a large graph are
/// cache misses: on the DBLP-sized graph the module's path searches take 0.50–0.68 of their
/// time by id this way (median per pair, `results/path-slots/`). A list's cursor counts the arcs read across both
/// of its rows in `next`.
struct BySlot<'a, S: ?Sized> {
    src: &'a S,
}

impl<S: DenseSource + ?Sized> Space for BySlot<'_, S> {
    type V = u32;

    fn bound(&self) -> usize {
        self.src.slots()
    }

    fn ends(&self, source: u64, target: u64) -> Option<Ends> {
        check_ends(self.src, source, target)
    }

    /// A vertex without a slot has no arcs (see [`DenseSource`]).
    fn root(&self, v: u64) -> Option<u32> {
        self.src.slot(v)
    }

    fn id(&self, v: u32) -> u64 {
        self.src.vertex(v)
    }

    #[inline(always)]
    fn degree(&self, v: u32, dir: Direction) -> u64 {
        row_len(self.src.rows(v, dir))
    }

    /// An unfiltered page is read in place.
    fn page<'s>(
        &'s self,
        v: u32,
        dir: Direction,
        list: &mut Option<ListCursor>,
        work: &mut Work,
        room: u64,
        buffers: &'s mut Buffers<u32>,
    ) -> (bool, [&'s [u32]; 2]) {
        let src = self.src;
        let read = match list {
            Some(cursor) => cursor.next as usize,
            None => {
                work.vertices_expanded += 1;
                0
            }
        };
        let room = usize::try_from(room.max(1)).unwrap_or(usize::MAX);
        let rows = src.rows(v, dir);
        let (parts, end) = span(rows, read, room);
        let filter = src.filter();
        let done = end as u64 == row_len(rows);
        *list = (!done).then_some(ListCursor {
            incoming: false,
            next: end as u64,
            span: 0,
        });
        if filter.is_all() {
            work.arcs_scanned += (end - read) as u64;
            return (done, parts);
        }
        let page = &mut buffers.page;
        page.clear();
        let labels = span_labels(src.labels(v, dir), rows, read, room);
        for (part, labels) in parts.into_iter().zip(labels) {
            // One loop per label column, so that the loop tests no variant per arc.
            match labels {
                ArcLabels::Narrow(l) => keep(src, part, |i| l.kept(i, filter), page),
                ArcLabels::Wide(l) => keep(src, part, |i| l.kept(i, filter), page),
            }
        }
        work.arcs_scanned += page.len() as u64;
        (done, [page, &[]])
    }
}

/// Appends the slots of `part` whose arcs pass `label_kept` (given the arc's index in `part`)
/// and that the source's filter lets a search enter.
#[inline]
fn keep<S: DenseSource + ?Sized>(
    src: &S,
    part: &[u32],
    label_kept: impl Fn(usize) -> bool,
    page: &mut Vec<u32>,
) {
    let filter = src.filter();
    page.extend(
        (part.iter().enumerate())
            .filter(|&(i, &w)| label_kept(i) && enters(src, filter, w))
            .map(|(_, &w)| w),
    );
}

/// One half of the bidirectional search (the vertices it reached are in the search's parents).
#[derive(Debug, Default)]
struct Side<V: Vertex> {
    frontier: Vec<V>,
    next: Vec<V>,
    cursor: usize,
    /// Where reading `frontier[cursor]`'s neighbors continues, once begun.
    list: Option<ListCursor>,
    /// Levels completed: every vertex within this distance of the root has been found.
    depth: u32,
    /// Sum of the degrees of `frontier` (the arcs its expansion will read) and of `next`.
    frontier_degree: u64,
    next_degree: u64,
}

impl<V: Vertex> Side<V> {
    /// A side grown from `root` (whose parent the caller records).
    fn rooted_at(root: V, degree: u64) -> Self {
        Side {
            frontier: vec![root],
            frontier_degree: degree,
            ..Side::default()
        }
    }

    fn advance_level(&mut self) {
        self.frontier.clear();
        std::mem::swap(&mut self.frontier, &mut self.next);
        self.frontier_degree = std::mem::take(&mut self.next_degree);
        self.cursor = 0;
        self.depth += 1;
    }
}

/// Balanced bidirectional BFS, resumable between transactions.
///
/// Grows one whole level at a time on the side whose frontier has the smaller degree sum (the
/// cheaper expansion), not in strict alternation: on power-law graphs this avoids expanding a
/// hub-heavy frontier when the other side is cheap. The first meeting is a shortest path: before
/// a level of side A is grown, the two visited sets are disjoint, so the distance exceeds
/// `depth_A + depth_B`; a vertex found at `depth_A + 1` that the other side knows closes a path
/// of exactly `depth_A + 1 + depth_B`.
///
/// `ShortestPath` ([`new`](ShortestPath::new)) reads any [`NeighborSource`] by vertex id;
/// `ShortestPath<u32>` ([`over_slots`](ShortestPath::over_slots)) runs the same search over the
/// slots of a [`DenseSource`], which is faster in memory (see `BySlot`) and keeps both sides'
/// parents in an array by slot instead of a hash map (`parents.rs`).
#[derive(Debug)]
pub struct ShortestPath<V: Vertex = u64> {
    query: PathQuery,
    forward: Side<V>,
    backward: Side<V>,
    /// Parent of every vertex either side reached (a root is its own parent), and its side.
    parents: V::Parents,
    /// The side whose level is being grown; `None` at a level boundary.
    growing: Option<Half>,
    started: bool,
    outcome: Option<PathOutcome>,
    work: Work,
    buffers: Buffers<V>,
}

impl ShortestPath {
    /// A search by vertex id.
    pub fn new(query: PathQuery) -> Self {
        Self::with_query(query)
    }

    /// Advances the search until it finishes or `budget` more work units have been spent.
    /// A hub's neighbor list is read in pages that fit the budget, so one step's work stays
    /// near `budget` whatever the degrees; at least one arc or vertex is read per call, so
    /// progress never stalls.
    pub fn step<S: NeighborSource + ?Sized>(&mut self, src: &S, budget: u64) -> Progress {
        self.advance(&ById { src }, budget)
    }

    /// Runs the search to completion in one go (tests and in-memory sources).
    pub fn run<S: NeighborSource + ?Sized>(mut self, src: &S) -> (PathOutcome, Work) {
        while self.step(src, u64::MAX) == Progress::Suspended {}
        self.into_outcome()
    }
}

impl ShortestPath<u32> {
    /// The same search over the slots of a [`DenseSource`].
    pub fn over_slots(query: PathQuery) -> Self {
        Self::with_query(query)
    }

    /// As [`ShortestPath::step`]. The source must not change while the search runs.
    pub fn step<S: DenseSource + ?Sized>(&mut self, src: &S, budget: u64) -> Progress {
        self.advance(&BySlot { src }, budget)
    }

    /// Runs the search to completion in one go (tests and benchmarks).
    pub fn run<S: DenseSource + ?Sized>(mut self, src: &S) -> (PathOutcome, Work) {
        while self.step(src, u64::MAX) == Progress::Suspended {}
        self.into_outcome()
    }
}

impl<V: Vertex> ShortestPath<V> {
    fn with_query(query: PathQuery) -> Self {
        Self {
            query,
            forward: Side::default(),
            backward: Side::default(),
            parents: V::Parents::default(),
            growing: None,
            started: false,
            outcome: None,
            work: Work::default(),
            buffers: Buffers::default(),
        }
    }

    fn advance<Sp: Space<V = V>>(&mut self, space: &Sp, budget: u64) -> Progress {
        if self.outcome.is_some() {
            return Progress::Done;
        }
        let limit = self.work.units().saturating_add(budget.max(1));
        if !self.started {
            self.started = true;
            if let Some(outcome) = self.start(space) {
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
            let (side, dir) = match which {
                Half::Forward => (&mut self.forward, self.query.dir),
                Half::Backward => (&mut self.backward, self.query.dir.reverse()),
            };
            let v = side.frontier[side.cursor];
            // Each new vertex costs a degree lookup as well as its arc: pages of half the room.
            let room = limit.saturating_sub(self.work.units()).div_ceil(2);
            let buffers = &mut self.buffers;
            let (done, page) = space.page(v, dir, &mut side.list, &mut self.work, room, buffers);
            if done {
                side.cursor += 1;
            }
            let mut meet = None;
            for &w in page.into_iter().flatten() {
                match self.parents.insert(w, v, which) {
                    None => {}
                    Some(known) if known == which => continue,
                    Some(_) => {
                        meet = Some(w);
                        break;
                    }
                }
                side.next.push(w);
                side.next_degree += space.degree(w, dir);
                self.work.lookups += 1;
            }
            if let Some(w) = meet {
                let (f, b) = match which {
                    Half::Forward => (v, w),
                    Half::Backward => (w, v),
                };
                let path = self.path_through(space, f, b);
                return self.finish(PathOutcome::Found(path));
            }
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
    fn start<Sp: Space<V = V>>(&mut self, space: &Sp) -> Option<PathOutcome> {
        let PathQuery {
            source,
            target,
            dir,
            ..
        } = self.query;
        self.work.lookups += 2;
        if let Some(ends) = space.ends(source, target) {
            return Some(match ends {
                Ends::UnknownSource => PathOutcome::UnknownSource,
                Ends::UnknownTarget => PathOutcome::UnknownTarget,
                Ends::Same => PathOutcome::Found(vec![source]),
                Ends::Unreachable => PathOutcome::Unreachable,
            });
        }
        let (Some(source), Some(target)) = (space.root(source), space.root(target)) else {
            return Some(PathOutcome::Unreachable);
        };
        self.work.lookups += 2;
        self.parents = V::Parents::for_bound(space.bound());
        self.parents.insert(source, source, Half::Forward);
        self.parents.insert(target, target, Half::Backward);
        self.forward = Side::rooted_at(source, space.degree(source, dir));
        self.backward = Side::rooted_at(target, space.degree(target, dir.reverse()));
        None
    }

    /// At a level boundary: stops if no shorter path can exist, else picks the cheaper side.
    fn choose_side(&mut self) -> Result<Half, PathOutcome> {
        if self.forward.frontier.is_empty() || self.backward.frontier.is_empty() {
            return Err(PathOutcome::Unreachable);
        }
        let explored = self.forward.depth + self.backward.depth;
        if self.query.max_depth.is_some_and(|max| explored >= max) {
            return Err(PathOutcome::BeyondMaxDepth);
        }
        let cost = |side: &Side<V>| (side.frontier_degree, side.frontier.len());
        let which = if cost(&self.backward) < cost(&self.forward) {
            Half::Backward
        } else {
            Half::Forward
        };
        self.growing = Some(which);
        Ok(which)
    }

    /// The path source → … → `f` → `b` → … → target, as ids, where the forward side reached
    /// `f` and the backward side `b`.
    fn path_through<Sp: Space<V = V>>(&self, space: &Sp, f: V, b: V) -> Vec<u64> {
        let mut path = self.path_to_root(f);
        path.reverse();
        path.extend(self.path_to_root(b));
        path.into_iter().map(|v| space.id(v)).collect()
    }

    /// `v`, its parent, and so on up to the root of the side that reached `v`.
    fn path_to_root(&self, mut v: V) -> Vec<V> {
        let mut path = vec![v];
        loop {
            let parent = self.parents.get(v).expect("a reached vertex has a parent");
            if parent == v {
                return path;
            }
            v = parent;
            path.push(v);
        }
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
        self.parents.reserve(n);
        for side in [&mut self.forward, &mut self.backward] {
            side.frontier.reserve(n);
            side.next.reserve(n);
        }
    }

    /// The work spent so far.
    pub fn work(&self) -> Work {
        self.work
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
    use crate::{AdjacencyGraph, Search};

    fn capacities<V: Vertex>(sp: &ShortestPath<V>) -> Vec<usize> {
        [&sp.forward, &sp.backward]
            .into_iter()
            .flat_map(|side| {
                let mut levels = [side.frontier.capacity(), side.next.capacity()];
                levels.sort_unstable();
                levels
            })
            .chain([sp.parents.capacity()])
            .collect()
    }

    /// Steps `sp` to its end on `g`, reserving before each step, and checks that no step grows
    /// a buffer.
    fn run_reserved<V: Vertex>(
        mut sp: ShortestPath<V>,
        g: &AdjacencyGraph,
        budget: u64,
    ) -> PathOutcome
    where
        ShortestPath<V>: Search<AdjacencyGraph, Outcome = PathOutcome>,
    {
        // The first step seeds both sides.
        assert_eq!(sp.step(g, 1), Progress::Suspended);
        loop {
            Search::reserve(&mut sp, budget);
            let before = capacities(&sp);
            if sp.step(g, budget) == Progress::Done {
                return sp.into_outcome().0;
            }
            assert_eq!(capacities(&sp), before, "budget {budget}");
        }
    }

    #[test]
    fn after_reserve_a_step_grows_no_buffer() {
        // Two hubs of 3,000 leaves, joined only through leaf 1_000 → 2 and 2 → the target side.
        let mut arcs: Vec<(u64, u64)> = (0..3000).map(|i| (7, 1_000 + i)).collect();
        arcs.extend((0..3000).map(|i| (50_000 + i, 9)));
        arcs.extend([(3_999, 2), (2, 50_000)]);
        let g = AdjacencyGraph::new([], &arcs);
        let q = PathQuery {
            source: 7,
            target: 9,
            dir: Direction::Both,
            max_depth: None,
        };
        let want = PathOutcome::Found(vec![7, 3_999, 2, 50_000, 9]);
        for budget in [1, 40, 1000] {
            let by_id = ShortestPath::new(q.clone());
            assert_eq!(run_reserved(by_id, &g, budget), want);
            let by_slot = ShortestPath::over_slots(q.clone());
            assert_eq!(run_reserved(by_slot, &g, budget), want);
        }
    }
}
