use crate::filter::ALL_ARCS;
use crate::id_index::IdIndex;
use crate::landmarks::Landmarks;
use crate::overlay::Overlay;
use crate::{
    ArcAttrs, ArcFilter, ArcLabels, DenseSource, Direction, ListCursor, Neighbor, NeighborSource,
    Progress,
};

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
///
/// Arc attributes ([`ArcAttrs`]) are kept in a column beside each row's slots only once some
/// arc has other than the default ones (the graph is then *attributed*): a graph without labels
/// or weights pays nothing for them. While every arc label the graph has held fits a byte, the
/// compressed rows also keep their labels as bytes (one more byte per arc), which is what
/// filtered traversals read ([`ArcLabels`]). Vertex labels cost a column of 4 bytes per slot, kept only
/// once some vertex has one.
#[derive(Debug, Clone, Default)]
pub struct AdjacencyGraph {
    pub(crate) index: IdIndex,
    /// Vertex ids by slot (a slot whose id does not map back to it holds no vertex).
    pub(crate) ids: Vec<u64>,
    /// The compressed rows of slots `0..out.offsets.len() - 1`; later slots have empty base rows.
    pub(crate) out: Csr,
    pub(crate) inc: Csr,
    /// Arcs in the graph (duplicates given to `new` included).
    pub(crate) arcs: usize,
    /// Whether rows carry an attribute column (see the type's documentation).
    pub(crate) attributed: bool,
    /// The largest arc label the graph has held (never lowered): compressed rows keep their
    /// labels as bytes while it is below 256.
    pub(crate) max_label: u32,
    /// Rows rewritten since the compressed rows were built, and free slots.
    pub(crate) overlay: Overlay,
    /// Vertex labels by slot; slots past its end (all of them, in a graph without vertex
    /// labels) have label 0.
    pub(crate) vertex_labels: Vec<u32>,
    /// Landmark distances for weighted searches, while valid: dropped when an arc or a slot is
    /// added (see [`Landmarks`]).
    pub(crate) landmarks: Option<Landmarks>,
}

/// Rows of dense vertex indices: row `i` is `targets[offsets[i]..offsets[i + 1]]`, and, in an
/// attributed graph, its arcs' attributes `attrs[offsets[i]..offsets[i + 1]]` (else `attrs` is
/// empty), and their labels as bytes in `labels` when they were all below 256 as the rows were
/// built (else `labels` is empty).
#[derive(Debug, Clone, Default)]
pub(crate) struct Csr {
    pub(crate) offsets: Vec<u32>,
    pub(crate) targets: Vec<u32>,
    pub(crate) attrs: Vec<ArcAttrs>,
    pub(crate) labels: Vec<u8>,
}

/// Whether arcs whose labels are at most `max_label` keep them as bytes.
pub(crate) fn narrow(max_label: u32) -> bool {
    max_label <= u32::from(u8::MAX)
}

