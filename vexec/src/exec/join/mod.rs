//! VecHashJoin: a hash join whose inputs arrive as batches.
//!
//! Build: the inner input is read whole, batch by batch (through VecScan's
//! batch interface, or through slots from any other child); each batch is
//! kept compacted to its live rows with its by-reference values copied into
//! the node's memory, and its rows are chained per key in a `vexec_core`
//! GroupTable (PostgreSQL's equality for the key types offered; rows with a
//! NULL key never match and are only kept where a right or full join must
//! return them). Probe: each outer batch's keys are looked up in one pass,
//! then rows are returned one match at a time: the scan tuple is the outer
//! row followed by the inner row, the join filter (`custom_exprs`) decides
//! what matches, and PostgreSQL's own qual (the filter after an outer join)
//! and projection run on it. Unmatched rows are returned null-extended as
//! the join type says; right and full joins return the unmatched inner rows
//! after the outer input ends.
//!
//! Memory: the inner rows, their chains and the key table stay within
//! `hash_mem`. Past it the join partitions: the inner rows go to 16
//! temporary files by key hash, then the outer rows to 16 more, and each
//! pair of files is joined in turn the same way (partitioned again on
//! further hash bits if its inner side is still too large). A partition
//! whose inner side is empty is skipped where no outer row could be
//! returned from it.
//!
//! States (`Phase`), for one table at a time:
//!
//! ```text
//!              begin / rescan with a changed inner side
//!                             |
//!                             v
//!                        +---------+  inner side past hash_mem:
//!                        |  Build  |  partition both sides to files
//!                        +---------+------------------------------+
//!   inner empty and no        |  table in memory                  |
//!   outer row kept alone      v                                   v
//!        +----------------+---------+  outer side   +-----------------------+
//!        |                |  Probe  |-------------->|     NextPartition     |<--+
//!        |                +---------+  ends (inner  +-----------------------+   |
//!        |                     |       rows need    | next file pair: load  |   |
//!        |    outer side ends, |       no return)   | its inner side, Probe |   |
//!        |    right/full join  v                    | none left: Done       |   |
//!        |            +-----------------+           +-----------------------+   |
//!        |            | Unmatched(from) |---- inner rows all returned ----------+
//!        v            +-----------------+
//!   +--------+
//!   |  Done  |  <- NextPartition with no pair left
//!   +--------+
//! ```
//!
//! A rescan whose inner side did not change (and is in memory) keeps the
//! table, clears its match flags and goes back to Probe.
//!
//! Rust state is dropped by EndCustomScan or by a reset callback on the
//! query's memory context (ERROR, cancel); temporary files belong to the
//! resource owner. Interrupts are checked per batch.

use std::borrow::Cow;
use std::ffi::c_void;
use std::ptr;

use crate::exec::node::{self, BatchOps, BatchSource, NodeMethods, VecNode, VectorBatch};
use crate::pgutil::{list_ints, list_ptrs, SyncPtr};
use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::agg::{largest_within, GroupTable, KeyKind, NO_GROUP};
use vexec_core::batch::{Bitmap, Column, RowIdx, Values, BATCH_CAPACITY};
use vexec_core::join::{row_id, split_row_id, JoinType, KeyChains, NO_ROW, ROW_BITS};
use vexec_core::plan_data::JoinPlanData;
use vexec_core::spill::{partition_of, SpilledBatch};

use crate::exec::host_keys::{self, HostKeys};
use crate::exec::input::{rows_context, ChildInput};
use crate::exec::project::Projection;
use crate::exec::spill::{fixed_lengths, SpillFile};
use crate::shim;

use crate::nodes::HASH_JOIN as NAME;

mod build;
mod explain;
mod probe;
mod shared;

use build::*;
use probe::*;
use shared::*;

use vexec_core::spill::{FANOUT, MAX_LEVEL};

// PostgreSQL's JoinType values that vexec_core::join::JoinType::from_pg reads.
const _: () = {
    use pg_sys::JoinType::*;
    assert!(JOIN_INNER == 0 && JOIN_LEFT == 1 && JOIN_FULL == 2 && JOIN_RIGHT == 3);
    assert!(JOIN_SEMI == 4 && JOIN_ANTI == 5);
};

/// One input of the join.
struct Side {
    src: ChildInput,
    keys: Vec<usize>,
    /// Per key, the builder of the column the table compares instead when
    /// the host computes it (text under a nondeterministic collation,
    /// arrays, ranges).
    host_keys: Vec<Option<HostKeys>>,
    /// The spill format's lengths of the fixed-length by-reference columns.
    fixed: Vec<Option<usize>>,
}

