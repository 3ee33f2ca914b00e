//! VecScan: a scan of one base relation that reads batches and evaluates its
//! quals and target list on them.
//!
//! # Evaluation of a batch
//!
//! At executor start every qual (top-level conjunct) and every target entry
//! is compiled: to a kernel expression (`vexec_core::expr::VExpr`) when all
//! of its nodes have an exact kernel, else it stays a *fallback item* that
//! PostgreSQL's own evaluator (ExecQual / ExecEvalExpr) computes row by row.
//! The granularity is the whole top-level expression, on purpose: an error
//! raised inside a fallback step of a partly vectorized expression could not
//! be ordered against the kernel steps around it, and PostgreSQL's order of
//! errors is part of its semantics.
//!
//! A batch then goes through:
//!
//! ```text
//!  source -> kernel pass -------------------------> output rows
//!              | kernel reported an error   ^  no fallback items
//!              v                            |
//!            row mode                  fallback pass
//! ```
//!
//! 1. *Kernel pass.* The kernel quals run in order, each on the rows the
//!    previous ones kept; the kernel targets run on the rows left. Kernels
//!    never raise: where PostgreSQL would raise (overflow, division by zero)
//!    they report it.
//! 2. *Fallback pass* (only when there are fallback items). For each row that
//!    passed the kernel quals preceding the first fallback qual, in order:
//!    the quals in their original order (a kernel qual's result is looked up,
//!    a fallback qual is evaluated) up to the first false, then the fallback
//!    targets. That is the row executor's order (ExecScan), so volatile
//!    functions run as often as there, and errors are raised at the same row
//!    with the same message. Kernel results it relies on were computed on a
//!    superset of the rows it visits.
//! 3. *Row mode.* If a kernel reported an error (the kernel pass evaluated
//!    speculatively, so PostgreSQL might not even evaluate that row), the
//!    whole batch is evaluated by PostgreSQL's evaluator as in (2) with every
//!    item a fallback item, which produces exactly PostgreSQL's rows, or its
//!    error. A PARAM_EXEC whose InitPlan has not run yet also sends the batch
//!    to row mode, so the InitPlan runs when PostgreSQL would run it.
//!
//! # Memory and resources
//!
//! Rust state lives in a `ScanState` box owned by the node; EndCustomScan
//! drops it, and a reset callback on the query's memory context drops it if
//! the query ends with an ERROR instead. Buffer pins and the table scan are
//! PostgreSQL resources, released by the resource owner on ERROR. Per-batch
//! allocations (detoasted values, fallback results, copied values of the slot
//! reader) go to the node's per-tuple memory context, reset per batch.
//! Interrupts are checked for every page read and every batch.

use std::ffi::c_void;
use std::ptr;

use crate::exec::host::{FmgrCache, PgHost};
use crate::exec::layout::LayoutChoice;
use crate::exec::node::{self, BatchOps, BatchSource, NodeMethods, VecNode, VectorBatch};
use crate::pgutil::SyncPtr;
use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::batch::late::{self, TargetRead};
use vexec_core::batch::layout::ArrowKind;
use vexec_core::batch::{full_selection, Column, PhysType, RowIdx};
use vexec_core::expr::{self, EvalCtx, KernelError, VExpr};

use crate::expr::compile::Compiler;
use crate::pgutil::list_ptrs;
use crate::settings;
use crate::shim::{self, VxInput, VxQualItem, VxTargetItem};
use crate::source::{InputAttr, InputBatch, Source};

/// The name the methods are registered under (and JSON EXPLAIN shows).
use crate::nodes::SCAN as NAME;

enum QualItem {
    Kernel(VExpr),
    Fallback,
}

enum TargetItem {
    /// A plain column of the relation (batch input `index`).
    Input(usize),
    Kernel(VExpr),
    Fallback,
}

/// What the node computes, fixed at executor start.
struct Program {
    inputs: Vec<InputAttr>,
    quals: Vec<QualItem>,
    targets: Vec<TargetItem>,
    /// The physical type of each target's result (for the batch interface).
    target_phys: Vec<PhysType>,
    /// Parameter nodes kernels read, with their physical types.
    params: Vec<(*mut pg_sys::Param, PhysType)>,
    needs_tids: bool,
    /// Inputs the kernel quals read: read for every row. The others are
    /// read only for rows the kernel quals keep (late materialization).
    early: Vec<bool>,
    /// Subexpressions computed once per batch (see `EvalCtx::shared`).
    shared: Vec<VExpr>,
    /// The inputs a kernel reads: the ones put in the arrow layout (the
    /// nodes above a scan and PostgreSQL's evaluator read the postgres
    /// layout, so converting the others would only be converted back).
    kernel_inputs: Vec<bool>,
    /// The kernel packs' functions the kernels call (`pack: name(args)`).
    packs: Vec<String>,
}

impl Program {
    /// Recompute `shared` and `kernel_inputs` after the kernel expressions change.
    fn kernels_changed(&mut self) {
        let quals =
            self.quals.iter().filter_map(|q| if let QualItem::Kernel(e) = q { Some(e) } else { None });
        let targets =
            self.targets.iter().filter_map(|t| if let TargetItem::Kernel(e) = t { Some(e) } else { None });
        let kernels: Vec<&VExpr> = quals.chain(targets).collect();
        self.shared = expr::shared_subexpressions(kernels.iter().copied());
        let mut cols = Vec::new();
        kernels.iter().for_each(|e| e.columns(&mut cols));
        self.kernel_inputs = vec![false; self.inputs.len()];
        cols.into_iter().for_each(|i| self.kernel_inputs[i] = true);
    }

