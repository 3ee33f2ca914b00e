//! Evaluating a [`VExpr`] over the rows `sel` of a batch.

use std::cmp::Ordering;

use super::kernels::{self, arith, cast, cmp, like, text};
use super::{BoolTestKind, CmpKind, CmpOp, ConstSet, EvalCtx, KernelError, VExpr};
use crate::batch::strings::Bytes;
use crate::batch::{layout, varlena, Bitmap, Column, PhysType, RowIdx, Values};

/// Evaluate `e` on the rows `sel`. The result has a value for every row of
/// `sel`; other rows are unspecified.
pub fn eval(e: &VExpr, ctx: &mut EvalCtx, sel: &[RowIdx]) -> Result<Column, KernelError> {
    if sel.is_empty() {
        // Nothing to compute (and nothing evaluated that PostgreSQL would not).
        return Ok(Column::new(e.phys_type_hint(), ctx.len));
    }
    // A subexpression that occurs more than once is computed once per
    // selection (kernels are pure: an equal expression has equal values).
    if e.memoizable() && ctx.shared.iter().any(|s| s == e) {
        if let Some(m) = ctx.memo.iter().find(|m| m.0 == *e && m.1 == sel) {
            return Ok(m.2.clone());
        }
        let out = compute(e, ctx, sel)?;
        ctx.memo.push((e.clone(), sel.to_vec(), out.clone()));
        return Ok(out);
    }
    compute(e, ctx, sel)
}

/// `eval` of one node, its children through `eval`.
fn compute(e: &VExpr, ctx: &mut EvalCtx, sel: &[RowIdx]) -> Result<Column, KernelError> {
    let len = ctx.len;
    Ok(match e {
        VExpr::Column { index } => ctx.input(*index, sel).into_owned(),
        VExpr::Const { value, phys } => Column::splat(*phys, len, *value),
        VExpr::Param { index, phys } => Column::splat(*phys, len, ctx.params[*index]),
        VExpr::Cmp { op, kind, left, right } => {
            let l = eval_plain(left, *kind, ctx, sel)?;
            let r = eval_plain(right, *kind, ctx, sel)?;
            let mut out = Column::new(PhysType::Bool, len);
            // SAFETY: eval_plain made the rows' varlenas plain.
            unsafe { cmp::compare(*op, *kind, &l, &r, sel, &mut out) };
            out
        }
        VExpr::Arith { op, phys, left, right } => {
            let l = eval(left, ctx, sel)?;
            let r = eval(right, ctx, sel)?;
            let mut out = Column::new(*phys, len);
            arith::arith(*op, &l, &r, sel, &mut out)?;
            out
        }
        VExpr::Neg { phys, arg } => {
            let a = eval(arg, ctx, sel)?;
            let mut out = Column::new(*phys, len);
            arith::neg(&a, sel, &mut out)?;
            out
        }
        VExpr::Cast { op, to, arg } => {
            let a = eval(arg, ctx, sel)?;
            let mut out = Column::new(*to, len);
            cast::cast(*op, &a, sel, &mut out)?;
            out
        }
        VExpr::Date { op, left, right } => {
            let l = eval(left, ctx, sel)?;
            let r = eval(right, ctx, sel)?;
            let mut out = Column::new(PhysType::I32, len);
            arith::date(*op, &l, &r, sel, &mut out)?;
            out
        }
        VExpr::And(args) => and_or(args, true, ctx, sel)?,
        VExpr::Or(args) => and_or(args, false, ctx, sel)?,
        VExpr::Not(arg) => {
            let a = eval(arg, ctx, sel)?;
            let mut out = Column::new(PhysType::Bool, len);
            for &r in sel {
                let i = r as usize;
                let v = a.is_valid(i).then(|| !kernels::bool_at(&a, i));
                kernels::set_bool(&mut out, i, v);
            }
            out
        }
        VExpr::IsNull { arg, negate } => {
            let a = eval(arg, ctx, sel)?;
            let mut out = Column::new(PhysType::Bool, len);
            for &r in sel {
                let i = r as usize;
                kernels::set_bool(&mut out, i, Some(a.is_valid(i) == *negate));
            }
            out
        }
        VExpr::BoolTest { kind, arg } => {
            let a = eval(arg, ctx, sel)?;
            let mut out = Column::new(PhysType::Bool, len);
            for &r in sel {
                let i = r as usize;
                let v = a.is_valid(i).then(|| kernels::bool_at(&a, i));
                let b = match kind {
                    BoolTestKind::IsTrue => v == Some(true),
                    BoolTestKind::IsNotTrue => v != Some(true),
                    BoolTestKind::IsFalse => v == Some(false),
                    BoolTestKind::IsNotFalse => v != Some(false),
                    BoolTestKind::IsUnknown => v.is_none(),
                    BoolTestKind::IsNotUnknown => v.is_some(),
                };
                kernels::set_bool(&mut out, i, Some(b));
            }
            out
        }
        VExpr::Distinct { kind, negate, left, right } => {
            let l = eval_plain(left, *kind, ctx, sel)?;
            let r = eval_plain(right, *kind, ctx, sel)?;
            let mut out = Column::new(PhysType::Bool, len);
            for &row in sel {
                let i = row as usize;
                let distinct = match (l.is_valid(i), r.is_valid(i)) {
                    (false, false) => false,
                    (true, true) => {
                        // SAFETY: eval_plain made the rows' varlenas plain.
                        let o = unsafe { cmp::order_at(*kind, &l.values, i, &r.values, i) };
                        o != Ordering::Equal
                    }
                    _ => true,
                };
                kernels::set_bool(&mut out, i, Some(distinct != *negate));
            }
            out
        }
        VExpr::InSet { arg, set, kind, has_null, empty, negate } => {
            let a = eval_plain(arg, *kind, ctx, sel)?;
            let mut out = Column::new(PhysType::Bool, len);
            for &row in sel {
                let i = row as usize;
                // An empty array decides without looking at the argument.
                let v = if *empty {
                    Some(*negate)
                } else if !a.is_valid(i) {
                    None
                } else if {
                    // SAFETY: eval_plain made the rows' varlenas plain.
                    unsafe { set_contains(set, *kind, &a.values, i) }
                } {
                    Some(!*negate)
                } else if *has_null {
                    None
                } else {
                    Some(*negate)
                };
                kernels::set_bool(&mut out, i, v);
            }
            out
        }
        VExpr::Like { arg, pattern, negate } => {
            let a = eval_plain(arg, CmpKind::Text, ctx, sel)?;
            let mut out = Column::new(PhysType::Bool, len);
            // SAFETY: eval_plain made the rows' varlenas plain.
            unsafe { like::like(&a, pattern, *negate, sel, &mut out) };
            out
        }
        VExpr::Length { kind, arg } => {
            let a = eval_plain(arg, CmpKind::Text, ctx, sel)?;
            let mut out = Column::new(PhysType::I32, len);
            // SAFETY: eval_plain made the rows' varlenas plain.
            unsafe { text::length(*kind, &a, sel, &mut out) }?;
            out
        }
        VExpr::NumericToScaled { scale, phys, arg } => {
            let mut out = Column::new(*phys, len);
            let VExpr::Column { index } = **arg else {
                let a = eval_plain(arg, CmpKind::Text, ctx, sel)?;
                // SAFETY: eval_plain made the rows' varlenas plain.
                unsafe { kernels::numeric::to_scaled(&a, *scale, sel, &mut out) }?;
                return Ok(out);
            };
            // Read the input column in place unless a value needs detoasting.
            let inputs: &[Column] = ctx.inputs;
            if let Values::Decimal128(v, s) = &inputs[index].values {
                if s == scale {
                    kernels::numeric::from_decimal(v, &inputs[index].validity, sel, &mut out)?;
                    return Ok(out);
                }
            }
            let c = ctx.input(index, sel);
            // SAFETY: EvalCtx::new's contract: input Datums are varlenas.
            if let Some(done) = unsafe { kernels::numeric::to_scaled_if_plain(&c, *scale, sel, &mut out) } {
                done?;
            } else {
                let a = eval_plain(arg, CmpKind::Text, ctx, sel)?;
                // SAFETY: eval_plain made the rows' varlenas plain.
                unsafe { kernels::numeric::to_scaled(&a, *scale, sel, &mut out) }?;
            }
            out
        }
        VExpr::Case { arms, otherwise, phys } => {
            let mut out = Column::new(*phys, len);
            let mut pending: Vec<RowIdx> = sel.to_vec();
            for (cond, result) in arms {
                if pending.is_empty() {
                    break;
                }
                let c = eval(cond, ctx, &pending)?;
                let (taken, rest): (Vec<RowIdx>, Vec<RowIdx>) = pending
                    .iter()
                    .partition(|&&r| c.is_valid(r as usize) && kernels::bool_at(&c, r as usize));
                if !taken.is_empty() {
                    let v = eval(result, ctx, &taken)?;
                    kernels::copy_rows(&mut out, &v, &taken);
                }
                pending = rest;
            }
            if !pending.is_empty() {
                match otherwise {
                    Some(o) => {
                        let v = eval(o, ctx, &pending)?;
                        kernels::copy_rows(&mut out, &v, &pending);
                    }
                    None => pending.iter().for_each(|&r| out.validity.set(r as usize, false)),
                }
            }
            out
        }
        VExpr::Coalesce { args, phys } => {
            let mut out = Column::new(*phys, len);
            let mut pending: Vec<RowIdx> = sel.to_vec();
            for arg in args {
                if pending.is_empty() {
                    break;
                }
                let v = eval(arg, ctx, &pending)?;
                let (found, rest): (Vec<RowIdx>, Vec<RowIdx>) =
                    pending.iter().partition(|&&r| v.is_valid(r as usize));
                kernels::copy_rows(&mut out, &v, &found);
                pending = rest;
            }
            pending.iter().for_each(|&r| out.validity.set(r as usize, false));
            out
        }
        VExpr::Call { func, args, phys } => {
            // Strict: called for the rows whose arguments are all non-NULL.
            let mut rows = sel.to_vec();
            let mut datums = Vec::with_capacity(args.len());
            for a in args {
                let c = eval(a, ctx, &rows)?;
                rows.retain(|&r| c.is_valid(r as usize));
                datums.push(c);
            }
            let mut args: Vec<Vec<usize>> = datums
                .iter()
                .map(|c| {
                    let mut v = vec![0; len];
                    rows.iter().for_each(|&r| v[r as usize] = c.values.datum(r as usize));
                    v
                })
                .collect();
            let mut results = vec![None; len];
            // A native kernel decides the rows it can; the host calls the
            // function for the others.
            if let Some(native) = crate::packs::gserialized::Native::from_id(func.native) {
                super::native::native_rows(native, &mut args, &mut rows, &mut results, ctx.host, len);
            }
            if !rows.is_empty() {
                ctx.host.call(*func, &args, &rows, &mut results)?;
            }
            let rows: Vec<RowIdx> = sel.iter().copied().filter(|&r| results[r as usize].is_some()).collect();
            let mut out = Column::new(*phys, len);
            out.validity.set_all(false);
            for &r in &rows {
                if let Some(d) = results[r as usize] {
                    out.values.set_datum(r as usize, d);
                    out.validity.set(r as usize, true);
                }
            }
            out
        }
    })
}

