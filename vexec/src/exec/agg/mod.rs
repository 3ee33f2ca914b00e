//! VecAgg: aggregation over the batches of a vector child (VecScan,
//! VecHashJoin).
//!
//! The node pulls every batch of its child through its batch interface
//! (`exec::input`) and feeds the live rows to one `vexec_core` accumulator per
//! aggregate, in row order. At the end it builds the aggregates' results
//! into its scan tuple (laid out by `custom_scan_tlist`), and PostgreSQL's
//! own HAVING qual and projection run on it (see plan/agg.rs).
//!
//! Plain aggregation (no GROUP BY) has one group. Hashed aggregation maps
//! each live row's key columns (the child's first columns) to a dense group
//! number in a `vexec_core` GroupTable and feeds the accumulators by group.
//!
//! Memory: the group table and the accumulators stay within `hash_mem`
//! (work_mem x hash_mem_multiplier): before each batch the table and the
//! states are given room for the batch's possible new groups, by doubling
//! while that fits and then exactly up to the budget (`make_room`); states
//! that grow without new groups (DISTINCT sets, text extremes, fmgr states)
//! are checked after the batch. Past the budget the table is frozen, as
//! PostgreSQL's HashAggregate does: rows of groups already in the table
//! keep updating them; rows of other groups are written, in input order, to
//! one of `SPILL_FANOUT` temporary files chosen by their key hash. When the
//! input ends, the groups in memory are returned, then each file is
//! aggregated in turn the same way (spilling again, on other hash bits, if
//! it is still too large). A group's rows always arrive in input order.
//!
//! States (`Stage`):
//!
//! ```text
//!   begin, rescan                                   spill files left:
//!        |                                          aggregate the next one
//!        v                                               +------+
//!   +-----------+  first row or batch asked:   +-----------+    |
//!   | Consuming |----------------------------->| Returning |<---+
//!   +-----------+  read the whole input,       +-----------+
//!                  spilling past hash_mem            |  no group and no file left
//!                                                    |  (a plain aggregate: its
//!                                                    v   one group returned)
//!                                              +-----------+
//!                                              |   Done    |
//!                                              +-----------+
//! ```
//!
//! Memory and resources: the Rust state is owned by the node and dropped by
//! EndCustomScan, or by a reset callback on the query's memory context when
//! the query ends with an ERROR or a cancel. Detoasted argument values go to
//! the node's per-tuple memory, reset per batch. Interrupts are checked per
//! batch here and in the child.

use std::ptr;

use crate::exec::node::{self, BatchOps, BatchSource, NodeMethods, VecNode, VectorBatch};
use crate::pgutil::{palloc_varlena, SyncPtr};
use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::agg::{
    table_layout, Accumulator, AggError, AggResult, GroupTable, KeyKind, TextOrder, Transition, NO_GROUP,
};
use vexec_core::batch::{full_selection, Column, PhysType, RowIdx, Values, BATCH_CAPACITY};
use vexec_core::spill::partition_of;

use crate::exec::host_keys::{self, HostKeys};
use crate::exec::input::ChildInput;
use crate::exec::spill::{fixed_lengths, SpillFile};
use crate::expr::compile::phys_of;
use crate::pgutil::{list_ints, list_ptrs};
use crate::shim;
use fmgr::FmgrAgg;
use vexec_core::plan_data::AggPlanData;

use crate::nodes::{AggSplit, AGG as NAME};

mod budget;
mod consume;
mod explain;
pub mod fmgr;
mod output;

use output::*;
pub use output::{batch_columns, BatchShape};

use vexec_core::spill::FANOUT as SPILL_FANOUT;

/// One aggregate: its transition and the child columns of its argument
/// and of its FILTER (a boolean: the rows where it is true count).
struct AggItem {
    transition: Transition,
    /// Every argument's child column (fmgr aggregates may have several).
    args: Vec<usize>,
    filter: Option<usize>,
    result_type: pg_sys::Oid,
    /// numeric sum/avg whose argument the child computes as integers
    /// scaled by `10^scale` (I64 or I128 batch columns).
    arg_scale: Option<u16>,
    /// text min/max under a collation other than C: its order.
    collation: Option<pg_sys::Oid>,
    /// An earlier aggregate whose state this one reads its result from
    /// (sum and avg of one numeric, as PostgreSQL shares transition states);
    /// its own accumulator stays empty.
    shares: Option<usize>,
}

/// The host-computed keys of count(DISTINCT x) arguments (text under a
/// nondeterministic collation, arrays, ranges; None for the other aggregates).
type DistinctHostKeys = Vec<Option<HostKeys>>;

