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

/// An arc's attributes at the pinned version (`None`: it did not exist), whether it exists
/// now, and where it is listed in `Pin::touching`: `at[0]` in its source's list, `at[1]` in its
/// target's (a self-loop is listed once).
#[derive(Debug, Clone, Copy)]
struct ArcPresence {
    then: Option<ArcAttrs>,
    now: bool,
    at: [usize; 2],
}

/// What changed since a pinned version, as far as a traversal needs to undo it.
#[derive(Debug, Default)]
pub struct Pin {
    version: u64,
    /// The last version whose changes have been read.
    seen: u64,
    /// Arcs changed since `version`, except those created since and gone again: as if they
    /// never were (a writer that adds and removes edges would otherwise fill these maps with
    /// every change; see `results/export/`).
    arcs: HashMap<(u64, u64), ArcPresence>,
    /// For each vertex, the arcs of `arcs` that touch it.
    touching: HashMap<u64, Vec<(u64, u64)>>,
    /// Vertices inserted or removed since `version`, except those created since and gone again.
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
                self.take_in(changes);
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

    /// Takes in `changes`, ordered by version and in any order within one (the log keeps the
    /// changes of a version as a set).
    fn take_in(&mut self, changes: Vec<Change>) {
        let mut vertices_changed = Vec::new();
        for change in changes {
            if let Change::InsertVertex(v) | Change::RemoveVertex(v) = change {
                vertices_changed.push(v);
            }
            self.note(change);
        }
        if vertices_changed.is_empty() {
            return;
        }
        // Only the labels of vertices that existed at the pinned version matter. A vertex
        // created since may have been relabelled before its insertion was noted, or after its
        // removal (one version's changes come in any order): forget those labels here.
        for v in vertices_changed {
            if self.vertices.get(&v).is_none_or(|p| !p.then) {
                self.labels.remove(&v);
            }
        }
        self.list_removed();
    }

    fn note(&mut self, change: Change) {
        match change {
            Change::InsertArc { src, dst, .. } => self.note_arc(src, dst, None),
            Change::RemoveArc { src, dst, attrs } => self.note_arc(src, dst, Some(attrs)),
            Change::InsertVertex(v) => note(&mut self.vertices, v, true),
            Change::RemoveVertex(v) => note(&mut self.vertices, v, false),
            Change::RelabelVertex { v, from, .. } => {
                // The first relabelling since the pinned version says what the label was then,
                // unless the vertex did not exist then.
                if self.vertices.get(&v).is_none_or(|p| p.then) {
                    self.labels.entry(v).or_insert(from);
                }
            }
        }
    }

    /// Keeps `removed` in step with `vertices`.
    fn list_removed(&mut self) {
        self.removed = (self.vertices.iter())
            .filter(|(_, p)| p.then && !p.now)
            .map(|(&v, _)| v)
            .collect();
        self.removed.sort_unstable();
    }

    /// Records a change of the arc `src → dst`: an insertion (`removed` is `None`) or a removal
    /// of an arc with attributes `removed`. Only changes that took effect are logged, so the
    /// first change of an arc tells whether, and how, it existed at the pinned version; an arc
    /// created since and removed again is forgotten, and if it comes back, its insertion is
    /// again the first change.
    fn note_arc(&mut self, src: u64, dst: u64, removed: Option<ArcAttrs>) {
        let now = removed.is_none();
        match self.arcs.entry((src, dst)) {
            Entry::Occupied(e) if e.get().then.is_none() && !now => {
                let at = e.remove().at;
                self.unlist(src, at[0]);
                if dst != src {
                    self.unlist(dst, at[1]);
                }
            }
            Entry::Occupied(mut e) => e.get_mut().now = now,
            Entry::Vacant(e) => {
                let mut list = |v: u64| {
                    let list = self.touching.entry(v).or_default();
                    list.push((src, dst));
                    list.len() - 1
                };
                let at = [list(src), if dst != src { list(dst) } else { 0 }];
                e.insert(ArcPresence {
                    then: removed,
                    now,
                    at,
                });
            }
        }
    }

