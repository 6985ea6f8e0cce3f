use crate::overlay::Overlay;
use crate::{DenseSource, Direction, ListCursor, NeighborSource, Progress};
use hashbrown::HashMap;

/// An in-memory graph in compressed sparse row form, for both directions, that can follow
/// writes.
///
/// Used by native tests, by the Stage-1 baseline (built at once from a full edge scan with
/// [`AdjacencyGraph::new`]) and by the module's snapshot (built in bounded steps from sorted
/// scans with [`AdjacencyBuilder`]). Duplicate arcs given to `new` are kept as given (the module's
/// tables never hold any).
///
/// Vertices live in *slots* (its [`DenseSource`] numbering). Changes ([`apply`](Self::apply),
/// [`insert_arc`](Self::insert_arc) and the like) go to an overlay of rewritten rows on top of
/// the compressed rows, in time proportional to the rows they touch, and
/// [`compact_step`](Self::compact_step) folds the overlay back into fresh compressed rows in
/// bounded steps; see the `overlay` section of the methods.
#[derive(Debug, Clone, Default)]
pub struct AdjacencyGraph {
    pub(crate) index: HashMap<u64, u32>,
    /// Vertex ids by slot (a slot whose id does not map back to it holds no vertex).
    pub(crate) ids: Vec<u64>,
    /// The compressed rows of slots `0..out.offsets.len() - 1`; later slots have empty base rows.
    pub(crate) out: Csr,
    pub(crate) inc: Csr,
    /// Arcs in the graph (duplicates given to `new` included).
    pub(crate) arcs: usize,
    /// Rows rewritten since the compressed rows were built, and free slots.
    pub(crate) overlay: Overlay,
}

/// Rows of dense vertex indices: row `i` is `targets[offsets[i]..offsets[i + 1]]`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Csr {
    pub(crate) offsets: Vec<u32>,
    pub(crate) targets: Vec<u32>,
}

impl Csr {
    fn build(n: usize, arcs: impl Iterator<Item = (u32, u32)> + Clone) -> Self {
        let mut offsets = vec![0u32; n + 1];
        for (from, _) in arcs.clone() {
            offsets[from as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut targets = vec![0u32; offsets[n] as usize];
        for (from, to) in arcs {
            targets[fill[from as usize] as usize] = to;
            fill[from as usize] += 1;
        }
        Self { offsets, targets }
    }

    /// Row `i`; empty past the last row.
    #[inline]
    pub(crate) fn row(&self, i: u32) -> &[u32] {
        let i = i as usize;
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&from), Some(&to)) => &self.targets[from as usize..to as usize],
            _ => &[],
        }
    }

    /// Bytes of its allocations.
    pub(crate) fn heap_bytes(&self) -> usize {
        4 * (self.offsets.capacity() + self.targets.capacity())
    }
}

impl AdjacencyGraph {
    /// Builds the graph from vertex ids (isolated vertices included) and `(src, dst)` arcs.
    /// Endpoints of arcs are added as vertices when missing.
    pub fn new(vertices: impl IntoIterator<Item = u64>, arcs: &[(u64, u64)]) -> Self {
        let mut graph = Self::default();
        for v in vertices {
            graph.add_vertex(v);
        }
        let dense: Vec<(u32, u32)> = arcs
            .iter()
            .map(|&(s, d)| (graph.add_vertex(s), graph.add_vertex(d)))
            .collect();
        let n = graph.ids.len();
        graph.out = Csr::build(n, dense.iter().copied());
        graph.inc = Csr::build(n, dense.iter().map(|&(s, d)| (d, s)));
        graph.arcs = arcs.len();
        graph
    }

    /// The slot of `v`, appending one if `v` is new (only while building: no free slot is
    /// reused, and the new slot has empty base rows).
    fn add_vertex(&mut self, v: u64) -> u32 {
        let next = self.ids.len() as u32;
        let i = *self.index.entry(v).or_insert(next);
        if i == next {
            self.ids.push(v);
        }
        i
    }

    pub fn vertex_count(&self) -> usize {
        self.index.len()
    }

    pub fn arc_count(&self) -> usize {
        self.arcs
    }

