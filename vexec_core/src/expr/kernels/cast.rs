//! Casts between integer and float widths, as PostgreSQL's int.c, int8.c
//! and float.c do them:
//!
//! - integer widening is exact; narrowing reports values out of range;
//! - integer to float rounds to nearest (a C cast);
//! - float to integer rounds half to even (`rint`), then reports NaN and
//!   values out of range;
//! - float8 to float4 reports overflow (finite to infinite) and underflow
//!   (non-zero to zero); float4 to float8 is exact;
//! - scaled numerics (numeric.c) to integers and to another numeric(p, s)
//!   round half away from zero and report values out of range.

use crate::batch::{Column, RowIdx, Values};
use crate::expr::{CastOp, KernelError};

fn ints_of(v: &Values, i: usize) -> i64 {
    match v {
        Values::I16(a) => a[i] as i64,
        Values::I32(a) => a[i] as i64,
        Values::I64(a) => a[i],
        other => panic!("integer expected, got {:?}", other.phys_type()),
    }
}

/// An integer or scaled numeric of any width, as i128.
fn wide_of(v: &Values, i: usize) -> i128 {
    match v {
        Values::I128(a) => a[i],
        other => ints_of(other, i) as i128,
    }
}

fn floats_of(v: &Values, i: usize) -> f64 {
    match v {
        Values::F32(a) => a[i] as f64,
        Values::F64(a) => a[i],
        other => panic!("float expected, got {:?}", other.phys_type()),
    }
}

pub fn cast(op: CastOp, arg: &Column, sel: &[RowIdx], out: &mut Column) -> Result<(), KernelError> {
    if let Some(m) = super::dense(sel) {
        if arg.validity.all_set_upto(m) && cast_dense(op, &arg.values, &mut out.values, m) {
            out.validity.set_valid_upto(m);
            return Ok(());
        }
    }
    cast_rows(op, arg, sel, out)
}

/// Rows `0..m`, none NULL, in one loop per pair of types: true when done, false
/// when a value fails or the pair has no loop here (then `cast_rows` runs).
fn cast_dense(op: CastOp, arg: &Values, out: &mut Values, m: usize) -> bool {
    macro_rules! widen {
        ($a:expr, $o:expr, $t:ty) => {{
            $o[..m].iter_mut().zip(&$a[..m]).for_each(|(o, &a)| *o = a as $t);
            true
        }};
    }
    macro_rules! narrow {
        ($a:expr, $o:expr, $t:ty) => {{
            let mut ok = true;
            for (o, &a) in $o[..m].iter_mut().zip(&$a[..m]) {
                *o = a as $t;
                ok &= *o as i64 == a as i64;
            }
            ok
        }};
    }
    match (op, arg, out) {
        (CastOp::IntToInt, Values::I16(a), Values::I32(o)) => widen!(a, o, i32),
        (CastOp::IntToInt, Values::I16(a), Values::I64(o)) => widen!(a, o, i64),
        (CastOp::IntToInt, Values::I32(a), Values::I64(o)) => widen!(a, o, i64),
        (CastOp::IntToInt, Values::I64(a), Values::I128(o)) => widen!(a, o, i128),
        (CastOp::IntToInt, Values::I32(a), Values::I16(o)) => narrow!(a, o, i16),
        (CastOp::IntToInt, Values::I64(a), Values::I16(o)) => narrow!(a, o, i16),
        (CastOp::IntToInt, Values::I64(a), Values::I32(o)) => narrow!(a, o, i32),
        (CastOp::IntToFloat, Values::I16(a), Values::F32(o)) => widen!(a, o, f32),
        (CastOp::IntToFloat, Values::I32(a), Values::F32(o)) => widen!(a, o, f32),
        (CastOp::IntToFloat, Values::I64(a), Values::F32(o)) => widen!(a, o, f32),
        (CastOp::IntToFloat, Values::I16(a), Values::F64(o)) => widen!(a, o, f64),
        (CastOp::IntToFloat, Values::I32(a), Values::F64(o)) => widen!(a, o, f64),
        (CastOp::IntToFloat, Values::I64(a), Values::F64(o)) => widen!(a, o, f64),
        (CastOp::FloatToFloat, Values::F32(a), Values::F64(o)) => widen!(a, o, f64),
        _ => false,
    }
}

