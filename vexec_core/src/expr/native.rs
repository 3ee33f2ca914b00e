//! A pack's native kernels (`crate::packs::gserialized`) over a batch: as
//! part of a [`VExpr::Call`] (the rows a kernel cannot decide go to the
//! extension's own function), and as a qual comparing a column with a
//! constant, decided in place on the column's Datums.

use super::eval::filter_generic;
use super::{EvalCtx, KernelError, VExpr};
use crate::batch::{varlena, Bitmap, RowIdx, Values};
use crate::packs::gserialized::{
    box2df, dwithin_points, false_if_disjoint, point, srid_box, BoxPredicate, Native, PointOverlaps,
};

/// The native kernel `native` over the rows of `rows`: each row it decides
/// gets its result in `results` and leaves `rows`; the rest stay for the
/// extension's own function. The geometry arguments are detoasted first (in
/// the host's current memory context).
pub(super) fn native_rows(
    native: Native,
    args: &mut [Vec<usize>],
    rows: &mut Vec<RowIdx>,
    results: &mut [Option<usize>],
    host: &mut dyn super::Host,
    len: usize,
) {
    let all = Bitmap::all_valid(len);
    let [a, b, rest @ ..] = args else { return };
    host.detoast(a, &all, rows);
    host.detoast(b, &all, rows);
    let (a, b) = (&*a, &*b);
    match (native, rest) {
        (Native::Box(pred), []) => {
            decide_pairs(a, b, rows, results, box2df, |p, q, _| Some(pred.test(&p, &q)))
        }
        (Native::FalseIfDisjoint, []) => {
            decide_pairs(a, b, rows, results, srid_box, |p, q, _| false_if_disjoint(p, q))
        }
        (Native::DWithinPoints, [tolerance]) => decide_pairs(a, b, rows, results, point, |p, q, i| {
            dwithin_points(p, q, f64::from_bits(tolerance[i] as u64))
        }),
        _ => {}
    }
}

/// The rows of `rows` that `decide` answers, from both arguments as `read`
/// takes them and the row, get their result and leave `rows`.
fn decide_pairs<T: Copy>(
    a: &[usize],
    b: &[usize],
    rows: &mut Vec<RowIdx>,
    results: &mut [Option<usize>],
    read: impl Fn(&[u8]) -> Option<T>,
    decide: impl Fn(T, T, usize) -> Option<bool>,
) {
    let (mut x, mut y) = (Parsed::default(), Parsed::default());
    rows.retain(|&r| {
        let i = r as usize;
        let decided = match (x.get(a[i], &read), y.get(b[i], &read)) {
            (Some(p), Some(q)) => decide(p, q, i),
            _ => None,
        };
        results[i] = decided.map(|t| t as usize);
        decided.is_none()
    });
}

/// What a native kernel read from the last Datum of one argument: a
/// constant argument is one pointer, read once per batch.
struct Parsed<T> {
    datum: usize,
    value: Option<T>,
}

impl<T> Default for Parsed<T> {
    fn default() -> Self {
        Parsed { datum: 0, value: None }
    }
}

impl<T: Copy> Parsed<T> {
    /// `read` of the varlena `d` (a plain one: the caller detoasted it).
    fn get(&mut self, d: usize, read: impl Fn(&[u8]) -> Option<T>) -> Option<T> {
        if self.datum != d {
            // SAFETY: EvalCtx::new's contract: the arguments are varlenas, made plain by
            // native_rows before it reads them.
            self.value = read(unsafe { varlena::bytes(d as *const u8) });
            self.datum = d;
        }
        self.value
    }
}

