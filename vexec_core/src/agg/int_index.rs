//! The group index of a table keyed by one integer-like column (GROUP BY
//! an id, a hash join on an id: most analytical keys).
//!
//! An open-addressing table with linear probing whose 8-byte slots hold the
//! low 32 bits of the key beside its group number. While every key stored
//! fits in 32 bits (int4 columns, most int8 ids), those bits are the key and
//! a probe usually touches one cache line, where the general table reads a
//! control byte, a group number and then the group's key elsewhere: three
//! dependent cache misses per row once the groups outgrow the caches. Past
//! that, a match of the low bits is confirmed against the group's key.
//! Callers also [`IntIndex::prefetch`] the slot of a row a few rows ahead,
//! so that the misses of a batch overlap.

/// No group in this slot.
const EMPTY: u32 = u32::MAX;

/// The first allocation, in slots.
const MIN_SLOTS: usize = 64;

/// The fewest slots that hold `keys` keys.
fn slots_for(keys: usize) -> usize {
    keys + keys.div_ceil(3)
}

#[derive(Clone, Copy)]
#[repr(C)]
struct Slot {
    low: u32,
    group: u32,
}

const EMPTY_SLOT: Slot = Slot { low: 0, group: EMPTY };

#[inline]
fn fits_32(key: i64) -> bool {
    i32::try_from(key).is_ok()
}

/// Integer keys to group numbers; at most three quarters of the slots are
/// used (linear probing stays short up to there, and a table of many groups
/// must fit the memory budget that the general table would).
#[derive(Default)]
pub(crate) struct IntIndex {
    slots: Vec<Slot>,
    len: usize,
    /// Some key stored needs more than 32 bits.
    wide: bool,
}

impl IntIndex {
    /// The group of `key` (hash `h`), if any; `keys[g]` is group `g`'s key.
    #[inline]
    pub(crate) fn find(&self, key: i64, h: u64, keys: &[i64]) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        // Equal low bits are equal keys when both keys fit in them.
        let exact = !self.wide && fits_32(key);
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        loop {
            let s = self.slots[i];
            if s.group == EMPTY {
                return None;
            }
            if s.low == key as u32 && (exact || keys[s.group as usize] == key) {
                return Some(s.group);
            }
            i = (i + 1) & mask;
        }
    }

    /// Add `key` (hash `h`, not present) as group `group`. `hash_of(g)` gives
    /// the hash of group `g`'s key, for moving the groups when growing.
    #[inline]
    pub(crate) fn insert(&mut self, key: i64, h: u64, group: u32, hash_of: impl Fn(u32) -> u64) {
        debug_assert_ne!(group, EMPTY);
        if slots_for(self.len + 1) > self.slots.len() {
            self.grow_to(slots_for(self.len + 1), hash_of);
        }
        self.wide |= !fits_32(key);
        self.place(Slot { low: key as u32, group }, h);
        self.len += 1;
    }

    /// Make room for `total` keys in all, without growing on the way.
    pub(crate) fn reserve(&mut self, total: usize, hash_of: impl Fn(u32) -> u64) {
        if slots_for(total) > self.slots.len() {
            self.grow_to(slots_for(total), hash_of);
        }
    }

    /// What [`IntIndex::bytes_used`] will be once `total` keys are held:
    /// slots come in powers of two, so this may be up to twice the
    /// proportional share.
    pub(crate) fn bytes_at(&self, total: usize) -> usize {
        let slots = if slots_for(total) > self.slots.len() {
            slots_for(total).next_power_of_two().max(MIN_SLOTS)
        } else {
            self.slots.capacity()
        };
        slots * std::mem::size_of::<Slot>()
    }

    /// Hint the processor to load the slot where the probe for hash `h`
    /// starts (no effect on the result).
    #[inline]
    pub(crate) fn prefetch(&self, h: u64) {
        if self.slots.is_empty() {
            return;
        }
        let slot = &self.slots[h as usize & (self.slots.len() - 1)];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch reads nothing; the address is a live slot's.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>((slot as *const Slot).cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = slot;
    }

    /// Whether some key stored needs more than 32 bits.
    #[cfg(test)]
    pub(crate) fn is_wide(&self) -> bool {
        self.wide
    }

    /// Bytes held.
    pub(crate) fn bytes_used(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<Slot>()
    }

    fn place(&mut self, slot: Slot, h: u64) {
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        while self.slots[i].group != EMPTY {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
    }

    fn grow_to(&mut self, min_slots: usize, hash_of: impl Fn(u32) -> u64) {
        let n = min_slots.next_power_of_two().max(MIN_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![EMPTY_SLOT; n]);
        for s in old.into_iter().filter(|s| s.group != EMPTY) {
            self.place(s, hash_of(s.group));
        }
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
        assert!(idx.slots.len() * 3 >= 4 * keys.len());
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
            let foretold = idx.bytes_at(total);
            idx.reserve(total, |g| h(g as i64));
            assert_eq!(idx.bytes_used(), foretold, "{total} keys");
        }
        // 12,289 keys take 16,385 slots at three quarters: 32,768 of them.
        assert_eq!(IntIndex::default().bytes_at(12_289), 32_768 * 8);
    }

    #[test]
    fn reserve_keeps_the_groups() {
        let mut idx = IntIndex::default();
        let h = |k: i64| (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for k in 0..100 {
            idx.insert(k, h(k), k as u32, |g| h(g as i64));
        }
        idx.reserve(10_000, |g| h(g as i64));
        assert_eq!(idx.slots.len(), 16_384);
        let keys: Vec<i64> = (0..100).collect();
        for k in 0..100 {
            assert_eq!(idx.find(k, h(k), &keys), Some(k as u32));
        }
        assert_eq!(idx.find(100, h(100), &keys), None);
    }

    #[test]
    fn an_empty_index_finds_nothing_and_prefetches_safely() {
        let idx = IntIndex::default();
        idx.prefetch(12345);
        assert_eq!(idx.find(0, 0, &[]), None);
        assert_eq!(idx.bytes_used(), 0);
    }
}
