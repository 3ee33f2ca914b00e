//! Arrow columns written straight into PostgreSQL heap tuples, laid out
//! byte for byte as `heap_form_tuple` lays out the same values (header,
//! null bitmap, each attribute at its alignment, a varlena of up to 126
//! bytes given the 1-byte header PostgreSQL gives it when the attribute's
//! storage is not plain). VecInsert's ingest uses it for the columns it
//! covers (fixed-width values and text payloads): one pass per row from
//! the Arrow buffers to the tuple, instead of Datums and then
//! heap_form_tuple.

use arrow_buffer::NullBuffer;

/// The heap tuple header before the null bitmap
/// (`offsetof(HeapTupleHeaderData, t_bits)`).
pub const HEADER: usize = 23;
/// MAXALIGN on the 64-bit platforms PostgreSQL builds vexec for.
const MAXALIGN: usize = 8;
/// `HEAP_HASNULL`, `HEAP_HASVARWIDTH` (t_infomask).
const HAS_NULL: u16 = 0x0001;
const HAS_VARWIDTH: u16 = 0x0002;
/// The longest payload a 1-byte varlena header holds (VARATT_SHORT_MAX - 1).
const SHORT_PAYLOAD_MAX: usize = 126;

/// How one table attribute is stored (its pg_attribute row).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Attr {
    /// attlen: a fixed width passed by value (1, 2, 4 or 8), or -1 (varlena).
    pub len: i16,
    /// attalign in bytes (1, 2, 4 or 8).
    pub align: u8,
    /// A varlena whose storage is not plain (short headers allowed).
    pub packable: bool,
}

/// One attribute's values over the rows being written.
#[derive(Clone, Copy)]
pub enum Values<'a> {
    /// Fixed-width values, little-endian, `Attr::len` bytes each.
    Fixed(&'a [u8]),
    /// Varlena payloads (without header): row r is
    /// `data[offsets[r]..offsets[r + 1]]`.
    Var32 {
        offsets: &'a [i32],
        data: &'a [u8],
    },
    Var64 {
        offsets: &'a [i64],
        data: &'a [u8],
    },
}

pub struct Column<'a> {
    pub values: Values<'a>,
    /// Arrow's validity (None: no NULLs), over the same rows.
    pub nulls: Option<&'a NullBuffer>,
}

impl Column<'_> {
    fn is_null(&self, row: usize) -> bool {
        self.nulls.is_some_and(|n| n.is_null(row))
    }

    fn payload(&self, row: usize) -> &[u8] {
        match &self.values {
            Values::Var32 { offsets, data } => &data[offsets[row] as usize..offsets[row + 1] as usize],
            Values::Var64 { offsets, data } => &data[offsets[row] as usize..offsets[row + 1] as usize],
            Values::Fixed(_) => unreachable!("a fixed-width column has no payloads"),
        }
    }
}

/// The tuple descriptor's identity, written into each tuple's header as
/// heap_form_tuple writes it (`HeapTupleHeaderSetTypeId`/`SetTypMod`).
#[derive(Clone, Copy, Debug)]
pub struct RowType {
    pub typeid: u32,
    pub typmod: i32,
}

/// `at` rounded up to `to`, a power of two (TYPEALIGN; no division).
fn align(at: usize, to: u8) -> usize {
    let mask = to as usize - 1;
    (at + mask) & !mask
}

