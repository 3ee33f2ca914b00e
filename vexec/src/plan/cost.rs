//! The cost model: one place that turns a row plan's cost into the cost of
//! its vector alternative, in PostgreSQL's units.
//!
//! A vector scan reads the same pages as a sequential scan, so the disk part
//! is PostgreSQL's own (`seq_page_cost` per page). The CPU part is where
//! vectors win, and the factors ([`vexec_core::cost::Factors`], read from
//! the `vexec.*_cost_factor` settings by [`factors`]; ORCA's vector-aware
//! cost model in `orca_bridge` takes the same) say by how much: a tuple into
//! a batch, a kernel against the evaluator, a row handed to a row parent,
//! a key hashed for aggregation or a join, a sort's comparisons.

use pgrx::pg_sys;

pub use vexec_core::cost::Factors;

/// The vector factors of the session's settings.
pub fn factors() -> Factors {
    crate::settings::cost_factors()
}

/// Setting up a vector scan (buffers, compiled program), in cpu_operator_cost.
pub const SETUP_OPERATORS: f64 = 100.0;

/// What a row written by VecInsert saves against ModifyTable's one
/// table_tuple_insert per row (one WAL record and one buffer lock per page
/// instead of per row), in cpu_tuple_cost. PostgreSQL does not cost the
/// writing, so the saving is taken off the cost of producing the rows.
pub const INSERT_SAVING_TUPLES: f64 = 2.0;
/// Setting up VecInsert (slots, the bulk insert state), in cpu_tuple_cost.
pub const INSERT_SETUP_TUPLES: f64 = 200.0;
/// Forming a row of the table's type from a batch's column, per column, in
/// cpu_operator_cost: what a row child's heap tuple, copied whole, does not
/// pay (a VecScan of all 16 lineitem columns into VecInsert ran 2.5x the
/// time of a Seq Scan whose tuples were copied as they are).
pub const INSERT_FORM_OPERATORS: f64 = 0.5;

#[derive(Debug, Clone, Copy, Default)]
pub struct Cost {
    pub startup: f64,
    pub total: f64,
    pub rows: f64,
}

/// Per-tuple CPU costs of the quals and targets, split by how they run.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExprCosts {
    pub startup: f64,
    pub kernel_qual: f64,
    pub fallback_qual: f64,
    pub kernel_target: f64,
    pub fallback_target: f64,
}

/// PostgreSQL's parallel divisor (`get_parallel_divisor` in costsize.c).
pub fn parallel_divisor(workers: i32) -> f64 {
    let mut d = workers as f64;
    // SAFETY: reads a GUC variable on the backend's main thread (the planner's).
    if unsafe { pg_sys::parallel_leader_participation } {
        let leader = 1.0 - 0.3 * workers as f64;
        if leader > 0.0 {
            d += leader;
        }
    }
    d
}

/// The row sequential scan of `rel` (as `cost_seqscan` computes it) and its
/// vector alternative, for `workers` parallel workers (0: not parallel).
pub unsafe fn seq_scan(rel: *mut pg_sys::RelOptInfo, e: &ExprCosts, workers: i32) -> (Cost, Cost) {
    // SAFETY: rel is a live RelOptInfo (caller's contract); reads cost GUCs on the planner's
    // thread.
    unsafe {
        let mut spc_seq_page_cost = 0.0;
        pg_sys::get_tablespace_page_costs((*rel).reltablespace, ptr_null(), &mut spc_seq_page_cost);
        let disk = spc_seq_page_cost * (*rel).pages as f64;
        let tuples = (*rel).tuples;
        let mut rows = (*rel).rows;
        let target = (*rel).reltarget;
        let cpu_tuple_cost = pg_sys::cpu_tuple_cost;

        let row_startup = (*rel).baserestrictcost.startup + (*target).cost.startup;
        let mut row_cpu =
            (cpu_tuple_cost + (*rel).baserestrictcost.per_tuple) * tuples + (*target).cost.per_tuple * rows;

        let f = factors();
        let vec_startup = e.startup + (*target).cost.startup + SETUP_OPERATORS * pg_sys::cpu_operator_cost;
        let mut vec_cpu = (cpu_tuple_cost * f.tuple + e.kernel_qual * f.kernel + e.fallback_qual) * tuples
            + (e.kernel_target * f.kernel + e.fallback_target + cpu_tuple_cost * f.output) * rows;

        if workers > 0 {
            let d = parallel_divisor(workers);
            row_cpu /= d;
            vec_cpu /= d;
            rows = pg_sys::clamp_row_est(rows / d);
        }
        (
            Cost { startup: row_startup, total: row_startup + row_cpu + disk, rows },
            Cost { startup: vec_startup, total: vec_startup + vec_cpu + disk, rows },
        )
    }
}

/// Auto mode's vector scan cost: raised by `margin` (a fraction of it),
/// but kept 2% below the row sequential scan (beyond add_path's 1% fuzz),
/// which it always beats. A plan on a vector scan then replaces one on an
/// index only when clearly cheaper: PostgreSQL's index estimates and ours
/// err in different ways, and a wrong switch costs more than a missed one.
pub fn with_index_margin(row: Cost, vec: Cost, margin: f64) -> Cost {
    let run = vec.total - vec.startup;
    let total = (vec.total + run * margin).min(row.total * 0.98).max(vec.total);
    Cost { total, ..vec }
}

fn ptr_null() -> *mut f64 {
    std::ptr::null_mut()
}

