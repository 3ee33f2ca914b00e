//! VecScan paths: `set_rel_pathlist_hook` offers a vector scan of each base
//! relation next to PostgreSQL's own paths, costed by `plan::cost`.
//!
//! - mode off: nothing is considered;
//! - explain: the path is costed and reported, never added;
//! - auto: it competes in add_path (and add_partial_path for parallel plans);
//! - force: PostgreSQL's sequential scan paths are disabled (as
//!   `enable_seqscan = off` disables them), so the vector scan replaces every
//!   sequential scan it can; index and bitmap scans still compete on cost.
//!
//! A vector scan is a sequential scan: it is disabled wherever PostgreSQL's
//! is (`enable_seqscan = off`, a pg_hint_plan scan hint; see
//! `plan::enabled`), and `vexec.enable_scan = off` stops it being considered. Every
//! refusal is recorded with its reason for EXPLAIN (VEXEC).

use std::ffi::CStr;

use crate::pgutil::SyncPtr;
use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::report::{Alternative, Verdict};

use super::cost::{self, ExprCosts};
use super::enabled;
use super::report;
use crate::expr::compile::Compiler;
use crate::pgutil::list_ptrs;
use crate::settings::{self, Mode};
use crate::shim::guarded;

static PATH_METHODS: SyncPtr<pg_sys::CustomPathMethods> = SyncPtr(pg_sys::CustomPathMethods {
    CustomName: crate::nodes::SCAN.as_ptr(),
    PlanCustomPath: Some(plan_custom_path),
    ReparameterizeCustomPathByChild: None,
});

/// set_rel_pathlist_hook's part for VecScan (see `plan::hooks`).
pub(super) unsafe fn set_rel_pathlist(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    rti: pg_sys::Index,
    rte: *mut pg_sys::RangeTblEntry,
) {
    // SAFETY: called from set_rel_pathlist_hook (plan/hooks.rs) on the backend's main thread with
    // the planner's live root, rel and rte.
    unsafe {
        let mode = settings::MODE.get();
        if matches!(mode, Mode::Auto | Mode::Force) && (*rte).rtekind == pg_sys::RTEKind::RTE_RELATION {
            charge_index_fetches(root, rel, settings::INDEX_FETCH_COST.get());
        }
        if mode != Mode::Off {
            consider(root, rel, rti, rte, mode);
        }
    }
}

/// Why a vector scan of this relation cannot be built, if it cannot.
unsafe fn refusal(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    rti: pg_sys::Index,
    rte: *mut pg_sys::RangeTblEntry,
    mode: Mode,
) -> Option<String> {
    // SAFETY: root, rel and rte are the live planner data of the relation (caller's contract); the
    // relation is locked by the planner.
    unsafe {
        if !settings::ENABLE_SCAN.get() {
            return Some("vexec.enable_scan is off".into());
        }
        let relkind = (*rte).relkind as u8;
        if relkind == pg_sys::RELKIND_FOREIGN_TABLE {
            return Some("foreign table".into());
        }
        if relkind != pg_sys::RELKIND_RELATION && relkind != pg_sys::RELKIND_MATVIEW {
            return Some(format!("relation kind '{}' is not a table", relkind as char));
        }
        if !(*rte).tablesample.is_null() {
            return Some("TABLESAMPLE".into());
        }
        // The target of UPDATE/DELETE/MERGE, or one of its inheritance
        // children or partitions (their scans carry the update's target list,
        // MULTIEXPR subplans included, which a row scan must evaluate).
        let result_rel = (*(*root).parse).resultRelation;
        if result_rel == rti as i32
            || (result_rel > 0 && pg_sys::bms_is_member(result_rel, (*rel).top_parent_relids))
        {
            return Some("target of UPDATE, DELETE or MERGE".into());
        }
        for rc in list_ptrs::<pg_sys::PlanRowMark>((*root).rowMarks) {
            if (*rc).rti == rti {
                return Some("FOR UPDATE/SHARE".into());
            }
        }
        if report::cursor_options() & CURSOR_OPTIONS != 0 {
            return Some("cursor".into());
        }
        if !(*rel).lateral_relids.is_null() {
            return Some("LATERAL reference".into());
        }
        // System columns other than ctid and tableoid, whole-row references.
        let mut nodes = vec![(*(*rel).reltarget).exprs as *mut pg_sys::Node];
        nodes.extend(
            list_ptrs::<pg_sys::RestrictInfo>((*rel).baserestrictinfo)
                .map(|ri| (*ri).clause as *mut pg_sys::Node),
        );
        for attnum in crate::pgutil::attnums(&nodes, (*rel).relid) {
            if attnum == 0 {
                return Some("whole-row reference".into());
            }
            if attnum < 0
                && attnum != pg_sys::SelfItemPointerAttributeNumber
                && attnum != pg_sys::TableOidAttributeNumber
            {
                return Some(format!("system column {}", system_column_name(attnum)));
            }
        }
        // The rows the scan reads (not those it returns) pay for its setup.
        let min_rows = settings::MIN_ROWS.get() as f64;
        if mode != Mode::Force && (*rel).tuples < min_rows {
            return Some(format!(
                "{:.0} rows in the table, fewer than vexec.min_rows ({min_rows:.0})",
                (*rel).tuples
            ));
        }
        None
    }
}

