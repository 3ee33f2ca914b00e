//! From a PostgreSQL expression to a vector expression (`vexec_core::expr`).
//!
//! `Compiler::compile` returns a [`VExpr`] when every node of the expression
//! has an exact kernel, and None otherwise (the caller then evaluates the whole
//! top-level expression with PostgreSQL's evaluator). Kernels are bound by
//! function OID (`kernel_for`); each binding states the argument and result
//! types it is exact for, and text kernels check the collation. A function
//! a kernel pack declares (`crate::packs`) is called through fmgr.
//!
//! Compilation runs twice per scan: at planning (to cost the path and report
//! its kernel and fallback steps) and at executor start (on the expressions as
//! setrefs left them). Both see the same expressions, so they agree.

use pgrx::pg_sys::{self, Oid};
use vexec_core::batch::PhysType;
use vexec_core::expr::kernels::like::LikePattern;
use vexec_core::expr::{
    ArithOp, BoolTestKind, CastOp, CmpKind, CmpOp, ConstSet, DateOp, FuncRef, LengthKind, VExpr,
};

use crate::pgutil::list_ptrs;
use crate::source::InputAttr;

/// The physical layout of a PostgreSQL type in a batch.
pub fn phys_of(typid: Oid) -> (PhysType, bool) {
    let (mut len, mut byval) = (0i16, false);
    // SAFETY: a catalog lookup by OID on the backend's main thread (ERRORs for an unknown type, as
    // PostgreSQL's own callers do).
    unsafe { pg_sys::get_typlenbyval(typid, &mut len, &mut byval) };
    match typid {
        pg_sys::FLOAT4OID => (PhysType::F32, false),
        pg_sys::FLOAT8OID => (PhysType::F64, false),
        pg_sys::BOOLOID => (PhysType::Bool, false),
        _ => {
            let p = PhysType::of(len, byval, false);
            (p, byval && len == 1)
        }
    }
}

/// The SQL-level family a kernel needs its operands in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Family {
    Int,
    Float,
    Date,
    Timestamp,
    Bool,
    Text,
    Bpchar,
    /// numeric, compared as scaled integers (see `Compiler::scaled`).
    Numeric,
}

fn family_of(typid: Oid) -> Option<Family> {
    Some(match typid {
        pg_sys::INT2OID | pg_sys::INT4OID | pg_sys::INT8OID => Family::Int,
        pg_sys::FLOAT4OID | pg_sys::FLOAT8OID => Family::Float,
        pg_sys::DATEOID => Family::Date,
        pg_sys::TIMESTAMPOID | pg_sys::TIMESTAMPTZOID => Family::Timestamp,
        pg_sys::BOOLOID => Family::Bool,
        pg_sys::TEXTOID | pg_sys::VARCHAROID => Family::Text,
        pg_sys::BPCHAROID => Family::Bpchar,
        pg_sys::NUMERICOID => Family::Numeric,
        _ => return None,
    })
}

fn int_phys(typid: Oid) -> Option<PhysType> {
    match typid {
        pg_sys::INT2OID => Some(PhysType::I16),
        pg_sys::INT4OID => Some(PhysType::I32),
        pg_sys::INT8OID => Some(PhysType::I64),
        _ => None,
    }
}

fn float_phys(typid: Oid) -> Option<PhysType> {
    match typid {
        pg_sys::FLOAT4OID => Some(PhysType::F32),
        pg_sys::FLOAT8OID => Some(PhysType::F64),
        _ => None,
    }
}

enum Kernel {
    Cmp(CmpOp, Family),
    /// Arithmetic; the operands are promoted to the result type first.
    Arith(ArithOp, Oid),
    Neg,
    Cast(CastOp, Oid),
    Date(DateOp),
    Like {
        negate: bool,
    },
    Length(LengthKind),
    /// numeric +, -, * (on scaled integers).
    NumericArith(ArithOp),
    NumericNeg,
    /// integer to numeric.
    NumericFromInt,
    /// numeric to an integer of this type (rounded half away from zero).
    NumericToInt(Oid),
    /// numeric(numeric, typmod): the length coercion to numeric(p, s).
    NumericTypmod,
    /// date compared with timestamp (`date_left`: the date is the left operand).
    DateTimestampCmp(CmpOp, bool),
    /// timestamp(date).
    DateToTimestamp,
}