/// Row by row, for selections with gaps, NULLs, errors and the rarer casts.
fn cast_rows(op: CastOp, arg: &Column, sel: &[RowIdx], out: &mut Column) -> Result<(), KernelError> {
    for &row in sel {
        let i = row as usize;
        let valid = arg.validity.get(i);
        out.validity.set(i, valid);
        if !valid {
            continue;
        }
        let fail = KernelError { row };
        match op {
            CastOp::IntToInt => {
                let v = wide_of(&arg.values, i);
                match &mut out.values {
                    Values::I16(o) => o[i] = i16::try_from(v).map_err(|_| fail)?,
                    Values::I32(o) => o[i] = i32::try_from(v).map_err(|_| fail)?,
                    Values::I64(o) => o[i] = i64::try_from(v).map_err(|_| fail)?,
                    Values::I128(o) => o[i] = v,
                    other => panic!("integer cast into {:?}", other.phys_type()),
                }
            }
            CastOp::IntToFloat => {
                let v = ints_of(&arg.values, i);
                match &mut out.values {
                    // i64 -> f32 directly (one rounding), as C's (float4) cast.
                    Values::F32(o) => o[i] = v as f32,
                    Values::F64(o) => o[i] = v as f64,
                    other => panic!("float cast into {:?}", other.phys_type()),
                }
            }
            CastOp::FloatToInt => {
                // float4 inputs are rounded in float4 precision (ftoi4).
                let r = match &arg.values {
                    Values::F32(a) => (a[i] as f64).round_ties_even() as f32 as f64,
                    _ => floats_of(&arg.values, i).round_ties_even(),
                };
                if r.is_nan() {
                    return Err(fail);
                }
                match &mut out.values {
                    Values::I16(o) => {
                        if !(-32768.0..32768.0).contains(&r) {
                            return Err(fail);
                        }
                        o[i] = r as i16;
                    }
                    Values::I32(o) => {
                        if !(-2147483648.0..2147483648.0).contains(&r) {
                            return Err(fail);
                        }
                        o[i] = r as i32;
                    }
                    Values::I64(o) => {
                        if !(-9223372036854775808.0..9223372036854775808.0).contains(&r) {
                            return Err(fail);
                        }
                        o[i] = r as i64;
                    }
                    other => panic!("integer cast into {:?}", other.phys_type()),
                }
            }
            CastOp::FloatToFloat => match (&arg.values, &mut out.values) {
                (Values::F32(a), Values::F64(o)) => o[i] = a[i] as f64,
                (Values::F64(a), Values::F32(o)) => {
                    let v = a[i] as f32;
                    if (v.is_infinite() && !a[i].is_infinite()) || (v == 0.0 && a[i] != 0.0) {
                        return Err(fail);
                    }
                    o[i] = v;
                }
                (Values::F64(a), Values::F64(o)) => o[i] = a[i],
                (Values::F32(a), Values::F32(o)) => o[i] = a[i],
                (a, o) => panic!("float cast from {:?} into {:?}", a.phys_type(), o.phys_type()),
            },
            CastOp::ScaledToInt { scale } => {
                let v = match &arg.values {
                    Values::I128(a) => i64::try_from(round_scaled_wide(a[i], scale)).map_err(|_| fail)?,
                    a => round_scaled(ints_of(a, i), scale),
                };
                match &mut out.values {
                    Values::I16(o) => o[i] = i16::try_from(v).map_err(|_| fail)?,
                    Values::I32(o) => o[i] = i32::try_from(v).map_err(|_| fail)?,
                    Values::I64(o) => o[i] = v,
                    other => panic!("numeric to integer into {:?}", other.phys_type()),
                }
            }
            CastOp::Rescale { from, to, precision } => match (&arg.values, &mut out.values) {
                (Values::I64(a), Values::I64(o)) => o[i] = rescale(a[i], from, to, precision).ok_or(fail)?,
                (a, Values::I64(o)) => {
                    let v = rescale_wide(wide_of(a, i), from, to, precision).ok_or(fail)?;
                    o[i] = i64::try_from(v).map_err(|_| fail)?;
                }
                (a, Values::I128(o)) => {
                    o[i] = rescale_wide(wide_of(a, i), from, to, precision).ok_or(fail)?
                }
                (a, o) => panic!("numeric rescale from {:?} into {:?}", a.phys_type(), o.phys_type()),
            },
            CastOp::DateToTimestamp | CastOp::DateToTimestampForCmp => {
                let (Values::I32(a), Values::I64(o)) = (&arg.values, &mut out.values) else {
                    panic!("date to timestamp from {:?}", arg.values.phys_type())
                };
                o[i] = match date_to_timestamp(a[i]) {
                    Some(t) => t,
                    None if op == CastOp::DateToTimestampForCmp => i64::MAX - 1,
                    None => return Err(fail),
                };
            }
        }
    }
    Ok(())
}

