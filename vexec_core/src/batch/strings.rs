//! Variable-length values (text, varchar, bpchar, bytea) in the arrow
//! layout: Arrow's byte views (Utf8View/BinaryView: a 16-byte view per value,
//! strings of up to 12 bytes inline, longer ones as length, 4-byte prefix
//! and offset into one data buffer) or Arrow's offsets + values
//! (Utf8/Binary). The bytes are the varlena's payload as stored (text in the
//! database encoding, bpchar with its padding), so kernels answer exactly
//! what they answer on PostgreSQL's Datums.
//!
//! [`Bytes`] reads a row's bytes from any of the three representations;
//! byte kernels (comparisons, LIKE, length) take it instead of Datums.

use arrow_array::builder::make_view;
use arrow_data::{ByteView, MAX_INLINE_VIEW_LEN};

use super::{varlena, Column, RowIdx, Values};

/// Arrow's byte views over one data buffer (buffer index 0).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ByteViews {
    pub views: Vec<u128>,
    pub data: Vec<u8>,
}

impl ByteViews {
    /// The bytes of row `i`.
    #[inline]
    pub fn get(&self, i: usize) -> &[u8] {
        let v = &self.views[i];
        let len = *v as u32;
        if len <= MAX_INLINE_VIEW_LEN {
            // The inline bytes follow the 4-byte length (little-endian u128).
            // SAFETY: a u128 is 16 bytes; 4 + len <= 16.
            unsafe { std::slice::from_raw_parts((v as *const u128 as *const u8).add(4), len as usize) }
        } else {
            let view = ByteView::from(*v);
            &self.data[view.offset as usize..view.offset as usize + len as usize]
        }
    }

    /// The first 8 bytes of row `i`'s view (its length and 4-byte prefix):
    /// two values that differ there differ.
    #[inline]
    pub fn head(&self, i: usize) -> u64 {
        self.views[i] as u64
    }

    /// Append `bytes` as the next row; false when the data buffer would
    /// pass Arrow's 32-bit offsets.
    #[inline]
    fn push(&mut self, bytes: &[u8]) -> bool {
        let offset = self.data.len();
        if bytes.len() > MAX_INLINE_VIEW_LEN as usize {
            if offset + bytes.len() > u32::MAX as usize {
                return false;
            }
            self.data.extend_from_slice(bytes);
        }
        self.views.push(make_view(bytes, 0, offset as u32));
        true
    }
}

/// `view` with its data `base` bytes further on (an inline view as it is):
/// the view of a value whose buffer was appended after `base` bytes.
#[inline]
pub fn rebase_view(view: u128, base: u32) -> u128 {
    if view as u32 <= MAX_INLINE_VIEW_LEN {
        view
    } else {
        let v = ByteView::from(view);
        v.with_offset(v.offset + base).as_u128()
    }
}

/// Arrow's offsets + values: row `i` is `data[offsets[i]..offsets[i + 1]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ByteOffsets {
    pub offsets: Vec<i32>,
    pub data: Vec<u8>,
}

impl Default for ByteOffsets {
    fn default() -> Self {
        ByteOffsets { offsets: vec![0], data: Vec::new() }
    }
}

