//! VecSort: ORDER BY over the output of a vector node.
//!
//! The node gathers its child's rows column by column in a `vexec_core`
//! RowStore (from VecScan's batch interface, or through slots from any
//! other child, VecAgg included), then computes the output order as a
//! permutation (`vexec_core::sort`) and returns the rows in that order
//! through its scan tuple; PostgreSQL projects the target list on top.
//!
//! Keys of the types whose order vexec_core knows (integers, dates,
//! timestamps, floats, booleans, strings under a bytewise collation) are
//! compared natively; any other key is ranked first by the server with the
//! sort operator's own SortSupport comparator, in one guarded call per sort.
//!
//! Top-N: with a bound taken at plan time (LIMIT/OFFSET known then;
//! PostgreSQL passes no bound to a custom scan at run time), the store is
//! cut back to the bound plus its ties whenever it grows past a few times
//! the bound, so memory stays proportional to the bound.
//!
//! Memory: the rows, and copies of their by-reference values in the node's
//! own memory context, stay within `work_mem`. Past it everything moves to
//! a PostgreSQL tuplesort (which spills to temporary files) and the rest of
//! the input follows it there.
//!
//! Rust state is dropped by EndCustomScan, or by a reset callback on the
//! query's memory context when the query ends with an ERROR or a cancel;
//! the tuplesort and the memory context belong to the query's resource
//! owner and memory contexts. Interrupts are checked per batch.

use std::ptr;

use crate::exec::node::{self, NodeMethods, VecNode};
use crate::pgutil::{list_ints, list_ptrs, SyncPtr};
use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::batch::{Column, RowIdx, BATCH_CAPACITY};
use vexec_core::plan_data::SortPlanData;
use vexec_core::sort::{sort_rows, KeyValues, RowStore, SortKey};

use crate::exec::input::{rows_context, ChildInput};
use crate::shim;

use crate::nodes::SORT as NAME;

/// Rows gathered before the first cut of a top-N sort (at least).
const TOP_N_MIN_ROWS: usize = 8 * BATCH_CAPACITY;

/// One ORDER BY item, as planned (plan/sort.rs writes them).
#[derive(Debug, Clone, Copy)]
pub struct KeySpec {
    /// The child column.
    pub col: usize,
    pub sortop: pg_sys::Oid,
    pub collation: pg_sys::Oid,
    pub nulls_first: bool,
}

/// How a key is compared at run time.
#[derive(Debug, Clone, Copy)]
enum KeyCmp {
    /// By vexec_core, ascending or descending.
    Native { descending: bool, bytes: bool },
    /// By rank from the server's comparator.
    Ranked,
}

#[derive(Default)]
struct Stats {
    batches: u64,
    rows: u64,
    cuts: u64,
    /// Rows a top-N sort dropped on arrival (after its boundary).
    dropped: u64,
    peak_memory: usize,
}

pub struct SortState {
    keys: Vec<KeySpec>,
    cmps: Vec<KeyCmp>,
    bound: Option<usize>,
    src: ChildInput,
    store: RowStore,
    /// Copies of the stored rows' by-reference values.
    data_cxt: pg_sys::MemoryContext,
    query_cxt: pg_sys::MemoryContext,
    econtext: *mut pg_sys::ExprContext,
    /// Set once the rows outgrew work_mem.
    tuplesort: *mut pg_sys::Tuplesortstate,
    /// A minimal-tuple slot the tuplesort returns rows in.
    sorted_slot: *mut pg_sys::TupleTableSlot,
    /// Rows to gather before the next top-N cut.
    cut_at: usize,
    /// Top-N: per key, its SortSupport (allocated with the first boundary).
    ssups: *mut pg_sys::SortSupportData,
    /// Top-N: the key values of the last row kept by the latest cut; batch
    /// rows that sort after it are dropped on arrival.
    boundary: Option<Vec<Option<usize>>>,
    budget: usize,
    order: Vec<u32>,
    pos: usize,
    sorted: bool,
    stats: Stats,
}

static METHODS: NodeMethods = NodeMethods::new::<SortState>(NAME, false, None);
static SCAN_METHODS: SyncPtr<pg_sys::CustomScanMethods> = SyncPtr(node::scan_methods::<SortState>(NAME));

pub fn scan_methods() -> *const pg_sys::CustomScanMethods {
    &SCAN_METHODS.0
}

