//! The group index of a table keyed by one integer-like column (GROUP BY
//! an id, a hash join on an id: most analytical keys): an [`OpenIndex`]
//! whose 8-byte slots hold the low 32 bits of the key beside its group
//! number. While every key stored fits in 32 bits (int4 columns, most int8
//! ids), those bits are the key; past that, a match of the low bits is
//! confirmed against the group's key.

use super::open_index::{OpenIndex, Slot, NO_SLOT_GROUP};

#[derive(Clone, Copy)]
#[repr(C)]
pub(crate) struct LowSlot {
    low: u32,
    group: u32,
}

impl Slot for LowSlot {
    const EMPTY: Self = LowSlot { low: 0, group: NO_SLOT_GROUP };
    fn group(&self) -> u32 {
        self.group
    }
}

#[inline]
fn fits_32(key: i64) -> bool {
    i32::try_from(key).is_ok()
}

/// Integer keys to group numbers.
#[derive(Default)]
pub(crate) struct IntIndex {
    /// The slots (reserved, measured and prefetched through it).
    pub(crate) index: OpenIndex<LowSlot>,
    /// Some key stored needs more than 32 bits.
    wide: bool,
}

impl IntIndex {
    /// The group of `key` (hash `h`), if any; `keys[g]` is group `g`'s key.
    #[inline]
    pub(crate) fn find(&self, key: i64, h: u64, keys: &[i64]) -> Option<u32> {
        // Equal low bits are equal keys when both keys fit in them.
        let exact = !self.wide && fits_32(key);
        self.index.find(h, |s| s.low == key as u32 && (exact || keys[s.group as usize] == key))
    }

    /// Add `key` (hash `h`, not present) as group `group`. `hash_of(g)` gives
    /// the hash of group `g`'s key, for moving the groups when growing.
    #[inline]
    pub(crate) fn insert(&mut self, key: i64, h: u64, group: u32, hash_of: impl Fn(u32) -> u64) {
        self.wide |= !fits_32(key);
        self.index.insert(LowSlot { low: key as u32, group }, h, hash_of);
    }

    /// Whether some key stored needs more than 32 bits.
    #[cfg(test)]
    pub(crate) fn is_wide(&self) -> bool {
        self.wide
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hash that collides a lot, so that probes wrap and run long.
    fn bad_hash(k: i64) -> u64 {
        (k as u64 % 7) * 3
    }

    #[test]
    fn finds_what_was_inserted_through_growth_and_collisions() {
        let mut idx = IntIndex::default();
        let keys: Vec<i64> = (0..5000).map(|i| (i * 7919) % 100_003 - 50_000).collect();
        for (g, &k) in keys.iter().enumerate() {
            assert_eq!(idx.find(k, bad_hash(k), &keys), None, "key {k} before its insert");
            idx.insert(k, bad_hash(k), g as u32, |x| bad_hash(keys[x as usize]));
        }
        for (g, &k) in keys.iter().enumerate() {
            assert_eq!(idx.find(k, bad_hash(k), &keys), Some(g as u32));
        }
        assert!(!idx.wide);
        // Keys beyond 32 bits whose low bits are a stored key's: not found.
        for k in [(1i64 << 32) - 50_000, keys[7] + (1 << 32), keys[9] - (5 << 40)] {
            assert_eq!(idx.find(k, bad_hash(k), &keys), None, "{k}");
        }
        assert!(idx.index.slot_count() * 3 >= 4 * keys.len());
    }

    #[test]
    fn wide_keys_with_equal_low_bits_stay_apart() {
        let mut idx = IntIndex::default();
        let h = |_k: i64| 5u64; // one chain
        let keys: Vec<i64> = vec![7, 7 + (1 << 32), 7 - (1 << 32), i64::MIN + 7, 8];
        for (g, &k) in keys.iter().enumerate() {
            assert_eq!(idx.find(k, h(k), &keys), None, "{k}");
            idx.insert(k, h(k), g as u32, |x| h(keys[x as usize]));
            assert_eq!(idx.wide, k != 7 || g > 0);
        }
        for (g, &k) in keys.iter().enumerate() {
            assert_eq!(idx.find(k, h(k), &keys), Some(g as u32), "{k}");
        }
        assert_eq!(idx.find(7 + (2 << 32), 5, &keys), None);
    }

    #[test]
    fn bytes_at_foretells_the_slots_of_a_reservation() {
        let h = |k: i64| (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut idx = IntIndex::default();
        for total in [0, 1, 48, 49, 100, 12_288, 12_289, 50_000] {
            let foretold = idx.index.bytes_at(total);
            idx.index.reserve(total, |g| h(g as i64));
            assert_eq!(idx.index.bytes_used(), foretold, "{total} keys");
        }
        // 12,289 keys take 16,385 slots at three quarters: 32,768 of them.
        assert_eq!(IntIndex::default().index.bytes_at(12_289), 32_768 * 8);
    }

    #[test]
    fn reserve_keeps_the_groups() {
        let mut idx = IntIndex::default();
        let h = |k: i64| (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for k in 0..100 {
            idx.insert(k, h(k), k as u32, |g| h(g as i64));
        }
        idx.index.reserve(10_000, |g| h(g as i64));
        assert_eq!(idx.index.slot_count(), 16_384);
        let keys: Vec<i64> = (0..100).collect();
        for k in 0..100 {
            assert_eq!(idx.find(k, h(k), &keys), Some(k as u32));
        }
        assert_eq!(idx.find(100, h(100), &keys), None);
    }

    #[test]
    fn an_empty_index_finds_nothing_and_prefetches_safely() {
        let idx = IntIndex::default();
        idx.index.prefetch(12345);
        assert_eq!(idx.find(0, 0, &[]), None);
        assert_eq!(idx.index.bytes_used(), 0);
    }
}