/// The scaled-numeric roundings at one integer width: i64 for numeric(p <= 18)
/// (the common, fast case), i128 for the wider ones.
macro_rules! scaled_rounding {
    ($round:ident, $rescale:ident, $t:ty, $u:ty) => {
        /// `x / 10^k` rounded half away from zero (numeric.c's `round_var`).
        pub fn $round(x: $t, k: u16) -> $t {
            if k == 0 {
                return x;
            }
            let Some(p) = (10 as $t).checked_pow(k as u32) else {
                // 10^k is past the width: the quotient is 0, rounded away
                // from zero when 2|x| reaches 10^k (only i64 at k = 19 can).
                let up = k == 19 && (x.unsigned_abs() as u128) * 2 >= 10u128.pow(19);
                return if up { x.signum() } else { 0 };
            };
            let (q, r) = (x / p, x % p);
            if r.unsigned_abs() * 2 >= p as $u {
                q + x.signum()
            } else {
                q
            }
        }

        /// A value scaled by `10^from` as `numeric(precision, to)` scaled by
        /// `10^to`, or None when PostgreSQL would raise (its magnitude
        /// reaches `10^precision` at scale `to`) or the integer overflows.
        pub fn $rescale(x: $t, from: u16, to: u16, precision: u16) -> Option<$t> {
            let v = if to >= from {
                x.checked_mul((10 as $t).checked_pow((to - from) as u32)?)?
            } else {
                $round(x, from - to)
            };
            // Digits before the point <= precision - to: |v| < 10^precision at scale `to`.
            match (10 as $t).checked_pow(precision as u32) {
                Some(limit) if v.unsigned_abs() >= limit as $u => None,
                _ => Some(v),
            }
        }
    };
}
scaled_rounding!(round_scaled, rescale, i64, u64);
scaled_rounding!(round_scaled_wide, rescale_wide, i128, u128);

/// Microseconds per day.
const USECS_PER_DAY: i64 = 86_400_000_000;
/// The first date past the timestamp range, in days since 2000-01-01
/// (TIMESTAMP_END_JULIAN - POSTGRES_EPOCH_JDATE).
const TIMESTAMP_END_DAYS: i32 = 109_203_528 - 2_451_545;

