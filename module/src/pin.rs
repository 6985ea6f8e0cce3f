//! One version per answer for traversals that read the indexes across many transactions.
//!
//! Writers commit between a traversal's transactions, so the indexes it reads move under it. A
//! [`Pin`] remembers the version the traversal started on and, in each later transaction, reads
//! from the change log what was written since; [`crate::source::IndexSource`] then hides arcs
//! and vertices that did not exist at the pinned version and restores those that were removed
//! since. The traversal thus answers exactly for the pinned version. If the log no longer holds
//! a change it needs (trimmed, or reset by a bulk load or `clear_graph`), the pin is *lost*: the
//! traversal carries on over the moving indexes and its stats say so (`QueryStats::pinned`).

use crate::changelog;
use crate::types::QueryStats;
use graph_traverse::{ArcAttrs, Change, Direction, Neighbor};
use hashbrown::HashMap;
use hashbrown::hash_map::Entry;
use spacetimedb::Local;

/// Whether a vertex existed at the pinned version, and whether it exists now.
#[derive(Debug, Clone, Copy)]
struct Presence {
    then: bool,
    now: bool,
}

/// An arc's attributes at the pinned version (`None`: it did not exist), and whether it exists
/// now.
#[derive(Debug, Clone, Copy)]
struct ArcPresence {
    then: Option<ArcAttrs>,
    now: bool,
}

/// What changed since a pinned version, as far as a traversal needs to undo it.
#[derive(Debug, Default)]
pub struct Pin {
    version: u64,
    /// The last version whose changes have been read.
    seen: u64,
    /// Arcs changed since `version`.
    arcs: HashMap<(u64, u64), ArcPresence>,
    /// For each vertex, the changed arcs that touch it.
    touching: HashMap<u64, Vec<(u64, u64)>>,
    /// Vertices inserted or removed since `version`.
    vertices: HashMap<u64, Presence>,
    /// The labels at `version` of vertices relabelled since.
    labels: HashMap<u64, u32>,
    /// The vertices that existed at `version` and do not now, ascending (kept from `vertices`
    /// by `follow`: an export asks for them on every page).
    removed: Vec<u64>,
    lost: bool,
}

impl Pin {
    /// Pins `version`, the version the traversal's first transaction read.
    pub fn new(version: u64) -> Self {
        Self {
            version,
            seen: version,
            ..Self::default()
        }
    }

    /// Inside a transaction that reads the graph at version `now` (or a later one): takes in
    /// the changes committed since the last call up to version `now`, or loses the pin if the
    /// log no longer holds them. Returns how many changes it read.
    pub fn follow(&mut self, db: &Local, now: u64) -> u64 {
        if self.lost || now <= self.seen {
            return 0;
        }
        match changelog::read(db, self.seen + 1..=now) {
            Some(changes) => {
                let read = changes.len() as u64;
                let mut vertices_changed = false;
                for change in changes {
                    vertices_changed |=
                        matches!(change, Change::InsertVertex(_) | Change::RemoveVertex(_));
                    self.note(change);
                }
                if vertices_changed {
                    self.removed = (self.vertices.iter())
                        .filter(|(_, p)| p.then && !p.now)
                        .map(|(&v, _)| v)
                        .collect();
                    self.removed.sort_unstable();
                }
                self.seen = now;
                read
            }
            None => {
                log::warn!(
                    "a traversal pinned at version {} lost its pin at version {now}: the change \
                     log no longer covers version {}",
                    self.version,
                    self.seen + 1
                );
                *self = Self {
                    version: self.version,
                    seen: now,
                    lost: true,
                    ..Self::default()
                };
                0
            }
        }
    }

    fn note(&mut self, change: Change) {
        match change {
            Change::InsertArc { src, dst, .. } => self.note_arc(src, dst, None),
            Change::RemoveArc { src, dst, attrs } => self.note_arc(src, dst, Some(attrs)),
            Change::InsertVertex(v) => {
                note(&mut self.vertices, v, true);
            }
            Change::RemoveVertex(v) => {
                note(&mut self.vertices, v, false);
            }
            Change::RelabelVertex { v, from, .. } => {
                // The first relabelling since the pinned version says what it was then.
                self.labels.entry(v).or_insert(from);
            }
        }
    }

