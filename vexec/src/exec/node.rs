//! The node framework: one way to be a vexec CustomScan executor node.
//!
//! A node kind implements [`VecNode`] (begin, exec, end, rescan, explain,
//! and optionally the parallel callbacks and the batch interface) and
//! declares one `static` [`NodeMethods`] built by [`NodeMethods::new`]. The
//! generic `#[pg_guard]` trampolines below are the only `extern "C-unwind"`
//! functions PostgreSQL calls; each finds the node's Rust state through
//! [`state`], which checks the node's tag and methods before the cast.
//!
//! The state is boxed, owned by the node's [`NodeBox`], and dropped either
//! by EndCustomScan or, when the query ends without it (an ERROR, a cancel),
//! by a reset callback of the executor's query memory context.
//!
//! The batch pipe: a node that gives batches to vector parents fills
//! [`NodeMethods::batches`]. A parent never names the child's module: it
//! asks [`batch_source`] for the child's batch interface, which only answers
//! for a node whose methods are registered here (`register`).

use std::ffi::{c_void, CStr};
use std::ptr;
use std::sync::OnceLock;

use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::batch::{Column, RowIdx};

use crate::pgutil::SyncPtr;

/// A batch handed to a vector parent: one column per output column, and the
/// rows alive. By-reference values stay valid until the next batch is
/// requested (they live in the child's per-batch memory or pinned pages).
pub struct VectorBatch {
    pub columns: Vec<Column>,
    pub rows: Vec<RowIdx>,
}

/// One kind of vexec executor node. `Self` is the node's Rust state.
pub trait VecNode: Sized + 'static {
    /// The node kind's name in messages ("VecSort").
    const WHAT: &'static str;

    /// This kind's methods (its one `static NodeMethods`).
    fn methods() -> &'static NodeMethods;

    /// BeginCustomScan: the node's state.
    ///
    /// # Safety
    /// Called by PostgreSQL's executor with a node of this kind.
    unsafe fn begin(
        node: *mut pg_sys::CustomScanState,
        estate: *mut pg_sys::EState,
        eflags: i32,
    ) -> Box<Self>;

    /// ExecCustomScan: the next row, or an empty slot at the end.
    ///
    /// # Safety
    /// `node` is this state's node.
    unsafe fn exec(&mut self, node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot;

    /// EndCustomScan: release what PostgreSQL owns (child nodes, scans,
    /// tuplesorts, files); the state is dropped right after.
    ///
    /// # Safety
    /// `node` is this state's node.
    unsafe fn end(&mut self, node: *mut pg_sys::CustomScanState);

    /// ReScanCustomScan.
    ///
    /// # Safety
    /// `node` is this state's node.
    unsafe fn rescan(&mut self, node: *mut pg_sys::CustomScanState);

    /// ExplainCustomScan: the node's own EXPLAIN properties.
    ///
    /// # Safety
    /// `node` is this state's node, `es` the running EXPLAIN.
    unsafe fn explain(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        ancestors: *mut pg_sys::List,
        es: *mut pg_sys::ExplainState,
    );

    /// Parallel nodes (NodeMethods::new with `parallel`): shared memory needed.
    ///
    /// # Safety
    /// As the CustomExecMethods callback.
    unsafe fn estimate_dsm(
        &mut self,
        _node: *mut pg_sys::CustomScanState,
        _pcxt: *mut pg_sys::ParallelContext,
    ) -> pg_sys::Size {
        0
    }

    /// # Safety
    /// As the CustomExecMethods callback.
    unsafe fn initialize_dsm(
        &mut self,
        _node: *mut pg_sys::CustomScanState,
        _pcxt: *mut pg_sys::ParallelContext,
        _coordinate: *mut c_void,
    ) {
    }

    /// # Safety
    /// As the CustomExecMethods callback.
    unsafe fn reinitialize_dsm(
        &mut self,
        _node: *mut pg_sys::CustomScanState,
        _pcxt: *mut pg_sys::ParallelContext,
        _coordinate: *mut c_void,
    ) {
    }

    /// # Safety
    /// As the CustomExecMethods callback.
    unsafe fn initialize_worker(
        &mut self,
        _node: *mut pg_sys::CustomScanState,
        _toc: *mut pg_sys::shm_toc,
        _coordinate: *mut c_void,
    ) {
    }
}

