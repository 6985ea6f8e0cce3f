//! The edge store: every read and write of an edge goes through here, so that the rest of the
//! module sees arcs `src → dst` with their attributes and never the packed keys.
//!
//! An edge whose ends are both below 2^32 is an [`Edge`] row keyed by two packed `u64`s; any
//! other edge is a [`WideEdge`] row keyed by two packed `u128`s (see `schema`). A vertex's list
//! is one range per table: for a vertex below 2^32, its neighbors in `edge` are all below 2^32
//! and those in `wide_edge` all at or above it, so reading `edge` first and `wide_edge` second
//! gives the list in neighbor order.

use crate::rows;
use crate::schema::ranged;
use crate::schema::{Edge, NO_LABEL, WideEdge, edge, wide_edge};
use graph_traverse::ArcAttrs;
use spacetimedb::{Local, Table};
use std::ops::RangeInclusive;

/// Ids below this fit in half of a packed `u64` key.
const SPLIT: u64 = 1 << 32;
const LOW: u64 = SPLIT - 1;

/// A directed edge with its attributes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arc {
    pub src: u64,
    pub dst: u64,
    pub label: u32,
    pub weight: f32,
}

impl Arc {
    /// An unlabelled arc of weight 1.
    pub fn plain(src: u64, dst: u64) -> Self {
        Self {
            src,
            dst,
            label: NO_LABEL,
            weight: 1.0,
        }
    }

    pub fn attrs(&self) -> ArcAttrs {
        ArcAttrs {
            label: self.label,
            weight: self.weight,
        }
    }

    fn is_narrow(&self) -> bool {
        narrow(self.src, self.dst)
    }
}

/// Whether the arc `src → dst` is an `edge` row (both ends below 2^32), not a `wide_edge` row.
fn narrow(src: u64, dst: u64) -> bool {
    src < SPLIT && dst < SPLIT
}

impl From<Edge> for Arc {
    fn from(e: Edge) -> Self {
        Self {
            src: e.src(),
            dst: e.dst(),
            label: e.label,
            weight: e.weight,
        }
    }
}

impl From<WideEdge> for Arc {
    fn from(e: WideEdge) -> Self {
        Self {
            src: e.src(),
            dst: e.dst(),
            label: e.label,
            weight: e.weight,
        }
    }
}

/// `hi` and `lo` (both below 2^32) in one key ordered by `hi`, then `lo`.
fn pack(hi: u64, lo: u64) -> u64 {
    hi << 32 | lo
}

fn pack_wide(hi: u64, lo: u64) -> u128 {
    u128::from(hi) << 64 | u128::from(lo)
}

/// The stored arc `src → dst`, if any.
pub fn find(db: &Local, src: u64, dst: u64) -> Option<Arc> {
    if narrow(src, dst) {
        db.edge().fwd().find(pack(src, dst)).map(Arc::from)
    } else {
        db.wide_edge()
            .fwd()
            .find(pack_wide(src, dst))
            .map(Arc::from)
    }
}

/// `arc` as a row of the table it belongs in, handed to `narrow` (an [`Edge`]) or `wide`.
fn with_row<T>(arc: Arc, narrow: impl FnOnce(&Edge) -> T, wide: impl FnOnce(&WideEdge) -> T) -> T {
    let Arc {
        src,
        dst,
        label,
        weight,
    } = arc;
    if arc.is_narrow() {
        narrow(&Edge {
            fwd: pack(src, dst),
            rev: pack(dst, src),
            label,
            weight,
        })
    } else {
        wide(&WideEdge {
            fwd: pack_wide(src, dst),
            rev: pack_wide(dst, src),
            label,
            weight,
        })
    }
}

/// Stores `arc`, which must not be stored yet (with any attributes).
pub fn insert(db: &Local, arc: Arc) {
    with_row(
        arc,
        |row| rows::insert(&db.edge(), row),
        |row| rows::insert(&db.wide_edge(), row),
    )
}

/// What [`insert_if_absent`] found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stored {
    /// `arc` is stored now, and was not before.
    New,
    /// `arc` was stored already.
    Already,
    /// This arc between the same ends was stored, with other attributes; nothing changed.
    Differs(Arc),
}

/// Stores `arc` unless an arc between its ends is stored (see [`rows::insert_if_absent`]).
pub fn insert_if_absent(db: &Local, arc: Arc) -> Stored {
    let inserted = with_row(
        arc,
        |row| rows::insert_if_absent(&db.edge(), row),
        |row| rows::insert_if_absent(&db.wide_edge(), row),
    );
    match inserted {
        rows::Inserted::New => Stored::New,
        rows::Inserted::Already => Stored::Already,
        // `fwd` and `rev` hold the same pair of ends: the row holding either is this arc's.
        rows::Inserted::KeyTaken => Stored::Differs(
            find(db, arc.src, arc.dst).expect("a row holds the key of the arc between these ends"),
        ),
    }
}

/// Stores `arc` unless an arc between its ends is stored with other attributes, which it
/// returns; an identical arc stored already is left as it is (see
/// [`rows::insert_unless_key_taken`]).
pub fn insert_unless_taken(db: &Local, arc: Arc) -> Result<(), Arc> {
    let inserted = with_row(
        arc,
        |row| rows::insert_unless_key_taken(&db.edge(), row),
        |row| rows::insert_unless_key_taken(&db.wide_edge(), row),
    );
    match inserted {
        true => Ok(()),
        // `fwd` and `rev` hold the same pair of ends: the row holding either is this arc's.
        false => Err(find(db, arc.src, arc.dst).expect("a row holds the key of this arc's ends")),
    }
}