/// What `exec::register` registers of VecSort.
pub fn methods() -> (&'static SyncPtr<pg_sys::CustomScanMethods>, &'static NodeMethods) {
    (&SCAN_METHODS, &METHODS)
}

impl VecNode for SortState {
    const WHAT: &'static str = "VecSort";

    fn methods() -> &'static NodeMethods {
        &METHODS
    }

    unsafe fn begin(
        node: *mut pg_sys::CustomScanState,
        estate: *mut pg_sys::EState,
        eflags: i32,
    ) -> Box<Self> {
        // SAFETY: VecNode::begin's contract: node is a VecSort's CustomScanState being begun, its
        // plan our CustomScan with one child plan.
        unsafe {
            let cscan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
            let child_plan =
                list_ptrs::<pg_sys::Plan>((*cscan).custom_plans).next().expect("VecSort has a child");
            // The sort is redone on a rescan, so the child needs no REWIND or BACKWARD.
            let child_flags = eflags
                & !(pg_sys::EXEC_FLAG_REWIND | pg_sys::EXEC_FLAG_BACKWARD | pg_sys::EXEC_FLAG_MARK) as i32;
            let src = ChildInput::init(child_plan, estate, child_flags);
            (*node).custom_ps = pg_sys::lappend(ptr::null_mut(), src.child.cast());

            let data = SortPlanData::decode(&list_ints((*cscan).custom_private))
                .unwrap_or_else(|e| error!("vexec internal error: a VecSort plan's private data: {}", e.0));
            let bound = data.bound;
            let keys: Vec<KeySpec> = data
                .keys
                .iter()
                .map(|k| KeySpec {
                    col: k.col,
                    sortop: pg_sys::Oid::from(k.sortop),
                    collation: pg_sys::Oid::from(k.collation),
                    nulls_first: k.nulls_first,
                })
                .collect();
            let typids: Vec<pg_sys::Oid> = list_ptrs::<pg_sys::TargetEntry>((*cscan).custom_scan_tlist)
                .map(|te| pg_sys::exprType((*te).expr.cast()))
                .collect();
            let cmps = keys.iter().map(|k| key_cmp(k, typids[k.col])).collect();
            let query_cxt = (*estate).es_query_cxt;
            let data_cxt = rows_context(query_cxt, c"VecSort rows");
            let desc = (*(*node).ss.ss_ScanTupleSlot).tts_tupleDescriptor;
            let sorted_slot = pg_sys::ExecInitExtraTupleSlot(estate, desc, &pg_sys::TTSOpsMinimalTuple);
            let st = Box::new(SortState {
                store: RowStore::new(&src.types),
                keys,
                cmps,
                bound,
                src,
                data_cxt,
                query_cxt,
                econtext: (*node).ss.ps.ps_ExprContext,
                tuplesort: ptr::null_mut(),
                sorted_slot,
                cut_at: first_cut(bound),
                ssups: ptr::null_mut(),
                boundary: None,
                budget: pg_sys::work_mem as usize * 1024,
                order: Vec::new(),
                pos: 0,
                sorted: false,
                stats: Stats::default(),
            });
            st
        }
    }

    unsafe fn exec(&mut self, node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
        // SAFETY: VecNode::exec's contract: node is this state's node.
        unsafe {
            let st = self;
            if !st.sorted {
                st.run(node);
            }
            let slot = (*node).ss.ss_ScanTupleSlot;
            if st.tuplesort.is_null() {
                let Some(&row) = st.order.get(st.pos) else {
                    return pg_sys::ExecClearTuple((*node).ss.ps.ps_ResultTupleSlot);
                };
                st.pos += 1;
                st.fill_from_store(slot, row as usize);
            } else {
                // The projection reads the scan slot as a virtual tuple: move the
                // tuplesort's minimal tuple there (its values stay valid until
                // the next row is fetched).
                let sorted = st.sorted_slot;
                if !pg_sys::tuplesort_gettupleslot(st.tuplesort, true, false, sorted, ptr::null_mut()) {
                    return pg_sys::ExecClearTuple((*node).ss.ps.ps_ResultTupleSlot);
                }
                pg_sys::slot_getallattrs(sorted);
                pg_sys::ExecClearTuple(slot);
                let n = st.src.types.len();
                ptr::copy_nonoverlapping((*sorted).tts_values, (*slot).tts_values, n);
                ptr::copy_nonoverlapping((*sorted).tts_isnull, (*slot).tts_isnull, n);
                pg_sys::ExecStoreVirtualTuple(slot);
            }
            let econtext = st.econtext;
            pg_sys::MemoryContextReset((*econtext).ecxt_per_tuple_memory);
            (*econtext).ecxt_scantuple = slot;
            let proj = (*node).ss.ps.ps_ProjInfo;
            if proj.is_null() {
                return slot;
            }
            pg_sys::ExecProject(proj)
        }
    }

    unsafe fn end(&mut self, _node: *mut pg_sys::CustomScanState) {
        // SAFETY: the tuplesort, when set, is this state's own and not yet ended.
        unsafe {
            if !self.tuplesort.is_null() {
                pg_sys::tuplesort_end(self.tuplesort);
                self.tuplesort = ptr::null_mut();
            }
            pg_sys::ExecEndNode(self.src.child);
        }
    }

    unsafe fn rescan(&mut self, node: *mut pg_sys::CustomScanState) {
        // SAFETY: VecNode::rescan's contract: node is this state's node.
        unsafe {
            let st = self;
            // Same input (no parameter of ours changed) sorted in memory: read
            // the same order again. Otherwise sort again from a rescanned child.
            if st.sorted && st.tuplesort.is_null() && (*node).ss.ps.chgParam.is_null() {
                st.pos = 0;
                return;
            }
            st.reset();
            // PostgreSQL passes changed parameters to a plan's left and right
            // children only; ours is in custom_ps.
            let changed = (*node).ss.ps.chgParam;
            if !changed.is_null() {
                pg_sys::UpdateChangedParamSet(st.src.child, changed);
            }
            pg_sys::ExecReScan(st.src.child);
            st.src.rescanned();
        }
    }

    unsafe fn explain(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        ancestors: *mut pg_sys::List,
        es: *mut pg_sys::ExplainState,
    ) {
        // SAFETY: VecNode::explain's contract: es is the running EXPLAIN and ancestors its ancestor
        // list.
        unsafe {
            let st = self;
            let plan = (*node).ss.ps.plan;
            let context = pg_sys::set_deparse_context_plan((*es).deparse_cxt, plan, ancestors);
            let prefix = !(*es).rtable.is_null() && (*(*es).rtable).length > 1;
            let tlist: Vec<*mut pg_sys::TargetEntry> =
                list_ptrs::<pg_sys::TargetEntry>((*(plan as *mut pg_sys::CustomScan)).custom_scan_tlist)
                    .collect();
            let keys: Vec<String> = st
                .keys
                .iter()
                .map(|k| {
                    let expr = (*tlist[k.col]).expr;
                    let s = pg_sys::deparse_expression(expr.cast(), context, prefix, false);
                    let mut out = std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned();
                    // As PostgreSQL's show_sortorder_options writes them.
                    let typid = pg_sys::exprType(expr.cast());
                    let tc = pg_sys::lookup_type_cache(
                        typid,
                        (pg_sys::TYPECACHE_LT_OPR | pg_sys::TYPECACHE_GT_OPR) as i32,
                    );
                    let reverse = k.sortop == (*tc).gt_opr;
                    if k.collation != pg_sys::InvalidOid && k.collation != pg_sys::get_typcollation(typid) {
                        let name = pg_sys::get_collation_name(k.collation);
                        if !name.is_null() {
                            let name = std::ffi::CStr::from_ptr(name).to_string_lossy();
                            out.push_str(&format!(" COLLATE \"{name}\""));
                        }
                    }
                    if reverse {
                        out.push_str(" DESC");
                    } else if k.sortop != (*tc).lt_opr {
                        let name = pg_sys::get_opname(k.sortop);
                        if !name.is_null() {
                            out.push_str(&format!(
                                " USING {}",
                                std::ffi::CStr::from_ptr(name).to_string_lossy()
                            ));
                        }
                    }
                    if k.nulls_first && !reverse {
                        out.push_str(" NULLS FIRST");
                    } else if !k.nulls_first && reverse {
                        out.push_str(" NULLS LAST");
                    }
                    out
                })
                .collect();
            let prop = |label: &std::ffi::CStr, value: String| crate::pgutil::explain_text(es, label, &value);
            let int = |label: &std::ffi::CStr, unit: Option<&std::ffi::CStr>, v: u64| {
                pg_sys::ExplainPropertyInteger(
                    label.as_ptr(),
                    unit.map_or(ptr::null(), |u| u.as_ptr()),
                    v as i64,
                    es,
                )
            };
            prop(c"Sort Key", keys.join(", "));
            if let Some(b) = st.bound {
                int(c"Top-N Bound", None, b as u64);
            }
            if (*es).verbose {
                let native = st.cmps.iter().filter(|c| matches!(c, KeyCmp::Native { .. })).count();
                prop(c"Vector Keys", format!("{native} of {}", st.cmps.len()));
                prop(c"Input", if st.src.batches() { "batches".into() } else { "rows".into() });
                ChildInput::explain_conversions(&[&st.src], es);
            }
            if (*es).analyze && st.sorted {
                int(c"Batches", None, st.stats.batches);
                if st.tuplesort.is_null() {
                    let method = if st.bound.is_some() { "vector top-N" } else { "vector in-memory" };
                    prop(c"Sort Method", method.into());
                    int(c"Peak Memory", Some(c"kB"), st.stats.peak_memory.div_ceil(1024) as u64);
                    if st.stats.cuts > 0 {
                        int(c"Top-N Cuts", None, st.stats.cuts);
                        int(c"Rows Dropped Early", None, st.stats.dropped);
                    }
                } else {
                    let mut stats: pg_sys::TuplesortInstrumentation = std::mem::zeroed();
                    pg_sys::tuplesort_get_stats(st.tuplesort, &mut stats);
                    let method = std::ffi::CStr::from_ptr(pg_sys::tuplesort_method_name(stats.sortMethod));
                    prop(c"Sort Method", format!("tuplesort {}", method.to_string_lossy()));
                    let space = std::ffi::CStr::from_ptr(pg_sys::tuplesort_space_type_name(stats.spaceType));
                    int(c"Sort Space Used", Some(c"kB"), stats.spaceUsed as u64);
                    prop(c"Sort Space Type", space.to_string_lossy().into_owned());
                }
            }
        }
    }
}