/// The columns of a batch the join holds, and what owns their values.
struct Held {
    columns: Vec<Column>,
    /// Spilled rows' values live in the batch's arena.
    _spilled: Option<SpilledBatch>,
}

/// The inner rows in memory and their chains per key.
struct Table {
    batches: Vec<Held>,
    lens: Vec<usize>,
    groups: GroupTable,
    /// The rows of each key group (vexec_core::join).
    chains: KeyChains,
    /// Per row id, whether it matched (right and full joins).
    matched: Bitmap,
    bytes: usize,
    rows: u64,
}

impl Table {
    fn new(kinds: &[KeyKind]) -> Table {
        Table {
            batches: Vec::new(),
            lens: Vec::new(),
            groups: GroupTable::new(kinds),
            chains: KeyChains::default(),
            matched: Bitmap::default(),
            bytes: 0,
            rows: 0,
        }
    }

    fn memory(&self) -> usize {
        self.bytes + self.vector_bytes()
    }

    /// The group table, the chains and the matched marks.
    fn vector_bytes(&self) -> usize {
        self.groups.bytes_used() + self.chains.bytes() + self.matched.allocated_bytes()
    }

    /// What [`Table::vector_bytes`] will be with room for `groups` keys and
    /// `slots` row ids (`marks`: with matched marks), and for `incoming`
    /// key bytes (`GroupTable::key_bytes`).
    fn vector_bytes_at(&self, groups: usize, slots: usize, marks: bool, incoming: &[usize]) -> usize {
        let now = self.matched.allocated_bytes();
        let marks = if marks { now.max(slots.div_ceil(8)) } else { now };
        self.groups.bytes_at(groups, incoming) + self.chains.bytes_at(groups, slots) + marks
    }
}

/// Where the probe rows come from.
enum ProbeSource {
    Child,
    File(SpillFile),
}

/// An outer batch being joined: its rows and, per row, the first inner row
/// of its key.
struct Probe {
    held: Held,
    rows: Vec<RowIdx>,
    heads: Vec<u32>,
    pos: usize,
    /// The next inner row of the current outer row's chain.
    cursor: u32,
    started: bool,
    matched: bool,
    /// The batch's rows are all done (the join said so once).
    ended: bool,
}

/// A pair of partition files still to join.
struct Partition {
    inner: SpillFile,
    outer: SpillFile,
    level: u32,
}

/// Where the join is; the module comment draws the transitions.
enum Phase {
    /// Reading the inner side into the table (or its partition files).
    Build,
    /// Joining outer batches (from the child or a partition file) to the table.
    Probe,
    /// Returning unmatched inner rows (right/full), from this row id.
    Unmatched(u32),
    /// Loading the next pair of partition files, if any.
    NextPartition,
    /// No more rows.
    Done,
}

#[derive(Default)]
struct Stats {
    /// Inner rows this process wrote for a shared build.
    shared_rows: u64,
    build_batches: u64,
    build_rows: u64,
    probe_batches: u64,
    probe_rows: u64,
    /// The build outgrew hash_mem and went to partition files (in a shared
    /// build, every process does: it holds the whole inner side).
    partitioned: bool,
    /// Partition pairs this process joined (those with rows on the side
    /// that can produce output; a process that read no outer row of a
    /// partition has none to join).
    partitions: u64,
    spilled_rows: u64,
    spilled_bytes: u64,
    peak_memory: usize,
}

pub struct JoinState {
    jointype: JoinType,
    outer: Side,
    inner: Side,
    kinds: Vec<KeyKind>,
    /// Columns of the outer input (the inner ones follow in the scan tuple).
    nouter: usize,
    joinqual: *mut pg_sys::ExprState,
    econtext: *mut pg_sys::ExprContext,
    query_cxt: pg_sys::MemoryContext,
    /// Copies of the held inner rows' by-reference values.
    data_cxt: pg_sys::MemoryContext,
    /// The largest block of `data_cxt`.
    block_bytes: usize,
    /// The values of the batch being read or probed (the per-tuple memory
    /// is reset for every row returned).
    batch_cxt: pg_sys::MemoryContext,
    budget: usize,
    phase: Phase,
    table: Table,
    probe: Option<Probe>,
    source: ProbeSource,
    pending: Vec<Partition>,
    /// Whether the current table's inner side had any row.
    inner_empty: bool,
    scratch: Vec<u8>,
    /// The target list for a vector parent (made on its first batch).
    output: Option<Box<Projection>>,
    /// Evaluator results of the batch returned last.
    out_cxt: pg_sys::MemoryContext,
    stats: Stats,
    /// The plan shares the build among the processes of a parallel query
    /// (a parallel-aware join over a partial inner side).
    shares_build: bool,
    /// Its shared state, once the parallel query set it up (null when the
    /// plan runs in one process: then the inner side is read as usual).
    shared: *mut SharedBuild,
}