/// The batch interface of a node kind (see the module comment).
pub trait BatchSource: VecNode {
    /// Whether this node gives batches (a kind may give them only for some
    /// plan shapes).
    ///
    /// # Safety
    /// `node` is this state's node.
    unsafe fn gives_batches(&self, _node: *mut pg_sys::CustomScanState) -> bool {
        true
    }

    /// The next batch, None at the end.
    ///
    /// # Safety
    /// `node` is this state's node.
    unsafe fn next_batch(&mut self, node: *mut pg_sys::CustomScanState) -> Option<VectorBatch>;

    /// Compute numeric output column `target` as integers scaled by the
    /// returned power of ten, for a parent that aggregates numerics; None
    /// leaves it numeric. Asked before the first batch.
    ///
    /// # Safety
    /// `node` is this state's node.
    unsafe fn request_scaled(&mut self, _node: *mut pg_sys::CustomScanState, _target: usize) -> Option<u16> {
        None
    }

    /// Late materialization for a parent that needs the output columns
    /// `needed` for every row and the others only for some (a join's
    /// outer side: its keys, then the rest for the rows that matched).
    /// Returns, per output column, whether the node leaves it unread in
    /// its batches until [`BatchSource::complete`] names the rows. Asked
    /// before the first batch.
    ///
    /// # Safety
    /// `node` is this state's node.
    unsafe fn defer(&mut self, _node: *mut pg_sys::CustomScanState, _needed: &[bool]) -> Vec<bool> {
        Vec::new()
    }

    /// The deferred columns of the batch returned last, read for `rows`
    /// (the others stay unread): (output column, column) pairs.
    ///
    /// # Safety
    /// `node` is this state's node; the batch is the last one returned.
    unsafe fn complete(
        &mut self,
        _node: *mut pg_sys::CustomScanState,
        _rows: &[RowIdx],
    ) -> Vec<(usize, Column)> {
        Vec::new()
    }
}

/// Type-erased [`BatchSource`] calls, one set per node kind.
pub struct BatchOps {
    gives_batches: unsafe fn(*mut pg_sys::CustomScanState) -> bool,
    next_batch: unsafe fn(*mut pg_sys::CustomScanState) -> Option<VectorBatch>,
    request_scaled: unsafe fn(*mut pg_sys::CustomScanState, usize) -> Option<u16>,
    defer: unsafe fn(*mut pg_sys::CustomScanState, &[bool]) -> Vec<bool>,
    complete: unsafe fn(*mut pg_sys::CustomScanState, &[RowIdx]) -> Vec<(usize, Column)>,
}

impl BatchOps {
    pub const fn of<N: BatchSource>() -> BatchOps {
        BatchOps {
            gives_batches: gives_batches::<N>,
            next_batch: next_batch::<N>,
            request_scaled: request_scaled::<N>,
            defer: defer::<N>,
            complete: complete::<N>,
        }
    }
}

/// A node kind's methods. `exec` is the first field: a node's
/// `CustomScanState.methods` points at it.
#[repr(C)]
pub struct NodeMethods {
    exec: pg_sys::CustomExecMethods,
    batches: Option<BatchOps>,
}

// SAFETY: the methods are immutable tables of function pointers and static
// C strings, read by the backend's main thread only.
unsafe impl Sync for NodeMethods {}

impl NodeMethods {
    /// The methods of node kind `N`, named `name` in EXPLAIN; with
    /// `parallel`, its DSM callbacks; with `batches`, its batch interface.
    pub const fn new<N: VecNode>(
        name: &'static CStr,
        parallel: bool,
        batches: Option<BatchOps>,
    ) -> NodeMethods {
        NodeMethods {
            exec: pg_sys::CustomExecMethods {
                CustomName: name.as_ptr(),
                BeginCustomScan: Some(begin::<N>),
                ExecCustomScan: Some(exec::<N>),
                EndCustomScan: Some(end::<N>),
                ReScanCustomScan: Some(rescan::<N>),
                MarkPosCustomScan: None,
                RestrPosCustomScan: None,
                EstimateDSMCustomScan: if parallel { Some(estimate_dsm::<N>) } else { None },
                InitializeDSMCustomScan: if parallel { Some(initialize_dsm::<N>) } else { None },
                ReInitializeDSMCustomScan: if parallel { Some(reinitialize_dsm::<N>) } else { None },
                InitializeWorkerCustomScan: if parallel { Some(initialize_worker::<N>) } else { None },
                ShutdownCustomScan: None,
                ExplainCustomScan: Some(explain::<N>),
            },
            batches,
        }
    }
}