/// How key `k` of type `typid` is compared: natively when its operator is
/// the type's default `<` or `>` and vexec_core knows that order.
unsafe fn key_cmp(k: &KeySpec, typid: pg_sys::Oid) -> KeyCmp {
    use pg_sys::{
        BOOLOID, DATEOID, FLOAT4OID, FLOAT8OID, INT2OID, INT4OID, INT8OID, TEXTOID, TIMEOID, TIMESTAMPOID,
        TIMESTAMPTZOID, VARCHAROID,
    };
    // SAFETY: reads the type cache and operator catalogs on the backend's main thread; the caller
    // passes a live sort operator.
    unsafe {
        let native = [
            INT2OID,
            INT4OID,
            INT8OID,
            DATEOID,
            TIMEOID,
            TIMESTAMPOID,
            TIMESTAMPTZOID,
            FLOAT4OID,
            FLOAT8OID,
            BOOLOID,
        ];
        let bytes = typid == TEXTOID || typid == VARCHAROID;
        if settings_force_ranked() || !(native.contains(&typid) || bytes) {
            return KeyCmp::Ranked;
        }
        if bytes && !crate::expr::compile::collation_allows(k.collation, false) {
            return KeyCmp::Ranked;
        }
        let tc =
            pg_sys::lookup_type_cache(typid, (pg_sys::TYPECACHE_LT_OPR | pg_sys::TYPECACHE_GT_OPR) as i32);
        if k.sortop == (*tc).lt_opr {
            KeyCmp::Native { descending: false, bytes }
        } else if k.sortop == (*tc).gt_opr {
            KeyCmp::Native { descending: true, bytes }
        } else {
            KeyCmp::Ranked
        }
    }
}