    fn has_fallback(&self) -> bool {
        self.quals.iter().any(|q| matches!(q, QualItem::Fallback))
            || self.targets.iter().any(|t| matches!(t, TargetItem::Fallback))
    }

    /// (kernel quals, kernel steps, fallback quals, kernel targets, fallback targets)
    fn counts(&self) -> (usize, usize, usize, usize, usize) {
        let kq: Vec<&VExpr> = self
            .quals
            .iter()
            .filter_map(|q| if let QualItem::Kernel(e) = q { Some(e) } else { None })
            .collect();
        let steps = kq.iter().map(|e| e.steps()).sum::<usize>()
            + self
                .targets
                .iter()
                .map(|t| if let TargetItem::Kernel(e) = t { e.steps() } else { 0 })
                .sum::<usize>();
        let kt = self.targets.iter().filter(|t| matches!(t, TargetItem::Kernel(_))).count();
        let ft = self.targets.iter().filter(|t| matches!(t, TargetItem::Fallback)).count();
        (kq.len(), steps, self.quals.len() - kq.len(), kt, ft)
    }
}

/// One output column of the current batch.
enum OutCol {
    Input(usize),
    Kernel(Column),
    Datums { values: Vec<usize>, isnull: Vec<bool> },
}

#[derive(Default)]
struct Stats {
    batches: u64,
    rows_in: u64,
    rows_out: u64,
    row_mode_batches: u64,
    /// Input columns of batches put in the arrow layout.
    arrow_columns: u64,
    /// Arrow columns converted back for a kernel that reads the postgres layout.
    conversions: u64,
    /// Rows whose deferred columns a parent had read (`BatchSource::complete`).
    deferred_rows: u64,
}

pub struct ScanState {
    // --- properties ---
    program: Program,
    capacity: usize,
    /// The node (for its instrumentation, which EXPLAIN ANALYZE reads).
    node: *mut pg_sys::CustomScanState,
    // --- resources ---
    rel: pg_sys::Relation,
    source: Option<Source>,
    econtext: *mut pg_sys::ExprContext,
    eval_slot: *mut pg_sys::TupleTableSlot,
    qual_states: Vec<*mut pg_sys::ExprState>,
    target_states: Vec<*mut pg_sys::ExprState>,
    target_copy_typlen: Vec<i16>,
    param_states: Vec<*mut pg_sys::ExprState>,
    /// Which input columns go to the arrow layout.
    layout: LayoutChoice,
    // --- batch state ---
    input: InputBatch,
    params: Vec<Option<usize>>,
    /// Datums of every input column (for the evaluator's slot).
    datum_inputs: Vec<Vec<usize>>,
    /// Per qual, the kernel's verdict per row (1 = true).
    kernel_quals: Vec<Vec<u8>>,
    /// Pack functions' fmgr lookups (in the query's memory context).
    fmgr: FmgrCache,
    out: Vec<OutCol>,
    out_rows: Vec<RowIdx>,
    out_pos: usize,
    /// Per target, whether a vector parent reads it late (`BatchSource::defer`):
    /// an input column that the source reads only for the rows the parent
    /// names. Empty when nothing is deferred.
    deferred: Vec<bool>,
    /// The current batch's deferred columns are unread (a row-mode batch
    /// reads every column).
    pending: bool,
    stats: Stats,
}

static METHODS: NodeMethods = NodeMethods::new::<ScanState>(NAME, true, Some(BatchOps::of::<ScanState>()));
static SCAN_METHODS: SyncPtr<pg_sys::CustomScanMethods> = SyncPtr(node::scan_methods::<ScanState>(NAME));

pub fn scan_methods() -> *const pg_sys::CustomScanMethods {
    &SCAN_METHODS.0
}

/// What `exec::register` registers of VecScan.
pub fn methods() -> (&'static SyncPtr<pg_sys::CustomScanMethods>, &'static NodeMethods) {
    (&SCAN_METHODS, &METHODS)
}

impl VecNode for ScanState {
    const WHAT: &'static str = "VecScan";