/// The kernel bound to a function OID.
fn kernel_for(funcid: u32) -> Option<Kernel> {
    use pg_sys::*;
    use ArithOp::*;
    use CmpOp::*;
    let cmp = |op, fam| Some(Kernel::Cmp(op, fam));
    let ar = |op, t: Oid| Some(Kernel::Arith(op, t));
    match funcid {
        F_INT2EQ | F_INT4EQ | F_INT8EQ | F_INT24EQ | F_INT42EQ | F_INT28EQ | F_INT82EQ | F_INT48EQ
        | F_INT84EQ => cmp(Eq, Family::Int),
        F_INT2NE | F_INT4NE | F_INT8NE | F_INT24NE | F_INT42NE | F_INT28NE | F_INT82NE | F_INT48NE
        | F_INT84NE => cmp(Ne, Family::Int),
        F_INT2LT | F_INT4LT | F_INT8LT | F_INT24LT | F_INT42LT | F_INT28LT | F_INT82LT | F_INT48LT
        | F_INT84LT => cmp(Lt, Family::Int),
        F_INT2LE | F_INT4LE | F_INT8LE | F_INT24LE | F_INT42LE | F_INT28LE | F_INT82LE | F_INT48LE
        | F_INT84LE => cmp(Le, Family::Int),
        F_INT2GT | F_INT4GT | F_INT8GT | F_INT24GT | F_INT42GT | F_INT28GT | F_INT82GT | F_INT48GT
        | F_INT84GT => cmp(Gt, Family::Int),
        F_INT2GE | F_INT4GE | F_INT8GE | F_INT24GE | F_INT42GE | F_INT28GE | F_INT82GE | F_INT48GE
        | F_INT84GE => cmp(Ge, Family::Int),
        F_FLOAT4EQ | F_FLOAT8EQ | F_FLOAT48EQ | F_FLOAT84EQ => cmp(Eq, Family::Float),
        F_FLOAT4NE | F_FLOAT8NE | F_FLOAT48NE | F_FLOAT84NE => cmp(Ne, Family::Float),
        F_FLOAT4LT | F_FLOAT8LT | F_FLOAT48LT | F_FLOAT84LT => cmp(Lt, Family::Float),
        F_FLOAT4LE | F_FLOAT8LE | F_FLOAT48LE | F_FLOAT84LE => cmp(Le, Family::Float),
        F_FLOAT4GT | F_FLOAT8GT | F_FLOAT48GT | F_FLOAT84GT => cmp(Gt, Family::Float),
        F_FLOAT4GE | F_FLOAT8GE | F_FLOAT48GE | F_FLOAT84GE => cmp(Ge, Family::Float),
        F_DATE_EQ => cmp(Eq, Family::Date),
        F_DATE_NE => cmp(Ne, Family::Date),
        F_DATE_LT => cmp(Lt, Family::Date),
        F_DATE_LE => cmp(Le, Family::Date),
        F_DATE_GT => cmp(Gt, Family::Date),
        F_DATE_GE => cmp(Ge, Family::Date),
        F_DATE_EQ_TIMESTAMP => Some(Kernel::DateTimestampCmp(Eq, true)),
        F_DATE_NE_TIMESTAMP => Some(Kernel::DateTimestampCmp(Ne, true)),
        F_DATE_LT_TIMESTAMP => Some(Kernel::DateTimestampCmp(Lt, true)),
        F_DATE_LE_TIMESTAMP => Some(Kernel::DateTimestampCmp(Le, true)),
        F_DATE_GT_TIMESTAMP => Some(Kernel::DateTimestampCmp(Gt, true)),
        F_DATE_GE_TIMESTAMP => Some(Kernel::DateTimestampCmp(Ge, true)),
        F_TIMESTAMP_EQ_DATE => Some(Kernel::DateTimestampCmp(Eq, false)),
        F_TIMESTAMP_NE_DATE => Some(Kernel::DateTimestampCmp(Ne, false)),
        F_TIMESTAMP_LT_DATE => Some(Kernel::DateTimestampCmp(Lt, false)),
        F_TIMESTAMP_LE_DATE => Some(Kernel::DateTimestampCmp(Le, false)),
        F_TIMESTAMP_GT_DATE => Some(Kernel::DateTimestampCmp(Gt, false)),
        F_TIMESTAMP_GE_DATE => Some(Kernel::DateTimestampCmp(Ge, false)),
        F_TIMESTAMP_DATE => Some(Kernel::DateToTimestamp),
        F_TIMESTAMP_EQ | F_TIMESTAMPTZ_EQ => cmp(Eq, Family::Timestamp),
        F_TIMESTAMP_NE | F_TIMESTAMPTZ_NE => cmp(Ne, Family::Timestamp),
        F_TIMESTAMP_LT | F_TIMESTAMPTZ_LT => cmp(Lt, Family::Timestamp),
        F_TIMESTAMP_LE | F_TIMESTAMPTZ_LE => cmp(Le, Family::Timestamp),
        F_TIMESTAMP_GT | F_TIMESTAMPTZ_GT => cmp(Gt, Family::Timestamp),
        F_TIMESTAMP_GE | F_TIMESTAMPTZ_GE => cmp(Ge, Family::Timestamp),
        F_BOOLEQ => cmp(Eq, Family::Bool),
        F_BOOLNE => cmp(Ne, Family::Bool),
        F_BOOLLT => cmp(Lt, Family::Bool),
        F_BOOLLE => cmp(Le, Family::Bool),
        F_BOOLGT => cmp(Gt, Family::Bool),
        F_BOOLGE => cmp(Ge, Family::Bool),
        F_TEXTEQ => cmp(Eq, Family::Text),
        F_TEXTNE => cmp(Ne, Family::Text),
        F_TEXT_LT => cmp(Lt, Family::Text),
        F_TEXT_LE => cmp(Le, Family::Text),
        F_TEXT_GT => cmp(Gt, Family::Text),
        F_TEXT_GE => cmp(Ge, Family::Text),
        F_BPCHAREQ => cmp(Eq, Family::Bpchar),
        F_BPCHARNE => cmp(Ne, Family::Bpchar),
        F_BPCHARLT => cmp(Lt, Family::Bpchar),
        F_BPCHARLE => cmp(Le, Family::Bpchar),
        F_BPCHARGT => cmp(Gt, Family::Bpchar),
        F_BPCHARGE => cmp(Ge, Family::Bpchar),
        F_NUMERIC_EQ => cmp(Eq, Family::Numeric),
        F_NUMERIC_NE => cmp(Ne, Family::Numeric),
        F_NUMERIC_LT => cmp(Lt, Family::Numeric),
        F_NUMERIC_LE => cmp(Le, Family::Numeric),
        F_NUMERIC_GT => cmp(Gt, Family::Numeric),
        F_NUMERIC_GE => cmp(Ge, Family::Numeric),

        F_INT2PL => ar(Add, INT2OID),
        F_INT2MI => ar(Sub, INT2OID),
        F_INT2MUL => ar(Mul, INT2OID),
        F_INT2DIV => ar(Div, INT2OID),
        F_INT2MOD => ar(Mod, INT2OID),
        F_INT4PL | F_INT24PL | F_INT42PL => ar(Add, INT4OID),
        F_INT4MI | F_INT24MI | F_INT42MI => ar(Sub, INT4OID),
        F_INT4MUL | F_INT24MUL | F_INT42MUL => ar(Mul, INT4OID),
        F_INT4DIV | F_INT24DIV | F_INT42DIV => ar(Div, INT4OID),
        F_INT4MOD => ar(Mod, INT4OID),
        F_INT8PL | F_INT28PL | F_INT82PL | F_INT48PL | F_INT84PL => ar(Add, INT8OID),
        F_INT8MI | F_INT28MI | F_INT82MI | F_INT48MI | F_INT84MI => ar(Sub, INT8OID),
        F_INT8MUL | F_INT28MUL | F_INT82MUL | F_INT48MUL | F_INT84MUL => ar(Mul, INT8OID),
        F_INT8DIV | F_INT28DIV | F_INT82DIV | F_INT48DIV | F_INT84DIV => ar(Div, INT8OID),
        F_INT8MOD => ar(Mod, INT8OID),
        F_FLOAT4PL => ar(Add, FLOAT4OID),
        F_FLOAT4MI => ar(Sub, FLOAT4OID),
        F_FLOAT4MUL => ar(Mul, FLOAT4OID),
        F_FLOAT4DIV => ar(Div, FLOAT4OID),
        F_FLOAT8PL | F_FLOAT48PL | F_FLOAT84PL => ar(Add, FLOAT8OID),
        F_FLOAT8MI | F_FLOAT48MI | F_FLOAT84MI => ar(Sub, FLOAT8OID),
        F_FLOAT8MUL | F_FLOAT48MUL | F_FLOAT84MUL => ar(Mul, FLOAT8OID),
        F_FLOAT8DIV | F_FLOAT48DIV | F_FLOAT84DIV => ar(Div, FLOAT8OID),
        F_INT2UM | F_INT4UM | F_INT8UM | F_FLOAT4UM | F_FLOAT8UM => Some(Kernel::Neg),

        F_INT4_INT2 | F_INT4_INT8 => Some(Kernel::Cast(CastOp::IntToInt, INT4OID)),
        F_INT2_INT4 | F_INT2_INT8 => Some(Kernel::Cast(CastOp::IntToInt, INT2OID)),
        F_INT8_INT4 | F_INT8_INT2 => Some(Kernel::Cast(CastOp::IntToInt, INT8OID)),
        F_FLOAT8_INT2 | F_FLOAT8_INT4 | F_FLOAT8_INT8 => Some(Kernel::Cast(CastOp::IntToFloat, FLOAT8OID)),
        F_FLOAT4_INT2 | F_FLOAT4_INT4 | F_FLOAT4_INT8 => Some(Kernel::Cast(CastOp::IntToFloat, FLOAT4OID)),
        F_INT2_FLOAT4 | F_INT2_FLOAT8 => Some(Kernel::Cast(CastOp::FloatToInt, INT2OID)),
        F_INT4_FLOAT4 | F_INT4_FLOAT8 => Some(Kernel::Cast(CastOp::FloatToInt, INT4OID)),
        F_INT8_FLOAT4 | F_INT8_FLOAT8 => Some(Kernel::Cast(CastOp::FloatToInt, INT8OID)),
        F_FLOAT8_FLOAT4 => Some(Kernel::Cast(CastOp::FloatToFloat, FLOAT8OID)),
        F_FLOAT4_FLOAT8 => Some(Kernel::Cast(CastOp::FloatToFloat, FLOAT4OID)),

        F_DATE_PLI => Some(Kernel::Date(DateOp::PlusDays)),
        F_DATE_MII => Some(Kernel::Date(DateOp::MinusDays)),
        F_DATE_MI => Some(Kernel::Date(DateOp::Diff)),

        F_TEXTLIKE | F_BPCHARLIKE => Some(Kernel::Like { negate: false }),
        F_TEXTNLIKE | F_BPCHARNLIKE => Some(Kernel::Like { negate: true }),
        F_TEXTLEN | F_LENGTH_TEXT | F_CHAR_LENGTH_TEXT => Some(Kernel::Length(LengthKind::TextChars)),
        F_LENGTH_BPCHAR | F_CHAR_LENGTH_BPCHAR => Some(Kernel::Length(LengthKind::BpcharChars)),
        F_OCTET_LENGTH_TEXT | F_OCTET_LENGTH_BPCHAR => Some(Kernel::Length(LengthKind::Octets)),

        F_NUMERIC_ADD => Some(Kernel::NumericArith(Add)),
        F_NUMERIC_SUB => Some(Kernel::NumericArith(Sub)),
        F_NUMERIC_MUL => Some(Kernel::NumericArith(Mul)),
        F_NUMERIC_UMINUS => Some(Kernel::NumericNeg),
        F_NUMERIC_INT2 | F_NUMERIC_INT4 | F_NUMERIC_INT8 => Some(Kernel::NumericFromInt),
        F_INT2_NUMERIC => Some(Kernel::NumericToInt(INT2OID)),
        F_INT4_NUMERIC => Some(Kernel::NumericToInt(INT4OID)),
        F_INT8_NUMERIC => Some(Kernel::NumericToInt(INT8OID)),
        F_NUMERIC_NUMERIC_INT4 => Some(Kernel::NumericTypmod),
        _ => None,
    }
}