/// Keep the rows of `sel` where the boolean expression `e` is true (a qual:
/// NULL and false both drop the row). Same result as `eval` followed by a
/// filter, with fast paths that read input columns in place: a comparison of
/// a column with a constant, AND of quals, a column IN a set of integers.
pub fn filter(e: &VExpr, ctx: &mut EvalCtx, sel: &mut Vec<RowIdx>) -> Result<(), KernelError> {
    if sel.is_empty() {
        return Ok(());
    }
    match e {
        VExpr::And(args) => {
            let args: Vec<&VExpr> = args.iter().collect();
            filter_all(&args, ctx, sel)
        }
        VExpr::Cmp { op, kind: kind @ (CmpKind::Native | CmpKind::Float), left, right } => {
            match (left.as_ref(), right.as_ref()) {
                _ if int_cmp_const(e).is_some() => {
                    let (index, op, v) = int_cmp_const(e).expect("checked");
                    let (col, tests) = column_with_constants(ctx, index, &[(op, v)], sel);
                    filter_int_interval(&col, &tests, sel);
                    Ok(())
                }
                (VExpr::Column { index }, VExpr::Const { value: Some(v), .. }) => {
                    let (col, tests) = column_with_constants(ctx, *index, &[(*op, *v)], sel);
                    filter_cmp_const(&col, tests[0].0, *kind, tests[0].1, sel);
                    Ok(())
                }
                (VExpr::Const { value: Some(v), .. }, VExpr::Column { index }) => {
                    let (col, tests) = column_with_constants(ctx, *index, &[(flip(*op), *v)], sel);
                    filter_cmp_const(&col, tests[0].0, *kind, tests[0].1, sel);
                    Ok(())
                }
                (_, VExpr::Const { value: None, .. }) | (VExpr::Const { value: None, .. }, _) => {
                    sel.clear(); // comparison with NULL is NULL
                    Ok(())
                }
                _ => filter_generic(e, ctx, sel),
            }
        }
        VExpr::Cmp {
            op: op @ (CmpOp::Eq | CmpOp::Ne),
            kind: kind @ (CmpKind::Text | CmpKind::Bpchar),
            left,
            right,
        } => {
            match (left.as_ref(), right.as_ref()) {
                (VExpr::Column { index }, VExpr::Const { value: Some(v), .. })
                | (VExpr::Const { value: Some(v), .. }, VExpr::Column { index }) => {
                    let inputs: &[Column] = ctx.inputs;
                    let col = match &inputs[*index].values {
                        Values::View(_) | Values::Offsets(_) => std::borrow::Cow::Borrowed(&inputs[*index]),
                        _ => ctx.input(*index, sel),
                    };
                    // SAFETY: EvalCtx::new's contract: input Datums and
                    // by-reference constants are varlenas.
                    if unsafe { filter_bytes_eq_const(&col, *op == CmpOp::Ne, *kind, *v, sel) } {
                        Ok(())
                    } else {
                        filter_generic(e, ctx, sel) // some value needs detoasting
                    }
                }
                _ => filter_generic(e, ctx, sel),
            }
        }
        // A bool column as a qual, bit-packed: read in place.
        VExpr::Column { index } if matches!(ctx.inputs[*index].values, Values::Bits(_)) => {
            let col = &ctx.inputs[*index];
            let Values::Bits(bits) = &col.values else { unreachable!("matched") };
            sel.retain(|&r| bits.value(r as usize) && col.validity.get(r as usize));
            Ok(())
        }
        VExpr::Call { .. } => match super::native::filter_native_const(e, ctx, sel) {
            Some(done) => done,
            None => filter_generic(e, ctx, sel),
        },
        _ => filter_generic(e, ctx, sel),
    }
}

/// Keep the rows of `sel` where every qual of `quals` is true, taking the
/// quals in order (each on the rows the earlier ones kept), like `filter` on
/// each. Two consecutive comparisons of one integer column with constants
/// (`a BETWEEN x AND y`, `d >= x AND d < y`) are tested in one pass over
/// the rows, as one interval. Comparisons with constants never fail, so
/// testing the second on rows the first rejected changes nothing.
pub fn filter_all(quals: &[&VExpr], ctx: &mut EvalCtx, sel: &mut Vec<RowIdx>) -> Result<(), KernelError> {
    let mut i = 0;
    while i < quals.len() {
        if sel.is_empty() {
            return Ok(());
        }
        if let (Some(a), Some(b)) = (int_cmp_const(quals[i]), quals.get(i + 1).and_then(|q| int_cmp_const(q)))
        {
            if a.0 == b.0 {
                let (col, tests) = column_with_constants(ctx, a.0, &[(a.1, a.2), (b.1, b.2)], sel);
                filter_int_interval(&col, &tests, sel);
                i += 2;
                continue;
            }
        }
        filter(quals[i], ctx, sel)?;
        i += 1;
    }
    Ok(())
}