/// What the processes of a parallel query share to build one VecHashJoin
/// table: each runs the partial inner side and writes its rows to its own
/// file of the set; once all have (the barrier's first phase), each reads
/// every file into a table of its own. The inner side is computed once,
/// divided among the processes, where a non-shared build computes it whole
/// in every process; the hashing is still done by each.
#[repr(C)]
pub struct SharedBuild {
    fileset: pg_sys::SharedFileSet,
    barrier: pg_sys::Barrier,
    /// Processes that may write a file: the leader (slot 0) and the workers.
    slots: i32,
    /// The DSM segment, which a worker attaches the file set to.
    segment: pg_sys::dsm_handle,
}

static METHODS: NodeMethods = NodeMethods::new::<JoinState>(NAME, true, Some(BatchOps::of::<JoinState>()));
static SCAN_METHODS: SyncPtr<pg_sys::CustomScanMethods> = SyncPtr(node::scan_methods::<JoinState>(NAME));

pub fn scan_methods() -> *const pg_sys::CustomScanMethods {
    &SCAN_METHODS.0
}

/// What `exec::register` registers of VecHashJoin.
pub fn methods() -> (&'static SyncPtr<pg_sys::CustomScanMethods>, &'static NodeMethods) {
    (&SCAN_METHODS, &METHODS)
}

impl VecNode for JoinState {
    const WHAT: &'static str = "VecHashJoin";

