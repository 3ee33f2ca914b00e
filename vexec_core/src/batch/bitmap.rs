//! Bit vectors on arrow-buffer: a column's validity (bit `i` set means row
//! `i` is not NULL) and per-row or per-group flags (a hash join's matched
//! rows, an aggregate's groups that saw a value). PostgreSQL's null bitmap
//! and Arrow's validity bitmap agree on polarity and bit order (least
//! significant bit first), so one implementation serves both layouts: the C
//! heap reader writes the bytes in place, and [`Bitmap::to_null_buffer`]
//! hands them to Arrow.

use arrow_buffer::{BooleanBufferBuilder, MutableBuffer, NullBuffer};

#[derive(Debug)]
pub struct Bitmap {
    bits: BooleanBufferBuilder,
}

impl Bitmap {
    pub fn all_valid(len: usize) -> Bitmap {
        let mut bits = BooleanBufferBuilder::new(len);
        bits.append_n(len, true);
        Bitmap { bits }
    }

    pub fn len(&self) -> usize {
        self.bits.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }

    #[inline]
    pub fn get(&self, i: usize) -> bool {
        debug_assert!(i < self.len());
        self.bits.as_slice()[i >> 3] & (1 << (i & 7)) != 0
    }

    #[inline]
    pub fn set(&mut self, i: usize, valid: bool) {
        debug_assert!(i < self.len());
        let byte = &mut self.bits.as_slice_mut()[i >> 3];
        if valid {
            *byte |= 1 << (i & 7);
        } else {
            *byte &= !(1 << (i & 7));
        }
    }

    pub fn set_all(&mut self, valid: bool) {
        let len = self.len();
        self.bits.as_slice_mut().fill(if valid { 0xff } else { 0 });
        self.clear_tail(len);
    }

    /// True when no row is NULL (checks whole bytes).
    pub fn all_set(&self) -> bool {
        self.all_set_upto(self.len())
    }

    /// True when rows `0..m` are all valid (checks whole bytes).
    pub fn all_set_upto(&self, m: usize) -> bool {
        debug_assert!(m <= self.len());
        let bytes = self.bits.as_slice();
        let full = m / 8;
        bytes[..full].iter().all(|&b| b == 0xff) && {
            let mask = (1u8 << (m % 8)).wrapping_sub(1);
            m % 8 == 0 || bytes[full] & mask == mask
        }
    }

    /// Mark rows `0..m` valid (whole bytes at a time).
    pub fn set_valid_upto(&mut self, m: usize) {
        debug_assert!(m <= self.len());
        let bytes = self.bits.as_slice_mut();
        let full = m / 8;
        bytes[..full].fill(0xff);
        if m % 8 != 0 {
            bytes[full] |= (1u8 << (m % 8)) - 1;
        }
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.bits.as_slice_mut().as_mut_ptr()
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.bits.as_slice()
    }

    /// Append `other`'s bits after this bitmap's (its capacity grown exactly).
    pub fn extend_from(&mut self, other: &Bitmap) {
        self.reserve_exact(other.len());
        self.bits.append_packed_range(0..other.len(), other.as_bytes());
    }

    /// Grow (new bits set to `value`) or shrink to `len` bits.
    pub fn resize(&mut self, len: usize, value: bool) {
        match len.checked_sub(self.len()) {
            Some(more) => self.bits.append_n(more, value),
            None => self.bits.truncate(len),
        }
    }

    /// Room for `additional` more bits without reallocating, and no more
    /// (up to Arrow's 64-byte rounding): memory budgets count what is
    /// allocated, as with `Vec::reserve_exact`. Growth by `resize` and
    /// `extend_from` beyond it doubles, as a `Vec`'s does.
    pub fn reserve_exact(&mut self, additional: usize) {
        let need = self.len() + additional;
        if need > self.bits.capacity() {
            let mut grown = BooleanBufferBuilder::new(need);
            grown.append_packed_range(0..self.len(), self.as_bytes());
            self.bits = grown;
        }
    }

    /// Bytes allocated (for memory accounting).
    pub fn allocated_bytes(&self) -> usize {
        self.bits.capacity() / 8
    }

    /// The bits as an Arrow validity buffer (a copy of the bytes: the
    /// bitmap stays usable).
    pub fn to_null_buffer(&self) -> NullBuffer {
        NullBuffer::new(self.bits.finish_cloned())
    }

