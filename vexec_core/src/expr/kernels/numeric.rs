//! numeric(p, s) values to scaled integers (see `VExpr::NumericToScaled`).

use crate::batch::{varlena, Column, RowIdx, Values};
use crate::expr::KernelError;

/// Read the numerics of rows `sel` (plain varlenas) as integers scaled by
/// `10^scale`. A row that has no exact `i64` at that scale is reported.
pub fn to_scaled(arg: &Column, scale: u16, sel: &[RowIdx], out: &mut Column) -> Result<(), KernelError> {
    scaled_rows::<false>(arg, scale, sel, out).expect("plain values")
}

/// As [`to_scaled`] for values that may be compressed or out of line: None
/// when one among `sel` is (the caller detoasts them and reads again). The
/// check costs no pass of its own over the values.
pub fn to_scaled_if_plain(
    arg: &Column,
    scale: u16,
    sel: &[RowIdx],
    out: &mut Column,
) -> Option<Result<(), KernelError>> {
    scaled_rows::<true>(arg, scale, sel, out)
}

#[inline]
fn scaled_rows<const CHECK_PLAIN: bool>(
    arg: &Column,
    scale: u16,
    sel: &[RowIdx],
    out: &mut Column,
) -> Option<Result<(), KernelError>> {
    let Values::Datum(v) = &arg.values else { panic!("numeric expected, got {:?}", arg.values.phys_type()) };
    let Values::I64(o) = &mut out.values else { panic!("scaled numerics are I64") };
    for &row in sel {
        let i = row as usize;
        let valid = arg.validity.get(i);
        out.validity.set(i, valid);
        if valid {
            let p = v[i] as *const u8;
            // SAFETY: valid rows point to varlenas; the fast path reads
            // only plain 1-byte-header values (the form stored on disk).
            let h = unsafe { *p };
            if h & 0x01 == 0x01 && h != 0x01 {
                if let Some(x) = unsafe { crate::numeric::decode_scaled_i64_short(p, scale) } {
                    o[i] = x;
                    continue;
                }
            }
            // SAFETY: as above, plain unless checked here.
            if CHECK_PLAIN && !unsafe { varlena::is_plain(p) } {
                return None;
            }
            let payload = unsafe { varlena::bytes(p) };
            match crate::numeric::decode_scaled_i64(payload, scale) {
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
    use crate::numeric::{encode, encode_special, Special};

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
}