    fn methods() -> &'static NodeMethods {
        &METHODS
    }

    unsafe fn begin(
        node: *mut pg_sys::CustomScanState,
        estate: *mut pg_sys::EState,
        eflags: i32,
    ) -> Box<Self> {
        // SAFETY: VecNode::begin's contract: node is a VecScan's CustomScanState being begun by the
        // executor, so its plan is our CustomScan and its relation is open.
        unsafe {
            let cscan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
            let rel = (*node).ss.ss_currentRelation;
            let program = compile_program(cscan, rel);
            let ps = &mut (*node).ss.ps as *mut pg_sys::PlanState;

            // Fallback expressions read a virtual slot we fill from the batch;
            // tell the expression compiler so (it must not assume heap tuples).
            (*ps).scanops = &pg_sys::TTSOpsVirtual;
            (*ps).scanopsfixed = true;
            (*ps).scanopsset = true;
            let eval_slot = pg_sys::ExecInitExtraTupleSlot(estate, (*rel).rd_att, &pg_sys::TTSOpsVirtual);
            (*eval_slot).tts_tableOid = (*rel).rd_id;

            let mut qual_states = Vec::new();
            for q in list_ptrs::<pg_sys::Node>((*cscan).scan.plan.qual) {
                let one = pg_sys::lappend(ptr::null_mut(), q.cast());
                qual_states.push(pg_sys::ExecInitQual(one, ps));
            }
            let mut target_states = Vec::new();
            let mut target_copy_typlen = Vec::new();
            for te in list_ptrs::<pg_sys::TargetEntry>((*cscan).scan.plan.targetlist) {
                target_states.push(pg_sys::ExecInitExpr((*te).expr, ps));
                // A SubPlan's by-reference result lives only until its next
                // evaluation (ExecScanSubPlan frees its current tuple).
                let typid = pg_sys::exprType((*te).expr.cast());
                let by_ref = !pg_sys::get_typbyval(typid);
                let copy = by_ref && pg_sys::contain_subplans((*te).expr.cast());
                target_copy_typlen.push(if copy { pg_sys::get_typlen(typid) } else { 0 });
            }
            let param_states =
                program.params.iter().map(|(p, _)| pg_sys::ExecInitExpr(p.cast(), ps)).collect();

            let capacity = settings::DEBUG_BATCH_SIZE.get() as usize;
            let input = InputBatch::new(&program.inputs, capacity, program.needs_tids);
            let attnums: Vec<i16> = program.inputs.iter().map(|a| a.attnum).collect();
            let layout = LayoutChoice::for_attributes((*rel).rd_att, &attnums);
            let nq = program.quals.len();
            let st = Box::new(ScanState {
                capacity,
                node,
                rel,
                source: None,
                econtext: (*node).ss.ps.ps_ExprContext,
                eval_slot,
                qual_states,
                target_states,
                target_copy_typlen,
                param_states,
                input,
                layout,
                params: vec![None; program.params.len()],
                datum_inputs: vec![vec![0; capacity]; program.inputs.len()],
                kernel_quals: vec![vec![0; capacity]; nq],
                fmgr: FmgrCache::new(),
                out: Vec::new(),
                out_rows: Vec::new(),
                out_pos: 0,
                deferred: Vec::new(),
                pending: false,
                stats: Stats::default(),
                program,
            });
            let mut st = st;
            let parallel = (*(*node).ss.ps.plan).parallel_aware;
            if eflags & pg_sys::EXEC_FLAG_EXPLAIN_ONLY as i32 == 0 && !parallel {
                st.open_source(shim::vx_begin_scan(rel, (*estate).es_snapshot));
            }
            st
        }
    }

    unsafe fn exec(&mut self, node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
        // SAFETY: VecNode::exec's contract: node is this state's node; its result slot and
        // expression context live as long as the node.
        unsafe {
            let slot = (*node).ss.ps.ps_ResultTupleSlot;
            if self.source.is_none() {
                // A parallel-aware plan run without a parallel context.
                let estate = (*node).ss.ps.state;
                let rel = self.rel;
                self.open_source(shim::vx_begin_scan(rel, (*estate).es_snapshot));
            }
            let st = self;
            loop {
                if st.out_pos < st.out_rows.len() {
                    let row = st.out_rows[st.out_pos] as usize;
                    st.out_pos += 1;
                    st.store_row(slot, row);
                    return slot;
                }
                if !st.next_batch() {
                    pg_sys::ExecClearTuple(slot);
                    return slot;
                }
                // (Deferral is for parents that read batches; rows read
                // through the slot have every column.)
                if st.pending {
                    let rows = st.out_rows.clone();
                    st.read_deferred(&rows);
                }
            }
        }
    }

    unsafe fn end(&mut self, _node: *mut pg_sys::CustomScanState) {
        if let Some(mut s) = self.source.take() {
            s.end();
        }
    }

    unsafe fn rescan(&mut self, _node: *mut pg_sys::CustomScanState) {
        if let Some(s) = self.source.as_mut() {
            s.rescan();
        }
        self.out_rows.clear();
        self.out_pos = 0;
    }

    unsafe fn explain(
        &mut self,
        _node: *mut pg_sys::CustomScanState,
        _ancestors: *mut pg_sys::List,
        es: *mut pg_sys::ExplainState,
    ) {
        // SAFETY: VecNode::explain's contract: es is the running EXPLAIN.
        unsafe {
            let st = self;
            let (kq, steps, fq, kt, ft) = st.program.counts();
            let prop = |label: &std::ffi::CStr, value: String| crate::pgutil::explain_text(es, label, &value);
            if (*es).verbose {
                prop(c"Vector Quals", format!("{kq} kernel, {fq} fallback"));
                prop(c"Vector Targets", format!("{kt} kernel, {ft} fallback"));
                if !st.program.packs.is_empty() {
                    prop(c"Pack Kernels", st.program.packs.join(", "));
                }
                pg_sys::ExplainPropertyInteger(c"Kernel Steps".as_ptr(), ptr::null(), steps as i64, es);
                let source = match &st.source {
                    Some(s) if !s.is_heap() => "table access method slots",
                    _ => "heap pages",
                };
                prop(c"Vector Source", source.to_string());
                if st.layout.any() {
                    prop(c"Batch Layout", st.layout.describe(&st.program.kernel_inputs));
                }
            }
            if (*es).analyze {
                pg_sys::ExplainPropertyInteger(c"Batches".as_ptr(), ptr::null(), st.stats.batches as i64, es);
                if let Some((pages, _)) = st.source.as_ref().and_then(|s| s.stats()) {
                    pg_sys::ExplainPropertyInteger(c"Heap Pages".as_ptr(), ptr::null(), pages as i64, es);
                }
                if let Some(direct) =
                    st.source.as_ref().and_then(|s| s.direct_pins()).filter(|_| (*es).verbose)
                {
                    pg_sys::ExplainPropertyInteger(
                        c"Pages Pinned Directly".as_ptr(),
                        ptr::null(),
                        direct as i64,
                        es,
                    );
                }
                if (*es).verbose && st.layout.any() {
                    let arrow = st.stats.arrow_columns as i64;
                    pg_sys::ExplainPropertyInteger(c"Arrow Columns".as_ptr(), ptr::null(), arrow, es);
                    let conversions = st.stats.conversions as i64;
                    pg_sys::ExplainPropertyInteger(
                        c"Layout Conversions".as_ptr(),
                        ptr::null(),
                        conversions,
                        es,
                    );
                }
                if (*es).verbose && !st.deferred.is_empty() {
                    let names: Vec<String> = st
                        .program
                        .targets
                        .iter()
                        .zip(&st.deferred)
                        .filter_map(|(t, &d)| match t {
                            TargetItem::Input(i) if d => Some(st.program.inputs[*i].attnum),
                            _ => None,
                        })
                        .map(|attnum| {
                            let name = pg_sys::get_attname((*st.rel).rd_id, attnum, false);
                            std::ffi::CStr::from_ptr(name).to_string_lossy().into_owned()
                        })
                        .collect();
                    prop(c"Deferred Columns", names.join(", "));
                    let rows = st.stats.deferred_rows as i64;
                    pg_sys::ExplainPropertyInteger(c"Deferred Rows Read".as_ptr(), ptr::null(), rows, es);
                }
                if st.stats.row_mode_batches > 0 || (*es).verbose {
                    pg_sys::ExplainPropertyInteger(
                        c"Row-Mode Batches".as_ptr(),
                        ptr::null(),
                        st.stats.row_mode_batches as i64,
                        es,
                    );
                }
            }
        }
    }

    unsafe fn estimate_dsm(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        _pcxt: *mut pg_sys::ParallelContext,
    ) -> pg_sys::Size {
        // SAFETY: the DSM callback's contract: node's relation is open and its EState has a
        // snapshot.
        unsafe {
            let estate = (*node).ss.ps.state;
            pg_sys::table_parallelscan_estimate((*node).ss.ss_currentRelation, (*estate).es_snapshot)
        }
    }

    unsafe fn initialize_dsm(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        _pcxt: *mut pg_sys::ParallelContext,
        coordinate: *mut c_void,
    ) {
        // SAFETY: the DSM callback's contract: coordinate is the shared memory estimate_dsm sized
        // for this relation's parallel scan.
        unsafe {
            let estate = (*node).ss.ps.state;
            let rel = (*node).ss.ss_currentRelation;
            let pscan = coordinate as pg_sys::ParallelTableScanDesc;
            pg_sys::table_parallelscan_initialize(rel, pscan, (*estate).es_snapshot);
            self.open_source(shim::vx_begin_parallel_scan(rel, pscan));
        }
    }

    unsafe fn reinitialize_dsm(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        _pcxt: *mut pg_sys::ParallelContext,
        coordinate: *mut c_void,
    ) {
        // SAFETY: coordinate is the parallel scan descriptor initialize_dsm set up for this
        // relation.
        unsafe {
            pg_sys::table_parallelscan_reinitialize((*node).ss.ss_currentRelation, coordinate as _);
        }
    }

    unsafe fn initialize_worker(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        _toc: *mut pg_sys::shm_toc,
        coordinate: *mut c_void,
    ) {
        // SAFETY: coordinate is the leader's parallel scan descriptor of this relation
        // (initialize_dsm); the begin can ERROR, through the shim's guarded declaration.
        unsafe {
            let rel = (*node).ss.ss_currentRelation;
            self.open_source(shim::vx_begin_parallel_scan(rel, coordinate as _));
        }
    }
}

