//! Aggregates without a vector transition, run inside VecAgg through fmgr:
//! the aggregate's own transition function per row (in row order, per
//! group) and its final function per group, with nodeAgg.c's rules:
//!
//! - the state starts as the initial value (pg_aggregate.agginitval, read
//!   by the state type's input function), or NULL without one;
//! - a strict transition function skips rows with a NULL argument; with a
//!   NULL initial value the first non-NULL argument becomes the state; a
//!   NULL state it returned stays NULL;
//! - a by-reference state the function returns is copied into the states'
//!   memory and the old one freed (PostgreSQL's ExecAggCopyTransValue);
//! - a strict final function gives NULL for a NULL state; final functions
//!   with FINALFUNC_EXTRA get NULL extra arguments.
//!
//! Functions written in C get a stand-in for PostgreSQL's Agg node as their
//! call context, answering the whole interface nodeAgg.c offers aggregate
//! support functions: AggCheckCallContext (the states' memory context, where
//! `internal` states are built), AggGetAggref (the Aggref), AggGetTempMemoryContext
//! (a context reset after each batch), AggStateIsShared (false: no two
//! VecAgg aggregates share a state) and AggRegisterCallback (callbacks run
//! when the states are dropped: a new spilled partition, a rescan, the
//! node's end; not on ERROR, as in PostgreSQL). SQL and PL functions get no
//! context. Polymorphic functions see their resolved types through fn_expr,
//! built as nodeAgg.c builds it. A state a function returns as a read-write
//! expanded object in the states' memory is kept as it is, and handed to
//! the final function read-only (ExecAggCopyTransValue's rules).
//!
//! Parallel (a Partial VecAgg below Gather, a Finalize above it), as
//! nodeAgg.c splits an aggregate: the Partial runs the transitions and
//! gives each group's state instead of the final result, through the
//! aggregate's serialization function for an `internal` state, else as the
//! state's own bytes (vexec_core::agg::state_bytes); the Finalize reads
//! those back (deserialization function, strict ones skipping NULLs) and
//! folds them into its states with the combine function under the same
//! rules as a transition, then runs the final function.
//!
//! Calls go through fmgr inside one guarded region per batch (no Rust value
//! with a destructor lives in it, so an ERROR's longjmp skips nothing that
//! needs dropping), in the caller's per-batch memory; the states live in a
//! memory context of their own under the query's, reset for each spilled
//! partition and freed with the query.

use std::ptr;

use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::agg::distinct_rows::{ArgValue, ByteOrder, DistinctRows};
use vexec_core::agg::state_bytes::StateForm;
use vexec_core::agg::KeyKind;
use vexec_core::batch::{Column, RowIdx};

use crate::nodes::AggSplit;
use crate::pgutil::list_ptrs;
use crate::shim::guarded;

#[derive(Clone, Copy)]
struct GroupState {
    value: usize,
    isnull: bool,
    /// No value yet (strict transition, NULL initial value).
    no_value: bool,
}

pub struct FmgrAgg {
    nargs: usize,
    trans_fcinfo: *mut pg_sys::FunctionCallInfoBaseData,
    trans_strict: bool,
    trans_byval: bool,
    trans_len: i16,
    /// The initial value (in `cxt`), None for NULL.
    init: Option<usize>,
    /// The final function's call and whether it is strict.
    final_fn: Option<(*mut pg_sys::FunctionCallInfoBaseData, bool)>,
    cxt: pg_sys::MemoryContext,
    states: Vec<GroupState>,
    split: AggSplit,
    /// Partial: the serialization function of an `internal` state.
    serial_fn: Option<*mut pg_sys::FunctionCallInfoBaseData>,
    /// Finalize: the deserialization function of an `internal` state and
    /// whether it is strict.
    deserial_fn: Option<(*mut pg_sys::FunctionCallInfoBaseData, bool)>,
    /// How an SQL state travels as bytes (None: `internal`).
    form: Option<StateForm>,
    /// The Agg node C functions are given (None when none is C).
    stand_in: Option<StandIn>,
    /// A DISTINCT aggregate's argument rows, fed once the input is read.
    distinct: Option<DistinctFeed>,
}

/// The distinct argument rows of a DISTINCT aggregate (vexec_core's
/// DistinctRows) and how they become arguments again.
struct DistinctFeed {
    rows: DistinctRows,
    /// Per argument: its kind and, for text under a collation other than C,
    /// the collation that orders it.
    args: Vec<(KeyKind, Option<pg_sys::Oid>)>,
    /// Where the fed arguments are built (reset after each chunk).
    cxt: pg_sys::MemoryContext,
}

/// A FunctionCallInfo for `nargs` arguments of function `fnoid`, with
/// `expr` as its fn_expr (for polymorphic argument types), in `cxt`.
unsafe fn call_info(
    fnoid: pg_sys::Oid,
    expr: *mut pg_sys::Expr,
    nargs: usize,
    collation: pg_sys::Oid,
    cxt: pg_sys::MemoryContext,
) -> *mut pg_sys::FunctionCallInfoBaseData {
    // SAFETY: fnoid names a function (the catalog gave it) and cxt is a live memory context;
    // fmgr_info_cxt may ERROR, which is fine on the backend's main thread inside the executor's
    // guarded callbacks.
    unsafe {
        let flinfo = pg_sys::MemoryContextAllocZero(cxt, std::mem::size_of::<pg_sys::FmgrInfo>())
            as *mut pg_sys::FmgrInfo;
        pg_sys::fmgr_info_cxt(fnoid, flinfo, cxt);
        (*flinfo).fn_expr = expr.cast();
        let size = std::mem::size_of::<pg_sys::FunctionCallInfoBaseData>()
            + nargs * std::mem::size_of::<pg_sys::NullableDatum>();
        let fcinfo = pg_sys::MemoryContextAllocZero(cxt, size) as *mut pg_sys::FunctionCallInfoBaseData;
        (*fcinfo).flinfo = flinfo;
        (*fcinfo).context = ptr::null_mut();
        (*fcinfo).resultinfo = ptr::null_mut();
        (*fcinfo).fncollation = collation;
        (*fcinfo).nargs = nargs as i16;
        fcinfo
    }
}

