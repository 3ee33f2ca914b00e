//! Rows on their way to and from temporary files, for the operators that
//! spill when their hash table outgrows `hash_mem` (VecAgg, VecHashJoin).
//!
//! A spilled row is written as its values, column after column; a varlena
//! value as its payload length and bytes (header formats and TOAST pointers
//! never reach a file: the host detoasts before spilling); a value of a
//! fixed-length by-reference type (uuid, interval, name...) as its bytes.
//! Reading a run of rows back gives an owned batch ([`SpilledBatch`]) whose
//! by-reference columns point into an arena of fresh 4-byte-header varlenas
//! or 8-byte aligned fixed-length values, so kernels and the group table
//! read them like any other batch.
//!
//! Which partition a row goes to depends on its hash and the recursion level
//! ([`partition_of`]): each level uses different hash bits, so a partition
//! that is still too large splits further instead of landing whole in one
//! child partition again.

use crate::batch::{varlena, Bitmap, Column, PhysType, RowIdx, Values};

/// Temporary files per spill, for VecAgg and VecHashJoin alike (a power of
/// two: each level of recursion partitions on the next 4 bits of the hash).
/// 16 keeps a spill's write buffers small (16 BufFiles of 8 kB) while a
/// partition too large for memory rarely needs a second level.
pub const FANOUT: usize = 16;
/// Past this recursion level a partition is processed in memory whatever
/// its size: 16 levels of 4 bits use all 64 bits of the hash, and another
/// level would put every row in one partition again.
pub const MAX_LEVEL: u32 = 15;

/// The partition (of `fanout`, a power of two) of a row with hash `hash`
/// at recursion level `level` (0 for the first spill).
pub fn partition_of(hash: u64, level: u32, fanout: usize) -> usize {
    debug_assert!(fanout.is_power_of_two());
    let bits = fanout.trailing_zeros();
    // Take the bits from the top down, a fresh group per level.
    let shift = 64u32.saturating_sub(bits * (level + 1));
    ((hash >> shift) as usize) & (fanout - 1)
}

/// Append rows `rows` of `cols` to `out`. `fixed[c]` is the length of
/// column `c`'s values when it is a `Datum` column of a fixed-length
/// by-reference type (None: varlenas, or by value).
///
/// # Safety
/// Valid values of `Datum` columns point to plain varlenas, or to `fixed[c]`
/// bytes.
pub unsafe fn encode_rows(cols: &[&Column], fixed: &[Option<usize>], rows: &[RowIdx], out: &mut Vec<u8>) {
    debug_assert_eq!(cols.len(), fixed.len());
    for &r in rows {
        let r = r as usize;
        for (col, &fixed) in cols.iter().zip(fixed) {
            let valid = col.is_valid(r);
            out.push(valid as u8);
            if !valid {
                continue;
            }
            match &col.values {
                Values::Bool(v) => out.push(v[r]),
                Values::I16(v) => out.extend_from_slice(&v[r].to_le_bytes()),
                Values::I32(v) => out.extend_from_slice(&v[r].to_le_bytes()),
                Values::I64(v) => out.extend_from_slice(&v[r].to_le_bytes()),
                Values::I128(v) => out.extend_from_slice(&v[r].to_le_bytes()),
                Values::F32(v) => out.extend_from_slice(&v[r].to_le_bytes()),
                Values::F64(v) => out.extend_from_slice(&v[r].to_le_bytes()),
                // Arrow-layout values are written as their postgres form
                // (what the reader rebuilds).
                Values::Bits(v) => out.push(v.value(r) as u8),
                Values::Date32(_) => out.extend_from_slice(&(col.values.datum(r) as i32).to_le_bytes()),
                Values::TimestampUs(_) => out.extend_from_slice(&(col.values.datum(r) as i64).to_le_bytes()),
                Values::Decimal128(..) | Values::View(_) | Values::Offsets(_) => {
                    panic!("Decimal128, view and offsets columns are converted before they spill")
                }
                Values::Datum(v) => match fixed {
                    Some(len) => {
                        // SAFETY: this function's contract: a fixed-length by-reference value
                        // points to its `len` bytes.
                        out.extend_from_slice(unsafe { std::slice::from_raw_parts(v[r] as *const u8, len) })
                    }
                    None => {
                        // SAFETY: this function's contract: other by-reference values are plain
                        // varlenas.
                        let b = unsafe { varlena::bytes(v[r] as *const u8) };
                        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
                        out.extend_from_slice(b);
                    }
                },
            }
        }
    }
}

/// Rows read back from a spill file. The columns' by-reference values point
/// into `arena`, which lives as long as the batch.
#[derive(Debug)]
pub struct SpilledBatch {
    pub columns: Vec<Column>,
    /// Number of rows.
    pub len: usize,
    arena: Vec<u8>,
}

impl SpilledBatch {
    pub fn arena_bytes(&self) -> usize {
        self.arena.len()
    }
}

/// A malformed spill stream (a bug or a damaged temporary file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorruptSpill {
    pub offset: usize,
}

