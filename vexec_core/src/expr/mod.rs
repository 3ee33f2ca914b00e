//! Vector expressions: a compiled scalar expression ([`VExpr`]) evaluated a
//! batch at a time.
//!
//! The server side (`vexec::expr::compile`) turns a PostgreSQL `Expr` tree
//! into a `VExpr` when every node of it has a kernel here; otherwise the whole
//! top-level expression is evaluated by PostgreSQL's own evaluator, row by row
//! (see `vexec::exec::scan` for why the fallback is per top-level expression).
//!
//! Semantics are PostgreSQL's:
//! - strict operators give NULL when an input is NULL;
//! - AND/OR use three-valued logic and evaluate their arguments lazily: an
//!   argument is evaluated only on the rows whose result is still undecided,
//!   CASE evaluates a branch only on the rows that take it, COALESCE an
//!   argument only on the rows still NULL;
//! - a kernel never raises an error. Where PostgreSQL would raise one
//!   (overflow, division by zero, out-of-range date), the kernel reports
//!   [`KernelError`] and the caller re-evaluates the batch with PostgreSQL's
//!   evaluator, which raises exactly PostgreSQL's error at PostgreSQL's row.
//!   Kernels only look at the rows they were asked for, so garbage under a
//!   NULL or in an unselected row never reports an error.

mod eval;
pub mod kernel_functions;
pub mod kernels;
mod native;

pub use eval::{eval, filter, filter_all, fold_constants};

use crate::batch::{Column, PhysType, RowIdx};
use kernels::like::LikePattern;

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// How two values of the same physical type compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpKind {
    /// Integers, dates, timestamps, booleans: native order.
    Native,
    /// float4/float8: NaN equals NaN and sorts above every other value.
    Float,
    /// text/varchar: bytewise (only under a collation where that is exact).
    Text,
    /// bpchar: bytewise after removing trailing blanks.
    Bpchar,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

