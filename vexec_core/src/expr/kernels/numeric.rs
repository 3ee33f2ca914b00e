//! numeric(p, s) values to scaled integers (see `VExpr::NumericToScaled`).

use crate::batch::{varlena, Column, RowIdx, Values};
use crate::expr::KernelError;

/// Read the numerics of rows `sel` (plain varlenas) as integers scaled by
/// `10^scale`. A row that has no exact `i64` at that scale is reported.
pub fn to_scaled(arg: &Column, scale: u16, sel: &[RowIdx], out: &mut Column) -> Result<(), KernelError> {
    let Values::Datum(v) = &arg.values else { panic!("numeric expected, got {:?}", arg.values.phys_type()) };
    let Values::I64(o) = &mut out.values else { panic!("scaled numerics are I64") };
    for &row in sel {
        let i = row as usize;
        let valid = arg.validity.get(i);
        out.validity.set(i, valid);
        if valid {
            // SAFETY: the evaluator made the valid rows' varlenas plain.
            let payload = unsafe { varlena::bytes(v[i] as *const u8) };
            o[i] = crate::numeric::decode_scaled_i64(payload, scale).ok_or(KernelError { row })?;
        }
    }
    Ok(())
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
    }
}