    fn methods() -> &'static NodeMethods {
        &METHODS
    }

    unsafe fn begin(
        node: *mut pg_sys::CustomScanState,
        estate: *mut pg_sys::EState,
        eflags: i32,
    ) -> Box<Self> {
        // SAFETY: VecNode::begin's contract: node is a VecHashJoin's CustomScanState being begun;
        // its plan is our CustomScan with an outer and an inner plan and the private data
        // plan/join.rs wrote.
        unsafe {
            let cscan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
            let plans: Vec<*mut pg_sys::Plan> = list_ptrs((*cscan).custom_plans).collect();
            let data = JoinPlanData::decode(&list_ints((*cscan).custom_private)).unwrap_or_else(|e| {
                error!("vexec internal error: a VecHashJoin plan's private data: {}", e.0)
            });
            let jointype = JoinType::from_pg(data.jointype as u32).unwrap_or_else(|| {
                error!("vexec internal error: VecHashJoin of join type {}", data.jointype)
            });
            let nouter = data.nouter;
            let shares_build = (*cscan).scan.plan.parallel_aware;
            let okeys: Vec<usize> = data.keys.iter().map(|k| k.outer_col).collect();
            let ikeys: Vec<usize> = data.keys.iter().map(|k| k.inner_col).collect();
            let kinds: Vec<KeyKind> = data.keys.iter().map(|k| k.kind).collect();
            let collations: Vec<pg_sys::Oid> =
                data.keys.iter().map(|k| pg_sys::Oid::from(k.collation)).collect();
            let child_flags = eflags
                & !(pg_sys::EXEC_FLAG_REWIND | pg_sys::EXEC_FLAG_BACKWARD | pg_sys::EXEC_FLAG_MARK) as i32;
            // Key types, for the host-keyed kinds: the outer side's (both sides
            // have the same type but for integer keys).
            let types: Vec<pg_sys::Oid> = okeys
                .iter()
                .map(|&c| {
                    let te = pg_sys::list_nth((*plans[0]).targetlist, c as i32) as *mut pg_sys::TargetEntry;
                    pg_sys::exprType((*te).expr.cast())
                })
                .collect();
            let mut outer = side(
                plans[0],
                estate,
                child_flags,
                okeys,
                host_keys::for_kinds(&kinds, types.clone(), collations.clone()),
            );
            // The outer side's other columns are read for the rows that
            // found a match only (a scan reads them late; see probe.rs).
            let needed: Vec<bool> = (0..outer.src.types.len()).map(|c| outer.keys.contains(&c)).collect();
            outer.src.defer(&needed);
            let inner =
                side(plans[1], estate, child_flags, ikeys, host_keys::for_kinds(&kinds, types, collations));
            // (The table compares a host-keyed key's sort keys or encodings as bytes.)
            let kinds: Vec<KeyKind> = kinds.iter().map(|k| k.compared()).collect();
            (*node).custom_ps = pg_sys::lappend(
                pg_sys::lappend(ptr::null_mut(), outer.src.child.cast()),
                inner.src.child.cast(),
            );
            let joinqual = pg_sys::ExecInitQual((*cscan).custom_exprs, node.cast());
            let query_cxt = (*estate).es_query_cxt;
            let block_bytes = (pg_sys::get_hash_memory_limit() / 16).clamp(8 * 1024, 8 * 1024 * 1024);
            let st = Box::new(JoinState {
                jointype,
                outer,
                inner,
                table: Table::new(&kinds),
                kinds,
                nouter,
                joinqual,
                econtext: (*node).ss.ps.ps_ExprContext,
                query_cxt,
                // Blocks of at most a sixteenth of hash_mem, so that one more
                // block cannot take the rows past it unforeseen.
                // A bump context: the copies are never freed one by one (only
                // reset with the table), so they need no chunk headers nor
                // power-of-two sizes (a 16-byte bpchar took 24 bytes).
                data_cxt: pg_sys::BumpContextCreate(
                    query_cxt,
                    c"VecHashJoin rows".as_ptr(),
                    0,
                    8 * 1024,
                    block_bytes,
                ),
                block_bytes,
                batch_cxt: pg_sys::AllocSetContextCreateInternal(
                    query_cxt,
                    c"VecHashJoin batch".as_ptr(),
                    0,
                    8 * 1024,
                    8 * 1024 * 1024,
                ),
                budget: pg_sys::get_hash_memory_limit(),
                phase: Phase::Build,
                probe: None,
                source: ProbeSource::Child,
                pending: Vec::new(),
                inner_empty: true,
                scratch: Vec::new(),
                output: None,
                out_cxt: rows_context(query_cxt, c"VecHashJoin output"),
                stats: Stats::default(),
                shares_build,
                shared: ptr::null_mut(),
            });
            st
        }
    }

    unsafe fn exec(&mut self, node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
        // SAFETY: VecNode::exec's contract: node is this state's node.
        unsafe {
            let st = self;
            let slot = (*node).ss.ss_ScanTupleSlot;
            let proj = (*node).ss.ps.ps_ProjInfo;
            loop {
                match st.advance(node, true) {
                    Step::Row(..) => return if proj.is_null() { slot } else { pg_sys::ExecProject(proj) },
                    Step::BatchEnd => {}
                    Step::Done => return pg_sys::ExecClearTuple((*node).ss.ps.ps_ResultTupleSlot),
                }
            }
        }
    }

    unsafe fn end(&mut self, _node: *mut pg_sys::CustomScanState) {
        // SAFETY: VecNode::end's contract; the children were initialized in begin and are ended
        // once, here.
        unsafe {
            self.close_files();
            pg_sys::ExecEndNode(self.outer.src.child);
            pg_sys::ExecEndNode(self.inner.src.child);
        }
    }

    unsafe fn rescan(&mut self, node: *mut pg_sys::CustomScanState) {
        // SAFETY: VecNode::rescan's contract: node is this state's node.
        unsafe {
            let st = self;
            let changed = (*node).ss.ps.chgParam;
            if !changed.is_null() {
                pg_sys::UpdateChangedParamSet(st.outer.src.child, changed);
                pg_sys::UpdateChangedParamSet(st.inner.src.child, changed);
            }
            // The table of an unchanged inner side (in memory) is kept; only
            // its match flags start over.
            let keep = st.pending.is_empty()
                && matches!(st.source, ProbeSource::Child)
                && !matches!(st.phase, Phase::Build)
                && (*st.inner.src.child).chgParam.is_null();
            st.close_files();
            st.probe = None;
            if keep {
                st.table.matched.set_all(false);
                st.phase =
                    if st.inner_empty && !st.jointype.keeps_outer() { Phase::Done } else { Phase::Probe };
            } else {
                st.table = Table::new(&st.kinds);
                pg_sys::MemoryContextReset(st.data_cxt);
                st.inner_empty = true;
                st.phase = Phase::Build;
                pg_sys::ExecReScan(st.inner.src.child);
                st.inner.src.rescanned();
            }
            pg_sys::ExecReScan(st.outer.src.child);
            st.outer.src.rescanned();
        }
    }

    unsafe fn explain(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        ancestors: *mut pg_sys::List,
        es: *mut pg_sys::ExplainState,
    ) {
        // SAFETY: VecNode::explain's contract.
        unsafe {
            explain::explain(node, ancestors, es);
            ChildInput::explain_conversions(&[&self.outer.src, &self.inner.src], es);
        }
    }

    unsafe fn estimate_dsm(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        pcxt: *mut pg_sys::ParallelContext,
    ) -> pg_sys::Size {
        // SAFETY: the DSM callback's contract, passed on.
        unsafe { estimate_dsm(node, pcxt) }
    }

    unsafe fn initialize_dsm(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        pcxt: *mut pg_sys::ParallelContext,
        coordinate: *mut c_void,
    ) {
        // SAFETY: the DSM callback's contract, passed on.
        unsafe { initialize_dsm(node, pcxt, coordinate) }
    }

    unsafe fn reinitialize_dsm(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        pcxt: *mut pg_sys::ParallelContext,
        coordinate: *mut c_void,
    ) {
        // SAFETY: the DSM callback's contract, passed on.
        unsafe { reinitialize_dsm(node, pcxt, coordinate) }
    }

    unsafe fn initialize_worker(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        toc: *mut pg_sys::shm_toc,
        coordinate: *mut c_void,
    ) {
        // SAFETY: the DSM callback's contract, passed on.
        unsafe { initialize_worker(node, toc, coordinate) }
    }
}