/// Conversions between physical types with PostgreSQL's rounding and range
/// checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CastOp {
    /// Between integer widths (narrowing checks the range).
    IntToInt,
    /// Integer to float4/float8.
    IntToFloat,
    /// float4/float8 to integer: rint, then a range check.
    FloatToInt,
    /// float4 <-> float8 (narrowing checks overflow and underflow).
    FloatToFloat,
    /// date to timestamp (`date2timestamp`): days to microseconds, the
    /// infinities to the infinities; a date past the timestamp range is
    /// reported (PostgreSQL raises "date out of range for timestamp").
    DateToTimestamp,
    /// date to timestamp for a comparison with a timestamp
    /// (`date_cmp_timestamp`): a date past the timestamp range compares
    /// above every finite timestamp and below infinity, so it becomes
    /// `i64::MAX - 1`. Never reports.
    DateToTimestampForCmp,
    /// A scaled numeric (an i64 at `scale`) to an integer (`numeric_int2/4/8`):
    /// rounded half away from zero, as numeric.c rounds; a value out of the
    /// integer's range is reported.
    ScaledToInt { scale: u16 },
    /// A scaled numeric from scale `from` to `numeric(precision, to)`
    /// (numeric.c's `apply_typmod`): rounded half away from zero to `to`
    /// digits, or widened exactly; a value whose magnitude reaches
    /// `10^(precision - to)` (PostgreSQL's "numeric field overflow") or that
    /// leaves the i64 is reported.
    Rescale { from: u16, to: u16, precision: u16 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateOp {
    /// date + integer days.
    PlusDays,
    /// date - integer days.
    MinusDays,
    /// date - date: integer days (infinite dates are an error).
    Diff,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoolTestKind {
    IsTrue,
    IsNotTrue,
    IsFalse,
    IsNotFalse,
    IsUnknown,
    IsNotUnknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LengthKind {
    /// length/char_length of text: characters (UTF-8).
    TextChars,
    /// octet_length of text or bpchar: bytes, blanks included.
    Octets,
    /// length/char_length of bpchar: characters without trailing blanks.
    BpcharChars,
}

/// The constants of `x = ANY(array)` / `x <> ALL(array)`.
#[derive(Debug, Clone, PartialEq)]
pub enum ConstSet {
    /// Integer-like values (dates and timestamps too), sorted, deduplicated.
    Ints(Vec<i64>),
    Floats(Vec<f64>),
    /// Byte strings (text under a deterministic collation; bpchar trimmed).
    Bytes(Vec<Vec<u8>>),
}

/// A compiled scalar expression.
#[derive(Debug, Clone, PartialEq)]
pub enum VExpr {
    /// An input column of the batch.
    Column {
        index: usize,
    },
    /// A constant: a Datum, or None for NULL.
    Const {
        value: Option<usize>,
        phys: PhysType,
    },
    /// A parameter whose value the host supplies per batch.
    Param {
        index: usize,
        phys: PhysType,
    },
    Cmp {
        op: CmpOp,
        kind: CmpKind,
        left: Box<VExpr>,
        right: Box<VExpr>,
    },
    Arith {
        op: ArithOp,
        phys: PhysType,
        left: Box<VExpr>,
        right: Box<VExpr>,
    },
    Neg {
        phys: PhysType,
        arg: Box<VExpr>,
    },
    Cast {
        op: CastOp,
        to: PhysType,
        arg: Box<VExpr>,
    },
    Date {
        op: DateOp,
        left: Box<VExpr>,
        right: Box<VExpr>,
    },
    And(Vec<VExpr>),
    Or(Vec<VExpr>),
    Not(Box<VExpr>),
    IsNull {
        arg: Box<VExpr>,
        negate: bool,
    },
    BoolTest {
        kind: BoolTestKind,
        arg: Box<VExpr>,
    },
    /// IS DISTINCT FROM (negate: IS NOT DISTINCT FROM).
    Distinct {
        kind: CmpKind,
        negate: bool,
        left: Box<VExpr>,
        right: Box<VExpr>,
    },
    /// `arg = ANY(set)` (negate: `arg <> ALL(set)`). `empty` is true when the
    /// array had no element at all (then the result is never NULL).
    InSet {
        arg: Box<VExpr>,
        set: ConstSet,
        kind: CmpKind,
        has_null: bool,
        empty: bool,
        negate: bool,
    },
    Like {
        arg: Box<VExpr>,
        pattern: LikePattern,
        negate: bool,
    },
    Length {
        kind: LengthKind,
        arg: Box<VExpr>,
    },
    /// Searched CASE; `otherwise` None means ELSE NULL.
    Case {
        arms: Vec<(VExpr, VExpr)>,
        otherwise: Option<Box<VExpr>>,
        phys: PhysType,
    },
    Coalesce {
        args: Vec<VExpr>,
        phys: PhysType,
    },
    /// A numeric(p, s) value as an integer scaled by `10^scale`: I64 for
    /// p <= 18, I128 for p <= 38. The numeric kernels are integer kernels
    /// on such columns: + and - on operands brought to one scale and width,
    /// * adding the scales, comparisons on one scale. A value that is not
    /// finite, has another display scale or does not fit is reported as a
    /// [`KernelError`], so PostgreSQL's evaluator handles that batch.
    NumericToScaled {
        scale: u16,
        phys: PhysType,
        arg: Box<VExpr>,
    },
    /// A function of another extension, bound through a kernel pack
    /// (`crate::packs`), called by the host through fmgr for the rows
    /// whose arguments are all non-NULL (the function is strict).
    Call {
        func: FuncRef,
        args: Vec<VExpr>,
        phys: PhysType,
    },
}

/// The function a [`VExpr::Call`] calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FuncRef {
    /// pg_proc OID.
    pub oid: u32,
    /// The collation it is called with.
    pub collation: u32,
    /// A native kernel deciding the rows it can exactly (`packs::FunctionV1::native`;
    /// 0: none): the others are called.
    pub native: u32,
}

impl VExpr {
    /// The physical type of the expression's result.
    pub fn phys_type(&self, inputs: &[PhysType], params: &[PhysType]) -> PhysType {
        match self {
            VExpr::Column { index } => inputs[*index],
            VExpr::Const { phys, .. } => *phys,
            VExpr::Param { index, .. } => params[*index],
            VExpr::Arith { phys, .. } | VExpr::Neg { phys, .. } => *phys,
            VExpr::Cast { to, .. } => *to,
            VExpr::Date { op: DateOp::Diff, .. } => PhysType::I32,
            VExpr::Date { .. } => PhysType::I32,
            VExpr::Length { .. } => PhysType::I32,
            VExpr::NumericToScaled { phys, .. } => *phys,
            VExpr::Call { phys, .. } => *phys,
            VExpr::Case { phys, .. } | VExpr::Coalesce { phys, .. } => *phys,
            VExpr::Cmp { .. }
            | VExpr::And(_)
            | VExpr::Or(_)
            | VExpr::Not(_)
            | VExpr::IsNull { .. }
            | VExpr::BoolTest { .. }
            | VExpr::Distinct { .. }
            | VExpr::InSet { .. }
            | VExpr::Like { .. } => PhysType::Bool,
        }
    }

    /// The physical result type where it is known without the inputs' types
    /// (for an empty result, where any type will do otherwise).
    pub fn phys_type_hint(&self) -> PhysType {
        match self {
            VExpr::Const { phys, .. } | VExpr::Param { phys, .. } => *phys,
            VExpr::Arith { phys, .. } | VExpr::Neg { phys, .. } => *phys,
            VExpr::Cast { to, .. } => *to,
            VExpr::Case { phys, .. } | VExpr::Coalesce { phys, .. } => *phys,
            VExpr::Column { .. } => PhysType::Datum,
            VExpr::Date { .. } | VExpr::Length { .. } => PhysType::I32,
            VExpr::NumericToScaled { phys, .. } => *phys,
            _ => PhysType::Bool,
        }
    }

    /// The direct sub-expressions, in evaluation order.
    pub fn children(&self) -> Vec<&VExpr> {
        match self {
            VExpr::Column { .. } | VExpr::Const { .. } | VExpr::Param { .. } => vec![],
            VExpr::Cmp { left, right, .. }
            | VExpr::Arith { left, right, .. }
            | VExpr::Date { left, right, .. }
            | VExpr::Distinct { left, right, .. } => vec![left, right],
            VExpr::Neg { arg, .. }
            | VExpr::Cast { arg, .. }
            | VExpr::Not(arg)
            | VExpr::IsNull { arg, .. }
            | VExpr::BoolTest { arg, .. }
            | VExpr::InSet { arg, .. }
            | VExpr::Like { arg, .. }
            | VExpr::Length { arg, .. }
            | VExpr::NumericToScaled { arg, .. } => vec![arg],
            VExpr::And(args) | VExpr::Or(args) | VExpr::Coalesce { args, .. } | VExpr::Call { args, .. } => {
                args.iter().collect()
            }
            VExpr::Case { arms, otherwise, .. } => {
                arms.iter().flat_map(|(c, r)| [c, r]).chain(otherwise.as_deref()).collect()
            }
        }
    }

    /// The direct sub-expressions, mutable.
    pub fn children_mut(&mut self) -> Vec<&mut VExpr> {
        match self {
            VExpr::Column { .. } | VExpr::Const { .. } | VExpr::Param { .. } => vec![],
            VExpr::Cmp { left, right, .. }
            | VExpr::Arith { left, right, .. }
            | VExpr::Date { left, right, .. }
            | VExpr::Distinct { left, right, .. } => vec![left, right],
            VExpr::Neg { arg, .. }
            | VExpr::Cast { arg, .. }
            | VExpr::Not(arg)
            | VExpr::IsNull { arg, .. }
            | VExpr::BoolTest { arg, .. }
            | VExpr::InSet { arg, .. }
            | VExpr::Like { arg, .. }
            | VExpr::Length { arg, .. }
            | VExpr::NumericToScaled { arg, .. } => vec![arg],
            VExpr::And(args) | VExpr::Or(args) | VExpr::Coalesce { args, .. } | VExpr::Call { args, .. } => {
                args.iter_mut().collect()
            }
            VExpr::Case { arms, otherwise, .. } => {
                arms.iter_mut().flat_map(|(c, r)| [c, r]).chain(otherwise.as_deref_mut()).collect()
            }
        }
    }

    /// Add the input columns the expression reads to `out`.
    pub fn columns(&self, out: &mut Vec<usize>) {
        match self {
            VExpr::Column { index } => out.push(*index),
            e => e.children().into_iter().for_each(|c| c.columns(out)),
        }
    }

    /// Renumber the input columns the expression reads: column `i` becomes
    /// `new_index[i]`.
    pub fn remap_columns(&mut self, new_index: &[usize]) {
        match self {
            VExpr::Column { index } => *index = new_index[*index],
            e => e.children_mut().into_iter().for_each(|c| c.remap_columns(new_index)),
        }
    }

    /// Whether a kernel pack's function is called somewhere in it.
    pub fn has_call(&self) -> bool {
        matches!(self, VExpr::Call { .. }) || self.children().into_iter().any(VExpr::has_call)
    }

    /// Number of operator nodes (for EXPLAIN's kernel step counts).
    pub fn steps(&self) -> usize {
        match self {
            VExpr::Column { .. } | VExpr::Const { .. } | VExpr::Param { .. } => 0,
            e => 1 + e.children().into_iter().map(VExpr::steps).sum::<usize>(),
        }
    }
}

/// A row where PostgreSQL would raise an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelError {
    pub row: RowIdx,
}

/// What the evaluator needs from the server.
pub trait Host {
    /// Replace every compressed or external varlena among `values[rows]`
    /// (valid rows only) with a plain copy that lives at least as long as the
    /// batch.
    fn detoast(&mut self, values: &mut [usize], validity: &crate::batch::Bitmap, rows: &[RowIdx]);

    /// Call `func` for each row of `rows`, its arguments `args[a][row]`
    /// (Datums), results into `out[row]` (None for a NULL result). A data
    /// exception the function raises is a [`KernelError`] at its row (the
    /// batch is then evaluated row by row, where PostgreSQL raises it).
    fn call(
        &mut self,
        func: FuncRef,
        args: &[Vec<usize>],
        rows: &[RowIdx],
        out: &mut [Option<usize>],
    ) -> Result<(), KernelError>;

    /// A copy of the varlena `bytes` (header included) that lives at least
    /// as long as the batch, as a Datum: the numerics of a Decimal128
    /// column converted for a kernel that reads varlenas.
    fn alloc_varlena(&mut self, bytes: &[u8]) -> usize;
}

/// The inputs of one evaluation. Made only by [`EvalCtx::new`], whose
/// contract (Datums are varlenas) is what lets the evaluator's safe entry
/// points read by-reference values.
pub struct EvalCtx<'a> {
    /// The batch's input columns.
    pub(crate) inputs: &'a [Column],
    /// Parameter values for this batch (a Datum or None for NULL).
    pub(crate) params: &'a [Option<usize>],
    /// Rows in the batch (the length of every column).
    pub(crate) len: usize,
    pub(crate) host: &'a mut dyn Host,
    /// The subexpressions that occur more than once among the expressions
    /// evaluated with this context ([`shared_subexpressions`], computed once
    /// per plan). Only these are looked up in and kept in `memo`: for the
    /// others that costs more than computing them (ClickBench Q29 sums 90
    /// different expressions of one column).
    pub(crate) shared: &'a [VExpr],
    /// Shared subexpressions already computed in this evaluation, with the
    /// rows they were computed for: numeric columns read as scaled integers,
    /// arithmetic and casts. TPC-H Q1 reads each of its numeric columns into
    /// two or three aggregate arguments and computes `price * (1 - discount)`
    /// in two.
    pub(crate) memo: Vec<(VExpr, Vec<RowIdx>, Column)>,
    /// Input columns converted from the arrow layout for a kernel that
    /// reads the postgres layout ([`EvalCtx::input`]).
    pub conversions: u64,
}

