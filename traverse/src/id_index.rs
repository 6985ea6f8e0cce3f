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

#[derive(Debug, Clone)]
pub(crate) enum IdIndex {
    /// `slots[id]` ([`NONE`] for an id without one) and how many ids have one.
    Dense {
        slots: Vec<u32>,
        len: usize,
    },
    Sparse(HashMap<u64, u32>),
}

impl Default for IdIndex {
    fn default() -> Self {
        IdIndex::Sparse(HashMap::new())
    }
}

impl IdIndex {
    #[inline]
    pub(crate) fn get(&self, v: u64) -> Option<u32> {
        match self {
            IdIndex::Dense { slots, .. } => {
                let slot = *slots.get(usize::try_from(v).ok()?)?;
                (slot != NONE).then_some(slot)
            }
            IdIndex::Sparse(map) => map.get(&v).copied(),
        }
    }

    pub(crate) fn contains(&self, v: u64) -> bool {
        self.get(v).is_some()
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            IdIndex::Dense { len, .. } => *len,
            IdIndex::Sparse(map) => map.len(),
        }
    }

    /// Gives `v`, which has no slot, `slot`. A dense index that `v` would make too sparse
    /// becomes a map.
    pub(crate) fn insert(&mut self, v: u64, slot: u32) {
        debug_assert!(!self.contains(v), "{v} already has a slot");
        if let IdIndex::Dense { slots, len } = self {
            if v < dense_limit(*len + 1) {
                let at = v as usize;
                if at >= slots.len() {
                    let grown = slots.len().saturating_mul(2).max(at + 1);
                    slots.resize(grown.min(dense_limit(*len + 1) as usize), NONE);
                }
                slots[at] = slot;
                *len += 1;
                return;
            }
            let map = Self::pairs(slots).collect();
            *self = IdIndex::Sparse(map);
        }
        if let IdIndex::Sparse(map) = self {
            map.insert(v, slot);
        }
    }

    /// Takes `v`'s slot away; returns it.
    pub(crate) fn remove(&mut self, v: u64) -> Option<u32> {
        match self {
            IdIndex::Dense { slots, len } => {
                let entry = slots.get_mut(usize::try_from(v).ok()?)?;
                let slot = std::mem::replace(entry, NONE);
                (slot != NONE).then(|| {
                    *len -= 1;
                    slot
                })
            }
            IdIndex::Sparse(map) => map.remove(&v),
        }
    }

    /// Room for `n` more ids (a map's; a dense index grows with the ids it meets).
    pub(crate) fn reserve(&mut self, n: usize) {
        if let IdIndex::Sparse(map) = self {
            map.reserve(n);
        }
    }

    /// Switches to the dense form if the ids now fit it, as after a build or a compaction.
    pub(crate) fn settle(&mut self) {
        let IdIndex::Sparse(map) = self else {
            return;
        };
        let max = map.keys().copied().max();
        if max.is_some_and(|max| max >= dense_limit(map.len())) {
            return;
        }
        let mut slots = vec![NONE; max.map_or(0, |max| max as usize + 1)];
        for (&v, &slot) in map.iter() {
            slots[v as usize] = slot;
        }
        *self = IdIndex::Dense {
            slots,
            len: map.len(),
        };
    }

    fn pairs(slots: &[u32]) -> impl Iterator<Item = (u64, u32)> + '_ {
        slots
            .iter()
            .enumerate()
            .filter(|&(_, &slot)| slot != NONE)
            .map(|(v, &slot)| (v as u64, slot))
    }

    /// Bytes of its allocations.
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            IdIndex::Dense { slots, .. } => 4 * slots.capacity(),
            IdIndex::Sparse(map) => map.allocation_size(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Against a plain map, through growth, removals and both conversions.
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
        assert!(
            matches!(index, IdIndex::Sparse(_)),
            "1 << 40 keeps it sparse"
        );
        index.remove(1 << 40);
        model.remove(&(1 << 40));
        index.settle();
        assert!(matches!(index, IdIndex::Dense { .. }));
        for (&v, &slot) in &model {
            assert_eq!(index.get(v), Some(slot));
        }
        assert_eq!(index.len(), model.len());
    }
}