/// A stand-in for PostgreSQL's Agg node (see the module's comment),
/// allocated in `query_cxt`.
struct StandIn {
    agg: *mut pg_sys::AggState,
    /// curaggcontext: its per-tuple memory holds the states, its callbacks
    /// are the ones AggRegisterCallback registered.
    aggcontext: *mut pg_sys::ExprContext,
    /// AggGetTempMemoryContext's context.
    temp: pg_sys::MemoryContext,
    /// curperagg while a final or serialization function runs.
    peragg: *mut pg_sys::AggStatePerAggData,
}

impl StandIn {
    unsafe fn new(
        aggref: *mut pg_sys::Aggref,
        states: pg_sys::MemoryContext,
        query_cxt: pg_sys::MemoryContext,
    ) -> StandIn {
        // SAFETY: aggref is the plan's Aggref and both contexts are live for the query; the
        // stand-in AggState is zeroed memory in query_cxt that only the fields nodeAgg.c's support
        // functions read are set on.
        unsafe {
            let zeroed = |size: usize| pg_sys::MemoryContextAllocZero(query_cxt, size);
            let expr_context = |per_tuple: pg_sys::MemoryContext| {
                let e = zeroed(std::mem::size_of::<pg_sys::ExprContext>()) as *mut pg_sys::ExprContext;
                (*e).type_ = pg_sys::NodeTag::T_ExprContext;
                (*e).ecxt_per_tuple_memory = per_tuple;
                // (RegisterExprContextCallback allocates here)
                (*e).ecxt_per_query_memory = query_cxt;
                e
            };
            let temp = pg_sys::AllocSetContextCreateInternal(
                query_cxt,
                c"VecAgg fmgr temporary".as_ptr(),
                0,
                8 * 1024,
                8 * 1024 * 1024,
            );
            let aggcontext = expr_context(states);
            let pertrans = zeroed(std::mem::size_of::<pg_sys::AggStatePerTransData>())
                as *mut pg_sys::AggStatePerTransData;
            (*pertrans).aggref = aggref;
            let peragg =
                zeroed(std::mem::size_of::<pg_sys::AggStatePerAggData>()) as *mut pg_sys::AggStatePerAggData;
            (*peragg).aggref = aggref;
            (*peragg).transno = 0;
            let agg = zeroed(std::mem::size_of::<pg_sys::AggState>()) as *mut pg_sys::AggState;
            (*agg).ss.ps.type_ = pg_sys::NodeTag::T_AggState;
            (*agg).curaggcontext = aggcontext;
            (*agg).tmpcontext = expr_context(temp);
            (*agg).numaggs = 1;
            (*agg).numtrans = 1;
            (*agg).pertrans = pertrans;
            (*agg).curpertrans = pertrans;
            StandIn { agg, aggcontext, temp, peragg }
        }
    }

    /// Run the registered callbacks and drop the states (ReScanExprContext,
    /// as nodeAgg.c does to its aggregate contexts).
    unsafe fn reset_states(&self) {
        // SAFETY: aggcontext was made by StandIn::new and lives as long as self.
        unsafe { pg_sys::ReScanExprContext(self.aggcontext) };
    }
}

/// Whether `d` (of a type of length `len`) is a read-write expanded object.
unsafe fn is_rw_expanded(d: usize, len: i16) -> bool {
    // VARATT_IS_EXTERNAL_EXPANDED_RW: a 1-byte external header, tag 3.
    // SAFETY: d is a non-null Datum of a varlena type (len == -1), so its first two header bytes
    // are readable.
    len == -1 && d != 0 && unsafe { *(d as *const u8) == 0x01 && *(d as *const u8).add(1) == 3 }
}

/// The state to keep after a transition returned `new` in place of `old`
/// (by-reference states), as ExecAggCopyTransValue decides: `new` itself
/// when it is a read-write expanded object already living in `cxt`, else a
/// copy in `cxt`; `old` is freed.
unsafe fn adopt_state(
    new: usize,
    new_null: bool,
    old: usize,
    old_null: bool,
    len: i16,
    cxt: pg_sys::MemoryContext,
) -> usize {
    // SAFETY: new and old are states of this aggregate's type (caller's contract), cxt is the
    // states' live context.
    unsafe {
        let value = if new_null {
            0
        } else if is_rw_expanded(new, len)
            && (*(*pg_sys::DatumGetEOHP(pg_sys::Datum::from(new))).eoh_context).parent == cxt
        {
            new
        } else {
            let old_cxt = pg_sys::MemoryContextSwitchTo(cxt);
            let c = pg_sys::datumCopy(pg_sys::Datum::from(new), false, len as i32);
            pg_sys::MemoryContextSwitchTo(old_cxt);
            c.value()
        };
        if !old_null {
            if is_rw_expanded(old, len) {
                pg_sys::DeleteExpandedObject(pg_sys::Datum::from(old));
            } else {
                pg_sys::pfree(old as *mut std::ffi::c_void);
            }
        }
        value
    }
}