/// vexec.debug_force_fallback also sends every sort key through the
/// server's comparator (so the ranked path is tested on every type).
fn settings_force_ranked() -> bool {
    crate::settings::DEBUG_FORCE_FALLBACK.get()
}

fn first_cut(bound: Option<usize>) -> usize {
    bound.map_or(usize::MAX, |b| b.saturating_mul(4).max(TOP_N_MIN_ROWS))
}

impl SortState {
    /// Whether column `c` is a natively compared string key (its values
    /// must be plain varlenas).
    fn needs_bytes(&self, c: usize) -> bool {
        self.keys
            .iter()
            .zip(&self.cmps)
            .any(|(k, cmp)| k.col == c && matches!(cmp, KeyCmp::Native { bytes: true, .. }))
    }

    /// Read the whole input, then sort it.
    unsafe fn run(&mut self, node: *mut pg_sys::CustomScanState) {
        // SAFETY: node is this state's node and econtext its live expression context; interrupts
        // are checked per batch.
        unsafe {
            let per_batch = (*self.econtext).ecxt_per_tuple_memory;
            loop {
                check_for_interrupts!();
                pg_sys::MemoryContextReset(per_batch);
                let Some((mut columns, rows)) = self.src.next(per_batch) else { break };
                self.stats.batches += 1;
                self.stats.rows += rows.len() as u64;
                if !self.tuplesort.is_null() {
                    self.put_tuplesort(node, &columns, &rows);
                    continue;
                }
                let rows = match &self.boundary {
                    Some(_) => {
                        let kept = self.drop_after_boundary(&columns, &rows);
                        self.stats.dropped += (rows.len() - kept.len()) as u64;
                        if kept.is_empty() {
                            continue;
                        }
                        kept
                    }
                    None => rows,
                };
                self.src.copy_by_ref(&mut columns, &rows, |c| self.needs_bytes(c), self.data_cxt);
                self.store.push_batch(&columns, &rows);
                if self.store.len() >= self.cut_at {
                    self.cut();
                }
                let used = self.memory();
                self.stats.peak_memory = self.stats.peak_memory.max(used);
                if used > self.budget {
                    self.start_tuplesort(node);
                }
            }
            if self.tuplesort.is_null() {
                self.order = self.sorted_order(self.bound);
            } else {
                pg_sys::tuplesort_performsort(self.tuplesort);
            }
            self.sorted = true;
            self.pos = 0;
        }
    }

