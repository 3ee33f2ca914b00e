//! Reading PostgreSQL varlena values (text, varchar, bpchar, bytea) without
//! the server: the header formats of `varatt.h`, little-endian.
//!
//! Only *plain* values can be read here: inline and uncompressed, with a
//! 1-byte or 4-byte header. A compressed or external (TOAST) value must be
//! detoasted by the server first; [`is_plain`] tells which ones.

/// Whether the varlena at `ptr` is inline and uncompressed.
///
/// # Safety
/// `ptr` points to a varlena value.
#[inline]
pub unsafe fn is_plain(ptr: *const u8) -> bool {
    // SAFETY: this function's contract: ptr points to a varlena's first header byte.
    let h = unsafe { *ptr };
    if h & 0x01 == 0x01 {
        h != 0x01 // 1-byte header; exactly 0x01 is an external TOAST pointer
    } else {
        h & 0x03 == 0x00 // 4-byte header, not compressed
    }
}

/// The payload bytes of a plain varlena (see [`is_plain`]).
///
/// # Safety
/// `ptr` points to a plain varlena that outlives the returned slice.
#[inline]
pub unsafe fn bytes<'a>(ptr: *const u8) -> &'a [u8] {
    // SAFETY: this function's contract: ptr points to a plain varlena, whose header gives the
    // length that follows it.
    unsafe {
        let h = *ptr;
        if h & 0x01 == 0x01 {
            let total = ((h >> 1) & 0x7f) as usize;
            std::slice::from_raw_parts(ptr.add(1), total - 1)
        } else {
            let word = u32::from_le_bytes([*ptr, *ptr.add(1), *ptr.add(2), *ptr.add(3)]);
            let total = ((word >> 2) & 0x3fff_ffff) as usize;
            std::slice::from_raw_parts(ptr.add(4), total - 4)
        }
    }
}

/// A plain varlena with a 4-byte header holding `payload` (for tests and for
/// values vexec builds itself).
pub fn make_4b(payload: &[u8]) -> Vec<u8> {
    let total = (payload.len() + 4) as u32;
    let mut v = (total << 2).to_le_bytes().to_vec();
    v.extend_from_slice(payload);
    v
}

/// A plain varlena with a 1-byte header (payload up to 126 bytes).
pub fn make_1b(payload: &[u8]) -> Vec<u8> {
    assert!(payload.len() <= 126);
    let mut v = vec![(((payload.len() + 1) as u8) << 1) | 1];
    v.extend_from_slice(payload);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_header_forms() {
        let a = make_4b(b"hello world");
        let b = make_1b(b"short");
        // SAFETY: a and b are plain varlenas made by make_4b/make_1b, alive here.
        unsafe {
            assert!(is_plain(a.as_ptr()) && is_plain(b.as_ptr()));
            assert_eq!(bytes(a.as_ptr()), b"hello world");
            assert_eq!(bytes(b.as_ptr()), b"short");
            let empty = make_1b(b"");
            assert_eq!(bytes(empty.as_ptr()), b"");
        }
    }

    #[test]
    fn recognizes_compressed_and_external() {
        let external = [0x01u8, 18, 0, 0];
        let mut compressed = make_4b(b"xxxx");
        compressed[0] |= 0x02;
        // SAFETY: the header bytes read are those of live test vectors.
        unsafe {
            assert!(!is_plain(external.as_ptr()));
            assert!(!is_plain(compressed.as_ptr()));
        }
    }
}
