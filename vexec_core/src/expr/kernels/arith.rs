//! Arithmetic with PostgreSQL's error conditions, reported as KernelError
//! (the caller then lets PostgreSQL raise the error itself):
//!
//! - integers (int2/int4/int8 at the operator's result width): overflow of
//!   + - * and unary minus, division or modulo by zero, MIN / -1. MIN % -1 is
//!   0, as in `int4mod`.
//! - floats (`float8_pl` and friends): a result that is infinite although no
//!   input is (overflow), a product or quotient that is zero although no input
//!   is (underflow), division by zero unless the dividend is NaN. Modulo is
//!   not a float operator.
//! - dates: date ± days leaves infinities unchanged and checks the result's
//!   range; date - date of an infinite date is an error.

use crate::batch::{Column, RowIdx, Values};
use crate::expr::{ArithOp, DateOp, KernelError};

trait CheckedInt: Copy + Default {
    fn c_add(self, o: Self) -> Option<Self>;
    fn c_sub(self, o: Self) -> Option<Self>;
    fn c_mul(self, o: Self) -> Option<Self>;
    fn c_div(self, o: Self) -> Option<Self>;
    fn c_rem(self, o: Self) -> Option<Self>;
    fn c_neg(self) -> Option<Self>;
    fn is_zero(self) -> bool;
    fn is_minus_one(self) -> bool;
}

macro_rules! checked_int {
    ($t:ty) => {
        impl CheckedInt for $t {
            fn c_add(self, o: Self) -> Option<Self> {
                self.checked_add(o)
            }
            fn c_sub(self, o: Self) -> Option<Self> {
                self.checked_sub(o)
            }
            fn c_mul(self, o: Self) -> Option<Self> {
                self.checked_mul(o)
            }
            fn c_div(self, o: Self) -> Option<Self> {
                self.checked_div(o)
            }
            fn c_rem(self, o: Self) -> Option<Self> {
                // PostgreSQL: x % -1 is 0, even for MIN.
                if o == -1 {
                    Some(0)
                } else {
                    self.checked_rem(o)
                }
            }
            fn c_neg(self) -> Option<Self> {
                self.checked_neg()
            }
            fn is_zero(self) -> bool {
                self == 0
            }
            fn is_minus_one(self) -> bool {
                self == -1
            }
        }
    };
}
checked_int!(i16);
checked_int!(i32);
checked_int!(i64);

fn int_op<T: CheckedInt>(
    op: ArithOp,
    a: &[T],
    b: &[T],
    l: &Column,
    r: &Column,
    sel: &[RowIdx],
    out: &mut [T],
    validity: &mut crate::batch::Bitmap,
) -> Result<(), KernelError> {
    for &row in sel {
        let i = row as usize;
        let valid = l.validity.get(i) && r.validity.get(i);
        validity.set(i, valid);
        if !valid {
            continue;
        }
        let (x, y) = (a[i], b[i]);
        let v = match op {
            ArithOp::Add => x.c_add(y),
            ArithOp::Sub => x.c_sub(y),
            ArithOp::Mul => x.c_mul(y),
            ArithOp::Div => {
                if y.is_zero() || (y.is_minus_one() && x.c_neg().is_none()) {
                    None
                } else {
                    x.c_div(y)
                }
            }
            ArithOp::Mod => {
                if y.is_zero() {
                    None
                } else {
                    x.c_rem(y)
                }
            }
        };
        match v {
            Some(v) => out[i] = v,
            None => return Err(KernelError { row }),
        }
    }
    Ok(())
}

trait Float: Copy + PartialEq + PartialOrd {
    const ZERO: Self;
    fn is_inf(self) -> bool;
    fn is_nan_(self) -> bool;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
}

macro_rules! float_impl {
    ($t:ty) => {
        impl Float for $t {
            const ZERO: Self = 0.0;
            fn is_inf(self) -> bool {
                self.is_infinite()
            }
            fn is_nan_(self) -> bool {
                self.is_nan()
            }
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn sub(self, o: Self) -> Self {
                self - o
            }
            fn mul(self, o: Self) -> Self {
                self * o
            }
            fn div(self, o: Self) -> Self {
                self / o
            }
        }
    };
}
float_impl!(f32);
float_impl!(f64);