/// `column op constant` (either way round) of integer-like values (integers,
/// dates, timestamps; not booleans): (column index, op with the column on
/// the left, the constant's Datum).
fn int_cmp_const(e: &VExpr) -> Option<(usize, super::CmpOp, usize)> {
    let VExpr::Cmp { op, kind: CmpKind::Native, left, right } = e else { return None };
    let (index, op, datum) = match (left.as_ref(), right.as_ref()) {
        (VExpr::Column { index }, VExpr::Const { value: Some(v), phys }) if phys.is_integer_like() => {
            (*index, *op, *v)
        }
        (VExpr::Const { value: Some(v), phys }, VExpr::Column { index }) if phys.is_integer_like() => {
            (*index, flip(*op), *v)
        }
        _ => return None,
    };
    (op != super::CmpOp::Ne).then_some((index, op, datum))
}

/// Input column `index` and the constants `tests` compare it with, for a
/// comparison kernel: a Date32 or TimestampUs column as it is with the
/// constants shifted to the Unix epoch (where they all have an arrow form:
/// the shift keeps the order), any other column as the kernels read it
/// ([`EvalCtx::input`]) with the constants as they are.
fn column_with_constants<'a>(
    ctx: &mut EvalCtx<'a>,
    index: usize,
    tests: &[(super::CmpOp, usize)],
    sel: &[RowIdx],
) -> (std::borrow::Cow<'a, Column>, Vec<(super::CmpOp, usize)>) {
    let inputs: &'a [Column] = ctx.inputs;
    let shifted: Option<Vec<(super::CmpOp, usize)>> = match &inputs[index].values {
        Values::Date32(_) => {
            Some(tests.iter().map(|&(op, d)| (op, layout::date_to_unix(d as i32) as i64 as usize)).collect())
        }
        Values::TimestampUs(_) => {
            tests.iter().map(|&(op, d)| Some((op, layout::timestamp_to_unix(d as i64)? as usize))).collect()
        }
        _ => None,
    };
    match shifted {
        Some(t) => (std::borrow::Cow::Borrowed(&inputs[index]), t),
        None => (ctx.input(index, sel), tests.to_vec()),
    }
}

/// The values `v` with `v op c` for every (op, c) of `tests` (none `Ne`), as
/// the closed interval [lo, hi] of i64 (None: no value), for values of
/// the range [min, max] of the column's type.
fn int_interval(tests: &[(super::CmpOp, i64)], min: i64, max: i64) -> Option<(i64, i64)> {
    use super::CmpOp::*;
    let (mut lo, mut hi) = (min, max);
    for &(op, c) in tests {
        match op {
            Eq => (lo, hi) = (lo.max(c), hi.min(c)),
            Lt if c == min => return None,
            Lt => hi = hi.min(c - 1),
            Le => hi = hi.min(c),
            Gt if c == max => return None,
            Gt => lo = lo.max(c + 1),
            Ge => lo = lo.max(c),
            Ne => unreachable!("not an interval"),
        }
    }
    (lo <= hi).then_some((lo, hi))
}

/// Keep the rows of `sel` whose non-NULL integer value lies in the interval
/// the tests `(op, constant Datum)` describe.
fn filter_int_interval(col: &Column, tests: &[(super::CmpOp, usize)], sel: &mut Vec<RowIdx>) {
    macro_rules! run {
        ($vals:expr, $t:ty, $u:ty) => {{
            let tests: Vec<(super::CmpOp, i64)> = tests.iter().map(|&(op, d)| (op, d as $t as i64)).collect();
            match int_interval(&tests, <$t>::MIN as i64, <$t>::MAX as i64) {
                None => sel.clear(),
                // v in [lo, hi] as one unsigned comparison: v - lo <= hi - lo
                Some((lo, hi)) => {
                    let (lo, span) = (lo as $t, (hi as $t).wrapping_sub(lo as $t) as $u);
                    keep_where(sel, &col.validity, $vals, |v: $t| (v.wrapping_sub(lo) as $u) <= span)
                }
            }
        }};
    }
    match &col.values {
        Values::I32(v) | Values::Date32(v) => run!(v, i32, u32),
        Values::I64(v) | Values::TimestampUs(v) => run!(v, i64, u64),
        Values::I16(v) => run!(v, i16, u16),
        v => panic!("integer comparison of {:?}", v.phys_type()),
    }
}

/// Keep the rows of `sel` that are not NULL and whose value passes `test`.
/// When `sel` still holds every row up to its last (the first filter of a
/// batch), the values are read in order, 64 at a time into a bit mask with
/// the validity applied per word, instead of through the selection.
#[inline(always)]
fn keep_where<T: Copy>(sel: &mut Vec<RowIdx>, validity: &Bitmap, vals: &[T], test: impl Fn(T) -> bool) {
    let n = sel.len();
    let all_valid = validity.all_set();
    if n > 0 && sel[n - 1] as usize == n - 1 {
        let bytes = validity.as_bytes();
        sel.clear();
        for (w, chunk) in vals[..n].chunks(64).enumerate() {
            let mut mask = 0u64;
            for (j, &v) in chunk.iter().enumerate() {
                mask |= (test(v) as u64) << j;
            }
            if !all_valid {
                let mut word = [0u8; 8];
                let from = w * 8;
                let to = (from + 8).min(bytes.len());
                word[..to - from].copy_from_slice(&bytes[from..to]);
                mask &= u64::from_le_bytes(word);
            }
            let base = w * 64;
            while mask != 0 {
                sel.push((base + mask.trailing_zeros() as usize) as RowIdx);
                mask &= mask - 1;
            }
        }
        return;
    }
    let mut k = 0;
    for j in 0..n {
        let i = sel[j];
        let keep = test(vals[i as usize]) && (all_valid || validity.get(i as usize));
        sel[k] = i;
        k += keep as usize;
    }
    sel.truncate(k);
}

pub(super) fn filter_generic(e: &VExpr, ctx: &mut EvalCtx, sel: &mut Vec<RowIdx>) -> Result<(), KernelError> {
    let c = eval(e, ctx, sel)?;
    sel.retain(|&r| c.is_valid(r as usize) && kernels::bool_at(&c, r as usize));
    Ok(())
}

/// `a op b` is `b flip(op) a`.
fn flip(op: super::CmpOp) -> super::CmpOp {
    use super::CmpOp::*;
    match op {
        Lt => Gt,
        Le => Ge,
        Gt => Lt,
        Ge => Le,
        o => o,
    }
}

/// Keep the rows where `col op constant` holds (not NULL). One loop per
/// operator, so the comparison is a single instruction in the loop body.
fn filter_cmp_const(col: &Column, op: super::CmpOp, kind: CmpKind, datum: usize, sel: &mut Vec<RowIdx>) {
    use super::CmpOp::*;
    let all_valid = col.validity.all_set();
    let validity = &col.validity;
    macro_rules! run {
        ($vals:expr, $c:expr, $test:expr) => {{
            let (vals, c) = ($vals, $c);
            let mut k = 0;
            for j in 0..sel.len() {
                let i = sel[j];
                let keep = $test(vals[i as usize], c) && (all_valid || validity.get(i as usize));
                sel[k] = i;
                k += keep as usize;
            }
            sel.truncate(k);
        }};
    }
    macro_rules! by_op {
        ($vals:expr, $c:expr) => {
            match op {
                Eq => run!($vals, $c, |a, b| a == b),
                Ne => run!($vals, $c, |a, b| a != b),
                Lt => run!($vals, $c, |a, b| a < b),
                Le => run!($vals, $c, |a, b| a <= b),
                Gt => run!($vals, $c, |a, b| a > b),
                Ge => run!($vals, $c, |a, b| a >= b),
            }
        };
    }
    macro_rules! by_op_float {
        ($vals:expr, $c:expr) => {{
            let holds = |o: Ordering| match op {
                Eq => o == Ordering::Equal,
                Ne => o != Ordering::Equal,
                Lt => o == Ordering::Less,
                Le => o != Ordering::Greater,
                Gt => o == Ordering::Greater,
                Ge => o != Ordering::Less,
            };
            run!($vals, $c, |a, b| holds(cmp::float_cmp(a, b)))
        }};
    }
    match (&col.values, kind) {
        (Values::I32(v) | Values::Date32(v), CmpKind::Native) => by_op!(v, datum as i32),
        (Values::I64(v) | Values::TimestampUs(v), CmpKind::Native) => by_op!(v, datum as i64),
        (Values::I16(v), CmpKind::Native) => by_op!(v, datum as i16),
        (Values::Bool(v), CmpKind::Native) => by_op!(v, (datum != 0) as u8),
        (Values::F64(v), CmpKind::Float) => by_op_float!(v, f64::from_bits(datum as u64)),
        (Values::F32(v), CmpKind::Float) => by_op_float!(v, f32::from_bits(datum as u32)),
        (v, k) => panic!("comparison of {:?} under {:?}", v.phys_type(), k),
    }
}