/// A parameter a compiled expression reads; its value is evaluated by
/// PostgreSQL once per batch.
pub struct ParamUse {
    pub param: *mut pg_sys::Param,
    pub phys: PhysType,
}

pub struct Compiler {
    /// Range table index of the scanned relation (Vars with this varno).
    scanrelid: u32,
    /// The relation's attributes a compiled expression reads.
    pub inputs: Vec<InputAttr>,
    pub params: Vec<ParamUse>,
    /// The database encoding is UTF-8 (else single-byte, or text kernels refuse).
    utf8: bool,
    single_byte: bool,
    /// The pack functions compiled expressions call (`pack: name(args)`),
    /// for EXPLAIN (VERBOSE).
    pub packs: Vec<String>,
}

/// A compiled expression and its SQL type.
struct Typed {
    e: VExpr,
    typid: Oid,
}

impl Compiler {
    pub fn new(scanrelid: u32) -> Compiler {
        // SAFETY: reads the database encoding, set for the session's lifetime.
        let enc = unsafe { pg_sys::GetDatabaseEncoding() };
        // SAFETY: as above.
        let max_len = unsafe { pg_sys::pg_database_encoding_max_length() };
        Compiler {
            scanrelid,
            inputs: Vec::new(),
            params: Vec::new(),
            utf8: enc == pg_sys::pg_enc::PG_UTF8 as i32,
            single_byte: max_len == 1,
            packs: Vec::new(),
        }
    }

    /// The batch column of attribute `attnum` (added on first use).
    pub fn input(&mut self, attnum: i16, typid: Oid) -> usize {
        if let Some(i) = self.inputs.iter().position(|a| a.attnum == attnum) {
            return i;
        }
        let (phys, is_char) = phys_of(typid);
        self.inputs.push(InputAttr { attnum, phys, is_char });
        self.inputs.len() - 1
    }

    /// Compile a whole expression; None when some node has no kernel.
    /// Inputs and params added by a failed attempt are rolled back.
    pub fn compile(&mut self, node: *mut pg_sys::Node) -> Option<VExpr> {
        let (ni, np, nk) = (self.inputs.len(), self.params.len(), self.packs.len());
        // SAFETY: callers (plan and executor code) pass a live expression node of the plan being
        // compiled.
        match unsafe { self.node(node) } {
            // SAFETY: by-reference constants point into the plan's Consts,
            // which outlive the compiled expression.
            Some(t) => Some(unsafe { vexec_core::expr::fold_constants(t.e) }),
            None => {
                self.inputs.truncate(ni);
                self.params.truncate(np);
                self.packs.truncate(nk);
                None
            }
        }
    }

