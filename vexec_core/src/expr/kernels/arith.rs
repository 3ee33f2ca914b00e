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
    /// Wrapping results with an overflow flag, for the one-loop path.
    fn o_add(self, o: Self) -> (Self, bool);
    fn o_sub(self, o: Self) -> (Self, bool);
    fn o_mul(self, o: Self) -> (Self, bool);
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
            fn o_add(self, o: Self) -> (Self, bool) {
                self.overflowing_add(o)
            }
            fn o_sub(self, o: Self) -> (Self, bool) {
                self.overflowing_sub(o)
            }
            fn o_mul(self, o: Self) -> (Self, bool) {
                self.overflowing_mul(o)
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
checked_int!(i128);

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
    // Rows 0..m without NULLs: + - * in one wrapping loop with an overflow
    // flag (vectorized); only if some row overflowed, the row loop below
    // finds the first one.
    if let Some(m) = super::dense(sel) {
        if l.validity.all_set_upto(m) && r.validity.all_set_upto(m) {
            let f: Option<fn(T, T) -> (T, bool)> = match op {
                ArithOp::Add => Some(T::o_add),
                ArithOp::Sub => Some(T::o_sub),
                ArithOp::Mul => Some(T::o_mul),
                ArithOp::Div | ArithOp::Mod => None,
            };
            if let Some(f) = f {
                let mut overflow = false;
                for ((o, &x), &y) in out[..m].iter_mut().zip(&a[..m]).zip(&b[..m]) {
                    let (v, ovf) = f(x, y);
                    *o = v;
                    overflow |= ovf;
                }
                if !overflow {
                    validity.set_valid_upto(m);
                    return Ok(());
                }
            }
        }
    }
    macro_rules! rows {
        ($f:expr) => {
            int_rows($f, a, b, l, r, sel, out, validity)
        };
    }
    match op {
        ArithOp::Add => rows!(|x: T, y| x.c_add(y)),
        ArithOp::Sub => rows!(|x: T, y| x.c_sub(y)),
        ArithOp::Mul => rows!(|x: T, y| x.c_mul(y)),
        ArithOp::Div => rows!(|x: T, y| {
            if y.is_zero() || (y.is_minus_one() && x.c_neg().is_none()) {
                None
            } else {
                x.c_div(y)
            }
        }),
        ArithOp::Mod => rows!(|x: T, y| if y.is_zero() { None } else { x.c_rem(y) }),
    }
}