    /// The row of `slot`, outgoing or incoming: the overlay's if it rewrote it, else the
    /// compressed one.
    #[inline]
    pub(crate) fn row(&self, slot: u32, incoming: bool) -> &[u32] {
        if let Some(row) = self.overlay.row(slot, incoming) {
            return row;
        }
        if incoming {
            self.inc.row(slot)
        } else {
            self.out.row(slot)
        }
    }
}

impl NeighborSource for AdjacencyGraph {
    /// `cursor.next` is an offset into the vertex's row.
    fn neighbors_page(
        &self,
        v: u64,
        dir: Direction,
        cursor: &mut ListCursor,
        max: usize,
        out: &mut Vec<u64>,
    ) -> bool {
        let Some(&i) = self.index.get(&v) else {
            return true;
        };
        let mut room = max.max(1);
        loop {
            let rest = &self.row(i, cursor.incoming)[cursor.next as usize..];
            let page = &rest[..rest.len().min(room)];
            out.extend(page.iter().map(|&t| self.ids[t as usize]));
            cursor.next += page.len() as u64;
            room -= page.len();
            if page.len() < rest.len() {
                return false;
            }
            if !cursor.next_half(dir) {
                return true;
            }
            if room == 0 {
                return false;
            }
        }
    }

    fn degree(&self, v: u64, dir: Direction) -> u64 {
        self.index.get(&v).map_or(0, |&i| {
            let out = self.row(i, false).len() as u64;
            let inc = self.row(i, true).len() as u64;
            match dir {
                Direction::Out => out,
                Direction::In => inc,
                Direction::Both => out + inc,
            }
        })
    }

    fn contains(&self, v: u64) -> bool {
        self.index.contains_key(&v)
    }
}

impl DenseSource for AdjacencyGraph {
    fn slots(&self) -> usize {
        self.ids.len()
    }

    fn slot(&self, v: u64) -> Option<u32> {
        self.index.get(&v).copied()
    }

    fn vertex(&self, slot: u32) -> u64 {
        self.ids[slot as usize]
    }

    #[inline]
    fn rows(&self, slot: u32, dir: Direction) -> [&[u32]; 2] {
        match dir {
            Direction::Out => [self.row(slot, false), &[]],
            Direction::In => [self.row(slot, true), &[]],
            Direction::Both => [self.row(slot, false), self.row(slot, true)],
        }
    }

    fn arc_total(&self, dir: Direction) -> u64 {
        let arcs = self.arcs as u64;
        match dir {
            Direction::Both => 2 * arcs,
            _ => arcs,
        }
    }
}

/// Why an [`AdjacencyBuilder`] refused its input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildError {
    /// Arcs were not strictly ascending by (source, destination), or came after `finish_step`.
    OutOfOrder,
    /// More arcs than a row offset can count.
    TooLarge,
}

/// Builds an [`AdjacencyGraph`] from an ascending scan of its arcs, in steps of bounded work, so
/// that a caller can read a large graph across many short transactions and stay responsive in
/// between.
///
/// Feed every arc in strictly ascending (source, destination) order, as a B-tree index scan
/// yields them ([`add_arcs`](Self::add_arcs)), then call [`finish_step`](Self::finish_step) until
/// it is done. Arcs are kept compactly as they arrive (one row per source); the finishing steps
/// sort them into the outgoing and incoming rows. The graph's vertices are the arcs' endpoints:
/// a vertex without arcs is not in it.
#[derive(Debug, Default)]
pub struct AdjacencyBuilder {
    graph: AdjacencyGraph,
    /// Arcs as they arrived: the source of each arrival row, and the rows of destinations.
    arrived_from: Vec<u32>,
    arrived: Csr,
    last_arc: Option<(u64, u64)>,
    /// Per vertex: outgoing and incoming arc counts, then where its rows are filled next.
    out_fill: Vec<u32>,
    in_fill: Vec<u32>,
    phase: Phase,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Phase {
    #[default]
    Arcs,
    /// Summing the counts of vertices `next..` into row offsets.
    Offsets {
        next: usize,
    },
    /// Placing the arrival rows `next..` into outgoing and incoming rows.
    Fill {
        next: usize,
    },
    Done,
}

impl AdjacencyBuilder {
    /// A builder with room for `vertices` vertices and `arcs` arcs (hints: it grows past them).
    pub fn with_capacity(vertices: usize, arcs: usize) -> Self {
        let mut b = Self::default();
        b.graph.index.reserve(vertices);
        b.graph.ids.reserve(vertices);
        b.out_fill.reserve(vertices);
        b.in_fill.reserve(vertices);
        b.arrived_from.reserve(vertices);
        b.arrived.offsets.reserve(vertices + 1);
        b.arrived.targets.reserve(arcs);
        b
    }

