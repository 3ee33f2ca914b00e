//! The `arrow` layout's representations, and the exact conversions between
//! them and the `postgres` layout.
//!
//! Which columns a batch holds in which layout is decided per column and
//! per batch (`vexec.batch_format`, the per-type settings and the random
//! layout of the harness), so every consumer is ready for either. A value
//! the arrow layout cannot hold exactly (a timestamp past Arrow's range, a
//! numeric NaN or a TOASTed numeric) keeps its whole column in the postgres
//! layout for that batch: a conversion to the arrow layout is all or
//! nothing, and one back is always exact.

use arrow_buffer::BooleanBuffer;

use super::strings::{self, StringForm};
use super::{varlena, Column, RowIdx, Values};

/// Days from 1970-01-01 (Arrow's epoch) to 2000-01-01 (PostgreSQL's).
pub const UNIX_EPOCH_DAYS: i32 = 10_957;
/// Microseconds from 1970-01-01 00:00 to 2000-01-01 00:00.
pub const UNIX_EPOCH_MICROS: i64 = 946_684_800_000_000;

/// A PostgreSQL date as days since the Unix epoch. The infinities
/// (`i32::MIN`, `i32::MAX`) stay themselves; every finite date
/// (PostgreSQL's range ends at 5874897-12-31) shifts without overflow and
/// lands strictly between them, so the order is kept.
#[inline]
pub fn date_to_unix(d: i32) -> i32 {
    if d == i32::MIN || d == i32::MAX {
        d
    } else {
        d.wrapping_add(UNIX_EPOCH_DAYS)
    }
}

/// The inverse of [`date_to_unix`].
#[inline]
pub fn date_from_unix(d: i32) -> i32 {
    if d == i32::MIN || d == i32::MAX {
        d
    } else {
        d.wrapping_sub(UNIX_EPOCH_DAYS)
    }
}

/// A PostgreSQL timestamp as microseconds since the Unix epoch; the
/// infinities (`i64::MIN`, `i64::MAX`) stay themselves. None for the
/// timestamps after 294246 AD, which PostgreSQL has and an `i64` counted
/// from 1970 does not.
#[inline]
pub fn timestamp_to_unix(t: i64) -> Option<i64> {
    if t == i64::MIN || t == i64::MAX {
        Some(t)
    } else {
        t.checked_add(UNIX_EPOCH_MICROS).filter(|&u| u != i64::MAX)
    }
}

/// The inverse of [`timestamp_to_unix`].
#[inline]
pub fn timestamp_from_unix(t: i64) -> i64 {
    if t == i64::MIN || t == i64::MAX {
        t
    } else {
        t.wrapping_sub(UNIX_EPOCH_MICROS)
    }
}

/// The arrow-layout representation of a column's type, where it has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrowKind {
    /// bool.
    Bits,
    /// date.
    Date32,
    /// timestamp, timestamptz.
    TimestampUs,
    /// numeric(p <= 38, s).
    Decimal128 { scale: u16 },
    /// text, varchar, bpchar, bytea as byte views (Utf8View/BinaryView).
    View,
    /// text, varchar, bpchar, bytea as offsets + values (Utf8/Binary).
    Offsets,
}

