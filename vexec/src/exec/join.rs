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
use crate::pgutil::{list_ptrs, SyncPtr};
use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::agg::{largest_within, GroupTable, KeyKind, NO_GROUP};
use vexec_core::batch::{Column, RowIdx, Values, BATCH_CAPACITY};
use vexec_core::spill::{partition_of, SpilledBatch};

use crate::exec::host_keys::{self, HostKeys};
use crate::exec::input::{rows_context, ChildInput};
use crate::exec::project::Projection;
use crate::exec::spill::{fixed_lengths, SpillFile};
use crate::shim;

pub const NAME: &std::ffi::CStr = c"VecHashJoin";

const FANOUT: usize = 16;
const MAX_LEVEL: u32 = 15;
/// No row (end of a chain).
const NONE: u32 = u32::MAX;
/// Row ids: batch number << ROW_BITS | row in batch.
const ROW_BITS: u32 = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JoinType {
    Inner,
    Left,
    Full,
    Right,
    Semi,
    Anti,
}

impl JoinType {
    fn from_pg(jt: pg_sys::JoinType::Type) -> JoinType {
        use pg_sys::JoinType::*;
        match jt {
            JOIN_LEFT => JoinType::Left,
            JOIN_FULL => JoinType::Full,
            JOIN_RIGHT => JoinType::Right,
            JOIN_SEMI => JoinType::Semi,
            JOIN_ANTI => JoinType::Anti,
            _ => JoinType::Inner,
        }
    }
    /// Unmatched outer rows are returned (null-extended, or alone for anti).
    fn keeps_outer(self) -> bool {
        matches!(self, JoinType::Left | JoinType::Full | JoinType::Anti)
    }
    /// Unmatched inner rows are returned.
    fn keeps_inner(self) -> bool {
        matches!(self, JoinType::Right | JoinType::Full)
    }
    fn name(self) -> &'static str {
        match self {
            JoinType::Inner => "Inner",
            JoinType::Left => "Left",
            JoinType::Full => "Full",
            JoinType::Right => "Right",
            JoinType::Semi => "Semi",
            JoinType::Anti => "Anti",
        }
    }
}

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
    heads: Vec<u32>,
    /// Per row id, the next row of its key.
    next: Vec<u32>,
    /// Per row id, whether it matched (right and full joins).
    matched: Vec<bool>,
    bytes: usize,
    rows: u64,
}

impl Table {
    fn new(kinds: &[KeyKind]) -> Table {
        Table {
            batches: Vec::new(),
            lens: Vec::new(),
            groups: GroupTable::new(kinds),
            heads: Vec::new(),
            next: Vec::new(),
            matched: Vec::new(),
            bytes: 0,
            rows: 0,
        }
    }

    fn memory(&self) -> usize {
        self.bytes + self.vector_bytes()
    }

    /// The group table, the chains and the matched marks.
    fn vector_bytes(&self) -> usize {
        self.groups.bytes_used()
            + (self.heads.capacity() + self.next.capacity()) * 4
            + self.matched.capacity()
    }

    /// What [`Table::vector_bytes`] will be with room for `groups` keys and
    /// `slots` row ids (`marks`: with matched marks), and for `incoming`
    /// key bytes (`GroupTable::key_bytes`).
    fn vector_bytes_at(&self, groups: usize, slots: usize, marks: bool, incoming: &[usize]) -> usize {
        let marks = if marks { self.matched.capacity().max(slots) } else { self.matched.capacity() };
        self.groups.bytes_at(groups, incoming)
            + self.heads.capacity().max(groups) * 4
            + self.next.capacity().max(slots) * 4
            + marks
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
        unsafe { begin(node, estate, eflags) }
    }

    unsafe fn exec(&mut self, node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
        unsafe { exec(node) }
    }

    unsafe fn end(&mut self, _node: *mut pg_sys::CustomScanState) {
        unsafe {
            self.close_files();
            pg_sys::ExecEndNode(self.outer.src.child);
            pg_sys::ExecEndNode(self.inner.src.child);
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

    unsafe fn estimate_dsm(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        pcxt: *mut pg_sys::ParallelContext,
    ) -> pg_sys::Size {
        unsafe { estimate_dsm(node, pcxt) }
    }

    unsafe fn initialize_dsm(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        pcxt: *mut pg_sys::ParallelContext,
        coordinate: *mut c_void,
    ) {
        unsafe { initialize_dsm(node, pcxt, coordinate) }
    }

    unsafe fn reinitialize_dsm(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        pcxt: *mut pg_sys::ParallelContext,
        coordinate: *mut c_void,
    ) {
        unsafe { reinitialize_dsm(node, pcxt, coordinate) }
    }

    unsafe fn initialize_worker(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        toc: *mut pg_sys::shm_toc,
        coordinate: *mut c_void,
    ) {
        unsafe { initialize_worker(node, toc, coordinate) }
    }
}

impl BatchSource for JoinState {
    /// The next batch of joined rows, None at the end. By-reference values
    /// stay valid until the next call.
    unsafe fn next_batch(&mut self, node: *mut pg_sys::CustomScanState) -> Option<VectorBatch> {
        // (The inherent method: the join's batch output.)
        unsafe { JoinState::next_batch(self, node) }
    }

    /// Target `target` as scaled integers for a parent that aggregates
    /// numerics (see `exec::project`); the node returns batches only after.
    unsafe fn request_scaled(&mut self, node: *mut pg_sys::CustomScanState, target: usize) -> Option<u16> {
        unsafe {
            let tlist = (*(*node).ss.ps.plan).targetlist;
            self.output(node).request_scaled(tlist, target)
        }
    }
}

unsafe fn state<'a>(node: *mut pg_sys::CustomScanState) -> &'a mut JoinState {
    unsafe { node::state::<JoinState>(node) }
}

unsafe fn side(
    plan: *mut pg_sys::Plan,
    estate: *mut pg_sys::EState,
    eflags: i32,
    keys: Vec<usize>,
    host_keys: Vec<Option<HostKeys>>,
) -> Side {
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
                Some(s) => Cow::Owned(unsafe { s.column(&columns[k], rows) }),
                None => Cow::Borrowed(&columns[k]),
            })
            .collect()
    }
}