    /// Adds arcs in strictly ascending (source, destination) order.
    pub fn add_arcs(
        &mut self,
        arcs: impl IntoIterator<Item = (u64, u64)>,
    ) -> Result<(), BuildError> {
        if self.phase != Phase::Arcs {
            return Err(BuildError::OutOfOrder);
        }
        for (s, d) in arcs {
            if self.last_arc.is_some_and(|last| last >= (s, d)) {
                return Err(BuildError::OutOfOrder);
            }
            let count = u32::try_from(self.arrived.targets.len())
                .ok()
                .filter(|&count| count < u32::MAX)
                .ok_or(BuildError::TooLarge)?;
            if self.last_arc.is_none_or(|(last, _)| last != s) {
                let si = self.vertex(s);
                self.arrived_from.push(si);
                self.arrived.offsets.push(count);
            }
            let si = *self.arrived_from.last().expect("a row was started") as usize;
            let di = self.vertex(d);
            self.arrived.targets.push(di);
            self.out_fill[si] += 1;
            self.in_fill[di as usize] += 1;
            self.last_arc = Some((s, d));
        }
        Ok(())
    }

    /// The dense index of `v`, adding it (with zero counts) if new.
    fn vertex(&mut self, v: u64) -> u32 {
        let i = self.graph.add_vertex(v);
        if i as usize == self.out_fill.len() {
            self.out_fill.push(0);
            self.in_fill.push(0);
        }
        i
    }

    /// The last arc added, where a paged scan of the arcs resumes.
    pub fn last_arc(&self) -> Option<(u64, u64)> {
        self.last_arc
    }

    /// Sorts the arcs into rows, about `budget` vertices or arcs of work per call; after
    /// [`Progress::Done`], [`into_graph`](Self::into_graph) returns the graph. No arc may be
    /// added once this has been called.
    pub fn finish_step(&mut self, budget: u64) -> Progress {
        let budget = usize::try_from(budget.max(1)).unwrap_or(usize::MAX);
        let n = self.graph.ids.len();
        let g = &mut self.graph;
        match self.phase {
            Phase::Arcs => {
                self.arrived.offsets.push(self.arrived.targets.len() as u32);
                g.out.offsets = Vec::with_capacity(n + 1);
                g.out.offsets.push(0);
                g.inc.offsets = Vec::with_capacity(n + 1);
                g.inc.offsets.push(0);
                self.phase = Phase::Offsets { next: 0 };
            }
            Phase::Offsets { next } => {
                let end = next.saturating_add(budget).min(n);
                for i in next..end {
                    // From here on, a vertex's `fill` is where its row's next arc goes.
                    for (offsets, fill) in [
                        (&mut g.out.offsets, &mut self.out_fill),
                        (&mut g.inc.offsets, &mut self.in_fill),
                    ] {
                        let start = *offsets.last().expect("starts with 0");
                        offsets.push(start + fill[i]);
                        fill[i] = start;
                    }
                }
                self.phase = if end == n {
                    g.out.targets = vec![0; self.arrived.targets.len()];
                    g.inc.targets = vec![0; self.arrived.targets.len()];
                    Phase::Fill { next: 0 }
                } else {
                    Phase::Offsets { next: end }
                };
            }
            Phase::Fill { next } => {
                let rows = self.arrived_from.len();
                let (mut row, mut work) = (next, 0);
                while row < rows && work < budget {
                    let si = self.arrived_from[row];
                    let targets = self.arrived.row(row as u32);
                    for &di in targets {
                        let slot = &mut self.out_fill[si as usize];
                        g.out.targets[*slot as usize] = di;
                        *slot += 1;
                        let slot = &mut self.in_fill[di as usize];
                        g.inc.targets[*slot as usize] = si;
                        *slot += 1;
                    }
                    work += 1 + targets.len();
                    row += 1;
                }
                self.phase = if row == rows {
                    g.arcs = g.out.targets.len();
                    self.arrived = Csr::default();
                    self.arrived_from = Vec::new();
                    self.out_fill = Vec::new();
                    self.in_fill = Vec::new();
                    Phase::Done
                } else {
                    Phase::Fill { next: row }
                };
            }
            Phase::Done => {}
        }
        if self.phase == Phase::Done {
            Progress::Done
        } else {
            Progress::Suspended
        }
    }