    /// Bytes held for the stored rows.
    unsafe fn memory(&self) -> usize {
        // SAFETY: data_cxt is this state's live memory context.
        unsafe { self.store.heap_bytes() + pg_sys::MemoryContextMemAllocated(self.data_cxt, true) }
    }

    /// The order of the stored rows (with `bound`: its first rows and ties).
    unsafe fn sorted_order(&self, bound: Option<usize>) -> Vec<u32> {
        // SAFETY: the stored rows and the keys' support functions are this state's; econtext is its
        // live expression context.
        unsafe {
            let n = self.store.len();
            // Ranks of the keys the server compares, in short-lived memory.
            let per_batch = (*self.econtext).ecxt_per_tuple_memory;
            let mut ranks: Vec<Vec<u32>> = Vec::new();
            for (k, cmp) in self.keys.iter().zip(&self.cmps) {
                if !matches!(cmp, KeyCmp::Ranked) {
                    continue;
                }
                let values: Vec<usize> = (0..n).map(|i| self.store.columns[k.col].datum(i)).collect();
                let nulls = &self.store.nulls[k.col];
                let mut r = vec![0u32; n];
                pg_sys::MemoryContextReset(per_batch);
                let old = pg_sys::MemoryContextSwitchTo(per_batch);
                shim::vx_sort_ranks(
                    k.sortop,
                    k.collation,
                    values.as_ptr(),
                    nulls.as_ptr(),
                    n as i32,
                    r.as_mut_ptr(),
                );
                pg_sys::MemoryContextSwitchTo(old);
                pg_sys::MemoryContextReset(per_batch);
                ranks.push(r);
            }
            let mut ranks = ranks.iter();
            let keys: Vec<SortKey<'_>> = self
                .keys
                .iter()
                .zip(&self.cmps)
                .map(|(k, cmp)| {
                    let nulls = self.store.nulls[k.col].as_slice();
                    match *cmp {
                        KeyCmp::Native { descending, .. } => SortKey {
                            // SAFETY: string keys were detoasted when copied.
                            values: KeyValues::of(&self.store.columns[k.col]),
                            nulls,
                            descending,
                            nulls_first: k.nulls_first,
                        },
                        KeyCmp::Ranked => SortKey {
                            values: KeyValues::Rank(ranks.next().expect("a rank per ranked key")),
                            nulls,
                            descending: false,
                            nulls_first: k.nulls_first,
                        },
                    }
                })
                .collect();
            sort_rows(&keys, n, bound)
        }
    }