/// The qual `e` when it is a box predicate or a [`Native::FalseIfDisjoint`]
/// predicate of a column and a constant (either way round), as `filter`
/// would apply it: the rows whose stored value is a plain varlena the
/// native kernel decides are decided here, in one pass over the column's
/// Datums with the constant read once; the others (toasted values,
/// geometries whose box needs PostGIS, boxes that overlap) go through the
/// general path (`filter_generic`) together, in their order. None when `e`
/// is not such a qual.
pub(super) fn filter_native_const(
    e: &VExpr,
    ctx: &mut EvalCtx,
    sel: &mut Vec<RowIdx>,
) -> Option<Result<(), KernelError>> {
    let VExpr::Call { func, args, .. } = e else { return None };
    let native = Native::from_id(func.native)?;
    if !matches!(native, Native::Box(_) | Native::FalseIfDisjoint) {
        return None;
    }
    let (index, constant, column_first) = match args.as_slice() {
        [VExpr::Column { index }, VExpr::Const { value: Some(c), .. }] => (*index, *c, true),
        [VExpr::Const { value: Some(c), .. }, VExpr::Column { index }] => (*index, *c, false),
        _ => return None,
    };
    // SAFETY: EvalCtx::new's contract: by-reference constants are varlenas.
    if !unsafe { varlena::is_plain(constant as *const u8) } {
        return None;
    }
    // SAFETY: plain (checked above).
    let constant = unsafe { varlena::bytes(constant as *const u8) };
    let col = ctx.input(index, sel);
    let Values::Datum(vals) = &col.values else { return None };
    let validity = (!col.validity.all_set()).then_some(&col.validity);
    let mut pending = Vec::new();
    let pred = match native {
        Native::Box(pred) => pred,
        _ => {
            // Symmetric in its arguments.
            let c = srid_box(constant)?;
            decide_rows(vals, validity, sel, &mut pending, |v| {
                srid_box(v).and_then(|b| false_if_disjoint(b, c))
            });
            return Some(finish_pending(e, ctx, sel, pending));
        }
    };
    let c = box2df(constant)?;
    // One loop per predicate and argument order, so the test inlines.
    macro_rules! decide {
        ($($p:ident),*) => {
            match (pred, column_first) {
                $(
                    (BoxPredicate::$p, true) => decide_rows(vals, validity, sel, &mut pending, |v| {
                        box2df(v).map(|b| BoxPredicate::$p.test(&b, &c))
                    }),
                    (BoxPredicate::$p, false) => decide_rows(vals, validity, sel, &mut pending, |v| {
                        box2df(v).map(|b| BoxPredicate::$p.test(&c, &b))
                    }),
                )*
            }
        };
    }
    match (pred, PointOverlaps::new(&c)) {
        // Overlaps is symmetric; points (the common case) skip the rounding.
        (BoxPredicate::Overlaps, Some(fast)) => decide_rows(vals, validity, sel, &mut pending, |v| {
            fast.test(v).or_else(|| box2df(v).map(|b| BoxPredicate::Overlaps.test(&b, &c)))
        }),
        _ => decide!(
            Overlaps, Contains, Within, Same, Left, Overleft, Right, Overright, Below, Overbelow, Above,
            Overabove
        ),
    }
    Some(finish_pending(e, ctx, sel, pending))
}

/// Decide the rows of `sel` listed in `pending` (a subsequence of it) by
/// the general path, all together, keeping `sel`'s order.
fn finish_pending(
    e: &VExpr,
    ctx: &mut EvalCtx,
    sel: &mut Vec<RowIdx>,
    pending: Vec<RowIdx>,
) -> Result<(), KernelError> {
    if pending.is_empty() {
        return Ok(());
    }
    let mut kept = pending.clone();
    filter_generic(e, ctx, &mut kept)?;
    let (mut p, mut q) = (0, 0);
    sel.retain(|&r| {
        if pending.get(p) != Some(&r) {
            return true;
        }
        p += 1;
        let keep = kept.get(q) == Some(&r);
        q += keep as usize;
        keep
    });
    Ok(())
}