    /// Compile a numeric expression to integers scaled by `10^scale`, for a
    /// consumer that takes them (VecAgg's numeric sum and avg). None when
    /// some node has no kernel. Rolled back like [`Compiler::compile`].
    pub fn compile_scaled(&mut self, node: *mut pg_sys::Node) -> Option<(VExpr, u16)> {
        let (ni, np, nk) = (self.inputs.len(), self.params.len(), self.packs.len());
        // SAFETY: as in compile.
        match unsafe { self.scaled(node) } {
            // SAFETY: as in compile.
            Some((e, scale)) => Some((unsafe { vexec_core::expr::fold_constants(e) }, scale)),
            None => {
                self.inputs.truncate(ni);
                self.params.truncate(np);
                self.packs.truncate(nk);
                None
            }
        }
    }

    /// A numeric expression as scaled integers (`VExpr::NumericToScaled`):
    /// columns of numeric(p, s) with p <= 38 (every value has display scale
    /// s: I64 for p <= 18, I128 past that), constants at their display
    /// scale, integers at scale 0, and +, -, * and negation, with
    /// numeric.c's result scales: max(s1, s2) for + and -, s1 + s2 for *.
    /// An operation on an I128 operand is done in I128. Scales stay <= 18.
    /// A result that leaves its integer sends its batch to PostgreSQL's
    /// evaluator.
    unsafe fn scaled(&mut self, node: *mut pg_sys::Node) -> Option<(VExpr, u16)> {
        // SAFETY: node is a live expression node (caller's contract).
        unsafe {
            if node.is_null() {
                return None;
            }
            match (*node).type_ {
                pg_sys::NodeTag::T_Var => {
                    let v = node as *mut pg_sys::Var;
                    if (*v).vartype != pg_sys::NUMERICOID {
                        return None;
                    }
                    let (precision, scale) = numeric_typmod((*v).vartypmod)?;
                    if precision > MAX_SCALED_PRECISION || !(0..=18).contains(&scale) {
                        return None;
                    }
                    let col = self.node(node)?;
                    let phys = scaled_width(precision);
                    Some((
                        VExpr::NumericToScaled { scale: scale as u16, phys, arg: Box::new(col.e) },
                        scale as u16,
                    ))
                }
                pg_sys::NodeTag::T_Const => {
                    let c = node as *mut pg_sys::Const;
                    if (*c).consttype != pg_sys::NUMERICOID {
                        return None;
                    }
                    if (*c).constisnull {
                        return Some((VExpr::Const { value: None, phys: PhysType::I64 }, 0));
                    }
                    let d = (*c).constvalue.value();
                    let p = pg_sys::pg_detoast_datum_packed(d as *mut pg_sys::varlena) as *const u8;
                    let payload = vexec_core::batch::varlena::bytes(p);
                    let vexec_core::numeric::Decoded::Scaled { dscale, .. } =
                        vexec_core::numeric::decode(payload)?
                    else {
                        return None;
                    };
                    let v =
                        vexec_core::numeric::decode_scaled_i64(payload, dscale).filter(|_| dscale <= 18)?;
                    Some((VExpr::Const { value: Some(v as usize), phys: PhysType::I64 }, dscale))
                }
                pg_sys::NodeTag::T_RelabelType => {
                    let r = node as *mut pg_sys::RelabelType;
                    self.scaled((*r).arg as *mut pg_sys::Node)
                }
                pg_sys::NodeTag::T_OpExpr | pg_sys::NodeTag::T_FuncExpr => {
                    let (funcid, args, retset) = if (*node).type_ == pg_sys::NodeTag::T_OpExpr {
                        let o = node as *mut pg_sys::OpExpr;
                        ((*o).opfuncid, (*o).args, (*o).opretset)
                    } else {
                        let f = node as *mut pg_sys::FuncExpr;
                        ((*f).funcid, (*f).args, (*f).funcretset)
                    };
                    if retset {
                        return None;
                    }
                    let mut it = list_ptrs::<pg_sys::Node>(args);
                    match kernel_for(funcid.into())? {
                        Kernel::NumericArith(op) => {
                            let (a, b) = (it.next()?, it.next()?);
                            let (l, r) = (self.scaled(a)?, self.scaled(b)?);
                            let (l, r, scale) = if op == ArithOp::Mul {
                                let scale = l.1 + r.1;
                                let (l, r) = same_width(l.0, r.0);
                                (l, r, scale)
                            } else {
                                align(l, r)?
                            };
                            if scale > 18 {
                                return None;
                            }
                            let e = VExpr::Arith {
                                op,
                                phys: l.phys_type_hint(),
                                left: Box::new(l),
                                right: Box::new(r),
                            };
                            Some((e, scale))
                        }
                        Kernel::NumericNeg => {
                            let (e, scale) = self.scaled(it.next()?)?;
                            Some((VExpr::Neg { phys: e.phys_type_hint(), arg: Box::new(e) }, scale))
                        }
                        Kernel::NumericFromInt => {
                            let arg = self.node(it.next()?)?;
                            Some((self.promote(arg, pg_sys::INT8OID)?, 0))
                        }
                        Kernel::NumericTypmod => {
                            // numeric(x, typmod): the typmod is a constant.
                            let (a, t) = (it.next()?, it.next()?);
                            if (*t).type_ != pg_sys::NodeTag::T_Const
                                || (*(t as *mut pg_sys::Const)).constisnull
                            {
                                return None;
                            }
                            let typmod = (*(t as *mut pg_sys::Const)).constvalue.value() as i32;
                            let (precision, to) = numeric_typmod(typmod)?;
                            if !(0..=18).contains(&to) {
                                return None; // negative scales and scales past 18: PostgreSQL's evaluator
                            }
                            if precision > MAX_SCALED_PRECISION {
                                return None;
                            }
                            let (e, from) = self.scaled(a)?;
                            let op = CastOp::Rescale { from, to: to as u16, precision: precision as u16 };
                            let width = scaled_width(precision);
                            Some((VExpr::Cast { op, to: width, arg: Box::new(e) }, to as u16))
                        }
                        _ => None,
                    }
                }
                _ => None,
            }
        }
    }