impl BatchSource for ScanState {
    unsafe fn next_batch(&mut self, node: *mut pg_sys::CustomScanState) -> Option<VectorBatch> {
        // SAFETY: BatchSource's contract: node is this VecScan's node and has begun.
        unsafe { next_vector_batch(node) }
    }

    unsafe fn request_scaled(&mut self, node: *mut pg_sys::CustomScanState, target: usize) -> Option<u16> {
        // SAFETY: as next_batch.
        unsafe { request_scaled(node, target) }
    }

    unsafe fn defer(&mut self, _node: *mut pg_sys::CustomScanState, needed: &[bool]) -> Vec<bool> {
        self.defer_targets(needed);
        self.deferred.clone()
    }

    unsafe fn complete(
        &mut self,
        _node: *mut pg_sys::CustomScanState,
        rows: &[RowIdx],
    ) -> Vec<(usize, Column)> {
        if !self.pending {
            return Vec::new();
        }
        self.read_deferred(rows);
        let targets = self.program.targets.iter().enumerate().filter(|&(t, _)| self.deferred[t]);
        targets
            .filter_map(|(t, item)| match item {
                TargetItem::Input(i) => Some((t, self.input.batch_column(*i))),
                _ => None,
            })
            .collect()
    }
}

impl ScanState {
    /// Defer the targets `needed` does not name (`BatchSource::defer`;
    /// which ones: `vexec_core::batch::late::deferral`). Nothing is
    /// deferred once a batch was read, or when PostgreSQL's evaluator has
    /// items (it reads every input column from its slot).
    fn defer_targets(&mut self, needed: &[bool]) {
        let p = &self.program;
        if self.stats.batches > 0 || p.has_fallback() {
            return;
        }
        let mut qual_inputs = Vec::new();
        for q in &p.quals {
            if let QualItem::Kernel(e) = q {
                e.columns(&mut qual_inputs);
            }
        }
        let mut targets = Vec::with_capacity(p.targets.len());
        for t in &p.targets {
            targets.push(match t {
                TargetItem::Input(i) => TargetRead::Input(*i),
                TargetItem::Kernel(e) => {
                    let mut inputs = Vec::new();
                    e.columns(&mut inputs);
                    TargetRead::Computed(inputs)
                }
                TargetItem::Fallback => return,
            });
        }
        let attnums: Vec<i16> = p.inputs.iter().map(|a| a.attnum).collect();
        let Some((deferred, early)) = late::deferral(&attnums, &qual_inputs, &targets, needed) else {
            return;
        };
        self.program.early = early;
        if let Some(source) = self.source.as_mut() {
            // SAFETY: no batch was read (checked above); the input batch is the one the source was
            // opened on.
            unsafe { source.set_early(&self.program.inputs, &self.program.early, &mut self.input) };
        }
        self.deferred = deferred;
    }