/// One float operation as PostgreSQL's float.h computes it; None where it
/// raises.
fn float_apply<F: Float>(op: ArithOp, x: F, y: F) -> Option<F> {
    match op {
        ArithOp::Add | ArithOp::Sub => {
            let v = if op == ArithOp::Add { x.add(y) } else { x.sub(y) };
            if v.is_inf() && !x.is_inf() && !y.is_inf() {
                return None;
            }
            Some(v)
        }
        ArithOp::Mul => {
            let v = x.mul(y);
            if v.is_inf() && !x.is_inf() && !y.is_inf() {
                return None;
            }
            if v == F::ZERO && x != F::ZERO && y != F::ZERO {
                return None;
            }
            Some(v)
        }
        ArithOp::Div => {
            if y == F::ZERO && !x.is_nan_() {
                return None;
            }
            let v = x.div(y);
            if v.is_inf() && !x.is_inf() {
                return None;
            }
            if v == F::ZERO && x != F::ZERO && !y.is_inf() {
                return None;
            }
            Some(v)
        }
        ArithOp::Mod => None,
    }
}

fn float_op<F: Float>(
    op: ArithOp,
    a: &[F],
    b: &[F],
    l: &Column,
    r: &Column,
    sel: &[RowIdx],
    out: &mut [F],
    validity: &mut crate::batch::Bitmap,
) -> Result<(), KernelError> {
    for &row in sel {
        let i = row as usize;
        let valid = l.validity.get(i) && r.validity.get(i);
        validity.set(i, valid);
        if !valid {
            continue;
        }
        match float_apply(op, a[i], b[i]) {
            Some(v) => out[i] = v,
            None => return Err(KernelError { row }),
        }
    }
    Ok(())
}

/// `out = l op r` on the rows of `sel`; inputs and output share a physical type.
pub fn arith(
    op: ArithOp,
    l: &Column,
    r: &Column,
    sel: &[RowIdx],
    out: &mut Column,
) -> Result<(), KernelError> {
    let validity = &mut out.validity;
    match (&l.values, &r.values, &mut out.values) {
        (Values::I16(a), Values::I16(b), Values::I16(o)) => int_op(op, a, b, l, r, sel, o, validity),
        (Values::I32(a), Values::I32(b), Values::I32(o)) => int_op(op, a, b, l, r, sel, o, validity),
        (Values::I64(a), Values::I64(b), Values::I64(o)) => int_op(op, a, b, l, r, sel, o, validity),
        (Values::F32(a), Values::F32(b), Values::F32(o)) => float_op(op, a, b, l, r, sel, o, validity),
        (Values::F64(a), Values::F64(b), Values::F64(o)) => float_op(op, a, b, l, r, sel, o, validity),
        (a, b, o) => {
            panic!("arithmetic on {:?}, {:?} into {:?}", a.phys_type(), b.phys_type(), o.phys_type())
        }
    }
}

/// Unary minus: integers check MIN, floats cannot fail.
pub fn neg(arg: &Column, sel: &[RowIdx], out: &mut Column) -> Result<(), KernelError> {
    macro_rules! int {
        ($a:expr, $o:expr) => {
            for &row in sel {
                let i = row as usize;
                if arg.validity.get(i) {
                    $o[i] = $a[i].checked_neg().ok_or(KernelError { row })?;
                }
            }
        };
    }
    macro_rules! float {
        ($a:expr, $o:expr) => {
            for &row in sel {
                $o[row as usize] = -$a[row as usize];
            }
        };
    }
    match (&arg.values, &mut out.values) {
        (Values::I16(a), Values::I16(o)) => int!(a, o),
        (Values::I32(a), Values::I32(o)) => int!(a, o),
        (Values::I64(a), Values::I64(o)) => int!(a, o),
        (Values::F32(a), Values::F32(o)) => float!(a, o),
        (Values::F64(a), Values::F64(o)) => float!(a, o),
        (a, o) => panic!("negation of {:?} into {:?}", a.phys_type(), o.phys_type()),
    }
    for &row in sel {
        out.validity.set(row as usize, arg.validity.get(row as usize));
    }
    Ok(())
}

/// PostgreSQL's date range (`IS_VALID_DATE`), in days since 2000-01-01.
const DATE_MIN: i64 = -2_451_545;
const DATE_END: i64 = 2_147_483_494 - 2_451_545;

fn date_finite(d: i32) -> bool {
    d != i32::MIN && d != i32::MAX
}