/// A state as a final function or the output sees it: read-only when it is
/// a read-write expanded object.
unsafe fn read_only(d: usize, len: i16) -> usize {
    // SAFETY: d is a state of a type of length len (caller's contract).
    unsafe {
        if is_rw_expanded(d, len) {
            pg_sys::MakeExpandedObjectReadOnlyInternal(pg_sys::Datum::from(d)).value()
        } else {
            d
        }
    }
}

/// Call the function of `fcinfo` (its arguments set): the result and whether it is NULL.
#[inline]
unsafe fn invoke(fcinfo: *mut pg_sys::FunctionCallInfoBaseData) -> (usize, bool) {
    // SAFETY: fcinfo was built by call_info with its function resolved and its arguments set by the
    // caller; an ERROR in the function unwinds through the caller's guard.
    unsafe {
        (*fcinfo).isnull = false;
        let f = (*(*fcinfo).flinfo).fn_addr.expect("a resolved function");
        let d = f(fcinfo);
        (d.value(), (*fcinfo).isnull)
    }
}

impl FmgrAgg {
    /// The functions of `aggref` for its part `split` of the aggregation
    /// (transition or combine, final, (de)serialization), looked up and
    /// prepared in `query_cxt`.
    ///
    /// # Safety
    /// `aggref` is an Aggref the planner accepted for fmgr (see
    /// plan/agg.rs, `fmgr_transition`, and `fmgr_combines` for a split).
    pub unsafe fn new(
        aggref: *mut pg_sys::Aggref,
        query_cxt: pg_sys::MemoryContext,
        split: AggSplit,
    ) -> FmgrAgg {
        // SAFETY: aggref is an Aggref the planner accepted for fmgr (this function's contract); the
        // catalog calls and fmgr_info run on the backend's main thread.
        unsafe {
            let a = &*aggref;
            let funcs = crate::catalog::aggregate_functions(a.aggfnoid).expect("a pg_aggregate entry");
            let mut input_types: Vec<pg_sys::Oid> = if a.aggargtypes.is_null() {
                vec![]
            } else {
                (0..(*a.aggargtypes).length as usize)
                    .map(|i| (*(*a.aggargtypes).elements.add(i)).oid_value)
                    .collect()
            };
            let transtype = a.aggtranstype;
            let (mut len, mut byval) = (0i16, false);
            pg_sys::get_typlenbyval(transtype, &mut len, &mut byval);
            let internal = transtype == pg_sys::INTERNALOID;

            let old = pg_sys::MemoryContextSwitchTo(query_cxt);
            // A Finalize's "transition" is the combine function, whose one
            // input is a partial state (nodeAgg.c builds its expression
            // the same way).
            let (fnoid, nargs, mut arg_types) = match split {
                AggSplit::Finalize => (funcs.combinefn, 1, vec![transtype]),
                _ => (funcs.transfn, input_types.len(), input_types.clone()),
            };
            let (mut transexpr, mut invexpr) = (ptr::null_mut(), ptr::null_mut());
            pg_sys::build_aggregate_transfn_expr(
                arg_types.as_mut_ptr(),
                nargs as i32,
                0,
                a.aggvariadic && split != AggSplit::Finalize,
                transtype,
                a.inputcollid,
                fnoid,
                pg_sys::InvalidOid,
                &mut transexpr,
                &mut invexpr,
            );
            let trans_fcinfo = call_info(fnoid, transexpr, nargs + 1, a.inputcollid, query_cxt);
            let trans_strict = (*(*trans_fcinfo).flinfo).fn_strict;
            let final_fn = (funcs.finalfn != pg_sys::InvalidOid && split != AggSplit::Partial).then(|| {
                let final_nargs = if funcs.final_extra { input_types.len() + 1 } else { 1 };
                let mut finalexpr = ptr::null_mut();
                pg_sys::build_aggregate_finalfn_expr(
                    input_types.as_mut_ptr(),
                    final_nargs as i32,
                    transtype,
                    a.aggtype,
                    a.inputcollid,
                    funcs.finalfn,
                    &mut finalexpr,
                );
                let fc = call_info(funcs.finalfn, finalexpr, final_nargs, a.inputcollid, query_cxt);
                (fc, (*(*fc).flinfo).fn_strict)
            });
            let serial_fn = (internal && split == AggSplit::Partial).then(|| {
                let mut expr = ptr::null_mut();
                pg_sys::build_aggregate_serialfn_expr(funcs.serialfn, &mut expr);
                call_info(funcs.serialfn, expr, 1, pg_sys::InvalidOid, query_cxt)
            });
            let deserial_fn = (internal && split == AggSplit::Finalize).then(|| {
                let mut expr = ptr::null_mut();
                pg_sys::build_aggregate_deserialfn_expr(funcs.deserialfn, &mut expr);
                let fc = call_info(funcs.deserialfn, expr, 2, pg_sys::InvalidOid, query_cxt);
                (fc, (*(*fc).flinfo).fn_strict)
            });
            pg_sys::MemoryContextSwitchTo(old);

            let cxt = pg_sys::AllocSetContextCreateInternal(
                query_cxt,
                c"VecAgg fmgr states".as_ptr(),
                0,
                8 * 1024,
                8 * 1024 * 1024,
            );
            let calls = [Some(trans_fcinfo), final_fn.map(|f| f.0), serial_fn, deserial_fn.map(|f| f.0)];
            let in_c = |fc: &*mut pg_sys::FunctionCallInfoBaseData| {
                crate::catalog::is_c_function((*(**fc).flinfo).fn_oid)
            };
            let stand_in = calls.iter().flatten().any(in_c).then(|| StandIn::new(aggref, cxt, query_cxt));
            if let Some(s) = &stand_in {
                for fc in calls.iter().flatten().filter(|fc| in_c(fc)) {
                    (**fc).context = s.agg.cast();
                }
            }
            let init = funcs.initval.map(|text| {
                let (mut input, mut ioparam) = (pg_sys::InvalidOid, pg_sys::InvalidOid);
                pg_sys::getTypeInputInfo(transtype, &mut input, &mut ioparam);
                let c = std::ffi::CString::new(text).expect("an initial value without NUL");
                let old = pg_sys::MemoryContextSwitchTo(query_cxt);
                let d = pg_sys::OidInputFunctionCall(input, c.as_ptr().cast_mut(), ioparam, -1);
                pg_sys::MemoryContextSwitchTo(old);
                d.value()
            });
            let distinct = (!a.aggdistinct.is_null()).then(|| {
                let typmods =
                    list_ptrs::<pg_sys::TargetEntry>(a.args).map(|te| pg_sys::exprTypmod((*te).expr.cast()));
                let args: Vec<(KeyKind, Option<pg_sys::Oid>)> = input_types
                    .iter()
                    .zip(typmods)
                    .map(|(&t, typmod)| {
                        let kind = crate::catalog::distinct_arg_kind(t, a.inputcollid, typmod)
                            .expect("the planner checked the DISTINCT argument types");
                        let by_collation = matches!(kind, KeyKind::Bytes | KeyKind::Bpchar)
                            && t != pg_sys::BYTEAOID
                            && !crate::expr::compile::collation_allows(a.inputcollid, false);
                        (kind, by_collation.then_some(a.inputcollid))
                    })
                    .collect();
                let kinds: Vec<KeyKind> = args.iter().map(|a| a.0).collect();
                DistinctFeed {
                    rows: DistinctRows::new(&kinds),
                    args,
                    cxt: pg_sys::AllocSetContextCreateInternal(
                        query_cxt,
                        c"VecAgg fmgr DISTINCT".as_ptr(),
                        0,
                        8 * 1024,
                        8 * 1024 * 1024,
                    ),
                }
            });
            FmgrAgg {
                nargs,
                trans_fcinfo,
                trans_strict,
                trans_byval: byval,
                trans_len: len,
                init,
                final_fn,
                cxt,
                states: Vec::new(),
                split,
                serial_fn,
                deserial_fn,
                form: if internal { None } else { StateForm::of(byval, len) },
                stand_in,
                distinct,
            }
        }
    }