    /// Read the deferred columns of the current batch for `rows`.
    fn read_deferred(&mut self, rows: &[RowIdx]) {
        self.pending = false;
        self.stats.deferred_rows += rows.len() as u64;
        if let Some(s) = self.source.as_mut() {
            // SAFETY: the per-batch context is the node's live one (the slot reader copies
            // nothing here: it reads every column early).
            let old = unsafe { pg_sys::MemoryContextSwitchTo((*self.econtext).ecxt_per_tuple_memory) };
            s.deform_late(rows);
            // SAFETY: switching back to the caller's context.
            unsafe { pg_sys::MemoryContextSwitchTo(old) };
        }
    }
}

unsafe fn state<'a>(node: *mut pg_sys::CustomScanState) -> &'a mut ScanState {
    // SAFETY: node::state checks the node's tag and methods before the cast; the caller passes a
    // node that lives for 'a.
    unsafe { node::state::<ScanState>(node) }
}

/// Compile the plan's quals and target list.
unsafe fn compile_program(cscan: *mut pg_sys::CustomScan, rel: pg_sys::Relation) -> Program {
    // SAFETY: cscan is this VecScan's plan and rel its open relation (caller's contract); the
    // compiler reads only plan nodes.
    unsafe {
        let scanrelid = (*cscan).scan.scanrelid;
        let mut c = Compiler::new(scanrelid);
        let force_fallback = settings::DEBUG_FORCE_FALLBACK.get();
        let mut quals = Vec::new();
        for q in list_ptrs::<pg_sys::Node>((*cscan).scan.plan.qual) {
            let k = if force_fallback { None } else { c.compile(q) };
            quals.push(k.map_or(QualItem::Fallback, QualItem::Kernel));
        }
        let mut targets = Vec::new();
        let mut target_phys = Vec::new();
        for te in list_ptrs::<pg_sys::TargetEntry>((*cscan).scan.plan.targetlist) {
            let e = (*te).expr as *mut pg_sys::Node;
            target_phys.push(crate::expr::compile::phys_of(pg_sys::exprType(e)).0);
            let item = if (*e).type_ == pg_sys::NodeTag::T_Var
                && (*(e as *mut pg_sys::Var)).varno as u32 == scanrelid
                && (*(e as *mut pg_sys::Var)).varattno > 0
            {
                let v = e as *mut pg_sys::Var;
                TargetItem::Input(c.input((*v).varattno, (*v).vartype))
            } else if force_fallback {
                TargetItem::Fallback
            } else {
                c.compile(e).map_or(TargetItem::Fallback, TargetItem::Kernel)
            };
            targets.push(item);
        }
        // Every attribute any item reads is an input: the evaluator's slot
        // is filled from the batch (in row mode for all items).
        let mut needs_tids = false;
        let nodes = [
            (*cscan).scan.plan.qual as *mut pg_sys::Node,
            (*cscan).scan.plan.targetlist as *mut pg_sys::Node,
        ];
        for attnum in crate::pgutil::attnums(&nodes, scanrelid) {
            if attnum > 0 {
                c.input(attnum as i16, pg_sys::get_atttype((*rel).rd_id, attnum as i16));
            } else if attnum == pg_sys::SelfItemPointerAttributeNumber {
                needs_tids = true;
            }
        }
        // The C reader wants its columns in attribute order; remap indexes.
        let mut order: Vec<usize> = (0..c.inputs.len()).collect();
        order.sort_by_key(|&i| c.inputs[i].attnum);
        let mut new_index = vec![0; order.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = new;
        }
        let inputs: Vec<InputAttr> = order.iter().map(|&i| c.inputs[i]).collect();
        for q in quals.iter_mut() {
            if let QualItem::Kernel(e) = q {
                e.remap_columns(&new_index);
            }
        }
        for t in targets.iter_mut() {
            match t {
                TargetItem::Kernel(e) => e.remap_columns(&new_index),
                TargetItem::Input(i) => *i = new_index[*i],
                TargetItem::Fallback => {}
            }
        }
        let params = c.params.iter().map(|p| (p.param, p.phys)).collect();
        let mut early = vec![false; inputs.len()];
        for q in &quals {
            if let QualItem::Kernel(e) = q {
                let mut cols = Vec::new();
                e.columns(&mut cols);
                cols.into_iter().for_each(|i| early[i] = true);
            }
        }
        let attnums: Vec<i16> = inputs.iter().map(|a| a.attnum).collect();
        late::read_walked_early(&attnums, &mut early);
        // Without a kernel qual every row is kept: a second walk over the
        // page for the late columns would only cost (the aggregation
        // benchmark's A1 spent a fifth of its scan there).
        if !quals.iter().any(|q| matches!(q, QualItem::Kernel(_))) {
            early.iter_mut().for_each(|e| *e = true);
        }
        let packs = std::mem::take(&mut c.packs);
        let mut p = Program {
            inputs,
            quals,
            targets,
            target_phys,
            params,
            needs_tids,
            early,
            shared: vec![],
            kernel_inputs: vec![],
            packs,
        };
        p.kernels_changed();
        p
    }
}