/// Decode up to `max_rows` rows of columns typed `types` (fixed-length
/// by-reference columns as in [`encode_rows`]) from `input` starting at
/// `*pos`, advancing `*pos` past them.
pub fn decode_rows(
    types: &[PhysType],
    fixed: &[Option<usize>],
    input: &[u8],
    pos: &mut usize,
    max_rows: usize,
) -> Result<SpilledBatch, CorruptSpill> {
    let mut cols: Vec<Column> = types.iter().map(|&t| Column::new(t, max_rows)).collect();
    // Varlena payloads: (column, row, start, len) placed after the arena is complete,
    // since the arena may move while it grows.
    let mut arena = Vec::new();
    let mut refs: Vec<(usize, usize, usize)> = Vec::new();
    let mut n = 0;
    let take = |pos: &mut usize, k: usize| -> Result<&[u8], CorruptSpill> {
        let s = input.get(*pos..*pos + k).ok_or(CorruptSpill { offset: *pos })?;
        *pos += k;
        Ok(s)
    };
    while n < max_rows && *pos < input.len() {
        for (c, col) in cols.iter_mut().enumerate() {
            let flag = take(pos, 1)?[0];
            if flag > 1 {
                return Err(CorruptSpill { offset: *pos - 1 });
            }
            if flag == 0 {
                col.validity.set(n, false);
                continue;
            }
            match &mut col.values {
                Values::Bool(v) => v[n] = take(pos, 1)?[0],
                Values::I16(v) => v[n] = i16::from_le_bytes(take(pos, 2)?.try_into().unwrap()),
                Values::I32(v) => v[n] = i32::from_le_bytes(take(pos, 4)?.try_into().unwrap()),
                Values::I64(v) => v[n] = i64::from_le_bytes(take(pos, 8)?.try_into().unwrap()),
                Values::I128(v) => v[n] = i128::from_le_bytes(take(pos, 16)?.try_into().unwrap()),
                Values::F32(v) => v[n] = f32::from_le_bytes(take(pos, 4)?.try_into().unwrap()),
                Values::F64(v) => v[n] = f64::from_le_bytes(take(pos, 8)?.try_into().unwrap()),
                v @ (Values::Bits(_)
                | Values::Date32(_)
                | Values::TimestampUs(_)
                | Values::Decimal128(..)
                | Values::View(_)
                | Values::Offsets(_)) => {
                    unreachable!("spilled batches are read into the postgres layout, not {v:?}")
                }
                Values::Datum(_) => match fixed.get(c).copied().flatten() {
                    Some(len) => {
                        let value = take(pos, len)?;
                        refs.push((c, n, arena.len()));
                        arena.extend_from_slice(value);
                        // Aligned as palloc would (interval holds int64s).
                        arena.resize(arena.len().next_multiple_of(8), 0);
                    }
                    None => {
                        let len = u32::from_le_bytes(take(pos, 4)?.try_into().unwrap()) as usize;
                        let payload = take(pos, len)?;
                        refs.push((c, n, arena.len()));
                        arena.extend_from_slice(&varlena::make_4b(payload));
                        // Keep every varlena 8-byte aligned, as palloc would.
                        arena.resize(arena.len().next_multiple_of(8), 0);
                    }
                },
            }
        }
        n += 1;
    }
    for col in cols.iter_mut() {
        truncate(col, n);
    }
    for (c, row, start) in refs {
        if let Values::Datum(v) = &mut cols[c].values {
            v[row] = arena[start..].as_ptr() as usize;
        }
    }
    Ok(SpilledBatch { columns: cols, len: n, arena })
}

