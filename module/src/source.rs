//! The graph as the traversal operator sees it inside a transaction: index scans, never a table
//! scan.

use crate::edges::{self, Arc};
use crate::labels;
use crate::pin::Pin;
use crate::schema::vertex;
use graph_traverse::{ArcFilter, Direction, ListCursor, Neighbor, NeighborSource};
use spacetimedb::Local;

/// Out-neighbors through the `fwd` keys, in-neighbors through the `rev` keys (see `edges`),
/// degrees and existence through the vertex primary key; with a [`Pin`], the graph as it was at
/// the pinned version; only the arcs `filter` keeps.
///
/// Both keys order a vertex's arcs by neighbor id, so a page of a long list resumes at
/// the smallest neighbor id not yet read (`ListCursor::next`) with a range scan: edges are a
/// set, so no arc is read twice or skipped. Under a pin, the arcs that existed at the pinned
/// version and have changed since come at the end of each half of the list (a page may then
/// exceed its `max` by them): a page may have passed one while it was gone, even if it is back
/// now. One that a page read appears twice: the operator tolerates duplicates.
pub struct IndexSource<'a> {
    pub db: &'a Local,
    pub pin: Option<&'a Pin>,
    pub filter: &'a ArcFilter,
    /// Whether `wide_edge` has rows (asked once per transaction).
    wide: bool,
}

impl<'a> IndexSource<'a> {
    pub fn new(db: &'a Local, pin: Option<&'a Pin>, filter: &'a ArcFilter) -> Self {
        Self {
            db,
            pin,
            filter,
            wide: edges::any_wide(db),
        }
    }
}

impl NeighborSource for IndexSource<'_> {
    fn neighbors_page(
        &self,
        v: u64,
        dir: Direction,
        cursor: &mut ListCursor,
        max: usize,
        out: &mut Vec<Neighbor>,
    ) -> bool {
        let mut room = max.max(1);
        loop {
            let incoming = cursor.incoming;
            let before = out.len();
            let (read, over) = self.read_half(v, cursor, room, out);
            if let Some(pin) = self.pin {
                keep_pinned(pin, v, incoming, out, before);
            }
            if !over {
                self.keep_filtered(out, before);
                return false;
            }
            // This half of the list is over.
            if let Some(pin) = self.pin {
                pin.restore(v, incoming, out);
            }
            self.keep_filtered(out, before);
            if !cursor.next_half(dir) {
                return true;
            }
            if read == room {
                return false;
            }
            room -= read;
        }
    }

    fn degree(&self, v: u64, dir: Direction) -> u64 {
        let now = self
            .db
            .vertex()
            .id()
            .find(v)
            .map_or(0, |row| row.degree(dir));
        match self.pin {
            Some(pin) => pin.degree(v, dir, now),
            None => now,
        }
    }

    fn contains(&self, v: u64) -> bool {
        self.pin
            .and_then(|pin| pin.vertex_existed(v))
            .unwrap_or_else(|| self.db.vertex().id().find(v).is_some())
    }

    fn enters(&self, v: u64) -> bool {
        !self.filter.checks_vertices() || self.filter.enters(v, self.label(v))
    }
}

impl IndexSource<'_> {
    /// Reads at most `room` (at least 1) arcs of the half of `v`'s list that `cursor` is in,
    /// from `cursor.next` on, and advances the cursor; returns how many it read and whether
    /// that half is over.
    ///
    /// The engine reads a key range whole before the module takes a row of it, so a page of a
    /// long list that asked for the rest of the list would cost the rest of the list, and a
    /// hub's pages together the square of its degree. A list's first page asks for the rest
    /// (most lists fit in one); later ones look `cursor.span` neighbor ids ahead, as many as
    /// the last page's arcs spanned, doubling the window while it comes back short.
    fn read_half(
        &self,
        v: u64,
        cursor: &mut ListCursor,
        room: usize,
        out: &mut Vec<Neighbor>,
    ) -> (usize, bool) {
        let incoming = cursor.incoming;
        let page_start = cursor.next;
        let mut read = 0;
        let mut last = page_start;
        loop {
            let from = cursor.next;
            let to = match cursor.span {
                0 => u64::MAX,
                span => from.saturating_add(span - 1),
            };
            let take = |e: Arc| {
                let id = if incoming { e.src } else { e.dst };
                last = id;
                out.push(Neighbor {
                    id,
                    attrs: e.attrs(),
                });
            };
            read += edges::list(
                self.db,
                v,
                incoming,
                from..=to,
                room - read,
                self.wide,
                take,
            );
            if read == room {
                // Perhaps more: resume after the last neighbor read.
                cursor.span = (last - page_start).saturating_add(1);
                return match last.checked_add(1) {
                    Some(next) => {
                        cursor.next = next;
                        (read, false)
                    }
                    None => (read, true),
                };
            }
            match to.checked_add(1) {
                Some(next) => {
                    cursor.next = next;
                    cursor.span = cursor.span.saturating_mul(2);
                }
                None => return (read, true),
            }
        }
    }

    /// `v`'s label (at the pinned version, under a pin): a primary-key lookup.
    fn label(&self, v: u64) -> u32 {
        let now = labels::vertex_label(self.db, v);
        self.pin.map_or(now, |pin| pin.pinned_label(v, now))
    }

    /// Drops from `out[from..]` the neighbors over arcs the filter does not keep, or into
    /// vertices it does not enter.
    fn keep_filtered(&self, out: &mut Vec<Neighbor>, from: usize) {
        if !self.filter.is_all() {
            let mut kept = from;
            for i in from..out.len() {
                let n = out[i];
                if self.filter.keeps(n.attrs.label) && self.enters(n.id) {
                    out[kept] = n;
                    kept += 1;
                }
            }
            out.truncate(kept);
        }
    }
}

/// Drops from `out[from..]`, neighbors of `v` just read, those over arcs that did not exist at
/// the pinned version, and gives the others their attributes then.
fn keep_pinned(pin: &Pin, v: u64, incoming: bool, out: &mut Vec<Neighbor>, from: usize) {
    let mut kept = from;
    for i in from..out.len() {
        let n = out[i];
        let (src, dst) = if incoming { (n.id, v) } else { (v, n.id) };
        if let Some(attrs) = pin.pinned_attrs(src, dst, n.attrs) {
            out[kept] = Neighbor { id: n.id, attrs };
            kept += 1;
        }
    }
    out.truncate(kept);
}