    /// The built graph. Panics unless [`finish_step`](Self::finish_step) returned `Done`.
    pub fn into_graph(self) -> AdjacencyGraph {
        assert_eq!(self.phase, Phase::Done, "finish_step has not finished");
        self.graph
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn neighbors(g: &AdjacencyGraph, v: u64, dir: Direction) -> Vec<u64> {
        let mut out = Vec::new();
        g.neighbors(v, dir, &mut out);
        out.sort_unstable();
        out
    }

    fn build(arcs: &[(u64, u64)], budget: u64) -> AdjacencyGraph {
        let mut b = AdjacencyBuilder::with_capacity(0, 0);
        for chunk in arcs.chunks(2) {
            b.add_arcs(chunk.iter().copied()).unwrap();
        }
        let mut steps = 0;
        while b.finish_step(budget) == Progress::Suspended {
            steps += 1;
            assert!(steps < 1_000, "finish_step makes no progress");
        }
        b.into_graph()
    }

    #[test]
    fn built_in_steps_equals_built_at_once() {
        // Sparse ids, a self-loop, a hub, vertices with only incoming arcs (1_000) and with
        // incoming arcs seen before their own row (3, 9); 50 has no arcs, so it is not a vertex.
        let arcs = [
            (3, 7),
            (3, 9),
            (3, 20),
            (3, 1_000),
            (9, 3),
            (9, 9),
            (20, 3),
            (61, 3),
            (61, 7),
        ];
        let at_once = AdjacencyGraph::new([], &arcs);
        for budget in [1, 2, 5, 1_000] {
            let stepped = build(&arcs, budget);
            assert_eq!(stepped.vertex_count(), 6);
            assert_eq!(stepped.arc_count(), arcs.len());
            for v in [3, 7, 9, 20, 50, 61, 1_000, 2_000] {
                for dir in [Direction::Out, Direction::In, Direction::Both] {
                    assert_eq!(
                        neighbors(&stepped, v, dir),
                        neighbors(&at_once, v, dir),
                        "{v} {dir} budget {budget}"
                    );
                    assert_eq!(stepped.degree(v, dir), at_once.degree(v, dir));
                }
                assert_eq!(stepped.contains(v), at_once.contains(v), "{v}");
            }
        }
        // Seeded random graphs with hubs and sparse ids.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for _ in 0..50 {
            let n = 1 + next(60);
            let id = |i: u64| i * 37 + 5;
            let mut arcs: Vec<(u64, u64)> = (0..next(400))
                .map(|_| (id(next(n).min(next(n))), id(next(n))))
                .collect();
            arcs.sort_unstable();
            arcs.dedup();
            let at_once = AdjacencyGraph::new([], &arcs);
            let stepped = build(&arcs, 1 + next(50));
            assert_eq!(stepped.vertex_count(), at_once.vertex_count());
            for v in (0..n).map(id) {
                for dir in [Direction::Out, Direction::In] {
                    assert_eq!(neighbors(&stepped, v, dir), neighbors(&at_once, v, dir));
                }
            }
        }
        let empty = build(&[], 1);
        assert_eq!((empty.vertex_count(), empty.arc_count()), (0, 0));
    }

    #[test]
    fn refuses_arcs_out_of_order() {
        let mut b = AdjacencyBuilder::default();
        b.add_arcs([(1, 2), (1, 5)]).unwrap();
        assert_eq!(b.add_arcs([(1, 5)]), Err(BuildError::OutOfOrder));
        assert_eq!(b.add_arcs([(1, 3)]), Err(BuildError::OutOfOrder));
        assert_eq!(b.add_arcs([(0, 9)]), Err(BuildError::OutOfOrder));
        assert_eq!(b.last_arc(), Some((1, 5)));
        b.add_arcs([(2, 1)]).unwrap();
        assert_eq!(b.finish_step(1), Progress::Suspended);
        assert_eq!(b.add_arcs([(3, 1)]), Err(BuildError::OutOfOrder));
    }
}