impl Csr {
    /// Rows for `n` slots from `arcs`, with attribute and byte label columns if `attributed`
    /// (and, for the bytes, `narrow`).
    fn build(
        n: usize,
        attributed: bool,
        narrow: bool,
        arcs: impl Iterator<Item = (u32, u32, ArcAttrs)> + Clone,
    ) -> Self {
        let mut offsets = vec![0u32; n + 1];
        for (from, _, _) in arcs.clone() {
            offsets[from as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let targets = vec![0u32; offsets[n] as usize];
        let mut csr = Self {
            offsets,
            targets,
            ..Self::default()
        };
        if attributed {
            csr.add_attrs(narrow);
        }
        for (from, to, a) in arcs {
            let at = fill[from as usize] as usize;
            csr.set(at, to, a);
            fill[from as usize] += 1;
        }
        csr
    }

    /// Row `i`; empty past the last row.
    #[inline]
    pub(crate) fn row(&self, i: u32) -> &[u32] {
        match self.span(i) {
            Some((from, to)) => &self.targets[from..to],
            None => &[],
        }
    }

    /// The attributes of row `i`; empty past the last row or when the rows carry none.
    #[inline]
    pub(crate) fn row_attrs(&self, i: u32) -> &[ArcAttrs] {
        match self.span(i) {
            Some((from, to)) if !self.attrs.is_empty() => &self.attrs[from..to],
            _ => &[],
        }
    }

    /// The labels of row `i`'s arcs.
    #[inline]
    pub(crate) fn row_labels(&self, i: u32) -> ArcLabels<'_> {
        match self.span(i) {
            Some((from, to)) if !self.labels.is_empty() => {
                ArcLabels::Narrow(&self.labels[from..to])
            }
            Some((from, to)) if !self.attrs.is_empty() => ArcLabels::Wide(&self.attrs[from..to]),
            _ => ArcLabels::NONE,
        }
    }

    /// Puts `target`, over an arc with `attrs`, at entry `at`, in every column there is.
    #[inline]
    fn set(&mut self, at: usize, target: u32, attrs: ArcAttrs) {
        self.targets[at] = target;
        if let Some(a) = self.attrs.get_mut(at) {
            *a = attrs;
        }
        if let Some(l) = self.labels.get_mut(at) {
            *l = u8::try_from(attrs.label).expect("byte labels are only kept while they fit");
        }
    }

    /// Appends a row (what a compaction builds fresh rows from).
    pub(crate) fn push_row(&mut self, targets: &[u32], attrs: &[ArcAttrs], narrow: bool) {
        self.targets.extend_from_slice(targets);
        self.attrs.extend_from_slice(attrs);
        if narrow {
            self.labels.extend(
                attrs.iter().map(|a| {
                    u8::try_from(a.label).expect("byte labels are only kept while they fit")
                }),
            );
        }
        self.offsets.push(self.targets.len() as u32);
    }

    #[inline]
    fn span(&self, i: u32) -> Option<(usize, usize)> {
        let i = i as usize;
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&from), Some(&to)) => Some((from as usize, to as usize)),
            _ => None,
        }
    }

    /// Gives every entry the default attributes (the graph becomes attributed), and byte labels
    /// if `narrow`.
    pub(crate) fn add_attrs(&mut self, narrow: bool) {
        self.attrs = vec![ArcAttrs::DEFAULT; self.targets.len()];
        if narrow {
            self.labels = vec![0; self.targets.len()];
        }
    }

    /// Bytes of its allocations.
    pub(crate) fn heap_bytes(&self) -> usize {
        4 * (self.offsets.capacity() + self.targets.capacity())
            + std::mem::size_of::<ArcAttrs>() * self.attrs.capacity()
            + self.labels.capacity()
    }
}

impl AdjacencyGraph {
    /// Builds the graph from vertex ids (isolated vertices included) and `(src, dst)` arcs with
    /// the default attributes. Endpoints of arcs are added as vertices when missing.
    pub fn new(vertices: impl IntoIterator<Item = u64>, arcs: &[(u64, u64)]) -> Self {
        Self::with_attrs(
            vertices,
            arcs.iter().map(|&(s, d)| (s, d, ArcAttrs::DEFAULT)),
        )
    }

    /// As [`new`](Self::new), with each arc's attributes.
    pub fn with_attrs(
        vertices: impl IntoIterator<Item = u64>,
        arcs: impl IntoIterator<Item = (u64, u64, ArcAttrs)>,
    ) -> Self {
        let mut graph = Self::default();
        for v in vertices {
            graph.add_vertex(v);
        }
        let dense: Vec<(u32, u32, ArcAttrs)> = arcs
            .into_iter()
            .map(|(s, d, a)| (graph.add_vertex(s), graph.add_vertex(d), a))
            .collect();
        let n = graph.ids.len();
        graph.attributed = dense.iter().any(|(_, _, a)| !a.is_default());
        graph.max_label = dense.iter().map(|(_, _, a)| a.label).max().unwrap_or(0);
        let (attributed, narrow) = (graph.attributed, narrow(graph.max_label));
        graph.out = Csr::build(n, attributed, narrow, dense.iter().copied());
        graph.inc = Csr::build(
            n,
            attributed,
            narrow,
            dense.iter().map(|&(s, d, a)| (d, s, a)),
        );
        graph.arcs = dense.len();
        graph.index.settle();
        graph
    }

    /// The slot of `v`, appending one if `v` is new (only while building: no free slot is
    /// reused, and the new slot has empty base rows).
    fn add_vertex(&mut self, v: u64) -> u32 {
        if let Some(i) = self.index.get(v) {
            return i;
        }
        let next = self.ids.len() as u32;
        self.index.insert(v, next);
        self.ids.push(v);
        next
    }