    /// Make room for groups `0..n`, new ones at the initial value.
    pub fn ensure_groups(&mut self, n: usize) {
        self.ensure_groups_in(n, 0);
    }

    /// As [`FmgrAgg::ensure_groups`], growing the state vector to exactly
    /// `room` groups when it must grow (see `Accumulator::ensure_groups_in`).
    pub fn ensure_groups_in(&mut self, n: usize, room: usize) {
        if n > self.states.capacity() && room >= n {
            self.states.reserve_exact(room - self.states.len());
        }
        while self.states.len() < n {
            let st = match self.init {
                None => GroupState { value: 0, isnull: true, no_value: true },
                Some(d) => GroupState { value: self.copy(d), isnull: false, no_value: false },
            };
            self.states.push(st);
        }
    }

    /// A by-reference value copied into the states' memory.
    fn copy(&self, d: usize) -> usize {
        if self.trans_byval {
            return d;
        }
        // SAFETY: self.cxt is the states' live context; d is a by-reference value of the transition
        // type (trans_len), as datumCopy requires.
        unsafe {
            let old = pg_sys::MemoryContextSwitchTo(self.cxt);
            let c = pg_sys::datumCopy(pg_sys::Datum::from(d), false, self.trans_len as i32);
            pg_sys::MemoryContextSwitchTo(old);
            c.value()
        }
    }

    /// Whether this is a DISTINCT aggregate (its argument bytes are kept).
    pub fn is_distinct(&self) -> bool {
        self.distinct.is_some()
    }