    /// Top-N: keep only the bound's rows and their ties, in input order (so
    /// that ties stay in input order), with their by-reference values moved
    /// to a fresh memory context.
    unsafe fn cut(&mut self) {
        // SAFETY: as sorted_order; the new context is made under the node's query context.
        unsafe {
            let sorted = self.sorted_order(self.bound);
            let bound = self.bound.unwrap_or(usize::MAX);
            // The last row of the bound (ties after it compare equal to it).
            let last = (sorted.len() >= bound && bound > 0).then(|| sorted[bound - 1]);
            let mut keep = sorted;
            keep.sort_unstable();
            self.store.retain_rows(&keep);
            self.stats.cuts += 1;
            let fresh = rows_context(self.query_cxt, c"VecSort rows");
            let old = pg_sys::MemoryContextSwitchTo(fresh);
            for (c, by_ref) in self.src.by_ref.iter().enumerate() {
                let Some(typlen) = *by_ref else { continue };
                for i in 0..self.store.len() {
                    if let Some(d) = self.store.datum(c, i) {
                        let copy = pg_sys::datumCopy(pg_sys::Datum::from(d), false, typlen as i32);
                        self.store.columns[c].set_datum(i, copy.value());
                    }
                }
            }
            pg_sys::MemoryContextSwitchTo(old);
            pg_sys::MemoryContextDelete(self.data_cxt);
            self.data_cxt = fresh;
            self.boundary = last.map(|row| {
                let i = keep.binary_search(&row).expect("the boundary row is kept");
                self.keys.iter().map(|k| self.store.datum(k.col, i)).collect()
            });
            // Ties can keep many rows: cut again only after as many more.
            self.cut_at = first_cut(self.bound).max(self.store.len().saturating_mul(2));
        }
    }

    /// Move the stored rows to a PostgreSQL tuplesort (work_mem exceeded).
    unsafe fn start_tuplesort(&mut self, node: *mut pg_sys::CustomScanState) {
        // SAFETY: node is this state's node, its scan slot's descriptor live; tuplesort_begin_heap
        // may ERROR on the main thread.
        unsafe {
            let desc = (*(*node).ss.ss_ScanTupleSlot).tts_tupleDescriptor;
            let mut attnums: Vec<i16> = self.keys.iter().map(|k| (k.col + 1) as i16).collect();
            let mut ops: Vec<pg_sys::Oid> = self.keys.iter().map(|k| k.sortop).collect();
            let mut colls: Vec<pg_sys::Oid> = self.keys.iter().map(|k| k.collation).collect();
            let mut nf: Vec<bool> = self.keys.iter().map(|k| k.nulls_first).collect();
            let old = pg_sys::MemoryContextSwitchTo(self.query_cxt);
            self.tuplesort = pg_sys::tuplesort_begin_heap(
                desc,
                self.keys.len() as i32,
                attnums.as_mut_ptr(),
                ops.as_mut_ptr(),
                colls.as_mut_ptr(),
                nf.as_mut_ptr(),
                pg_sys::work_mem,
                ptr::null_mut(),
                pg_sys::TUPLESORT_NONE as i32,
            );
            pg_sys::MemoryContextSwitchTo(old);
            // Ties of a top-N sort must all be kept, which a bounded
            // tuplesort does not promise: the tuplesort is unbounded.
            let slot = (*node).ss.ss_ScanTupleSlot;
            for i in 0..self.store.len() {
                self.fill_from_store(slot, i);
                pg_sys::tuplesort_puttupleslot(self.tuplesort, slot);
            }
            pg_sys::ExecClearTuple(slot);
            self.store = RowStore::new(&self.src.types);
            pg_sys::MemoryContextReset(self.data_cxt);
        }
    }

    unsafe fn put_tuplesort(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        columns: &[Column],
        rows: &[RowIdx],
    ) {
        // SAFETY: node is this state's node, self.tuplesort has begun, and columns hold valid
        // Datums of the scan slot's types for `rows`.
        unsafe {
            let slot = (*node).ss.ss_ScanTupleSlot;
            for &r in rows {
                pg_sys::ExecClearTuple(slot);
                for (c, col) in columns.iter().enumerate() {
                    let valid = col.is_valid(r as usize);
                    *(*slot).tts_isnull.add(c) = !valid;
                    *(*slot).tts_values.add(c) =
                        pg_sys::Datum::from(if valid { col.values.datum(r as usize) } else { 0 });
                }
                pg_sys::ExecStoreVirtualTuple(slot);
                pg_sys::tuplesort_puttupleslot(self.tuplesort, slot);
            }
            pg_sys::ExecClearTuple(slot);
        }
    }