#[derive(Default)]
struct Stats {
    batches: u64,
    rows: u64,
    groups: u64,
    spill_files: u64,
    spilled_rows: u64,
    spilled_bytes: u64,
    peak_memory: usize,
}

/// The grouping part of a hashed VecAgg.
struct Grouping {
    /// One per key; key `k` is child column `k`.
    kinds: Vec<KeyKind>,
    /// The table's columns (`table_layout`): the compared keys, then the
    /// values of `Collated` and `Encoded` keys; and per key, the table column of its value.
    table_kinds: Vec<KeyKind>,
    key_output: Vec<usize>,
    /// Per key, the builder of its compared column when the host computes it.
    host_keys: Vec<Option<HostKeys>>,
    table: GroupTable,
    /// Bytes the table and accumulators may hold (hash_mem).
    budget: usize,
    /// The table takes no new groups; their rows go to `spill`.
    frozen: bool,
    /// Recursion level of the input being aggregated (0: the child).
    level: u32,
    spill: Vec<SpillFile>,
    /// Files still to aggregate, with their level.
    pending: Vec<(SpillFile, u32)>,
    /// Next group to return.
    next: usize,
    /// The physical types of the child's columns (for reading files back).
    types: Vec<PhysType>,
    /// The lengths of the child's fixed-length by-reference columns
    /// (uuid, interval...), which files hold as their bytes.
    fixed: Vec<Option<usize>>,
    /// Child columns that arrive as scaled integers; files hold them as
    /// numeric Datums, like the batches of the child's row mode.
    scaled: Vec<Option<u16>>,
    /// Child columns to write to files with their values (the others are
    /// only counted by count(x), so their validity is enough).
    spill_values: Vec<bool>,
    scratch: Vec<u8>,
}

pub struct AggState {
    split: AggSplit,
    items: Vec<AggItem>,
    accs: Vec<Accumulator>,
    /// The states of the aggregates run through fmgr (None for the others).
    fmgr: Vec<Option<FmgrAgg>>,
    distinct_host_keys: DistinctHostKeys,
    grouping: Option<Grouping>,
    /// The child: batches of a VecScan or VecHashJoin, or the rows of a
    /// Gather (Finalize).
    src: ChildInput,
    econtext: *mut pg_sys::ExprContext,
    query_cxt: pg_sys::MemoryContext,
    /// For a vector parent: how output columns are made, and their physical
    /// types (None for a Partial, see `batch_columns`).
    batch_out: Option<(BatchShape, Vec<PhysType>)>,
    stage: Stage,
    stats: Stats,
}

/// Where the node is; the module comment draws the transitions.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// The input has not been read yet.
    Consuming,
    /// The input is aggregated: groups are being returned (and spilled
    /// partitions aggregated in turn).
    Returning,
    /// Every group has been returned.
    Done,
}

static METHODS: NodeMethods = NodeMethods::new::<AggState>(NAME, false, Some(BatchOps::of::<AggState>()));
static SCAN_METHODS: SyncPtr<pg_sys::CustomScanMethods> = SyncPtr(node::scan_methods::<AggState>(NAME));
static PARTIAL_METHODS: SyncPtr<pg_sys::CustomScanMethods> =
    SyncPtr(node::scan_methods::<AggState>(crate::nodes::AGG_PARTIAL));
static FINALIZE_METHODS: SyncPtr<pg_sys::CustomScanMethods> =
    SyncPtr(node::scan_methods::<AggState>(crate::nodes::AGG_FINALIZE));

pub fn scan_methods(split: AggSplit) -> *const pg_sys::CustomScanMethods {
    match split {
        AggSplit::Serial => &SCAN_METHODS.0,
        AggSplit::Partial => &PARTIAL_METHODS.0,
        AggSplit::Finalize => &FINALIZE_METHODS.0,
    }
}