impl ScanState {
    /// Read batches from table scan `scan` (begun by the shim).
    ///
    /// # Safety
    /// `scan` is a scan of this node's relation.
    unsafe fn open_source(&mut self, scan: pg_sys::TableScanDesc) {
        // SAFETY: this function's contract: scan is a scan of this node's relation; the batch it
        // fills is this state's own.
        let source = unsafe {
            Source::new(scan, &self.program.inputs, &self.program.early, &mut self.input, self.capacity)
        };
        self.source = Some(source);
    }
}

impl ScanState {
    /// Read and evaluate the next batch that has output rows; false at the end.
    unsafe fn next_batch(&mut self) -> bool {
        // SAFETY: the source, slot and econtext are this state's, alive while the node runs;
        // interrupts are checked per batch.
        unsafe {
            loop {
                check_for_interrupts!();
                let Some(source) = self.source.as_mut() else { return false };
                // Per-batch memory: detoasted values, fallback results, copies,
                // numerics converted from Decimal128, pack functions' results.
                pg_sys::MemoryContextReset((*self.econtext).ecxt_per_tuple_memory);
                self.input.restore();
                let old = pg_sys::MemoryContextSwitchTo((*self.econtext).ecxt_per_tuple_memory);
                let more = source.next(&mut self.input, self.capacity);
                pg_sys::MemoryContextSwitchTo(old);
                if !more {
                    return false;
                }
                self.stats.batches += 1;
                self.stats.rows_in += self.input.len as u64;
                self.to_arrow(true, &full_selection(self.input.len));
                let ok = self.eval_params().and_then(|_| {
                    let old = pg_sys::MemoryContextSwitchTo((*self.econtext).ecxt_per_tuple_memory);
                    let ok = self.kernel_pass();
                    pg_sys::MemoryContextSwitchTo(old);
                    ok
                });
                self.pending = false;
                match ok {
                    Ok(rows) => {
                        if self.program.has_fallback() {
                            self.fallback_pass(rows, false);
                        }
                        self.pending = !self.deferred.is_empty();
                    }
                    Err(_) => {
                        // PostgreSQL's evaluator reads the Datums the source filled.
                        self.stats.row_mode_batches += 1;
                        self.input.restore();
                        let all = full_selection(self.input.len);
                        if let Some(s) = self.source.as_mut() {
                            s.deform_late(&all);
                        }
                        self.fallback_pass(FallbackRows { rows: all }, true);
                    }
                }
                self.out_pos = 0;
                self.stats.rows_out += self.out_rows.len() as u64;
                // "Rows Removed by Filter" of EXPLAIN ANALYZE (InstrCountFiltered1).
                let instr = (*self.node).ss.ps.instrument;
                if !instr.is_null() {
                    (*instr).nfiltered1 += (self.input.len - self.out_rows.len()) as f64;
                }
                if !self.out_rows.is_empty() {
                    return true;
                }
            }
        }
    }

    /// Parameter values for this batch. An InitPlan's output that is not
    /// computed yet sends the batch to row mode, where it runs in its turn.
    fn eval_params(&mut self) -> Result<(), KernelError> {
        for i in 0..self.program.params.len() {
            let (p, _) = self.program.params[i];
            // SAFETY: p is a Param node of this plan (compile_program collected them); econtext is
            // the node's live expression context.
            unsafe {
                if (*p).paramkind == pg_sys::ParamKind::PARAM_EXEC
                    && !shim::vx_param_exec_ready(self.econtext, (*p).paramid)
                {
                    return Err(KernelError { row: 0 });
                }
                let (state, econtext) = (self.param_states[i], self.econtext);
                let mut isnull = false;
                let d = shim::vx_eval_scalar(state, econtext, &mut isnull);
                self.params[i] = (!isnull).then_some(d);
            }
        }
        Ok(())
    }

    /// Kernel quals in order, the late columns of the rows they keep, then
    /// kernel targets. Returns the rows for the fallback pass.
    fn kernel_pass(&mut self) -> Result<FallbackRows, KernelError> {
        let mut cur = full_selection(self.input.len);
        let mut before_fallback: Option<Vec<RowIdx>> = None;
        let mut host = PgHost { fmgr: &mut self.fmgr };
        {
            // SAFETY: the batch's Datum columns point into pinned pages or
            // the batch's memory context, its by-reference params and the
            // program's constants into the plan's; all outlive the context.
            let mut ctx = unsafe {
                EvalCtx::new(
                    &self.input.columns,
                    &self.params,
                    self.capacity,
                    &mut host,
                    &self.program.shared,
                )
            };
            let fallback_quals = self.program.quals.iter().any(|q| matches!(q, QualItem::Fallback));
            if fallback_quals {
                for (qi, q) in self.program.quals.iter().enumerate() {
                    match q {
                        QualItem::Fallback => {
                            before_fallback.get_or_insert_with(|| cur.clone());
                        }
                        QualItem::Kernel(e) => {
                            // The fallback pass looks up this qual's verdict per row.
                            let res = &mut self.kernel_quals[qi];
                            cur.iter().for_each(|&r| res[r as usize] = 0);
                            expr::filter(e, &mut ctx, &mut cur)?;
                            cur.iter().for_each(|&r| res[r as usize] = 1);
                        }
                    }
                }
            } else {
                // Only kernels: in order, neighbouring comparisons fused.
                let quals: Vec<&VExpr> = self
                    .program
                    .quals
                    .iter()
                    .filter_map(|q| if let QualItem::Kernel(e) = q { Some(e) } else { None })
                    .collect();
                expr::filter_all(&quals, &mut ctx, &mut cur)?;
            }
            self.stats.conversions += ctx.conversions;
        }
        // Late columns, for the rows that may still produce output (the
        // deferred ones wait for the parent's rows).
        let rows = before_fallback.unwrap_or_else(|| cur.clone());
        if let Some(s) = self.source.as_mut().filter(|_| self.deferred.is_empty()) {
            s.deform_late(&rows);
        }
        self.to_arrow(false, &rows);
        let mut host = PgHost { fmgr: &mut self.fmgr };
        // SAFETY: as for the quals above.
        let mut ctx = unsafe {
            EvalCtx::new(&self.input.columns, &self.params, self.capacity, &mut host, &self.program.shared)
        };
        self.out.clear();
        for t in &self.program.targets {
            self.out.push(match t {
                TargetItem::Input(i) => OutCol::Input(*i),
                TargetItem::Kernel(e) => OutCol::Kernel(expr::eval(e, &mut ctx, &cur)?),
                TargetItem::Fallback => {
                    OutCol::Datums { values: vec![0; self.capacity], isnull: vec![true; self.capacity] }
                }
            });
        }
        self.stats.conversions += ctx.conversions;
        self.out_rows = cur;
        Ok(FallbackRows { rows })
    }