/// Cursor options of a DECLARE CURSOR or a PL/pgSQL cursor (DECLARE sets
/// FAST_PLAN): UPDATE ... WHERE CURRENT OF needs a row scan's current tuple.
const CURSOR_OPTIONS: i32 = (pg_sys::CURSOR_OPT_FAST_PLAN
    | pg_sys::CURSOR_OPT_SCROLL
    | pg_sys::CURSOR_OPT_NO_SCROLL
    | pg_sys::CURSOR_OPT_INSENSITIVE
    | pg_sys::CURSOR_OPT_ASENSITIVE
    | pg_sys::CURSOR_OPT_HOLD) as i32;

fn system_column_name(attnum: i32) -> &'static str {
    match attnum {
        pg_sys::MinTransactionIdAttributeNumber => "xmin",
        pg_sys::MaxTransactionIdAttributeNumber => "xmax",
        pg_sys::MinCommandIdAttributeNumber => "cmin",
        pg_sys::MaxCommandIdAttributeNumber => "cmax",
        _ => "(unknown)",
    }
}

unsafe fn consider(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    rti: pg_sys::Index,
    rte: *mut pg_sys::RangeTblEntry,
    mode: Mode,
) {
    // SAFETY: as refusal().
    unsafe {
        if (*rte).rtekind != pg_sys::RTEKind::RTE_RELATION
            || ((*rel).reloptkind != pg_sys::RelOptKind::RELOPT_BASEREL
                && (*rel).reloptkind != pg_sys::RelOptKind::RELOPT_OTHER_MEMBER_REL)
            || (*rte).relkind as u8 == pg_sys::RELKIND_PARTITIONED_TABLE
            || (*rte).inh
        {
            // Not a scan of one table: an inheritance parent (with children)
            // or a partitioned table is an Append of its members' scans,
            // which are considered one by one.
            return;
        }
        // (Described only if the report records alternatives.)
        let target = || format!("on {}", relation_name(rte));
        if let Some(why) = refusal(root, rel, rti, rte, mode) {
            report::record(|| {
                alternative("VecScan", &target(), Verdict::NotPossible(why), None, None, vec![])
            });
            return;
        }

        // What would run as kernels, and what each costs.
        let mut c = Compiler::new((*rel).relid);
        let force_fallback = settings::DEBUG_FORCE_FALLBACK.get();
        let mut ec = ExprCosts::default();
        let (mut kq, mut fq, mut steps) = (0, 0, 0);
        for ri in list_ptrs::<pg_sys::RestrictInfo>((*rel).baserestrictinfo) {
            if (*ri).pseudoconstant {
                continue;
            }
            let clause = (*ri).clause as *mut pg_sys::Node;
            let mut qc = pg_sys::QualCost::default();
            pg_sys::cost_qual_eval_node(&mut qc, clause, root);
            ec.startup += qc.startup;
            match if force_fallback { None } else { c.compile(clause) } {
                Some(e) => {
                    kq += 1;
                    steps += e.steps();
                    // A pack's function costs what it costs PostgreSQL: no
                    // kernel discount (its per-row call is the same).
                    if e.has_call() {
                        ec.fallback_qual += qc.per_tuple;
                    } else {
                        ec.kernel_qual += qc.per_tuple;
                    }
                }
                None => {
                    fq += 1;
                    ec.fallback_qual += qc.per_tuple;
                }
            }
        }
        let quals = || format!("quals: {kq} kernel ({steps} steps), {fq} fallback");
        let disabled = enabled::seq_scan_disabled(rel, false) as i32;

        let margin = |(row, vec): (cost::Cost, cost::Cost)| match mode {
            Mode::Auto => (row, cost::with_index_margin(row, vec, settings::INDEX_MARGIN.get())),
            _ => (row, vec),
        };
        let (row, vec) = margin(cost::seq_scan(rel, &ec, 0));
        let id = report::next_id();
        let path = make_path(rel, vec, disabled, id, 0);
        // add_path may free the path; vector parents get a copy.
        let copy = pg_sys::palloc(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
        std::ptr::copy_nonoverlapping(path, copy, 1);
        let (added, listed) = offer(rel, mode, path, id, false, |verdict| {
            alternative("VecScan", &target(), verdict, Some(row.total), Some(vec.total), vec![quals()])
        });
        report::stash_scan_path(rel, report::StashedScan { path: copy, added, listed }, false);

        // A parallel vector scan under Gather, where a parallel scan could be.
        if (*rel).consider_parallel && pg_sys::max_parallel_workers_per_gather > 0 {
            let workers = pg_sys::compute_parallel_worker(
                rel,
                (*rel).pages as f64,
                -1.0,
                pg_sys::max_parallel_workers_per_gather,
            );
            if workers > 0 {
                let (prow, pvec) = margin(cost::seq_scan(rel, &ec, workers));
                let pid = report::next_id();
                let pdisabled = enabled::seq_scan_disabled(rel, true) as i32;
                let ppath = make_path(rel, pvec, pdisabled, pid, workers);
                let copy =
                    pg_sys::palloc(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
                std::ptr::copy_nonoverlapping(ppath, copy, 1);
                let (added, listed) = offer(rel, mode, ppath, pid, true, |verdict| {
                    let details = vec![quals(), format!("{workers} workers planned")];
                    alternative(
                        "Parallel VecScan",
                        &target(),
                        verdict,
                        Some(prow.total),
                        Some(pvec.total),
                        details,
                    )
                });
                report::stash_scan_path(rel, report::StashedScan { path: copy, added, listed }, true);
            }
        }
    }
}

/// Add the path as the mode says, and record it (`alt` describes it with a
/// verdict): whether it was added, and whether it is in the relation's path
/// list afterwards (add_path kept it).
unsafe fn offer(
    rel: *mut pg_sys::RelOptInfo,
    mode: Mode,
    path: *mut pg_sys::CustomPath,
    id: u32,
    partial: bool,
    alt: impl FnOnce(Verdict) -> Alternative,
) -> (bool, bool) {
    // SAFETY: the planner's live data (caller's contract); add_path/add_partial_path take paths
    // made in the planner's context.
    unsafe {
        match mode {
            Mode::Off => (false, false),
            Mode::Explain => {
                report::record(|| alt(Verdict::NotChosen("explain mode".into())));
                (false, false)
            }
            Mode::Auto | Mode::Force => {
                let disabled = (*path).path.disabled_nodes > 0;
                if mode == Mode::Force && !disabled {
                    disable_seq_scans(if partial { (*rel).partial_pathlist } else { (*rel).pathlist });
                }
                if partial {
                    pg_sys::add_partial_path(rel, path as *mut pg_sys::Path);
                } else {
                    pg_sys::add_path(rel, path as *mut pg_sys::Path);
                }
                let lost = if disabled {
                    "sequential scans are disabled for this relation (enable_seqscan or a planner hint)"
                } else {
                    "another path was cheaper"
                };
                report::record_candidate(id, lost, || alt(Verdict::Chosen));
                // (Compares the pointer only: add_path frees a path it rejects.)
                let list = if partial { (*rel).partial_pathlist } else { (*rel).pathlist };
                (true, list_ptrs::<pg_sys::Path>(list).any(|p| std::ptr::eq(p, path.cast())))
            }
        }
    }
}

/// The VecScan path a vector parent (VecAgg, VecHashJoin) reads `rel`
/// through (`partial`: the parallel-aware one): the copy kept when it was
/// offered, unless the relation's paths were rebuilt since. pg_hint_plan on
/// PostgreSQL 18 rebuilds the paths of a relation named in a scan or
/// Parallel hint after vexec offered its own: it drops them all and makes
/// PostgreSQL's again with the hint's settings in force, calling no hook,
/// and restores the settings after. A vector scan that was in the list and
/// is gone was offered under settings the hint overrides, so it must not
/// come back through a parent. On 18 a vector scan that add_path did not
/// keep cannot be told apart from one a hint would have disabled, so there
/// parents read a vector scan only while it is among the relation's paths;
/// on 19 a hint narrows the relation's strategy mask before any path is
/// made (`plan::enabled`), so the kept copy is always what the hint allows.
///
/// # Safety
/// `rel` is the planner's live RelOptInfo.
pub(super) unsafe fn vector_scan_of(
    rel: *mut pg_sys::RelOptInfo,
    partial: bool,
) -> Option<*mut pg_sys::CustomPath> {
    // SAFETY: rel and its path lists are live planner data (this function's contract).
    unsafe {
        let kept = report::stashed_scan(rel, partial)?;
        let list = if partial { (*rel).partial_pathlist } else { (*rel).pathlist };
        // (Through the projections the scan/join target may have put on it.)
        let is_vec_scan = |p: *mut pg_sys::Path| super::vector_node(p) == Some("VecScan");
        let checked = kept.added && (kept.listed || cfg!(feature = "pg18"));
        if checked && !list_ptrs::<pg_sys::Path>(list).any(is_vec_scan) {
            return None;
        }
        Some(kept.path)
    }
}

/// Auto and force modes: each parameterized index scan (the inner side of a
/// nested loop) is charged `per_page` more for every heap page it visits on
/// one loop (`vexec.index_fetch_cost`). PostgreSQL amortizes those pages over
/// all the loops of the join and, on cached data, counts them as almost
/// free, while each is a buffer lookup and a random access; a nested loop
/// fetching 1.2 M lineitem rows by l_suppkey, one page each, was chosen over
/// vector hash joins six times faster. The pages of one loop are counted as
/// cost_index counts them before amortizing: between one page per row and
/// the rows' share of the table, by the index's correlation (which the
/// index's own cost estimator reports, a composite btree's read back to its
/// leading column's), so lookups of a key whose rows lie together (a primary
/// key, `l_orderkey` in lineitem) gain next to nothing and the nested loops
/// that are right stay. A lookup's first page is not charged: PostgreSQL
/// counts at least the descent to it, and it is what a correlated lookup
/// costs; the charge is for the pages a scattered key adds. Index-only scans visit the
/// heap only where the visibility map says so and are left alone. The path
/// list is re-sorted by total cost, as add_path keeps it.
unsafe fn charge_index_fetches(root: *mut pg_sys::PlannerInfo, rel: *mut pg_sys::RelOptInfo, per_page: f64) {
    // SAFETY: root and rel are live planner data (caller's contract).
    unsafe {
        if per_page <= 0.0 || (*rel).tuples <= 0.0 || (*rel).pages == 0 {
            return;
        }
        let mut paths: Vec<*mut pg_sys::Path> = list_ptrs::<pg_sys::Path>((*rel).pathlist).collect();
        let mut charged = false;
        for &p in &paths {
            if (*p).type_ != pg_sys::NodeTag::T_IndexPath
                || (*p).pathtype != pg_sys::NodeTag::T_IndexScan
                || (*p).param_info.is_null()
            {
                continue;
            }
            let ip = p as *mut pg_sys::IndexPath;
            let Some(estimate) = (*(*ip).indexinfo).amcostestimate else { continue };
            let (mut startup, mut total, mut sel, mut correlation, mut pages) = (0.0, 0.0, 0.0, 0.0, 0.0);
            guarded(|| {
                estimate(root, ip, 1.0, &mut startup, &mut total, &mut sel, &mut correlation, &mut pages)
            });
            let index = (*ip).indexinfo;
            if (*index).relam == pg_sys::Oid::from(pg_sys::BTREE_AM_OID) && (*index).nkeycolumns > 1 {
                correlation = vexec_core::cost::leading_column_correlation(correlation);
            }
            let visited =
                vexec_core::cost::heap_pages_per_loop(sel, (*rel).tuples, (*rel).pages as f64, correlation);
            (*p).total_cost += (visited - 1.0).max(0.0) * per_page;
            charged = true;
        }
        if charged {
            paths.sort_by(|&a, &b| (*a).total_cost.total_cmp(&(*b).total_cost));
            let mut list: *mut pg_sys::List = std::ptr::null_mut();
            for p in paths {
                list = pg_sys::lappend(list, p.cast());
            }
            (*rel).pathlist = list;
        }
    }
}

/// Force mode: PostgreSQL's sequential scans count as disabled, so the
/// vector scan beats them whatever the costs.
unsafe fn disable_seq_scans(paths: *mut pg_sys::List) {
    // SAFETY: paths is a live path list of the relation being planned.
    unsafe {
        for p in list_ptrs::<pg_sys::Path>(paths) {
            if (*p).pathtype == pg_sys::NodeTag::T_SeqScan && (*p).param_info.is_null() {
                (*p).disabled_nodes += 1;
            }
        }
    }
}

fn alternative(
    node: &str,
    target: &str,
    verdict: Verdict,
    row_cost: Option<f64>,
    vector_cost: Option<f64>,
    details: Vec<String>,
) -> Alternative {
    Alternative { node: node.into(), target: target.into(), verdict, row_cost, vector_cost, details }
}

unsafe fn relation_name(rte: *mut pg_sys::RangeTblEntry) -> String {
    // SAFETY: rte is a live RangeTblEntry; get_rel_name returns a palloc'd copy or NULL.
    unsafe {
        let n = pg_sys::get_rel_name((*rte).relid);
        if n.is_null() {
            "?".into()
        } else {
            CStr::from_ptr(n).to_string_lossy().into_owned()
        }
    }
}

unsafe fn make_path(
    rel: *mut pg_sys::RelOptInfo,
    c: cost::Cost,
    disabled: i32,
    id: u32,
    workers: i32,
) -> *mut pg_sys::CustomPath {
    // SAFETY: the CustomPath is palloc'd in the planner's context; rel is live planner data.
    unsafe {
        let cp = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
        let p = &mut (*cp).path;
        p.type_ = pg_sys::NodeTag::T_CustomPath;
        p.pathtype = pg_sys::NodeTag::T_CustomScan;
        p.parent = rel;
        p.pathtarget = (*rel).reltarget;
        p.parallel_aware = workers > 0;
        p.parallel_safe = (*rel).consider_parallel;
        p.parallel_workers = workers;
        p.rows = c.rows;
        p.disabled_nodes = disabled;
        p.startup_cost = c.startup;
        p.total_cost = c.total;
        (*cp).flags = pg_sys::CUSTOMPATH_SUPPORT_PROJECTION;
        (*cp).custom_private = pg_sys::lappend(std::ptr::null_mut(), pg_sys::makeInteger(id as i32).cast());
        (*cp).methods = &PATH_METHODS.0;
        cp
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn plan_custom_path(
    _root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    best_path: *mut pg_sys::CustomPath,
    tlist: *mut pg_sys::List,
    clauses: *mut pg_sys::List,
    _custom_plans: *mut pg_sys::List,
) -> *mut pg_sys::Plan {
    // SAFETY: called by create_plan with our CustomPath (custom_private written by make_path).
    unsafe {
        if let Some(id) = list_ptrs::<pg_sys::Integer>((*best_path).custom_private).next() {
            report::mark_chosen((*id).ival as u32);
        }
        crate::exec::scan::make_plan(rel, tlist, clauses, (*best_path).flags, (*best_path).custom_private)
    }
}