    unsafe fn node(&mut self, node: *mut pg_sys::Node) -> Option<Typed> {
        // SAFETY: node is a live expression node (caller's contract).
        unsafe {
            if node.is_null() {
                return None;
            }
            match (*node).type_ {
                pg_sys::NodeTag::T_Var => {
                    let v = node as *mut pg_sys::Var;
                    if (*v).varno as u32 != self.scanrelid || (*v).varlevelsup != 0 || (*v).varattno <= 0 {
                        return None; // system columns and whole-row references: PostgreSQL's evaluator
                    }
                    let index = self.input((*v).varattno, (*v).vartype);
                    Some(Typed { e: VExpr::Column { index }, typid: (*v).vartype })
                }
                pg_sys::NodeTag::T_Const => {
                    let c = node as *mut pg_sys::Const;
                    let (phys, _) = phys_of((*c).consttype);
                    let value = if (*c).constisnull { None } else { Some((*c).constvalue.value()) };
                    Some(Typed { e: VExpr::Const { value, phys }, typid: (*c).consttype })
                }
                pg_sys::NodeTag::T_Param => {
                    let p = node as *mut pg_sys::Param;
                    let kind = (*p).paramkind;
                    if kind != pg_sys::ParamKind::PARAM_EXTERN && kind != pg_sys::ParamKind::PARAM_EXEC {
                        return None;
                    }
                    let (phys, _) = phys_of((*p).paramtype);
                    self.params.push(ParamUse { param: p, phys });
                    Some(Typed {
                        e: VExpr::Param { index: self.params.len() - 1, phys },
                        typid: (*p).paramtype,
                    })
                }
                pg_sys::NodeTag::T_RelabelType => {
                    let r = node as *mut pg_sys::RelabelType;
                    let arg = self.node((*r).arg as *mut pg_sys::Node)?;
                    // Binary-compatible: same layout (varchar -> text, domains, ...).
                    (phys_of(arg.typid).0 == phys_of((*r).resulttype).0)
                        .then_some(Typed { e: arg.e, typid: (*r).resulttype })
                }
                pg_sys::NodeTag::T_OpExpr => {
                    let o = node as *mut pg_sys::OpExpr;
                    if (*o).opretset {
                        return None;
                    }
                    self.call((*o).opfuncid, (*o).args, (*o).inputcollid, (*o).opresulttype)
                }
                pg_sys::NodeTag::T_FuncExpr => {
                    let f = node as *mut pg_sys::FuncExpr;
                    if (*f).funcretset {
                        return None;
                    }
                    self.call((*f).funcid, (*f).args, (*f).inputcollid, (*f).funcresulttype)
                }
                pg_sys::NodeTag::T_BoolExpr => {
                    let b = node as *mut pg_sys::BoolExpr;
                    let mut args = Vec::new();
                    for a in list_ptrs::<pg_sys::Node>((*b).args) {
                        let t = self.node(a)?;
                        if t.typid != pg_sys::BOOLOID {
                            return None;
                        }
                        args.push(t.e);
                    }
                    let e = match (*b).boolop {
                        pg_sys::BoolExprType::AND_EXPR => VExpr::And(args),
                        pg_sys::BoolExprType::OR_EXPR => VExpr::Or(args),
                        _ => VExpr::Not(Box::new(args.into_iter().next()?)),
                    };
                    Some(Typed { e, typid: pg_sys::BOOLOID })
                }
                pg_sys::NodeTag::T_NullTest => {
                    let n = node as *mut pg_sys::NullTest;
                    if (*n).argisrow {
                        return None;
                    }
                    let arg = self.node((*n).arg as *mut pg_sys::Node)?;
                    let negate = (*n).nulltesttype == pg_sys::NullTestType::IS_NOT_NULL;
                    Some(Typed { e: VExpr::IsNull { arg: Box::new(arg.e), negate }, typid: pg_sys::BOOLOID })
                }
                pg_sys::NodeTag::T_BooleanTest => {
                    let b = node as *mut pg_sys::BooleanTest;
                    let arg = self.node((*b).arg as *mut pg_sys::Node)?;
                    use pg_sys::BoolTestType::*;
                    let kind = match (*b).booltesttype {
                        IS_TRUE => BoolTestKind::IsTrue,
                        IS_NOT_TRUE => BoolTestKind::IsNotTrue,
                        IS_FALSE => BoolTestKind::IsFalse,
                        IS_NOT_FALSE => BoolTestKind::IsNotFalse,
                        IS_UNKNOWN => BoolTestKind::IsUnknown,
                        _ => BoolTestKind::IsNotUnknown,
                    };
                    Some(Typed { e: VExpr::BoolTest { kind, arg: Box::new(arg.e) }, typid: pg_sys::BOOLOID })
                }
                pg_sys::NodeTag::T_DistinctExpr => {
                    // IS DISTINCT FROM: an OpExpr whose function is the equality.
                    let o = node as *mut pg_sys::DistinctExpr;
                    let Some(Kernel::Cmp(CmpOp::Eq, fam)) = kernel_for((*o).opfuncid.into()) else {
                        return None;
                    };
                    let (l, r, kind) = self.cmp_operands(fam, (*o).args, (*o).inputcollid, true)?;
                    Some(Typed {
                        e: VExpr::Distinct { kind, negate: false, left: Box::new(l), right: Box::new(r) },
                        typid: pg_sys::BOOLOID,
                    })
                }
                pg_sys::NodeTag::T_ScalarArrayOpExpr => self.in_set(node as *mut pg_sys::ScalarArrayOpExpr),
                pg_sys::NodeTag::T_CaseExpr => self.case(node as *mut pg_sys::CaseExpr),
                pg_sys::NodeTag::T_CoalesceExpr => {
                    let c = node as *mut pg_sys::CoalesceExpr;
                    let typid = (*c).coalescetype;
                    let (phys, _) = phys_of(typid);
                    let mut args = Vec::new();
                    for a in list_ptrs::<pg_sys::Node>((*c).args) {
                        let t = self.node(a)?;
                        if phys_of(t.typid).0 != phys {
                            return None;
                        }
                        args.push(t.e);
                    }
                    Some(Typed { e: VExpr::Coalesce { args, phys }, typid })
                }
                _ => None,
            }
        }
    }

    /// Promote an integer or float operand to `to`.
    fn promote(&self, t: Typed, to: Oid) -> Option<VExpr> {
        if t.typid == to {
            return Some(t.e);
        }
        let op = match (int_phys(t.typid), float_phys(t.typid), int_phys(to), float_phys(to)) {
            (Some(_), _, Some(_), _) => CastOp::IntToInt,
            (Some(_), _, _, Some(_)) => CastOp::IntToFloat,
            (_, Some(_), _, Some(_)) => CastOp::FloatToFloat,
            _ => return None,
        };
        Some(VExpr::Cast { op, to: phys_of(to).0, arg: Box::new(t.e) })
    }