/// Handing `rows` rows between a vector node and a row node, either way:
/// a batch's rows filled into a row parent's slot, or a row child's slots
/// copied into batches.
pub fn handoff(rows: f64) -> f64 {
    // SAFETY: reads a cost GUC on the planner's thread.
    let cpu_tuple_cost = unsafe { pg_sys::cpu_tuple_cost };
    cpu_tuple_cost * factors().output * rows
}

/// What a vector join's input costs it: the input's cost, plus the copy
/// into batches when it is a row node (an Append of vector scans, a
/// PostgreSQL join), which reads through slots (TPC-DS Q5's joins read
/// millions of rows that way, costed as if they came as batches). A vector
/// input's cost keeps its own hand-off: the join does not pay it, but
/// taking it off would make vector joins cheaper against index nested
/// loops, where auto's mistakes come from (issue 49), so it stays as margin.
pub fn join_input_cost(input: &pg_sys::Path, vector_input: bool) -> f64 {
    if vector_input {
        input.total_cost
    } else {
        input.total_cost + handoff(input.rows)
    }
}

/// A VecHashJoin's startup and total cost, in HashJoin's shape: `inner`
/// (the inner input's cost), `build` (hashing it, setting up, partitions),
/// then the outer input and `run` (probing, emitting the rows). The first
/// row also waits for the outer side's first row, as initial_cost_hashjoin
/// counts it: without that, a join over a blocking outer (an aggregate,
/// another join's build) looked cheap to start under a LIMIT or a Merge
/// Append (TPC-DS Q60).
pub fn hash_join(inner: f64, build: f64, outer: &pg_sys::Path, outer_vector: bool, run: f64) -> (f64, f64) {
    let startup = inner + build + outer.startup_cost;
    (startup, startup + (join_input_cost(outer, outer_vector) - outer.startup_cost) + run)
}

/// What a VecAgg's child costs it: a vector child's cost without handing
/// rows to a row parent, or a row child's cost plus copying its rows into
/// batches.
unsafe fn agg_child_cost(child: &pg_sys::Path, vector_child: bool) -> f64 {
    let handoff = handoff(child.rows);
    if vector_child {
        child.total_cost - handoff
    } else {
        child.total_cost + handoff
    }
}

/// A plain (ungrouped) VecAgg over a child path computing `naggs`
/// aggregates by kernels: the child (`agg_child_cost`), plus the
/// transitions at kernel price, plus its setup.
pub unsafe fn plain_agg(child: &pg_sys::Path, naggs: usize, vector_child: bool) -> Cost {
    // SAFETY: reads cost GUCs on the planner's thread; child is a live Path.
    unsafe {
        let rows = child.rows;
        let child_cost = agg_child_cost(child, vector_child);
        let transitions = naggs.max(1) as f64 * pg_sys::cpu_operator_cost * factors().kernel * rows;
        let startup = child_cost + transitions + SETUP_OPERATORS * pg_sys::cpu_operator_cost;
        Cost { startup, total: startup + pg_sys::cpu_tuple_cost, rows: 1.0 }
    }
}

/// A hashed VecAgg over a child path: the child (`agg_child_cost`), each
/// row's keys hashed and probed, `naggs` transitions at kernel price, one
/// output row per group, and, when the groups are expected to outgrow
/// `hash_mem`, writing and reading the input once (as `cost_agg` charges a
/// spilling HashAggregate).
pub unsafe fn hashed_agg(
    child: &pg_sys::Path,
    naggs: usize,
    nkeys: usize,
    groups: f64,
    width: i32,
    vector_child: bool,
) -> Cost {
    // SAFETY: as plain_agg.
    unsafe {
        let rows = child.rows;
        let op = pg_sys::cpu_operator_cost;
        let child_cost = agg_child_cost(child, vector_child);
        let f = factors();
        let per_row = nkeys as f64 * op * f.group_key + naggs as f64 * op * f.kernel;
        let mut startup = child_cost + per_row * rows + SETUP_OPERATORS * op;
        let entry = (width.max(8) as f64 + 32.0 + 16.0 * naggs as f64) * groups;
        if entry > pg_sys::get_hash_memory_limit() as f64 {
            let pages = (rows * (*child.pathtarget).width.max(8) as f64 / pg_sys::BLCKSZ as f64).ceil();
            startup += 2.0 * pages * pg_sys::seq_page_cost;
        }
        let total = startup + groups * pg_sys::cpu_tuple_cost;
        Cost { startup, total, rows: groups }
    }
}

/// VecInsert writing the rows `sub` produces, against ModifyTable's cost
/// (which is `sub`'s: see INSERT_SAVING_TUPLES); `batch_columns` is the
/// number of columns when `sub` hands over batches, whose rows are formed
/// column by column. It returns nothing before the last row is written.
pub fn insert(sub: &pg_sys::Path, batch_columns: Option<usize>) -> Cost {
    // SAFETY: reads GUC variables on the planner's thread.
    let (tuple, operator) = unsafe { (pg_sys::cpu_tuple_cost, pg_sys::cpu_operator_cost) };
    let form = batch_columns.map_or(0.0, |n| n as f64 * INSERT_FORM_OPERATORS * operator);
    let total =
        (sub.total_cost + sub.rows * (form - INSERT_SAVING_TUPLES * tuple) + INSERT_SETUP_TUPLES * tuple)
            .max(0.0);
    Cost { startup: total, total, rows: sub.rows }
}