/// The values of a postgres-layout column `col` in the arrow layout of
/// `kind`, or None when a valid value among `rows` has no exact arrow form
/// (the column then stays in the postgres layout). Rows outside `rows` get
/// unspecified values, as they had. `spare`, the values of an earlier batch
/// in that layout, lends its buffer (a batch's conversions allocate nothing).
///
/// # Safety
/// For `Decimal128`, `View` and `Offsets`, every valid Datum among `rows`
/// points to a varlena.
pub unsafe fn to_arrow(
    col: &Column,
    kind: ArrowKind,
    rows: &[RowIdx],
    spare: Option<Values>,
) -> Option<Values> {
    Some(match (kind, &col.values) {
        (ArrowKind::Bits, Values::Bool(v)) => {
            Values::Bits(BooleanBuffer::from_iter(v.iter().map(|&b| b != 0)))
        }
        (ArrowKind::Date32, Values::I32(v)) => {
            let mut out = match spare {
                Some(Values::Date32(s)) => emptied(s),
                _ => Vec::with_capacity(v.len()),
            };
            out.extend(v.iter().map(|&d| date_to_unix(d)));
            Values::Date32(out)
        }
        (ArrowKind::TimestampUs, Values::I64(v)) => {
            let fits = |&r: &RowIdx| !col.is_valid(r as usize) || timestamp_to_unix(v[r as usize]).is_some();
            if !rows.iter().all(fits) {
                return None;
            }
            let mut out = match spare {
                Some(Values::TimestampUs(s)) => emptied(s),
                _ => Vec::with_capacity(v.len()),
            };
            // Rows outside `rows` may hold anything: shifted without a check.
            out.extend(v.iter().map(|&t| timestamp_to_unix(t).unwrap_or(t)));
            Values::TimestampUs(out)
        }
        (ArrowKind::Decimal128 { scale }, Values::Datum(v)) => {
            // Unselected rows are unspecified: a spare buffer's old values stay.
            let mut out = match spare {
                Some(Values::Decimal128(s, _)) => s,
                _ => Vec::with_capacity(v.len()),
            };
            out.resize(v.len(), 0);
            let all_valid = col.validity.all_set();
            for &r in rows {
                let i = r as usize;
                if all_valid || col.is_valid(i) {
                    // SAFETY: this function's contract: valid Datums are varlenas.
                    out[i] = unsafe { decimal_of(v[i] as *const u8, scale) }?;
                }
            }
            Values::Decimal128(out, scale)
        }
        // SAFETY: this function's contract.
        (ArrowKind::View, _) => return unsafe { strings::from_datums(col, StringForm::View, rows, spare) },
        (ArrowKind::Offsets, _) => {
            // SAFETY: this function's contract.
            return unsafe { strings::from_datums(col, StringForm::Offsets, rows, spare) };
        }
        _ => return None,
    })
}

/// `v` without its values, its buffer kept.
fn emptied<T>(mut v: Vec<T>) -> Vec<T> {
    v.clear();
    v
}

/// The numeric varlena at `p` times `10^scale`, when it is plain, finite and
/// of display scale `scale`.
///
/// # Safety
/// `p` points to a varlena.
pub(crate) unsafe fn decimal_of(p: *const u8, scale: u16) -> Option<i128> {
    // SAFETY: the caller's contract; only plain varlenas are read.
    unsafe {
        // The form stored on disk (a 1-byte header) and values that fit an
        // i64 first: the path the numeric kernels take.
        let h = *p;
        if h & 0x01 == 0x01 && h != 0x01 {
            if let Some(x) = crate::numeric::decode_scaled_i64_short(p, scale) {
                return Some(x as i128);
            }
        }
        if !varlena::is_plain(p) {
            return None;
        }
        crate::numeric::decode_scaled_i128(varlena::bytes(p), scale)
    }
}