/// The plan node's methods of kind `N` under the name `name` (a kind may
/// have several names: VecAgg's serial, partial and final plans).
pub const fn scan_methods<N: VecNode>(name: &'static CStr) -> pg_sys::CustomScanMethods {
    pg_sys::CustomScanMethods { CustomName: name.as_ptr(), CreateCustomScanState: Some(create_state::<N>) }
}

static REGISTERED: OnceLock<Vec<&'static NodeMethods>> = OnceLock::new();

/// Register every node kind (at load time, once): their plan methods by
/// name, so plans copied to parallel workers find them, and their
/// executor methods for [`batch_source`].
pub fn register(scans: &[&'static SyncPtr<pg_sys::CustomScanMethods>], nodes: Vec<&'static NodeMethods>) {
    for s in scans {
        // SAFETY: a static table that lives as long as the process.
        unsafe { pg_sys::RegisterCustomScanMethods(&s.0) };
    }
    let _ = REGISTERED.set(nodes);
}

/// The batch interface of `child` (an initialized plan state), if it is a
/// vexec node that gives batches.
///
/// # Safety
/// `child` is a valid PlanState.
pub unsafe fn batch_source(child: *mut pg_sys::PlanState) -> Option<&'static BatchOps> {
    // SAFETY: `child` is a valid PlanState (caller); `methods` is read only
    // after the tag says it is a CustomScanState, and the node is ours (its
    // methods are registered) before `gives_batches` casts its state.
    unsafe {
        if (*child).type_ != pg_sys::NodeTag::T_CustomScanState {
            return None;
        }
        let methods = (*(child as *mut pg_sys::CustomScanState)).methods;
        let node = REGISTERED.get()?.iter().find(|m| ptr::eq(&m.exec, methods))?;
        let ops = node.batches.as_ref()?;
        (ops.gives_batches)(child.cast()).then_some(ops)
    }
}

impl BatchOps {
    /// # Safety
    /// `node` is the node these ops were found for ([`batch_source`]).
    pub unsafe fn next_batch(&self, node: *mut pg_sys::PlanState) -> Option<VectorBatch> {
        // SAFETY: these ops were found for `node` (caller).
        unsafe { (self.next_batch)(node.cast()) }
    }

    /// # Safety
    /// As `next_batch`, before the first batch.
    pub unsafe fn request_scaled(&self, node: *mut pg_sys::PlanState, target: usize) -> Option<u16> {
        // SAFETY: as next_batch.
        unsafe { (self.request_scaled)(node.cast(), target) }
    }

    /// # Safety
    /// As `next_batch`, before the first batch.
    pub unsafe fn defer(&self, node: *mut pg_sys::PlanState, needed: &[bool]) -> Vec<bool> {
        // SAFETY: as next_batch.
        unsafe { (self.defer)(node.cast(), needed) }
    }

    /// # Safety
    /// As `next_batch`, for the batch it returned last.
    pub unsafe fn complete(&self, node: *mut pg_sys::PlanState, rows: &[RowIdx]) -> Vec<(usize, Column)> {
        // SAFETY: as next_batch.
        unsafe { (self.complete)(node.cast(), rows) }
    }
}

/// The node as PostgreSQL allocates it: its CustomScanState, then our state.
#[repr(C)]
struct NodeBox<N> {
    css: pg_sys::CustomScanState,
    state: *mut N,
}

/// The Rust state of `node`, checked: `node` must be a CustomScanState of
/// kind `N` that has begun. A wrong cast is a bug; it becomes an ERROR here
/// (through the caller's `#[pg_guard]`), never a write into another node.
///
/// # Safety
/// `node` is a valid PlanState; the returned borrow ends before the state
/// is dropped (EndCustomScan or the query context's reset).
pub unsafe fn state<'a, N: VecNode>(node: *mut pg_sys::CustomScanState) -> &'a mut N {
    // SAFETY: `node` is a valid PlanState (caller); it is cast to a NodeBox<N>
    // only after its tag and methods say it is one, and its state pointer is
    // dereferenced only when set (begin ran, end and the reset callback did not).
    unsafe {
        // Every PlanState starts with its tag; `methods` is read only once the
        // tag says it is there.
        let ours = (*node).ss.ps.type_ == pg_sys::NodeTag::T_CustomScanState
            && ptr::eq((*node).methods, &N::methods().exec);
        if !ours {
            error!("vexec internal error: a plan node taken for a {} is not one", N::WHAT);
        }
        let state = (*(node as *mut NodeBox<N>)).state;
        if state.is_null() {
            error!("vexec internal error: {} used before it began", N::WHAT);
        }
        &mut *state
    }
}

