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

/// `Some(m)` when the selection is the rows `0..m`: kernels then run one
/// branch-free loop over whole slices (which the compiler vectorizes) instead
/// of going row by row. Selections list rows in ascending order; were one not
/// to, the fast path would only compute rows nobody asked for, and an error
/// it reports is looked for again among the selected rows.
#[inline]
pub fn dense(sel: &[RowIdx]) -> Option<usize> {
    let m = sel.len();
    (m > 0 && sel[0] == 0 && sel[m - 1] as usize == m - 1).then_some(m)
}

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
        (Values::I128(d), Values::I128(s)) => copy!(d, s),
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
