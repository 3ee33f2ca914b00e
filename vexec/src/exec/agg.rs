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
use crate::pgutil::SyncPtr;
use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::agg::{
    largest_within, table_layout, Accumulator, AggError, AggResult, GroupTable, KeyKind, TextOrder,
    Transition, NO_GROUP,
};
use vexec_core::batch::{full_selection, Column, PhysType, RowIdx, Values, BATCH_CAPACITY};
use vexec_core::spill::partition_of;

use crate::exec::fmgr_agg::FmgrAgg;
use crate::exec::host_keys::{self, HostKeys};
use crate::exec::input::ChildInput;
use crate::exec::spill::{fixed_lengths, SpillFile};
use crate::expr::compile::phys_of;
use crate::pgutil::list_ptrs;
use crate::shim;

pub const NAME: &std::ffi::CStr = c"VecAgg";

/// Temporary files per spill (a power of two; each level of recursion
/// partitions on the next 4 bits of the key hash).
const SPILL_FANOUT: usize = 16;
/// Past this recursion level a partition is aggregated in memory whatever
/// its size (16 levels use all 64 bits of the hash).
const MAX_SPILL_LEVEL: u32 = 15;

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

/// Which part of an aggregation a VecAgg node does. PostgreSQL's parallel
/// aggregation is Finalize Agg over Gather over Partial Agg; VecAgg's is
/// the same shape with its own partial states (`Accumulator::serialize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggSplit {
    /// The whole aggregation over a VecScan.
    Serial = 0,
    /// One participant's share: group keys and a bytea state per aggregate.
    Partial = 1,
    /// Combines the partial states read from a row child (Gather).
    Finalize = 2,
}

impl AggSplit {
    pub fn from_code(code: i32) -> AggSplit {
        match code {
            1 => AggSplit::Partial,
            2 => AggSplit::Finalize,
            _ => AggSplit::Serial,
        }
    }
}

static METHODS: NodeMethods = NodeMethods::new::<AggState>(NAME, false, Some(BatchOps::of::<AggState>()));
static SCAN_METHODS: SyncPtr<pg_sys::CustomScanMethods> = SyncPtr(node::scan_methods::<AggState>(NAME));
// Names of their own, so EXPLAIN can call them "Partial Vec Aggregate" and
// "Finalize Vec Aggregate" as it calls PostgreSQL's nodes.
static PARTIAL_METHODS: SyncPtr<pg_sys::CustomScanMethods> =
    SyncPtr(node::scan_methods::<AggState>(c"VecAggPartial"));
static FINALIZE_METHODS: SyncPtr<pg_sys::CustomScanMethods> =
    SyncPtr(node::scan_methods::<AggState>(c"VecAggFinalize"));

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
        unsafe { begin(node, estate, eflags) }
    }

    unsafe fn exec(&mut self, node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
        unsafe { exec(node) }
    }

    unsafe fn end(&mut self, _node: *mut pg_sys::CustomScanState) {
        unsafe {
            self.close_files();
            self.fmgr.iter_mut().flatten().for_each(FmgrAgg::shut_down);
            pg_sys::ExecEndNode(self.src.child);
        }
    }

    unsafe fn rescan(&mut self, node: *mut pg_sys::CustomScanState) {
        unsafe { rescan(node) }
    }

    unsafe fn explain(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        ancestors: *mut pg_sys::List,
        es: *mut pg_sys::ExplainState,
    ) {
        unsafe { explain(node, ancestors, es) }
    }
}

impl BatchSource for AggState {
    /// A Partial VecAgg's output is partial states: it gives rows only.
    unsafe fn gives_batches(&self, node: *mut pg_sys::CustomScanState) -> bool {
        unsafe { batch_columns((*node).ss.ps.plan as *const pg_sys::CustomScan).is_some() }
    }

    /// Up to a batch of groups, their keys and results as columns, or None
    /// at the end. By-reference values stay valid until the next batch is
    /// requested. A batch ends where a spilled partition ends: the next
    /// partition restarts the aggregates whose results it points into.
    unsafe fn next_batch(&mut self, node: *mut pg_sys::CustomScanState) -> Option<VectorBatch> {
        // (The inherent method.)
        unsafe { AggState::next_batch(self, node) }
    }
}

unsafe fn state<'a>(node: *mut pg_sys::CustomScanState) -> &'a mut AggState {
    unsafe { node::state::<AggState>(node) }
}