    /// Records a change of the arc `src → dst`: an insertion (`removed` is `None`) or a removal
    /// of an arc with attributes `removed`. Only changes that took effect are logged, so the
    /// first change of an arc tells whether, and how, it existed at the pinned version.
    fn note_arc(&mut self, src: u64, dst: u64, removed: Option<ArcAttrs>) {
        let now = removed.is_none();
        match self.arcs.entry((src, dst)) {
            Entry::Occupied(mut e) => e.get_mut().now = now,
            Entry::Vacant(e) => {
                e.insert(ArcPresence { then: removed, now });
                self.touching.entry(src).or_default().push((src, dst));
                if dst != src {
                    self.touching.entry(dst).or_default().push((src, dst));
                }
            }
        }
    }

    /// The attributes at the pinned version of an arc the indexes hold now with `current`
    /// ones: `None` if it did not exist then.
    #[inline]
    pub fn pinned_attrs(&self, src: u64, dst: u64, current: ArcAttrs) -> Option<ArcAttrs> {
        if self.arcs.is_empty() {
            return Some(current);
        }
        match self.arcs.get(&(src, dst)) {
            None => Some(current),
            Some(p) => p.then,
        }
    }

    /// Appends to `out` the neighbors of `v` over arcs that existed at the pinned version and
    /// have changed since (with their attributes then): targets of outgoing arcs, or sources of
    /// incoming ones if `incoming`. Called at the end of a list read in pages across
    /// transactions, whose scan may have passed such an arc while it was gone, whether or not
    /// it is back now; the pages may have read it too, and the operator tolerates duplicates.
    pub fn restore(&self, v: u64, incoming: bool, out: &mut Vec<Neighbor>) {
        for &(src, dst) in self.touching.get(&v).into_iter().flatten() {
            if let Some(attrs) = self.arcs[&(src, dst)].then {
                match incoming {
                    false if src == v => out.push(Neighbor { id: dst, attrs }),
                    true if dst == v => out.push(Neighbor { id: src, attrs }),
                    _ => {}
                }
            }
        }
    }

    /// `v`'s degree in `dir` at the pinned version, given its degree now.
    pub fn degree(&self, v: u64, dir: Direction, now: u64) -> u64 {
        let mut degree = now as i64;
        for &(src, dst) in self.touching.get(&v).into_iter().flatten() {
            let p = self.arcs[&(src, dst)];
            let counted = match dir {
                Direction::Out => src == v,
                Direction::In => dst == v,
                Direction::Both => true,
            };
            let then = p.then.is_some();
            if counted && then != p.now {
                // A self-loop counts once in each direction.
                let times = if dir == Direction::Both && src == dst {
                    2
                } else {
                    1
                };
                degree += if then { times } else { -times };
            }
        }
        degree.max(0) as u64
    }

    /// `v`'s label at the pinned version, given its label now.
    #[inline]
    pub fn pinned_label(&self, v: u64, now: u32) -> u32 {
        self.labels.get(&v).copied().unwrap_or(now)
    }

    /// Whether `v` existed at the pinned version, if it was inserted or removed since.
    pub fn vertex_existed(&self, v: u64) -> Option<bool> {
        self.vertices.get(&v).map(|p| p.then)
    }

    pub fn version(&self) -> u64 {
        self.version
    }

    /// The last version whose changes it has taken in.
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// Whether the change log failed to cover a change since the pinned version.
    pub fn is_lost(&self) -> bool {
        self.lost
    }

    /// The vertices that existed at the pinned version and do not now, ascending.
    pub fn removed_vertices(&self) -> &[u64] {
        &self.removed
    }

    /// Records in `stats` which version the answer is for and whether it is exactly that one.
    pub fn stamp(&self, stats: &mut QueryStats) {
        stats.version = self.version;
        stats.pinned = !self.lost;
    }
}

/// Records that `key` exists `now`; the first change of a key tells whether it existed at the
/// pinned version (only changes that took effect are logged). Returns whether `key` is new.
fn note<K: std::hash::Hash + Eq>(map: &mut HashMap<K, Presence>, key: K, now: bool) -> bool {
    match map.entry(key) {
        Entry::Occupied(mut e) => {
            e.get_mut().now = now;
            false
        }
        Entry::Vacant(e) => {
            e.insert(Presence { then: !now, now });
            true
        }
    }
}
