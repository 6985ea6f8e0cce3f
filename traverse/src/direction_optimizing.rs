use crate::rows::{enters, row_len, span, span_labels};
use crate::{
    ArcLabels, BfsOutcome, BfsQuery, DenseSource, Direction, LabelColumn, Progress, Work,
    discoveries_per_step,
};

/// When a [`DirectionOptimizingBfs`] switches between top-down and bottom-up levels: the
/// heuristics of Beamer, Asanović and Patterson ("Direction-Optimizing Breadth-First Search",
/// SC 2012), as the GAP benchmark suite applies them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Switching {
    /// A top-down level is followed by a bottom-up one once the frontier's arcs (`m_f`, the
    /// work of expanding it top-down) exceed the arcs of the unexplored vertices (`m_u`, the
    /// most a bottom-up level can read) divided by `alpha`. 0: never bottom-up.
    pub alpha: u64,
    /// Bottom-up levels go on while the frontier grows or holds more than `slots / beta`
    /// vertices; then the search goes back top-down. 0: back as soon as the frontier shrinks.
    pub beta: u64,
}

impl Switching {
    /// Every level top-down (the same search as [`crate::Bfs`], on slots).
    pub const TOP_DOWN: Switching = Switching { alpha: 0, beta: 0 };
}

impl Default for Switching {
    /// GAP's defaults, alpha 15 and beta 18, which measurements put in a flat optimum (the
    /// `switching` example: full undirected BFS from 8 fixed starts on the Chung-Lu stand-ins,
    /// median CPU time of the best of 5 runs):
    /// - LiveJournal-shaped, 1M vertices and 8.7M edges: alpha 4, 8 and 15 switch at the same
    ///   levels and read 2.4M of the 17.4M arcs, 62-75 ms against 481 ms for top-down on slots;
    ///   alpha 30 reads twice the arcs.
    /// - DBLP-sized: alpha 4 to 15 take 18-22 ms (0.76M-1.16M arcs read) against 94 ms
    ///   top-down; alpha 2 and 30 take 23-24 ms.
    /// - beta from 6 to 50 changes the arcs read by less than 3% on all three graphs.
    fn default() -> Self {
        Self {
            alpha: 15,
            beta: 18,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Each frontier vertex reads its arcs and claims the unvisited vertices it finds.
    TopDown,
    /// Each unvisited vertex reads its arcs backwards until it finds a parent in the frontier.
    BottomUp,
}

/// Direction-optimizing breadth-first search over a [`DenseSource`], resumable between steps.
///
/// The same query and answer as [`crate::Bfs`] (except that `target` is not supported): exact
/// level sizes, and the first `collect_limit` vertices in an order of non-decreasing depth
/// (within a bottom-up level, in slot order). Levels are expanded top-down while the frontier
/// is small, and bottom-up once its arcs are a large share of the unexplored ones (see
/// [`Switching`]): on a small-world graph the few middle levels hold most vertices, and a
/// bottom-up scan there stops at the first parent found instead of reading every arc of the
/// frontier. With [`Direction::Both`] a bottom-up vertex reads all its arcs; with `Out` its
/// incoming ones, with `In` its outgoing ones.
///
/// Visited vertices and the current and next frontiers are bitmaps over the source's slots
/// (allocated by [`new`](Self::new): 3 bits a slot), and both frontiers are also kept as lists,
/// so a switch of direction needs no conversion pass and a level boundary costs O(1). A step stops within its budget anywhere,
/// also in the middle of a bottom-up level or of a long row. The source must not change while
/// the search runs (checked: a step panics if its slot count changed).
#[derive(Debug)]
pub struct DirectionOptimizingBfs {
    query: BfsQuery,
    switching: Switching,
    slots: usize,
    visited: Vec<u64>,
    front_bits: Vec<u64>,
    next_bits: Vec<u64>,
    front: Vec<u32>,
    next: Vec<u32>,
    mode: Mode,
    /// Top-down: the position in `front`; bottom-up: the next slot to check.
    cursor: usize,
    /// How much of the current vertex's rows has been read.
    pos: usize,
    /// Top-down degrees of the vertices in `next` (`m_f` once `next` is the frontier).
    next_arcs: u64,
    /// Bottom-up degrees of the vertices not yet visited (`m_u`).
    unexplored: u64,
    levels: Vec<u64>,
    vertices: Vec<u64>,
    bottom_up_levels: u32,
    started: bool,
    outcome: Option<BfsOutcome>,
    work: Work,
}

impl DirectionOptimizingBfs {
    /// A search of `src` (which sizes its bitmaps) with the default [`Switching`]. Panics if
    /// the query has a target.
    pub fn new<S: DenseSource + ?Sized>(query: BfsQuery, src: &S) -> Self {
        assert!(
            query.target.is_none(),
            "direction-optimizing BFS does not stop at a target"
        );
        let slots = src.slots();
        let words = slots.div_ceil(64);
        Self {
            query,
            switching: Switching::default(),
            slots,
            visited: vec![0; words],
            front_bits: vec![0; words],
            next_bits: vec![0; words],
            front: Vec::new(),
            next: Vec::new(),
            mode: Mode::TopDown,
            cursor: 0,
            pos: 0,
            next_arcs: 0,
            unexplored: 0,
            levels: Vec::new(),
            vertices: Vec::new(),
            bottom_up_levels: 0,
            started: false,
            outcome: None,
            work: Work::default(),
        }
    }

    /// The same search with other switching thresholds.
    pub fn with_switching(mut self, switching: Switching) -> Self {
        self.switching = switching;
        self
    }

    /// Advances the search until it finishes or `budget` more work units have been spent (an
    /// arc read, a vertex whose rows are read, a lookup). Rows are read in parts that fit the
    /// budget, so one step's work stays near `budget` whatever the degrees; at least one unit
    /// is spent per call, so progress never stalls. Skipping visited slots in a bottom-up level
    /// is not counted: it reads a word per 64 slots.
    pub fn step<S: DenseSource + ?Sized>(&mut self, src: &S, budget: u64) -> Progress {
        if self.outcome.is_some() {
            return Progress::Done;
        }
        assert_eq!(
            src.slots(),
            self.slots,
            "the graph changed under a direction-optimizing BFS"
        );
        let limit = self.work.units().saturating_add(budget.max(1));
        if !self.started {
            self.started = true;
            self.work.lookups += 1;
            let start = self.query.start;
            match src.slot(start) {
                Some(slot) => {
                    self.unexplored = src.arc_total(self.query.dir.reverse());
                    self.discover(src, slot);
                }
                // A vertex without a slot has no arcs.
                None if src.contains(start) => {
                    self.levels.push(1);
                    if self.query.collect_limit > 0 {
                        self.vertices.push(start);
                    }
                    return self.finish();
                }
                None => {
                    self.outcome = Some(BfsOutcome::UnknownStart);
                    return Progress::Done;
                }
            }
            if self.next_level() {
                return self.finish();
            }
        }
        loop {
            let level_done = match self.mode {
                Mode::TopDown => self.cursor == self.front.len(),
                Mode::BottomUp => match self.next_unvisited(self.cursor) {
                    Some(v) => {
                        self.cursor = v;
                        false
                    }
                    None => true,
                },
            };
            if level_done {
                if self.next_level() {
                    return self.finish();
                }
                continue;
            }
            if self.work.units() >= limit {
                return Progress::Suspended;
            }
            if self.mode == Mode::BottomUp
                && self.pos == 0
                && src.filter().is_all()
                && self.bottom_up_rows(src, limit)
            {
                continue;
            }
            if self.pos == 0 {
                self.work.vertices_expanded += 1;
            }
            let room = usize::try_from(limit.saturating_sub(self.work.units()).max(1))
                .unwrap_or(usize::MAX);
            match self.mode {
                Mode::TopDown => self.top_down(src, room),
                Mode::BottomUp => self.bottom_up(src, room),
            }
        }
    }

    /// Reads up to `room` arcs of the frontier vertex at `cursor`, claiming unvisited ones.
    #[inline]
    fn top_down<S: DenseSource + ?Sized>(&mut self, src: &S, room: usize) {
        let u = self.front[self.cursor];
        let rows = src.rows(u, self.query.dir);
        let (parts, end) = span(rows, self.pos, room);
        let filter = src.filter();
        let labels = match filter.is_all() {
            true => [ArcLabels::NONE; 2],
            false => span_labels(src.labels(u, self.query.dir), rows, self.pos, room),
        };
        for (part, labels) in parts.into_iter().zip(labels) {
            // One loop per label column, so that the loop tests no variant per arc.
            match labels {
                _ if filter.is_all() => self.claim(src, part, |_, _| true),
                ArcLabels::Narrow(l) => self.claim(src, part, |i, w| {
                    l.kept(i, filter) && enters(src, filter, w)
                }),
                ArcLabels::Wide(l) => self.claim(src, part, |i, w| {
                    l.kept(i, filter) && enters(src, filter, w)
                }),
            }
        }
        self.work.arcs_scanned += (end - self.pos) as u64;
        if end == rows[0].len() + rows[1].len() {
            self.cursor += 1;
            self.pos = 0;
        } else {
            self.pos = end;
        }
    }

    /// Reads up to `room` arcs of the unvisited vertex at `cursor`, backwards, until one that
    /// the filter keeps comes from the frontier.
    #[inline]
    fn bottom_up<S: DenseSource + ?Sized>(&mut self, src: &S, room: usize) {
        let v = self.cursor as u32;
        let filter = src.filter();
        if !enters(src, filter, v) {
            self.cursor += 1;
            self.pos = 0;
            return;
        }
        let back = self.query.dir.reverse();
        let rows = src.rows(v, back);
        let (parts, end) = span(rows, self.pos, room);
        let labels = match filter.is_all() {
            true => [ArcLabels::NONE; 2],
            false => span_labels(src.labels(v, back), rows, self.pos, room),
        };
        let mut read = 0;
        let mut found = false;
        for (part, labels) in parts.into_iter().zip(labels) {
            let front = &self.front_bits;
            let (r, f) = match labels {
                _ if filter.is_all() => find_parent(front, part, |_| true),
                ArcLabels::Narrow(l) => find_parent(front, part, |i| l.kept(i, filter)),
                ArcLabels::Wide(l) => find_parent(front, part, |i| l.kept(i, filter)),
            };
            read += r;
            if f {
                found = true;
                break;
            }
        }
        self.work.arcs_scanned += read as u64;
        if found {
            self.discover_with(src, v, row_len(rows));
        }
        if found || end == rows[0].len() + rows[1].len() {
            self.cursor += 1;
            self.pos = 0;
        } else {
            self.pos = end;
        }
    }

    /// [`bottom_up`](Self::bottom_up) for an unfiltered search, tightened: reads the rows of the
    /// unvisited slots from `cursor` on, a bitmap word at a time, while each slot's rows fit
    /// in what is left of `limit`; the work is counted as `bottom_up` counts it. Stops at the
    /// end of the level, at the budget, or before a slot whose rows do not fit (which
    /// `bottom_up` then reads in parts). Returns whether it read any slot.
    fn bottom_up_rows<S: DenseSource + ?Sized>(&mut self, src: &S, limit: u64) -> bool {
        let back = self.query.dir.reverse();
        let mut read_any = false;
        let mut word = self.cursor / 64;
        let mut bits = !self.visited[word] & (!0u64 << (self.cursor % 64));
        loop {
            while bits == 0 {
                word += 1;
                match self.visited.get(word) {
                    Some(&w) => bits = !w,
                    None => {
                        self.cursor = self.slots;
                        return read_any;
                    }
                }
            }
            let v = word * 64 + bits.trailing_zeros() as usize;
            self.cursor = v;
            if v >= self.slots {
                self.cursor = self.slots;
                return read_any;
            }
            let units = self.work.units();
            let rows = src.rows(v as u32, back);
            let len = row_len(rows);
            if units >= limit || len > limit.saturating_sub(units + 1).max(1) {
                return read_any;
            }
            read_any = true;
            let front = &self.front_bits;
            let first_in = |row: &[u32]| row.iter().position(|&u| bit(front, u));
            let found =
                first_in(rows[0]).or_else(|| first_in(rows[1]).map(|at| rows[0].len() + at));
            self.work.vertices_expanded += 1;
            self.work.arcs_scanned += found.map_or(len, |at| at as u64 + 1);
            if found.is_some() {
                self.discover_with(src, v as u32, len);
            }
            bits &= bits - 1;
        }
    }

    /// Discovers the unvisited vertices of `part` over the arcs that `follows` (given the arc's
    /// index in `part` and its other end).
    #[inline]
    fn claim<S: DenseSource + ?Sized>(
        &mut self,
        src: &S,
        part: &[u32],
        follows: impl Fn(usize, u32) -> bool,
    ) {
        for (i, &w) in part.iter().enumerate() {
            if !bit(&self.visited, w) && follows(i, w) {
                self.discover(src, w);
            }
        }
    }

    /// Marks `w` visited and puts it in the next frontier.
    #[inline(always)]
    fn discover<S: DenseSource + ?Sized>(&mut self, src: &S, w: u32) {
        let up = row_len(src.rows(w, self.query.dir.reverse()));
        self.discover_with(src, w, up);
    }

    /// [`discover`](Self::discover), given the length of `w`'s rows backwards, `up`.
    #[inline(always)]
    fn discover_with<S: DenseSource + ?Sized>(&mut self, src: &S, w: u32, up: u64) {
        set_bit(&mut self.visited, w);
        set_bit(&mut self.next_bits, w);
        self.next.push(w);
        if self.vertices.len() < self.query.collect_limit {
            self.vertices.push(src.vertex(w));
        }
        let dir = self.query.dir;
        let down = match dir {
            Direction::Both => up,
            _ => row_len(src.rows(w, dir)),
        };
        self.next_arcs += down;
        self.unexplored = self.unexplored.saturating_sub(up);
    }

    /// The first unvisited slot at or after `from`.
    #[inline]
    fn next_unvisited(&self, from: usize) -> Option<usize> {
        let mut word = from / 64;
        let mut bits = !*self.visited.get(word)? & (!0u64 << (from % 64));
        loop {
            if bits != 0 {
                let v = word * 64 + bits.trailing_zeros() as usize;
                return (v < self.slots).then_some(v);
            }
            word += 1;
            bits = !*self.visited.get(word)?;
        }
    }

    /// At the end of a level (or after the start): makes the next frontier current, records its
    /// size and chooses how to expand it. Returns `true` when the search is over.
    fn next_level(&mut self) -> bool {
        if self.next.is_empty() {
            return true;
        }
        std::mem::swap(&mut self.front, &mut self.next);
        // The bitmaps are never cleared: `next_bits` keeps the levels before the frontier, of
        // the same parity. That is harmless, because an unvisited vertex has no arc from an
        // earlier level (it would have been discovered then), so a bottom-up scan can only
        // find its parent in the frontier itself.
        std::mem::swap(&mut self.front_bits, &mut self.next_bits);
        let before = self.next.len();
        self.next.clear();
        self.levels.push(self.front.len() as u64);
        let depth = self.levels.len() as u32 - 1;
        if self.query.max_depth.is_some_and(|max| depth >= max) {
            return true;
        }
        let front_arcs = std::mem::take(&mut self.next_arcs);
        // A threshold of 0 divides into infinity.
        let Switching { alpha, beta } = self.switching;
        let most_unexplored = self.unexplored.checked_div(alpha).unwrap_or(u64::MAX);
        let small_front = (self.slots as u64).checked_div(beta).unwrap_or(u64::MAX);
        let front = self.front.len() as u64;
        self.mode = match self.mode {
            Mode::TopDown if front_arcs > most_unexplored => Mode::BottomUp,
            Mode::BottomUp if front < before as u64 && front <= small_front => Mode::TopDown,
            mode => mode,
        };
        self.bottom_up_levels += (self.mode == Mode::BottomUp) as u32;
        self.cursor = 0;
        self.pos = 0;
        false
    }

    fn finish(&mut self) -> Progress {
        self.outcome = Some(BfsOutcome::Visited {
            levels: std::mem::take(&mut self.levels),
            vertices: std::mem::take(&mut self.vertices),
            path: None,
        });
        Progress::Done
    }

    /// Makes room in every growing buffer for all that the next `step(_, budget)` can add (the
    /// bitmaps never grow), so that no buffer grows inside that step. Call it between
    /// transactions or slices.
    pub fn reserve(&mut self, budget: u64) {
        let n = discoveries_per_step(budget).min(self.slots);
        self.front.reserve(n);
        self.next.reserve(n);
        let room = self.query.collect_limit.saturating_sub(self.vertices.len());
        self.vertices.reserve(room.min(n));
    }

    /// The work spent so far.
    pub fn work(&self) -> Work {
        self.work
    }

    /// How many levels were (or are being) expanded bottom-up.
    pub fn bottom_up_levels(&self) -> u32 {
        self.bottom_up_levels
    }

    /// Runs the search to completion in one go (tests and benchmarks).
    pub fn run<S: DenseSource + ?Sized>(mut self, src: &S) -> (BfsOutcome, Work) {
        while self.step(src, u64::MAX) == Progress::Suspended {}
        self.into_outcome()
    }

    /// The outcome and the work spent; panics if the search has not finished.
    pub fn into_outcome(self) -> (BfsOutcome, Work) {
        (
            self.outcome
                .expect("direction-optimizing BFS has not finished"),
            self.work,
        )
    }
}

/// How many arcs of `part` a bottom-up scan reads before one that `follows` (given its index)
/// comes from the frontier `front`, and whether one does.
#[inline]
fn find_parent(front: &[u64], part: &[u32], follows: impl Fn(usize) -> bool) -> (usize, bool) {
    match part
        .iter()
        .enumerate()
        .position(|(i, &u)| bit(front, u) && follows(i))
    {
        Some(at) => (at + 1, true),
        None => (part.len(), false),
    }
}

#[inline]
fn bit(bits: &[u64], i: u32) -> bool {
    bits[i as usize / 64] & (1 << (i % 64)) != 0
}

#[inline]
fn set_bit(bits: &mut [u64], i: u32) {
    bits[i as usize / 64] |= 1 << (i % 64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AdjacencyGraph;

    #[test]
    fn after_reserve_a_step_grows_no_buffer() {
        // A hub with 3,000 leaves, each leaf with 2 more: levels of 1, 3,000 and 6,000; the
        // middle one is expanded bottom-up.
        let mut arcs: Vec<(u64, u64)> = (0..3000).map(|i| (7, 1_000 + i)).collect();
        arcs.extend((0..6000).map(|i| (1_000 + i / 2, 100_000 + i)));
        let g = AdjacencyGraph::new([], &arcs);
        for dir in [Direction::Out, Direction::Both] {
            for budget in [1, 40, 1000] {
                let query = BfsQuery {
                    start: 7,
                    dir,
                    max_depth: None,
                    target: None,
                    collect_limit: 10_000,
                };
                let mut bfs = DirectionOptimizingBfs::new(query, &g);
                let mut steps = 0;
                loop {
                    bfs.reserve(budget);
                    let capacities = |b: &DirectionOptimizingBfs| {
                        let mut lists = [b.front.capacity(), b.next.capacity()];
                        lists.sort_unstable();
                        (lists, b.vertices.capacity())
                    };
                    let before = capacities(&bfs);
                    if bfs.step(&g, budget) == Progress::Done {
                        break;
                    }
                    assert_eq!(capacities(&bfs), before, "budget {budget}, step {steps}");
                    steps += 1;
                }
                assert!(bfs.bottom_up_levels() > 0, "{dir}");
                let (outcome, _) = bfs.into_outcome();
                let BfsOutcome::Visited { levels, .. } = outcome else {
                    panic!("7 exists");
                };
                assert_eq!(levels, [1, 3000, 6000]);
            }
        }
    }
}