    /// Compile the two operands of a comparison in family `fam`, converting
    /// them to one physical type, and check the collation for text.
    unsafe fn cmp_operands(
        &mut self,
        fam: Family,
        args: *mut pg_sys::List,
        collid: Oid,
        equality: bool,
    ) -> Option<(VExpr, VExpr, CmpKind)> {
        // SAFETY: args is the live argument list of the operator being compiled.
        unsafe {
            let mut it = list_ptrs::<pg_sys::Node>(args);
            let (a, b) = (it.next()?, it.next()?);
            if fam == Family::Numeric {
                let (l, r) = (self.scaled(a)?, self.scaled(b)?);
                let (l, r, _) = align(l, r)?;
                return Some((l, r, CmpKind::Native));
            }
            let (l, r) = (self.node(a)?, self.node(b)?);
            if family_of(l.typid) != Some(fam) || family_of(r.typid) != Some(fam) {
                return None;
            }
            match fam {
                Family::Int | Family::Float => {
                    let wide = if fam == Family::Int {
                        [pg_sys::INT2OID, pg_sys::INT4OID, pg_sys::INT8OID]
                            .into_iter()
                            .rfind(|t| *t == l.typid || *t == r.typid)?
                    } else if l.typid == pg_sys::FLOAT8OID || r.typid == pg_sys::FLOAT8OID {
                        pg_sys::FLOAT8OID
                    } else {
                        pg_sys::FLOAT4OID
                    };
                    let kind = if fam == Family::Float { CmpKind::Float } else { CmpKind::Native };
                    Some((self.promote(l, wide)?, self.promote(r, wide)?, kind))
                }
                Family::Date | Family::Timestamp | Family::Bool => Some((l.e, r.e, CmpKind::Native)),
                Family::Text | Family::Bpchar => {
                    if !collation_allows(collid, equality) {
                        return None;
                    }
                    let kind = if fam == Family::Bpchar { CmpKind::Bpchar } else { CmpKind::Text };
                    Some((l.e, r.e, kind))
                }
                Family::Numeric => unreachable!("handled above"),
            }
        }
    }

    unsafe fn call(
        &mut self,
        funcid: Oid,
        args: *mut pg_sys::List,
        collid: Oid,
        result: Oid,
    ) -> Option<Typed> {
        // SAFETY: args is the live argument list of the function being compiled.
        unsafe {
            let Some(kernel) = kernel_for(funcid.into()) else {
                return self.pack_call(funcid, args, collid, result);
            };
            let nargs = if args.is_null() { 0 } else { (*args).length };
            match kernel {
                Kernel::Cmp(op, fam) => {
                    if nargs != 2 {
                        return None;
                    }
                    let equality = matches!(op, CmpOp::Eq | CmpOp::Ne);
                    let (l, r, kind) = self.cmp_operands(fam, args, collid, equality)?;
                    Some(Typed {
                        e: VExpr::Cmp { op, kind, left: Box::new(l), right: Box::new(r) },
                        typid: pg_sys::BOOLOID,
                    })
                }
                Kernel::Arith(op, res) => {
                    let mut it = list_ptrs::<pg_sys::Node>(args);
                    let (a, b) = (it.next()?, it.next()?);
                    let (l, r) = (self.node(a)?, self.node(b)?);
                    if res != result {
                        return None;
                    }
                    let (l, r) = (self.promote(l, res)?, self.promote(r, res)?);
                    Some(Typed {
                        e: VExpr::Arith { op, phys: phys_of(res).0, left: Box::new(l), right: Box::new(r) },
                        typid: res,
                    })
                }
                Kernel::Neg => {
                    let arg = self.node(list_ptrs::<pg_sys::Node>(args).next()?)?;
                    if arg.typid != result {
                        return None;
                    }
                    Some(Typed {
                        e: VExpr::Neg { phys: phys_of(result).0, arg: Box::new(arg.e) },
                        typid: result,
                    })
                }
                Kernel::Cast(op, to) => {
                    let arg = self.node(list_ptrs::<pg_sys::Node>(args).next()?)?;
                    if to != result || (int_phys(arg.typid).is_none() && float_phys(arg.typid).is_none()) {
                        return None;
                    }
                    Some(Typed { e: VExpr::Cast { op, to: phys_of(to).0, arg: Box::new(arg.e) }, typid: to })
                }
                Kernel::Date(op) => {
                    let mut it = list_ptrs::<pg_sys::Node>(args);
                    let (a, b) = (it.next()?, it.next()?);
                    let (l, r) = (self.node(a)?, self.node(b)?);
                    let right_ok = match op {
                        DateOp::Diff => r.typid == pg_sys::DATEOID,
                        _ => r.typid == pg_sys::INT4OID,
                    };
                    if l.typid != pg_sys::DATEOID || !right_ok {
                        return None;
                    }
                    Some(Typed {
                        e: VExpr::Date { op, left: Box::new(l.e), right: Box::new(r.e) },
                        typid: result,
                    })
                }
                Kernel::Like { negate } => {
                    if !collation_allows(collid, true) || !(self.utf8 || self.single_byte) {
                        return None;
                    }
                    let mut it = list_ptrs::<pg_sys::Node>(args);
                    let (a, p) = (it.next()?, it.next()?);
                    if (*p).type_ != pg_sys::NodeTag::T_Const {
                        return None;
                    }
                    let pc = p as *mut pg_sys::Const;
                    if (*pc).constisnull {
                        return None;
                    }
                    let bytes = plain_bytes((*pc).constvalue.value())?;
                    let pattern = LikePattern::compile(&bytes, self.utf8).ok()?;
                    let arg = self.node(a)?;
                    if !matches!(family_of(arg.typid), Some(Family::Text | Family::Bpchar)) {
                        return None;
                    }
                    Some(Typed {
                        e: VExpr::Like { arg: Box::new(arg.e), pattern, negate },
                        typid: pg_sys::BOOLOID,
                    })
                }
                Kernel::Length(kind) => {
                    if !(self.utf8 || self.single_byte) {
                        return None;
                    }
                    let arg = self.node(list_ptrs::<pg_sys::Node>(args).next()?)?;
                    if !matches!(family_of(arg.typid), Some(Family::Text | Family::Bpchar)) {
                        return None;
                    }
                    // In a single-byte encoding a character is a byte.
                    let kind = match kind {
                        LengthKind::TextChars if self.single_byte => LengthKind::Octets,
                        LengthKind::BpcharChars if self.single_byte => return None,
                        k => k,
                    };
                    Some(Typed { e: VExpr::Length { kind, arg: Box::new(arg.e) }, typid: pg_sys::INT4OID })
                }
                Kernel::DateTimestampCmp(op, date_left) => {
                    let mut it = list_ptrs::<pg_sys::Node>(args);
                    let (a, b) = (self.node(it.next()?)?, self.node(it.next()?)?);
                    let (d, t) = if date_left { (a, b) } else { (b, a) };
                    if d.typid != pg_sys::DATEOID || t.typid != pg_sys::TIMESTAMPOID {
                        return None;
                    }
                    let d = VExpr::Cast {
                        op: CastOp::DateToTimestampForCmp,
                        to: PhysType::I64,
                        arg: Box::new(d.e),
                    };
                    let (l, r) = if date_left { (d, t.e) } else { (t.e, d) };
                    Some(Typed {
                        e: VExpr::Cmp { op, kind: CmpKind::Native, left: Box::new(l), right: Box::new(r) },
                        typid: pg_sys::BOOLOID,
                    })
                }
                Kernel::DateToTimestamp => {
                    let arg = self.node(list_ptrs::<pg_sys::Node>(args).next()?)?;
                    if arg.typid != pg_sys::DATEOID || result != pg_sys::TIMESTAMPOID {
                        return None;
                    }
                    Some(Typed {
                        e: VExpr::Cast {
                            op: CastOp::DateToTimestamp,
                            to: PhysType::I64,
                            arg: Box::new(arg.e),
                        },
                        typid: pg_sys::TIMESTAMPOID,
                    })
                }
                Kernel::NumericToInt(to) => {
                    if to != result {
                        return None;
                    }
                    let (e, scale) = self.scaled(list_ptrs::<pg_sys::Node>(args).next()?)?;
                    Some(Typed {
                        e: VExpr::Cast {
                            op: CastOp::ScaledToInt { scale },
                            to: phys_of(to).0,
                            arg: Box::new(e),
                        },
                        typid: to,
                    })
                }
                // A numeric result is a scaled integer, not a numeric Datum:
                // only comparisons (and consumers that ask, `compile_scaled`) take it.
                Kernel::NumericArith(_)
                | Kernel::NumericNeg
                | Kernel::NumericFromInt
                | Kernel::NumericTypmod => None,
            }
        }
    }

