//! Kernels: one function per operation family, monomorphised per physical
//! type. Each takes the rows to compute (`sel`) and writes values and validity
//! of those rows only; the NULL and float semantics are PostgreSQL's and are
//! stated on each function.

pub mod arith;
pub mod cast;
pub mod cmp;
pub mod like;
pub mod numeric;
pub mod text;

use crate::batch::{Column, RowIdx, Values};

/// Copy rows `rows` of `src` into `dst` (same physical type).
pub fn copy_rows(dst: &mut Column, src: &Column, rows: &[RowIdx]) {
    if rows.is_empty() {
        return;
    }
    macro_rules! copy {
        ($d:expr, $s:expr) => {
            for &r in rows {
                $d[r as usize] = $s[r as usize];
            }
        };
    }
    match (&mut dst.values, &src.values) {
        (Values::Bool(d), Values::Bool(s)) => copy!(d, s),
        (Values::I16(d), Values::I16(s)) => copy!(d, s),
        (Values::I32(d), Values::I32(s)) => copy!(d, s),
        (Values::I64(d), Values::I64(s)) => copy!(d, s),
        (Values::F32(d), Values::F32(s)) => copy!(d, s),
        (Values::F64(d), Values::F64(s)) => copy!(d, s),
        (Values::Datum(d), Values::Datum(s)) => copy!(d, s),
        (d, s) => panic!("copy_rows between {:?} and {:?}", d.phys_type(), s.phys_type()),
    }
    for &r in rows {
        dst.validity.set(r as usize, src.validity.get(r as usize));
    }
}

/// Value of a boolean column at a row (validity not checked).
#[inline]
pub fn bool_at(c: &Column, r: usize) -> bool {
    match &c.values {
        Values::Bool(v) => v[r] != 0,
        other => panic!("boolean expected, got {:?}", other.phys_type()),
    }
}

/// Set a boolean result.
#[inline]
pub fn set_bool(c: &mut Column, r: usize, value: Option<bool>) {
    match value {
        None => c.validity.set(r, false),
        Some(b) => {
            c.validity.set(r, true);
            if let Values::Bool(v) = &mut c.values {
                v[r] = b as u8;
            }
        }
    }
}
