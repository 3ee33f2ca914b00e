//! VecAgg: aggregation over the batches of a vector child (VecScan).
//!
//! The node pulls every batch of its child through VecScan's batch
//! interface and feeds the live rows to one `vexec_core` accumulator per
//! aggregate, in row order. At the end it builds the aggregates' results
//! into its scan tuple (laid out by `custom_scan_tlist`), and PostgreSQL's
//! own HAVING qual and projection run on it (see plan/agg.rs).
//!
//! This version is plain aggregation: one group, so memory is constant
//! (a text min/max keeps one value).
//!
//! Memory and resources: the Rust state is owned by the node and dropped by
//! EndCustomScan, or by a reset callback on the query's memory context when
//! the query ends with an ERROR or a cancel. Detoasted argument values go to
//! the node's per-tuple memory, reset per batch. Interrupts are checked per
//! batch here and in the child.

use std::ffi::c_void;
use std::ptr;

use crate::pgutil::SyncPtr;
use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::agg::{Accumulator, AggError, AggResult, Transition};
use vexec_core::batch::Column;

use crate::exec::scan;
use crate::pgutil::list_ptrs;
use crate::shim::{self, guarded};

pub const NAME: &std::ffi::CStr = c"VecAgg";

/// One aggregate: its transition and the child column of its argument.
struct AggItem {
    transition: Transition,
    arg: Option<usize>,
    result_type: pg_sys::Oid,
}

#[derive(Default)]
struct Stats {
    batches: u64,
    rows: u64,
}

pub struct AggState {
    items: Vec<AggItem>,
    accs: Vec<Accumulator>,
    child: *mut pg_sys::CustomScanState,
    econtext: *mut pg_sys::ExprContext,
    consumed: bool,
    emitted: bool,
    stats: Stats,
}

#[repr(C)]
struct VecAggNode {
    css: pg_sys::CustomScanState,
    state: *mut AggState,
}

static SCAN_METHODS: SyncPtr<pg_sys::CustomScanMethods> = SyncPtr(pg_sys::CustomScanMethods {
    CustomName: NAME.as_ptr(),
    CreateCustomScanState: Some(create_state),
});

static EXEC_METHODS: SyncPtr<pg_sys::CustomExecMethods> = SyncPtr(pg_sys::CustomExecMethods {
    CustomName: NAME.as_ptr(),
    BeginCustomScan: Some(begin),
    ExecCustomScan: Some(exec),
    EndCustomScan: Some(end),
    ReScanCustomScan: Some(rescan),
    MarkPosCustomScan: None,
    RestrPosCustomScan: None,
    EstimateDSMCustomScan: None,
    InitializeDSMCustomScan: None,
    ReInitializeDSMCustomScan: None,
    InitializeWorkerCustomScan: None,
    ShutdownCustomScan: None,
    ExplainCustomScan: Some(explain),
});

pub fn scan_methods() -> *const pg_sys::CustomScanMethods {
    &SCAN_METHODS.0
}

pub fn register() {
    unsafe { pg_sys::RegisterCustomScanMethods(scan_methods()) };
}

#[pg_guard]
unsafe extern "C-unwind" fn create_state(cscan: *mut pg_sys::CustomScan) -> *mut pg_sys::Node {
    unsafe {
        let node = pg_sys::palloc0(std::mem::size_of::<VecAggNode>()) as *mut VecAggNode;
        (*node).css.ss.ps.type_ = pg_sys::NodeTag::T_CustomScanState;
        (*node).css.flags = (*cscan).flags;
        (*node).css.methods = &EXEC_METHODS.0;
        node as *mut pg_sys::Node
    }
}

unsafe fn state<'a>(node: *mut pg_sys::CustomScanState) -> &'a mut AggState {
    unsafe { &mut *(*(node as *mut VecAggNode)).state }
}

