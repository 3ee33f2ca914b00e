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
//! The planner sends aggregates with an SQL state type here, whose functions
//! get no aggregate context (so they never update a state in place), and a
//! few built-in ones with an `internal` state (string_agg, array_agg,
//! json(b)_agg...), whose functions get a stand-in for PostgreSQL's Agg node
//! that answers AggCheckCallContext with the states' memory context, the
//! only part of it they read (as do range_intersect_agg's functions, whose
//! state is an SQL value but which insist on an Agg node). Polymorphic functions see their resolved
//! types through fn_expr, built as nodeAgg.c builds it.
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
use vexec_core::agg::state_bytes::StateForm;
use vexec_core::batch::{Column, RowIdx};

use crate::exec::agg::AggSplit;
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

/// A stand-in for PostgreSQL's Agg node, allocated in `cxt_of_node`:
/// AggCheckCallContext finds it an AggState and answers `states` as the
/// aggregate memory context (curaggcontext's per-tuple memory), where the
/// internal states are built. The rest of it is zero (no current
/// aggregate, no callbacks): the functions given it read none of it.
unsafe fn aggregate_context(
    states: pg_sys::MemoryContext,
    cxt_of_node: pg_sys::MemoryContext,
) -> *mut pg_sys::Node {
    unsafe {
        let econtext = pg_sys::MemoryContextAllocZero(cxt_of_node, std::mem::size_of::<pg_sys::ExprContext>())
            as *mut pg_sys::ExprContext;
        (*econtext).type_ = pg_sys::NodeTag::T_ExprContext;
        (*econtext).ecxt_per_tuple_memory = states;
        let agg = pg_sys::MemoryContextAllocZero(cxt_of_node, std::mem::size_of::<pg_sys::AggState>())
            as *mut pg_sys::AggState;
        (*agg).ss.ps.type_ = pg_sys::NodeTag::T_AggState;
        (*agg).curaggcontext = econtext;
        agg.cast()
    }
}

/// Call the function of `fcinfo` (its arguments set): the result and whether it is NULL.
#[inline]
unsafe fn invoke(fcinfo: *mut pg_sys::FunctionCallInfoBaseData) -> (usize, bool) {
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
        unsafe {
            let a = &*aggref;
            let funcs = crate::plan::agg::aggregate_functions(a.aggfnoid).expect("a pg_aggregate entry");
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
            if internal {
                let agg = aggregate_context(cxt, query_cxt);
                let calls = [Some(trans_fcinfo), final_fn.map(|f| f.0), serial_fn, deserial_fn.map(|f| f.0)];
                for fc in calls.into_iter().flatten() {
                    (*fc).context = agg;
                }
            } else if crate::plan::agg::checks_aggregate_context(fnoid) {
                (*trans_fcinfo).context = aggregate_context(cxt, query_cxt);
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
        unsafe {
            let old = pg_sys::MemoryContextSwitchTo(self.cxt);
            let c = pg_sys::datumCopy(pg_sys::Datum::from(d), false, self.trans_len as i32);
            pg_sys::MemoryContextSwitchTo(old);
            c.value()
        }
    }

    /// Every state dropped (a new spilled partition).
    pub fn restart(&mut self) {
        unsafe { pg_sys::MemoryContextReset(self.cxt) };
        self.states.clear();
    }

    pub fn bytes_used(&self) -> usize {
        unsafe { pg_sys::MemoryContextMemAllocated(self.cxt, true) + self.states.capacity() * 24 }
    }

    /// Run the transition function for rows `rows` (in order) into groups
    /// `groups`, with the argument columns `args` (a Finalize: the combine
    /// function, with the partial states' column). Call in per-batch memory.
    ///
    /// # Safety
    /// The columns hold the aggregate's argument values for those rows.
    pub unsafe fn update(&mut self, groups: &[u32], rows: &[RowIdx], args: &[&Column]) {
        unsafe {
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
                    value = if new_null {
                        0
                    } else {
                        let old = pg_sys::MemoryContextSwitchTo(cxt);
                        let c = pg_sys::datumCopy(pg_sys::Datum::from(new), false, len);
                        pg_sys::MemoryContextSwitchTo(old);
                        c.value()
                    };
                    if !st.isnull {
                        pg_sys::pfree(st.value as *mut std::ffi::c_void);
                    }
                }
                *st = GroupState { value, isnull: new_null, no_value: false };
            }
        });
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
                (Some(fc), _) => unsafe {
                    let fargs = (*fc).args.as_mut_slice(1);
                    fargs[0] = pg_sys::NullableDatum { value: pg_sys::Datum::from(st.value), isnull: false };
                    guarded(|| invoke(fc)).0
                },
                (None, Some(form)) => unsafe { encode_state(st.value, form) },
                (None, None) => unreachable!("an internal state has a serialization function"),
            });
        }
        let Some((fcinfo, strict)) = self.final_fn else {
            return (!st.isnull).then_some(st.value);
        };
        if strict && st.isnull {
            return None;
        }
        unsafe {
            let n = (*fcinfo).nargs as usize;
            let fargs = (*fcinfo).args.as_mut_slice(n);
            fargs[0] = pg_sys::NullableDatum { value: pg_sys::Datum::from(st.value), isnull: st.isnull };
            for a in fargs.iter_mut().skip(1) {
                *a = pg_sys::NullableDatum { value: pg_sys::Datum::from(0usize), isnull: true };
            }
            let (d, isnull) = guarded(|| invoke(fcinfo));
            (!isnull).then_some(d)
        }
    }
}

/// State `value` of form `form` as a bytea (see
/// vexec_core::agg::state_bytes), in the current memory context; a TOASTed
/// varlena is fetched and decompressed first.
unsafe fn encode_state(value: usize, form: StateForm) -> usize {
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
