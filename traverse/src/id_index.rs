//! Vertex id → slot, for [`crate::AdjacencyGraph`].
//!
//! Every query on the graph starts from vertex ids, and the searches that read it through
//! [`crate::NeighborSource`] look up each vertex they expand: on a 1M-vertex grid a hash lookup
//! was most of a weighted path's time (a cache miss into a large table each). When the ids are
//! not much sparser than the vertices, as in most graphs, a vector indexed by id does the same
//! in one load; the hash map stays for sparse ids.

use hashbrown::HashMap;

/// Ids are indexed densely while the largest is below this many times the number of ids, plus
/// [`MARGIN`]: 4 bytes per possible id, at most 16 per vertex, against about 16 in the map.
const SPREAD: u64 = 4;
const MARGIN: u64 = 1024;
/// A dense entry without a slot.
const NONE: u32 = u32::MAX;

fn dense_limit(ids: usize) -> u64 {
    SPREAD.saturating_mul(ids as u64).saturating_add(MARGIN)
}

/// Ids below the dense part's length are looked up there; the others (and any id inserted
/// while the dense part could not grow to it) in the map. An id that does not fit the dense
/// form therefore costs one map entry, never a conversion of the whole index: on a 4M-vertex
/// graph, turning the dense vector into a map took about half a second in wasm, all at once,
/// when a write added one vertex with an id far above the others.
#[derive(Debug, Clone, Default)]
pub(crate) struct IdIndex {
    /// `dense[id]`, [`NONE`] for an id without a slot there.
    dense: Vec<u32>,
    /// Ids with a slot in `dense`.
    dense_len: usize,
    sparse: HashMap<u64, u32>,
}

impl IdIndex {
    #[inline]
    pub(crate) fn get(&self, v: u64) -> Option<u32> {
        match usize::try_from(v).ok().and_then(|at| self.dense.get(at)) {
            Some(&slot) if slot != NONE => Some(slot),
            // An id below the dense part's length may still be in the map (it was inserted
            // before the dense part grew past it).
            _ if self.sparse.is_empty() => None,
            _ => self.sparse.get(&v).copied(),
        }
    }

    pub(crate) fn contains(&self, v: u64) -> bool {
        self.get(v).is_some()
    }

    pub(crate) fn len(&self) -> usize {
        self.dense_len + self.sparse.len()
    }

    /// Gives `v`, which has no slot, `slot`: in the dense part if it already reaches `v` or can
    /// grow to it within [`dense_limit`] (by doubling), else in the map.
    pub(crate) fn insert(&mut self, v: u64, slot: u32) {
        debug_assert!(!self.contains(v), "{v} already has a slot");
        let limit = dense_limit(self.len() + 1);
        if v < limit || v < self.dense.len() as u64 {
            let at = v as usize;
            if at >= self.dense.len() {
                let grown = self.dense.len().saturating_mul(2).max(at + 1);
                self.dense.resize(grown.min(limit as usize), NONE);
            }
            self.dense[at] = slot;
            self.dense_len += 1;
        } else {
            self.sparse.insert(v, slot);
        }
    }

    /// Takes `v`'s slot away; returns it.
    pub(crate) fn remove(&mut self, v: u64) -> Option<u32> {
        if let Some(entry) = usize::try_from(v)
            .ok()
            .and_then(|at| self.dense.get_mut(at))
            && *entry != NONE
        {
            self.dense_len -= 1;
            return Some(std::mem::replace(entry, NONE));
        }
        self.sparse.remove(&v)
    }

    /// Moves the map's ids into the dense part if they all fit it now, as after a build or a
    /// compaction (both already cost time in proportion to the graph).
    pub(crate) fn settle(&mut self) {
        let Some(max) = self.sparse.keys().copied().max() else {
            return;
        };
        if max >= dense_limit(self.len()) {
            return;
        }
        if max as usize >= self.dense.len() {
            self.dense.resize(max as usize + 1, NONE);
        }
        for (v, slot) in std::mem::take(&mut self.sparse) {
            self.dense[v as usize] = slot;
            self.dense_len += 1;
        }
    }

    /// Bytes of its allocations.
    pub(crate) fn heap_bytes(&self) -> usize {
        4 * self.dense.capacity() + self.sparse.allocation_size()
    }

    /// Whether every id is in the dense part.
    #[cfg(test)]
    fn is_dense(&self) -> bool {
        self.sparse.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Against a plain map, through growth, removals and settling.
    #[test]
    fn behaves_like_a_map_in_either_form() {
        let mut index = IdIndex::default();
        let mut model = BTreeMap::new();
        let mut slot = 0u32;
        let ids = (0..3_000u64)
            .map(|i| (i * 7) % 2_000)
            .chain([1 << 40, 5, 77])
            .chain(2_000..6_000);
        for (step, v) in ids.enumerate() {
            if let Some(had) = model.remove(&v) {
                assert_eq!(index.remove(v), Some(had));
            } else {
                index.insert(v, slot);
                model.insert(v, slot);
                slot += 1;
            }
            if step % 500 == 0 {
                index.settle();
            }
            if step % 97 == 0 {
                for probe in [v, v + 1, 1 << 40, u64::MAX] {
                    assert_eq!(index.get(probe), model.get(&probe).copied(), "{probe}");
                }
                assert_eq!(index.len(), model.len());
            }
        }
        index.settle();
        assert!(!index.is_dense(), "1 << 40 stays in the map");
        index.remove(1 << 40);
        model.remove(&(1 << 40));
        index.settle();
        assert!(index.is_dense());
        for (&v, &slot) in &model {
            assert_eq!(index.get(v), Some(slot));
        }
        assert_eq!(index.len(), model.len());
    }

    /// A far id joins the map; the dense part keeps every other id, and settling moves ids
    /// that came to fit back into it.
    #[test]
    fn a_far_id_costs_one_map_entry() {
        let mut index = IdIndex::default();
        for v in 0..10_000u64 {
            index.insert(v, v as u32);
        }
        assert!(index.is_dense());
        index.insert(u64::MAX - 1, 10_000);
        assert_eq!((index.dense_len, index.sparse.len()), (10_000, 1));
        assert_eq!(index.get(u64::MAX - 1), Some(10_000));
        assert_eq!(index.get(9_999), Some(9_999));
        assert_eq!(index.get(10_001), None);

        // Inserted while the dense part could not reach it (4 ids per vertex, plus a margin),
        // 45_000 goes to the map; once there are more vertices it fits, and settling moves it.
        index.insert(45_000, 10_001);
        assert_eq!(index.sparse.len(), 2);
        assert_eq!(index.remove(u64::MAX - 1), Some(10_000));
        for v in 10_000..12_000u64 {
            index.insert(v, v as u32 + 2);
        }
        index.settle();
        assert!(index.is_dense());
        assert_eq!((index.get(45_000), index.len()), (Some(10_001), 12_001));
        assert_eq!(index.get(u64::MAX - 1), None);
    }

    /// After removals the limit shrinks below the dense part's length; an id the dense part
    /// already reaches still goes there, not to the map.
    #[test]
    fn an_id_within_the_dense_part_stays_dense_after_removals() {
        let mut index = IdIndex::default();
        for v in 0..10_000u64 {
            index.insert(v, v as u32);
        }
        for v in 0..9_900u64 {
            assert_eq!(index.remove(v), Some(v as u32));
        }
        assert!(dense_limit(index.len() + 1) < 9_000);
        index.insert(9_000, 42);
        assert!(index.is_dense());
        assert_eq!((index.get(9_000), index.len()), (Some(42), 101));
    }
}
