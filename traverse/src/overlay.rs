//! Changes to an [`AdjacencyGraph`]: an overlay of rewritten rows on top of the compressed rows,
//! and a compaction, in bounded steps, that folds the overlay into fresh compressed rows.
//!
//! A row that a change touches is copied once into the overlay (copy on write) and edited there;
//! reads of it return the copy, so every row, rewritten or not, stays one contiguous slice of
//! slots (what [`crate::DenseSource::rows`] hands out). A change costs the length of the rows it
//! touches, never the size of the graph. Slots are never renumbered: a removed vertex leaves an
//! empty slot that a later vertex reuses, so the id → slot index never needs rebuilding.
//!
//! Compaction runs in steps between which the graph stays fully usable, changes included: its
//! first step freezes the overlay, later changes go to a new overlay on top of the frozen one,
//! and the steps copy the compressed rows with the frozen overlay folded in. When the copy is
//! complete it replaces the compressed rows and the frozen overlay is dropped; the rows rewritten
//! since still shadow the new compressed rows, which is right, because a rewritten row is the
//! whole row.

use crate::adjacency::{AdjacencyGraph, Csr, narrow};
use crate::landmarks::Landmarks;
use crate::{ArcAttrs, Progress};
use hashbrown::HashMap;

/// One change to a graph. Arcs are a set: inserting an arc that exists, removing one that does
/// not, inserting a vertex that exists or removing one that does not, changes nothing. (A graph
/// built by [`AdjacencyGraph::new`] from duplicate arcs keeps them until the arc is removed,
/// which removes every copy.) An arc is identified by its ends: inserting `src → dst` when it
/// exists with other attributes changes nothing either.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Change {
    /// Adds the arc `src → dst` with `attrs`, and either endpoint that is not a vertex yet.
    InsertArc {
        src: u64,
        dst: u64,
        attrs: ArcAttrs,
    },
    /// Removes the arc `src → dst`; `attrs` are those it had (a reader that undoes the change
    /// needs them).
    RemoveArc {
        src: u64,
        dst: u64,
        attrs: ArcAttrs,
    },
    InsertVertex(u64),
    /// Removes the vertex with all its arcs.
    RemoveVertex(u64),
    /// Gives vertex `v` label `to` (0: none) in place of `from` (a reader that undoes the
    /// change needs it); see [`AdjacencyGraph::set_vertex_label`].
    RelabelVertex {
        v: u64,
        from: u32,
        to: u32,
    },
}

/// How large a graph's overlay is, to decide when to compact (all counts kept as changes are
/// applied: reading them costs nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverlayStats {
    /// Rewritten rows (outgoing and incoming counted apart).
    pub rows: usize,
    /// Slots held in rewritten rows: 4 bytes each beside the compressed rows, and what a
    /// compaction folds in.
    pub entries: usize,
    /// Slots held in the compressed rows (twice their arcs).
    pub base_entries: usize,
    /// Slots of removed vertices, empty until a new vertex reuses them.
    pub free_slots: usize,
    /// Changes that took effect since the compressed rows were built (or since the compaction
    /// under way began, plus those it folds in).
    pub changes: u64,
    /// Whether a compaction is under way.
    pub compacting: bool,
}

impl OverlayStats {
    /// Overlay entries per compressed entry: reads of rewritten rows cost a hash lookup more,
    /// and their memory is extra, so a caller might compact once this passes, say, 0.25.
    pub fn share(&self) -> f64 {
        self.entries as f64 / self.base_entries.max(1) as f64
    }
}

/// One rewritten row: its slots and, in an attributed graph, their arcs' attributes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Row {
    pub(crate) targets: Vec<u32>,
    pub(crate) attrs: Vec<ArcAttrs>,
}

impl Row {
    fn heap_bytes(&self) -> usize {
        4 * self.targets.capacity() + std::mem::size_of::<ArcAttrs>() * self.attrs.capacity()
    }
}

/// Rewritten rows of one direction: which slots have one (a bitmap, so that reading a row that
/// was not rewritten costs one bit test), and the rows.
#[derive(Debug, Clone, Default)]
struct Rows {
    bits: Vec<u64>,
    map: HashMap<u32, Row>,
    /// Total length of the rows.
    entries: usize,
}

