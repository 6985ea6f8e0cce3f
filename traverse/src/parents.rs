//! Where a bidirectional shortest-path search keeps the parent of every vertex it reached, and
//! which of its two halves reached it: one map for both halves, so that the arc that finds a
//! vertex asks once whether this half knows it, the other half knows it (a meeting), or it is
//! new. Until they meet, the halves' sets are disjoint, so a vertex has one entry.

use hashbrown::HashMap;
use std::cell::RefCell;
use std::hash::Hash;

/// Which half of a bidirectional search: grown from the source or from the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Half {
    Forward,
    Backward,
}

/// A vertex as a search keeps it, with the map of parents that suits it.
pub trait Vertex: Copy + Eq + Hash + Default {
    type Parents: Parents<Self>;
}

/// The parent of every vertex a search reached, and the half that reached it.
pub trait Parents<V>: Default + std::fmt::Debug {
    /// An empty map for vertices below `bound` (slots; ids ignore it).
    fn for_bound(bound: usize) -> Self;
    /// `v`'s parent, if a half reached `v`.
    fn get(&self, v: V) -> Option<V>;
    /// Records that `half` reached `v` from `parent`, unless a half already reached `v`:
    /// returns that half then (and records nothing), `None` if `v` was new.
    fn insert(&mut self, v: V, parent: V, half: Half) -> Option<Half>;
    /// Makes room for `additional` more vertices without growing inside a step.
    fn reserve(&mut self, additional: usize);
    /// Vertices it holds room for (tests check that no step makes it grow).
    #[cfg(test)]
    fn capacity(&self) -> usize;
}

/// Vertex ids: any u64, so a hash map.
impl Vertex for u64 {
    type Parents = HashMap<u64, (u64, Half)>;
}

impl Parents<u64> for HashMap<u64, (u64, Half)> {
    fn for_bound(_bound: usize) -> Self {
        HashMap::default()
    }

    fn get(&self, v: u64) -> Option<u64> {
        HashMap::get(self, &v).map(|&(parent, _)| parent)
    }

    fn insert(&mut self, v: u64, parent: u64, half: Half) -> Option<Half> {
        match self.entry(v) {
            hashbrown::hash_map::Entry::Occupied(e) => Some(e.get().1),
            hashbrown::hash_map::Entry::Vacant(e) => {
                e.insert((parent, half));
                None
            }
        }
    }

    fn reserve(&mut self, additional: usize) {
        HashMap::reserve(self, additional);
    }

    #[cfg(test)]
    fn capacity(&self) -> usize {
        HashMap::capacity(self)
    }
}

/// Slots: dense and bounded, so an array indexed by slot.
impl Vertex for u32 {
    type Parents = SlotParents;
}

/// One entry per slot: the parent is valid when `stamp`, its lowest bit cleared, is the
/// array's current stamp (always even), and that bit says which half reached the slot. An array
/// is so reused from search to search without being cleared (clearing one of a few MB would
/// cost more than most searches on it).
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    stamp: u32,
    parent: u32,
}

/// Parents by slot, in an array taken from a per-thread pool and given back on drop: a hash map
/// costs a hash and a probe per arc read, the array one load. Natively that made the search
/// 2.6× faster (`results/path-parents/`). Costs 8 bytes per slot while pooled.
#[derive(Debug, Default)]
pub struct SlotParents {
    entries: Vec<Entry>,
    /// Even; `stamp | 1` marks the backward half's entries.
    stamp: u32,
}

/// Arrays kept for reuse per thread, each with the last stamp it used. A module instance runs
/// one search at a time, but a search can be suspended while another starts, so a few are kept.
const POOLED: usize = 2;

thread_local! {
    static POOL: RefCell<Vec<(Vec<Entry>, u32)>> = const { RefCell::new(Vec::new()) };
}

impl Parents<u32> for SlotParents {
    fn for_bound(bound: usize) -> Self {
        let (mut entries, last) = POOL.with_borrow_mut(Vec::pop).unwrap_or_default();
        // Fresh entries hold stamp 0, which no search uses.
        let stamp = match last.checked_add(2) {
            Some(stamp) => stamp,
            None => {
                // Every stamp has been used: clear the entries that could match a new one.
                entries.fill(Entry::default());
                2
            }
        };
        if entries.len() < bound {
            entries.resize(bound, Entry::default());
        }
        Self { entries, stamp }
    }

