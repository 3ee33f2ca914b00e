//! Open addressing with linear probing, at most three quarters full, over
//! slots that hold a key (or part of it) beside a group number: the group
//! indexes of tables keyed by integers ([`super::int_index`],
//! [`super::pair_index`]). A probe usually touches one cache line, where the
//! general table reads a control byte, a group number and then the group's
//! key columns elsewhere: several dependent cache misses per row once the
//! groups outgrow the caches. Callers also [`OpenIndex::prefetch`] the slot
//! of a row a few rows ahead, so that the misses of a batch overlap.

/// What a slot of an [`OpenIndex`] holds.
pub(crate) trait Slot: Copy {
    /// A slot of no group.
    const EMPTY: Self;
    /// The slot's group ([`NO_SLOT_GROUP`] when empty).
    fn group(&self) -> u32;
}

/// The group of an empty slot.
pub(crate) const NO_SLOT_GROUP: u32 = u32::MAX;

/// The first allocation, in slots.
const MIN_SLOTS: usize = 64;

/// The fewest slots that hold `keys` keys.
fn slots_for(keys: usize) -> usize {
    keys + keys.div_ceil(3)
}

/// Slots in a power of two, placed by hash.
pub(crate) struct OpenIndex<S> {
    slots: Vec<S>,
    len: usize,
}

impl<S: Slot> Default for OpenIndex<S> {
    fn default() -> Self {
        OpenIndex { slots: Vec::new(), len: 0 }
    }
}

impl<S: Slot> OpenIndex<S> {
    /// The group of the first slot along the probe of hash `h` that
    /// `matches`, if any before an empty slot.
    #[inline]
    pub(crate) fn find(&self, h: u64, matches: impl Fn(&S) -> bool) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        loop {
            let s = &self.slots[i];
            if s.group() == NO_SLOT_GROUP {
                return None;
            }
            if matches(s) {
                return Some(s.group());
            }
            i = (i + 1) & mask;
        }
    }

    /// Add `slot` (hash `h`, its key not present). `hash_of(g)` gives the
    /// hash of group `g`'s key, for moving the groups when growing.
    #[inline]
    pub(crate) fn insert(&mut self, slot: S, h: u64, hash_of: impl Fn(u32) -> u64) {
        debug_assert_ne!(slot.group(), NO_SLOT_GROUP);
        if slots_for(self.len + 1) > self.slots.len() {
            self.grow_to(slots_for(self.len + 1), hash_of);
        }
        self.place(slot, h);
        self.len += 1;
    }

    /// Make room for `total` keys in all, without growing on the way.
    pub(crate) fn reserve(&mut self, total: usize, hash_of: impl Fn(u32) -> u64) {
        if slots_for(total) > self.slots.len() {
            self.grow_to(slots_for(total), hash_of);
        }
    }

    /// What [`OpenIndex::bytes_used`] will be once `total` keys are held:
    /// slots come in powers of two, so this may be up to twice the
    /// proportional share.
    pub(crate) fn bytes_at(&self, total: usize) -> usize {
        let slots = if slots_for(total) > self.slots.len() {
            slots_for(total).next_power_of_two().max(MIN_SLOTS)
        } else {
            self.slots.capacity()
        };
        slots * std::mem::size_of::<S>()
    }

    /// Bytes held.
    pub(crate) fn bytes_used(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<S>()
    }

    /// The slots allocated.
    #[cfg(test)]
    pub(crate) fn slot_count(&self) -> usize {
        self.slots.len()
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
            _mm_prefetch::<_MM_HINT_T0>((slot as *const S).cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = slot;
    }

    fn place(&mut self, slot: S, h: u64) {
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        while self.slots[i].group() != NO_SLOT_GROUP {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
    }

    fn grow_to(&mut self, min_slots: usize, hash_of: impl Fn(u32) -> u64) {
        let n = min_slots.next_power_of_two().max(MIN_SLOTS);
        let old = std::mem::replace(&mut self.slots, vec![S::EMPTY; n]);
        for s in old.into_iter().filter(|s| s.group() != NO_SLOT_GROUP) {
            self.place(s, hash_of(s.group()));
        }
    }
}