    /// Stored row `i` as the (virtual) scan tuple.
    unsafe fn fill_from_store(&self, slot: *mut pg_sys::TupleTableSlot, i: usize) {
        // SAFETY: slot is the node's slot of the input's types; row i is below the store's length
        // (caller's contract).
        unsafe {
            pg_sys::ExecClearTuple(slot);
            for c in 0..self.src.types.len() {
                let d = self.store.datum(c, i);
                *(*slot).tts_isnull.add(c) = d.is_none();
                *(*slot).tts_values.add(c) = pg_sys::Datum::from(d.unwrap_or(0));
            }
            pg_sys::ExecStoreVirtualTuple(slot);
        }
    }

    /// Forget the input and the result (for a rescan).
    unsafe fn reset(&mut self) {
        // SAFETY: the tuplesort, when set, is this state's own and not yet ended.
        unsafe {
            if !self.tuplesort.is_null() {
                pg_sys::tuplesort_end(self.tuplesort);
                self.tuplesort = ptr::null_mut();
            }
            self.store = RowStore::new(&self.src.types);
            pg_sys::MemoryContextReset(self.data_cxt);
            self.order = Vec::new();
            self.pos = 0;
            self.sorted = false;
            self.cut_at = first_cut(self.bound);
            self.boundary = None;
        }
    }

    /// Top-N: the rows of a batch that sort no later than the boundary.
    unsafe fn drop_after_boundary(&mut self, columns: &[Column], rows: &[RowIdx]) -> Vec<RowIdx> {
        // SAFETY: columns hold the batch's values for `rows`; the sort support is prepared in this
        // state's context.
        unsafe {
            let boundary = self.boundary.as_ref().expect("a boundary");
            if self.ssups.is_null() {
                let n = self.keys.len();
                let size = std::mem::size_of::<pg_sys::SortSupportData>() * n;
                let old = pg_sys::MemoryContextSwitchTo(self.query_cxt);
                self.ssups = pg_sys::palloc0(size) as *mut pg_sys::SortSupportData;
                for (i, k) in self.keys.iter().enumerate() {
                    let s = self.ssups.add(i);
                    shim::vx_prepare_sort_support(s, k.sortop, k.collation, k.nulls_first);
                }
                pg_sys::MemoryContextSwitchTo(old);
            }
            let len = columns.first().map_or(0, |c| c.len());
            let datums: Vec<Vec<usize>> = self
                .keys
                .iter()
                .map(|k| {
                    let col = &columns[k.col];
                    let mut d = vec![0usize; len];
                    for &r in rows {
                        d[r as usize] = col.values.datum(r as usize);
                    }
                    d
                })
                .collect();
            let nulls: Vec<Vec<bool>> =
                self.keys.iter().map(|k| (0..len).map(|r| !columns[k.col].is_valid(r)).collect()).collect();
            let cols: Vec<*const usize> = datums.iter().map(|d| d.as_ptr()).collect();
            let null_ptrs: Vec<*const bool> = nulls.iter().map(|n| n.as_ptr()).collect();
            let bvals: Vec<usize> = boundary.iter().map(|d| d.unwrap_or(0)).collect();
            let bnulls: Vec<bool> = boundary.iter().map(|d| d.is_none()).collect();
            let mut out = vec![0u16; rows.len()];
            // Comparators may detoast into the current (per-batch) memory.
            let old = pg_sys::MemoryContextSwitchTo((*self.econtext).ecxt_per_tuple_memory);
            let n = shim::vx_topn_filter(
                self.keys.len() as i32,
                self.ssups,
                cols.as_ptr(),
                null_ptrs.as_ptr(),
                bvals.as_ptr(),
                bnulls.as_ptr(),
                rows.len() as i32,
                rows.as_ptr(),
                out.as_mut_ptr(),
            );
            pg_sys::MemoryContextSwitchTo(old);
            out.truncate(n as usize);
            out
        }
    }
}