impl<'a> EvalCtx<'a> {
    /// The context to evaluate expressions over a batch of `len` rows.
    ///
    /// # Safety
    /// Every valid Datum value of `inputs`, every Datum of `params` of a
    /// by-reference type, and every by-reference constant of the
    /// expressions evaluated with this context (and of `shared`) points to
    /// a varlena (plain, or one `host` can detoast) that outlives it.
    pub unsafe fn new(
        inputs: &'a [Column],
        params: &'a [Option<usize>],
        len: usize,
        host: &'a mut dyn Host,
        shared: &'a [VExpr],
    ) -> EvalCtx<'a> {
        EvalCtx { inputs, params, len, host, shared, memo: Vec::new(), conversions: 0 }
    }

    /// Input column `index` as a kernel that reads the postgres layout
    /// needs it: as it is, or converted from the arrow layout for the rows
    /// `sel` (counted in `conversions`). Kernels that read an arrow
    /// representation in place look at `inputs` themselves.
    pub(crate) fn input(&mut self, index: usize, sel: &[RowIdx]) -> std::borrow::Cow<'a, Column> {
        let inputs: &'a [Column] = self.inputs;
        let col = &inputs[index];
        if !col.values.is_arrow() {
            return std::borrow::Cow::Borrowed(col);
        }
        self.conversions += 1;
        let host = &mut *self.host;
        std::borrow::Cow::Owned(crate::batch::layout::to_postgres(col, sel, &mut |b| host.alloc_varlena(b)))
    }
}