    /// A DISTINCT aggregate's input is read: feed every group's distinct
    /// argument rows to the transition, in PostgreSQL's order.
    pub unsafe fn finish_distinct(&mut self) {
        let Some(d) = self.distinct.take() else { return };
        // SAFETY: the collected rows' Datums were copied into d's context, which lives until the
        // rows are fed; the functions and collations came from the catalog.
        unsafe {
            let orders: Vec<Box<dyn Fn(&[u8], &[u8]) -> std::cmp::Ordering>> = d
                .args
                .iter()
                .map(|&(kind, coll)| -> Box<dyn Fn(&[u8], &[u8]) -> std::cmp::Ordering> {
                    // bpcharcmp: without the trailing blanks.
                    let trim = move |b: &[u8]| -> usize {
                        if kind == KeyKind::Bpchar {
                            vexec_core::expr::kernels::cmp::trim_blanks(b).len()
                        } else {
                            b.len()
                        }
                    };
                    match coll {
                        // By value (numeric_cmp); the table only holds
                        // values that decoded as numerics.
                        _ if kind == KeyKind::Numeric => Box::new(|a: &[u8], b: &[u8]| {
                            vexec_core::numeric::compare(a, b).expect("numerics the group table read")
                        }),
                        Some(collid) => Box::new(move |a: &[u8], b: &[u8]| {
                            pg_sys::varstr_cmp(
                                a.as_ptr().cast(),
                                trim(a) as i32,
                                b.as_ptr().cast(),
                                trim(b) as i32,
                                collid,
                            )
                            .cmp(&0)
                        }),
                        None => Box::new(move |a: &[u8], b: &[u8]| a[..trim(a)].cmp(&b[..trim(b)])),
                    }
                })
                .collect();
            let order_refs: Vec<Option<ByteOrder<'_>>> =
                orders.iter().map(|o| Some(&**o as ByteOrder<'_>)).collect();
            let sorted = d.rows.sorted(&order_refs);
            for chunk in sorted.chunks(vexec_core::batch::BATCH_CAPACITY) {
                let old = pg_sys::MemoryContextSwitchTo(d.cxt);
                let groups: Vec<u32> = chunk.iter().map(|&i| d.rows.group(i)).collect();
                let rows: Vec<RowIdx> = (0..chunk.len() as RowIdx).collect();
                let cols: Vec<Column> = (0..d.args.len())
                    .map(|k| {
                        let mut col = Column::new(vexec_core::batch::PhysType::Datum, chunk.len());
                        for (i, &row) in chunk.iter().enumerate() {
                            match d.rows.arg(row, k) {
                                ArgValue::Null => col.validity.set(i, false),
                                ArgValue::Int(v) => col.values.set_datum(i, v as usize),
                                ArgValue::Bytes(b) if d.args[k].0 == KeyKind::Uuid => {
                                    let p = pg_sys::palloc(b.len()) as *mut u8;
                                    ptr::copy_nonoverlapping(b.as_ptr(), p, b.len());
                                    col.values.set_datum(i, p as usize)
                                }
                                ArgValue::Bytes(b) => {
                                    let v = vexec_core::batch::varlena::make_4b(b);
                                    let p = pg_sys::palloc(v.len()) as *mut u8;
                                    ptr::copy_nonoverlapping(v.as_ptr(), p, v.len());
                                    col.values.set_datum(i, p as usize)
                                }
                            }
                        }
                        col
                    })
                    .collect();
                let args: Vec<&Column> = cols.iter().collect();
                self.fold(&groups, &rows, &args);
                pg_sys::MemoryContextSwitchTo(old);
                pg_sys::MemoryContextReset(d.cxt);
            }
        }
        let mut d = d;
        d.rows.clear();
        self.distinct = Some(d);
    }

    /// Every state dropped (a new spilled partition, a rescan).
    pub fn restart(&mut self) {
        if let Some(d) = &mut self.distinct {
            d.rows.clear();
        }
        match &self.stand_in {
            // SAFETY: the stand-in lives as long as self.
            Some(s) => unsafe { s.reset_states() },
            // SAFETY: self.cxt is this aggregate's live states context; the states pointing into it
            // are cleared just below.
            None => unsafe { pg_sys::MemoryContextReset(self.cxt) },
        }
        self.states.clear();
    }

    /// The node ends normally: the callbacks C functions registered run
    /// (not on ERROR: then the query's memory just goes, as in PostgreSQL).
    pub fn shut_down(&mut self) {
        self.restart();
    }

    pub fn bytes_used(&self) -> usize {
        let distinct = self.distinct.as_ref().map_or(0, |d| d.rows.bytes_used());
        // SAFETY: self.cxt is a live memory context owned by this aggregate.
        unsafe { pg_sys::MemoryContextMemAllocated(self.cxt, true) + self.states.capacity() * 24 + distinct }
    }

    /// Run the transition function for rows `rows` (in order) into groups
    /// `groups`, with the argument columns `args` (a Finalize: the combine
    /// function, with the partial states' column). Call in per-batch memory.
    ///
    /// # Safety
    /// The columns hold the aggregate's argument values for those rows.
    pub unsafe fn update(&mut self, groups: &[u32], rows: &[RowIdx], args: &[&Column]) {
        // SAFETY: the caller's contract: the columns hold the aggregate's arguments for those rows;
        // the contexts are this aggregate's own.
        unsafe {
            if let Some(s) = &self.stand_in {
                pg_sys::MemoryContextReset(s.temp);
            }
            if let Some(d) = &mut self.distinct {
                return d.rows.insert(groups, rows, args);
            }
            if self.split != AggSplit::Finalize {
                return self.fold(groups, rows, args);
            }
            let (states, kept) = self.read_partial_states(rows, args[0]);
            match kept {
                None => self.fold(groups, rows, &[&states]),
                Some(kept) => {
                    let (g, r): (Vec<u32>, Vec<RowIdx>) = kept.iter().map(|&i| (groups[i], rows[i])).unzip();
                    self.fold(&g, &r, &[&states])
                }
            }
        }
    }

    /// The states that rows `rows` of `col` (a Partial VecAgg's bytea
    /// column) carry, as Datums of the state type in the current memory
    /// context, and which of the rows to combine (None: all), as nodeAgg.c
    /// reads them: a strict deserialization function is not called for a
    /// NULL, and that row is not combined at all.
    unsafe fn read_partial_states(&self, rows: &[RowIdx], col: &Column) -> (Column, Option<Vec<usize>>) {
        // SAFETY: col is a Partial VecAgg's bytea column (caller's contract); the deserialization
        // function and its fcinfo were prepared in new().
        unsafe {
            let mut out = Column::new(vexec_core::batch::PhysType::Datum, col.len());
            let mut kept = Vec::new();
            let mut skipped = false;
            for (i, &r) in rows.iter().enumerate() {
                let r = r as usize;
                let valid = col.is_valid(r);
                let value = if valid { Some(col.values.datum(r)) } else { None };
                let state = match (self.deserial_fn, self.form) {
                    (Some((_, true)), _) if !valid => {
                        skipped = true;
                        continue;
                    }
                    (Some((fc, _)), _) => {
                        let fargs = (*fc).args.as_mut_slice(2);
                        fargs[0] = pg_sys::NullableDatum {
                            value: pg_sys::Datum::from(value.unwrap_or(0)),
                            isnull: !valid,
                        };
                        // (the dummy second argument PostgreSQL passes)
                        fargs[1] =
                            pg_sys::NullableDatum { value: pg_sys::Datum::from(0usize), isnull: false };
                        let (d, isnull) = guarded(|| invoke(fc));
                        (!isnull).then_some(d)
                    }
                    (None, Some(form)) => value.map(|v| decode_state(v, form)),
                    (None, None) => unreachable!("an internal state has a deserialization function"),
                };
                kept.push(i);
                match state {
                    Some(d) => out.values.set_datum(r, d),
                    None => out.validity.set(r, false),
                }
            }
            (out, skipped.then_some(kept))
        }
    }

    /// Run the transition (or combine) function for rows `rows` into groups
    /// `groups`.
    unsafe fn fold(&mut self, groups: &[u32], rows: &[RowIdx], args: &[&Column]) {
        debug_assert_eq!(args.len(), self.nargs);
        let fcinfo = self.trans_fcinfo;
        let (strict, byval, len, cxt) =
            (self.trans_strict, self.trans_byval, self.trans_len as i32, self.cxt);
        let nargs = self.nargs;
        let states = self.states.as_mut_ptr();
        let nstates = self.states.len();
        // Only raw pointers and plain values from here: an ERROR may leave.
        let cols: *const &Column = args.as_ptr();
        // SAFETY: inside guarded(): only raw pointers and plain values are live across the calls
        // that can ERROR; fcinfo and the state array belong to self and outlive the closure.
        guarded(|| unsafe {
            let fargs = (*fcinfo).args.as_mut_slice(nargs + 1).as_mut_ptr();
            for (&g, &r) in groups.iter().zip(rows) {
                let (g, r) = (g as usize, r as usize);
                assert!(g < nstates, "group {g} has a state");
                let st = &mut *states.add(g);
                let mut any_null = false;
                for k in 0..nargs {
                    let c: &Column = *cols.add(k);
                    let valid = c.is_valid(r);
                    any_null |= !valid;
                    *fargs.add(k + 1) = pg_sys::NullableDatum {
                        value: pg_sys::Datum::from(if valid { c.values.datum(r) } else { 0 }),
                        isnull: !valid,
                    };
                }
                if strict {
                    if any_null {
                        continue;
                    }
                    if st.no_value {
                        // The first input becomes the state (binary compatible, as CREATE AGGREGATE checks).
                        let first = (*fargs.add(1)).value;
                        let v = if byval {
                            first.value()
                        } else {
                            let old = pg_sys::MemoryContextSwitchTo(cxt);
                            let c = pg_sys::datumCopy(first, false, len);
                            pg_sys::MemoryContextSwitchTo(old);
                            c.value()
                        };
                        *st = GroupState { value: v, isnull: false, no_value: false };
                        continue;
                    }
                    if st.isnull {
                        continue;
                    }
                }
                *fargs = pg_sys::NullableDatum { value: pg_sys::Datum::from(st.value), isnull: st.isnull };
                let (new, new_null) = invoke(fcinfo);
                let mut value = new;
                if !byval && new != st.value {
                    value = adopt_state(new, new_null, st.value, st.isnull, len as i16, cxt);
                }
                *st = GroupState { value, isnull: new_null, no_value: false };
            }
        });
    }

    /// Run `f` (a final or serialization function's call) with the
    /// stand-in's curperagg set, as nodeAgg.c sets it around those calls.
    fn as_final<T>(&self, f: impl FnOnce() -> T) -> T {
        let Some(s) = &self.stand_in else { return f() };
        // SAFETY: s.agg is the stand-in AggState made in StandIn::new, alive as long as self.
        unsafe { (*s.agg).curperagg = s.peragg };
        let out = f();
        // SAFETY: as above.
        unsafe { (*s.agg).curperagg = ptr::null_mut() };
        out
    }

    /// The aggregate's result for group `g` (None for NULL), in the current
    /// memory context (or the state itself without a final function); a
    /// Partial's is the state as a bytea.
    pub unsafe fn result(&self, g: usize) -> Option<usize> {
        let st = self.states[g];
        if self.split == AggSplit::Partial {
            if st.isnull {
                return None;
            }
            return Some(match (self.serial_fn, self.form) {
                // SAFETY: fc is the serialization function's fcinfo prepared in new(); st.value is
                // a live state of this aggregate.
                (Some(fc), _) => unsafe {
                    let fargs = (*fc).args.as_mut_slice(1);
                    fargs[0] = pg_sys::NullableDatum { value: pg_sys::Datum::from(st.value), isnull: false };
                    self.as_final(|| guarded(|| invoke(fc)).0)
                },
                // SAFETY: st.value is a non-NULL state of the form this aggregate serializes.
                (None, Some(form)) => unsafe { encode_state(st.value, form) },
                (None, None) => unreachable!("an internal state has a serialization function"),
            });
        }
        let len = self.trans_len;
        let Some((fcinfo, strict)) = self.final_fn else {
            // SAFETY: st.value is a non-NULL state of length len.
            return (!st.isnull).then(|| unsafe { read_only(st.value, len) });
        };
        if strict && st.isnull {
            return None;
        }
        // SAFETY: fcinfo is the final function's, prepared in new() with room for its n arguments;
        // st is a live state.
        unsafe {
            let n = (*fcinfo).nargs as usize;
            let fargs = (*fcinfo).args.as_mut_slice(n);
            let state = if st.isnull { 0 } else { read_only(st.value, len) };
            fargs[0] = pg_sys::NullableDatum { value: pg_sys::Datum::from(state), isnull: st.isnull };
            for a in fargs.iter_mut().skip(1) {
                *a = pg_sys::NullableDatum { value: pg_sys::Datum::from(0usize), isnull: true };
            }
            let (d, isnull) = self.as_final(|| guarded(|| invoke(fcinfo)));
            (!isnull).then_some(d)
        }
    }
}

/// State `value` of form `form` as a bytea (see
/// vexec_core::agg::state_bytes), in the current memory context; a TOASTed
/// varlena is fetched and decompressed first.
unsafe fn encode_state(value: usize, form: StateForm) -> usize {
    // SAFETY: value is a non-NULL state of form `form` (caller's contract).
    unsafe {
        let bytes: &[u8] = match form {
            StateForm::ByValue => &value.to_ne_bytes(),
            StateForm::Fixed(n) => std::slice::from_raw_parts(value as *const u8, n),
            StateForm::Varlena => {
                let plain = pg_sys::pg_detoast_datum_packed(value as *mut pg_sys::varlena) as *const u8;
                let payload = vexec_core::batch::varlena::bytes(plain);
                let header = payload.as_ptr().offset_from(plain) as usize;
                std::slice::from_raw_parts(plain, header + payload.len())
            }
        };
        let out = vexec_core::batch::varlena::make_4b(bytes);
        let p = pg_sys::palloc(out.len()) as *mut u8;
        ptr::copy_nonoverlapping(out.as_ptr(), p, out.len());
        p as usize
    }
}

/// The state a Partial's bytea `bytea` carries, in the current memory
/// context (aligned: the bytea's bytes need not be), or an ERROR when the
/// bytes are not a state of form `form`.
unsafe fn decode_state(bytea: usize, form: StateForm) -> usize {
    // SAFETY: bytea is a non-NULL bytea Datum from a Partial VecAgg's output (caller's contract); a
    // mismatch ERRORs below rather than being read.
    unsafe {
        let plain = pg_sys::pg_detoast_datum_packed(bytea as *mut pg_sys::varlena) as *const u8;
        let payload = vexec_core::batch::varlena::bytes(plain);
        if !form.reads_back(payload) {
            ereport!(
                ERROR,
                PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                "a partial aggregate state of VecAgg does not read back"
            );
        }
        match form {
            StateForm::ByValue => usize::from_ne_bytes(payload.try_into().expect("a Datum's width")),
            _ => {
                let p = pg_sys::palloc(payload.len()) as *mut u8;
                ptr::copy_nonoverlapping(payload.as_ptr(), p, payload.len());
                p as usize
            }
        }
    }
}

/// An aggregate written against PostgreSQL's C interface (LANGUAGE C, version
/// 1 calling convention) whose transition function uses every part of what
/// nodeAgg.c offers aggregate support functions: VecAgg must answer each as
/// PostgreSQL's Agg node does.
#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use pgrx::pg_sys;
    use pgrx::prelude::*;
    use std::sync::atomic::{AtomicI64, Ordering};

    /// Callbacks run since `vx_test_agg_callbacks()` last read the count.
    static CALLBACKS_RUN: AtomicI64 = AtomicI64::new(0);

    #[repr(C)]
    struct TestState {
        n: i64,
        sum: i64,
        nargs: i32,
    }

    macro_rules! v1_info {
        ($($finfo:ident),*) => {$(
            #[no_mangle]
            pub extern "C" fn $finfo() -> &'static pg_sys::Pg_finfo_record {
                const V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
                &V1
            }
        )*};
    }
    v1_info!(pg_finfo_vx_test_agg_trans, pg_finfo_vx_test_agg_final, pg_finfo_vx_test_agg_callbacks);