/// `date2timestamp`: None for a finite date past the timestamp range
/// (dates and timestamps share their lower bound).
pub fn date_to_timestamp(d: i32) -> Option<i64> {
    match d {
        i32::MIN => Some(i64::MIN),
        i32::MAX => Some(i64::MAX),
        d if d >= TIMESTAMP_END_DAYS => None,
        d => Some(d as i64 * USECS_PER_DAY),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{full_selection, Bitmap, PhysType};

    fn col(values: Values) -> Column {
        let n = values.len();
        Column { values, validity: Bitmap::all_valid(n) }
    }

    /// Scaled numerics to integers and to other numeric(p, s): against
    /// decimal arithmetic done independently on the digits (i128), over
    /// every sign and rounding boundary.
    #[test]
    fn scaled_numeric_casts_round_half_away_from_zero() {
        // numeric_int4(x / 10^scale): round half away from zero.
        let reference = |x: i64, k: u16| -> i128 {
            let p = 10i128.pow(k as u32);
            let (x, h) = (x as i128, p / 2);
            if x >= 0 {
                (x + h) / p
            } else {
                -((-x + h) / p)
            }
        };
        for k in 0..=18u16 {
            for x in [0i64, 1, 4, 5, 6, 9, 10, 14, 15, 16, 149, 150, 151, 12345, i64::MAX, i64::MIN + 1] {
                for x in [x, -x, x / 3, x.wrapping_mul(7) / 11] {
                    assert_eq!(round_scaled(x, k) as i128, reference(x, k), "round({x}, {k})");
                }
            }
        }
        let mut out = Column::new(PhysType::I32, 6);
        let c = col(Values::I64(vec![25, -25, 24, 21474836474, 21474836475, -21474836485]));
        cast(CastOp::ScaledToInt { scale: 1 }, &c, &[0, 1, 2, 3], &mut out).unwrap();
        assert_eq!(&out.values, &Values::I32(vec![3, -3, 2, 2147483647, 0, 0]));
        // 2147483647.5 rounds to 2147483648, -2147483648.5 to -2147483649: out of int4's range.
        assert_eq!(cast(CastOp::ScaledToInt { scale: 1 }, &c, &[4], &mut out), Err(KernelError { row: 4 }));
        assert_eq!(cast(CastOp::ScaledToInt { scale: 1 }, &c, &[5], &mut out), Err(KernelError { row: 5 }));
        let mut out2 = Column::new(PhysType::I16, 1);
        let c2 = col(Values::I64(vec![3276749]));
        assert!(cast(CastOp::ScaledToInt { scale: 2 }, &c2, &[0], &mut out2).is_ok());
        assert!(cast(CastOp::ScaledToInt { scale: 1 }, &c2, &[0], &mut out2).is_err());
        // numeric(5, 2) of values at scale 3: rounded, then |v| < 10^5 at scale 2.
        assert_eq!(rescale(123455, 3, 2, 5), Some(12346));
        assert_eq!(rescale(-123455, 3, 2, 5), Some(-12346));
        assert_eq!(rescale(999994, 3, 2, 5), Some(99999));
        assert_eq!(rescale(999995, 3, 2, 5), None, "rounds to 1000.00: numeric field overflow");
        // Widening is exact; numeric(3, 5) holds values below 0.01.
        assert_eq!(rescale(12, 1, 4, 10), Some(12000));
        assert_eq!(rescale(999, 5, 5, 3), Some(999));
        assert_eq!(rescale(1000, 5, 5, 3), None);
        assert_eq!(rescale(i64::MAX / 10, 0, 2, 30), None, "past the i64: reported");
        assert_eq!(rescale(i64::MAX, 0, 0, 30), Some(i64::MAX), "precision past 18 never overflows an i64");
    }

    /// `x / 10^k` rounded half away from zero, on the decimal digits.
    fn round_by_digits(x: i128, k: u16) -> i128 {
        let digits = format!("{:0>60}", x.unsigned_abs());
        let (kept, dropped) = digits.split_at(60 - k as usize);
        let mut q: u128 = kept.parse().unwrap();
        if dropped.as_bytes().first().is_some_and(|&d| d >= b'5') {
            q += 1;
        }
        q as i128 * x.signum()
    }

    /// The i128 roundings (numeric(19..38)) and the i64 ones at the edges of
    /// their widths, against rounding on the decimal digits.
    #[test]
    fn wide_scaled_numerics_round_and_rescale() {
        let edges =
            [0i128, 1, 5, 15, 149, 150, 10i128.pow(19) / 2, 10i128.pow(37) * 5, i128::MAX, i128::MIN + 1];
        for k in 0..=38u16 {
            for x in edges {
                for x in [x, -x, x / 3, x / 7 * 5] {
                    assert_eq!(round_scaled_wide(x, k), round_by_digits(x, k), "round({x}, {k})");
                }
            }
        }
        for k in 0..=19u16 {
            for x in [i64::MAX, i64::MIN + 1, 5_000_000_000_000_000_000u64 as i64, 4_999_999_999_999_999_999]
            {
                assert_eq!(round_scaled(x, k) as i128, round_by_digits(x as i128, k), "round({x}, {k})");
            }
        }
        // numeric(38, 2) of a 38-digit value at scale 4, and past it.
        let big = 10i128.pow(37) * 9 + 12345;
        assert_eq!(rescale_wide(big, 4, 2, 38), Some(big / 100), ".2345 rounds down");
        assert_eq!(rescale_wide(big + 50, 4, 2, 38), Some(big / 100 + 1), ".2395 rounds up");
        assert_eq!(rescale_wide(big, 2, 2, 37), None, "38 digits in numeric(37, 2): field overflow");
        assert_eq!(rescale_wide(big, 2, 4, 38), None, "past the i128: reported");
        let mut out = Column::new(PhysType::I128, 3);
        let c = col(Values::I128(vec![big, -big, 7]));
        cast(CastOp::Rescale { from: 4, to: 2, precision: 38 }, &c, &full_selection(3), &mut out).unwrap();
        assert_eq!(out.values, Values::I128(vec![big / 100, -(big / 100), 0]));
        // To integers: rounded, then range-checked.
        let mut out8 = Column::new(PhysType::I64, 2);
        let c = col(Values::I128(vec![(i64::MAX as i128) * 10 + 4, (i64::MAX as i128) * 10 + 15]));
        cast(CastOp::ScaledToInt { scale: 1 }, &c, &[0], &mut out8).unwrap();
        assert_eq!(out8.values.datum(0) as i64, i64::MAX);
        assert_eq!(cast(CastOp::ScaledToInt { scale: 1 }, &c, &[1], &mut out8), Err(KernelError { row: 1 }));
        // int8 to i128 widens exactly (the scaled operands of a mixed expression).
        let mut wide = Column::new(PhysType::I128, 2);
        cast(CastOp::IntToInt, &col(Values::I64(vec![i64::MIN, -3])), &full_selection(2), &mut wide).unwrap();
        assert_eq!(wide.values, Values::I128(vec![i64::MIN as i128, -3]));
    }

    #[test]
    fn narrowing_reports_out_of_range() {
        let mut out = Column::new(PhysType::I16, 2);
        assert!(cast(CastOp::IntToInt, &col(Values::I32(vec![32767, 32768])), &[0], &mut out).is_ok());
        assert_eq!(
            cast(CastOp::IntToInt, &col(Values::I32(vec![32767, 32768])), &full_selection(2), &mut out),
            Err(KernelError { row: 1 })
        );
    }

    #[test]
    fn float_to_int_rounds_half_to_even_and_checks() {
        let mut out = Column::new(PhysType::I32, 4);
        cast(
            CastOp::FloatToInt,
            &col(Values::F64(vec![0.5, 1.5, -2.5, 2147483647.4])),
            &full_selection(4),
            &mut out,
        )
        .unwrap();
        assert_eq!(out.values, Values::I32(vec![0, 2, -2, 2147483647]));
        assert!(cast(CastOp::FloatToInt, &col(Values::F64(vec![2147483647.5])), &[0], &mut out).is_err());
        assert!(cast(CastOp::FloatToInt, &col(Values::F64(vec![f64::NAN])), &[0], &mut out).is_err());
        let mut out8 = Column::new(PhysType::I64, 1);
        assert!(cast(CastOp::FloatToInt, &col(Values::F64(vec![9.3e18])), &[0], &mut out8).is_err());
    }

    #[test]
    fn dates_to_timestamps_with_infinities_and_the_range_end() {
        let dates = vec![0, -1, i32::MIN, i32::MAX, TIMESTAMP_END_DAYS - 1, TIMESTAMP_END_DAYS];
        let mut out = Column::new(PhysType::I64, dates.len());
        let c = col(Values::I32(dates));
        cast(CastOp::DateToTimestampForCmp, &c, &full_selection(6), &mut out).unwrap();
        assert_eq!(
            out.values,
            Values::I64(vec![0, -USECS_PER_DAY, i64::MIN, i64::MAX, 9_223_371_244_800_000_000, i64::MAX - 1])
        );
        assert!(cast(CastOp::DateToTimestamp, &c, &full_selection(5), &mut out).is_ok());
        assert_eq!(cast(CastOp::DateToTimestamp, &c, &[5], &mut out), Err(KernelError { row: 5 }));
    }

    #[test]
    fn float8_to_float4_overflow_and_underflow() {
        let mut out = Column::new(PhysType::F32, 1);
        assert!(cast(CastOp::FloatToFloat, &col(Values::F64(vec![1e300])), &[0], &mut out).is_err());
        assert!(cast(CastOp::FloatToFloat, &col(Values::F64(vec![1e-300])), &[0], &mut out).is_err());
        assert!(cast(CastOp::FloatToFloat, &col(Values::F64(vec![f64::INFINITY])), &[0], &mut out).is_ok());
        assert!(cast(CastOp::FloatToFloat, &col(Values::F64(vec![f64::NAN])), &[0], &mut out).is_ok());
    }

    /// The one-loop path and the row-by-row path agree, errors included.
    #[test]
    fn dense_and_row_paths_agree() {
        let ints = [0i64, 1, -1, 32767, 32768, -32769, i32::MAX as i64, i32::MIN as i64 - 1, i64::MAX];
        let values = |t: PhysType| -> Values {
            match t {
                PhysType::I16 => Values::I16(ints.iter().map(|&v| v as i16).collect()),
                PhysType::I32 => Values::I32(ints.iter().map(|&v| v as i32).collect()),
                _ => Values::I64(ints.to_vec()),
            }
        };
        let n = ints.len();
        for from in [PhysType::I16, PhysType::I32, PhysType::I64] {
            for (op, to) in [
                (CastOp::IntToInt, PhysType::I16),
                (CastOp::IntToInt, PhysType::I32),
                (CastOp::IntToInt, PhysType::I64),
                (CastOp::IntToFloat, PhysType::F32),
                (CastOp::IntToFloat, PhysType::F64),
            ] {
                let arg = col(values(from));
                for m in 1..=n {
                    let sel = full_selection(m);
                    let (mut a, mut b) = (Column::new(to, n), Column::new(to, n));
                    let fast = cast(op, &arg, &sel, &mut a);
                    let slow = cast_rows(op, &arg, &sel, &mut b);
                    assert_eq!(fast, slow, "{from:?} -> {to:?}, {m} rows");
                    if fast.is_ok() {
                        for i in 0..m {
                            assert_eq!(a.values.datum(i), b.values.datum(i), "{from:?} -> {to:?} row {i}");
                            assert!(a.validity.get(i));
                        }
                    }
                }
            }
        }
        // A NULL row is skipped, not converted: the row-by-row path runs.
        let mut arg = col(Values::I64(vec![1, i64::MAX, 3]));
        arg.validity.set(1, false);
        let mut out = Column::new(PhysType::I32, 3);
        cast(CastOp::IntToInt, &arg, &full_selection(3), &mut out).unwrap();
        assert!(!out.validity.get(1));
        assert_eq!((out.values.datum(0), out.values.datum(2)), (1, 3));
    }
}