/// Keep the rows where the varlena column equals (or, with `ne`, differs
/// from) the constant. Returns false, leaving `sel` alone, when a value of
/// the rows is not plain (the generic path detoasts it).
///
/// # Safety
/// `datum` and the column's valid values point to varlenas (any form).
unsafe fn filter_bytes_eq_const(
    col: &Column,
    ne: bool,
    kind: CmpKind,
    datum: usize,
    sel: &mut Vec<RowIdx>,
) -> bool {
    // SAFETY: the caller vouches for `datum` and the column's values.
    let c = unsafe { varlena::bytes(datum as *const u8) };
    let c = if kind == CmpKind::Bpchar { cmp::trim_blanks(c) } else { c };
    if let Values::Datum(vals) = &col.values {
        if sel.iter().any(|&i| {
            // SAFETY: the caller vouches that valid values are varlenas.
            col.validity.get(i as usize) && !unsafe { varlena::is_plain(vals[i as usize] as *const u8) }
        }) {
            return false;
        }
    }
    let mut k = 0;
    match &col.values {
        // Byte views (not bpchar, whose padding the view holds): the
        // constant's view decides a short value whole and a long one's
        // length and prefix; only equal prefixes read the data.
        Values::View(v) if kind != CmpKind::Bpchar => {
            let cv = arrow_array::builder::make_view(c, 0, 0);
            let short = c.len() <= arrow_data::MAX_INLINE_VIEW_LEN as usize;
            for j in 0..sel.len() {
                let i = sel[j] as usize;
                let eq = if short { v.views[i] == cv } else { v.head(i) == cv as u64 && v.get(i) == c };
                let keep = col.validity.get(i) && eq != ne;
                sel[k] = sel[j];
                k += keep as usize;
            }
        }
        values => {
            // SAFETY: Datums are plain varlenas (checked above).
            let Some(bytes) = (unsafe { Bytes::of(values) }) else {
                panic!("text comparison of a non-varlena column")
            };
            for j in 0..sel.len() {
                let i = sel[j] as usize;
                let keep = col.validity.get(i) && {
                    let b = bytes.get(i);
                    let b = if kind == CmpKind::Bpchar { cmp::trim_blanks(b) } else { b };
                    (b == c) != ne
                };
                sel[k] = sel[j];
                k += keep as usize;
            }
        }
    }
    sel.truncate(k);
    true
}

/// Fold operations on constants into constants (a cast of a literal, say),
/// so they are not recomputed per batch. An operation that would raise is
/// left alone: PostgreSQL raises it when it evaluates it.
///
/// # Safety
/// By-reference constants of `e` point to varlenas that outlive the result.
pub unsafe fn fold_constants(e: VExpr) -> VExpr {
    struct NoHost;
    impl super::Host for NoHost {
        fn detoast(&mut self, _: &mut [usize], _: &crate::batch::Bitmap, _: &[RowIdx]) {
            unreachable!("constants of folded kinds are not varlenas")
        }
        fn call(
            &mut self,
            _: super::FuncRef,
            _: &[Vec<usize>],
            _: &[RowIdx],
            _: &mut [Option<usize>],
        ) -> Result<(), KernelError> {
            unreachable!("calls are not folded")
        }
        fn alloc_varlena(&mut self, _: &[u8]) -> usize {
            unreachable!("folded constants read no input column")
        }
    }
    let fold = |e: VExpr| -> VExpr {
        let all_const = match &e {
            VExpr::Cast { arg, .. } | VExpr::Neg { arg, .. } => matches!(**arg, VExpr::Const { .. }),
            VExpr::Arith { left, right, .. } | VExpr::Date { left, right, .. } => {
                matches!(**left, VExpr::Const { .. }) && matches!(**right, VExpr::Const { .. })
            }
            _ => false,
        };
        if !all_const {
            return e;
        }
        let mut host = NoHost;
        // SAFETY: no input, no parameter; the constants are this function's contract.
        let mut ctx = unsafe { EvalCtx::new(&[], &[], 1, &mut host, &[]) };
        match eval(&e, &mut ctx, &[0]) {
            // An I128 constant is a Datum (an i64, widened when splatted)
            // only when it fits one.
            Ok(Column { values: Values::I128(v), validity })
                if validity.get(0) && i64::try_from(v[0]).is_err() =>
            {
                e
            }
            Ok(c) => {
                VExpr::Const { value: c.is_valid(0).then(|| c.values.datum(0)), phys: c.values.phys_type() }
            }
            Err(_) => e,
        }
    };
    let b = |x: Box<VExpr>| Box::new(fold_constants(*x));
    let e = match e {
        VExpr::Cmp { op, kind, left, right } => VExpr::Cmp { op, kind, left: b(left), right: b(right) },
        VExpr::Arith { op, phys, left, right } => VExpr::Arith { op, phys, left: b(left), right: b(right) },
        VExpr::Neg { phys, arg } => VExpr::Neg { phys, arg: b(arg) },
        VExpr::Cast { op, to, arg } => VExpr::Cast { op, to, arg: b(arg) },
        VExpr::Date { op, left, right } => VExpr::Date { op, left: b(left), right: b(right) },
        VExpr::And(a) => VExpr::And(a.into_iter().map(|x| fold_constants(x)).collect()),
        VExpr::Or(a) => VExpr::Or(a.into_iter().map(|x| fold_constants(x)).collect()),
        VExpr::Not(a) => VExpr::Not(b(a)),
        VExpr::IsNull { arg, negate } => VExpr::IsNull { arg: b(arg), negate },
        VExpr::BoolTest { kind, arg } => VExpr::BoolTest { kind, arg: b(arg) },
        VExpr::Distinct { kind, negate, left, right } => {
            VExpr::Distinct { kind, negate, left: b(left), right: b(right) }
        }
        VExpr::InSet { arg, set, kind, has_null, empty, negate } => {
            VExpr::InSet { arg: b(arg), set, kind, has_null, empty, negate }
        }
        VExpr::Like { arg, pattern, negate } => VExpr::Like { arg: b(arg), pattern, negate },
        VExpr::Length { kind, arg } => VExpr::Length { kind, arg: b(arg) },
        VExpr::NumericToScaled { scale, phys, arg } => VExpr::NumericToScaled { scale, phys, arg: b(arg) },
        VExpr::Case { arms, otherwise, phys } => VExpr::Case {
            arms: arms.into_iter().map(|(c, r)| (fold_constants(c), fold_constants(r))).collect(),
            otherwise: otherwise.map(b),
            phys,
        },
        // (A call is the host's: never folded here; PostgreSQL's planner
        // folds immutable calls of constants before vexec sees them.)
        VExpr::Call { func, args, phys } => {
            VExpr::Call { func, args: args.into_iter().map(|x| fold_constants(x)).collect(), phys }
        }
        VExpr::Coalesce { args, phys } => {
            VExpr::Coalesce { args: args.into_iter().map(|x| fold_constants(x)).collect(), phys }
        }
        leaf => leaf,
    };
    fold(e)
}

/// Evaluate an operand; for text kinds (and numerics, read through the same
/// path) make the rows' varlenas plain first. An input column of byte views
/// or offsets is returned as it is (the byte kernels read it through
/// [`Bytes`]).
fn eval_plain<'a>(
    e: &VExpr,
    kind: CmpKind,
    ctx: &mut EvalCtx<'a>,
    sel: &[RowIdx],
) -> Result<std::borrow::Cow<'a, Column>, KernelError> {
    let text = matches!(kind, CmpKind::Text | CmpKind::Bpchar);
    // Byte views and offsets are read in place by the byte kernels.
    if let (true, VExpr::Column { index }) = (text, e) {
        let inputs: &'a [Column] = ctx.inputs;
        if matches!(inputs[*index].values, Values::View(_) | Values::Offsets(_)) {
            return Ok(std::borrow::Cow::Borrowed(&inputs[*index]));
        }
    }
    let mut c = eval(e, ctx, sel)?;
    if text {
        let Column { values, validity } = &mut c;
        if let Values::Datum(v) = values {
            let needs = sel.iter().any(|&r| {
                let i = r as usize;
                // SAFETY: EvalCtx::new's contract: Datums are varlenas.
                validity.get(i) && !unsafe { varlena::is_plain(v[i] as *const u8) }
            });
            if needs {
                ctx.host.detoast(v, validity, sel);
            }
        }
    }
    Ok(std::borrow::Cow::Owned(c))
}