/// What `exec::register` registers of VecAgg.
pub fn methods() -> ([&'static SyncPtr<pg_sys::CustomScanMethods>; 3], &'static NodeMethods) {
    ([&SCAN_METHODS, &PARTIAL_METHODS, &FINALIZE_METHODS], &METHODS)
}

impl VecNode for AggState {
    const WHAT: &'static str = "VecAgg";

    fn methods() -> &'static NodeMethods {
        &METHODS
    }

    unsafe fn begin(
        node: *mut pg_sys::CustomScanState,
        estate: *mut pg_sys::EState,
        eflags: i32,
    ) -> Box<Self> {
        // SAFETY: VecNode::begin's contract: node is a VecAgg's CustomScanState being begun; its
        // plan is our CustomScan with one child plan and the private data plan/agg wrote.
        unsafe {
            let cscan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
            let child_plan =
                list_ptrs::<pg_sys::Plan>((*cscan).custom_plans).next().expect("VecAgg has a child");
            let src = ChildInput::init(child_plan, estate, eflags);
            let child = src.child;
            (*node).custom_ps = pg_sys::lappend(ptr::null_mut(), child.cast());

            let data = AggPlanData::decode(&list_ints((*cscan).custom_private))
                .unwrap_or_else(|e| error!("vexec internal error: a VecAgg plan's private data: {}", e.0));
            let split = data.split;
            let nkeys = data.key_kinds.len();
            let kinds = data.key_kinds;
            let scan_types: Vec<pg_sys::Oid> = list_ptrs::<pg_sys::TargetEntry>((*cscan).custom_scan_tlist)
                .map(|te| pg_sys::exprType((*te).expr.cast()))
                .collect();
            let result_types = scan_types[nkeys..].iter().copied();
            let aggrefs = list_ptrs::<pg_sys::TargetEntry>((*cscan).custom_scan_tlist)
                .skip(nkeys)
                .map(|te| (*te).expr as *mut pg_sys::Aggref);
            let aggrefs: Vec<*mut pg_sys::Aggref> = aggrefs.collect();
            let items: Vec<AggItem> = data
                .aggs
                .into_iter()
                .zip(result_types)
                .zip(aggrefs.iter().copied())
                .map(|((spec, result_type), aggref)| {
                    let transition = spec.transition;
                    let collid = (*aggref).inputcollid;
                    let by_collation = matches!(transition, Transition::MinMaxBytes { .. })
                        && !crate::expr::compile::collation_allows(collid, false);
                    AggItem {
                        transition,
                        args: spec.args,
                        filter: spec.filter,
                        result_type,
                        arg_scale: None,
                        collation: by_collation.then_some(collid),
                        shares: None,
                    }
                })
                .collect();
            let query_cxt = (*estate).es_query_cxt;
            let mut fmgr: Vec<Option<FmgrAgg>> = items
                .iter()
                .zip(&aggrefs)
                .map(|(it, &a)| {
                    matches!(it.transition, Transition::Fmgr { .. })
                        .then(|| FmgrAgg::new(a, query_cxt, split))
                })
                .collect();
            if nkeys == 0 {
                fmgr.iter_mut().flatten().for_each(|f| f.ensure_groups(1));
            }
            let mut items = items;
            let scaled = match split {
                AggSplit::Finalize => vec![],
                _ => request_scaled_args(&src, nkeys, &mut items),
            };
            let grouping = (nkeys > 0).then(|| {
                let child_tlist = (*(*child).plan).targetlist;
                let ncols = (*child_tlist).length as usize;
                // A column keeps its values in a file if it is a key or the
                // argument of anything but count(x).
                let spill_values = (0..ncols)
                    .map(|c| {
                        c < nkeys
                            || items.iter().any(|it| {
                                // (A Finalize reads count(x)'s partial count too.)
                                let counted_only =
                                    it.transition == Transition::CountValues && split != AggSplit::Finalize;
                                (it.args.contains(&c) && !counted_only) || it.filter == Some(c)
                            })
                    })
                    .collect::<Vec<bool>>();
                // Columns written as validity only come back as booleans.
                let types = list_ptrs::<pg_sys::TargetEntry>(child_tlist)
                    .zip(&spill_values)
                    .map(|(te, &values)| match values {
                        true => crate::expr::compile::phys_of(pg_sys::exprType((*te).expr.cast())).0,
                        false => PhysType::Bool,
                    })
                    .collect();
                let fixed = fixed_lengths(&src.by_ref)
                    .into_iter()
                    .zip(&spill_values)
                    .map(|(len, &values)| len.filter(|_| values))
                    .collect();
                let (table_kinds, key_output) = table_layout(&kinds);
                let collations = list_ptrs::<pg_sys::TargetEntry>((*cscan).custom_scan_tlist)
                    .map(|te| pg_sys::exprCollation((*te).expr.cast()));
                let key_types = list_ptrs::<pg_sys::TargetEntry>((*cscan).custom_scan_tlist)
                    .map(|te| pg_sys::exprType((*te).expr.cast()));
                Grouping {
                    table: GroupTable::new(&table_kinds),
                    host_keys: host_keys::for_kinds(&kinds, key_types, collations),
                    table_kinds,
                    key_output,
                    kinds,
                    budget: pg_sys::get_hash_memory_limit(),
                    frozen: false,
                    level: 0,
                    spill: Vec::new(),
                    pending: Vec::new(),
                    next: 0,
                    types,
                    fixed,
                    scaled: (0..ncols).map(|c| scaled.iter().find(|s| s.0 == c).map(|s| s.1)).collect(),
                    spill_values,
                    scratch: Vec::new(),
                }
            });
            if split != AggSplit::Finalize {
                share_states(&mut items);
            }
            let accs = new_accumulators(&items, grouping.is_none());
            let distinct_host_keys = items
                .iter()
                .zip(&aggrefs)
                .map(|(it, &a)| match it.transition {
                    Transition::CountDistinct(k) => {
                        let arg =
                            (*list_ptrs::<pg_sys::TargetEntry>((*a).args).next().expect("an argument")).expr;
                        HostKeys::for_expr(k, arg.cast(), (*a).inputcollid)
                    }
                    _ => None,
                })
                .collect();
            let st = Box::new(AggState {
                split,
                items,
                accs,
                fmgr,
                distinct_host_keys,
                grouping,
                src,
                econtext: (*node).ss.ps.ps_ExprContext,
                query_cxt: (*estate).es_query_cxt,
                batch_out: batch_columns(cscan).map(|shape| {
                    let types = list_ptrs::<pg_sys::TargetEntry>((*cscan).scan.plan.targetlist)
                        .map(|te| phys_of(pg_sys::exprType((*te).expr.cast())).0)
                        .collect();
                    (shape, types)
                }),
                stage: Stage::Consuming,
                stats: Stats::default(),
            });
            st
        }
    }

    unsafe fn exec(&mut self, node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
        // SAFETY: VecNode::exec's contract: node is this state's node.
        unsafe {
            let st = self;
            let result = (*node).ss.ps.ps_ResultTupleSlot;
            if st.stage == Stage::Done {
                return pg_sys::ExecClearTuple(result);
            }
            if st.stage == Stage::Consuming {
                st.consume();
            }
            let econtext = st.econtext;
            let slot = (*node).ss.ss_ScanTupleSlot;
            loop {
                let Some(group) = st.next_group(true) else { return pg_sys::ExecClearTuple(result) };
                if group % 1024 == 0 {
                    check_for_interrupts!();
                }

                // The group's keys and results, as the scan tuple.
                pg_sys::MemoryContextReset((*econtext).ecxt_per_tuple_memory);
                pg_sys::ExecClearTuple(slot);
                let old = pg_sys::MemoryContextSwitchTo((*econtext).ecxt_per_tuple_memory);
                st.group_values(group, |col, d| {
                    *(*slot).tts_values.add(col) = pg_sys::Datum::from(d.unwrap_or(0));
                    *(*slot).tts_isnull.add(col) = d.is_none();
                });
                pg_sys::MemoryContextSwitchTo(old);
                pg_sys::ExecStoreVirtualTuple(slot);
                (*econtext).ecxt_scantuple = slot;

                let qual = (*node).ss.ps.qual;
                if !qual.is_null() && !pg_sys::ExecQual(qual, econtext) {
                    if st.grouping.is_none() {
                        return pg_sys::ExecClearTuple(result);
                    }
                    continue;
                }
                let proj = (*node).ss.ps.ps_ProjInfo;
                if proj.is_null() {
                    return slot;
                }
                return pg_sys::ExecProject(proj);
            }
        }
    }

    unsafe fn end(&mut self, _node: *mut pg_sys::CustomScanState) {
        // SAFETY: VecNode::end's contract; files and fmgr states are this state's own, released
        // once.
        unsafe {
            self.close_files();
            self.fmgr.iter_mut().flatten().for_each(FmgrAgg::shut_down);
            pg_sys::ExecEndNode(self.src.child);
        }
    }

    unsafe fn rescan(&mut self, node: *mut pg_sys::CustomScanState) {
        // SAFETY: VecNode::rescan's contract: node is this state's node.
        unsafe {
            let st = self;
            // The child is driven through its batch interface, not ExecProcNode,
            // so it is rescanned here whether or not its parameters changed.
            // PostgreSQL passes changed parameters to a plan's left and right
            // children only; ours is in custom_ps (a VecHashJoin keeps its
            // table unless they reach it).
            let changed = (*node).ss.ps.chgParam;
            if !changed.is_null() {
                pg_sys::UpdateChangedParamSet(st.src.child, changed);
            }
            pg_sys::ExecReScan(st.src.child);
            st.src.rescanned();
            st.close_files();
            st.accs = new_accumulators(&st.items, st.grouping.is_none());
            for f in st.fmgr.iter_mut().flatten() {
                f.restart();
                if st.grouping.is_none() {
                    f.ensure_groups(1);
                }
            }
            if let Some(g) = &mut st.grouping {
                g.restart(0);
            }
            st.stage = Stage::Consuming;
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
            ChildInput::explain_conversions(&[&self.src], es);
        }
    }
}

