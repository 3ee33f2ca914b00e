//! The group index of a table keyed by two integer-like columns (GROUP BY
//! a pair of ids, a hash join on (partkey, suppkey)): an [`OpenIndex`]
//! whose slots hold both keys beside the group number, so that a probe
//! compares in the slot instead of reading each key column of the group.
//! Rows with a NULL key are not indexed here (the general table takes
//! them).

use super::open_index::{OpenIndex, Slot, NO_SLOT_GROUP};

#[derive(Clone, Copy)]
#[repr(C)]
pub(crate) struct PairSlot {
    a: i64,
    b: i64,
    group: u32,
}

impl Slot for PairSlot {
    const EMPTY: Self = PairSlot { a: 0, b: 0, group: NO_SLOT_GROUP };
    fn group(&self) -> u32 {
        self.group
    }
}

/// Pairs of integer keys to group numbers.
#[derive(Default)]
pub(crate) struct PairIndex {
    /// The slots (reserved, measured and prefetched through it).
    pub(crate) index: OpenIndex<PairSlot>,
}

impl PairIndex {
    /// The group of key `(a, b)` (hash `h`), if any.
    #[inline]
    pub(crate) fn find(&self, a: i64, b: i64, h: u64) -> Option<u32> {
        self.index.find(h, |s| s.a == a && s.b == b)
    }

    /// Add key `(a, b)` (hash `h`, not present) as group `group`;
    /// `hash_of(g)` gives group `g`'s hash, for moving groups when growing.
    #[inline]
    pub(crate) fn insert(&mut self, a: i64, b: i64, h: u64, group: u32, hash_of: impl Fn(u32) -> u64) {
        self.index.insert(PairSlot { a, b, group }, h, hash_of);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_differing_in_either_key_stay_apart_through_growth() {
        // A hash that collides a lot, so that probes wrap and run long.
        let h = |a: i64, b: i64| ((a ^ b) as u64 % 5) * 7;
        let keys: Vec<(i64, i64)> = (0..3000i64)
            .map(|i| (i % 50 - 25, (i / 50) * 1_000_000_007 - i64::MAX / 2))
            .chain([(i64::MIN, i64::MAX), (i64::MAX, i64::MIN), (0, 0)])
            .collect();
        let mut idx = PairIndex::default();
        for (g, &(a, b)) in keys.iter().enumerate() {
            assert_eq!(idx.find(a, b, h(a, b)), None, "({a}, {b}) before its insert");
            idx.insert(a, b, h(a, b), g as u32, |x| h(keys[x as usize].0, keys[x as usize].1));
        }
        for (g, &(a, b)) in keys.iter().enumerate() {
            assert_eq!(idx.find(a, b, h(a, b)), Some(g as u32));
            // The same keys swapped, or one changed: another pair.
            if a != b && !keys.contains(&(b, a)) {
                assert_eq!(idx.find(b, a, h(b, a)), None);
            }
            assert_eq!(idx.find(a, b.wrapping_add(1 << 40), h(a, b.wrapping_add(1 << 40))), None);
        }
        let foretold = idx.index.bytes_at(20_000);
        idx.index.reserve(20_000, |x| h(keys[x as usize].0, keys[x as usize].1));
        assert_eq!(idx.index.bytes_used(), foretold);
        assert_eq!(idx.find(keys[7].0, keys[7].1, h(keys[7].0, keys[7].1)), Some(7));
    }
}