fn truncate(col: &mut Column, n: usize) {
    match &mut col.values {
        Values::Bool(v) => v.truncate(n),
        Values::I16(v) => v.truncate(n),
        Values::I32(v) => v.truncate(n),
        Values::I64(v) => v.truncate(n),
        Values::I128(v) => v.truncate(n),
        Values::F32(v) => v.truncate(n),
        Values::F64(v) => v.truncate(n),
        Values::Datum(v) => v.truncate(n),
        v => unreachable!("spilled batches are read into the postgres layout, not {v:?}"),
    }
    let mut validity = Bitmap::all_valid(n);
    for i in 0..n {
        validity.set(i, col.validity.get(i));
    }
    col.validity = validity;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_use_fresh_bits_per_level() {
        let h = 0xABCD_0000_0000_0000u64;
        assert_eq!(partition_of(h, 0, 16), 0xA);
        // The last level's bits are the hash's lowest: MAX_LEVEL uses them all.
        assert_eq!(FANOUT.trailing_zeros() * (MAX_LEVEL + 1), 64);
        assert_eq!(partition_of(0xF, MAX_LEVEL, FANOUT), 0xF);
        assert_eq!(partition_of(h, 1, 16), 0xB);
        assert_eq!(partition_of(h, 2, 16), 0xC);
        // Rows of one level-0 partition spread over level-1 partitions.
        let spread: std::collections::HashSet<usize> =
            (0..64u64).map(|i| partition_of((0x5u64 << 60) | (i << 54), 1, 16)).collect();
        assert_eq!(spread.len(), 16);
    }

    #[test]
    fn rows_round_trip_with_nulls_and_varlenas() {
        let texts = [varlena::make_1b(b"hello"), varlena::make_4b(b""), varlena::make_4b(&[7u8; 300])];
        let mut ints = Column::new(PhysType::I64, 3);
        let mut floats = Column::new(PhysType::F64, 3);
        let mut strs = Column::new(PhysType::Datum, 3);
        for i in 0..3 {
            ints.values.set_datum(i, (i as i64 - 1) as usize);
            floats.values.set_datum(i, (-0.0f64 * i as f64).to_bits() as usize);
            strs.values.set_datum(i, texts[i].as_ptr() as usize);
        }
        floats.validity.set(1, false);
        let mut buf = vec![];
        let fixed = [None; 3];
        // SAFETY: strs points to the test's plain varlenas, which outlive the call.
        unsafe { encode_rows(&[&ints, &floats, &strs], &fixed, &[2, 0, 1], &mut buf) };
        let types = [PhysType::I64, PhysType::F64, PhysType::Datum];
        let mut pos = 0;
        let a = decode_rows(&types, &fixed, &buf, &mut pos, 2).unwrap();
        let b = decode_rows(&types, &fixed, &buf, &mut pos, 1024).unwrap();
        assert_eq!((a.len, b.len, pos), (2, 1, buf.len()));
        let got = |batch: &SpilledBatch, c: usize, r: usize| batch.columns[c].values.datum(r);
        assert_eq!(got(&a, 0, 0) as i64, 1);
        assert_eq!(got(&a, 0, 1) as i64, -1);
        assert!(!b.columns[1].is_valid(0));
        assert_eq!(f64::from_bits(got(&a, 1, 0) as u64).to_bits(), (-0.0f64).to_bits());
        let bytes = |batch: &SpilledBatch, r: usize| {
            // SAFETY: decoded Datums point into the batch's own buffer, alive while it is.
            unsafe { varlena::bytes(got(batch, 2, r) as *const u8) }.to_vec()
        };
        assert_eq!(bytes(&a, 0), vec![7u8; 300]);
        assert_eq!(bytes(&a, 1), b"hello".to_vec());
        assert_eq!(bytes(&b, 0), b"".to_vec());
        // A cut-off stream is reported, not misread.
        let mut pos = 0;
        assert!(decode_rows(&types, &fixed, &buf[..buf.len() - 1], &mut pos, 1024).is_err());
    }

    #[test]
    fn fixed_length_by_reference_values_round_trip_aligned() {
        // Two uuid-like 16-byte values and a 6-byte one (macaddr), one NULL,
        // next to a varlena: every value comes back with its bytes, 8-byte
        // aligned.
        let uuids = [[0xAAu8; 16], [0x01u8; 16]];
        let macs = [[1u8, 2, 3, 4, 5, 6], [9u8; 6]];
        let text = varlena::make_1b(b"x");
        let mut u = Column::new(PhysType::Datum, 2);
        let mut m = Column::new(PhysType::Datum, 2);
        let mut t = Column::new(PhysType::Datum, 2);
        for i in 0..2 {
            u.values.set_datum(i, uuids[i].as_ptr() as usize);
            m.values.set_datum(i, macs[i].as_ptr() as usize);
            t.values.set_datum(i, text.as_ptr() as usize);
        }
        m.validity.set(1, false);
        let fixed = [Some(16), Some(6), None];
        let mut buf = vec![];
        // SAFETY: the columns point to the test's values (uuids, macs, texts), alive here.
        unsafe { encode_rows(&[&u, &m, &t], &fixed, &[1, 0], &mut buf) };
        // 1 + 16, 1 (NULL), 1 + 4 + 1; then 1 + 16, 1 + 6, 1 + 4 + 1.
        assert_eq!(buf.len(), 17 + 1 + 6 + 17 + 7 + 6);
        let types = [PhysType::Datum; 3];
        let mut pos = 0;
        let b = decode_rows(&types, &fixed, &buf, &mut pos, 1024).unwrap();
        assert_eq!((b.len, pos), (2, buf.len()));
        let at = |c: usize, r: usize, len: usize| {
            let p = b.columns[c].values.datum(r);
            assert_eq!(p % 8, 0, "value of column {c} row {r} is not 8-byte aligned");
            // SAFETY: p points into b's buffer, which holds len bytes there.
            unsafe { std::slice::from_raw_parts(p as *const u8, len) }.to_vec()
        };
        assert_eq!(at(0, 0, 16), uuids[1].to_vec());
        assert_eq!(at(0, 1, 16), uuids[0].to_vec());
        assert!(!b.columns[1].is_valid(0));
        assert_eq!(at(1, 1, 6), macs[0].to_vec());
        let text_back = b.columns[2].values.datum(1) as *const u8;
        // SAFETY: text_back points to a plain varlena in b's buffer.
        assert_eq!(unsafe { varlena::bytes(text_back) }, b"x");
        // A value cut short is reported.
        let mut pos = 0;
        assert!(decode_rows(&types, &fixed, &buf[..10], &mut pos, 1024).is_err());
    }
}