    #[pg_guard]
    unsafe extern "C-unwind" fn count_callback(_arg: pg_sys::Datum) {
        CALLBACKS_RUN.fetch_add(1, Ordering::SeqCst);
    }

    /// (state internal, value int4): counts and sums the values.
    #[no_mangle]
    #[pg_guard]
    pub unsafe extern "C-unwind" fn vx_test_agg_trans(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
        // SAFETY: called by PostgreSQL's fmgr (through pg_guard) with a valid fcinfo of this test
        // aggregate.
        unsafe {
            let mut aggcxt: pg_sys::MemoryContext = std::ptr::null_mut();
            if pg_sys::AggCheckCallContext(fcinfo, &mut aggcxt) == 0 {
                error!("vx_test_agg_trans called in non-aggregate context");
            }
            let args = (*fcinfo).args.as_slice(2);
            let st = if args[0].isnull {
                let aggref = pg_sys::AggGetAggref(fcinfo);
                if aggref.is_null() {
                    error!("vx_test_agg_trans: no Aggref");
                }
                let st = pg_sys::MemoryContextAllocZero(aggcxt, std::mem::size_of::<TestState>())
                    as *mut TestState;
                let l = (*aggref).args;
                (*st).nargs = if l.is_null() { 0 } else { (*l).length };
                pg_sys::AggRegisterCallback(fcinfo, Some(count_callback), pg_sys::Datum::from(0usize));
                st
            } else {
                args[0].value.cast_mut_ptr::<TestState>()
            };
            if !args[1].isnull {
                // Scratch memory from the temporary context.
                let scratch =
                    pg_sys::MemoryContextAlloc(pg_sys::AggGetTempMemoryContext(fcinfo), 8) as *mut i64;
                *scratch = args[1].value.value() as i32 as i64;
                (*st).n += 1;
                (*st).sum += *scratch;
            }
            pg_sys::Datum::from(st)
        }
    }