    /// Put input columns in the arrow layout chosen for this batch, from
    /// their values of the rows `rows` (which the source has filled). Before
    /// the quals (`before_quals`), the early columns of the fixed-width
    /// representations (a pass of shifts); after them, the late columns and
    /// the numerics, whose decoding costs what the numeric kernels' does:
    /// only for the rows the quals kept (quals read numerics as varlenas).
    fn to_arrow(&mut self, before_quals: bool, rows: &[RowIdx]) {
        if !self.layout.any() || rows.is_empty() {
            return;
        }
        let (kernel_inputs, early) = (&self.program.kernel_inputs, &self.program.early);
        let layout = &self.layout;
        let now = |i: usize| {
            let numeric = matches!(layout.kind_of(i), Some(ArrowKind::Decimal128 { .. }));
            kernel_inputs[i] && before_quals == (early[i] && !numeric)
        };
        let due: Vec<usize> = (0..self.program.inputs.len()).filter(|&i| now(i)).collect();
        for i in due {
            if let Some(kind) = self.layout.next(i) {
                // SAFETY: the source filled the rows' values; a numeric
                // column's Datums point to varlenas (in pinned pages or the
                // batch's memory).
                if unsafe { self.input.to_arrow(i, kind, rows) } {
                    self.stats.arrow_columns += 1;
                }
            }
        }
    }

    /// PostgreSQL's evaluator over `rows.rows`, in the row executor's order
    /// (see the module comment). `row_mode`: every item is evaluated by
    /// PostgreSQL, kernel results are not used.
    fn fallback_pass(&mut self, rows: FallbackRows, row_mode: bool) {
        let cap = self.capacity;
        // The evaluator reads Datums of every input column.
        for i in 0..self.input.columns.len() {
            let (values, d) = (self.input.postgres_values(i), &mut self.datum_inputs[i]);
            for &r in &rows.rows {
                d[r as usize] = values.datum(r as usize);
            }
        }
        let inputs: Vec<VxInput> = self
            .program
            .inputs
            .iter()
            .enumerate()
            .map(|(i, a)| VxInput {
                attnum: a.attnum as i32,
                values: self.datum_inputs[i].as_ptr(),
                validity: self.input.columns[i].validity.as_bytes().as_ptr(),
            })
            .collect();
        // Without fallback quals the rows have passed every (kernel) qual.
        let any_fallback_qual = self.program.quals.iter().any(|q| matches!(q, QualItem::Fallback));
        let quals: Vec<VxQualItem> = self
            .program
            .quals
            .iter()
            .enumerate()
            .filter(|_| row_mode || any_fallback_qual)
            .map(|(i, q)| match q {
                QualItem::Kernel(_) if !row_mode => {
                    VxQualItem { state: ptr::null_mut(), kernel_result: self.kernel_quals[i].as_ptr() }
                }
                _ => VxQualItem { state: self.qual_states[i], kernel_result: ptr::null() },
            })
            .collect();
        if row_mode {
            self.out = (0..self.program.targets.len())
                .map(|_| OutCol::Datums { values: vec![0; cap], isnull: vec![true; cap] })
                .collect();
        }
        let targets: Vec<VxTargetItem> = self
            .out
            .iter_mut()
            .enumerate()
            .map(|(i, o)| match o {
                OutCol::Datums { values, isnull } => VxTargetItem {
                    state: self.target_states[i],
                    values: values.as_mut_ptr(),
                    isnull: isnull.as_mut_ptr(),
                    copy_typlen: self.target_copy_typlen[i],
                },
                _ => VxTargetItem {
                    state: ptr::null_mut(),
                    values: ptr::null_mut(),
                    isnull: ptr::null_mut(),
                    copy_typlen: 0,
                },
            })
            .collect();
        let tids = if self.input.tids.is_empty() { ptr::null() } else { self.input.tids.as_ptr() };
        let mut passing = vec![0u16; rows.rows.len()];
        let (econtext, slot) = (self.econtext, self.eval_slot);
        // SAFETY: the shim's row evaluation gets the node's live econtext and slot, and arrays
        // sized for `rows` (passing, tids) that outlive the call; it can ERROR through its guarded
        // declaration.
        let n = unsafe {
            shim::vx_eval_rows(
                econtext,
                slot,
                inputs.len() as i32,
                inputs.as_ptr(),
                tids,
                rows.rows.len() as i32,
                rows.rows.as_ptr(),
                quals.len() as i32,
                quals.as_ptr(),
                targets.len() as i32,
                targets.as_ptr(),
                passing.as_mut_ptr(),
            )
        };
        passing.truncate(n as usize);
        self.out_rows = passing;
    }