/// Row by row with the operation fixed (`f` is None where PostgreSQL raises).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn int_rows<T: CheckedInt>(
    f: impl Fn(T, T) -> Option<T>,
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
        match f(a[i], b[i]) {
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

/// [`float_apply`] without branches: the value and whether PostgreSQL
/// raises, for the one-loop path (`&`/`|`, not `&&`/`||`, so that the loop
/// vectorizes).
#[inline(always)]
fn float_flagged<F: Float>(op: ArithOp, x: F, y: F) -> (F, bool) {
    let zero = F::ZERO;
    match op {
        ArithOp::Add | ArithOp::Sub => {
            let v = if op == ArithOp::Add { x.add(y) } else { x.sub(y) };
            (v, v.is_inf() & !x.is_inf() & !y.is_inf())
        }
        ArithOp::Mul => {
            let v = x.mul(y);
            (v, (v.is_inf() & !x.is_inf() & !y.is_inf()) | ((v == zero) & (x != zero) & (y != zero)))
        }
        ArithOp::Div => {
            let v = x.div(y);
            let bad = ((y == zero) & !x.is_nan_())
                | (v.is_inf() & !x.is_inf())
                | ((v == zero) & (x != zero) & !y.is_inf());
            (v, bad)
        }
        ArithOp::Mod => (zero, true),
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
    if let Some(m) = super::dense(sel) {
        if op != ArithOp::Mod && l.validity.all_set_upto(m) && r.validity.all_set_upto(m) {
            #[inline(always)]
            fn run<F: Float>(op: ArithOp, a: &[F], b: &[F], out: &mut [F]) -> bool {
                let mut bad = false;
                for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                    let (v, e) = float_flagged(op, x, y);
                    *o = v;
                    bad |= e;
                }
                !bad
            }
            let (a, b, o) = (&a[..m], &b[..m], &mut out[..m]);
            // The operation is a constant in each loop.
            let ok = match op {
                ArithOp::Add => run(ArithOp::Add, a, b, o),
                ArithOp::Sub => run(ArithOp::Sub, a, b, o),
                ArithOp::Mul => run(ArithOp::Mul, a, b, o),
                _ => run(ArithOp::Div, a, b, o),
            };
            if ok {
                validity.set_valid_upto(m);
                return Ok(());
            }
        }
    }
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
        (Values::I128(a), Values::I128(b), Values::I128(o)) => int_op(op, a, b, l, r, sel, o, validity),
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
        (Values::I128(a), Values::I128(o)) => int!(a, o),
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

    /// Scaled numerics of 38 digits (I128): exact where an i64 would have
    /// overflowed, and a result past the i128 reported at its row.
    #[test]
    fn i128_arithmetic_of_wide_scaled_numerics() {
        let c =
            |v: &[i128]| Column { values: Values::I128(v.to_vec()), validity: Bitmap::all_valid(v.len()) };
        let big = 10i128.pow(37);
        let mut out = Column::new(PhysType::I128, 3);
        arith(
            ArithOp::Add,
            &c(&[big, -big, i64::MAX as i128]),
            &c(&[big, 1, 1]),
            &full_selection(3),
            &mut out,
        )
        .unwrap();
        assert_eq!(out.values, Values::I128(vec![2 * big, 1 - big, i64::MAX as i128 + 1]));
        arith(
            ArithOp::Mul,
            &c(&[10i128.pow(18), 3, 0]),
            &c(&[10i128.pow(19), -3, 5]),
            &full_selection(3),
            &mut out,
        )
        .unwrap();
        assert_eq!(out.values, Values::I128(vec![big, -9, 0]));
        let e = arith(ArithOp::Mul, &c(&[1, big * 10]), &c(&[1, 100]), &full_selection(2), &mut out);
        assert_eq!(e, Err(KernelError { row: 1 }));
        assert_eq!(neg(&c(&[5, i128::MIN]), &full_selection(2), &mut out), Err(KernelError { row: 1 }));
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

    /// The branch-free float rules are float_apply's, on every pair of
    /// special values.
    #[test]
    fn flagged_floats_agree_with_float_apply() {
        let vals = [
            0.0,
            -0.0,
            1.0,
            -1.5,
            1e-300,
            1e300,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        for op in [ArithOp::Add, ArithOp::Sub, ArithOp::Mul, ArithOp::Div] {
            for &x in &vals {
                for &y in &vals {
                    let (v, bad) = float_flagged(op, x, y);
                    match float_apply(op, x, y) {
                        None => assert!(bad, "{op:?} {x} {y}"),
                        Some(w) => {
                            assert!(!bad, "{op:?} {x} {y}");
                            assert_eq!(v.to_bits(), w.to_bits(), "{op:?} {x} {y}");
                        }
                    }
                }
            }
        }
    }

    /// The one-loop path gives the row-by-row answers, errors included.
    #[test]
    fn dense_selections_agree_with_scalar_rules() {
        let xs = [0i32, 1, -1, 46341, i32::MAX, i32::MIN, 7, -3];
        for op in [ArithOp::Add, ArithOp::Sub, ArithOp::Mul, ArithOp::Div, ArithOp::Mod] {
            let scalar = |x: i32, y: i32| match op {
                ArithOp::Add => x.checked_add(y),
                ArithOp::Sub => x.checked_sub(y),
                ArithOp::Mul => x.checked_mul(y),
                ArithOp::Div => x.checked_div(y),
                ArithOp::Mod => {
                    if y == -1 {
                        Some(0)
                    } else {
                        x.checked_rem(y)
                    }
                }
            };
            for &y in &xs {
                let (l, r) = (i32c(&xs), i32c(&[y; 8]));
                for m in 1..=xs.len() {
                    let expected: Result<Vec<i32>, KernelError> =
                        (0..m).map(|i| scalar(xs[i], y).ok_or(KernelError { row: i as RowIdx })).collect();
                    let mut out = Column::new(PhysType::I32, 8);
                    let got = arith(op, &l, &r, &full_selection(m), &mut out);
                    match expected {
                        Err(e) => assert_eq!(got, Err(e), "{op:?} by {y}, {m} rows"),
                        Ok(v) => {
                            assert_eq!(got, Ok(()), "{op:?} by {y}, {m} rows");
                            let Values::I32(o) = &out.values else { unreachable!() };
                            assert_eq!(&o[..m], &v[..], "{op:?} by {y}, {m} rows");
                        }
                    }
                }
            }
        }
        let (l, r) = (f64c(&[1.0, f64::MAX, 2.0]), f64c(&[1.0, f64::MAX, 0.5]));
        let mut out = Column::new(PhysType::F64, 3);
        assert_eq!(arith(ArithOp::Add, &l, &r, &full_selection(3), &mut out), Err(KernelError { row: 1 }));
        arith(ArithOp::Mul, &l, &r, &full_selection(1), &mut out).unwrap();
        assert_eq!(out.values.datum(0), 1.0f64.to_bits() as usize);
    }
}