unsafe fn begin(
    node: *mut pg_sys::CustomScanState,
    estate: *mut pg_sys::EState,
    eflags: i32,
) -> Box<JoinState> {
    unsafe {
        let cscan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
        let plans: Vec<*mut pg_sys::Plan> = list_ptrs((*cscan).custom_plans).collect();
        // custom_private: [id, join type, outer columns, number of keys, then
        // per key: outer column, inner column, key kind, collation].
        let p: Vec<i32> = list_ptrs::<pg_sys::Integer>((*cscan).custom_private).map(|i| (*i).ival).collect();
        let jointype = JoinType::from_pg(p[1] as pg_sys::JoinType::Type);
        let nouter = p[2] as usize;
        let nkeys = p[3] as usize;
        let shares_build = (*cscan).scan.plan.parallel_aware;
        let mut okeys = Vec::new();
        let mut ikeys = Vec::new();
        let mut kinds = Vec::new();
        let mut collations = Vec::new();
        for k in 0..nkeys {
            okeys.push(p[4 + 4 * k] as usize);
            ikeys.push(p[5 + 4 * k] as usize);
            kinds.push(KeyKind::from_code(p[6 + 4 * k]).expect("a known key kind"));
            collations.push(pg_sys::Oid::from(p[7 + 4 * k] as u32));
        }
        let child_flags =
            eflags & !(pg_sys::EXEC_FLAG_REWIND | pg_sys::EXEC_FLAG_BACKWARD | pg_sys::EXEC_FLAG_MARK) as i32;
        // Key types, for the host-keyed kinds: the outer side's (both sides
        // have the same type but for integer keys).
        let types: Vec<pg_sys::Oid> = okeys
            .iter()
            .map(|&c| {
                let te = pg_sys::list_nth((*plans[0]).targetlist, c as i32) as *mut pg_sys::TargetEntry;
                pg_sys::exprType((*te).expr.cast())
            })
            .collect();
        let outer = side(
            plans[0],
            estate,
            child_flags,
            okeys,
            host_keys::for_kinds(&kinds, types.clone(), collations.clone()),
        );
        let inner =
            side(plans[1], estate, child_flags, ikeys, host_keys::for_kinds(&kinds, types, collations));
        // (The table compares a host-keyed key's sort keys or encodings as bytes.)
        let kinds: Vec<KeyKind> = kinds.iter().map(|k| k.compared()).collect();
        (*node).custom_ps =
            pg_sys::lappend(pg_sys::lappend(ptr::null_mut(), outer.src.child.cast()), inner.src.child.cast());
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

/// Make the varlena values of `rows` plain (detoasted) in the current
/// memory context, so keys can be hashed and rows written to files.
unsafe fn detoast(s: &Side, columns: &mut [Column], rows: &[RowIdx]) {
    for (c, col) in columns.iter_mut().enumerate() {
        if s.src.by_ref[c] != Some(-1) {
            continue;
        }
        let Values::Datum(v) = &mut col.values else { continue };
        let values = v.as_mut_ptr();
        let validity = col.validity.as_bytes().as_ptr();
        unsafe { shim::vx_detoast(values, validity, rows.len() as i32, rows.as_ptr()) };
    }
}

/// The rows of `rows` whose keys are all non-NULL.
fn keyed_rows(columns: &[Column], keys: &[usize], rows: &[RowIdx]) -> Vec<RowIdx> {
    // (NOT NULL keys: no row to test)
    if keys.iter().all(|&k| columns[k].validity.all_set()) {
        return rows.to_vec();
    }
    rows.iter().copied().filter(|&r| keys.iter().all(|&k| columns[k].is_valid(r as usize))).collect()
}

/// A batch of only `rows`, in order.
fn compact(columns: &[Column], rows: &[RowIdx]) -> Vec<Column> {
    columns
        .iter()
        .map(|c| {
            let mut out = Column::new(c.values.phys_type(), rows.len());
            for (i, &r) in rows.iter().enumerate() {
                let r = r as usize;
                if c.is_valid(r) {
                    out.values.set_datum(i, c.values.datum(r));
                } else {
                    out.validity.set(i, false);
                }
            }
            out
        })
        .collect()
}

fn columns_bytes(columns: &[Column]) -> usize {
    columns.iter().map(|c| c.len() * c.values.width() + c.len().div_ceil(8)).sum()
}

impl JoinState {
    /// Whether a batch of `len` inner rows whose values live in the rows
    /// context can be appended to the last held batch rather than held on
    /// its own: a filtered scan gives batches of a few rows, and each held
    /// batch reserves a chain slot for every row id it could have.
    fn fits_last(&self, len: usize, columns: &[Column]) -> bool {
        let (Some(last), Some(&have)) = (self.table.batches.last(), self.table.lens.last()) else {
            return false;
        };
        last._spilled.is_none()
            && have + len <= BATCH_CAPACITY
            && last.columns.iter().zip(columns).all(|(a, b)| a.values.phys_type() == b.values.phys_type())
    }

    /// Add a batch of inner rows (plain values, held by `held`) to the table,
    /// appended to the last held batch when `merge` (see [`Self::fits_last`]).
    unsafe fn insert(&mut self, held: Held, len: usize, merge: bool) {
        unsafe {
            let (b, base) = if merge {
                let b = self.table.batches.len() - 1;
                (b as u32, self.table.lens[b] as u32)
            } else {
                (self.table.batches.len() as u32, 0)
            };
            let rows = vexec_core::batch::full_selection(len);
            let keyed = keyed_rows(&held.columns, &self.inner.keys, &rows);
            let mut groups = Vec::new();
            let keys = self.inner.key_columns(&held.columns, &keyed);
            let cols: Vec<&Column> = keys.iter().map(|c| c.as_ref()).collect();
            self.table.groups.assign(&cols, &keyed, &mut groups);
            self.table.heads.resize(self.table.groups.len(), NONE);
            let first_id = (b << ROW_BITS) as usize;
            self.table.next.resize(first_id + BATCH_CAPACITY, NONE);
            if self.jointype.keeps_inner() {
                self.table.matched.resize(first_id + BATCH_CAPACITY, false);
            }
            // Chained in reverse so that a key's rows are met in input order.
            for (&r, &g) in keyed.iter().zip(&groups).rev() {
                let id = (b << ROW_BITS) | (base + r as u32);
                self.table.next[id as usize] = self.table.heads[g as usize];
                self.table.heads[g as usize] = id;
            }
            self.table.bytes +=
                columns_bytes(&held.columns) + held._spilled.as_ref().map_or(0, |s| s.arena_bytes());
            self.table.rows += len as u64;
            if merge {
                let last = &mut self.table.batches[b as usize];
                for (into, col) in last.columns.iter_mut().zip(&held.columns) {
                    let same_type = into.append(col);
                    debug_assert!(same_type, "fits_last checked the types");
                }
                self.table.lens[b as usize] += len;
            } else {
                self.table.batches.push(held);
                self.table.lens.push(len);
            }
        }
    }

    unsafe fn memory(&self) -> usize {
        unsafe { self.table.memory() + pg_sys::MemoryContextMemAllocated(self.data_cxt, true) }
    }

    /// Room in the table for one more inner batch of `len` rows whose
    /// values take `incoming` bytes, within hash_mem: the group table and
    /// the chains grow by doubling while that fits and then only as far as
    /// this batch needs (growing after the insert, as vectors do by
    /// themselves, overran hash_mem by up to half). False when even that
    /// does not fit: the caller spills.
    unsafe fn make_room(&mut self, columns: &[Column], len: usize, incoming: usize, merge: bool) -> bool {
        let used = unsafe { self.memory() };
        let marks = self.jointype.keeps_inner();
        let key_bytes = if self.table.groups.stores_bytes() {
            let rows = vexec_core::batch::full_selection(len);
            let keyed = keyed_rows(columns, &self.inner.keys, &rows);
            let keys = unsafe { self.inner.key_columns(columns, &keyed) };
            let cols: Vec<&Column> = keys.iter().map(|c| c.as_ref()).collect();
            unsafe { self.table.groups.key_bytes(&cols, &keyed) }
        } else {
            Vec::new()
        };
        let t = &self.table;
        // A new block of the rows context may come with the batch.
        let others = used.saturating_sub(t.vector_bytes()) + incoming + self.block_bytes;
        let fits = |groups: usize, slots: usize| {
            others + t.vector_bytes_at(groups, slots, marks, &key_bytes) <= self.budget
        };
        let (groups_needed, room) = (t.groups.len() + len, t.groups.room());
        let slots_needed = (t.batches.len() + usize::from(!merge)) << ROW_BITS;
        if !fits(groups_needed, slots_needed) {
            return false;
        }
        let groups = if groups_needed > room {
            largest_within(groups_needed, (2 * room).max(groups_needed).max(1024), |g| fits(g, slots_needed))
                .unwrap_or(groups_needed)
        } else {
            room
        };
        let slots = if slots_needed > t.next.capacity() {
            largest_within(slots_needed, (2 * t.next.capacity()).max(slots_needed), |s| fits(groups, s))
                .unwrap_or(slots_needed)
        } else {
            slots_needed
        };
        let t = &mut self.table;
        t.groups.reserve_groups(groups, &key_bytes);
        t.heads.reserve_exact(groups.saturating_sub(t.heads.len()));
        t.next.reserve_exact(slots.saturating_sub(t.next.len()));
        if marks {
            t.matched.reserve_exact(slots.saturating_sub(t.matched.len()));
        }
        true
    }

    /// Read the inner child into the table, or into partition files once
    /// it outgrows hash_mem.
    unsafe fn build(&mut self) {
        unsafe {
            if !self.shared.is_null() {
                return self.build_shared();
            }
            let per_batch = self.batch_cxt;
            let mut files: Option<Vec<SpillFile>> = None;
            loop {
                check_for_interrupts!();
                pg_sys::MemoryContextReset(per_batch);
                // (The child runs in the caller's memory context: it keeps
                // state across calls.)
                let next = self.inner.src.next(per_batch);
                let Some((mut columns, rows)) = next else { break };
                self.stats.build_batches += 1;
                self.stats.build_rows += rows.len() as u64;
                // Rows with a NULL key only matter to joins that return
                // unmatched inner rows.
                let rows = if self.jointype.keeps_inner() {
                    rows
                } else {
                    keyed_rows(&columns, &self.inner.keys, &rows)
                };
                if rows.is_empty() {
                    continue;
                }
                self.inner_empty = false;
                let old = pg_sys::MemoryContextSwitchTo(per_batch);
                detoast(&self.inner, &mut columns, &rows);
                pg_sys::MemoryContextSwitchTo(old);
                if let Some(f) = files.as_mut() {
                    self.write_partitioned(f, true, &columns, &rows, 0);
                    continue;
                }
                let mut compacted = compact(&columns, &rows);
                let rows_all = vexec_core::batch::full_selection(compacted.first().map_or(0, |c| c.len()));
                let incoming = columns_bytes(&compacted) + self.inner.src.by_ref_bytes(&compacted, &rows_all);
                let merge = self.fits_last(rows.len(), &compacted);
                if !self.make_room(&compacted, rows.len(), incoming, merge) {
                    // The table to files, and this batch after it.
                    let mut f = self.spill_table(0);
                    self.write_partitioned(&mut f, true, &columns, &rows, 0);
                    files = Some(f);
                    continue;
                }
                self.inner.src.copy_by_ref(&mut compacted, &rows_all, |_| false, self.data_cxt);
                self.insert(Held { columns: compacted, _spilled: None }, rows.len(), merge);
                self.stats.peak_memory = self.stats.peak_memory.max(self.memory());
            }
            self.finish_build(files);
        }
    }

    /// The shared build: this process's share of the inner side to its
    /// file, then, once every process that took part has written its share,
    /// all the files into this process's table (partitioned past hash_mem
    /// as the inner child would be).
    unsafe fn build_shared(&mut self) {
        unsafe {
            let shared = self.shared;
            let per_batch = self.batch_cxt;
            // A process that comes after the shares were written (its
            // partial inner side would return nothing: the others ran it to
            // its end) only reads them.
            if pg_sys::BarrierAttach(&mut (*shared).barrier) == 0 {
                let slot = pg_sys::ParallelWorkerNumber + 1;
                let old = pg_sys::MemoryContextSwitchTo(self.query_cxt);
                let mut mine = SpillFile::create_shared(&mut (*shared).fileset, &share_name(slot));
                pg_sys::MemoryContextSwitchTo(old);
                loop {
                    check_for_interrupts!();
                    pg_sys::MemoryContextReset(per_batch);
                    let Some((mut columns, rows)) = self.inner.src.next(per_batch) else { break };
                    // (Only joins that return no unmatched inner row share.)
                    let rows = keyed_rows(&columns, &self.inner.keys, &rows);
                    if rows.is_empty() {
                        continue;
                    }
                    let old = pg_sys::MemoryContextSwitchTo(per_batch);
                    detoast(&self.inner, &mut columns, &rows);
                    pg_sys::MemoryContextSwitchTo(old);
                    let all: Vec<&Column> = columns.iter().collect();
                    mine.write(&all, &self.inner.fixed, &rows, &mut self.scratch);
                }
                self.stats.shared_rows = mine.rows;
                mine.close();
                pg_sys::BarrierArriveAndWait(&mut (*shared).barrier, build_wait_event());
            }
            pg_sys::BarrierDetach(&mut (*shared).barrier);

            let mut files: Option<Vec<SpillFile>> = None;
            let mut buf = Vec::new();
            for slot in 0..(*shared).slots {
                let old = pg_sys::MemoryContextSwitchTo(self.query_cxt);
                let share = SpillFile::open_shared(&mut (*shared).fileset, &share_name(slot));
                pg_sys::MemoryContextSwitchTo(old);
                let Some(mut share) = share else { continue };
                while let Some(b) = share.read(&self.inner.src.types, &self.inner.fixed, &mut buf) {
                    check_for_interrupts!();
                    self.stats.build_batches += 1;
                    self.stats.build_rows += b.len as u64;
                    self.inner_empty = false;
                    self.hold_read_batch(b, &mut files, 0);
                }
                share.close();
            }
            self.finish_build(files);
        }
    }

    /// Hold inner rows read back from a file (whole batches, values in the
    /// batch's arena) in the table; once the table outgrows hash_mem, it and
    /// the rows after it go to partition files at `level` (`files`), unless
    /// the partitioning is already as deep as it goes.
    unsafe fn hold_read_batch(
        &mut self,
        mut b: SpilledBatch,
        files: &mut Option<Vec<SpillFile>>,
        level: u32,
    ) {
        unsafe {
            let len = b.len;
            if let Some(f) = files.as_mut() {
                self.write_partitioned(f, true, &b.columns, &vexec_core::batch::full_selection(len), level);
                return;
            }
            let incoming = columns_bytes(&b.columns) + b.arena_bytes();
            if !self.make_room(&b.columns, len, incoming, false) && level <= MAX_LEVEL {
                // The table to files, and this batch after it.
                let mut f = self.spill_table(level);
                self.write_partitioned(
                    &mut f,
                    true,
                    &b.columns,
                    &vexec_core::batch::full_selection(len),
                    level,
                );
                *files = Some(f);
                return;
            }
            let columns = std::mem::take(&mut b.columns);
            self.insert(Held { columns, _spilled: Some(b) }, len, false);
            self.stats.peak_memory = self.stats.peak_memory.max(self.memory());
        }
    }

    /// After the inner side is read: probe the table, or, if it went to
    /// partition files, partition the outer side too and join the pairs.
    unsafe fn finish_build(&mut self, files: Option<Vec<SpillFile>>) {
        unsafe {
            let per_batch = self.batch_cxt;
            match files {
                None => {
                    self.phase = if self.inner_empty && !self.jointype.keeps_outer() {
                        Phase::Done // nothing can match and no outer row is returned alone
                    } else {
                        Phase::Probe
                    };
                    self.source = ProbeSource::Child;
                }
                Some(inner_files) => {
                    // Partition the outer input too, then join file pair by pair.
                    let mut outer_files: Vec<SpillFile> = (0..FANOUT).map(|_| self.new_file()).collect();
                    loop {
                        check_for_interrupts!();
                        pg_sys::MemoryContextReset(per_batch);
                        let next = self.outer.src.next(per_batch);
                        let Some((mut columns, rows)) = next else { break };
                        let old = pg_sys::MemoryContextSwitchTo(per_batch);
                        detoast(&self.outer, &mut columns, &rows);
                        pg_sys::MemoryContextSwitchTo(old);
                        self.stats.probe_batches += 1;
                        self.stats.probe_rows += rows.len() as u64;
                        let rows = if self.jointype.keeps_outer() {
                            rows
                        } else {
                            keyed_rows(&columns, &self.outer.keys, &rows)
                        };
                        self.write_partitioned(&mut outer_files, false, &columns, &rows, 0);
                    }
                    self.queue_partitions(inner_files, outer_files, 0);
                    self.phase = Phase::NextPartition;
                }
            }
        }
    }

    unsafe fn new_file(&self) -> SpillFile {
        unsafe {
            let old = pg_sys::MemoryContextSwitchTo(self.query_cxt);
            let f = SpillFile::create();
            pg_sys::MemoryContextSwitchTo(old);
            f
        }
    }

    /// Write rows to `files` by the partition of their key hash at `level`
    /// (rows with a NULL key go to the first: they match nothing).
    unsafe fn write_partitioned(
        &mut self,
        files: &mut [SpillFile],
        inner: bool,
        columns: &[Column],
        rows: &[RowIdx],
        level: u32,
    ) {
        unsafe {
            let s = if inner { &mut self.inner } else { &mut self.outer };
            let keys = s.key_columns(columns, rows);
            let cols: Vec<&Column> = keys.iter().map(|c| c.as_ref()).collect();
            let mut hashes = Vec::new();
            self.table.groups.hash_rows(&cols, rows, &mut hashes);
            let mut parts: Vec<Vec<RowIdx>> = vec![Vec::new(); FANOUT];
            for (&r, &h) in rows.iter().zip(&hashes) {
                let keyed = s.keys.iter().all(|&k| columns[k].is_valid(r as usize));
                let p = if keyed { partition_of(h, level, FANOUT) } else { 0 };
                parts[p].push(r);
            }
            let all: Vec<&Column> = columns.iter().collect();
            for (f, part) in files.iter_mut().zip(&parts) {
                let before = f.bytes;
                f.write(&all, &s.fixed, part, &mut self.scratch);
                self.stats.spilled_rows += part.len() as u64;
                self.stats.spilled_bytes += f.bytes - before;
            }
        }
    }

    /// Move the table's rows to new partition files at `level`; the table
    /// starts over empty.
    unsafe fn spill_table(&mut self, level: u32) -> Vec<SpillFile> {
        unsafe {
            let mut files: Vec<SpillFile> = (0..FANOUT).map(|_| self.new_file()).collect();
            let table = std::mem::replace(&mut self.table, Table::new(&self.kinds));
            for (held, &len) in table.batches.iter().zip(&table.lens) {
                let rows = vexec_core::batch::full_selection(len);
                self.write_partitioned(&mut files, true, &held.columns, &rows, level);
            }
            drop(table);
            pg_sys::MemoryContextReset(self.data_cxt);
            files
        }
    }

    /// Queue the file pairs that can return rows.
    unsafe fn queue_partitions(&mut self, inner: Vec<SpillFile>, outer: Vec<SpillFile>, level: u32) {
        unsafe {
            for (i, o) in inner.into_iter().zip(outer) {
                let useful = if i.rows == 0 {
                    o.rows > 0 && self.jointype.keeps_outer()
                } else {
                    o.rows > 0 || self.jointype.keeps_inner()
                };
                if useful {
                    self.stats.partitions += 1;
                    self.pending.push(Partition { inner: i, outer: o, level });
                } else {
                    i.close();
                    o.close();
                }
            }
        }
    }

    /// Load the next queued partition's inner rows (partitioning again if
    /// they outgrow hash_mem). False when none is left.
    unsafe fn next_partition(&mut self) -> bool {
        unsafe {
            loop {
                let Some(Partition { mut inner, mut outer, level }) = self.pending.pop() else {
                    return false;
                };
                check_for_interrupts!();
                self.table = Table::new(&self.kinds);
                pg_sys::MemoryContextReset(self.data_cxt);
                self.inner_empty = inner.rows == 0;
                inner.rewind();
                let mut buf = Vec::new();
                let mut again: Option<Vec<SpillFile>> = None;
                while let Some(b) = inner.read(&self.inner.src.types, &self.inner.fixed, &mut buf) {
                    self.hold_read_batch(b, &mut again, level + 1);
                }
                inner.close();
                match again {
                    None => {
                        outer.rewind();
                        if let ProbeSource::File(done) =
                            std::mem::replace(&mut self.source, ProbeSource::File(outer))
                        {
                            done.close();
                        }
                        return true;
                    }
                    Some(inner_files) => {
                        let mut outer_files: Vec<SpillFile> = (0..FANOUT).map(|_| self.new_file()).collect();
                        outer.rewind();
                        while let Some(b) = outer.read(&self.outer.src.types, &self.outer.fixed, &mut buf) {
                            let rows = vexec_core::batch::full_selection(b.len);
                            self.write_partitioned(&mut outer_files, false, &b.columns, &rows, level + 1);
                        }
                        outer.close();
                        self.queue_partitions(inner_files, outer_files, level + 1);
                    }
                }
            }
        }
    }

    /// The next outer batch to probe with (false at the end of the source).
    unsafe fn next_probe_batch(&mut self) -> bool {
        unsafe {
            let per_batch = self.batch_cxt;
            loop {
                check_for_interrupts!();
                pg_sys::MemoryContextReset(per_batch);
                self.probe = None;
                let (held, rows) = match &mut self.source {
                    ProbeSource::Child => {
                        let next = self.outer.src.next(per_batch);
                        let Some((mut columns, rows)) = next else { return false };
                        let old = pg_sys::MemoryContextSwitchTo(per_batch);
                        detoast_keys(&self.outer, &mut columns, &rows);
                        pg_sys::MemoryContextSwitchTo(old);
                        self.stats.probe_batches += 1;
                        self.stats.probe_rows += rows.len() as u64;
                        (Held { columns, _spilled: None }, rows)
                    }
                    ProbeSource::File(f) => {
                        let mut buf = std::mem::take(&mut self.scratch);
                        let b = f.read(&self.outer.src.types, &self.outer.fixed, &mut buf);
                        self.scratch = buf;
                        let Some(mut b) = b else { return false };
                        let rows = vexec_core::batch::full_selection(b.len);
                        (Held { columns: std::mem::take(&mut b.columns), _spilled: Some(b) }, rows)
                    }
                };
                let keyed = keyed_rows(&held.columns, &self.outer.keys, &rows);
                let keeps_outer = self.jointype.keeps_outer();
                let rows = if keeps_outer { rows } else { keyed.clone() };
                if rows.is_empty() {
                    continue;
                }
                let mut groups = Vec::new();
                let mut hashes = Vec::new();
                let keys = self.outer.key_columns(&held.columns, &keyed);
                let cols: Vec<&Column> = keys.iter().map(|c| c.as_ref()).collect();
                self.table.groups.lookup(&cols, &keyed, &mut groups, &mut hashes);
                // Per live row, the head of its key's chain.
                let mut heads = vec![NONE; rows.len()];
                let mut k = 0;
                for (i, &r) in rows.iter().enumerate() {
                    if k < keyed.len() && keyed[k] == r {
                        if groups[k] != NO_GROUP {
                            heads[i] = self.table.heads[groups[k] as usize];
                        }
                        k += 1;
                    }
                }
                // Outer rows without a match give nothing unless the join
                // keeps them: drop them here rather than step over each.
                let (rows, heads): (Vec<RowIdx>, Vec<u32>) = if keeps_outer {
                    (rows, heads)
                } else {
                    rows.iter().zip(&heads).filter(|&(_, &h)| h != NONE).map(|(&r, &h)| (r, h)).unzip()
                };
                if rows.is_empty() {
                    continue;
                }
                self.probe = Some(Probe {
                    held,
                    rows,
                    heads,
                    pos: 0,
                    cursor: NONE,
                    started: false,
                    matched: false,
                    ended: false,
                });
                return true;
            }
        }
    }

    /// The scan tuple: outer row `o` of the probe batch (or NULLs), then
    /// inner row `id` (or NULLs).
    unsafe fn fill(&self, slot: *mut pg_sys::TupleTableSlot, outer: Option<usize>, inner: Option<u32>) {
        unsafe {
            pg_sys::ExecClearTuple(slot);
            let values = (*slot).tts_values;
            let isnull = (*slot).tts_isnull;
            let nouter = self.nouter;
            match (outer, &self.probe) {
                (Some(o), Some(p)) => {
                    for (c, col) in p.held.columns.iter().enumerate() {
                        let valid = col.is_valid(o);
                        *isnull.add(c) = !valid;
                        *values.add(c) = pg_sys::Datum::from(if valid { col.values.datum(o) } else { 0 });
                    }
                }
                _ => {
                    for c in 0..nouter {
                        *isnull.add(c) = true;
                        *values.add(c) = pg_sys::Datum::from(0usize);
                    }
                }
            }
            let ninner = self.inner.src.types.len();
            match inner {
                Some(id) => {
                    let held = &self.table.batches[(id >> ROW_BITS) as usize];
                    let r = (id & ((1 << ROW_BITS) - 1)) as usize;
                    for (c, col) in held.columns.iter().enumerate() {
                        let valid = col.is_valid(r);
                        *isnull.add(nouter + c) = !valid;
                        *values.add(nouter + c) =
                            pg_sys::Datum::from(if valid { col.values.datum(r) } else { 0 });
                    }
                }
                None => {
                    for c in 0..ninner {
                        *isnull.add(nouter + c) = true;
                        *values.add(nouter + c) = pg_sys::Datum::from(0usize);
                    }
                }
            }
            pg_sys::ExecStoreVirtualTuple(slot);
        }
    }
}

/// Key columns that are varlenas must be plain for hashing.
unsafe fn detoast_keys(s: &Side, columns: &mut [Column], rows: &[RowIdx]) {
    for &k in &s.keys {
        if s.src.by_ref[k] != Some(-1) {
            continue;
        }
        let col = &mut columns[k];
        let Values::Datum(v) = &mut col.values else { continue };
        let values = v.as_mut_ptr();
        let validity = col.validity.as_bytes().as_ptr();
        unsafe { shim::vx_detoast(values, validity, rows.len() as i32, rows.as_ptr()) };
    }
}

/// Evaluate an ExprState qual (NULL: true) on the econtext's scan tuple.
unsafe fn passes(qual: *mut pg_sys::ExprState, econtext: *mut pg_sys::ExprContext) -> bool {
    unsafe { qual.is_null() || pg_sys::ExecQual(qual, econtext) }
}

/// What the join produced next.
enum Step {
    /// A row passed the join filter and the qual: the probe batch's outer
    /// row (None: null-extended) and the inner row id (None: null-extended
    /// or anti join). The scan tuple holds it where the step filled it.
    Row(Option<usize>, Option<u32>),
    /// The rows referred to so far are about to go (the probe batch is
    /// replaced, or the table of a partition): a batch must end here.
    BatchEnd,
    Done,
}

impl JoinState {
    /// Put the row into the scan tuple when the caller or a qual needs it.
    unsafe fn fill_row(
        &self,
        node: *mut pg_sys::CustomScanState,
        fill: bool,
        o: Option<usize>,
        i: Option<u32>,
    ) {
        unsafe {
            if fill {
                let slot = (*node).ss.ss_ScanTupleSlot;
                pg_sys::MemoryContextReset((*self.econtext).ecxt_per_tuple_memory);
                self.fill(slot, o, i);
                (*self.econtext).ecxt_scantuple = slot;
            }
        }
    }

    /// Run the join to its next row. `fill_always`: the scan tuple is
    /// wanted for every row (row output); otherwise it is filled only for
    /// the quals.
    unsafe fn advance(&mut self, node: *mut pg_sys::CustomScanState, fill_always: bool) -> Step {
        unsafe {
            let econtext = self.econtext;
            let otherqual = (*node).ss.ps.qual;
            let fill = fill_always || !otherqual.is_null() || !self.joinqual.is_null();
            loop {
                match self.phase {
                    Phase::Build => self.build(),
                    Phase::NextPartition => {
                        self.phase = if self.next_partition() { Phase::Probe } else { Phase::Done };
                    }
                    Phase::Done => return Step::Done,
                    Phase::Unmatched(from) => {
                        // Inner rows no outer row matched, outer side NULL.
                        let mut id = from;
                        let mut found = None;
                        let nb = self.table.batches.len() as u32;
                        while (id >> ROW_BITS) < nb {
                            let b = (id >> ROW_BITS) as usize;
                            let r = (id & ((1 << ROW_BITS) - 1)) as usize;
                            if r >= self.table.lens[b] {
                                id = ((b as u32) + 1) << ROW_BITS;
                                continue;
                            }
                            if !self.table.matched[id as usize] {
                                found = Some(id);
                                id += 1;
                                break;
                            }
                            id += 1;
                        }
                        let Some(inner) = found else {
                            self.phase = Phase::NextPartition;
                            return Step::BatchEnd;
                        };
                        self.phase = Phase::Unmatched(id);
                        self.fill_row(node, fill, None, Some(inner));
                        if passes(otherqual, econtext) {
                            return Step::Row(None, Some(inner));
                        }
                    }
                    Phase::Probe => {
                        let Some(p) = self.probe.as_mut() else {
                            if !self.next_probe_batch() {
                                self.phase = if self.jointype.keeps_inner() {
                                    Phase::Unmatched(0)
                                } else {
                                    Phase::NextPartition
                                };
                            }
                            continue;
                        };
                        if p.pos >= p.rows.len() {
                            if !p.ended {
                                p.ended = true;
                                return Step::BatchEnd;
                            }
                            self.probe = None;
                            continue;
                        }
                        if !p.started {
                            p.started = true;
                            p.matched = false;
                            p.cursor = p.heads[p.pos];
                        }
                        let o = p.rows[p.pos] as usize;
                        if p.cursor == NONE {
                            // The outer row's matches are done.
                            let unmatched = !p.matched;
                            p.pos += 1;
                            p.started = false;
                            if unmatched && self.jointype.keeps_outer() {
                                self.fill_row(node, fill, Some(o), None);
                                if passes(otherqual, econtext) {
                                    return Step::Row(Some(o), None);
                                }
                            }
                            continue;
                        }
                        let id = p.cursor;
                        p.cursor = self.table.next[id as usize];
                        self.fill_row(node, fill, Some(o), Some(id));
                        if !passes(self.joinqual, econtext) {
                            continue;
                        }
                        let p = self.probe.as_mut().expect("a probe batch");
                        p.matched = true;
                        if self.jointype.keeps_inner() {
                            self.table.matched[id as usize] = true;
                        }
                        match self.jointype {
                            JoinType::Anti => {
                                p.cursor = NONE;
                                p.pos += 1;
                                p.started = false;
                                continue;
                            }
                            JoinType::Semi => {
                                p.cursor = NONE;
                                p.pos += 1;
                                p.started = false;
                            }
                            _ => {}
                        }
                        if passes(otherqual, econtext) {
                            return Step::Row(Some(o), Some(id));
                        }
                    }
                }
            }
        }
    }

    /// The target list for a vector parent, compiled on first use. Where
    /// the join has quals, targets are evaluated per row after them.
    unsafe fn output(&mut self, node: *mut pg_sys::CustomScanState) -> &mut Projection {
        unsafe {
            if self.output.is_none() {
                let plan = (*node).ss.ps.plan;
                let per_row = !(*node).ss.ps.qual.is_null() || !self.joinqual.is_null();
                let old = pg_sys::MemoryContextSwitchTo(self.query_cxt);
                self.output = Some(Box::new(Projection::new(node.cast(), (*plan).targetlist, per_row)));
                pg_sys::MemoryContextSwitchTo(old);
            }
            self.output.as_mut().expect("an output")
        }
    }

    /// The join's output as a batch for a vector parent: up to a batch of
    /// joined rows (fewer where a probe batch or a partition ends), its
    /// target list computed by `exec::project`.
    unsafe fn next_batch(&mut self, node: *mut pg_sys::CustomScanState) -> Option<VectorBatch> {
        unsafe {
            let econtext = self.econtext;
            self.output(node);
            // Evaluator results of the previous batch go now.
            pg_sys::MemoryContextReset(self.out_cxt);
            pg_sys::MemoryContextReset((*econtext).ecxt_per_tuple_memory);
            let per_row = self.output.as_ref().is_some_and(|o| o.per_row);
            let mut picks: Vec<(Option<usize>, Option<u32>)> = Vec::with_capacity(BATCH_CAPACITY);
            loop {
                match self.advance(node, false) {
                    Step::Row(o, i) => {
                        if per_row {
                            let old = pg_sys::MemoryContextSwitchTo(self.out_cxt);
                            let out = self.output.as_mut().expect("an output");
                            out.eval_row(picks.len(), econtext);
                            pg_sys::MemoryContextSwitchTo(old);
                        }
                        picks.push((o, i));
                        if picks.len() == BATCH_CAPACITY {
                            break;
                        }
                    }
                    Step::BatchEnd if picks.is_empty() => {}
                    Step::BatchEnd | Step::Done => break,
                }
            }
            if picks.is_empty() {
                return None;
            }
            let n = picks.len();
            let out = self.output.as_mut().expect("an output");
            let needed = out.needed_columns();
            let ncols = self.nouter + self.inner.src.types.len();
            let mut gathered: Vec<Option<Column>> = (0..ncols).map(|_| None).collect();
            let probe_cols: &[Column] = self.probe.as_ref().map_or(&[], |p| &p.held.columns);
            // Where each output row's outer and inner values are (per batch,
            // shared by every column of the side).
            let outer_rows: Vec<Option<(u32, u16)>> =
                picks.iter().map(|&(o, _)| o.map(|o| (0, o as u16))).collect();
            let inner_rows: Vec<Option<(u32, u16)>> = picks
                .iter()
                .map(|&(_, i)| i.map(|id| (id >> ROW_BITS, (id & ((1 << ROW_BITS) - 1)) as u16)))
                .collect();
            for c in needed {
                gathered[c] = Some(if c < self.nouter {
                    match probe_cols.get(c) {
                        Some(col) => vexec_core::batch::gather(col.values.phys_type(), &[col], &outer_rows),
                        // Unmatched inner rows only: the outer side is NULL.
                        None => vexec_core::batch::gather(self.outer.src.types[c], &[], &vec![None; n]),
                    }
                } else {
                    let ic = c - self.nouter;
                    let srcs: Vec<&Column> = self.table.batches.iter().map(|h| &h.columns[ic]).collect();
                    let phys = srcs.first().map_or(self.inner.src.types[ic], |x| x.values.phys_type());
                    vexec_core::batch::gather(phys, &srcs, &inner_rows)
                });
            }
            let slot = (*node).ss.ss_ScanTupleSlot;
            let columns = out.project(&gathered, n, econtext, slot);
            Some(VectorBatch { columns, rows: vexec_core::batch::full_selection(n) })
        }
    }
}

unsafe fn exec(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
    unsafe {
        let st = state(node);
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

impl JoinState {
    unsafe fn close_files(&mut self) {
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

unsafe fn rescan(node: *mut pg_sys::CustomScanState) {
    unsafe {
        let st = state(node);
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
            st.table.matched.iter_mut().for_each(|m| *m = false);
            st.phase = if st.inner_empty && !st.jointype.keeps_outer() { Phase::Done } else { Phase::Probe };
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

/// The name of a process's share of the inner side in the shared file set.
fn share_name(slot: i32) -> std::ffi::CString {
    std::ffi::CString::new(format!("vexec_inner.{slot}")).expect("no NUL in a file name")
}

/// The wait event of processes waiting for the others' shares.
unsafe fn build_wait_event() -> u32 {
    static mut EVENT: u32 = 0;
    unsafe {
        if EVENT == 0 {
            EVENT = pg_sys::WaitEventExtensionNew(c"VecHashJoinBuild".as_ptr());
        }
        EVENT
    }
}

// The shared state of a parallel-aware VecHashJoin (PostgreSQL calls these
// only for a plan node marked parallel aware).

unsafe fn estimate_dsm(
    _node: *mut pg_sys::CustomScanState,
    _pcxt: *mut pg_sys::ParallelContext,
) -> pg_sys::Size {
    std::mem::size_of::<SharedBuild>()
}

unsafe fn initialize_dsm(
    node: *mut pg_sys::CustomScanState,
    pcxt: *mut pg_sys::ParallelContext,
    coordinate: *mut c_void,
) {
    unsafe {
        let shared = coordinate as *mut SharedBuild;
        pg_sys::SharedFileSetInit(&mut (*shared).fileset, (*pcxt).seg);
        pg_sys::BarrierInit(&mut (*shared).barrier, 0);
        (*shared).slots = (*pcxt).nworkers + 1;
        (*shared).segment = pg_sys::dsm_segment_handle((*pcxt).seg);
        state(node).shared = shared;
    }
}

/// Before the workers start again (the Gather above is rescanned; the
/// leader has rescanned this node): no file of the last run is read again.
unsafe fn reinitialize_dsm(
    _node: *mut pg_sys::CustomScanState,
    _pcxt: *mut pg_sys::ParallelContext,
    coordinate: *mut c_void,
) {
    unsafe {
        let shared = coordinate as *mut SharedBuild;
        pg_sys::SharedFileSetDeleteAll(&mut (*shared).fileset);
        pg_sys::BarrierInit(&mut (*shared).barrier, 0);
    }
}

unsafe fn initialize_worker(
    node: *mut pg_sys::CustomScanState,
    _toc: *mut pg_sys::shm_toc,
    coordinate: *mut c_void,
) {
    unsafe {
        let shared = coordinate as *mut SharedBuild;
        let seg = pg_sys::dsm_find_mapping((*shared).segment);
        if seg.is_null() {
            pgrx::error!("VecHashJoin: the parallel query's shared memory is not mapped");
        }
        pg_sys::SharedFileSetAttach(&mut (*shared).fileset, seg);
        state(node).shared = shared;
    }
}

unsafe fn explain(
    node: *mut pg_sys::CustomScanState,
    ancestors: *mut pg_sys::List,
    es: *mut pg_sys::ExplainState,
) {
    unsafe {
        let st = state(node);
        let plan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
        let context = pg_sys::set_deparse_context_plan((*es).deparse_cxt, plan.cast(), ancestors);
        let prefix = true;
        let tlist: Vec<*mut pg_sys::TargetEntry> = list_ptrs((*plan).custom_scan_tlist).collect();
        let deparse = |e: *mut pg_sys::Node| -> String {
            let s = pg_sys::deparse_expression(e, context, prefix, false);
            std::ffi::CStr::from_ptr(s).to_string_lossy().into_owned()
        };
        let conds: Vec<String> = st
            .outer
            .keys
            .iter()
            .zip(&st.inner.keys)
            .map(|(&o, &i)| {
                format!(
                    "({} = {})",
                    deparse((*tlist[o]).expr.cast()),
                    deparse((*tlist[st.nouter + i]).expr.cast())
                )
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
        prop(c"Join Type", st.jointype.name().into());
        prop(c"Hash Cond", conds.join(" AND "));
        let joinquals = (*plan).custom_exprs;
        if !joinquals.is_null() {
            let e = pg_sys::make_ands_explicit(joinquals);
            prop(c"Join Filter", deparse(e.cast()));
        }
        if (*es).verbose {
            let kind = |s: &Side| if s.src.batches() { "batches" } else { "rows" };
            prop(c"Inputs", format!("outer {}, inner {}", kind(&st.outer), kind(&st.inner)));
            if let Some(o) = &st.output {
                let (columns, kernels, evaluated) = o.counts();
                prop(
                    c"Vector Output",
                    format!("batches ({columns} columns, {kernels} kernel, {evaluated} evaluated targets)"),
                );
            }
        }
        if st.shares_build {
            prop(c"Build", "shared".into());
        }
        if (*es).analyze {
            if !st.shared.is_null() {
                int(c"Shared Inner Rows Written", None, st.stats.shared_rows);
            }
            int(c"Build Rows", None, st.stats.build_rows);
            int(c"Probe Batches", None, st.stats.probe_batches);
            int(c"Peak Memory", Some(c"kB"), st.stats.peak_memory.div_ceil(1024) as u64);
            if st.stats.partitions > 0 {
                int(c"Partitions", None, st.stats.partitions);
                int(c"Spilled Rows", None, st.stats.spilled_rows);
                int(c"Spilled", Some(c"kB"), st.stats.spilled_bytes.div_ceil(1024));
            }
        }
    }
}