impl ByteOffsets {
    #[inline]
    pub fn get(&self, i: usize) -> &[u8] {
        &self.data[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    fn push(&mut self, bytes: &[u8]) -> bool {
        let end = self.data.len() + bytes.len();
        if end > i32::MAX as usize {
            return false;
        }
        self.data.extend_from_slice(bytes);
        self.offsets.push(end as i32);
        true
    }
}

/// Which of the two arrow representations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StringForm {
    View,
    Offsets,
}

/// The values of a Datum column of varlenas as byte views or offsets, or
/// None when a valid value among `rows` is compressed or external (the
/// column then keeps its Datums for the batch). Rows outside `rows` and
/// NULL rows hold empty values. `spare` lends an earlier batch's buffers.
///
/// # Safety
/// Every valid Datum among `rows` points to a varlena.
pub unsafe fn from_datums(
    col: &Column,
    form: StringForm,
    rows: &[RowIdx],
    spare: Option<Values>,
) -> Option<Values> {
    let Values::Datum(d) = &col.values else { return None };
    let all_valid = col.validity.all_set();
    let valid = |i: usize| all_valid || col.is_valid(i);
    // SAFETY: this function's contract.
    if rows.iter().any(|&r| valid(r as usize) && !unsafe { varlena::is_plain(d[r as usize] as *const u8) }) {
        return None;
    }
    let mut wanted = vec![false; d.len()];
    rows.iter().filter(|&&r| valid(r as usize)).for_each(|&r| wanted[r as usize] = true);
    let bytes = |i: usize| -> &[u8] {
        if wanted[i] {
            // SAFETY: wanted rows are valid plain varlenas (checked above).
            unsafe { varlena::bytes(d[i] as *const u8) }
        } else {
            &[]
        }
    };
    match form {
        StringForm::View => {
            let mut out = match spare {
                Some(Values::View(mut s)) => {
                    s.views.clear();
                    s.data.clear();
                    s
                }
                _ => ByteViews { views: Vec::with_capacity(d.len()), data: Vec::new() },
            };
            (0..d.len()).all(|i| out.push(bytes(i))).then_some(Values::View(out))
        }
        StringForm::Offsets => {
            let mut out = match spare {
                Some(Values::Offsets(mut s)) => {
                    s.offsets.truncate(1);
                    s.data.clear();
                    s
                }
                _ => ByteOffsets { offsets: Vec::with_capacity(d.len() + 1), ..ByteOffsets::default() },
            };
            if out.offsets.is_empty() {
                out.offsets.push(0);
            }
            (0..d.len()).all(|i| out.push(bytes(i))).then_some(Values::Offsets(out))
        }
    }
}

/// Row-by-row access to the bytes of a varlena column in any layout.
#[derive(Clone, Copy)]
pub enum Bytes<'a> {
    /// PostgreSQL's Datums, each a plain varlena.
    Datums(&'a [usize]),
    Views(&'a ByteViews),
    Offsets(&'a ByteOffsets),
}

impl<'a> Bytes<'a> {
    /// The byte reader of `values`, if they are varlenas in one of the
    /// three representations.
    ///
    /// # Safety
    /// For Datums: every valid value that is read is a plain varlena that
    /// outlives `'a`.
    pub unsafe fn of(values: &'a Values) -> Option<Bytes<'a>> {
        match values {
            Values::Datum(d) => Some(Bytes::Datums(d)),
            Values::View(v) => Some(Bytes::Views(v)),
            Values::Offsets(o) => Some(Bytes::Offsets(o)),
            _ => None,
        }
    }

    /// The bytes of row `i` (a valid row).
    #[inline]
    pub fn get(&self, i: usize) -> &'a [u8] {
        match *self {
            // SAFETY: `Bytes::of`'s contract.
            Bytes::Datums(d) => unsafe { varlena::bytes(d[i] as *const u8) },
            Bytes::Views(v) => v.get(i),
            Bytes::Offsets(o) => o.get(i),
        }
    }
}

/// The postgres layout of a view or offsets column: each valid row of
/// `rows` a 4-byte-header varlena stored by `alloc` (which returns its
/// Datum).
pub fn to_datums(
    values: &Values,
    col: &Column,
    rows: &[RowIdx],
    alloc: &mut dyn FnMut(&[u8]) -> usize,
) -> Values {
    // SAFETY: views and offsets hold no Datums.
    let bytes = unsafe { Bytes::of(values) }.expect("a varlena column");
    let mut out = vec![0usize; values.len()];
    let mut buf = Vec::new();
    for &r in rows {
        let i = r as usize;
        if col.is_valid(i) {
            let b = bytes.get(i);
            buf.clear();
            buf.extend_from_slice(&(((b.len() + 4) as u32) << 2).to_le_bytes());
            buf.extend_from_slice(b);
            out[i] = alloc(&buf);
        }
    }
    Values::Datum(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::PhysType;

    fn strings() -> Vec<Vec<u8>> {
        vec![
            b"".to_vec(),
            b"abc".to_vec(),
            b"exactly12byt".to_vec(),
            b"thirteen byte".to_vec(),
            "non-ASCII: äöü €".as_bytes().to_vec(),
            vec![b'x'; 5000],
            b"pad   ".to_vec(),
        ]
    }

    #[test]
    fn both_forms_hold_the_payloads_and_come_back_as_varlenas() {
        let payloads = strings();
        // Stored forms: a 1-byte header where it fits, as on disk.
        let stored: Vec<Vec<u8>> = payloads
            .iter()
            .map(|p| if p.len() <= 126 { varlena::make_1b(p) } else { varlena::make_4b(p) })
            .collect();
        let mut col = Column::new(PhysType::Datum, stored.len() + 1);
        for (i, s) in stored.iter().enumerate() {
            col.values.set_datum(i, s.as_ptr() as usize);
        }
        col.validity.set(stored.len(), false);
        let rows: Vec<RowIdx> = (0..col.len() as RowIdx).collect();
        for form in [StringForm::View, StringForm::Offsets] {
            // SAFETY: the Datums point to the live varlenas above.
            let values = unsafe { from_datums(&col, form, &rows, None) }.expect("all plain");
            assert!(values.is_arrow());
            assert_eq!(values.len(), col.len());
            // SAFETY: no Datums.
            let b = unsafe { Bytes::of(&values) }.unwrap();
            for (i, p) in payloads.iter().enumerate() {
                assert_eq!(b.get(i), &p[..], "{form:?} row {i}");
            }
            // Reused buffers give the same values.
            // SAFETY: as above.
            let again = unsafe { from_datums(&col, form, &rows, Some(values.clone())) }.unwrap();
            assert_eq!(again, values, "{form:?} through a spare buffer");
            let mut arena: Vec<Vec<u8>> = Vec::new();
            let back = to_datums(&values, &col, &rows, &mut |v| {
                arena.push(v.to_vec());
                arena.last().unwrap().as_ptr() as usize
            });
            for (i, p) in payloads.iter().enumerate() {
                // SAFETY: the Datums point into the arena.
                assert_eq!(unsafe { varlena::bytes(back.datum(i) as *const u8) }, &p[..]);
            }
        }
    }

    #[test]
    fn views_inline_short_values_and_prefix_long_ones() {
        let mut v = ByteViews::default();
        assert!(v.push(b"exactly12byt") && v.push(b"thirteen byte"));
        assert_eq!(v.data, b"thirteen byte", "only the long value in the buffer");
        assert_eq!(v.head(1) as u32, 13);
        assert_eq!((v.head(1) >> 32) as u32, u32::from_le_bytes(*b"thir"));
        // Arrow agrees with the encoding.
        let arr = arrow_array::BinaryViewArray::try_new(
            v.views.clone().into(),
            vec![arrow_buffer::Buffer::from_vec(v.data.clone())],
            None,
        )
        .expect("valid views");
        assert_eq!(arr.value(0), b"exactly12byt");
        assert_eq!(arr.value(1), b"thirteen byte");
    }

    #[test]
    fn appended_columns_keep_their_values() {
        for form in [StringForm::View, StringForm::Offsets] {
            let make = |vals: &[&[u8]]| {
                let stored: Vec<Vec<u8>> = vals.iter().map(|p| varlena::make_4b(p)).collect();
                let mut col = Column::new(PhysType::Datum, vals.len());
                for (i, s) in stored.iter().enumerate() {
                    col.values.set_datum(i, s.as_ptr() as usize);
                }
                let rows: Vec<RowIdx> = (0..vals.len() as RowIdx).collect();
                // SAFETY: live varlenas.
                let values = unsafe { from_datums(&col, form, &rows, None) }.unwrap();
                Column { values, validity: col.validity }
            };
            let mut a = make(&[b"a long first value", b"x"]);
            let b = make(&[b"y", b"another long value"]);
            assert!(a.append(&b));
            // SAFETY: no Datums.
            let r = unsafe { Bytes::of(&a.values) }.unwrap();
            let got: Vec<&[u8]> = (0..4).map(|i| r.get(i)).collect();
            assert_eq!(got, [&b"a long first value"[..], b"x", b"y", b"another long value"], "{form:?}");
        }
    }

    #[test]
    fn a_toasted_value_keeps_the_column_in_datums_unless_unselected_or_null() {
        let plain = varlena::make_1b(b"ok");
        let mut compressed = varlena::make_4b(b"xxxx");
        compressed[0] |= 0x02;
        let mut col = Column::new(PhysType::Datum, 2);
        col.values.set_datum(0, plain.as_ptr() as usize);
        col.values.set_datum(1, compressed.as_ptr() as usize);
        // SAFETY: the Datums point to live varlenas; the compressed one is only inspected.
        unsafe {
            assert!(from_datums(&col, StringForm::View, &[0, 1], None).is_none());
            assert!(from_datums(&col, StringForm::Offsets, &[0], None).is_some(), "row 1 not selected");
            col.validity.set(1, false);
            assert!(from_datums(&col, StringForm::View, &[0, 1], None).is_some(), "row 1 is NULL");
        }
    }
}