impl BatchSource for AggState {
    /// A Partial VecAgg's output is partial states: it gives rows only.
    unsafe fn gives_batches(&self, node: *mut pg_sys::CustomScanState) -> bool {
        // SAFETY: node is this VecAgg's node (BatchSource's contract), its plan a VecAgg plan.
        unsafe { batch_columns((*node).ss.ps.plan as *const pg_sys::CustomScan).is_some() }
    }

    /// Up to a batch of groups, their keys and results as columns, or None
    /// at the end. By-reference values stay valid until the next batch is
    /// requested. A batch ends where a spilled partition ends: the next
    /// partition restarts the aggregates whose results it points into.
    unsafe fn next_batch(&mut self, node: *mut pg_sys::CustomScanState) -> Option<VectorBatch> {
        // (The inherent method.)
        // SAFETY: BatchSource's contract: node is this VecAgg's node and has begun.
        unsafe { AggState::next_batch(self, node) }
    }
}

unsafe fn state<'a>(node: *mut pg_sys::CustomScanState) -> &'a mut AggState {
    // SAFETY: node::state checks the node's tag and methods before the cast; the caller passes a
    // node that lives for 'a.
    unsafe { node::state::<AggState>(node) }
}

impl Grouping {
    /// An empty table for the input at recursion `level` (0: the child).
    fn restart(&mut self, level: u32) {
        self.table = GroupTable::new(&self.table_kinds);
        self.frozen = false;
        self.level = level;
        self.next = 0;
    }
}