/// AND (`is_and`) or OR with three-valued logic, each argument evaluated only
/// on the rows still undecided (PostgreSQL's short-circuit order).
fn and_or(args: &[VExpr], is_and: bool, ctx: &mut EvalCtx, sel: &[RowIdx]) -> Result<Column, KernelError> {
    let mut out = Column::new(PhysType::Bool, ctx.len);
    let mut saw_null = vec![false; ctx.len];
    let mut pending: Vec<RowIdx> = sel.to_vec();
    for arg in args {
        if pending.is_empty() {
            break;
        }
        let c = eval(arg, ctx, &pending)?;
        pending.retain(|&r| {
            let i = r as usize;
            if !c.is_valid(i) {
                saw_null[i] = true;
                return true;
            }
            let b = kernels::bool_at(&c, i);
            if b != is_and {
                // false decides an AND, true decides an OR
                kernels::set_bool(&mut out, i, Some(b));
                return false;
            }
            true
        });
    }
    for &r in &pending {
        let i = r as usize;
        kernels::set_bool(&mut out, i, if saw_null[i] { None } else { Some(is_and) });
    }
    Ok(out)
}

/// # Safety
/// For a byte set, row `i` of `v` points to a plain varlena.
unsafe fn set_contains(set: &ConstSet, kind: CmpKind, v: &Values, i: usize) -> bool {
    match set {
        ConstSet::Ints(s) => {
            let x = match v {
                Values::I16(a) => a[i] as i64,
                Values::I32(a) => a[i] as i64,
                Values::I64(a) => a[i],
                Values::Bool(a) => a[i] as i64,
                other => panic!("integer set probed with {:?}", other.phys_type()),
            };
            if s.len() <= 8 {
                s.contains(&x)
            } else {
                s.binary_search(&x).is_ok()
            }
        }
        ConstSet::Floats(s) => {
            let x = match v {
                Values::F32(a) => a[i] as f64,
                Values::F64(a) => a[i],
                other => panic!("float set probed with {:?}", other.phys_type()),
            };
            s.iter().any(|&y| cmp::float_cmp(x, y) == Ordering::Equal)
        }
        ConstSet::Bytes(s) => {
            // SAFETY: the caller vouches for row i.
            let Some(a) = (unsafe { Bytes::of(v) }) else { panic!("byte set probed with non-varlena") };
            let b = a.get(i);
            let b = if kind == CmpKind::Bpchar { cmp::trim_blanks(b) } else { b };
            s.iter().any(|x| x.as_slice() == b)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{full_selection, Bitmap};
    use crate::expr::{ArithOp, CmpOp, Host};

    fn fold_constants(e: VExpr) -> VExpr {
        // SAFETY: the tests' constants are by value or live test varlenas.
        unsafe { super::fold_constants(e) }
    }

    /// The host of these tests: no TOAST; function 1 adds its two int4
    /// arguments, returns NULL for a sum of 0 and raises at a sum of 13.
    struct NoHost;
    impl Host for NoHost {
        fn detoast(&mut self, _: &mut [usize], _: &Bitmap, _: &[RowIdx]) {
            panic!("no TOAST in these tests")
        }
        fn call(
            &mut self,
            func: crate::expr::FuncRef,
            args: &[Vec<usize>],
            rows: &[RowIdx],
            out: &mut [Option<usize>],
        ) -> Result<(), KernelError> {
            assert_eq!(func.oid, 1);
            for &r in rows {
                let sum = args[0][r as usize] as i64 as i32 + args[1][r as usize] as i64 as i32;
                if sum == 13 {
                    return Err(KernelError { row: r });
                }
                out[r as usize] = (sum != 0).then_some(sum as i64 as usize);
            }
            Ok(())
        }
        fn alloc_varlena(&mut self, bytes: &[u8]) -> usize {
            // Lives as long as the test process.
            Box::leak(bytes.to_vec().into_boxed_slice()).as_ptr() as usize
        }
    }

    #[test]
    fn calls_are_strict_and_report_the_failing_row() {
        let call = |l: Box<VExpr>, r: Box<VExpr>| VExpr::Call {
            func: crate::expr::FuncRef { oid: 1, collation: 0, native: 0 },
            args: vec![*l, *r],
            phys: PhysType::I32,
        };
        let inputs = [ints(&[Some(1), None, Some(-2), Some(5)]), ints(&[Some(2), Some(3), Some(2), None])];
        assert_eq!(run(&call(col(0), col(1)), &inputs), Ok(vec![Some(3), None, None, None]));
        // Not folded, even over constants (the host calls it).
        let e = fold_constants(call(int(6), int(7)));
        assert!(matches!(e, VExpr::Call { .. }));
        assert_eq!(run(&e, &inputs), Err(KernelError { row: 0 }));
        // A row the selection leaves out is not called.
        let bad = [ints(&[Some(1), Some(6)]), ints(&[Some(1), Some(7)])];
        assert_eq!(run(&call(col(0), col(1)), &bad), Err(KernelError { row: 1 }));
        let mut sel = vec![0];
        let mut host = NoHost;
        // SAFETY: by-value inputs.
        let mut ctx = unsafe { EvalCtx::new(&bad, &[], 2, &mut host, &[]) };
        let out = eval(&call(col(0), col(1)), &mut ctx, &sel).unwrap();
        assert_eq!(out.values.datum(0), 2);
        sel.clear();
        assert!(eval(&call(col(0), col(1)), &mut ctx, &sel).is_ok());
    }

    fn ints(v: &[Option<i32>]) -> Column {
        let mut c = Column::new(PhysType::I32, v.len());
        for (i, x) in v.iter().enumerate() {
            match x {
                Some(x) => c.values.set_datum(i, *x as i64 as usize),
                None => c.validity.set(i, false),
            }
        }
        c
    }

    #[test]
    fn scaled_numerics_read_once_per_selection() {
        let store: Vec<Vec<u8>> = [150i128, -25].iter().map(|&v| crate::numeric::encode(v, 2)).collect();
        let mut col = Column::new(PhysType::Datum, 2);
        store.iter().enumerate().for_each(|(i, v)| col.values.set_datum(i, v.as_ptr() as usize));
        let inputs = [col];
        let mut host = NoHost;
        let e = VExpr::NumericToScaled {
            scale: 2,
            phys: PhysType::I64,
            arg: Box::new(VExpr::Column { index: 0 }),
        };
        let shared = [e.clone()];
        let mut ctx = test_ctx(&inputs, 2, &mut host, &shared);
        let first = eval(&e, &mut ctx, &[0]).unwrap();
        assert_eq!(first.values.datum(0) as i64, 150);
        // Another selection is read again, not served rows it lacks.
        let both = eval(&e, &mut ctx, &[0, 1]).unwrap();
        assert_eq!((both.values.datum(0) as i64, both.values.datum(1) as i64), (150, -25));
        assert_eq!(ctx.memo.len(), 2);
        let again = eval(&e, &mut ctx, &[0, 1]).unwrap();
        assert_eq!(again, both);
        assert_eq!(ctx.memo.len(), 2, "the same selection is served from the memo");
    }

    #[test]
    fn repeated_arithmetic_is_computed_once() {
        let mut a = Column::new(PhysType::I64, 3);
        (0..3).for_each(|i| a.values.set_datum(i, (i + 2) as usize));
        a.validity.set(2, false);
        let inputs = [a];
        let mut host = NoHost;
        let sq =
            || Box::new(VExpr::Arith { op: ArithOp::Mul, phys: PhysType::I64, left: col(0), right: col(0) });
        let e = VExpr::Arith { op: ArithOp::Add, phys: PhysType::I64, left: sq(), right: sq() };
        let shared = crate::expr::shared_subexpressions([&e]);
        assert_eq!(shared, vec![*sq()], "the square occurs twice, the sum once");
        let mut ctx = test_ctx(&inputs, 3, &mut host, &shared);
        let c = eval(&e, &mut ctx, &[0, 1, 2]).unwrap();
        assert_eq!((c.values.datum(0), c.values.datum(1), c.is_valid(2)), (8, 18, false));
        // One entry, for the square: the sum is not kept.
        assert_eq!(ctx.memo.len(), 1);
        assert_eq!(eval(&sq(), &mut ctx, &[0, 1, 2]).unwrap().values.datum(1), 9);
        assert_eq!(ctx.memo.len(), 1);
        eval(&sq(), &mut ctx, &[1]).unwrap();
        assert_eq!(ctx.memo.len(), 2, "another selection is computed again");
    }

    /// ClickBench Q29's shape: 90 sums of `c + k` share the widening of `c`
    /// and nothing else.
    #[test]
    fn only_repeated_subexpressions_are_shared() {
        let widen =
            || Box::new(VExpr::Cast { op: crate::expr::CastOp::IntToInt, to: PhysType::I32, arg: col(0) });
        let sums: Vec<VExpr> = (0..90)
            .map(|k| VExpr::Arith { op: ArithOp::Add, phys: PhysType::I32, left: widen(), right: int(k) })
            .collect();
        assert_eq!(crate::expr::shared_subexpressions(&sums), vec![*widen()]);
        assert_eq!(crate::expr::shared_subexpressions(&sums[..1]), vec![]);
        // Below a repeated node only its first occurrence counts.
        let twice = [sums[3].clone(), sums[3].clone()];
        assert_eq!(crate::expr::shared_subexpressions(&twice), vec![sums[3].clone()]);
        let mut i16s = Column::new(PhysType::I16, 3);
        (0..3).for_each(|i| i16s.values.set_datum(i, (i * 100) as usize));
        let inputs = [i16s];
        let shared = crate::expr::shared_subexpressions(&sums);
        let mut host = NoHost;
        let mut ctx = test_ctx(&inputs, 3, &mut host, &shared);
        for (k, e) in sums.iter().enumerate() {
            let c = eval(e, &mut ctx, &[0, 1, 2]).unwrap();
            assert_eq!(c.values.datum(2), 200 + k);
        }
        assert_eq!(ctx.memo.len(), 1, "the widened column, once");
    }

    /// A context over test columns (whose Datums are the tests' live varlenas).
    fn test_ctx<'a>(
        inputs: &'a [Column],
        len: usize,
        host: &'a mut NoHost,
        shared: &'a [VExpr],
    ) -> EvalCtx<'a> {
        EvalCtx { inputs, params: &[], len, host, shared, memo: Vec::new(), conversions: 0 }
    }

    fn run(e: &VExpr, inputs: &[Column]) -> Result<Vec<Option<i64>>, KernelError> {
        let len = inputs[0].len();
        let mut host = NoHost;
        let mut ctx = test_ctx(inputs, len, &mut host, &[]);
        let c = eval(e, &mut ctx, &full_selection(len))?;
        Ok((0..len).map(|i| c.is_valid(i).then(|| c.values.datum(i) as i64)).collect())
    }

    fn col(i: usize) -> Box<VExpr> {
        Box::new(VExpr::Column { index: i })
    }
    fn int(v: i32) -> Box<VExpr> {
        Box::new(VExpr::Const { value: Some(v as i64 as usize), phys: PhysType::I32 })
    }
    fn gt(l: Box<VExpr>, r: Box<VExpr>) -> VExpr {
        VExpr::Cmp { op: CmpOp::Gt, kind: CmpKind::Native, left: l, right: r }
    }

    fn run_filter(e: &VExpr, inputs: &[Column]) -> Result<Vec<RowIdx>, KernelError> {
        let len = inputs[0].len();
        let mut host = NoHost;
        let mut ctx = test_ctx(inputs, len, &mut host, &[]);
        let mut sel = full_selection(len);
        filter(e, &mut ctx, &mut sel)?;
        Ok(sel)
    }

    #[test]
    fn filter_agrees_with_eval() {
        let a = ints(&[Some(1), None, Some(5), Some(-3), Some(5)]);
        for op in [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge] {
            for (l, r) in [(col(0), int(5)), (int(5), col(0))] {
                let e = VExpr::Cmp { op, kind: CmpKind::Native, left: l, right: r };
                let via_eval: Vec<RowIdx> = run(&e, &[a.clone()])
                    .unwrap()
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| **v == Some(1))
                    .map(|(i, _)| i as RowIdx)
                    .collect();
                assert_eq!(run_filter(&e, &[a.clone()]).unwrap(), via_eval, "{op:?}");
            }
        }
        let null = Box::new(VExpr::Const { value: None, phys: PhysType::I32 });
        let e = VExpr::Cmp { op: CmpOp::Eq, kind: CmpKind::Native, left: col(0), right: null };
        assert!(run_filter(&e, &[a]).unwrap().is_empty());
        // Text equality with a constant, bpchar ignoring trailing blanks.
        let (x, y, z) = (varlena::make_1b(b"key7"), varlena::make_1b(b"key7  "), varlena::make_4b(b"key"));
        let mut t = Column::new(PhysType::Datum, 4);
        for (i, p) in [x.as_ptr(), y.as_ptr(), z.as_ptr(), x.as_ptr()].iter().enumerate() {
            t.values.set_datum(i, *p as usize);
        }
        t.validity.set(3, false);
        let k = varlena::make_1b(b"key7");
        let konst = Box::new(VExpr::Const { value: Some(k.as_ptr() as usize), phys: PhysType::Datum });
        for (kind, want) in [(CmpKind::Text, vec![0]), (CmpKind::Bpchar, vec![0, 1])] {
            let e = VExpr::Cmp { op: CmpOp::Eq, kind, left: col(0), right: konst.clone() };
            assert_eq!(run_filter(&e, &[t.clone()]).unwrap(), want);
        }
        let ne = VExpr::Cmp { op: CmpOp::Ne, kind: CmpKind::Text, left: konst.clone(), right: col(0) };
        assert_eq!(run_filter(&ne, &[t]).unwrap(), vec![1, 2]);
    }

    /// The same quals and expressions over a date, timestamp, bool and
    /// numeric column give the same rows and values whether the batch holds
    /// them in the postgres or the arrow layout: comparisons with constants
    /// on the arrow dates and timestamps in place (constants shifted, the
    /// infinities included), numerics read from Decimal128 in place, the
    /// rest through counted conversions.
    #[test]
    fn kernels_agree_on_both_layouts() {
        use crate::batch::layout::{to_arrow, ArrowKind};
        let dates = [i32::MIN, -10_957, -1, 0, 1, 9_000, i32::MAX];
        let stamps = [i64::MIN, -946_684_800_000_000, -1, 0, 1, 7_000_000_000_000_000, i64::MAX];
        let numerics: Vec<Vec<u8>> = [-12_345i128, -1, 0, 1, 250, 99_999_999, 10i128.pow(30)]
            .iter()
            .map(|&v| crate::numeric::encode(v, 2))
            .collect();
        let len = dates.len();
        let mut pg = vec![
            Column::new(PhysType::I32, len),
            Column::new(PhysType::I64, len),
            Column::new(PhysType::Bool, len),
            Column::new(PhysType::Datum, len),
        ];
        for i in 0..len {
            pg[0].values.set_datum(i, dates[i] as i64 as usize);
            pg[1].values.set_datum(i, stamps[i] as usize);
            pg[2].values.set_datum(i, (i % 2 == 0) as usize); // row 2: true but NULL
            pg[3].values.set_datum(i, numerics[i].as_ptr() as usize);
        }
        for c in &mut pg {
            c.validity.set(2, false);
        }
        let all = full_selection(len);
        let kinds =
            [ArrowKind::Date32, ArrowKind::TimestampUs, ArrowKind::Bits, ArrowKind::Decimal128 { scale: 2 }];
        let arrow: Vec<Column> = pg
            .iter()
            .zip(kinds)
            .map(|(c, k)| {
                // SAFETY: the Datums point to the live numerics above.
                let values = unsafe { to_arrow(c, k, &all, None) }.unwrap();
                Column { values, validity: c.validity.clone() }
            })
            .collect();
        let konst = |v: i64, phys| Box::new(VExpr::Const { value: Some(v as usize), phys });
        let mut quals = Vec::new();
        for op in [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge] {
            for &d in &dates {
                quals.push(VExpr::Cmp {
                    op,
                    kind: CmpKind::Native,
                    left: col(0),
                    right: konst(d as i64, PhysType::I32),
                });
                quals.push(VExpr::Cmp {
                    op,
                    kind: CmpKind::Native,
                    left: konst(d as i64, PhysType::I32),
                    right: col(0),
                });
            }
            for &t in stamps.iter().chain(&[9_223_371_331_199_999_999]) {
                // The last constant has no Unix-epoch form: the column is converted.
                quals.push(VExpr::Cmp {
                    op,
                    kind: CmpKind::Native,
                    left: col(1),
                    right: konst(t, PhysType::I64),
                });
            }
            quals.push(VExpr::Cmp {
                op,
                kind: CmpKind::Native,
                left: col(2),
                right: konst(1, PhysType::Bool),
            });
        }
        quals.push(VExpr::And(vec![
            VExpr::Cmp {
                op: CmpOp::Ge,
                kind: CmpKind::Native,
                left: col(0),
                right: konst(-1, PhysType::I32),
            },
            VExpr::Cmp {
                op: CmpOp::Lt,
                kind: CmpKind::Native,
                left: col(0),
                right: konst(i32::MAX as i64, PhysType::I32),
            },
        ]));
        quals.push(gt(col(0), col(0)));
        quals.push(*col(2)); // a bool column as a qual
        for q in &quals {
            assert_eq!(run_filter(q, &arrow).unwrap(), run_filter(q, &pg).unwrap(), "{q:?}");
            assert_eq!(run(q, &arrow).unwrap(), run(q, &pg).unwrap(), "{q:?}");
        }
        // Numerics read as scaled integers: in place from Decimal128.
        for phys in [PhysType::I64, PhysType::I128] {
            let e = VExpr::NumericToScaled { scale: 2, phys, arg: col(3) };
            let (a, p) = (run(&e, &arrow), run(&e, &pg));
            if phys == PhysType::I64 {
                assert_eq!(a.unwrap_err(), p.unwrap_err(), "10^30 is too wide for an I64");
            } else {
                assert_eq!(a.unwrap(), p.unwrap());
            }
        }
        // Counted: a kernel that reads the postgres layout (date - date).
        let minus = VExpr::Date { op: super::super::DateOp::Diff, left: col(0), right: col(0) };
        let mut host = NoHost;
        let mut ctx = test_ctx(&arrow, len, &mut host, &[]);
        let mut sel = full_selection(len);
        filter(&quals[0], &mut ctx, &mut sel).unwrap();
        filter(&quals[quals.len() - 1], &mut ctx, &mut sel).unwrap();
        assert_eq!(ctx.conversions, 0, "date and bool quals on the arrow layout in place");
        let _ = eval(&minus, &mut ctx, &all);
        assert_eq!(ctx.conversions, 2, "date - date reads both operands in the postgres layout");
    }

    /// Text, bpchar and bytea kernels (comparisons with constants and
    /// between columns, IN lists, LIKE, lengths) give the same rows and
    /// values on PostgreSQL's Datums, on byte views and on offsets, and read
    /// the arrow forms in place (no conversion counted).
    #[test]
    fn byte_kernels_agree_on_every_varlena_layout() {
        use crate::batch::layout::{to_arrow, ArrowKind};
        use crate::expr::{ConstSet, LengthKind};
        let texts: Vec<&[u8]> = vec![
            b"",
            b"key7",
            b"key7  ",
            b"exactly12byt",
            b"exactly12bytX",
            b"thirteen byte",
            b"thirteen bytf",
            "non-ASCII: \u{e4}\u{f6} \u{20ac}".as_bytes(),
            b"NULL row",
            b"a%_b",
        ];
        let long = vec![b'z'; 3000];
        let stored: Vec<Vec<u8>> = texts
            .iter()
            .map(|t| *t)
            .chain([&long[..]])
            .map(|t| if t.len() <= 126 { varlena::make_1b(t) } else { varlena::make_4b(t) })
            .collect();
        let len = stored.len();
        let mut pg = Column::new(PhysType::Datum, len);
        for (i, v) in stored.iter().enumerate() {
            pg.values.set_datum(i, v.as_ptr() as usize);
        }
        pg.validity.set(8, false);
        // A second column: the first reversed, for column-to-column comparisons.
        let mut pg2 = Column::new(PhysType::Datum, len);
        for i in 0..len {
            pg2.values.set_datum(i, pg.values.datum(len - 1 - i));
        }
        let all = full_selection(len);
        let consts: Vec<Vec<u8>> =
            [&b""[..], b"key7", b"exactly12byt", b"thirteen byte", b"absent", &long[..]]
                .iter()
                .map(|c| varlena::make_4b(c))
                .collect();
        let k =
            |c: &Vec<u8>| Box::new(VExpr::Const { value: Some(c.as_ptr() as usize), phys: PhysType::Datum });
        let mut exprs = Vec::new();
        for kind in [CmpKind::Text, CmpKind::Bpchar] {
            for op in [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge] {
                for c in &consts {
                    exprs.push(VExpr::Cmp { op, kind, left: col(0), right: k(c) });
                    exprs.push(VExpr::Cmp { op, kind, left: k(c), right: col(0) });
                }
                exprs.push(VExpr::Cmp { op, kind, left: col(0), right: col(1) });
            }
            exprs.push(VExpr::Distinct { kind, negate: false, left: col(0), right: col(1) });
            exprs.push(VExpr::InSet {
                arg: col(0),
                set: ConstSet::Bytes(vec![b"key7".to_vec(), b"thirteen byte".to_vec()]),
                kind,
                has_null: false,
                empty: false,
                negate: false,
            });
        }
        for p in ["key%", "%byte", "%12%", "thirteen byt_", "%", "", "a\\%\\_b"] {
            for negate in [false, true] {
                let pattern = kernels::like::LikePattern::compile(p.as_bytes(), true).unwrap();
                exprs.push(VExpr::Like { arg: col(0), pattern, negate });
            }
        }
        for kind in [LengthKind::TextChars, LengthKind::Octets, LengthKind::BpcharChars] {
            exprs.push(VExpr::Length { kind, arg: col(0) });
        }
        let pg_inputs = [pg.clone(), pg2.clone()];
        for kind in [ArrowKind::View, ArrowKind::Offsets] {
            let arrow: Vec<Column> = pg_inputs
                .iter()
                .map(|c| {
                    // SAFETY: the Datums point to the live varlenas above.
                    let values = unsafe { to_arrow(c, kind, &all, None) }.unwrap();
                    Column { values, validity: c.validity.clone() }
                })
                .collect();
            for e in &exprs {
                let want = run(e, &pg_inputs);
                assert_eq!(run(e, &arrow), want, "{kind:?} {e:?}");
                if e.phys_type_hint() == PhysType::Bool {
                    assert_eq!(run_filter(e, &arrow), run_filter(e, &pg_inputs), "{kind:?} filter {e:?}");
                }
                let mut host = NoHost;
                let mut ctx = test_ctx(&arrow, len, &mut host, &[]);
                let mut sel = full_selection(len);
                let _ = eval(e, &mut ctx, &all);
                if e.phys_type_hint() == PhysType::Bool {
                    let _ = filter(e, &mut ctx, &mut sel);
                }
                assert_eq!(ctx.conversions, 0, "{kind:?} read in place: {e:?}");
            }
        }
    }

    /// Two comparisons of one integer column with constants, fused into one
    /// interval by `filter_all` (and a single one, as an interval), keep
    /// exactly the rows the generic evaluator's AND keeps: every operator
    /// pair, bounds at the type's limits, NULLs, batch lengths that end
    /// inside a 64-row word, and both the dense path (every row selected)
    /// and the path through a sparse selection.
    #[test]
    fn interval_filters_agree_with_eval() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            seed >> 33
        };
        let ops = [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge];
        for (phys, min, max) in [
            (PhysType::I16, i16::MIN as i64, i16::MAX as i64),
            (PhysType::I32, i32::MIN as i64, i32::MAX as i64),
            (PhysType::I64, i64::MIN, i64::MAX),
        ] {
            let consts = [min, min + 1, -1, 0, 5, 7, max - 1, max];
            for len in [1usize, 63, 64, 130, 1024] {
                let mut c = Column::new(phys, len);
                for i in 0..len {
                    let v = match next() % 8 {
                        0 => min,
                        1 => max,
                        2 => min + 1,
                        _ => (next() % 13) as i64 - 3,
                    };
                    c.values.set_datum(i, v as usize);
                    if next() % 9 == 0 {
                        c.validity.set(i, false);
                    }
                }
                let k = |v: i64| Box::new(VExpr::Const { value: Some(v as usize), phys });
                for &o1 in &ops {
                    for &o2 in &ops {
                        for (&c1, &c2) in consts.iter().zip(consts.iter().rev()).chain([(&5, &5), (&0, &7)]) {
                            let e1 = VExpr::Cmp { op: o1, kind: CmpKind::Native, left: col(0), right: k(c1) };
                            let e2 = VExpr::Cmp { op: o2, kind: CmpKind::Native, left: k(c2), right: col(0) };
                            let both = VExpr::And(vec![e1.clone(), e2.clone()]);
                            let want: Vec<RowIdx> = run(&both, &[c.clone()])
                                .unwrap()
                                .iter()
                                .enumerate()
                                .filter(|(_, v)| **v == Some(1))
                                .map(|(i, _)| i as RowIdx)
                                .collect();
                            let mut host = NoHost;
                            let inputs = [c.clone()];
                            let mut ctx = test_ctx(&inputs, len, &mut host, &[]);
                            let mut sel = full_selection(len);
                            filter_all(&[&e1, &e2], &mut ctx, &mut sel).unwrap();
                            assert_eq!(sel, want, "{phys:?} len {len}: {o1:?} {c1}, {c2} {o2:?}");
                            // Through a sparse selection: every third row.
                            let mut sparse: Vec<RowIdx> = (0..len as RowIdx).step_by(3).collect();
                            filter_all(&[&e1, &e2], &mut ctx, &mut sparse).unwrap();
                            let want3: Vec<RowIdx> = want.iter().copied().filter(|r| r % 3 == 0).collect();
                            assert_eq!(sparse, want3, "{phys:?} len {len} sparse: {o1:?} {c1}, {c2} {o2:?}");
                            // One comparison alone.
                            let want1: Vec<RowIdx> = run(&e1, &[c.clone()])
                                .unwrap()
                                .iter()
                                .enumerate()
                                .filter(|(_, v)| **v == Some(1))
                                .map(|(i, _)| i as RowIdx)
                                .collect();
                            let mut one = full_selection(len);
                            filter(&e1, &mut ctx, &mut one).unwrap();
                            assert_eq!(one, want1, "{phys:?} len {len}: {o1:?} {c1}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn constants_fold_unless_they_would_raise() {
        let cast = VExpr::Cast { op: crate::expr::CastOp::IntToInt, to: PhysType::I64, arg: int(-7) };
        assert_eq!(fold_constants(cast), VExpr::Const { value: Some((-7i64) as usize), phys: PhysType::I64 });
        let div = VExpr::Arith { op: ArithOp::Div, phys: PhysType::I32, left: int(1), right: int(0) };
        assert_eq!(fold_constants(div.clone()), div, "1/0 stays, PostgreSQL raises it when evaluated");
    }

    #[test]
    fn and_or_three_valued() {
        // a > 0 AND b > 0, OR likewise, with NULLs.
        let a = ints(&[Some(1), Some(1), Some(-1), None, None]);
        let b = ints(&[Some(1), None, None, Some(-1), None]);
        let and = VExpr::And(vec![gt(col(0), int(0)), gt(col(1), int(0))]);
        assert_eq!(run(&and, &[a.clone(), b.clone()]).unwrap(), vec![Some(1), None, Some(0), Some(0), None]);
        let or = VExpr::Or(vec![gt(col(0), int(0)), gt(col(1), int(0))]);
        assert_eq!(run(&or, &[a, b]).unwrap(), vec![Some(1), Some(1), None, None, None]);
    }

    #[test]
    fn and_does_not_evaluate_what_a_false_argument_decides() {
        // x <> 0 AND 10 / x > 1: no division by zero where x = 0.
        let x = ints(&[Some(0), Some(5), Some(20)]);
        let div = VExpr::Arith { op: ArithOp::Div, phys: PhysType::I32, left: int(10), right: col(0) };
        let e = VExpr::And(vec![
            VExpr::Cmp { op: CmpOp::Ne, kind: CmpKind::Native, left: col(0), right: int(0) },
            gt(Box::new(div.clone()), int(1)),
        ]);
        assert_eq!(run(&e, &[x.clone()]).unwrap(), vec![Some(0), Some(1), Some(0)]);
        // Without the guard the kernel reports the row PostgreSQL would fail on.
        assert_eq!(run(&gt(Box::new(div), int(1)), &[x]), Err(KernelError { row: 0 }));
    }

    #[test]
    fn case_evaluates_only_the_branch_taken() {
        // CASE WHEN x = 0 THEN 0 ELSE 100 / x END
        let x = ints(&[Some(0), Some(4), None]);
        let e = VExpr::Case {
            arms: vec![(
                VExpr::Cmp { op: CmpOp::Eq, kind: CmpKind::Native, left: col(0), right: int(0) },
                *int(0),
            )],
            otherwise: Some(Box::new(VExpr::Arith {
                op: ArithOp::Div,
                phys: PhysType::I32,
                left: int(100),
                right: col(0),
            })),
            phys: PhysType::I32,
        };
        assert_eq!(run(&e, &[x]).unwrap(), vec![Some(0), Some(25), None]);
    }

    #[test]
    fn coalesce_stops_at_the_first_non_null() {
        let a = ints(&[None, Some(2), None]);
        let b = ints(&[Some(0), Some(0), None]);
        // COALESCE(a, 10 / b, -1): row 1 never divides by b = 0.
        let e = VExpr::Coalesce {
            args: vec![
                *col(0),
                VExpr::Arith { op: ArithOp::Div, phys: PhysType::I32, left: int(10), right: col(1) },
                *int(-1),
            ],
            phys: PhysType::I32,
        };
        assert_eq!(run(&e, &[a.clone(), b.clone()]), Err(KernelError { row: 0 }));
        let b2 = ints(&[Some(5), Some(0), None]);
        assert_eq!(run(&e, &[a, b2]).unwrap(), vec![Some(2), Some(2), Some(-1)]);
    }

    #[test]
    fn in_set_null_semantics() {
        let x = ints(&[Some(1), Some(2), None]);
        let e = |has_null, empty, negate| VExpr::InSet {
            arg: col(0),
            set: ConstSet::Ints(if empty { vec![] } else { vec![1, 5] }),
            kind: CmpKind::Native,
            has_null,
            empty,
            negate,
        };
        assert_eq!(run(&e(false, false, false), &[x.clone()]).unwrap(), vec![Some(1), Some(0), None]);
        assert_eq!(run(&e(true, false, false), &[x.clone()]).unwrap(), vec![Some(1), None, None]);
        assert_eq!(run(&e(false, false, true), &[x.clone()]).unwrap(), vec![Some(0), Some(1), None]);
        assert_eq!(run(&e(true, false, true), &[x.clone()]).unwrap(), vec![Some(0), None, None]);
        assert_eq!(run(&e(false, true, false), &[x.clone()]).unwrap(), vec![Some(0), Some(0), Some(0)]);
        assert_eq!(run(&e(false, true, true), &[x]).unwrap(), vec![Some(1), Some(1), Some(1)]);
    }

    #[test]
    fn distinct_and_bool_tests_never_return_null() {
        let a = ints(&[Some(1), None, None, Some(2)]);
        let b = ints(&[Some(1), None, Some(3), Some(3)]);
        let e = VExpr::Distinct { kind: CmpKind::Native, negate: false, left: col(0), right: col(1) };
        assert_eq!(run(&e, &[a.clone(), b.clone()]).unwrap(), vec![Some(0), Some(0), Some(1), Some(1)]);
        let t = VExpr::BoolTest { kind: BoolTestKind::IsNotTrue, arg: Box::new(gt(col(0), int(1))) };
        assert_eq!(run(&t, &[a]).unwrap(), vec![Some(1), Some(1), Some(1), Some(0)]);
    }
}