impl Rows {
    /// Inlined up to the bit test, which answers for most slots, so that a search reads a row
    /// without a call (a call costs the module's wasm more than native code).
    #[inline(always)]
    fn get(&self, slot: u32) -> Option<&Row> {
        if self.map.is_empty() {
            return None;
        }
        let word = *self.bits.get(slot as usize / 64)?;
        if word & (1 << (slot % 64)) == 0 {
            return None;
        }
        self.rewritten(slot)
    }

    #[inline(never)]
    fn rewritten(&self, slot: u32) -> Option<&Row> {
        self.map.get(&slot)
    }

    /// The row of `slot`, which must be in the map once `bits` says so.
    fn get_mut(&mut self, slot: u32) -> Option<&mut Row> {
        self.map.get_mut(&slot)
    }

    fn insert(&mut self, slot: u32, row: Row) {
        let word = slot as usize / 64;
        if self.bits.len() <= word {
            self.bits.resize(word + 1, 0);
        }
        self.bits[word] |= 1 << (slot % 64);
        self.entries += row.targets.len();
        if let Some(old) = self.map.insert(slot, row) {
            self.entries -= old.targets.len();
        }
    }

    /// Gives every entry the default attributes (the graph becomes attributed).
    fn add_attrs(&mut self) {
        for row in self.map.values_mut() {
            row.attrs = vec![ArcAttrs::DEFAULT; row.targets.len()];
        }
    }

    fn heap_bytes(&self) -> usize {
        8 * self.bits.capacity()
            + self.map.allocation_size()
            + self.map.values().map(Row::heap_bytes).sum::<usize>()
    }
}

/// The rewritten outgoing and incoming rows of one generation of changes.
#[derive(Debug, Clone, Default)]
struct Layer {
    out: Rows,
    inc: Rows,
    /// Changes that took effect in this layer.
    changes: u64,
}

impl Layer {
    #[inline(always)]
    fn rows(&self, incoming: bool) -> &Rows {
        if incoming { &self.inc } else { &self.out }
    }

    fn rows_mut(&mut self, incoming: bool) -> &mut Rows {
        if incoming {
            &mut self.inc
        } else {
            &mut self.out
        }
    }

    fn is_empty(&self) -> bool {
        self.out.map.is_empty() && self.inc.map.is_empty()
    }
}

/// A compaction under way: fresh compressed rows for slots `0..slots`, filled slot by slot,
/// outgoing rows first.
#[derive(Debug, Clone)]
struct Compaction {
    slots: usize,
    out: Csr,
    inc: Csr,
    /// Whether the fresh rows keep byte labels: every label they will hold was in the graph
    /// when the compaction began.
    narrow: bool,
    next: usize,
    incoming: bool,
}

/// The overlay of an [`AdjacencyGraph`] (see the module documentation).
#[derive(Debug, Clone, Default)]
pub(crate) struct Overlay {
    /// Rows rewritten since the last compaction began.
    active: Layer,
    /// While a compaction runs: the rows rewritten before it began, which it folds in.
    frozen: Layer,
    compaction: Option<Box<Compaction>>,
    /// Slots of removed vertices (with empty rows), reused by new vertices.
    free: Vec<u32>,
}

impl Overlay {
    /// The rewritten row of `slot`, if there is one.
    #[inline(always)]
    pub(crate) fn row(&self, slot: u32, incoming: bool) -> Option<&Row> {
        self.active
            .rows(incoming)
            .get(slot)
            .or_else(|| self.frozen.rows(incoming).get(slot))
    }

    fn heap_bytes(&self) -> usize {
        let layers = [&self.active, &self.frozen]
            .iter()
            .map(|l| l.out.heap_bytes() + l.inc.heap_bytes())
            .sum::<usize>();
        let compaction = self.compaction.as_ref().map_or(0, |c| {
            std::mem::size_of::<Compaction>() + c.out.heap_bytes() + c.inc.heap_bytes()
        });
        layers + compaction + 4 * self.free.capacity()
    }
}

