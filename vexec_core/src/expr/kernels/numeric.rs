//! numeric(p, s) values to scaled integers (see `VExpr::NumericToScaled`).

use crate::batch::{varlena, Column, RowIdx, Values};
use crate::expr::KernelError;

/// Read the numerics of rows `sel` (plain varlenas) as integers scaled by
/// `10^scale`, into `out`'s width (I64 or I128). A row that has no exact
/// integer of that width at that scale is reported.
///
/// # Safety
/// The valid Datum values among the rows point to plain varlenas.
pub unsafe fn to_scaled(
    arg: &Column,
    scale: u16,
    sel: &[RowIdx],
    out: &mut Column,
) -> Result<(), KernelError> {
    // SAFETY: the caller vouches for the values.
    unsafe { scaled_rows::<false>(arg, scale, sel, out) }.expect("plain values")
}

/// As [`to_scaled`] for values that may be compressed or out of line: None
/// when one among `sel` is (the caller detoasts them and reads again). The
/// check costs no pass of its own over the values.
///
/// # Safety
/// The valid Datum values among the rows point to varlenas (any form).
pub unsafe fn to_scaled_if_plain(
    arg: &Column,
    scale: u16,
    sel: &[RowIdx],
    out: &mut Column,
) -> Option<Result<(), KernelError>> {
    // SAFETY: the caller vouches for the values.
    unsafe { scaled_rows::<true>(arg, scale, sel, out) }
}

/// The Decimal128 values `v` of rows `sel` (already scaled by the scale
/// asked for) into `out` (a new column: every row valid), at its width; a
/// value too wide for an I64 column is reported, as the varlena path
/// reports it.
pub fn from_decimal(
    v: &[i128],
    validity: &crate::batch::Bitmap,
    sel: &[RowIdx],
    out: &mut Column,
) -> Result<(), KernelError> {
    // NOT NULL columns (the common case) copy without a validity test per
    // row, and test the range of all rows at once.
    let all_valid = validity.all_set();
    match &mut out.values {
        Values::I128(o) => {
            for &r in sel {
                o[r as usize] = v[r as usize];
            }
        }
        Values::I64(o) if all_valid => {
            let mut fits = true;
            for &r in sel {
                let x = v[r as usize];
                o[r as usize] = x as i64;
                fits &= x as i64 as i128 == x;
            }
            if !fits {
                let row =
                    sel.iter().find(|&&r| i64::try_from(v[r as usize]).is_err()).expect("one does not fit");
                return Err(KernelError { row: *row });
            }
        }
        Values::I64(o) => {
            for &r in sel {
                let i = r as usize;
                if validity.get(i) {
                    o[i] = i64::try_from(v[i]).map_err(|_| KernelError { row: r })?;
                }
            }
        }
        other => panic!("scaled numerics are I64 or I128, not {:?}", other.phys_type()),
    }
    if !all_valid {
        for &r in sel {
            out.validity.set(r as usize, validity.get(r as usize));
        }
    }
    Ok(())
}

/// An integer width scaled numerics are read into.
trait ScaledInt: Copy {
    fn from_i64(x: i64) -> Self;
    /// The general decoding (any header form, any number of digits).
    fn decode(payload: &[u8], scale: u16) -> Option<Self>;
}

impl ScaledInt for i64 {
    fn from_i64(x: i64) -> i64 {
        x
    }
    fn decode(payload: &[u8], scale: u16) -> Option<i64> {
        crate::numeric::decode_scaled_i64(payload, scale)
    }
}

impl ScaledInt for i128 {
    fn from_i64(x: i64) -> i128 {
        x as i128
    }
    fn decode(payload: &[u8], scale: u16) -> Option<i128> {
        crate::numeric::decode_scaled_i128(payload, scale)
    }
}