/// `col` in the postgres layout, computed for the rows `rows` (the others
/// unspecified); a postgres-layout column is returned as it is. A
/// Decimal128 value becomes a numeric varlena of the column's display
/// scale, a view or offsets value a varlena of its bytes, stored by `alloc`
/// (which returns its Datum; the host's memory for the batch).
pub fn to_postgres(col: &Column, rows: &[RowIdx], alloc: &mut dyn FnMut(&[u8]) -> usize) -> Column {
    let values = match &col.values {
        Values::Bits(v) => Values::Bool(v.iter().map(u8::from).collect()),
        Values::Date32(v) => Values::I32(v.iter().map(|&d| date_from_unix(d)).collect()),
        Values::TimestampUs(v) => Values::I64(v.iter().map(|&t| timestamp_from_unix(t)).collect()),
        Values::Decimal128(v, scale) => {
            let mut out = vec![0usize; v.len()];
            for &r in rows {
                let i = r as usize;
                if col.is_valid(i) {
                    out[i] = alloc(&crate::numeric::encode(v[i], *scale));
                }
            }
            Values::Datum(out)
        }
        v @ (Values::View(_) | Values::Offsets(_)) => strings::to_datums(v, col, rows, alloc),
        _ => return col.clone(),
    };
    Column { values, validity: col.validity.clone() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::PhysType;

    const MAX_FINITE_DATE: i32 = 2_147_483_494 - 2_451_545; // DATE_END_JULIAN - POSTGRES_EPOCH_JDATE
    const MIN_DATE: i32 = -2_451_545; // julian day 0
    const END_TIMESTAMP: i64 = 9_223_371_331_200_000_000; // PostgreSQL's first timestamp past its range
    const MIN_TIMESTAMP: i64 = -211_813_488_000_000_000;

    #[test]
    fn dates_shift_exactly_and_keep_infinities_and_order() {
        let days =
            [i32::MIN, MIN_DATE, -UNIX_EPOCH_DAYS - 1, -UNIX_EPOCH_DAYS, 0, 1, MAX_FINITE_DATE - 1, i32::MAX];
        let unix: Vec<i32> = days.iter().map(|&d| date_to_unix(d)).collect();
        assert_eq!(unix[3], 0, "2000-01-01 minus 10957 days is 1970-01-01");
        assert_eq!((unix[0], unix[7]), (i32::MIN, i32::MAX));
        assert!(unix.windows(2).all(|w| w[0] < w[1]), "order kept: {unix:?}");
        for d in days {
            assert_eq!(date_from_unix(date_to_unix(d)), d);
        }
        assert!(date_to_unix(MAX_FINITE_DATE) < i32::MAX);
    }

    #[test]
    fn timestamps_past_the_unix_range_have_no_arrow_form() {
        assert_eq!(timestamp_to_unix(0), Some(UNIX_EPOCH_MICROS));
        assert_eq!(timestamp_to_unix(i64::MIN), Some(i64::MIN));
        assert_eq!(timestamp_to_unix(i64::MAX), Some(i64::MAX));
        assert_eq!(timestamp_to_unix(END_TIMESTAMP - 1), None);
        assert_eq!(timestamp_to_unix(i64::MAX - UNIX_EPOCH_MICROS), None, "would be +infinity's sentinel");
        let last = i64::MAX - UNIX_EPOCH_MICROS - 1;
        assert_eq!(timestamp_to_unix(last), Some(i64::MAX - 1));
        for t in [MIN_TIMESTAMP, -1, 0, 1, last, i64::MIN, i64::MAX] {
            assert_eq!(timestamp_from_unix(timestamp_to_unix(t).unwrap()), t);
        }
    }

    fn ints(phys: PhysType, vals: &[Option<i64>]) -> Column {
        let mut c = Column::new(phys, vals.len());
        for (i, v) in vals.iter().enumerate() {
            match v {
                Some(x) => c.values.set_datum(i, *x as usize),
                None => c.validity.set(i, false),
            }
        }
        c
    }

    fn no_alloc(_: &[u8]) -> usize {
        unreachable!("fixed-width conversions allocate nothing")
    }

    #[test]
    fn fixed_width_columns_round_trip_through_the_arrow_layout() {
        let all: Vec<RowIdx> = (0..4).collect();
        for (phys, kind, vals) in [
            (PhysType::Bool, ArrowKind::Bits, vec![Some(1), Some(0), None, Some(1)]),
            (
                PhysType::I32,
                ArrowKind::Date32,
                vec![Some(i32::MIN as i64), Some(-1), None, Some(i32::MAX as i64)],
            ),
            (PhysType::I64, ArrowKind::TimestampUs, vec![Some(i64::MIN), Some(MIN_TIMESTAMP), None, Some(7)]),
        ] {
            let col = ints(phys, &vals);
            // SAFETY: no Datum column.
            let first = unsafe { to_arrow(&col, kind, &all, None) }.expect("representable");
            // SAFETY: as above. A second batch's conversion into the first's buffer.
            let values = unsafe { to_arrow(&col, kind, &all, Some(first.clone())) }.expect("representable");
            assert_eq!(values, first, "{kind:?} through a spare buffer");
            assert!(values.is_arrow());
            assert_eq!(values.phys_type(), phys);
            let arrow = Column { values, validity: col.validity.clone() };
            for i in [0, 1, 3] {
                assert_eq!(
                    arrow.values.datum(i),
                    col.values.datum(i),
                    "{kind:?} row {i}: Datum read in place"
                );
            }
            let back = to_postgres(&arrow, &all, &mut no_alloc);
            for i in [0, 1, 3] {
                assert_eq!(back.values.datum(i), col.values.datum(i), "{kind:?} row {i}");
            }
            assert!(!back.is_valid(2));
        }
        let bits = ints(PhysType::Bool, &[Some(1), Some(0)]);
        // SAFETY: no Datum column.
        let Some(Values::Bits(b)) = (unsafe { to_arrow(&bits, ArrowKind::Bits, &all[..2], None) }) else {
            panic!()
        };
        assert_eq!(b.values()[0], 0b01, "least significant bit first");
    }

    #[test]
    fn a_timestamp_past_the_range_keeps_the_batch_in_the_postgres_layout_unless_unselected_or_null() {
        let mut col = ints(PhysType::I64, &[Some(1), Some(END_TIMESTAMP - 1), Some(2)]);
        // SAFETY: no Datum column.
        unsafe {
            assert!(to_arrow(&col, ArrowKind::TimestampUs, &[0, 1, 2], None).is_none());
            assert!(to_arrow(&col, ArrowKind::TimestampUs, &[0, 2], None).is_some(), "row 1 is not selected");
            col.validity.set(1, false);
            assert!(to_arrow(&col, ArrowKind::TimestampUs, &[0, 1, 2], None).is_some(), "row 1 is NULL");
        }
    }

    #[test]
    fn decimals_read_numerics_of_the_columns_scale_only() {
        let vals = [
            crate::numeric::encode(12345, 2),                              // 123.45
            crate::numeric::encode(-1, 2),                                 // -0.01
            crate::numeric::encode(i128::MAX / 10, 2),                     // 38 digits
            varlena::make_1b(&crate::numeric::encode_payload(-98_765, 2)), // as stored on disk
            crate::numeric::encode(5, 3),                                  // another display scale
            crate::numeric::encode_special(crate::numeric::Special::NaN),
        ];
        let mut col = Column::new(PhysType::Datum, vals.len());
        for (i, v) in vals.iter().enumerate() {
            col.values.set_datum(i, v.as_ptr() as usize);
        }
        let sel: Vec<RowIdx> = (0..4).collect();
        // SAFETY: the Datums point to the live varlenas above.
        let Some(Values::Decimal128(d, 2)) =
            (unsafe { to_arrow(&col, ArrowKind::Decimal128 { scale: 2 }, &sel, None) })
        else {
            panic!("four numerics of scale 2")
        };
        assert_eq!(&d[..4], &[12345, -1, i128::MAX / 10, -98_765]);
        for bad in [4, 5] {
            // SAFETY: as above.
            let converted = unsafe { to_arrow(&col, ArrowKind::Decimal128 { scale: 2 }, &[0, bad], None) };
            assert!(converted.is_none(), "row {bad}");
        }
        // Back: the varlena numeric_in would make, allocated by the host.
        let arrow = Column { values: Values::Decimal128(d, 2), validity: col.validity.clone() };
        let mut arena: Vec<Vec<u8>> = Vec::new();
        let back = to_postgres(&arrow, &sel, &mut |bytes| {
            arena.push(bytes.to_vec());
            arena.last().unwrap().as_ptr() as usize
        });
        for i in 0..3 {
            // (Row 3 comes back with a 4-byte header: the same numeric.)
            // SAFETY: both point to live varlenas.
            let (a, b) = unsafe {
                (
                    varlena::bytes(back.values.datum(i) as *const u8),
                    varlena::bytes(col.values.datum(i) as *const u8),
                )
            };
            assert_eq!(a, b, "row {i}");
        }
    }
}