    /// The state as text, with what AggGetAggref and AggStateIsShared answer.
    #[no_mangle]
    #[pg_guard]
    pub unsafe extern "C-unwind" fn vx_test_agg_final(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
        // SAFETY: as in vx_test_agg_trans.
        unsafe {
            let arg = (*fcinfo).args.as_slice(1)[0];
            if arg.isnull {
                (*fcinfo).isnull = true;
                return pg_sys::Datum::from(0usize);
            }
            let st = arg.value.cast_mut_ptr::<TestState>();
            let text = format!(
                "n={} sum={} args={} aggref={} shared={}",
                (*st).n,
                (*st).sum,
                (*st).nargs,
                !pg_sys::AggGetAggref(fcinfo).is_null(),
                pg_sys::AggStateIsShared(fcinfo)
            );
            let c = std::ffi::CString::new(text).expect("no NUL");
            pg_sys::Datum::from(pg_sys::cstring_to_text(c.as_ptr()))
        }
    }

    /// How many callbacks ran since the last call.
    #[no_mangle]
    #[pg_guard]
    pub unsafe extern "C-unwind" fn vx_test_agg_callbacks(
        _fcinfo: pg_sys::FunctionCallInfo,
    ) -> pg_sys::Datum {
        pg_sys::Datum::from(CALLBACKS_RUN.swap(0, Ordering::SeqCst))
    }

