//! PostgreSQL's float comparisons and additions with their overflow checks.

use crate::batch::Values;

/// PostgreSQL's float `<` (NaN equal to NaN and above every other value).
#[inline]
pub(super) fn float_lt(a: f64, b: f64) -> bool {
    if a.is_nan() {
        false
    } else {
        b.is_nan() || a < b
    }
}

/// `float8_pl`: the sum, or an overflow when finite inputs give infinity.
#[inline]
pub(super) fn float8_pl(a: f64, b: f64) -> Option<f64> {
    let r = a + b;
    (!(r.is_infinite() && a.is_finite() && b.is_finite())).then_some(r)
}

#[inline]
pub(super) fn float4_pl(a: f32, b: f32) -> Option<f32> {
    let r = a + b;
    (!(r.is_infinite() && !a.is_infinite() && !b.is_infinite())).then_some(r)
}

/// `for (g, r) in live { let x = <row r's value as i64>; body }` with the
/// column's type matched once, not per row.
macro_rules! for_ints {
    ($values:expr, $live:expr, |$g:ident, $r:ident, $x:ident| $body:block) => {
        match $values {
            Values::Bool(v) => {
                for ($g, $r) in $live {
                    let $x = v[$r] as i64;
                    $body
                }
            }
            Values::I16(v) => {
                for ($g, $r) in $live {
                    let $x = v[$r] as i64;
                    $body
                }
            }
            Values::I32(v) => {
                for ($g, $r) in $live {
                    let $x = v[$r] as i64;
                    $body
                }
            }
            Values::I64(v) => {
                for ($g, $r) in $live {
                    let $x = v[$r];
                    $body
                }
            }
            other => panic!("integer aggregate over a {:?} column", other.phys_type()),
        }
    };
}

#[inline]
pub(super) fn float_value(values: &Values, i: usize) -> f64 {
    match values {
        Values::F32(v) => v[i] as f64,
        Values::F64(v) => v[i],
        other => panic!("float aggregate over a {:?} column", other.phys_type()),
    }
}
