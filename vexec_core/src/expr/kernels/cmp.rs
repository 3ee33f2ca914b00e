//! Comparisons. Results are booleans, NULL when either input is NULL.
//!
//! - Native: integers, dates, timestamps (their infinities are the extreme
//!   integers, so native order is PostgreSQL's), booleans (false < true).
//! - Float: PostgreSQL's float order: NaN = NaN, NaN above everything, and
//!   -0 = 0 (`float8_cmp_internal`).
//! - Text: bytewise (memcmp, then length), exact only under the C collation
//!   for ordering and under a deterministic collation for (in)equality; the
//!   compiler only picks this kernel when that holds. Values must be plain;
//!   they may be Datums, byte views or offsets (`batch::strings::Bytes`).
//! - Bpchar: as Text after removing trailing blanks (`bcTruelen`).

use std::cmp::Ordering;

use crate::batch::strings::Bytes;
use crate::batch::{Column, RowIdx, Values};
use crate::expr::{CmpKind, CmpOp};

#[inline]
pub fn float_cmp<F: PartialOrd + Copy>(a: F, b: F) -> Ordering {
    #[allow(clippy::eq_op)]
    let (an, bn) = (a != a, b != b);
    match (an, bn) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// Remove trailing blanks (bpchar semantics).
#[inline]
pub fn trim_blanks(b: &[u8]) -> &[u8] {
    let mut n = b.len();
    while n > 0 && b[n - 1] == b' ' {
        n -= 1;
    }
    &b[..n]
}

#[inline]
fn holds(op: CmpOp, o: Ordering) -> bool {
    match op {
        CmpOp::Eq => o == Ordering::Equal,
        CmpOp::Ne => o != Ordering::Equal,
        CmpOp::Lt => o == Ordering::Less,
        CmpOp::Le => o != Ordering::Greater,
        CmpOp::Gt => o == Ordering::Greater,
        CmpOp::Ge => o != Ordering::Less,
    }
}

/// Ordering of two values of row `r` (both valid).
///
/// # Safety
/// Datum values point to plain varlenas.
#[inline]
pub unsafe fn order_at(kind: CmpKind, l: &Values, lr: usize, r: &Values, rr: usize) -> Ordering {
    match (l, r) {
        (Values::Bool(a), Values::Bool(b)) => a[lr].cmp(&b[rr]),
        (Values::I16(a), Values::I16(b)) => a[lr].cmp(&b[rr]),
        (Values::I32(a), Values::I32(b)) => a[lr].cmp(&b[rr]),
        (Values::I64(a), Values::I64(b)) => a[lr].cmp(&b[rr]),
        (Values::I128(a), Values::I128(b)) => a[lr].cmp(&b[rr]),
        (Values::F32(a), Values::F32(b)) => float_cmp(a[lr], b[rr]),
        (Values::F64(a), Values::F64(b)) => float_cmp(a[lr], b[rr]),
        // SAFETY: the caller vouches that Datums are plain varlenas.
        (a, b) => match unsafe { (Bytes::of(a), Bytes::of(b)) } {
            (Some(a), Some(b)) => bytes_order(kind, a.get(lr), b.get(rr)),
            _ => panic!("comparison of {:?} with {:?}", a.phys_type(), b.phys_type()),
        },
    }
}

/// The order of two varlenas' bytes (bpchar without trailing blanks).
#[inline]
fn bytes_order(kind: CmpKind, x: &[u8], y: &[u8]) -> Ordering {
    match kind {
        CmpKind::Bpchar => trim_blanks(x).cmp(trim_blanks(y)),
        _ => x.cmp(y),
    }
}

/// `out[r] = l[r] op r[r]` for every row in `sel`.
///
/// # Safety
/// The valid Datum values among the rows point to plain varlenas.
pub unsafe fn compare(op: CmpOp, kind: CmpKind, l: &Column, r: &Column, sel: &[RowIdx], out: &mut Column) {
    let Values::Bool(ov) = &mut out.values else { panic!("boolean output expected") };
    macro_rules! native {
        ($a:expr, $b:expr, $cmp:expr) => {
            for &i in sel {
                let i = i as usize;
                let valid = l.validity.get(i) && r.validity.get(i);
                out.validity.set(i, valid);
                ov[i] = holds(op, $cmp($a[i], $b[i])) as u8;
            }
        };
    }
    match (&l.values, &r.values) {
        (Values::I32(a), Values::I32(b)) => native!(a, b, |x: i32, y: i32| x.cmp(&y)),
        (Values::I64(a), Values::I64(b)) => native!(a, b, |x: i64, y: i64| x.cmp(&y)),
        (Values::I16(a), Values::I16(b)) => native!(a, b, |x: i16, y: i16| x.cmp(&y)),
        (Values::I128(a), Values::I128(b)) => native!(a, b, |x: i128, y: i128| x.cmp(&y)),
        (Values::F64(a), Values::F64(b)) => native!(a, b, float_cmp::<f64>),
        (Values::F32(a), Values::F32(b)) => native!(a, b, float_cmp::<f32>),
        (Values::Bool(a), Values::Bool(b)) => native!(a, b, |x: u8, y: u8| x.cmp(&y)),
        // SAFETY: this function's contract.
        (a, b) => match unsafe { (Bytes::of(a), Bytes::of(b)) } {
            (Some(a), Some(b)) => {
                for &i in sel {
                    let i = i as usize;
                    let valid = l.validity.get(i) && r.validity.get(i);
                    out.validity.set(i, valid);
                    if valid {
                        ov[i] = holds(op, bytes_order(kind, a.get(i), b.get(i))) as u8;
                    }
                }
            }
            _ => panic!("comparison of {:?} with {:?}", a.phys_type(), b.phys_type()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{full_selection, varlena, PhysType};

    fn compare(op: CmpOp, kind: CmpKind, l: &Column, r: &Column, sel: &[RowIdx], out: &mut Column) {
        // SAFETY: the tests' Datum columns point to live test varlenas.
        unsafe { super::compare(op, kind, l, r, sel, out) }
    }

    fn col_f64(v: &[f64]) -> Column {
        Column { values: Values::F64(v.to_vec()), validity: crate::batch::Bitmap::all_valid(v.len()) }
    }

    #[test]
    fn float_order_is_postgres_order() {
        let nan = f64::NAN;
        assert_eq!(float_cmp(nan, nan), Ordering::Equal);
        assert_eq!(float_cmp(nan, f64::INFINITY), Ordering::Greater);
        assert_eq!(float_cmp(-0.0, 0.0), Ordering::Equal);
        assert_eq!(float_cmp(1.0, nan), Ordering::Less);
        let l = col_f64(&[nan, nan, -0.0, 1.0]);
        let r = col_f64(&[nan, 1e308, 0.0, nan]);
        let mut out = Column::new(PhysType::Bool, 4);
        compare(CmpOp::Eq, CmpKind::Float, &l, &r, &full_selection(4), &mut out);
        assert_eq!(out.values, Values::Bool(vec![1, 0, 1, 0]));
        compare(CmpOp::Gt, CmpKind::Float, &l, &r, &full_selection(4), &mut out);
        assert_eq!(out.values, Values::Bool(vec![0, 1, 0, 0]));
    }

    #[test]
    fn nulls_give_null_and_only_selected_rows_are_written() {
        let mut l =
            Column { values: Values::I32(vec![1, 2, 3]), validity: crate::batch::Bitmap::all_valid(3) };
        l.validity.set(1, false);
        let r = Column { values: Values::I32(vec![1, 2, 4]), validity: crate::batch::Bitmap::all_valid(3) };
        let mut out = Column::new(PhysType::Bool, 3);
        out.validity.set_all(false);
        compare(CmpOp::Lt, CmpKind::Native, &l, &r, &[1, 2], &mut out);
        assert!(!out.validity.get(0), "row 0 was not selected");
        assert!(!out.validity.get(1), "NULL input");
        assert!(out.validity.get(2));
        assert_eq!(out.values, Values::Bool(vec![0, 0, 1]));
    }

    #[test]
    fn bpchar_ignores_trailing_blanks_text_does_not() {
        let a = varlena::make_1b(b"ab  ");
        let b = varlena::make_1b(b"ab");
        let l = Column {
            values: Values::Datum(vec![a.as_ptr() as usize]),
            validity: crate::batch::Bitmap::all_valid(1),
        };
        let r = Column {
            values: Values::Datum(vec![b.as_ptr() as usize]),
            validity: crate::batch::Bitmap::all_valid(1),
        };
        let mut out = Column::new(PhysType::Bool, 1);
        compare(CmpOp::Eq, CmpKind::Bpchar, &l, &r, &[0], &mut out);
        assert_eq!(out.values, Values::Bool(vec![1]));
        compare(CmpOp::Eq, CmpKind::Text, &l, &r, &[0], &mut out);
        assert_eq!(out.values, Values::Bool(vec![0]));
        compare(CmpOp::Gt, CmpKind::Text, &l, &r, &[0], &mut out);
        assert_eq!(out.values, Values::Bool(vec![1]), "a longer string with the same prefix sorts after");
    }
}