    fn results(mode: &str) -> (String, i64, String) {
        Spi::run(&format!("SET vexec.mode = {mode}")).unwrap();
        let q = "SELECT k, vx_test_agg(v) FROM vx_test_t GROUP BY k";
        let plan = Spi::get_one::<String>(&format!("EXPLAIN (COSTS OFF) {q}")).unwrap().unwrap_or_default();
        let rows = Spi::get_one::<String>(&format!(
            "SELECT string_agg(k || ': ' || coalesce(a, 'NULL'), '; ' ORDER BY k) FROM ({q}) s(k, a)"
        ))
        .unwrap()
        .unwrap_or_default();
        let callbacks = Spi::get_one::<i64>("SELECT vx_test_agg_callbacks()").unwrap().unwrap();
        (rows, callbacks, plan)
    }

    #[pg_test]
    fn c_aggregates_get_the_interface_of_postgresql_agg_node() {
        Spi::run(
            "CREATE FUNCTION vx_test_agg_trans(internal, int4) RETURNS internal
               LANGUAGE C AS '$libdir/vexec', 'vx_test_agg_trans';
             CREATE FUNCTION vx_test_agg_final(internal) RETURNS text
               LANGUAGE C AS '$libdir/vexec', 'vx_test_agg_final';
             CREATE FUNCTION vx_test_agg_callbacks() RETURNS int8
               LANGUAGE C AS '$libdir/vexec', 'vx_test_agg_callbacks';
             CREATE AGGREGATE vx_test_agg(int4) (sfunc = vx_test_agg_trans, stype = internal,
                                                finalfunc = vx_test_agg_final);
             CREATE TABLE vx_test_t AS
               SELECT g % 7 AS k, CASE WHEN g % 5 = 0 THEN NULL ELSE g END AS v
               FROM generate_series(1, 5000) g;
             ANALYZE vx_test_t;
             SET enable_sort = off",
        )
        .unwrap();
        let (off_rows, off_callbacks, off_plan) = results("off");
        let (vec_rows, vec_callbacks, vec_plan) = results("force");
        assert!(!off_plan.contains("Vec"), "mode off: {off_plan}");
        assert!(vec_plan.contains("Vec Aggregate"), "force: {vec_plan}");
        assert!(off_rows.starts_with("0: n=") && !off_rows.starts_with("0: n=0 "), "{off_rows}");
        assert!(off_rows.contains("args=1 aggref=true shared=false"), "{off_rows}");
        assert_eq!(vec_rows, off_rows);
        // One callback registered per group, run at the node's end.
        assert_eq!(off_callbacks, 7);
        assert_eq!(vec_callbacks, off_callbacks);
    }
}