#[pg_guard]
unsafe extern "C-unwind" fn drop_state(arg: *mut c_void) {
    unsafe {
        let node = arg as *mut VecAggNode;
        if !(*node).state.is_null() {
            drop(Box::from_raw((*node).state));
            (*node).state = ptr::null_mut();
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn begin(
    node: *mut pg_sys::CustomScanState,
    estate: *mut pg_sys::EState,
    eflags: i32,
) {
    unsafe {
        let cscan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
        let child_plan = list_ptrs::<pg_sys::Plan>((*cscan).custom_plans).next().expect("VecAgg has a child");
        let child = pg_sys::ExecInitNode(child_plan, estate, eflags) as *mut pg_sys::CustomScanState;
        (*node).custom_ps = pg_sys::lappend(ptr::null_mut(), child.cast());

        // custom_private: [report id, (transition code, argument column)...]
        let spec: Vec<i32> =
            list_ptrs::<pg_sys::Integer>((*cscan).custom_private).skip(1).map(|i| (*i).ival).collect();
        let result_types = list_ptrs::<pg_sys::TargetEntry>((*cscan).custom_scan_tlist)
            .map(|te| pg_sys::exprType((*te).expr.cast()));
        let items: Vec<AggItem> = spec
            .chunks_exact(2)
            .zip(result_types)
            .map(|(s, result_type)| AggItem {
                transition: Transition::from_code(s[0]).expect("a known transition code"),
                arg: (s[1] >= 0).then_some(s[1] as usize),
                result_type,
            })
            .collect();
        let accs = items
            .iter()
            .map(|it| {
                let mut a = Accumulator::new(it.transition);
                a.ensure_groups(1);
                a
            })
            .collect();
        let st = Box::new(AggState {
            items,
            accs,
            child,
            econtext: (*node).ss.ps.ps_ExprContext,
            consumed: false,
            emitted: false,
            stats: Stats::default(),
        });
        let vnode = node as *mut VecAggNode;
        (*vnode).state = Box::into_raw(st);
        crate::pgutil::on_context_reset((*estate).es_query_cxt, drop_state, vnode.cast());
    }
}

impl AggState {
    /// Feed every batch of the child to the accumulators.
    unsafe fn consume(&mut self) {
        unsafe {
            let per_batch = (*self.econtext).ecxt_per_tuple_memory;
            loop {
                check_for_interrupts!();
                let Some(mut batch) = scan::next_vector_batch(self.child) else { break };
                self.stats.batches += 1;
                self.stats.rows += batch.rows.len() as u64;
                pg_sys::MemoryContextReset(per_batch);
                let groups = vec![0u32; batch.rows.len()];
                for (item, acc) in self.items.iter().zip(self.accs.iter_mut()) {
                    let arg: Option<&Column> = match item.arg {
                        None => None,
                        Some(i) => {
                            if matches!(item.transition, Transition::MinMaxBytes { .. }) {
                                // Kernels read the bytes: detoast in this node's memory.
                                let col = &mut batch.columns[i];
                                let values = match &mut col.values {
                                    vexec_core::batch::Values::Datum(v) => v.as_mut_ptr(),
                                    _ => unreachable!("text min/max over a by-value column"),
                                };
                                let validity = col.validity.as_bytes().as_ptr();
                                let rows = &batch.rows;
                                let old = pg_sys::MemoryContextSwitchTo(per_batch);
                                guarded(|| {
                                    shim::vx_detoast(values, validity, rows.len() as i32, rows.as_ptr())
                                });
                                pg_sys::MemoryContextSwitchTo(old);
                            }
                            Some(&batch.columns[i])
                        }
                    };
                    if let Err(AggError::FloatOverflow { .. }) = acc.update(&groups, &batch.rows, arg) {
                        ereport!(
                            ERROR,
                            PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                            "value out of range: overflow"
                        );
                    }
                }
            }
            self.consumed = true;
        }
    }
}

/// A varlena copy of `payload` in the current memory context.
unsafe fn palloc_varlena(payload: &[u8]) -> usize {
    unsafe {
        let bytes = vexec_core::batch::varlena::make_4b(payload);
        let p = pg_sys::palloc(bytes.len()) as *mut u8;
        ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len());
        p as usize
    }
}

unsafe fn numeric_datum(value: i128) -> usize {
    unsafe { palloc_varlena(&vexec_core::numeric::encode_payload(value, 0)) }
}

/// The Datum of an aggregate's result (None for NULL), in the current memory context.
unsafe fn result_datum(r: AggResult<'_>, result_type: pg_sys::Oid) -> Option<usize> {
    unsafe {
        Some(match r {
            AggResult::Null => return None,
            AggResult::Int(v) if result_type == pg_sys::BOOLOID => (v != 0) as usize,
            AggResult::Int(v) => v as usize,
            AggResult::Numeric(v) => numeric_datum(v),
            AggResult::NumericAvg { sum, count } => {
                // As int8_avg and numeric_poly_avg: numeric_div(sum, count).
                let (s, c) = (numeric_datum(sum), numeric_datum(count as i128));
                let d = pg_sys::OidFunctionCall2Coll(
                    pg_sys::Oid::from(pg_sys::F_NUMERIC_DIV),
                    pg_sys::InvalidOid,
                    pg_sys::Datum::from(s),
                    pg_sys::Datum::from(c),
                );
                d.value()
            }
            AggResult::Float4(f) => f.to_bits() as usize,
            AggResult::Float8(f) if result_type == pg_sys::FLOAT4OID => (f as f32).to_bits() as usize,
            AggResult::Float8(f) => f.to_bits() as usize,
            AggResult::Bytes(b) => palloc_varlena(b),
        })
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn exec(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
    unsafe {
        let st = state(node);
        let result = (*node).ss.ps.ps_ResultTupleSlot;
        if st.emitted {
            return pg_sys::ExecClearTuple(result);
        }
        if !st.consumed {
            st.consume();
        }
        st.emitted = true;

        // The one group's results, as the scan tuple.
        let econtext = st.econtext;
        pg_sys::MemoryContextReset((*econtext).ecxt_per_tuple_memory);
        let slot = (*node).ss.ss_ScanTupleSlot;
        pg_sys::ExecClearTuple(slot);
        let old = pg_sys::MemoryContextSwitchTo((*econtext).ecxt_per_tuple_memory);
        for (i, (item, acc)) in st.items.iter().zip(&st.accs).enumerate() {
            let d = result_datum(acc.result(0), item.result_type);
            *(*slot).tts_values.add(i) = pg_sys::Datum::from(d.unwrap_or(0));
            *(*slot).tts_isnull.add(i) = d.is_none();
        }
        pg_sys::MemoryContextSwitchTo(old);
        pg_sys::ExecStoreVirtualTuple(slot);
        (*econtext).ecxt_scantuple = slot;

        let qual = (*node).ss.ps.qual;
        if !qual.is_null() && !pg_sys::ExecQual(qual, econtext) {
            return pg_sys::ExecClearTuple(result);
        }
        let proj = (*node).ss.ps.ps_ProjInfo;
        if proj.is_null() {
            return slot;
        }
        pg_sys::ExecProject(proj)
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn end(node: *mut pg_sys::CustomScanState) {
    unsafe {
        let vnode = node as *mut VecAggNode;
        if !(*vnode).state.is_null() {
            let st = Box::from_raw((*vnode).state);
            (*vnode).state = ptr::null_mut();
            pg_sys::ExecEndNode((*st).child.cast());
            drop(st);
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn rescan(node: *mut pg_sys::CustomScanState) {
    unsafe {
        let st = state(node);
        // The child is driven through its batch interface, not ExecProcNode,
        // so it is rescanned here whether or not its parameters changed.
        pg_sys::ExecReScan(st.child.cast());
        for (item, acc) in st.items.iter().zip(st.accs.iter_mut()) {
            *acc = Accumulator::new(item.transition);
            acc.ensure_groups(1);
        }
        st.consumed = false;
        st.emitted = false;
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn explain(
    node: *mut pg_sys::CustomScanState,
    _ancestors: *mut pg_sys::List,
    es: *mut pg_sys::ExplainState,
) {
    unsafe {
        let st = state(node);
        let prop = |label: &std::ffi::CStr, value: String| crate::pgutil::explain_text(es, label, &value);
        prop(c"Strategy", "Plain".into());
        if (*es).verbose {
            prop(c"Vector Transitions", format!("{} of {}", st.items.len(), st.items.len()));
        }
        if (*es).analyze {
            pg_sys::ExplainPropertyInteger(c"Batches".as_ptr(), ptr::null(), st.stats.batches as i64, es);
        }
    }
}