/// # Following writes
impl AdjacencyGraph {
    /// Applies `changes` in order; returns how many took effect (see [`Change`]).
    pub fn apply(&mut self, changes: impl IntoIterator<Item = Change>) -> usize {
        changes
            .into_iter()
            .filter(|&change| match change {
                Change::InsertArc { src, dst, attrs } => self.insert_arc(src, dst, attrs),
                Change::RemoveArc { src, dst, .. } => self.remove_arc(src, dst),
                Change::InsertVertex(v) => self.insert_vertex(v),
                Change::RemoveVertex(v) => self.remove_vertex(v),
                Change::RelabelVertex { v, to, .. } => self.set_vertex_label(v, to),
            })
            .count()
    }

    /// Adds vertex `v` (without arcs) unless it exists; returns whether it was added.
    pub fn insert_vertex(&mut self, v: u64) -> bool {
        if self.index.contains(v) {
            return false;
        }
        self.new_slot(v);
        self.overlay.active.changes += 1;
        true
    }

    /// Gives vertex `v` label `label`, adding `v` if it is new and `label` is not 0 (so that
    /// the changes of one version commute: removing a vertex logs its label going to 0);
    /// returns whether that changed anything.
    pub fn set_vertex_label(&mut self, v: u64, label: u32) -> bool {
        let slot = match self.index.get(v) {
            Some(slot) => slot,
            None if label == 0 => return false,
            None => self.slot_or_new(v),
        } as usize;
        if self.slot_label(slot as u32) == label {
            return false;
        }
        if self.vertex_labels.len() <= slot {
            self.vertex_labels.resize(self.ids.len().max(slot + 1), 0);
        }
        self.vertex_labels[slot] = label;
        self.overlay.active.changes += 1;
        true
    }

    /// Removes vertex `v` and all its arcs unless it does not exist; returns whether it was
    /// removed. Costs the length of its rows and of its neighbors' rows (each rewritten once).
    pub fn remove_vertex(&mut self, v: u64) -> bool {
        let Some(slot) = self.index.remove(v) else {
            return false;
        };
        let mut outs = self.row(slot, false).to_vec();
        let mut ins = self.row(slot, true).to_vec();
        let loops = outs.iter().filter(|&&w| w == slot).count();
        self.arcs -= outs.len() + ins.len() - loops;
        for (neighbors, incoming) in [(&mut outs, true), (&mut ins, false)] {
            neighbors.sort_unstable();
            neighbors.dedup();
            for &w in neighbors.iter().filter(|&&w| w != slot) {
                self.remove_entries(w, incoming, slot);
            }
        }
        for incoming in [false, true] {
            self.overlay
                .active
                .rows_mut(incoming)
                .insert(slot, Row::default());
        }
        self.overlay.free.push(slot);
        self.overlay.active.changes += 1;
        true
    }

    /// Adds the arc `src → dst` with `attrs` (and either endpoint that is missing) unless it
    /// exists; returns whether it was added. Costs the length of the shorter of `src`'s
    /// outgoing and `dst`'s incoming rows, and the first time a row is rewritten, its length;
    /// the first arc with other than default attributes in a graph without any costs a pass
    /// over all rows (see [`AdjacencyGraph`]).
    pub fn insert_arc(&mut self, src: u64, dst: u64, attrs: ArcAttrs) -> bool {
        let s = self.slot_or_new(src);
        let d = self.slot_or_new(dst);
        if self.has_arc(s, d) {
            return false;
        }
        if !attrs.is_default() {
            self.add_attrs();
        }
        self.push_entry(s, false, d, attrs);
        self.push_entry(d, true, s, attrs);
        self.arcs += 1;
        // A new arc may shorten paths: the landmarks' bounds no longer hold.
        self.landmarks = None;
        self.overlay.active.changes += 1;
        true
    }

    /// Removes the arc `src → dst` (every copy of it) unless it does not exist; returns whether
    /// it was removed. Costs as [`insert_arc`](Self::insert_arc).
    pub fn remove_arc(&mut self, src: u64, dst: u64) -> bool {
        let (Some(s), Some(d)) = (self.index.get(src), self.index.get(dst)) else {
            return false;
        };
        if !self.has_arc(s, d) {
            return false;
        }
        let copies = self.remove_entries(s, false, d);
        self.remove_entries(d, true, s);
        self.arcs -= copies;
        self.overlay.active.changes += 1;
        true
    }