/// # Safety
/// As [`to_scaled`] (`CHECK_PLAIN`: as [`to_scaled_if_plain`]).
unsafe fn scaled_rows<const CHECK_PLAIN: bool>(
    arg: &Column,
    scale: u16,
    sel: &[RowIdx],
    out: &mut Column,
) -> Option<Result<(), KernelError>> {
    let Values::Datum(v) = &arg.values else { panic!("numeric expected, got {:?}", arg.values.phys_type()) };
    match &mut out.values {
        Values::I64(o) => scaled_into::<CHECK_PLAIN, i64>(v, &arg.validity, scale, sel, o, &mut out.validity),
        Values::I128(o) => {
            scaled_into::<CHECK_PLAIN, i128>(v, &arg.validity, scale, sel, o, &mut out.validity)
        }
        other => panic!("scaled numerics are I64 or I128, not {:?}", other.phys_type()),
    }
}

/// # Safety
/// As [`scaled_rows`].
#[inline]
unsafe fn scaled_into<const CHECK_PLAIN: bool, T: ScaledInt>(
    v: &[usize],
    validity: &crate::batch::Bitmap,
    scale: u16,
    sel: &[RowIdx],
    o: &mut [T],
    out_validity: &mut crate::batch::Bitmap,
) -> Option<Result<(), KernelError>> {
    for &row in sel {
        let i = row as usize;
        let valid = validity.get(i);
        out_validity.set(i, valid);
        if valid {
            let p = v[i] as *const u8;
            // SAFETY: valid rows point to varlenas; the fast path reads
            // only plain 1-byte-header values (the form stored on disk).
            let h = unsafe { *p };
            if h & 0x01 == 0x01 && h != 0x01 {
                // SAFETY: p is a plain 1-byte-header varlena (checked just above), as
                // decode_scaled_i64_short requires.
                if let Some(x) = unsafe { crate::numeric::decode_scaled_i64_short(p, scale) } {
                    o[i] = T::from_i64(x);
                    continue;
                }
            }
            // SAFETY: as above, plain unless checked here.
            if CHECK_PLAIN && !unsafe { varlena::is_plain(p) } {
                return None;
            }
            // SAFETY: plain: either CHECK_PLAIN checked it or the caller vouches for it.
            let payload = unsafe { varlena::bytes(p) };
            match T::decode(payload, scale) {
                Some(x) => o[i] = x,
                None => return Some(Err(KernelError { row })),
            }
        }
    }
    Some(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::PhysType;

    // SAFETY (both): the tests' columns point to live test varlenas.
    fn to_scaled(arg: &Column, scale: u16, sel: &[RowIdx], out: &mut Column) -> Result<(), KernelError> {
        // SAFETY: see above: the tests' columns point to live test varlenas.
        unsafe { super::to_scaled(arg, scale, sel, out) }
    }
    fn to_scaled_if_plain(
        arg: &Column,
        scale: u16,
        sel: &[RowIdx],
        out: &mut Column,
    ) -> Option<Result<(), KernelError>> {
        // SAFETY: as above.
        unsafe { super::to_scaled_if_plain(arg, scale, sel, out) }
    }
    use crate::numeric::{encode, encode_payload, encode_special, Special};

    #[test]
    fn decimals_to_scaled_integers_dense_and_sparse() {
        use crate::batch::Bitmap;
        let v: Vec<i128> = vec![1, -2, i64::MAX as i128, i64::MIN as i128, 5, i64::MAX as i128 + 1, 7];
        let all = Bitmap::all_valid(v.len());
        for phys in [PhysType::I64, PhysType::I128] {
            for sel in [vec![0, 1, 2, 3, 4], vec![0, 2, 4]] {
                let mut out = Column::new(phys, v.len());
                from_decimal(&v, &all, &sel, &mut out).unwrap();
                for &r in &sel {
                    assert!(out.is_valid(r as usize));
                    assert_eq!(
                        out.values.datum(r as usize) as i64 as i128,
                        v[r as usize],
                        "{phys:?} row {r}"
                    );
                }
            }
        }
        // Past the i64: reported at its row, densely or not.
        for sel in [(0..7).collect::<Vec<RowIdx>>(), vec![1, 5, 6]] {
            let mut out = Column::new(PhysType::I64, v.len());
            assert_eq!(from_decimal(&v, &all, &sel, &mut out), Err(KernelError { row: 5 }));
        }
        // A NULL row stays NULL and is not range-checked.
        let mut some_null = Bitmap::all_valid(v.len());
        some_null.set(5, false);
        let mut out = Column::new(PhysType::I64, v.len());
        from_decimal(&v, &some_null, &(0..7).collect::<Vec<RowIdx>>(), &mut out).unwrap();
        assert!(!out.is_valid(5) && out.is_valid(6));
    }

    #[test]
    fn scaled_values_nulls_and_unrepresentable_rows() {
        let vals = [
            encode(12345, 2),
            encode(-5, 2),
            encode(7, 3),
            crate::batch::varlena::make_4b(&encode_special(Special::NaN)),
        ];
        let mut col = Column::new(PhysType::Datum, 5);
        for (i, v) in vals.iter().enumerate() {
            col.values.set_datum(i, v.as_ptr() as usize);
        }
        col.validity.set(4, false);
        let mut out = Column::new(PhysType::I64, 5);
        to_scaled(&col, 2, &[0, 1, 4], &mut out).unwrap();
        assert_eq!((out.values.datum(0) as i64, out.values.datum(1) as i64), (12345, -5));
        assert!(!out.is_valid(4));
        // Another display scale, and NaN, are not read as scaled integers.
        assert_eq!(to_scaled(&col, 2, &[0, 2], &mut out), Err(KernelError { row: 2 }));
        assert_eq!(to_scaled(&col, 2, &[3], &mut out), Err(KernelError { row: 3 }));
        // A compressed value is left to the caller to detoast.
        let mut compressed = crate::numeric::encode(12345, 2);
        compressed[0] |= 0x02;
        col.values.set_datum(2, compressed.as_ptr() as usize);
        assert_eq!(to_scaled_if_plain(&col, 2, &[0, 1], &mut out), Some(Ok(())));
        assert_eq!(to_scaled_if_plain(&col, 2, &[0, 2], &mut out), None);
    }

    #[test]
    fn wide_scaled_values_read_at_38_digits() {
        let max38 = 10i128.pow(38) - 1;
        let vals =
            [encode(max38, 2), encode(-max38, 2), encode(-5, 2), encode(7, 3), encode(10i128.pow(20), 2)];
        let mut col = Column::new(PhysType::Datum, vals.len());
        for (i, v) in vals.iter().enumerate() {
            col.values.set_datum(i, v.as_ptr() as usize);
        }
        let mut out = Column::new(PhysType::I128, vals.len());
        to_scaled(&col, 2, &[0, 1, 2, 4], &mut out).unwrap();
        assert_eq!(out.values, Values::I128(vec![max38, -max38, -5, 0, 10i128.pow(20)]));
        assert_eq!(to_scaled(&col, 2, &[3], &mut out), Err(KernelError { row: 3 }), "another display scale");
        // The same values into an I64 column: the wide ones are reported.
        let mut narrow = Column::new(PhysType::I64, vals.len());
        assert_eq!(to_scaled(&col, 2, &[2, 0], &mut narrow), Err(KernelError { row: 0 }));
        // Short (1-byte header) varlenas, as stored on disk, take the fast path.
        let short: Vec<Vec<u8>> = [123456789i128, 10i128.pow(30) + 1]
            .iter()
            .map(|&x| varlena::make_1b(&encode_payload(x, 2)))
            .collect();
        for (i, v) in short.iter().enumerate() {
            col.values.set_datum(i, v.as_ptr() as usize);
        }
        to_scaled(&col, 2, &[0, 1], &mut out).unwrap();
        let Values::I128(o) = &out.values else { unreachable!() };
        assert_eq!(o[..2], [123456789, 10i128.pow(30) + 1]);
    }
}
