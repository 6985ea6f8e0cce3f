use hashbrown::HashSet;

/// Largest id bound for which a dense bitset is used (2^28 bits = 32 MiB).
const DENSE_LIMIT: u64 = 1 << 28;

/// A set of vertex ids: a bitset when ids are known to be small, a hash set otherwise.
///
/// Ids at or above the bound (e.g. vertices added while a multi-transaction traversal runs) fall
/// back to an overflow hash set, so a wrong bound costs speed, never correctness. The word
/// index of an id is checked, never truncated: on wasm32, where `usize` has 32 bits, `as usize`
/// would send an id of 2^38 or more to the word of a small id.
#[derive(Debug, Clone)]
pub struct Visited {
    bits: Vec<u64>,
    overflow: HashSet<u64>,
    len: usize,
}

impl Visited {
    /// A set sized for ids `< id_bound` when that is known and small enough to be dense.
    pub fn new(id_bound: Option<u64>) -> Self {
        let words = match id_bound {
            Some(bound) if bound <= DENSE_LIMIT => bound.div_ceil(64) as usize,
            _ => 0,
        };
        Self {
            bits: vec![0; words],
            overflow: HashSet::new(),
            len: 0,
        }
    }

    /// Inserts `v`; returns whether it was new.
    pub fn insert(&mut self, v: u64) -> bool {
        let new = match word(v).and_then(|w| self.bits.get_mut(w)) {
            Some(word) => {
                let mask = 1u64 << (v % 64);
                let new = *word & mask == 0;
                *word |= mask;
                new
            }
            None => self.overflow.insert(v),
        };
        self.len += new as usize;
        new
    }

    /// Makes room for `additional` more ids without rehashing (a no-op for the dense bitset).
    pub fn reserve(&mut self, additional: usize) {
        if self.bits.is_empty() {
            self.overflow.reserve(additional);
        }
    }

    pub fn contains(&self, v: u64) -> bool {
        match word(v).and_then(|w| self.bits.get(w)) {
            Some(word) => word & (1u64 << (v % 64)) != 0,
            None => self.overflow.contains(&v),
        }
    }

    /// Ids the overflow set holds room for (tests check that no step makes it grow).
    #[cfg(test)]
    pub(crate) fn capacity(&self) -> usize {
        self.overflow.capacity()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The index of `v`'s word in the bitset, if it fits a `usize`.
#[inline]
fn word(v: u64) -> Option<usize> {
    usize::try_from(v / 64).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_sparse_and_overflow_agree() {
        for bound in [None, Some(0), Some(10), Some(1000)] {
            let mut set = Visited::new(bound);
            for v in [0, 5, 63, 64, 999, 1000, 1 << 40, 5] {
                set.insert(v);
            }
            assert_eq!(set.len(), 7, "bound {bound:?}");
            for v in [0, 5, 63, 64, 999, 1000, 1 << 40] {
                assert!(set.contains(v));
            }
            for v in [1, 65, 998, 1001] {
                assert!(!set.contains(v));
            }
        }
    }
}
