//! Where a shortest-path search keeps the parent of every vertex it reached.

use hashbrown::HashMap;
use std::cell::RefCell;
use std::hash::Hash;

/// A vertex as a search keeps it, with the map of parents that suits it.
pub trait Vertex: Copy + Eq + Hash + Default {
    type Parents: Parents<Self>;
}

/// The parent of every vertex a search reached.
pub trait Parents<V>: Default + std::fmt::Debug {
    /// An empty map for vertices below `bound` (slots; ids ignore it).
    fn for_bound(bound: usize) -> Self;
    fn get(&self, v: V) -> Option<V>;
    /// Records `v`'s parent unless `v` has one; returns whether it was new.
    fn insert(&mut self, v: V, parent: V) -> bool;
    /// Makes room for `additional` more vertices without growing inside a step.
    fn reserve(&mut self, additional: usize);
    /// Vertices it holds room for (tests check that no step makes it grow).
    #[cfg(test)]
    fn capacity(&self) -> usize;
}

/// Vertex ids: any u64, so a hash map.
impl Vertex for u64 {
    type Parents = HashMap<u64, u64>;
}

impl Parents<u64> for HashMap<u64, u64> {
    fn for_bound(_bound: usize) -> Self {
        HashMap::default()
    }

    fn get(&self, v: u64) -> Option<u64> {
        HashMap::get(self, &v).copied()
    }

    fn insert(&mut self, v: u64, parent: u64) -> bool {
        match self.entry(v) {
            hashbrown::hash_map::Entry::Occupied(_) => false,
            hashbrown::hash_map::Entry::Vacant(e) => {
                e.insert(parent);
                true
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

/// One entry per slot: the parent is valid when `stamp` is the array's current stamp, so an
/// array is reused from search to search without being cleared (clearing one of a few MB would
/// cost more than most searches on it).
#[derive(Debug, Clone, Copy, Default)]
struct Entry {
    stamp: u32,
    parent: u32,
}

/// Parents by slot, in an array taken from a per-thread pool and given back on drop: a hash map
/// costs a hash and a probe per arc read, the array one load. Natively that makes the search
/// 2.6× faster; the module's wasm build measured no change (`results/path-parents/`). Costs
/// 8 bytes per slot while pooled.
#[derive(Debug, Default)]
pub struct SlotParents {
    entries: Vec<Entry>,
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
        let stamp = match last.checked_add(1) {
            Some(stamp) => stamp,
            None => {
                // Every stamp has been used: clear the entries that could match a new one.
                entries.fill(Entry::default());
                1
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
        (e.stamp == self.stamp).then_some(e.parent)
    }

    #[inline]
    fn insert(&mut self, v: u32, parent: u32) -> bool {
        let e = &mut self.entries[v as usize];
        if e.stamp == self.stamp {
            return false;
        }
        *e = Entry {
            stamp: self.stamp,
            parent,
        };
        true
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

    /// Runs on a thread of its own, so that no other test shares its pool.
    fn on_own_thread(f: impl FnOnce() + Send + 'static) {
        std::thread::spawn(f).join().expect("test thread");
    }

    #[test]
    fn a_reused_array_forgets_the_last_search() {
        on_own_thread(|| {
            let mut first = SlotParents::for_bound(10);
            assert!(first.insert(3, 7));
            assert!(!first.insert(3, 8), "a vertex keeps its first parent");
            assert_eq!(first.get(3), Some(7));
            drop(first);
            // The same array, a larger bound: nothing of the first search is visible.
            let mut second = SlotParents::for_bound(20);
            assert_eq!(second.get(3), None);
            assert!(second.insert(19, 3));
            assert_eq!(second.get(19), Some(3));
        });
    }

    #[test]
    fn searches_alive_together_do_not_share_an_array() {
        on_own_thread(|| {
            let mut a = SlotParents::for_bound(4);
            let mut b = SlotParents::for_bound(4);
            assert!(a.insert(1, 1));
            assert_eq!(b.get(1), None);
            assert!(b.insert(1, 2));
            assert_eq!((a.get(1), b.get(1)), (Some(1), Some(2)));
        });
    }

    #[test]
    fn when_stamps_run_out_the_array_is_cleared() {
        on_own_thread(|| {
            let mut last = SlotParents::for_bound(4);
            last.stamp = u32::MAX;
            assert!(last.insert(2, 0));
            drop(last);
            // The next stamp would wrap to 0, which every fresh entry holds, then to 1, which
            // stale entries may hold: the array must come back empty.
            let stale = Entry {
                stamp: 1,
                parent: 3,
            };
            POOL.with_borrow_mut(|pool| pool[0].0[1] = stale);
            let next = SlotParents::for_bound(4);
            assert_eq!(next.stamp, 1);
            assert!((0..4).all(|v| next.get(v).is_none()));
        });
    }
}