    #[inline]
    fn get(&self, v: u32) -> Option<u32> {
        let e = self.entries[v as usize];
        (e.stamp & !1 == self.stamp).then_some(e.parent)
    }

    #[inline]
    fn insert(&mut self, v: u32, parent: u32, half: Half) -> Option<Half> {
        let e = &mut self.entries[v as usize];
        if e.stamp & !1 == self.stamp {
            return Some(if e.stamp & 1 == 0 {
                Half::Forward
            } else {
                Half::Backward
            });
        }
        *e = Entry {
            stamp: self.stamp | u32::from(half == Half::Backward),
            parent,
        };
        None
    }

    /// Nothing grows: the array covers every slot from the start.
    fn reserve(&mut self, _additional: usize) {}

    #[cfg(test)]
    fn capacity(&self) -> usize {
        self.entries.capacity()
    }
}

impl Drop for SlotParents {
    fn drop(&mut self) {
        let entries = std::mem::take(&mut self.entries);
        if entries.is_empty() {
            return;
        }
        // `try_with`: a thread being torn down drops the array instead.
        let _ = POOL.try_with(|pool| {
            let mut pool = pool.borrow_mut();
            if pool.len() < POOLED {
                pool.push((entries, self.stamp));
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Half::{Backward, Forward};

    /// Runs on a thread of its own, so that no other test shares its pool.
    fn on_own_thread(f: impl FnOnce() + Send + 'static) {
        std::thread::spawn(f).join().expect("test thread");
    }

    #[test]
    fn a_vertex_keeps_its_first_half_and_parent() {
        fn check<P: Parents<V>, V: Vertex + From<u8> + std::fmt::Debug>() {
            let v = V::from;
            let mut p = P::for_bound(10);
            assert_eq!(p.insert(v(3), v(7), Forward), None);
            assert_eq!(p.insert(v(3), v(8), Backward), Some(Forward));
            assert_eq!(p.insert(v(3), v(9), Forward), Some(Forward));
            assert_eq!(p.insert(v(4), v(4), Backward), None);
            assert_eq!(p.insert(v(4), v(3), Forward), Some(Backward));
            assert_eq!(
                (p.get(v(3)), p.get(v(4)), p.get(v(5))),
                (Some(v(7)), Some(v(4)), None)
            );
        }
        check::<HashMap<u64, (u64, Half)>, u64>();
        on_own_thread(check::<SlotParents, u32>);
    }

    #[test]
    fn a_reused_array_forgets_the_last_search() {
        on_own_thread(|| {
            let mut first = SlotParents::for_bound(10);
            assert_eq!(first.insert(3, 7, Forward), None);
            assert_eq!(first.insert(5, 5, Backward), None);
            drop(first);
            // The same array, a larger bound: nothing of the first search is visible, whichever
            // half wrote it.
            let mut second = SlotParents::for_bound(20);
            assert_eq!((second.get(3), second.get(5)), (None, None));
            assert_eq!(second.insert(5, 1, Forward), None);
            assert_eq!(second.insert(19, 3, Backward), None);
            assert_eq!((second.get(5), second.get(19)), (Some(1), Some(3)));
        });
    }

    #[test]
    fn searches_alive_together_do_not_share_an_array() {
        on_own_thread(|| {
            let mut a = SlotParents::for_bound(4);
            let mut b = SlotParents::for_bound(4);
            assert_eq!(a.insert(1, 1, Forward), None);
            assert_eq!(b.get(1), None);
            assert_eq!(b.insert(1, 2, Backward), None);
            assert_eq!((a.get(1), b.get(1)), (Some(1), Some(2)));
        });
    }

    #[test]
    fn when_stamps_run_out_the_array_is_cleared() {
        on_own_thread(|| {
            let mut last = SlotParents::for_bound(4);
            last.stamp = u32::MAX - 1;
            assert_eq!(last.insert(2, 0, Backward), None);
            assert_eq!(last.get(2), Some(0));
            drop(last);
            // The next stamp would wrap to 0, which every fresh entry holds, then to 2, which
            // stale entries may hold: the array must come back empty.
            let stale = Entry {
                stamp: 3,
                parent: 3,
            };
            POOL.with_borrow_mut(|pool| pool[0].0[1] = stale);
            let next = SlotParents::for_bound(4);
            assert_eq!(next.stamp, 2);
            assert!((0..4).all(|v| next.get(v).is_none()));
        });
    }
}