    /// How large the overlay is (see [`OverlayStats::share`]).
    pub fn overlay_stats(&self) -> OverlayStats {
        let layers = [&self.overlay.active, &self.overlay.frozen];
        OverlayStats {
            rows: layers
                .iter()
                .map(|l| l.out.map.len() + l.inc.map.len())
                .sum(),
            entries: layers.iter().map(|l| l.out.entries + l.inc.entries).sum(),
            base_entries: self.out.targets.len() + self.inc.targets.len(),
            free_slots: self.overlay.free.len(),
            changes: layers.iter().map(|l| l.changes).sum(),
            compacting: self.overlay.compaction.is_some(),
        }
    }

    /// Folds the overlay into fresh compressed rows, about `budget` slots and arcs of work per
    /// call (a row is copied whole, so a step may exceed its budget by one row's length);
    /// returns [`Progress::Done`] once the new rows are in place, at once if there is nothing
    /// to fold. Between steps the graph answers every query and takes every change as usual
    /// (changes made meanwhile stay in the overlay). While it runs, the fresh rows are
    /// allocated beside the old ones: memory peaks near twice the compressed rows.
    pub fn compact_step(&mut self, budget: u64) -> Progress {
        let budget = usize::try_from(budget.max(1)).unwrap_or(usize::MAX);
        let Overlay {
            active,
            frozen,
            compaction,
            ..
        } = &mut self.overlay;
        let Some(c) = compaction else {
            if active.is_empty() {
                return Progress::Done;
            }
            // Freeze the overlay; the fresh rows hold exactly the arcs there are now.
            *frozen = std::mem::take(active);
            let slots = self.ids.len();
            assert!(
                self.arcs < u32::MAX as usize,
                "too many arcs for compressed rows"
            );
            let attributed = self.attributed;
            let narrow = narrow(self.max_label);
            let fresh = || {
                let mut offsets = Vec::with_capacity(slots + 1);
                offsets.push(0);
                let with = |keep: bool| if keep { self.arcs } else { 0 };
                Csr {
                    offsets,
                    targets: Vec::with_capacity(self.arcs),
                    attrs: Vec::with_capacity(with(attributed)),
                    labels: Vec::with_capacity(with(attributed && narrow)),
                }
            };
            *compaction = Some(Box::new(Compaction {
                slots,
                out: fresh(),
                inc: fresh(),
                narrow,
                next: 0,
                incoming: false,
            }));
            return Progress::Suspended;
        };
        let mut work = 0;
        while work < budget {
            if c.next == c.slots {
                if c.incoming {
                    let c = *compaction.take().expect("a compaction is under way");
                    self.out = c.out;
                    self.inc = c.inc;
                    *frozen = Layer::default();
                    self.index.settle();
                    return Progress::Done;
                }
                c.incoming = true;
                c.next = 0;
                continue;
            }
            let slot = c.next as u32;
            let (row, attrs) = match frozen.rows(c.incoming).get(slot) {
                Some(row) => (&row.targets[..], &row.attrs[..]),
                None if c.incoming => (self.inc.row(slot), self.inc.row_attrs(slot)),
                None => (self.out.row(slot), self.out.row_attrs(slot)),
            };
            let fresh = if c.incoming { &mut c.inc } else { &mut c.out };
            fresh.push_row(row, attrs, c.narrow);
            work += 1 + row.len();
            c.next += 1;
        }
        Progress::Suspended
    }

    /// Folds the whole overlay into fresh compressed rows at once (see
    /// [`compact_step`](Self::compact_step)): finishes a compaction under way, then folds in
    /// the changes made during it.
    pub fn compact(&mut self) {
        loop {
            while self.compact_step(u64::MAX) == Progress::Suspended {}
            if self.overlay.active.is_empty() {
                return;
            }
        }
    }