    /// Put output row `row` into the node's result slot.
    unsafe fn store_row(&self, slot: *mut pg_sys::TupleTableSlot, row: usize) {
        // SAFETY: slot is the node's result slot and row an index below the batch's row count
        // (caller's contract).
        unsafe {
            if (*slot).tts_flags & pg_sys::TTS_FLAG_SHOULDFREE as u16 != 0 {
                pg_sys::ExecClearTuple(slot);
            }
            let values = (*slot).tts_values;
            let isnull = (*slot).tts_isnull;
            for (t, o) in self.out.iter().enumerate() {
                let (d, null) = match o {
                    OutCol::Input(i) => {
                        let valid = self.input.columns[*i].is_valid(row);
                        (self.input.postgres_values(*i).datum(row), !valid)
                    }
                    OutCol::Kernel(c) => (c.values.datum(row), !c.is_valid(row)),
                    OutCol::Datums { values, isnull } => (values[row], isnull[row]),
                };
                *values.add(t) = pg_sys::Datum::from(d);
                *isnull.add(t) = null;
            }
            (*slot).tts_flags &= !(pg_sys::TTS_FLAG_EMPTY as u16);
            (*slot).tts_nvalid = self.out.len() as i16;
        }
    }
}

impl ScanState {
    /// The current batch's output as columns.
    fn take_batch(&mut self) -> VectorBatch {
        let out = std::mem::take(&mut self.out);
        let columns = out
            .into_iter()
            .zip(&self.program.target_phys)
            .map(|(o, &phys)| match o {
                OutCol::Input(i) => self.input.batch_column(i),
                OutCol::Kernel(c) => c,
                OutCol::Datums { values, isnull } => {
                    let mut c = Column::new(phys, values.len());
                    for &r in &self.out_rows {
                        let r = r as usize;
                        c.values.set_datum(r, values[r]);
                        c.validity.set(r, !isnull[r]);
                    }
                    c
                }
            })
            .collect();
        VectorBatch { columns, rows: std::mem::take(&mut self.out_rows) }
    }
}

/// The batch interface of VecScan for vector parents: the next batch that
/// has rows, or None at the end of the scan. Counts the rows in the node's
/// instrumentation as ExecProcNode would.
///
/// # Safety
/// `node` is a VecScan node that has begun.
unsafe fn next_vector_batch(node: *mut pg_sys::CustomScanState) -> Option<VectorBatch> {
    // SAFETY: this function's contract: node is a VecScan node that has begun.
    unsafe {
        if state(node).source.is_none() {
            let estate = (*node).ss.ps.state;
            let rel = state(node).rel;
            state(node).open_source(shim::vx_begin_scan(rel, (*estate).es_snapshot));
        }
        let st = state(node);
        st.next_batch().then(|| st.take_batch())
    }
}

/// For a vector parent that aggregates numerics: compute target `target`
/// (a numeric expression) as integers scaled by `10^scale` instead of
/// numeric Datums, when it has kernels for that. Returns the scale; the
/// target's batch column is then I64 except in batches PostgreSQL's
/// evaluator computed (row mode), whose columns stay numeric Datums. Rows
/// returned through a slot would be wrong after this: only a vector parent
/// that reads batches may ask.
///
/// # Safety
/// `node` is a VecScan node that has begun.
unsafe fn request_scaled(node: *mut pg_sys::CustomScanState, target: usize) -> Option<u16> {
    // SAFETY: as next_vector_batch.
    unsafe {
        if settings::DEBUG_FORCE_FALLBACK.get() {
            return None;
        }
        let cscan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
        let te = list_ptrs::<pg_sys::TargetEntry>((*cscan).scan.plan.targetlist).nth(target)?;
        let mut c = Compiler::new((*cscan).scan.scanrelid);
        let (mut e, scale) = c.compile_scaled((*te).expr.cast())?;
        if !c.params.is_empty() {
            return None;
        }
        // Renumber to the program's inputs (every attribute a target reads is one).
        let program = &mut state(node).program;
        let mut new_index = Vec::with_capacity(c.inputs.len());
        for a in &c.inputs {
            new_index.push(program.inputs.iter().position(|p| p.attnum == a.attnum)?);
        }
        e.remap_columns(&new_index);
        program.targets[target] = TargetItem::Kernel(e);
        program.kernels_changed();
        Some(scale)
    }
}

/// Rows for the fallback pass.
struct FallbackRows {
    rows: Vec<RowIdx>,
}

/// For a new plan node: the id and method table of VecScan.
pub fn make_plan(
    rel: *mut pg_sys::RelOptInfo,
    tlist: *mut pg_sys::List,
    clauses: *mut pg_sys::List,
    flags: u32,
    private: *mut pg_sys::List,
) -> *mut pg_sys::Plan {
    // SAFETY: called by the planner's create_plan with live planner lists; the CustomScan is
    // palloc'd in the planner's context.
    unsafe {
        let cscan = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomScan>()) as *mut pg_sys::CustomScan;
        (*cscan).scan.plan.type_ = pg_sys::NodeTag::T_CustomScan;
        (*cscan).scan.plan.targetlist = tlist;
        (*cscan).scan.plan.qual = pg_sys::extract_actual_clauses(clauses, false);
        (*cscan).scan.scanrelid = (*rel).relid;
        (*cscan).flags = flags;
        (*cscan).custom_private = private;
        (*cscan).methods = scan_methods();
        cscan as *mut pg_sys::Plan
    }
}