    /// A function a kernel pack declares (`crate::packs`), called through
    /// fmgr a batch's rows at a time: its results are its own.
    unsafe fn pack_call(
        &mut self,
        funcid: Oid,
        args: *mut pg_sys::List,
        collid: Oid,
        result: Oid,
    ) -> Option<Typed> {
        let bound = crate::packs::lookup(funcid)?;
        let mut vargs = Vec::new();
        // SAFETY: args is the live argument list of the function being compiled.
        for a in unsafe { list_ptrs::<pg_sys::Node>(args) } {
            // SAFETY: a live argument node.
            let t = unsafe { self.node(a) }?;
            // The argument goes to the function as a Datum of its own type
            // (the parser coerced it to the declared one).
            if t.e.phys_type_hint() == PhysType::I128 {
                return None;
            }
            vargs.push(t.e);
        }
        if vargs.len() > crate::shim::CALL_MAX_ARGS {
            return None;
        }
        let label = bound.label();
        if !self.packs.contains(&label) {
            self.packs.push(label);
        }
        Some(Typed {
            e: VExpr::Call {
                func: FuncRef { oid: funcid.into(), collation: collid.into(), native: bound.native },
                args: vargs,
                phys: phys_of(result).0,
            },
            typid: result,
        })
    }

    /// `x = ANY(const array)` and `x <> ALL(const array)`.
    unsafe fn in_set(&mut self, s: *mut pg_sys::ScalarArrayOpExpr) -> Option<Typed> {
        // SAFETY: s is a live ScalarArrayOpExpr of the plan.
        unsafe {
            let (op, fam) = match kernel_for((*s).opfuncid.into())? {
                Kernel::Cmp(_, Family::Numeric) => return None,
                Kernel::Cmp(op, fam) => (op, fam),
                _ => return None,
            };
            let negate = match (op, (*s).useOr) {
                (CmpOp::Eq, true) => false,
                (CmpOp::Ne, false) => true,
                _ => return None,
            };
            let mut it = list_ptrs::<pg_sys::Node>((*s).args);
            let (a, arr) = (it.next()?, it.next()?);
            if (*arr).type_ != pg_sys::NodeTag::T_Const {
                return None;
            }
            let c = arr as *mut pg_sys::Const;
            if (*c).constisnull {
                return None;
            }
            let arg = self.node(a)?;
            let elem = pg_sys::get_element_type((*c).consttype);
            if family_of(arg.typid) != Some(fam) || family_of(elem) != Some(fam) {
                return None;
            }
            if matches!(fam, Family::Text | Family::Bpchar) && !collation_allows((*s).inputcollid, true) {
                return None;
            }
            let (datums, nulls) = deconstruct(pg_sys::pg_detoast_datum((*c).constvalue.cast_mut_ptr()), elem);
            let has_null = nulls.iter().any(|&n| n);
            let empty = datums.is_empty();
            let values: Vec<usize> =
                datums.iter().zip(&nulls).filter(|(_, n)| !**n).map(|(d, _)| *d).collect();
            let (set, kind, arg_e) = match fam {
                Family::Int | Family::Date | Family::Timestamp | Family::Bool => {
                    // Compare as int64; the argument keeps its own width.
                    let conv = |d: usize| -> i64 {
                        match phys_of(elem).0 {
                            PhysType::I16 => d as i16 as i64,
                            PhysType::I32 => d as i32 as i64,
                            PhysType::Bool => (d != 0) as i64,
                            _ => d as i64,
                        }
                    };
                    let mut v: Vec<i64> = values.iter().map(|&d| conv(d)).collect();
                    v.sort_unstable();
                    v.dedup();
                    (ConstSet::Ints(v), CmpKind::Native, arg.e)
                }
                Family::Float => {
                    let v = values
                        .iter()
                        .map(|&d| {
                            if elem == pg_sys::FLOAT4OID {
                                f32::from_bits(d as u32) as f64
                            } else {
                                f64::from_bits(d as u64)
                            }
                        })
                        .collect();
                    let arg_e = self.promote(arg, pg_sys::FLOAT8OID)?;
                    (ConstSet::Floats(v), CmpKind::Float, arg_e)
                }
                Family::Text | Family::Bpchar => {
                    let mut v = Vec::new();
                    for &d in &values {
                        let b = plain_bytes(d)?;
                        v.push(if fam == Family::Bpchar {
                            vexec_core::expr::kernels::cmp::trim_blanks(&b).to_vec()
                        } else {
                            b
                        });
                    }
                    let kind = if fam == Family::Bpchar { CmpKind::Bpchar } else { CmpKind::Text };
                    (ConstSet::Bytes(v), kind, arg.e)
                }
                Family::Numeric => return None,
            };
            Some(Typed {
                e: VExpr::InSet { arg: Box::new(arg_e), set, kind, has_null, empty, negate },
                typid: pg_sys::BOOLOID,
            })
        }
    }