    fn clear_tail(&mut self, len: usize) {
        if len % 8 != 0 {
            if let Some(last) = self.bits.as_slice_mut().last_mut() {
                *last &= (1u8 << (len % 8)) - 1;
            }
        }
    }
}

impl Default for Bitmap {
    fn default() -> Bitmap {
        Bitmap::all_valid(0)
    }
}

impl Clone for Bitmap {
    fn clone(&self) -> Bitmap {
        let bytes = MutableBuffer::from(self.as_bytes().to_vec());
        Bitmap { bits: BooleanBufferBuilder::new_from_buffer(bytes, self.len()) }
    }
}

// Bits past the length are always clear, so equal bitmaps have equal bytes.
impl PartialEq for Bitmap {
    fn eq(&self, other: &Bitmap) -> bool {
        self.len() == other.len() && self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Bitmap {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extend_from_appends_bits_at_any_offset() {
        for first in [0usize, 3, 8, 13] {
            let mut a = Bitmap::all_valid(first);
            if first > 1 {
                a.set(1, false);
            }
            let mut b = Bitmap::all_valid(11);
            b.set(0, false);
            b.set(10, false);
            a.extend_from(&b);
            assert_eq!(a.len(), first + 11);
            for i in 0..first {
                assert_eq!(a.get(i), !(first > 1 && i == 1), "first {first}, bit {i}");
            }
            for i in 0..11 {
                assert_eq!(a.get(first + i), i != 0 && i != 10, "first {first}, appended bit {i}");
            }
            assert!(!a.all_set());
            let mut c = Bitmap::all_valid(first);
            c.extend_from(&Bitmap::all_valid(5));
            assert!(c.all_set(), "no stray bits past the end ({first})");
        }
    }

    #[test]
    fn bits_follow_postgres_order() {
        let mut b = Bitmap::all_valid(10);
        assert!(b.all_set());
        b.set(0, false);
        b.set(9, false);
        assert_eq!(b.as_bytes(), &[0b1111_1110, 0b0000_0001]);
        assert!(!b.get(0) && b.get(1) && !b.get(9) && b.get(8));
        assert!(!b.all_set());
        b.set_all(true);
        assert!(b.all_set());
        b.set_all(false);
        assert!((0..10).all(|i| !b.get(i)));
    }

    #[test]
    fn resize_flags_and_arrow_validity() {
        let count_set = |b: &Bitmap| (0..b.len()).filter(|&i| b.get(i)).count();
        let mut b = Bitmap::all_valid(3);
        b.set_all(false);
        b.resize(20, true);
        assert_eq!((b.len(), count_set(&b)), (20, 17));
        assert!(!b.get(2) && b.get(3) && b.get(19));
        b.resize(5, false);
        assert_eq!((b.len(), count_set(&b)), (5, 2));
        b.resize(9, false);
        assert_eq!(count_set(&b), 2, "bits past a shrink come back clear");
        let nulls = b.to_null_buffer();
        assert_eq!((nulls.len(), nulls.null_count()), (9, 7));
        assert!(nulls.is_valid(3) && nulls.is_null(0));
        assert_eq!(b.clone(), b);
        let mut r = Bitmap::all_valid(10);
        r.reserve_exact(100_000);
        assert_eq!(
            r.allocated_bytes(),
            (100_010usize.div_ceil(8)).next_multiple_of(64),
            "no more than asked"
        );
        assert!(r.all_set() && r.len() == 10);
    }

    #[test]
    fn all_set_with_exact_multiple_of_eight() {
        let mut b = Bitmap::all_valid(16);
        assert!(b.all_set());
        b.set(15, false);
        assert!(!b.all_set());
    }

    #[test]
    fn prefixes_agree_with_single_bits() {
        for len in [1usize, 7, 8, 9, 17, 1024] {
            for hole in 0..len.min(20) {
                let mut b = Bitmap::all_valid(len);
                b.set(hole, false);
                for m in 0..=len {
                    assert_eq!(b.all_set_upto(m), (0..m).all(|i| b.get(i)), "len {len} hole {hole} m {m}");
                }
                let mut c = Bitmap::all_valid(len);
                c.set_all(false);
                let m = (hole * 7) % (len + 1);
                c.set_valid_upto(m);
                assert!((0..len).all(|i| c.get(i) == (i < m)), "len {len} m {m}");
            }
        }
    }
}