// --- the trampolines: every entry point from PostgreSQL -----------------------
//
// SAFETY (all of them): PostgreSQL calls these only through a node's
// NodeMethods, with the node `create_state` made for kind N; `state::<N>`
// checks that before any cast.

#[pg_guard]
unsafe extern "C-unwind" fn create_state<N: VecNode>(cscan: *mut pg_sys::CustomScan) -> *mut pg_sys::Node {
    // SAFETY: PostgreSQL passes the plan node of these methods; palloc0 gives
    // a zeroed NodeBox (a null state) in the executor's memory.
    unsafe {
        let node = pg_sys::palloc0(std::mem::size_of::<NodeBox<N>>()) as *mut NodeBox<N>;
        (*node).css.ss.ps.type_ = pg_sys::NodeTag::T_CustomScanState;
        (*node).css.flags = (*cscan).flags;
        (*node).css.methods = &N::methods().exec;
        node as *mut pg_sys::Node
    }
}

/// Drops the Rust state when the query's memory context goes away without
/// EndCustomScan (an ERROR, a cancel).
#[pg_guard]
unsafe extern "C-unwind" fn drop_state<N: VecNode>(arg: *mut c_void) {
    // SAFETY: `arg` is the NodeBox<N> `begin` registered, alive as long as the
    // context being reset; the state is taken once (set to null).
    unsafe {
        let node = arg as *mut NodeBox<N>;
        if !(*node).state.is_null() {
            drop(Box::from_raw((*node).state));
            (*node).state = ptr::null_mut();
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn begin<N: VecNode>(
    node: *mut pg_sys::CustomScanState,
    estate: *mut pg_sys::EState,
    eflags: i32,
) {
    // SAFETY: PostgreSQL calls this with a node `create_state` made; the
    // state is dropped by `end` or by the query context's reset callback,
    // whichever comes first (each nulls the pointer).
    unsafe {
        let st = N::begin(node, estate, eflags);
        let boxed = node as *mut NodeBox<N>;
        (*boxed).state = Box::into_raw(st);
        crate::pgutil::on_context_reset((*estate).es_query_cxt, drop_state::<N>, boxed.cast());
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn exec<N: VecNode>(
    node: *mut pg_sys::CustomScanState,
) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: PostgreSQL calls ExecCustomScan with a node of this kind that has begun; state()
    // checks tag and methods before the cast.
    unsafe { state::<N>(node).exec(node) }
}

#[pg_guard]
unsafe extern "C-unwind" fn end<N: VecNode>(node: *mut pg_sys::CustomScanState) {
    // SAFETY: as `begin`: the state is taken once and dropped here.
    unsafe {
        let boxed = node as *mut NodeBox<N>;
        if (*boxed).state.is_null() {
            return;
        }
        let mut st = Box::from_raw((*boxed).state);
        (*boxed).state = ptr::null_mut();
        st.end(node);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn rescan<N: VecNode>(node: *mut pg_sys::CustomScanState) {
    // SAFETY: as in exec: a begun node of this kind.
    unsafe { state::<N>(node).rescan(node) }
}

#[pg_guard]
unsafe extern "C-unwind" fn explain<N: VecNode>(
    node: *mut pg_sys::CustomScanState,
    ancestors: *mut pg_sys::List,
    es: *mut pg_sys::ExplainState,
) {
    // SAFETY: as in exec; es is the running EXPLAIN.
    unsafe {
        if (*es).format == pg_sys::ExplainFormat::EXPLAIN_FORMAT_TEXT {
            rename_label(node, es);
        }
        state::<N>(node).explain(node, ancestors, es)
    }
}

/// Text EXPLAIN has just printed this node's label, "Custom Scan (VecAgg)":
/// give it the node's display name (`nodes::display_name`). Done here, per
/// node, so every printer of plans shows the same names: EXPLAIN,
/// auto_explain, anything else calling ExplainPrintPlan.
unsafe fn rename_label(node: *mut pg_sys::CustomScanState, es: *mut pg_sys::ExplainState) {
    // SAFETY: node is a live CustomScanState of a CustomScan plan; es->str holds len bytes at data.
    unsafe {
        let plan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
        let custom_name = CStr::from_ptr((*(*plan).methods).CustomName);
        let Some(display) = crate::nodes::display_name(custom_name) else { return };
        let label = format!("Custom Scan ({})", custom_name.to_string_lossy());
        let s = (*es).str_;
        let text = std::slice::from_raw_parts((*s).data as *const u8, (*s).len as usize);
        let Some(at) = text.windows(label.len()).rposition(|w| w == label.as_bytes()) else { return };
        let tail = text[at + label.len()..].to_vec();
        (*s).len = at as i32;
        *(*s).data.add(at) = 0;
        pg_sys::appendBinaryStringInfo(s, display.as_ptr().cast(), display.len() as i32);
        pg_sys::appendBinaryStringInfo(s, tail.as_ptr().cast(), tail.len() as i32);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn estimate_dsm<N: VecNode>(
    node: *mut pg_sys::CustomScanState,
    pcxt: *mut pg_sys::ParallelContext,
) -> pg_sys::Size {
    // SAFETY: as in exec; PostgreSQL passes the query's parallel context.
    unsafe { state::<N>(node).estimate_dsm(node, pcxt) }
}

#[pg_guard]
unsafe extern "C-unwind" fn initialize_dsm<N: VecNode>(
    node: *mut pg_sys::CustomScanState,
    pcxt: *mut pg_sys::ParallelContext,
    coordinate: *mut c_void,
) {
    // SAFETY: as in exec; coordinate is the DSM estimate_dsm sized.
    unsafe { state::<N>(node).initialize_dsm(node, pcxt, coordinate) }
}

#[pg_guard]
unsafe extern "C-unwind" fn reinitialize_dsm<N: VecNode>(
    node: *mut pg_sys::CustomScanState,
    pcxt: *mut pg_sys::ParallelContext,
    coordinate: *mut c_void,
) {
    // SAFETY: as in initialize_dsm.
    unsafe { state::<N>(node).reinitialize_dsm(node, pcxt, coordinate) }
}

#[pg_guard]
unsafe extern "C-unwind" fn initialize_worker<N: VecNode>(
    node: *mut pg_sys::CustomScanState,
    toc: *mut pg_sys::shm_toc,
    coordinate: *mut c_void,
) {
    // SAFETY: as in exec; in a worker, coordinate is the leader's DSM for this node.
    unsafe { state::<N>(node).initialize_worker(node, toc, coordinate) }
}

// The batch interface, type-erased (called by parents through BatchOps,
// inside their own guarded entry points).

unsafe fn gives_batches<N: BatchSource>(node: *mut pg_sys::CustomScanState) -> bool {
    // SAFETY: batch_source() calls this only for a registered vexec node of this kind, after it has
    // begun.
    unsafe { state::<N>(node).gives_batches(node) }
}

unsafe fn next_batch<N: BatchSource>(node: *mut pg_sys::CustomScanState) -> Option<VectorBatch> {
    // SAFETY: as in gives_batches; instrument, when set, is the node's own.
    unsafe {
        let instr = (*node).ss.ps.instrument;
        if !instr.is_null() {
            pg_sys::InstrStartNode(instr);
        }
        let batch = state::<N>(node).next_batch(node);
        if !instr.is_null() {
            pg_sys::InstrStopNode(instr, batch.as_ref().map_or(0.0, |b| b.rows.len() as f64));
        }
        batch
    }
}

unsafe fn request_scaled<N: BatchSource>(node: *mut pg_sys::CustomScanState, target: usize) -> Option<u16> {
    // SAFETY: as in gives_batches.
    unsafe { state::<N>(node).request_scaled(node, target) }
}

unsafe fn defer<N: BatchSource>(node: *mut pg_sys::CustomScanState, needed: &[bool]) -> Vec<bool> {
    // SAFETY: as in gives_batches.
    unsafe { state::<N>(node).defer(node, needed) }
}

unsafe fn complete<N: BatchSource>(
    node: *mut pg_sys::CustomScanState,
    rows: &[RowIdx],
) -> Vec<(usize, Column)> {
    // SAFETY: as in gives_batches.
    unsafe { state::<N>(node).complete(node, rows) }
}