/// Rows `0..rows` of `columns` (one per attribute of `attrs`) as heap
/// tuples appended to `out`, each ending where `ends` says (offsets into
/// `out`; each tuple starts at the previous end, or where `out` ended).
pub fn write(
    attrs: &[Attr],
    row_type: RowType,
    columns: &[Column],
    rows: usize,
    out: &mut Vec<u8>,
    ends: &mut Vec<usize>,
) {
    assert_eq!(attrs.len(), columns.len(), "one column per attribute");
    let natts = attrs.len();
    for row in 0..rows {
        let has_null = columns.iter().any(|c| c.is_null(row));
        let hoff = align(HEADER + if has_null { natts.div_ceil(8) } else { 0 }, MAXALIGN as u8);
        // heap_compute_data_size
        let mut size = 0;
        for (a, c) in attrs.iter().zip(columns) {
            if c.is_null(row) {
                continue;
            }
            size = match a.len {
                -1 => {
                    let n = c.payload(row).len();
                    if a.packable && n <= SHORT_PAYLOAD_MAX {
                        size + 1 + n
                    } else {
                        align(size, a.align) + 4 + n
                    }
                }
                len => align(size, a.align) + len as usize,
            };
        }
        let start = out.len();
        let len = hoff + size;
        out.resize(start + len, 0);
        let tuple = &mut out[start..];
        // The header: the datum length (a varlena header), typmod, type,
        // an invalid ctid, natts, infomask (below), t_hoff.
        tuple[0..4].copy_from_slice(&((len as u32) << 2).to_le_bytes());
        tuple[4..8].copy_from_slice(&row_type.typmod.to_le_bytes());
        tuple[8..12].copy_from_slice(&row_type.typeid.to_le_bytes());
        tuple[12..16].copy_from_slice(&[0xff; 4]);
        tuple[18..20].copy_from_slice(&(natts as u16).to_le_bytes());
        tuple[22] = hoff as u8;
        // heap_fill_tuple
        let mut infomask = if has_null { HAS_NULL } else { 0 };
        let mut at = hoff;
        for (i, (a, c)) in attrs.iter().zip(columns).enumerate() {
            if c.is_null(row) {
                continue;
            }
            if has_null {
                tuple[HEADER + i / 8] |= 1 << (i % 8);
            }
            match (a.len, &c.values) {
                (-1, _) => {
                    infomask |= HAS_VARWIDTH;
                    let p = c.payload(row);
                    if a.packable && p.len() <= SHORT_PAYLOAD_MAX {
                        tuple[at] = (((p.len() + 1) as u8) << 1) | 1;
                        at += 1;
                    } else {
                        at = hoff + align(at - hoff, a.align);
                        tuple[at..at + 4]
                            .copy_from_slice((((p.len() + 4) as u32) << 2).to_le_bytes().as_slice());
                        at += 4;
                    }
                    tuple[at..at + p.len()].copy_from_slice(p);
                    at += p.len();
                }
                (len, Values::Fixed(bytes)) => {
                    let w = len as usize;
                    at = hoff + align(at - hoff, a.align);
                    tuple[at..at + w].copy_from_slice(&bytes[row * w..(row + 1) * w]);
                    at += w;
                }
                _ => unreachable!("a fixed-width attribute takes fixed-width values"),
            }
        }
        debug_assert_eq!(at, len);
        tuple[20..22].copy_from_slice(&infomask.to_le_bytes());
        ends.push(out.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INT4: Attr = Attr { len: 4, align: 4, packable: false };
    const INT8: Attr = Attr { len: 8, align: 8, packable: false };
    const INT2: Attr = Attr { len: 2, align: 2, packable: false };
    const TEXT: Attr = Attr { len: -1, align: 4, packable: true };
    const PLAIN: Attr = Attr { len: -1, align: 4, packable: false };
    const ROW: RowType = RowType { typeid: 16_385, typmod: -1 };

    fn le(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn one(attrs: &[Attr], columns: &[Column]) -> Vec<u8> {
        let (mut out, mut ends) = (Vec::new(), Vec::new());
        write(attrs, ROW, columns, 1, &mut out, &mut ends);
        assert_eq!(ends, [out.len()]);
        out
    }

    #[test]
    fn the_header_is_heap_form_tuples() {
        let ints = le(&[7]);
        let t = one(&[INT4], &[Column { values: Values::Fixed(&ints), nulls: None }]);
        // 23-byte header MAXALIGNed to 24, then the int4.
        assert_eq!(t.len(), 28);
        assert_eq!(&t[0..4], &(28u32 << 2).to_le_bytes());
        assert_eq!(&t[4..8], &(-1i32).to_le_bytes());
        assert_eq!(&t[8..12], &16_385u32.to_le_bytes());
        assert_eq!(&t[12..18], &[0xff, 0xff, 0xff, 0xff, 0, 0]);
        assert_eq!(&t[18..20], &1u16.to_le_bytes()); // natts
        assert_eq!(&t[20..22], &0u16.to_le_bytes()); // no NULL, no varlena
        assert_eq!(t[22], 24);
        assert_eq!(&t[24..28], &7i32.to_le_bytes());
    }

    #[test]
    fn attributes_are_aligned_and_short_varlenas_are_not() {
        let (a, b) = (1i16.to_le_bytes(), 9i64.to_le_bytes());
        let offsets = [0, 3];
        let t = one(
            &[INT2, TEXT, INT8],
            &[
                Column { values: Values::Fixed(&a), nulls: None },
                Column { values: Values::Var32 { offsets: &offsets, data: b"abc" }, nulls: None },
                Column { values: Values::Fixed(&b), nulls: None },
            ],
        );
        // int2 at 24; 'abc' with a 1-byte header (4 << 1 | 1) at 26, unaligned; int8 at 32.
        assert_eq!(&t[24..26], &[1, 0]);
        assert_eq!(&t[26..30], &[9, b'a', b'b', b'c']);
        assert_eq!(&t[30..32], &[0, 0]);
        assert_eq!(&t[32..40], &9i64.to_le_bytes());
        assert_eq!(t.len(), 40);
        assert_eq!(&t[20..22], &HAS_VARWIDTH.to_le_bytes());
    }

    #[test]
    fn long_and_plain_varlenas_take_a_4_byte_header_at_their_alignment() {
        let long = vec![b'x'; 127];
        let offsets = [0, 127];
        let one_byte = vec![5u8];
        for attr in [TEXT, PLAIN] {
            let t = one(
                &[Attr { len: 1, align: 1, packable: false }, attr],
                &[
                    Column { values: Values::Fixed(&one_byte), nulls: None },
                    Column { values: Values::Var32 { offsets: &offsets, data: &long }, nulls: None },
                ],
            );
            assert_eq!(t[24], 5);
            assert_eq!(&t[25..28], &[0, 0, 0]);
            assert_eq!(&t[28..32], &((127u32 + 4) << 2).to_le_bytes());
            assert_eq!(&t[32..], &long[..]);
        }
        // Plain storage never takes the short header, even for short values.
        let t =
            one(&[PLAIN], &[Column { values: Values::Var32 { offsets: &[0, 2], data: b"ab" }, nulls: None }]);
        assert_eq!(&t[24..30], &[(6u32 << 2) as u8, 0, 0, 0, b'a', b'b']);
    }

    #[test]
    fn nulls_take_a_bitmap_and_no_space() {
        let ints = le(&[1, 2, 3]);
        let nulls = NullBuffer::from(vec![true, false, true]);
        let offsets = [0i64, 1, 1, 3];
        let text_nulls = NullBuffer::from(vec![false, false, true]);
        let columns = [
            Column { values: Values::Fixed(&ints), nulls: Some(&nulls) },
            Column { values: Values::Var64 { offsets: &offsets, data: b"abc" }, nulls: Some(&text_nulls) },
        ];
        let (mut out, mut ends) = (vec![0xaa], Vec::new());
        write(&[INT4, TEXT], ROW, &columns, 3, &mut out, &mut ends);
        assert_eq!(out[0], 0xaa, "what was in out stays");
        let (r0, r1, r2) = (&out[1..ends[0]], &out[ends[0]..ends[1]], &out[ends[1]..ends[2]]);
        // Row 0: int4 1, text NULL: bitmap 0b01, t_hoff 24 (23 + 1 byte, MAXALIGNed).
        assert_eq!((r0[22], r0[23], &r0[20..22]), (24, 0b01, &HAS_NULL.to_le_bytes()[..]));
        assert_eq!(&r0[24..], &1i32.to_le_bytes());
        // Row 1: both NULL: no data at all.
        assert_eq!((r1.len(), r1[23]), (24, 0));
        // Row 2: no NULL: no bitmap; int4 3, then 'bc' short.
        assert_eq!((r2[22], &r2[20..22]), (24, &HAS_VARWIDTH.to_le_bytes()[..]));
        assert_eq!(&r2[24..], &[3, 0, 0, 0, 7, b'b', b'c']);
    }

    #[test]
    fn a_wide_row_s_bitmap_moves_t_hoff() {
        let attrs = vec![INT4; 9];
        let ints = le(&[4]);
        let nulls = NullBuffer::from(vec![false]);
        let mut columns: Vec<Column> =
            (0..8).map(|_| Column { values: Values::Fixed(&ints), nulls: Some(&nulls) }).collect();
        columns.push(Column { values: Values::Fixed(&ints), nulls: None });
        let t = one(&attrs, &columns);
        // 23 + 2 bitmap bytes = 25, MAXALIGNed to 32; only attribute 9 present.
        assert_eq!((t[22], t[23], t[24]), (32, 0, 0b1));
        assert_eq!(&t[32..], &4i32.to_le_bytes());
    }
}