unsafe fn begin(
    node: *mut pg_sys::CustomScanState,
    estate: *mut pg_sys::EState,
    eflags: i32,
) -> Box<AggState> {
    unsafe {
        let cscan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
        let child_plan = list_ptrs::<pg_sys::Plan>((*cscan).custom_plans).next().expect("VecAgg has a child");
        let src = ChildInput::init(child_plan, estate, eflags);
        let child = src.child;
        (*node).custom_ps = pg_sys::lappend(ptr::null_mut(), child.cast());

        // custom_private: [report id, number of keys, key kind codes...,
        // (transition code, argument column, FILTER column)...]; custom_scan_tlist: the
        // keys, then the aggregates.
        let private: Vec<i32> =
            list_ptrs::<pg_sys::Integer>((*cscan).custom_private).skip(1).map(|i| (*i).ival).collect();
        let split = AggSplit::from_code(private[0]);
        let private = &private[1..];
        let nkeys = private[0] as usize;
        let kinds: Vec<KeyKind> =
            private[1..=nkeys].iter().map(|&c| KeyKind::from_code(c).expect("a known key kind")).collect();
        let spec = &private[1 + nkeys..];
        let scan_types: Vec<pg_sys::Oid> = list_ptrs::<pg_sys::TargetEntry>((*cscan).custom_scan_tlist)
            .map(|te| pg_sys::exprType((*te).expr.cast()))
            .collect();
        let result_types = scan_types[nkeys..].iter().copied();
        let aggrefs = list_ptrs::<pg_sys::TargetEntry>((*cscan).custom_scan_tlist)
            .skip(nkeys)
            .map(|te| (*te).expr as *mut pg_sys::Aggref);
        // Per aggregate: transition code, FILTER column, number of
        // arguments, their columns.
        let mut specs: Vec<(i32, i32, Vec<usize>)> = Vec::new();
        let mut rest = spec;
        while let [code, filter, nargs, tail @ ..] = rest {
            let (args, tail) = tail.split_at(*nargs as usize);
            specs.push((*code, *filter, args.iter().map(|&a| a as usize).collect()));
            rest = tail;
        }
        let aggrefs: Vec<*mut pg_sys::Aggref> = aggrefs.collect();
        let items: Vec<AggItem> = specs
            .into_iter()
            .zip(result_types)
            .zip(aggrefs.iter().copied())
            .map(|((s, result_type), aggref)| {
                let transition = Transition::from_code(s.0).expect("a known transition code");
                let collid = (*aggref).inputcollid;
                let by_collation = matches!(transition, Transition::MinMaxBytes { .. })
                    && !crate::expr::compile::collation_allows(collid, false);
                AggItem {
                    transition,
                    args: s.2,
                    filter: (s.1 >= 0).then_some(s.1 as usize),
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
                matches!(it.transition, Transition::Fmgr { .. }).then(|| FmgrAgg::new(a, query_cxt, split))
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

impl AggState {
    /// Feed every batch of the child to the accumulators (a Finalize
    /// reads its rows, the group keys and partial states, a batch at a time).
    unsafe fn consume(&mut self) {
        unsafe {
            let per_batch = (*self.econtext).ecxt_per_tuple_memory;
            let mut groups: Vec<u32> = Vec::new();
            loop {
                check_for_interrupts!();
                pg_sys::MemoryContextReset(per_batch);
                let Some((mut columns, rows)) = self.src.next(per_batch) else { break };
                self.stats.batches += 1;
                self.stats.rows += rows.len() as u64;
                self.detoast(&mut columns, &rows);
                self.feed(&columns, &rows, &mut groups);
            }
            self.input_done();
        }
    }

    /// Kernels, keys and files read the bytes of some columns: detoast
    /// them in this node's per-batch memory.
    unsafe fn detoast(&self, columns: &mut [Column], rows: &[RowIdx]) {
        let per_batch = unsafe { (*self.econtext).ecxt_per_tuple_memory };
        for (c, col) in columns.iter_mut().enumerate() {
            // (Fixed-length by-reference values, uuid or interval, are never toasted.)
            if !self.reads_bytes(c) || self.src.by_ref[c] != Some(-1) {
                continue;
            }
            let Values::Datum(v) = &mut col.values else { continue };
            let values = v.as_mut_ptr();
            let validity = col.validity.as_bytes().as_ptr();
            let old = unsafe { pg_sys::MemoryContextSwitchTo(per_batch) };
            unsafe { shim::vx_detoast(values, validity, rows.len() as i32, rows.as_ptr()) };
            unsafe { pg_sys::MemoryContextSwitchTo(old) };
        }
    }

    /// Whether child column `c` must hold plain varlenas: text keys and
    /// text min/max arguments (whose bytes are compared) and, when a
    /// hashed aggregate spills, every by-reference column it writes.
    fn reads_bytes(&self, c: usize) -> bool {
        if self.split == AggSplit::Finalize && self.items.iter().any(|it| it.arg() == Some(c)) {
            return true; // partial states
        }
        match &self.grouping {
            Some(g) => g.spill_values[c],
            None => self.items.iter().zip(&self.fmgr).any(|(it, f)| {
                (it.arg() == Some(c) && reads_arg_bytes(it.transition))
                    || (it.args.contains(&c) && f.as_ref().is_some_and(FmgrAgg::is_distinct))
            }),
        }
    }

    /// Aggregate rows `rows` of `columns` (a child batch or a batch read
    /// back from a file).
    unsafe fn feed(&mut self, columns: &[Column], rows: &[RowIdx], groups: &mut Vec<u32>) {
        unsafe {
            // Host-keyed keys as their sort keys or encodings, and their
            // values at the end.
            let host_keys: Vec<Option<Column>> = match &mut self.grouping {
                Some(g) => g
                    .host_keys
                    .iter_mut()
                    .zip(columns)
                    .map(|(s, c)| s.as_mut().map(|s| s.column(c, rows)))
                    .collect(),
                None => Vec::new(),
            };
            let keys: Vec<&Column> = host_keys
                .iter()
                .zip(columns)
                .map(|(s, c)| s.as_ref().unwrap_or(c))
                .chain(host_keys.iter().zip(columns).filter(|(s, _)| s.is_some()).map(|(_, c)| c))
                .collect();
            let incoming = match &self.grouping {
                Some(g) if !g.frozen => g.table.key_bytes(&keys, rows),
                _ => Vec::new(),
            };
            self.make_room(rows.len(), &incoming);
            // The rows the accumulators take (all but spilled ones) and their groups.
            let rows: std::borrow::Cow<'_, [RowIdx]> = match &mut self.grouping {
                None => {
                    groups.clear();
                    groups.resize(rows.len(), 0);
                    rows.into()
                }
                Some(g) => {
                    if !g.frozen {
                        let created = g.table.assign(&keys, rows, groups);
                        if created > 0 {
                            self.stats.groups += created as u64;
                            let (n, room) = (g.table.len(), g.table.room());
                            for (a, it) in self.accs.iter_mut().zip(&self.items) {
                                if it.shares.is_none() {
                                    a.ensure_groups_in(n, room);
                                }
                            }
                            self.fmgr.iter_mut().flatten().for_each(|f| f.ensure_groups_in(n, room));
                        }
                        rows.into()
                    } else {
                        // Rows of groups in the table update them; the
                        // others go to the file of their hash partition.
                        let mut hashes = Vec::new();
                        g.table.lookup(&keys, rows, groups, &mut hashes);
                        let mut parts: Vec<Vec<RowIdx>> = vec![Vec::new(); SPILL_FANOUT];
                        let mut kept_rows = Vec::with_capacity(rows.len());
                        let mut kept_groups = Vec::with_capacity(rows.len());
                        for ((&r, &grp), &h) in rows.iter().zip(groups.iter()).zip(&hashes) {
                            if grp == NO_GROUP {
                                parts[partition_of(h, g.level, SPILL_FANOUT)].push(r);
                            } else {
                                kept_rows.push(r);
                                kept_groups.push(grp);
                            }
                        }
                        let stand_ins: Vec<Column> = columns
                            .iter()
                            .zip(&g.spill_values)
                            .map(
                                |(c, &keep)| {
                                    if keep {
                                        Column::new(PhysType::Bool, 0)
                                    } else {
                                        validity_only(c)
                                    }
                                },
                            )
                            .collect();
                        let spilled: Vec<RowIdx> = parts.concat();
                        let numerics: Vec<Option<Column>> = columns
                            .iter()
                            .zip(&g.scaled)
                            .map(|(c, scale)| match (scale, &c.values) {
                                (Some(s), Values::I64(_) | Values::I128(_)) => {
                                    Some(numeric_column(c, *s, &spilled, self.econtext))
                                }
                                _ => None,
                            })
                            .collect();
                        let cols: Vec<&Column> = columns
                            .iter()
                            .zip(&stand_ins)
                            .zip(&g.spill_values)
                            .zip(&numerics)
                            .map(|(((c, s), &keep), n)| match (keep, n) {
                                (true, Some(n)) => n,
                                (true, None) => c,
                                (false, _) => s,
                            })
                            .collect();
                        for (file, part) in g.spill.iter_mut().zip(&parts) {
                            file.write(&cols, &g.fixed, part, &mut g.scratch);
                            self.stats.spilled_rows += part.len() as u64;
                        }
                        *groups = kept_groups;
                        kept_rows.into()
                    }
                }
            };
            let (mut f_groups, mut f_rows) = (Vec::new(), Vec::new());
            // count(DISTINCT x) under a nondeterministic collation counts sort keys.
            let distinct_args: Vec<Option<Column>> = self
                .distinct_host_keys
                .iter_mut()
                .zip(&self.items)
                .map(|(s, it)| s.as_mut().map(|s| s.column(&columns[it.arg().expect("an argument")], &rows)))
                .collect();
            for (((item, acc), fmgr), distinct_arg) in
                self.items.iter().zip(self.accs.iter_mut()).zip(self.fmgr.iter_mut()).zip(&distinct_args)
            {
                let arg = distinct_arg.as_ref().or(item.arg().map(|i| &columns[i]));
                let (groups, rows) = match item.filter {
                    None => (&groups[..], &rows[..]),
                    Some(f) => {
                        let Values::Bool(pass) = &columns[f].values else { panic!("a FILTER is boolean") };
                        (f_groups.clear(), f_rows.clear());
                        for (&g, &r) in groups.iter().zip(rows.iter()) {
                            if columns[f].is_valid(r as usize) && pass[r as usize] != 0 {
                                f_groups.push(g);
                                f_rows.push(r);
                            }
                        }
                        (&f_groups[..], &f_rows[..])
                    }
                };
                if item.shares.is_some() {
                    continue;
                }
                if let Some(f) = fmgr {
                    let args: Vec<&Column> = item.args.iter().map(|&i| &columns[i]).collect();
                    let old = pg_sys::MemoryContextSwitchTo((*self.econtext).ecxt_per_tuple_memory);
                    f.update(groups, rows, &args);
                    pg_sys::MemoryContextSwitchTo(old);
                    continue;
                }
                let outcome = match (self.split, arg) {
                    (AggSplit::Finalize, Some(states)) => acc.combine(groups, rows, states),
                    _ => acc.update(groups, rows, arg),
                };
                match outcome {
                    Ok(()) => {}
                    Err(AggError::FloatOverflow { .. }) => {
                        ereport!(
                            ERROR,
                            PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
                            "value out of range: overflow"
                        );
                    }
                    Err(AggError::InvalidState { .. }) => {
                        ereport!(
                            ERROR,
                            PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                            "a partial aggregate state of VecAgg does not read back"
                        );
                    }
                    Err(AggError::InvalidNumeric { .. }) => {
                        ereport!(
                            ERROR,
                            PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
                            "invalid numeric value in an aggregate's input"
                        );
                    }
                }
            }
            self.check_memory();
        }
    }

    /// Bytes held by the group table, the accumulators and fmgr states.
    fn memory_used(&self) -> usize {
        let Some(g) = &self.grouping else { return 0 };
        g.table.bytes_used()
            + g.host_keys.iter().flatten().map(HostKeys::bytes_used).sum::<usize>()
            + self.accs.iter().map(Accumulator::bytes_used).sum::<usize>()
            + self.fmgr.iter().flatten().map(FmgrAgg::bytes_used).sum::<usize>()
    }

    /// Before a batch of `r` rows that may each start a group: room for
    /// them in the table and the states, by doubling while that stays
    /// within the budget and then only up to it. When even that is too
    /// little the table is frozen (the batch's new groups spill). Checking
    /// only after each batch, with vectors that all double at once,
    /// overshot hash_mem by half.
    unsafe fn make_room(&mut self, r: usize, incoming: &[usize]) {
        let used = self.memory_used();
        let Some(g) = &mut self.grouping else { return };
        let (n, room) = (g.table.len(), g.table.room());
        if g.frozen || (n + r <= room && !g.table.needs_key_room(incoming)) {
            return;
        }
        // Key bytes alone may be short: room for them, the groups as they are.
        let wanted = if n + r <= room { room } else { (2 * room).max(n + r).max(1024) };
        let target = if room == 0 {
            wanted
        } else {
            // The states are sized to the room reserved; the table foretells
            // its own size (its index grows by powers of two, so a share
            // proportional to the groups overran hash_mem).
            let states = used.saturating_sub(g.table.bytes_used()) as f64 / room as f64;
            let bytes_at = |t: usize| g.table.bytes_at(t, incoming) + (states * t.max(room) as f64) as usize;
            largest_within(n + r, wanted, |t| bytes_at(t) <= g.budget).unwrap_or(0)
        };
        if target >= n + r || g.level >= MAX_SPILL_LEVEL {
            g.table.reserve_groups(target.max(n + r), incoming);
        } else {
            unsafe { self.freeze() };
        }
    }

    /// The table takes no new groups from here: their rows go to files.
    unsafe fn freeze(&mut self) {
        let Some(g) = &mut self.grouping else { return };
        g.frozen = true;
        let old = unsafe { pg_sys::MemoryContextSwitchTo(self.query_cxt) };
        g.spill = (0..SPILL_FANOUT).map(|_| unsafe { SpillFile::create() }).collect();
        unsafe { pg_sys::MemoryContextSwitchTo(old) };
        self.stats.spill_files += SPILL_FANOUT as u64;
    }

    /// Freeze the table once it and the accumulators outgrow the budget
    /// anyway (states that grow without new groups: DISTINCT sets, text
    /// extremes, fmgr states).
    unsafe fn check_memory(&mut self) {
        let used = self.memory_used();
        self.stats.peak_memory = self.stats.peak_memory.max(used);
        let Some(g) = &self.grouping else { return };
        if used > g.budget && !g.frozen && g.level < MAX_SPILL_LEVEL {
            unsafe { self.freeze() };
        }
    }

    /// The current input is consumed: its spill files wait their turn.
    unsafe fn input_done(&mut self) {
        self.stage = Stage::Returning;
        // DISTINCT aggregates through fmgr take their rows now, sorted.
        for f in self.fmgr.iter_mut().flatten() {
            unsafe { f.finish_distinct() };
        }
        let Some(g) = &mut self.grouping else { return };
        let level = g.level + 1;
        for mut f in std::mem::take(&mut g.spill) {
            self.stats.spilled_bytes += f.bytes;
            if f.rows == 0 {
                unsafe { f.close() };
            } else {
                unsafe { f.rewind() };
                g.pending.push((f, level));
            }
        }
    }

    /// Start on the next spilled partition: a fresh table and accumulators,
    /// fed from the file. False when none is left.
    unsafe fn next_partition(&mut self) -> bool {
        unsafe {
            let Some(g) = &mut self.grouping else { return false };
            let Some((mut file, level)) = g.pending.pop() else { return false };
            g.restart(level);
            let (types, fixed) = (g.types.clone(), g.fixed.clone());
            self.accs = new_accumulators(&self.items, false);
            self.fmgr.iter_mut().flatten().for_each(FmgrAgg::restart);
            let mut buf = Vec::new();
            let mut groups = Vec::new();
            while let Some(batch) = file.read(&types, &fixed, &mut buf) {
                check_for_interrupts!();
                let rows: Vec<RowIdx> = (0..batch.len as RowIdx).collect();
                self.feed(&batch.columns, &rows, &mut groups);
            }
            file.close();
            self.input_done();
            true
        }
    }

    /// Close every temporary file (normal end or rescan; after an ERROR the
    /// resource owner has closed them).
    unsafe fn close_files(&mut self) {
        if let Some(g) = &mut self.grouping {
            for f in std::mem::take(&mut g.spill) {
                unsafe { f.close() };
            }
            for (f, _) in std::mem::take(&mut g.pending) {
                unsafe { f.close() };
            }
        }
    }
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

/// Scaled integers of `c` back to numeric Datums for rows `rows`, in the
/// per-batch memory (for a spill file).
unsafe fn numeric_column(
    c: &Column,
    scale: u16,
    rows: &[RowIdx],
    econtext: *mut pg_sys::ExprContext,
) -> Column {
    unsafe {
        let mut out = Column::new(PhysType::Datum, c.len());
        out.validity = c.validity.clone();
        let old = pg_sys::MemoryContextSwitchTo((*econtext).ecxt_per_tuple_memory);
        for &r in rows {
            let r = r as usize;
            if c.is_valid(r) {
                let v = match &c.values {
                    Values::I128(v) => v[r],
                    v => v.datum(r) as i64 as i128,
                };
                out.values.set_datum(r, palloc_varlena(&vexec_core::numeric::encode_payload(v, scale)));
            }
        }
        pg_sys::MemoryContextSwitchTo(old);
        out
    }
}

/// The order of collation `collid` as text_cmp has it: PostgreSQL's
/// `varstr_cmp` (an ERROR it raises unwinds through the aggregate and is
/// raised again at the node's boundary).
fn collation_order(collid: pg_sys::Oid) -> TextOrder {
    TextOrder(Box::new(move |a: &[u8], b: &[u8]| {
        let r = unsafe {
            pg_sys::varstr_cmp(a.as_ptr().cast(), a.len() as i32, b.as_ptr().cast(), b.len() as i32, collid)
        };
        r.cmp(&0)
    }))
}

/// Whether a transition compares its argument's bytes.
fn reads_arg_bytes(t: Transition) -> bool {
    matches!(
        t,
        Transition::MinMaxBytes { .. }
            | Transition::CountDistinct(
                KeyKind::Bytes
                    | KeyKind::Bpchar
                    | KeyKind::Numeric
                    | KeyKind::Collated
                    | KeyKind::CollatedBpchar
                    | KeyKind::Encoded
            )
            | Transition::SumNumeric
            | Transition::AvgNumeric
            | Transition::MinMaxNumeric { .. }
    )
}

/// A column that keeps only `c`'s validity (for count(x) arguments written
/// to a spill file).
fn validity_only(c: &Column) -> Column {
    let mut out = Column::new(PhysType::Bool, c.len());
    out.validity = c.validity.clone();
    out
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
            AggResult::NumericSpecial(sp) => palloc_varlena(&vexec_core::numeric::encode_special(sp)),
            AggResult::NumericSum { value, dscale, wide, count, avg } => {
                // As numeric_sum / numeric_avg: the exact sum (values too
                // wide for the scaled sum added by numeric_add), divided by
                // the count of finite values for avg.
                let call = |f: u32, a: usize, b: usize| {
                    pg_sys::OidFunctionCall2Coll(
                        pg_sys::Oid::from(f),
                        pg_sys::InvalidOid,
                        pg_sys::Datum::from(a),
                        pg_sys::Datum::from(b),
                    )
                    .value()
                };
                let mut sum = palloc_varlena(&vexec_core::numeric::encode_payload(value, dscale));
                for w in wide {
                    sum = call(pg_sys::F_NUMERIC_ADD, sum, palloc_varlena(w));
                }
                if avg {
                    call(pg_sys::F_NUMERIC_DIV, sum, numeric_datum(count as i128))
                } else {
                    sum
                }
            }
            AggResult::Float4(f) => f.to_bits() as usize,
            AggResult::Float8(f) if result_type == pg_sys::FLOAT4OID => (f as f32).to_bits() as usize,
            AggResult::Float8(f) => f.to_bits() as usize,
            AggResult::Bytes(b) => palloc_varlena(b),
        })
    }
}

/// The Datum of group `g`'s key `k` (None for NULL), in the current memory context.
unsafe fn key_datum(g: &Grouping, k: usize, group: usize) -> Option<usize> {
    unsafe {
        let t = g.key_output[k];
        match g.kinds[k] {
            KeyKind::Bytes
            | KeyKind::Bpchar
            | KeyKind::Numeric
            | KeyKind::Collated
            | KeyKind::CollatedBpchar
            | KeyKind::Encoded => g.table.bytes_key(t, group).map(|b| palloc_varlena(b)),
            KeyKind::Carried => unreachable!("a plan's keys are never Carried"),
            KeyKind::Uuid | KeyKind::Interval => g.table.bytes_key(t, group).map(|b| {
                let p = pg_sys::palloc(b.len()) as *mut u8;
                std::ptr::copy_nonoverlapping(b.as_ptr(), p, b.len());
                p as usize
            }),
            KeyKind::Float4 => g
                .table
                .fixed_key(k, group)
                .map(|bits| (f64::from_bits(bits as u64) as f32).to_bits() as usize),
            KeyKind::Float8 | KeyKind::Int => g.table.fixed_key(k, group).map(|v| v as usize),
        }
    }
}

impl AggState {
    /// The next group to return (the only one of a plain aggregate), None
    /// at the end. At the end of a spilled partition: the next partition is
    /// aggregated first when `next_partition`, else None (it restarts the
    /// states the returned groups' by-reference results point into).
    unsafe fn next_group(&mut self, next_partition: bool) -> Option<usize> {
        loop {
            match &mut self.grouping {
                None => {
                    self.stage = Stage::Done;
                    return Some(0);
                }
                Some(g) if g.next < g.table.len() => {
                    g.next += 1;
                    return Some(g.next - 1);
                }
                Some(_) if !next_partition => return None,
                Some(_) => {
                    if !unsafe { self.next_partition() } {
                        self.stage = Stage::Done;
                        return None;
                    }
                }
            }
        }
    }

    /// Group `group`'s keys, then its aggregates' results (partial states
    /// for a Partial), as Datums in the current memory context, each passed
    /// to `put` with its scan tuple column.
    unsafe fn group_values(&self, group: usize, mut put: impl FnMut(usize, Option<usize>)) {
        unsafe {
            let mut col = 0;
            if let Some(g) = &self.grouping {
                for k in 0..g.kinds.len() {
                    put(col, key_datum(g, k, group));
                    col += 1;
                }
            }
            let mut state = Vec::new();
            for ((item, acc), fmgr) in self.items.iter().zip(&self.accs).zip(&self.fmgr) {
                let acc = item.shares.map_or(acc, |j| &self.accs[j]);
                let d = if let Some(f) = fmgr {
                    f.result(group)
                } else if self.split == AggSplit::Partial {
                    acc.serialize(group, &mut state);
                    Some(palloc_varlena(&state))
                } else {
                    result_datum(acc.result_as(group, item.transition), item.result_type)
                };
                put(col, d);
                col += 1;
            }
        }
    }
}

/// How a VecAgg hands batches to a vector parent (every VecAgg but a
/// Partial, whose parent is a Gather): `Direct` when every output column is
/// a column of the scan tuple (keys and results; the scan tuple column of
/// each), `Projected` when some are computed (PostgreSQL's projection runs
/// per group, as for a row parent). HAVING, if any, is evaluated per group
/// either way.
#[derive(Debug, Clone)]
pub enum BatchShape {
    Direct(Vec<usize>),
    Projected,
}

/// The batch shape of VecAgg plan `plan`, None for a Partial.
///
/// # Safety
/// `plan` is a VecAgg plan.
pub unsafe fn batch_columns(plan: *const pg_sys::CustomScan) -> Option<BatchShape> {
    unsafe {
        if (*plan).methods == scan_methods(AggSplit::Partial) {
            return None;
        }
        let direct: Option<Vec<usize>> = list_ptrs::<pg_sys::TargetEntry>((*plan).scan.plan.targetlist)
            .map(|te| {
                let e = (*te).expr as *mut pg_sys::Node;
                if (*e).type_ != pg_sys::NodeTag::T_Var {
                    return None;
                }
                let v = e as *mut pg_sys::Var;
                ((*v).varno == pg_sys::INDEX_VAR && (*v).varattno > 0 && (*v).varlevelsup == 0)
                    .then(|| (*v).varattno as usize - 1)
            })
            .collect();
        Some(direct.map_or(BatchShape::Projected, BatchShape::Direct))
    }
}

impl AggState {
    /// Up to a batch of output rows of node `node` (this state's): groups
    /// that pass HAVING, their output columns.
    unsafe fn next_batch(&mut self, node: *mut pg_sys::CustomScanState) -> Option<VectorBatch> {
        unsafe {
            if self.stage == Stage::Done {
                return None;
            }
            if self.stage == Stage::Consuming {
                self.consume();
            }
            // (A clone of a few integers: the loop below needs `self` mutably.)
            let (shape, types) =
                self.batch_out.clone().expect("VecAgg gives batches only when batch_columns accepts it");
            let (qual, proj) = ((*node).ss.ps.qual, (*node).ss.ps.ps_ProjInfo);
            let (slot, econtext) = ((*node).ss.ss_ScanTupleSlot, self.econtext);
            let mut columns: Vec<Column> = types.iter().map(|&t| Column::new(t, BATCH_CAPACITY)).collect();
            // The previous batch is consumed: its by-reference values go.
            // HAVING and the projection evaluate in this memory too, so
            // what they return stays valid as long as the batch.
            let per_batch = (*econtext).ecxt_per_tuple_memory;
            pg_sys::MemoryContextReset(per_batch);
            let old = pg_sys::MemoryContextSwitchTo(per_batch);
            let mut values: Vec<Option<usize>> = Vec::new();
            let mut n = 0;
            while n < BATCH_CAPACITY {
                // A batch ends where a spilled partition ends (unless it has
                // no row yet: every group so far failed HAVING).
                let Some(group) = self.next_group(n == 0) else { break };
                values.clear();
                self.group_values(group, |_, d| values.push(d));
                let plain = self.grouping.is_none();
                if !qual.is_null() || matches!(shape, BatchShape::Projected) {
                    // The group as the scan tuple, as a row parent gets it.
                    pg_sys::ExecClearTuple(slot);
                    for (col, d) in values.iter().enumerate() {
                        *(*slot).tts_values.add(col) = pg_sys::Datum::from(d.unwrap_or(0));
                        *(*slot).tts_isnull.add(col) = d.is_none();
                    }
                    pg_sys::ExecStoreVirtualTuple(slot);
                    (*econtext).ecxt_scantuple = slot;
                    if !qual.is_null() && !pg_sys::ExecQual(qual, econtext) {
                        if plain {
                            break;
                        }
                        continue;
                    }
                }
                match &shape {
                    BatchShape::Direct(map) => {
                        for (col, &src) in columns.iter_mut().zip(map) {
                            match values[src] {
                                Some(d) => col.values.set_datum(n, d),
                                None => col.validity.set(n, false),
                            }
                        }
                    }
                    BatchShape::Projected => {
                        let out = if proj.is_null() { slot } else { pg_sys::ExecProject(proj) };
                        pg_sys::slot_getallattrs(out);
                        for (i, col) in columns.iter_mut().enumerate() {
                            if *(*out).tts_isnull.add(i) {
                                col.validity.set(n, false);
                            } else {
                                col.values.set_datum(n, (*(*out).tts_values.add(i)).value());
                            }
                        }
                    }
                }
                n += 1;
                if plain {
                    break;
                }
            }
            pg_sys::MemoryContextSwitchTo(old);
            check_for_interrupts!();
            (n > 0).then(|| VectorBatch { columns, rows: full_selection(n) })
        }
    }
}

unsafe fn exec(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
    unsafe {
        let st = state(node);
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

unsafe fn rescan(node: *mut pg_sys::CustomScanState) {
    unsafe {
        let st = state(node);
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
    node: *mut pg_sys::CustomScanState,
    ancestors: *mut pg_sys::List,
    es: *mut pg_sys::ExplainState,
) {
    unsafe {
        let st = state(node);
        let prop = |label: &std::ffi::CStr, value: String| crate::pgutil::explain_text(es, label, &value);
        let int = |label: &std::ffi::CStr, unit: Option<&std::ffi::CStr>, v: u64| {
            pg_sys::ExplainPropertyInteger(
                label.as_ptr(),
                unit.map_or(ptr::null(), |u| u.as_ptr()),
                v as i64,
                es,
            )
        };
        match &st.grouping {
            None => prop(c"Strategy", "Plain".into()),
            Some(g) => {
                prop(c"Strategy", "Hashed".into());
                // The keys as PostgreSQL's Agg shows them (custom_scan_tlist
                // holds them first, as expressions over the scanned relation).
                let plan = (*node).ss.ps.plan;
                let context = pg_sys::set_deparse_context_plan((*es).deparse_cxt, plan, ancestors);
                let prefix = !(*es).rtable.is_null() && (*(*es).rtable).length > 1;
                let keys: Vec<String> =
                    list_ptrs::<pg_sys::TargetEntry>((*(plan as *mut pg_sys::CustomScan)).custom_scan_tlist)
                        .take(g.kinds.len())
                        .map(|te| {
                            let s = pg_sys::deparse_expression((*te).expr.cast(), context, prefix, false);
                            std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned()
                        })
                        .collect();
                prop(c"Group Key", keys.join(", "));
            }
        }
        if (*es).verbose {
            let nfmgr = st.fmgr.iter().flatten().count();
            prop(c"Vector Transitions", format!("{} of {}", st.items.len() - nfmgr, st.items.len()));
            if nfmgr > 0 {
                int(c"Fmgr Transitions", None, nfmgr as u64);
            }
            let scaled = st.items.iter().filter(|it| it.arg_scale.is_some()).count();
            if scaled > 0 {
                int(c"Scaled Numeric Arguments", None, scaled as u64);
            }
        }
        if (*es).analyze {
            int(c"Batches", None, st.stats.batches);
            if st.grouping.is_some() {
                int(c"Groups", None, st.stats.groups);
                int(c"Peak Memory", Some(c"kB"), st.stats.peak_memory.div_ceil(1024) as u64);
                if st.stats.spill_files > 0 {
                    int(c"Spill Files", None, st.stats.spill_files);
                    int(c"Spilled Rows", None, st.stats.spilled_rows);
                    int(c"Spilled", Some(c"kB"), st.stats.spilled_bytes.div_ceil(1024));
                }
            }
        }
    }
}