    /// Bytes the graph has allocated: the sum of its allocations' capacities (the id index, the
    /// ids, the compressed rows, the overlay and a compaction under way), not counting the
    /// allocator's own overhead.
    pub fn heap_bytes(&self) -> usize {
        self.index.heap_bytes()
            + 8 * self.ids.capacity()
            + 4 * self.vertex_labels.capacity()
            + self.out.heap_bytes()
            + self.inc.heap_bytes()
            + self.overlay.heap_bytes()
            + self.landmarks.as_ref().map_or(0, Landmarks::heap_bytes)
    }

    /// The slot of `v`, giving it one (a free slot if there is one) if it is new.
    fn slot_or_new(&mut self, v: u64) -> u32 {
        match self.index.get(v) {
            Some(slot) => slot,
            None => {
                self.overlay.active.changes += 1;
                self.new_slot(v)
            }
        }
    }

    fn new_slot(&mut self, v: u64) -> u32 {
        // The landmarks cover the slots there were, and a reused slot's row is another vertex's.
        self.landmarks = None;
        let slot = match self.overlay.free.pop() {
            // A free slot's rows are empty.
            Some(slot) => {
                self.ids[slot as usize] = v;
                slot
            }
            None => {
                self.ids.push(v);
                u32::try_from(self.ids.len() - 1).expect("fewer than 2^32 slots")
            }
        };
        if let Some(label) = self.vertex_labels.get_mut(slot as usize) {
            *label = 0;
        }
        self.index.insert(v, slot);
        slot
    }

    /// Whether the arc `s → d` exists, read from the shorter of the two rows that hold it.
    fn has_arc(&self, s: u32, d: u32) -> bool {
        let (out, inc) = (self.row(s, false), self.row(d, true));
        if out.len() <= inc.len() {
            out.contains(&d)
        } else {
            inc.contains(&s)
        }
    }

    /// The rewritable row of `slot`: copied into the overlay the first time.
    fn row_mut(&mut self, slot: u32, incoming: bool) -> &mut Row {
        if self.overlay.active.rows(incoming).get(slot).is_none() {
            let copy = Row {
                targets: self.row(slot, incoming).to_vec(),
                attrs: self.row_attrs(slot, incoming).to_vec(),
            };
            self.overlay.active.rows_mut(incoming).insert(slot, copy);
        }
        let rows = self.overlay.active.rows_mut(incoming);
        rows.get_mut(slot).expect("a rewritten row")
    }

    /// Appends `x`, over an arc with `attrs`, to the row of `slot`.
    fn push_entry(&mut self, slot: u32, incoming: bool, x: u32, attrs: ArcAttrs) {
        let attributed = self.attributed;
        self.max_label = self.max_label.max(attrs.label);
        let row = self.row_mut(slot, incoming);
        row.targets.push(x);
        if attributed {
            row.attrs.push(attrs);
        }
        self.overlay.active.rows_mut(incoming).entries += 1;
    }

    /// Removes every `x` from the row of `slot`; returns how many there were.
    fn remove_entries(&mut self, slot: u32, incoming: bool, x: u32) -> usize {
        let row = self.row_mut(slot, incoming);
        let before = row.targets.len();
        if row.attrs.is_empty() {
            row.targets.retain(|&y| y != x);
        } else {
            let mut kept = 0;
            for i in 0..before {
                if row.targets[i] != x {
                    row.targets[kept] = row.targets[i];
                    row.attrs[kept] = row.attrs[i];
                    kept += 1;
                }
            }
            row.targets.truncate(kept);
            row.attrs.truncate(kept);
        }
        let removed = before - row.targets.len();
        self.overlay.active.rows_mut(incoming).entries -= removed;
        removed
    }

    /// Makes the graph attributed, every arc so far with the default attributes: one pass over
    /// all rows, once.
    fn add_attrs(&mut self) {
        if self.attributed {
            return;
        }
        self.attributed = true;
        // Every arc so far has label 0, which fits a byte.
        self.out.add_attrs(true);
        self.inc.add_attrs(true);
        let Overlay {
            active,
            frozen,
            compaction,
            ..
        } = &mut self.overlay;
        for layer in [active, frozen] {
            layer.out.add_attrs();
            layer.inc.add_attrs();
        }
        if let Some(c) = compaction {
            c.out.add_attrs(c.narrow);
            c.inc.add_attrs(c.narrow);
        }
    }
}