    unsafe fn case(&mut self, c: *mut pg_sys::CaseExpr) -> Option<Typed> {
        // SAFETY: c is a live CaseExpr of the plan.
        unsafe {
            if !(*c).arg.is_null() {
                return None; // CASE x WHEN ...: PostgreSQL's evaluator
            }
            let typid = (*c).casetype;
            let (phys, _) = phys_of(typid);
            let mut arms = Vec::new();
            for w in list_ptrs::<pg_sys::CaseWhen>((*c).args) {
                let cond = self.node((*w).expr as *mut pg_sys::Node)?;
                let res = self.node((*w).result as *mut pg_sys::Node)?;
                if cond.typid != pg_sys::BOOLOID || phys_of(res.typid).0 != phys {
                    return None;
                }
                arms.push((cond.e, res.e));
            }
            let otherwise = if (*c).defresult.is_null() {
                None
            } else {
                let d = self.node((*c).defresult as *mut pg_sys::Node)?;
                if phys_of(d.typid).0 != phys {
                    return None;
                }
                Some(Box::new(d.e))
            };
            Some(Typed { e: VExpr::Case { arms, otherwise, phys }, typid })
        }
    }
}

/// Two scaled numerics brought to the larger of their scales (the result
/// scale of numeric + and -) and to one width: the other is multiplied by a
/// power of ten, which reports an overflow like any integer product.
fn align(l: (VExpr, u16), r: (VExpr, u16)) -> Option<(VExpr, VExpr, u16)> {
    let scale = l.1.max(r.1);
    let (le, re) = same_width(l.0, r.0);
    let phys = le.phys_type_hint();
    let up = |e: VExpr, s: u16| {
        if s == scale {
            return Some(e);
        }
        let factor = 10i64.checked_pow((scale - s) as u32)?;
        Some(VExpr::Arith {
            op: ArithOp::Mul,
            phys,
            left: Box::new(e),
            right: Box::new(VExpr::Const { value: Some(factor as usize), phys }),
        })
    };
    Some((up(le, l.1)?, up(re, r.1)?, scale))
}

/// The integer width of the scaled values of numeric(precision, s).
fn scaled_width(precision: i32) -> PhysType {
    if precision <= 18 {
        PhysType::I64
    } else {
        PhysType::I128
    }
}

/// Two scaled numerics at one width: an I64 operand of an I128 one is
/// widened (exactly).
fn same_width(l: VExpr, r: VExpr) -> (VExpr, VExpr) {
    let widen = |e: VExpr| match e.phys_type_hint() {
        PhysType::I128 => e,
        _ => VExpr::Cast { op: CastOp::IntToInt, to: PhysType::I128, arg: Box::new(e) },
    };
    match (l.phys_type_hint(), r.phys_type_hint()) {
        (PhysType::I128, PhysType::I128) | (PhysType::I64, PhysType::I64) => (l, r),
        _ => (widen(l), widen(r)),
    }
}

/// The widest numeric(p, s) read as scaled integers: p <= 18 as i64,
/// p <= 38 as i128 (every value of such a column fits).
const MAX_SCALED_PRECISION: i32 = 38;

/// The (precision, scale) of a numeric typmod (numeric.c's
/// `NUMERIC_TYPMOD_PRECISION`/`_SCALE`; the scale is an 11-bit signed
/// field), None without one.
pub fn numeric_typmod(typmod: i32) -> Option<(i32, i32)> {
    let t = typmod.checked_sub(pg_sys::VARHDRSZ as i32).filter(|_| typmod >= pg_sys::VARHDRSZ as i32)?;
    Some(((t >> 16) & 0xffff, ((t & 0x7ff) ^ 1024) - 1024))
}

/// Whether bytewise text kernels are exact under collation `collid`:
/// equality needs a deterministic collation, ordering the C collation.
pub fn collation_allows(collid: Oid, equality: bool) -> bool {
    if collid == pg_sys::InvalidOid {
        return false;
    }
    // SAFETY: collid is a valid collation OID (checked above); the locale cache lives for the
    // session.
    unsafe {
        let loc = pg_sys::pg_newlocale_from_collation(collid);
        if loc.is_null() {
            return false;
        }
        if equality {
            (*loc).deterministic
        } else {
            (*loc).collate_is_c
        }
    }
}

/// The payload of a text constant (detoasted).
unsafe fn plain_bytes(d: usize) -> Option<Vec<u8>> {
    // SAFETY: d is a non-NULL varlena Datum of a plan Const (caller's contract); a detoasted copy
    // is palloc'd in the current context.
    unsafe {
        let p = pg_sys::pg_detoast_datum_packed(d as *mut pg_sys::varlena) as *const u8;
        vexec_core::batch::varlena::is_plain(p).then(|| vexec_core::batch::varlena::bytes(p).to_vec())
    }
}

/// The elements of an array constant.
unsafe fn deconstruct(arr: *mut pg_sys::varlena, elem: Oid) -> (Vec<usize>, Vec<bool>) {
    // SAFETY: arr is a non-NULL array Datum of a plan Const whose element type is elem (caller's
    // contract).
    unsafe {
        let (mut len, mut byval, mut align) = (0i16, false, 0 as std::ffi::c_char);
        pg_sys::get_typlenbyvalalign(elem, &mut len, &mut byval, &mut align);
        let (mut datums, mut nulls, mut n) = (std::ptr::null_mut(), std::ptr::null_mut(), 0);
        pg_sys::deconstruct_array(
            arr as *mut pg_sys::ArrayType,
            elem,
            len as i32,
            byval,
            align,
            &mut datums,
            &mut nulls,
            &mut n,
        );
        let d = (0..n as usize).map(|i| (*datums.add(i)).value()).collect();
        let nl = (0..n as usize).map(|i| !nulls.is_null() && *nulls.add(i)).collect();
        (d, nl)
    }
}

#[cfg(any(test, feature = "pg_test"))]
#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;

    /// vexec_core's list of kernel functions (the oracle code without a
    /// catalog uses, such as orca_bridge) is exactly what `kernel_for` binds.
    #[pg_test]
    fn kernel_function_list_is_kernel_for() {
        let bound: Vec<u32> =
            (1..pgrx::pg_sys::FirstGenbkiObjectId).filter(|&f| super::kernel_for(f).is_some()).collect();
        let listed: Vec<u32> =
            vexec_core::expr::kernel_functions::KERNEL_FUNCTIONS.iter().map(|&(o, _)| o).collect();
        assert_eq!(bound, listed);
    }
}
