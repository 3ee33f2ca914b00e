//! Evaluating a [`VExpr`] over the rows `sel` of a batch.

use std::cmp::Ordering;

use super::kernels::{self, arith, cast, cmp, like, text};
use super::{BoolTestKind, CmpKind, ConstSet, EvalCtx, KernelError, VExpr};
use crate::batch::{varlena, Column, PhysType, RowIdx, Values};

/// Evaluate `e` on the rows `sel`. The result has a value for every row of
/// `sel`; other rows are unspecified.
pub fn eval(e: &VExpr, ctx: &mut EvalCtx, sel: &[RowIdx]) -> Result<Column, KernelError> {
    let len = ctx.len;
    Ok(match e {
        VExpr::Column { index } => ctx.inputs[*index].clone(),
        VExpr::Const { value, phys } => Column::splat(*phys, len, *value),
        VExpr::Param { index, phys } => Column::splat(*phys, len, ctx.params[*index]),
        VExpr::Cmp { op, kind, left, right } => {
            let l = eval_plain(left, *kind, ctx, sel)?;
            let r = eval_plain(right, *kind, ctx, sel)?;
            let mut out = Column::new(PhysType::Bool, len);
            cmp::compare(*op, *kind, &l, &r, sel, &mut out);
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
                    (true, true) => cmp::order_at(*kind, &l.values, i, &r.values, i) != Ordering::Equal,
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
                } else if set_contains(set, *kind, &a.values, i) {
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
            like::like(&a, pattern, *negate, sel, &mut out);
            out
        }
        VExpr::Length { kind, arg } => {
            let a = eval_plain(arg, CmpKind::Text, ctx, sel)?;
            let mut out = Column::new(PhysType::I32, len);
            text::length(*kind, &a, sel, &mut out);
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
    })
}

/// Evaluate an operand; for text kinds make the rows' varlenas plain first.
fn eval_plain(e: &VExpr, kind: CmpKind, ctx: &mut EvalCtx, sel: &[RowIdx]) -> Result<Column, KernelError> {
    let mut c = eval(e, ctx, sel)?;
    if matches!(kind, CmpKind::Text | CmpKind::Bpchar) {
        let Column { values, validity } = &mut c;
        if let Values::Datum(v) = values {
            let needs = sel.iter().any(|&r| {
                let i = r as usize;
                validity.get(i) && !unsafe { varlena::is_plain(v[i] as *const u8) }
            });
            if needs {
                ctx.host.detoast(v, validity, sel);
            }
        }
    }
    Ok(c)
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

fn set_contains(set: &ConstSet, kind: CmpKind, v: &Values, i: usize) -> bool {
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
            let Values::Datum(a) = v else { panic!("byte set probed with non-varlena") };
            let b = unsafe { varlena::bytes(a[i] as *const u8) };
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

    struct NoHost;
    impl Host for NoHost {
        fn detoast(&mut self, _: &mut [usize], _: &Bitmap, _: &[RowIdx]) {
            panic!("no TOAST in these tests")
        }
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

    fn run(e: &VExpr, inputs: &[Column]) -> Result<Vec<Option<i64>>, KernelError> {
        let len = inputs[0].len();
        let mut host = NoHost;
        let mut ctx = EvalCtx { inputs, params: &[], param_types: &[], len, host: &mut host };
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