impl BatchSource for JoinState {
    /// The next batch of joined rows, None at the end. By-reference values
    /// stay valid until the next call.
    unsafe fn next_batch(&mut self, node: *mut pg_sys::CustomScanState) -> Option<VectorBatch> {
        // (The inherent method: the join's batch output.)
        // SAFETY: BatchSource's contract: node is this VecHashJoin's node and has begun.
        unsafe { JoinState::next_batch(self, node) }
    }

    /// Target `target` as scaled integers for a parent that aggregates
    /// numerics (see `exec::project`); the node returns batches only after.
    unsafe fn request_scaled(&mut self, node: *mut pg_sys::CustomScanState, target: usize) -> Option<u16> {
        // SAFETY: node is this VecHashJoin's node (BatchSource's contract); its plan's target list
        // is live.
        unsafe {
            let tlist = (*(*node).ss.ps.plan).targetlist;
            self.output(node).request_scaled(tlist, target)
        }
    }
}

unsafe fn state<'a>(node: *mut pg_sys::CustomScanState) -> &'a mut JoinState {
    // SAFETY: node::state checks the node's tag and methods before the cast; the caller passes a
    // node that lives for 'a.
    unsafe { node::state::<JoinState>(node) }
}

unsafe fn side(
    plan: *mut pg_sys::Plan,
    estate: *mut pg_sys::EState,
    eflags: i32,
    keys: Vec<usize>,
    host_keys: Vec<Option<HostKeys>>,
) -> Side {
    // SAFETY: plan is a child plan of this join and estate its EState (caller's contract);
    // ExecInitNode may ERROR on the main thread.
    unsafe {
        let src = ChildInput::init(plan, estate, eflags);
        let fixed = fixed_lengths(&src.by_ref);
        Side { src, keys, host_keys, fixed }
    }
}

impl Side {
    /// This side's key columns of `columns` for rows `rows` as the group
    /// table compares them (host-keyed keys as their sort keys or encodings).
    ///
    /// # Safety
    /// The keys' varlenas among `rows` are plain.
    unsafe fn key_columns<'a>(&mut self, columns: &'a [Column], rows: &[RowIdx]) -> Vec<Cow<'a, Column>> {
        self.keys
            .iter()
            .zip(self.host_keys.iter_mut())
            .map(|(&k, s)| match s {
                // SAFETY: this function's contract: the keys' varlenas among rows are plain.
                Some(s) => Cow::Owned(unsafe { s.column(&columns[k], rows) }),
                None => Cow::Borrowed(&columns[k]),
            })
            .collect()
    }
}

impl JoinState {
    unsafe fn close_files(&mut self) {
        // SAFETY: the files are this state's own, created in its query context and closed once.
        unsafe {
            for p in self.pending.drain(..) {
                p.inner.close();
                p.outer.close();
            }
            if let ProbeSource::File(f) = std::mem::replace(&mut self.source, ProbeSource::Child) {
                f.close();
            }
        }
    }
}