    pub fn vertex_count(&self) -> usize {
        self.index.len()
    }

    pub fn arc_count(&self) -> usize {
        self.arcs
    }

    /// The label of vertex `v` (0: none, or not a vertex).
    pub fn vertex_label(&self, v: u64) -> u32 {
        self.index.get(v).map_or(0, |slot| self.slot_label(slot))
    }

    #[inline]
    pub(crate) fn slot_label(&self, slot: u32) -> u32 {
        self.vertex_labels.get(slot as usize).copied().unwrap_or(0)
    }

    /// Whether some arc has other than the default attributes (then every row carries them).
    pub fn is_attributed(&self) -> bool {
        self.attributed
    }

    /// The row of `slot`, outgoing or incoming: the overlay's if it rewrote it, else the
    /// compressed one.
    #[inline(always)]
    pub(crate) fn row(&self, slot: u32, incoming: bool) -> &[u32] {
        if let Some(row) = self.overlay.row(slot, incoming) {
            return &row.targets;
        }
        if incoming {
            self.inc.row(slot)
        } else {
            self.out.row(slot)
        }
    }

    /// The attributes of [`row`](Self::row)'s arcs; empty unless the graph is attributed.
    #[inline]
    pub(crate) fn row_attrs(&self, slot: u32, incoming: bool) -> &[ArcAttrs] {
        if let Some(row) = self.overlay.row(slot, incoming) {
            return &row.attrs;
        }
        if incoming {
            self.inc.row_attrs(slot)
        } else {
            self.out.row_attrs(slot)
        }
    }

