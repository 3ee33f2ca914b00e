//! The validity bitmap of a column: bit `i` set means row `i` is not NULL
//! (PostgreSQL's null-bitmap polarity and bit order).

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bitmap {
    bytes: Vec<u8>,
    len: usize,
}

impl Bitmap {
    pub fn all_valid(len: usize) -> Bitmap {
        let mut b = Bitmap { bytes: vec![0xff; len.div_ceil(8)], len };
        b.clear_tail();
        b
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn get(&self, i: usize) -> bool {
        debug_assert!(i < self.len);
        self.bytes[i >> 3] & (1 << (i & 7)) != 0
    }

    #[inline]
    pub fn set(&mut self, i: usize, valid: bool) {
        debug_assert!(i < self.len);
        if valid {
            self.bytes[i >> 3] |= 1 << (i & 7);
        } else {
            self.bytes[i >> 3] &= !(1 << (i & 7));
        }
    }

    pub fn set_all(&mut self, valid: bool) {
        self.bytes.fill(if valid { 0xff } else { 0 });
        self.clear_tail();
    }

    /// True when no row is NULL (checks whole bytes).
    pub fn all_set(&self) -> bool {
        let full = self.len / 8;
        self.bytes[..full].iter().all(|&b| b == 0xff)
            && (self.len % 8 == 0 || self.bytes[full] == (1u8 << (self.len % 8)) - 1)
    }

    /// True when rows `0..m` are all valid (checks whole bytes).
    pub fn all_set_upto(&self, m: usize) -> bool {
        debug_assert!(m <= self.len);
        let full = m / 8;
        self.bytes[..full].iter().all(|&b| b == 0xff) && {
            let mask = (1u8 << (m % 8)).wrapping_sub(1);
            m % 8 == 0 || self.bytes[full] & mask == mask
        }
    }

    /// Mark rows `0..m` valid (whole bytes at a time).
    pub fn set_valid_upto(&mut self, m: usize) {
        debug_assert!(m <= self.len);
        let full = m / 8;
        self.bytes[..full].fill(0xff);
        if m % 8 != 0 {
            self.bytes[full] |= (1u8 << (m % 8)) - 1;
        }
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.bytes.as_mut_ptr()
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Append `other`'s bits after this bitmap's (its capacity grown exactly).
    pub fn extend_from(&mut self, other: &Bitmap) {
        let len = self.len + other.len;
        let bytes = len.div_ceil(8);
        self.bytes.reserve_exact(bytes - self.bytes.len());
        self.bytes.resize(bytes, 0);
        let at = self.len;
        self.len = len;
        if at % 8 == 0 {
            self.bytes[at / 8..].copy_from_slice(&other.bytes);
            return;
        }
        for i in 0..other.len {
            self.set(at + i, other.get(i));
        }
    }

    fn clear_tail(&mut self) {
        if self.len % 8 != 0 {
            let last = self.bytes.len() - 1;
            self.bytes[last] &= (1u8 << (self.len % 8)) - 1;
        }
    }
}

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