/// Date arithmetic (`date_pli`, `date_mii`, `date_mi`). Inputs are int32
/// (date, and days or another date); the output is int32.
pub fn date(op: DateOp, l: &Column, r: &Column, sel: &[RowIdx], out: &mut Column) -> Result<(), KernelError> {
    let (Values::I32(a), Values::I32(b), Values::I32(o)) = (&l.values, &r.values, &mut out.values) else {
        panic!("date arithmetic expects int32 inputs");
    };
    for &row in sel {
        let i = row as usize;
        let valid = l.validity.get(i) && r.validity.get(i);
        out.validity.set(i, valid);
        if !valid {
            continue;
        }
        let (d, n) = (a[i], b[i]);
        o[i] = match op {
            DateOp::PlusDays | DateOp::MinusDays => {
                if !date_finite(d) {
                    d
                } else {
                    let days = if op == DateOp::PlusDays { n as i64 } else { -(n as i64) };
                    let v = d as i64 + days;
                    if !(DATE_MIN..DATE_END).contains(&v) {
                        return Err(KernelError { row });
                    }
                    v as i32
                }
            }
            DateOp::Diff => {
                if !date_finite(d) || !date_finite(n) {
                    return Err(KernelError { row });
                }
                d.wrapping_sub(n)
            }
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{full_selection, Bitmap, PhysType};

    fn i32c(v: &[i32]) -> Column {
        Column { values: Values::I32(v.to_vec()), validity: Bitmap::all_valid(v.len()) }
    }
    fn f64c(v: &[f64]) -> Column {
        Column { values: Values::F64(v.to_vec()), validity: Bitmap::all_valid(v.len()) }
    }

    #[test]
    fn int_overflow_and_division_errors_name_the_row() {
        let mut out = Column::new(PhysType::I32, 3);
        let e =
            arith(ArithOp::Add, &i32c(&[1, i32::MAX, 0]), &i32c(&[1, 1, 0]), &full_selection(3), &mut out);
        assert_eq!(e, Err(KernelError { row: 1 }));
        let e =
            arith(ArithOp::Div, &i32c(&[4, i32::MIN, 1]), &i32c(&[2, -1, 0]), &full_selection(3), &mut out);
        assert_eq!(e, Err(KernelError { row: 1 }));
        let e = arith(ArithOp::Div, &i32c(&[4, 7, 1]), &i32c(&[2, -1, 0]), &full_selection(3), &mut out);
        assert_eq!(e, Err(KernelError { row: 2 }));
        // MIN % -1 is 0 in PostgreSQL, not an error.
        arith(ArithOp::Mod, &i32c(&[i32::MIN, -7]), &i32c(&[-1, 3]), &full_selection(2), &mut out).unwrap();
        assert_eq!(&out.values, &Values::I32(vec![0, -1, 0]));
    }

    #[test]
    fn errors_under_null_or_outside_the_selection_are_ignored() {
        let mut l = i32c(&[i32::MAX, i32::MAX]);
        l.validity.set(0, false);
        let mut out = Column::new(PhysType::I32, 2);
        assert!(arith(ArithOp::Add, &l, &i32c(&[1, 1]), &[0], &mut out).is_ok());
        assert!(!out.validity.get(0));
        assert!(arith(ArithOp::Add, &l, &i32c(&[1, 1]), &[1], &mut out).is_err());
    }

    #[test]
    fn float_errors_follow_float_h() {
        let mut out = Column::new(PhysType::F64, 1);
        let sel = [0];
        let ok =
            |op, a: f64, b: f64, out: &mut Column| arith(op, &f64c(&[a]), &f64c(&[b]), &sel, out).is_ok();
        assert!(!ok(ArithOp::Add, f64::MAX, f64::MAX, &mut out), "overflow");
        assert!(ok(ArithOp::Add, f64::INFINITY, 1.0, &mut out), "infinite input");
        assert!(!ok(ArithOp::Mul, 1e-300, 1e-300, &mut out), "underflow");
        assert!(!ok(ArithOp::Div, 1.0, 0.0, &mut out), "division by zero");
        assert!(ok(ArithOp::Div, f64::NAN, 0.0, &mut out), "NaN / 0 is NaN");
        assert!(ok(ArithOp::Div, 1.0, f64::INFINITY, &mut out), "1 / inf is 0");
        assert!(ok(ArithOp::Sub, f64::NAN, 1.0, &mut out));
    }

    #[test]
    fn date_arithmetic_keeps_infinity_and_checks_range() {
        let mut out = Column::new(PhysType::I32, 3);
        date(
            DateOp::PlusDays,
            &i32c(&[0, i32::MAX, i32::MIN]),
            &i32c(&[31, 5, 5]),
            &full_selection(3),
            &mut out,
        )
        .unwrap();
        assert_eq!(&out.values, &Values::I32(vec![31, i32::MAX, i32::MIN]));
        assert!(date(DateOp::MinusDays, &i32c(&[0]), &i32c(&[3_000_000]), &[0], &mut out).is_err());
        assert!(date(DateOp::Diff, &i32c(&[i32::MAX]), &i32c(&[0]), &[0], &mut out).is_err());
        date(DateOp::Diff, &i32c(&[10]), &i32c(&[-5]), &[0], &mut out).unwrap();
        assert_eq!(&out.values, &Values::I32(vec![15, i32::MAX, i32::MIN]));
    }
}