    /// The labels of [`row`](Self::row)'s arcs (a rewritten row's from its attributes).
    #[inline]
    pub(crate) fn row_labels(&self, slot: u32, incoming: bool) -> ArcLabels<'_> {
        if let Some(row) = self.overlay.row(slot, incoming) {
            return ArcLabels::Wide(&row.attrs);
        }
        if incoming {
            self.inc.row_labels(slot)
        } else {
            self.out.row_labels(slot)
        }
    }

    /// [`NeighborSource::neighbors_page`] through `filter`: `cursor.next` is an offset into
    /// the vertex's row, and `max` bounds the arcs read, kept or not.
    pub fn arcs_page(
        &self,
        v: u64,
        dir: Direction,
        cursor: &mut ListCursor,
        max: usize,
        filter: &ArcFilter,
        out: &mut Vec<Neighbor>,
    ) -> bool {
        let Some(i) = self.index.get(v) else {
            return true;
        };
        let mut room = max.max(1);
        loop {
            let from = cursor.next as usize;
            let row = self.row(i, cursor.incoming);
            let attrs = self.row_attrs(i, cursor.incoming);
            let end = row.len().min(from.saturating_add(room));
            for (at, &slot) in row.iter().enumerate().take(end).skip(from) {
                let a = attrs.get(at).copied().unwrap_or_default();
                let id = self.ids[slot as usize];
                if filter.keeps(a.label)
                    && (!filter.checks_vertices() || filter.enters(id, self.slot_label(slot)))
                {
                    out.push(Neighbor { id, attrs: a });
                }
            }
            cursor.next = end as u64;
            room -= end - from;
            if end < row.len() {
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
}

impl NeighborSource for AdjacencyGraph {
    /// Every arc: see [`AdjacencyGraph::arcs_page`], and [`crate::FilteredGraph`] for a
    /// filtered view.
    fn neighbors_page(
        &self,
        v: u64,
        dir: Direction,
        cursor: &mut ListCursor,
        max: usize,
        out: &mut Vec<Neighbor>,
    ) -> bool {
        self.arcs_page(v, dir, cursor, max, &ALL_ARCS, out)
    }

    fn degree(&self, v: u64, dir: Direction) -> u64 {
        // Only the rows `dir` needs: each is a cache miss on a large graph.
        self.index.get(v).map_or(0, |i| {
            let len = |incoming| self.row(i, incoming).len() as u64;
            match dir {
                Direction::Out => len(false),
                Direction::In => len(true),
                Direction::Both => len(false) + len(true),
            }
        })
    }

    fn contains(&self, v: u64) -> bool {
        self.index.contains(v)
    }

    fn landmark_row(&self, v: u64) -> Option<&[f64]> {
        self.landmarks.as_ref()?.row(self.index.get(v)?)
    }
}

/// # Landmarks
impl AdjacencyGraph {
    /// The landmark table, while it is valid (see [`Landmarks`]).
    pub fn landmarks(&self) -> Option<&Landmarks> {
        self.landmarks.as_ref()
    }

    /// Keeps `landmarks`, built by a [`crate::LandmarkBuilder`] on this graph as it is now;
    /// the next added arc or slot drops them.
    pub fn set_landmarks(&mut self, landmarks: Landmarks) {
        assert_eq!(
            landmarks.slots(),
            self.ids.len(),
            "landmarks built for another graph"
        );
        self.landmarks = Some(landmarks);
    }
}

impl DenseSource for AdjacencyGraph {
    fn slots(&self) -> usize {
        self.ids.len()
    }

    fn slot(&self, v: u64) -> Option<u32> {
        self.index.get(v)
    }

    fn vertex(&self, slot: u32) -> u64 {
        self.ids[slot as usize]
    }

    #[inline]
    fn vertex_label(&self, slot: u32) -> u32 {
        self.slot_label(slot)
    }

    #[inline(always)]
    fn rows(&self, slot: u32, dir: Direction) -> [&[u32]; 2] {
        match dir {
            Direction::Out => [self.row(slot, false), &[]],
            Direction::In => [self.row(slot, true), &[]],
            Direction::Both => [self.row(slot, false), self.row(slot, true)],
        }
    }

    #[inline]
    fn attrs(&self, slot: u32, dir: Direction) -> [&[ArcAttrs]; 2] {
        match dir {
            Direction::Out => [self.row_attrs(slot, false), &[]],
            Direction::In => [self.row_attrs(slot, true), &[]],
            Direction::Both => [self.row_attrs(slot, false), self.row_attrs(slot, true)],
        }
    }

    #[inline]
    fn labels(&self, slot: u32, dir: Direction) -> [ArcLabels<'_>; 2] {
        match dir {
            Direction::Out => [self.row_labels(slot, false), ArcLabels::NONE],
            Direction::In => [self.row_labels(slot, true), ArcLabels::NONE],
            Direction::Both => [self.row_labels(slot, false), self.row_labels(slot, true)],
        }
    }

    fn filter(&self) -> &ArcFilter {
        &ALL_ARCS
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
/// a vertex without arcs is not in it. Attributes are kept only from the first arc that has other
/// than the default ones (see [`AdjacencyGraph`]).
#[derive(Debug, Default)]
pub struct AdjacencyBuilder {
    graph: AdjacencyGraph,
    /// Arcs as they arrived: the source of each arrival row, and the rows of destinations.
    arrived_from: Vec<u32>,
    arrived: Csr,
    last_arc: Option<(u64, u64)>,
    /// Per vertex: outgoing and incoming arc counts; then, for incoming rows, where each is
    /// filled next (outgoing rows are whole arrival rows, placed by their offsets).
    out_fill: Vec<u32>,
    in_fill: Vec<u32>,
    /// Whether `arrived.attrs` is kept (some arc so far has other than default attributes).
    attributed: bool,
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
    /// Copying the arrival rows `next..` into the outgoing rows (each is one vertex's whole row).
    Out {
        next: usize,
    },
    /// Placing the outgoing rows of arrival rows `next..` into the incoming rows.
    In {
        next: usize,
    },
    Done,
}

impl AdjacencyBuilder {
    /// A builder with room for `vertices` vertices and `arcs` arcs (hints: it grows past them,
    /// its arc arrays by a sixteenth at a time rather than doubling, so that a scan meeting a
    /// few more arcs than hinted (writes during the build) does not double its largest arrays in
    /// a module's memory, which never shrinks).
    pub fn with_capacity(vertices: usize, arcs: usize) -> Self {
        let mut b = Self::default();
        b.graph.ids.reserve(vertices);
        b.out_fill.reserve(vertices);
        b.in_fill.reserve(vertices);
        b.arrived_from.reserve(vertices);
        b.arrived.offsets.reserve(vertices + 1);
        b.arrived.targets.reserve(arcs);
        b
    }

    /// Adds arcs with the default attributes in strictly ascending (source, destination) order.
    pub fn add_arcs(
        &mut self,
        arcs: impl IntoIterator<Item = (u64, u64)>,
    ) -> Result<(), BuildError> {
        self.add_attributed_arcs(arcs.into_iter().map(|(s, d)| (s, d, ArcAttrs::DEFAULT)))
    }

    /// Adds arcs, with their attributes, in strictly ascending (source, destination) order.
    pub fn add_attributed_arcs(
        &mut self,
        arcs: impl IntoIterator<Item = (u64, u64, ArcAttrs)>,
    ) -> Result<(), BuildError> {
        if self.phase != Phase::Arcs {
            return Err(BuildError::OutOfOrder);
        }
        for (s, d, a) in arcs {
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
            push_growing(&mut self.arrived.targets, di);
            if !self.attributed && !a.is_default() {
                self.attributed = true;
                let arrived = &mut self.arrived;
                arrived.attrs = Vec::with_capacity(arrived.targets.capacity());
                arrived
                    .attrs
                    .resize(arrived.targets.len() - 1, ArcAttrs::DEFAULT);
            }
            if self.attributed {
                push_growing(&mut self.arrived.attrs, a);
            }
            self.graph.max_label = self.graph.max_label.max(a.label);
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
                    // Arrival rows are whole outgoing rows, placed by the offsets alone.
                    self.out_fill = Vec::new();
                    g.out.targets = vec![0; self.arrived.targets.len()];
                    if self.attributed {
                        g.attributed = true;
                        g.out.add_attrs(narrow(g.max_label));
                    }
                    Phase::Out { next: 0 }
                } else {
                    Phase::Offsets { next: end }
                };
            }
            Phase::Out { next } => {
                let (from, arrived) = (&self.arrived_from, &self.arrived);
                let row = rows_within(next, from.len(), budget, |row| {
                    let targets = arrived.row(row as u32);
                    let attrs = arrived.row_attrs(row as u32);
                    let start = g.out.offsets[from[row] as usize] as usize;
                    g.out.targets[start..start + targets.len()].copy_from_slice(targets);
                    for (k, &a) in attrs.iter().enumerate() {
                        g.out.set(start + k, targets[k], a);
                    }
                    targets.len()
                });
                self.phase = if row == from.len() {
                    // Freed before the incoming rows are allocated, so that they can take its
                    // room: the build's peak is then the graph's size, not half as much again.
                    self.arrived = Csr::default();
                    g.inc.targets = vec![0; g.out.targets.len()];
                    if g.attributed {
                        g.inc.add_attrs(narrow(g.max_label));
                    }
                    Phase::In { next: 0 }
                } else {
                    Phase::Out { next: row }
                };
            }
            Phase::In { next } => {
                // Sources in arrival order, ascending by id: so is every incoming row.
                let (from, fill) = (&self.arrived_from, &mut self.in_fill);
                let (out, inc) = (&g.out, &mut g.inc);
                let row = rows_within(next, from.len(), budget, |row| {
                    let si = from[row];
                    let targets = out.row(si);
                    let attrs = out.row_attrs(si);
                    for (k, &di) in targets.iter().enumerate() {
                        let at = fill[di as usize] as usize;
                        inc.set(at, si, attrs.get(k).copied().unwrap_or_default());
                        fill[di as usize] += 1;
                    }
                    targets.len()
                });
                self.phase = if row == from.len() {
                    g.arcs = g.out.targets.len();
                    self.arrived_from = Vec::new();
                    self.in_fill = Vec::new();
                    g.index.settle();
                    Phase::Done
                } else {
                    Phase::In { next: row }
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

/// Pushes `value`, growing a full `v` by a sixteenth (at least 1,024 more) instead of doubling.
fn push_growing<T>(v: &mut Vec<T>, value: T) {
    if v.len() == v.capacity() {
        v.reserve_exact(v.len() / 16 + 1024);
    }
    v.push(value);
}

/// Runs `place` on rows `next..rows` in order, while the work done (one per row plus the arcs
/// `place` says it placed) stays under `budget`; returns the row to go on from.
fn rows_within(
    next: usize,
    rows: usize,
    budget: usize,
    mut place: impl FnMut(usize) -> usize,
) -> usize {
    let (mut row, mut work) = (next, 0);
    while row < rows && work < budget {
        work += 1 + place(row);
        row += 1;
    }
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    fn neighbors(g: &AdjacencyGraph, v: u64, dir: Direction) -> Vec<u64> {
        let mut page = Vec::new();
        g.neighbors(v, dir, &mut page);
        let mut out: Vec<u64> = page.iter().map(|n| n.id).collect();
        out.sort_unstable();
        out
    }

    /// `v`'s list in `dir` as the graph keeps it: rows in their order, with attributes.
    fn list(g: &AdjacencyGraph, v: u64, dir: Direction) -> Vec<Neighbor> {
        let mut page = Vec::new();
        g.neighbors(v, dir, &mut page);
        page
    }

    fn build(arcs: &[(u64, u64)], budget: u64) -> AdjacencyGraph {
        let arcs: Vec<_> = arcs
            .iter()
            .map(|&(s, d)| (s, d, ArcAttrs::DEFAULT))
            .collect();
        build_attributed(&arcs, budget)
    }

    fn build_attributed(arcs: &[(u64, u64, ArcAttrs)], budget: u64) -> AdjacencyGraph {
        let mut b = AdjacencyBuilder::with_capacity(0, 0);
        for chunk in arcs.chunks(2) {
            b.add_attributed_arcs(chunk.iter().copied()).unwrap();
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
        // Seeded random graphs with hubs and sparse ids (in a third of them, every third id is
        // far above the others, so that the id index keeps those apart from its dense part).
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for _ in 0..300 {
            let n = 1 + next(60);
            let far = next(3) == 0;
            let id = move |i: u64| {
                if far && i.is_multiple_of(3) {
                    u64::MAX - i
                } else {
                    i * 37 + 5
                }
            };
            let mut arcs: Vec<(u64, u64)> = (0..next(400))
                .map(|_| (id(next(n).min(next(n))), id(next(n))))
                .collect();
            arcs.sort_unstable();
            arcs.dedup();
            // Half the graphs with labels (some too wide for a byte) and weights on some arcs.
            let wide = next(4) == 0;
            let arcs: Vec<(u64, u64, ArcAttrs)> = (arcs.into_iter())
                .map(|(s, d)| match next(4) {
                    0 if n % 2 == 0 => {
                        let label = next(if wide { 1_000 } else { 8 }) as u32;
                        (
                            s,
                            d,
                            ArcAttrs {
                                label,
                                weight: next(100) as f32 / 8.0,
                            },
                        )
                    }
                    _ => (s, d, ArcAttrs::DEFAULT),
                })
                .collect();
            let at_once = AdjacencyGraph::with_attrs([], arcs.iter().copied());
            let stepped = build_attributed(&arcs, 1 + next(50));
            assert_eq!(stepped.vertex_count(), at_once.vertex_count());
            assert_eq!(stepped.is_attributed(), at_once.is_attributed());
            for v in (0..n).map(id) {
                for dir in [Direction::Out, Direction::In] {
                    assert_eq!(list(&stepped, v, dir), list(&at_once, v, dir), "{v} {dir}");
                }
            }
        }
        let empty = build(&[], 1);
        assert_eq!((empty.vertex_count(), empty.arc_count()), (0, 0));
    }

    #[test]
    fn arc_arrays_grow_past_their_hint_by_a_sixteenth() {
        let hint = 100_000;
        let mut b = AdjacencyBuilder::with_capacity(10, hint);
        b.add_arcs((0..hint as u64).map(|i| (i / 1_000, i)))
            .unwrap();
        assert_eq!(b.arrived.targets.capacity(), hint);
        // Labels from here on: the attribute column takes the arcs' room, then both grow.
        let labelled = ArcAttrs {
            label: 1,
            ..ArcAttrs::DEFAULT
        };
        b.add_attributed_arcs((hint as u64..hint as u64 + 10).map(|i| (200, i, labelled)))
            .unwrap();
        let grown = hint + hint / 16 + 1024;
        assert_eq!(b.arrived.targets.capacity(), grown);
        assert_eq!(b.arrived.attrs.capacity(), grown);
        while b.finish_step(u64::MAX) == Progress::Suspended {}
        let g = b.into_graph();
        assert_eq!(g.arc_count(), hint + 10);
        assert_eq!(list(&g, 200, Direction::Out)[3].attrs.label, 1);
        assert_eq!(list(&g, 0, Direction::Out)[3].attrs.label, 0);
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