/// The edges stored, both tables' rows (this transaction's writes included).
pub fn count(db: &Local) -> u64 {
    rows::count(&db.edge()) + rows::count(&db.wide_edge())
}

/// Removes the arc `src → dst` and returns it, if it was stored.
pub fn remove(db: &Local, src: u64, dst: u64) -> Option<Arc> {
    let stored = find(db, src, dst)?;
    if stored.is_narrow() {
        db.edge().fwd().delete(pack(src, dst));
    } else {
        db.wide_edge().fwd().delete(pack_wide(src, dst));
    }
    Some(stored)
}

/// Whether any edge has an end at or above 2^32 (then lists read `wide_edge` too). One row
/// count, meant to be asked once per transaction.
pub fn any_wide(db: &Local) -> bool {
    rows::count(&db.wide_edge()) > 0
}

/// Calls `each` with `v`'s arcs in one direction (out-arcs, or with `incoming` in-arcs) to
/// the neighbors in `neighbors`, in neighbor order, at most `max` of them; `wide`: what
/// [`any_wide`] said in this transaction. Returns how many it read.
pub fn list(
    db: &Local,
    v: u64,
    incoming: bool,
    neighbors: RangeInclusive<u64>,
    max: usize,
    wide: bool,
    mut each: impl FnMut(Arc),
) -> usize {
    let (from, to) = (*neighbors.start(), *neighbors.end());
    let mut read = 0;
    if v < SPLIT && from < SPLIT && from <= to {
        let keys = pack(v, from)..=pack(v, to.min(LOW));
        let (table, max) = (db.edge(), max - read);
        read += match incoming {
            true => feed(
                ranged(table.rev(), &table.__backend).filter(keys),
                max,
                &mut each,
            ),
            false => feed(
                ranged(table.fwd(), &table.__backend).filter(keys),
                max,
                &mut each,
            ),
        };
    }
    if wide && read < max && from <= to {
        let keys = pack_wide(v, from)..=pack_wide(v, to);
        let (table, max) = (db.wide_edge(), max - read);
        read += match incoming {
            true => feed(
                ranged(table.rev(), &table.__backend).filter(keys),
                max,
                &mut each,
            ),
            false => feed(
                ranged(table.fwd(), &table.__backend).filter(keys),
                max,
                &mut each,
            ),
        };
    }
    read
}

/// Gives `each` at most `max` of `rows`; returns how many it gave.
fn feed<R: Into<Arc>>(
    rows: impl Iterator<Item = R>,
    max: usize,
    each: &mut impl FnMut(Arc),
) -> usize {
    rows.take(max).map(|row| each(row.into())).count()
}

/// Every arc out of a vertex in `sources`, in (src, dst) order; `wide` as for [`list`].
pub fn out_of(db: &Local, sources: RangeInclusive<u64>, wide: bool) -> Vec<Arc> {
    let mut arcs: Vec<Arc> = Vec::new();
    at_ends(db, sources, false, wide, |a| arcs.push(a));
    // `edge`'s arcs come first, in order, then `wide_edge`'s: merged only when both gave some.
    let narrow = arcs.partition_point(|a| a.is_narrow());
    if narrow > 0 && narrow < arcs.len() {
        arcs.sort_unstable_by_key(|a| (a.src, a.dst));
    }
    arcs
}

/// Calls `each` with every arc out of (or, with `incoming`, into) a vertex in `ends`: those of
/// `edge` first, in key order, then those of `wide_edge` if `wide` (as for [`list`]).
pub fn at_ends(
    db: &Local,
    ends: RangeInclusive<u64>,
    incoming: bool,
    wide: bool,
    mut each: impl FnMut(Arc),
) {
    let (first, last) = (*ends.start(), *ends.end());
    if first > last {
        return;
    }
    if first < SPLIT {
        let keys = pack(first, 0)..=pack(last.min(LOW), LOW);
        let table = db.edge();
        match incoming {
            true => ranged(table.rev(), &table.__backend)
                .filter(keys)
                .for_each(|e| each(e.into())),
            false => ranged(table.fwd(), &table.__backend)
                .filter(keys)
                .for_each(|e| each(e.into())),
        }
    }
    if wide {
        let keys = pack_wide(first, 0)..=pack_wide(last, u64::MAX);
        let table = db.wide_edge();
        match incoming {
            true => ranged(table.rev(), &table.__backend)
                .filter(keys)
                .for_each(|e| each(e.into())),
            false => ranged(table.fwd(), &table.__backend)
                .filter(keys)
                .for_each(|e| each(e.into())),
        }
    }
}

/// Calls `each` with every arc, in no particular order (a full scan of both tables).
pub fn for_each(db: &Local, mut each: impl FnMut(Arc)) {
    db.edge().iter().for_each(|e| each(e.into()));
    db.wide_edge().iter().for_each(|e| each(e.into()));
}

/// Removes every edge.
pub fn clear(db: &Local) {
    db.edge().clear();
    db.wide_edge().clear();
}
