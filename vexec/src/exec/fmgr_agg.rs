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
//! only part of it they read. Polymorphic functions see their resolved
//! types through fn_expr, built as nodeAgg.c builds it.
//!
//! Calls go through fmgr inside one guarded region per batch (no Rust value
//! with a destructor lives in it, so an ERROR's longjmp skips nothing that
//! needs dropping), in the caller's per-batch memory; the states live in a
//! memory context of their own under the query's, reset for each spilled
//! partition and freed with the query.

use std::ptr;

use pgrx::pg_sys;
use vexec_core::batch::{Column, RowIdx};

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
    /// The transition and final functions of `aggref`, looked up and
    /// prepared in `query_cxt`.
    ///
    /// # Safety
    /// `aggref` is an Aggref the planner accepted for fmgr (see
    /// plan/agg.rs, `fmgr_transition`).
    pub unsafe fn new(aggref: *mut pg_sys::Aggref, query_cxt: pg_sys::MemoryContext) -> FmgrAgg {
        unsafe {
            let a = &*aggref;
            let (transfn, finalfn, final_extra, initval) =
                crate::plan::agg::aggregate_functions(a.aggfnoid).expect("a pg_aggregate entry");
            let mut input_types: Vec<pg_sys::Oid> = if a.aggargtypes.is_null() {
                vec![]
            } else {
                (0..(*a.aggargtypes).length as usize)
                    .map(|i| (*(*a.aggargtypes).elements.add(i)).oid_value)
                    .collect()
            };
            let nargs = input_types.len();
            let transtype = a.aggtranstype;
            let (mut len, mut byval) = (0i16, false);
            pg_sys::get_typlenbyval(transtype, &mut len, &mut byval);

            let old = pg_sys::MemoryContextSwitchTo(query_cxt);
            let (mut transexpr, mut invexpr) = (ptr::null_mut(), ptr::null_mut());
            pg_sys::build_aggregate_transfn_expr(
                input_types.as_mut_ptr(),
                nargs as i32,
                0,
                a.aggvariadic,
                transtype,
                a.inputcollid,
                transfn,
                pg_sys::InvalidOid,
                &mut transexpr,
                &mut invexpr,
            );
            let trans_fcinfo = call_info(transfn, transexpr, nargs + 1, a.inputcollid, query_cxt);
            let trans_strict = (*(*trans_fcinfo).flinfo).fn_strict;
            let final_fn = (finalfn != pg_sys::InvalidOid).then(|| {
                let final_nargs = if final_extra { nargs + 1 } else { 1 };
                let mut finalexpr = ptr::null_mut();
                pg_sys::build_aggregate_finalfn_expr(
                    input_types.as_mut_ptr(),
                    final_nargs as i32,
                    transtype,
                    a.aggtype,
                    a.inputcollid,
                    finalfn,
                    &mut finalexpr,
                );
                let fc = call_info(finalfn, finalexpr, final_nargs, a.inputcollid, query_cxt);
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
            if transtype == pg_sys::INTERNALOID {
                let agg = aggregate_context(cxt, query_cxt);
                (*trans_fcinfo).context = agg;
                if let Some((fc, _)) = final_fn {
                    (*fc).context = agg;
                }
            }
            let init = initval.map(|text| {
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
    /// `groups`, with the argument columns `args`. Call in per-batch memory.
    ///
    /// # Safety
    /// The columns hold the aggregate's argument values for those rows.
    pub unsafe fn update(&mut self, groups: &[u32], rows: &[RowIdx], args: &[&Column]) {
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
    /// memory context (or the state itself without a final function).
    pub unsafe fn result(&self, g: usize) -> Option<usize> {
        let st = self.states[g];
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