/// Keep the rows of `sel` whose value `test` finds true, drop the NULL
/// ones (`validity` None: none), keep those it cannot decide (None, or a
/// value that is not a plain varlena) and list them in `pending`.
#[inline(always)]
fn decide_rows(
    vals: &[usize],
    validity: Option<&Bitmap>,
    sel: &mut Vec<RowIdx>,
    pending: &mut Vec<RowIdx>,
    test: impl Fn(&[u8]) -> Option<bool>,
) {
    let mut k = 0;
    for j in 0..sel.len() {
        let r = sel[j];
        let i = r as usize;
        if validity.is_some_and(|v| !v.get(i)) {
            continue; // strict: NULL, so not true
        }
        let d = vals[i] as *const u8;
        // SAFETY: EvalCtx::new's contract: the column's valid values are varlenas.
        let decided = if unsafe { varlena::is_plain(d) } { test(unsafe { varlena::bytes(d) }) } else { None };
        let keep = decided.unwrap_or_else(|| {
            pending.push(r); // kept for now, decided by the caller
            true
        });
        sel[k] = r;
        k += keep as usize;
    }
    sel.truncate(k);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{full_selection, Column, PhysType};
    use crate::expr::{eval, filter, FuncRef, Host};

    /// A v2 2D point's serialization (SRID 0).
    fn point_varlena(x: f64, y: f64) -> Vec<u8> {
        let mut p = vec![0, 0, 0, 0x40];
        p.extend_from_slice(&1u32.to_ne_bytes());
        p.extend_from_slice(&1u32.to_ne_bytes());
        p.extend_from_slice(&x.to_ne_bytes());
        p.extend_from_slice(&y.to_ne_bytes());
        varlena::make_4b(&p)
    }

    /// A geometry the kernel cannot read (a v2 line without a stored box).
    fn line_varlena() -> Vec<u8> {
        let mut p = vec![0, 0, 0, 0x40];
        p.extend_from_slice(&2u32.to_ne_bytes());
        p.extend_from_slice(&[0; 36]);
        varlena::make_4b(&p)
    }

    /// The host: "detoasts" an external pointer (header byte 0x01) to the
    /// plain varlena `toasted`; PostGIS's function is called only for the
    /// line, answering `line_answer` (or failing when None).
    struct TestHost<'a> {
        toasted: &'a [u8],
        line: usize,
        line_answer: Option<bool>,
        called: Vec<RowIdx>,
    }
    impl Host for TestHost<'_> {
        fn detoast(&mut self, values: &mut [usize], validity: &Bitmap, rows: &[RowIdx]) {
            for &r in rows {
                let d = values[r as usize];
                // SAFETY: the tests' Datums are varlenas.
                if validity.get(r as usize) && !unsafe { varlena::is_plain(d as *const u8) } {
                    values[r as usize] = self.toasted.as_ptr() as usize;
                }
            }
        }
        fn call(
            &mut self,
            _: FuncRef,
            args: &[Vec<usize>],
            rows: &[RowIdx],
            out: &mut [Option<usize>],
        ) -> Result<(), KernelError> {
            for &r in rows {
                assert!(args[0][r as usize] == self.line || args[1][r as usize] == self.line);
                self.called.push(r);
                out[r as usize] = Some(self.line_answer.ok_or(KernelError { row: r })? as usize);
            }
            Ok(())
        }
        fn alloc_varlena(&mut self, _: &[u8]) -> usize {
            unreachable!("geometry columns are never converted")
        }
    }

    fn overlaps(args: Vec<VExpr>) -> VExpr {
        VExpr::Call { func: FuncRef { oid: 7, collation: 0, native: 1 }, args, phys: PhysType::Bool }
    }

    #[test]
    fn box_quals_decide_in_place_and_send_the_rest_through_the_function() {
        let square = {
            // A stored box [0, 10] x [0, 10] on a polygon.
            let mut p = vec![0, 0, 0, 0x44];
            [0f32, 10.0, 0.0, 10.0].iter().for_each(|f| p.extend_from_slice(&f.to_ne_bytes()));
            p.extend_from_slice(&3u32.to_ne_bytes());
            varlena::make_4b(&p)
        };
        let (inside, outside, edge, line) =
            (point_varlena(1.0, 2.0), point_varlena(11.0, 2.0), point_varlena(10.0, 0.0), line_varlena());
        let toasted_inside = point_varlena(5.0, 5.0);
        let external = [0x01u8, 18, 0, 0];
        let values = [
            inside.as_ptr(),
            outside.as_ptr(),
            0 as *const u8,
            line.as_ptr(),
            external.as_ptr(),
            edge.as_ptr(),
        ];
        let mut col = Column::new(PhysType::Datum, values.len());
        for (i, v) in values.iter().enumerate() {
            match v.is_null() {
                true => col.validity.set(i, false),
                false => col.values.set_datum(i, *v as usize),
            }
        }
        let inputs = [col];
        let constant = VExpr::Const { value: Some(square.as_ptr() as usize), phys: PhysType::Datum };
        for (answer, expected) in [(true, vec![0, 3, 4, 5]), (false, vec![0, 4, 5])] {
            for args in [
                vec![VExpr::Column { index: 0 }, constant.clone()],
                vec![constant.clone(), VExpr::Column { index: 0 }],
            ] {
                let e = overlaps(args);
                let mut host = TestHost {
                    toasted: &toasted_inside,
                    line: line.as_ptr() as usize,
                    line_answer: Some(answer),
                    called: vec![],
                };
                // SAFETY: the Datums are varlenas that outlive the context.
                let mut ctx = unsafe { EvalCtx::new(&inputs, &[], values.len(), &mut host, &[]) };
                let mut sel = full_selection(values.len());
                filter(&e, &mut ctx, &mut sel).unwrap();
                assert_eq!(sel, expected);
                // The same as evaluating the call and keeping the true rows.
                let c = eval(&e, &mut ctx, &full_selection(values.len())).unwrap();
                let kept: Vec<RowIdx> = (0..values.len() as RowIdx)
                    .filter(|&r| c.is_valid(r as usize) && c.values.datum(r as usize) != 0)
                    .collect();
                assert_eq!(kept, expected);
                drop(ctx);
                assert_eq!(host.called, vec![3, 3], "only the line goes to the function");
            }
        }
        // An error of the function is the qual's, at the function's row.
        let mut host = TestHost {
            toasted: &toasted_inside,
            line: line.as_ptr() as usize,
            line_answer: None,
            called: vec![],
        };
        // SAFETY: as above.
        let mut ctx = unsafe { EvalCtx::new(&inputs, &[], values.len(), &mut host, &[]) };
        let mut sel = full_selection(values.len());
        let e = overlaps(vec![VExpr::Column { index: 0 }, constant.clone()]);
        assert_eq!(filter(&e, &mut ctx, &mut sel), Err(KernelError { row: 3 }));
        // A selection without the line never calls it.
        let mut sel = vec![1, 2, 5];
        assert_eq!(filter(&e, &mut ctx, &mut sel), Ok(()));
        assert_eq!(sel, vec![5]);
    }
}