impl AggItem {
    /// The child column of the (first) argument; None for count(*).
    fn arg(&self) -> Option<usize> {
        self.args.first().copied()
    }
}

/// Let aggregates over the same input with compatible transitions read one
/// state (a Finalize's inputs are separate partial states).
fn share_states(items: &mut [AggItem]) {
    for i in 0..items.len() {
        let it = &items[i];
        items[i].shares = (0..i).find(|&j| {
            let o = &items[j];
            o.shares.is_none()
                && o.args == it.args
                && o.filter == it.filter
                && o.arg_scale == it.arg_scale
                && o.collation == it.collation
                && !it.args.is_empty()
                && o.transition.shares_state(it.transition)
        });
    }
}

/// Fresh accumulators; a plain aggregate has its one group from the start.
fn new_accumulators(items: &[AggItem], plain: bool) -> Vec<Accumulator> {
    items
        .iter()
        .map(|it| {
            let mut a = Accumulator::new(it.transition);
            if let Some(scale) = it.arg_scale {
                a.set_arg_scale(scale);
            }
            if let Some(collid) = it.collation {
                a.set_text_order(collation_order(collid));
            }
            if plain {
                a.ensure_groups(1);
            }
            a
        })
        .collect()
}

/// Ask the child to compute the arguments of numeric sum and avg as scaled
/// integers, where every aggregate reading that column takes them (numeric
/// sum/avg, count(x)); keys and FILTERs never do. Returns (column, scale).
unsafe fn request_scaled_args(src: &ChildInput, nkeys: usize, items: &mut [AggItem]) -> Vec<(usize, u16)> {
    let takes = |t: Transition| matches!(t, Transition::SumNumeric | Transition::AvgNumeric);
    let mut scaled = Vec::new();
    for i in 0..items.len() {
        let Some(c) = items[i].arg().filter(|&c| c >= nkeys && takes(items[i].transition)) else { continue };
        if scaled.iter().any(|&(col, _)| col == c) {
            continue;
        }
        let all_take = items.iter().all(|it| {
            it.filter != Some(c)
                && (!it.args.contains(&c) || takes(it.transition) || it.transition == Transition::CountValues)
        });
        // SAFETY: src is this node's child input, begun (caller's contract).
        if let Some(scale) = all_take.then(|| unsafe { src.request_scaled(c) }).flatten() {
            scaled.push((c, scale));
        }
    }
    for it in items.iter_mut() {
        if takes(it.transition) {
            it.arg_scale = scaled.iter().find(|s| Some(s.0) == it.arg()).map(|s| s.1);
        }
    }
    scaled
}