impl VExpr {
    /// Whether the evaluator keeps this node's result for a second
    /// occurrence: the nodes whose result costs a kernel pass.
    pub fn memoizable(&self) -> bool {
        match self {
            VExpr::Arith { .. } | VExpr::Cast { .. } => true,
            VExpr::NumericToScaled { arg, .. } => matches!(**arg, VExpr::Column { .. }),
            _ => false,
        }
    }
}

/// The memoizable subexpressions that occur more than once among `roots`
/// (the value of [`EvalCtx::shared`]). Below a repeated node only its first
/// occurrence is walked: the others are served whole from the memo.
pub fn shared_subexpressions<'e>(roots: impl IntoIterator<Item = &'e VExpr>) -> Vec<VExpr> {
    fn walk<'e>(e: &'e VExpr, seen: &mut Vec<(&'e VExpr, usize)>) {
        if e.memoizable() {
            if let Some((_, n)) = seen.iter_mut().find(|(s, _)| *s == e) {
                *n += 1;
                return;
            }
            seen.push((e, 1));
        }
        e.children().into_iter().for_each(|c| walk(c, seen));
    }
    let mut seen = Vec::new();
    roots.into_iter().for_each(|e| walk(e, &mut seen));
    seen.into_iter().filter(|&(_, n)| n > 1).map(|(e, _)| e.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(index: usize) -> VExpr {
        VExpr::Column { index }
    }

    #[test]
    fn traversals_reach_every_column() {
        // CASE WHEN c0 < c1 THEN -c2 ELSE coalesce(c3, c0) END
        let mut e = VExpr::Case {
            arms: vec![(
                VExpr::Cmp {
                    op: CmpOp::Lt,
                    kind: CmpKind::Native,
                    left: Box::new(col(0)),
                    right: Box::new(col(1)),
                },
                VExpr::Neg { phys: PhysType::I32, arg: Box::new(col(2)) },
            )],
            otherwise: Some(Box::new(VExpr::Coalesce { args: vec![col(3), col(0)], phys: PhysType::I32 })),
            phys: PhysType::I32,
        };
        let mut cols = vec![];
        e.columns(&mut cols);
        assert_eq!(cols, vec![0, 1, 2, 3, 0]);
        assert_eq!(e.steps(), 4);
        e.remap_columns(&[7, 6, 5, 4]);
        cols.clear();
        e.columns(&mut cols);
        assert_eq!(cols, vec![7, 6, 5, 4, 7]);
    }
}