    /// Takes the arc at position `i` out of `v`'s `touching` list; the list's last arc takes its
    /// place.
    fn unlist(&mut self, v: u64, i: usize) {
        let Entry::Occupied(mut list) = self.touching.entry(v) else {
            unreachable!("a kept arc is listed at both ends");
        };
        list.get_mut().swap_remove(i);
        match list.get().get(i) {
            Some(&moved) => {
                let slot = usize::from(moved.0 != v);
                self.arcs.get_mut(&moved).expect("listed arcs are kept").at[slot] = i;
            }
            None if list.get().is_empty() => {
                list.remove();
            }
            None => {}
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
/// pinned version (only changes that took effect are logged). A key created since and gone
/// again is forgotten.
fn note<K: std::hash::Hash + Eq>(map: &mut HashMap<K, Presence>, key: K, now: bool) {
    match map.entry(key) {
        Entry::Occupied(e) if !e.get().then && !now => {
            e.remove();
        }
        Entry::Occupied(mut e) => e.get_mut().now = now,
        Entry::Vacant(e) => {
            e.insert(Presence { then: !now, now });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::collections::BTreeMap;

    type Arcs = BTreeMap<(u64, u64), ArcAttrs>;

    fn degree(arcs: &Arcs, v: u64, dir: Direction) -> u64 {
        let out = arcs.keys().filter(|a| a.0 == v).count();
        let inc = arcs.keys().filter(|a| a.1 == v).count();
        (match dir {
            Direction::Out => out,
            Direction::In => inc,
            Direction::Both => out + inc,
        }) as u64
    }

    /// Random graphs and random effective changes, many of them edges added and removed again:
    /// the pin undoes them exactly, keeps only what still differs, and lists it where it says.
    #[test]
    fn a_pin_undoes_every_change_and_forgets_what_came_and_went() {
        for seed in 0..300u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let n = rng.gen_range(1..10u64);
            let attrs = |rng: &mut ChaCha8Rng| ArcAttrs {
                label: rng.gen_range(0..3),
                weight: rng.gen_range(0..3) as f32,
            };
            let mut then = Arcs::new();
            for _ in 0..rng.gen_range(0..n * n) {
                then.insert((rng.gen_range(0..n), rng.gen_range(0..n)), attrs(&mut rng));
            }
            let vertices_then: Vec<bool> = (0..n).map(|_| rng.gen_bool(0.7)).collect();
            let labels_then: Vec<u32> = (vertices_then.iter())
                .map(|&exists| if exists { rng.gen_range(0..3) } else { 0 })
                .collect();
            let (mut now, mut vertices_now) = (then.clone(), vertices_then.clone());
            let mut labels_now = labels_then.clone();
            let mut pin = Pin::new(0);
            // Writes, each one version, as the reducers log them; the pin takes in a few versions
            // at a time, each version's changes in any order.
            let mut versions: Vec<Vec<Change>> = Vec::new();
            for _ in 0..rng.gen_range(0..200) {
                let arc = (rng.gen_range(0..n), rng.gen_range(0..n));
                let v = rng.gen_range(0..n);
                let mut version = Vec::new();
                match (rng.gen_range(0..5), now.get(&arc)) {
                    (0, _) if vertices_now[v as usize] => {
                        // `remove_vertex`: its arcs, its label, itself.
                        let touching: Vec<_> = (now.keys())
                            .filter(|a| a.0 == v || a.1 == v)
                            .copied()
                            .collect();
                        for (src, dst) in touching {
                            let attrs = now.remove(&(src, dst)).unwrap();
                            version.push(Change::RemoveArc { src, dst, attrs });
                        }
                        let from = std::mem::take(&mut labels_now[v as usize]);
                        if from != 0 {
                            version.push(Change::RelabelVertex { v, from, to: 0 });
                        }
                        vertices_now[v as usize] = false;
                        version.push(Change::RemoveVertex(v));
                    }
                    (1, _) => {
                        // `set_vertex_labels`: creates the vertex if need be.
                        if !vertices_now[v as usize] {
                            vertices_now[v as usize] = true;
                            version.push(Change::InsertVertex(v));
                        }
                        let to = rng.gen_range(0..3);
                        let from = std::mem::replace(&mut labels_now[v as usize], to);
                        if from != to {
                            version.push(Change::RelabelVertex { v, from, to });
                        }
                    }
                    (0, _) => {
                        vertices_now[v as usize] = true;
                        version.push(Change::InsertVertex(v));
                    }
                    (_, Some(&attrs)) => {
                        now.remove(&arc);
                        let (src, dst) = arc;
                        version.push(Change::RemoveArc { src, dst, attrs });
                    }
                    (_, None) => {
                        let a = attrs(&mut rng);
                        now.insert(arc, a);
                        let (src, dst) = arc;
                        version.push(Change::InsertArc { src, dst, attrs: a });
                    }
                }
                version.shuffle(&mut rng);
                versions.push(version);
            }
            while !versions.is_empty() {
                let batch = versions.len().min(rng.gen_range(1..5));
                pin.take_in(versions.drain(..batch).flatten().collect());
            }
            for v in 0..n {
                for dir in [Direction::Out, Direction::In, Direction::Both] {
                    let got = pin.degree(v, dir, degree(&now, v, dir));
                    assert_eq!(got, degree(&then, v, dir), "seed {seed}, {v} {dir:?}");
                }
                let (existed, exists) = (vertices_then[v as usize], vertices_now[v as usize]);
                assert_eq!(
                    pin.vertex_existed(v).unwrap_or(exists),
                    existed,
                    "seed {seed}"
                );
                assert_eq!(pin.removed_vertices().contains(&v), existed && !exists);
                if existed {
                    let label = pin.pinned_label(v, labels_now[v as usize]);
                    assert_eq!(label, labels_then[v as usize], "seed {seed}, vertex {v}");
                }
                // The arcs out of `v` then: those that are there now as they were, and those
                // `restore` gives back.
                let mut restored = Vec::new();
                pin.restore(v, false, &mut restored);
                let mut out: Vec<(u64, ArcAttrs)> = (now.iter())
                    .filter(|(a, _)| a.0 == v)
                    .filter_map(|(a, &attrs)| Some((a.1, pin.pinned_attrs(a.0, a.1, attrs)?)))
                    .chain(restored.iter().map(|n| (n.id, n.attrs)))
                    .collect();
                out.sort_by_key(|&(id, _)| id);
                out.dedup_by_key(|&mut (id, _)| id);
                let want: Vec<(u64, ArcAttrs)> = (then.iter())
                    .filter(|(a, _)| a.0 == v)
                    .map(|(a, &attrs)| (a.1, attrs))
                    .collect();
                assert_eq!(out, want, "seed {seed}, vertex {v}");
            }
            // What came and went is forgotten; the rest is listed at both ends, where it says.
            for (&(src, dst), p) in &pin.arcs {
                assert!(p.then.is_some() || p.now, "seed {seed}: {src}→{dst} kept");
                assert_eq!(pin.touching[&src][p.at[0]], (src, dst));
                if dst != src {
                    assert_eq!(pin.touching[&dst][p.at[1]], (src, dst));
                }
            }
            let listed: usize = pin.touching.values().map(Vec::len).sum();
            let kept: usize = pin
                .arcs
                .keys()
                .map(|a| if a.0 == a.1 { 1 } else { 2 })
                .sum();
            assert_eq!(listed, kept, "seed {seed}");
            assert!(pin.vertices.values().all(|p| p.then || p.now));
            // Labels are kept only for vertices that existed at the pinned version.
            assert!(
                pin.labels.keys().all(|&v| vertices_then[v as usize]),
                "seed {seed}"
            );
        }
    }
}
