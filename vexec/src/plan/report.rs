//! Collecting the planning report of each statement and attaching it to the
//! finished plan (the report model itself is `vexec_core::report`).
//!
//! `planner()` can nest (a function inlined or const-folded during planning
//! may plan SQL of its own), so reports form a stack: the planner hook pushes
//! one on entry and pops it on exit, also when planning ends with an ERROR.
//! Path hooks add their alternatives to the top of the stack, when the
//! statement is planned for EXPLAIN (VEXEC) (or in explain mode): other
//! plans carry the report's summary only, so that describing alternatives
//! costs no planning time when nobody will read them.
//!
//! Where the report goes: on PostgreSQL 19 into `PlannedStmt.extension_state`
//! (a `DefElem` named `vexec` holding the encoded report), so it follows the
//! plan through the plan cache and `EXPLAIN EXECUTE`. PostgreSQL 18 has no
//! such field; there the last few reports are kept in backend memory, keyed by
//! the address of their `PlannedStmt`, which covers `EXPLAIN` (it plans and
//! prints back to back) but not a cached plan printed later.

use std::cell::RefCell;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;

use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::agg::KeyKind;
use vexec_core::report::{Alternative, Report, Verdict};

use crate::settings::{Mode, BATCH_FORMAT, MODE};

/// The report of one planner() call in progress.
struct Planning {
    /// None when vexec.mode was off.
    report: Option<Report>,
    /// Alternatives added as paths: (index in the report, path id, why it
    /// lost if it was not chosen).
    candidates: Vec<(usize, u32, String)>,
    /// Ids of the vector paths turned into plan nodes.
    chosen: Vec<u32>,
    cursor_options: i32,
    /// Per base relation (RelOptInfo address), a copy of its non-parallel
    /// VecScan path, for vector parents (VecAgg) to build on whether or not
    /// add_path kept it.
    scan_paths: Vec<(usize, StashedScan)>,
    partial_scan_paths: Vec<(usize, StashedScan)>,
    /// Per join relation, a copy of each VecHashJoin path offered (for
    /// VecAgg over a join).
    join_paths: Vec<(usize, *mut pg_sys::CustomPath)>,
    /// The same for partial VecHashJoin paths (parallel plans).
    partial_join_paths: Vec<(usize, *mut pg_sys::CustomPath)>,
    /// Answers of join checks that depend on one planner object (a join
    /// relation, an input relation, a join clause), which the planner asks
    /// again for every pair of inputs and join type (see `memo_refusal`,
    /// `memo_key_kind`).
    refusals: HashMap<(usize, u8), Option<String>>,
    key_kinds: HashMap<(usize, bool), Result<KeyKind, String>>,
}

thread_local! {
    static PLANNING: RefCell<Vec<Planning>> = const { RefCell::new(Vec::new()) };
    static NEXT_ID: std::cell::Cell<u32> = const { std::cell::Cell::new(1) };
}

/// Record an alternative with its final verdict. The alternative is only
/// built when the statement's report records alternatives (EXPLAIN (VEXEC)
/// plans it): describing every join pair costs planning time.
pub fn record(alt: impl FnOnce() -> Alternative) {
    PLANNING.with(|p| {
        if let Some(Planning { report: Some(report), .. }) = p.borrow_mut().last_mut() {
            if report.recorded {
                report.alternatives.push(alt());
            }
        }
    });
}

/// Record an alternative that was added as a path with `id`: it is chosen if
/// the path becomes a plan node (`mark_chosen`), else it lost for `lost`.
pub fn record_candidate(id: u32, lost: impl Into<String>, alt: impl FnOnce() -> Alternative) {
    PLANNING.with(|p| {
        if let Some(Planning { report: Some(report), candidates, .. }) = p.borrow_mut().last_mut() {
            if report.recorded {
                report.alternatives.push(alt());
                candidates.push((report.alternatives.len() - 1, id, lost.into()));
            }
        }
    });
}

/// Whether the statement being planned records its alternatives.
pub fn recording() -> bool {
    PLANNING.with(|p| p.borrow().last().is_some_and(|pl| pl.report.as_ref().is_some_and(|r| r.recorded)))
}

/// A fresh id for a vector path (kept in its custom_private).
pub fn next_id() -> u32 {
    NEXT_ID.with(|n| {
        let id = n.get();
        n.set(id.wrapping_add(1).max(1));
        id
    })
}

/// The vector path `id` became a plan node.
pub fn mark_chosen(id: u32) {
    PLANNING.with(|p| {
        if let Some(pl) = p.borrow_mut().last_mut() {
            pl.chosen.push(id);
        }
    });
}

/// A copy of a VecScan path kept for vector parents, whether the path it
/// copies was added to the relation's path list (auto and force modes), and
/// whether it was still there right after add_path.
#[derive(Clone, Copy)]
pub struct StashedScan {
    pub path: *mut pg_sys::CustomPath,
    pub added: bool,
    pub listed: bool,
}

/// Keep a copy of the VecScan path of `rel` (`partial`: the parallel-aware one).
pub fn stash_scan_path(rel: *mut pg_sys::RelOptInfo, scan: StashedScan, partial: bool) {
    PLANNING.with(|p| {
        if let Some(pl) = p.borrow_mut().last_mut() {
            let list = if partial { &mut pl.partial_scan_paths } else { &mut pl.scan_paths };
            list.push((rel as usize, scan));
        }
    });
}

/// The VecScan path of `rel` kept in the statement being planned
/// (`partial`: the parallel-aware one); see `scan::vector_scan_of`.
pub fn stashed_scan(rel: *mut pg_sys::RelOptInfo, partial: bool) -> Option<StashedScan> {
    PLANNING.with(|p| {
        p.borrow().last().and_then(|pl| {
            let list = if partial { &pl.partial_scan_paths } else { &pl.scan_paths };
            list.iter().rev().find(|(r, _)| *r == rel as usize).map(|(_, s)| *s)
        })
    })
}

/// Keep a copy of a VecHashJoin path of join relation `rel` (`partial`:
/// one participant's share of a parallel join).
pub fn stash_join_path(rel: *mut pg_sys::RelOptInfo, path: *mut pg_sys::CustomPath, partial: bool) {
    PLANNING.with(|p| {
        if let Some(pl) = p.borrow_mut().last_mut() {
            let list = if partial { &mut pl.partial_join_paths } else { &mut pl.join_paths };
            list.push((rel as usize, path));
        }
    });
}

/// The cheapest VecHashJoin path of `rel` (fewest disabled nodes, then
/// total cost) in the statement being planned (`partial`: of the partial ones).
pub fn join_path_of(rel: *mut pg_sys::RelOptInfo, partial: bool) -> Option<*mut pg_sys::CustomPath> {
    PLANNING.with(|p| {
        p.borrow().last().and_then(|pl| {
            let list = if partial { &pl.partial_join_paths } else { &pl.join_paths };
            // SAFETY: the recorded paths are CustomPaths made while planning this query, alive in
            // the planner's context.
            list.iter().filter(|(r, _)| *r == rel as usize).map(|(_, p)| *p).min_by(|&a, &b| unsafe {
                ((*a).path.disabled_nodes, (*a).path.total_cost)
                    .partial_cmp(&((*b).path.disabled_nodes, (*b).path.total_cost))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
        })
    })
}

/// The answer for `key` in `table` of the statement being planned:
/// computed once, by `compute`.
fn memoized<K: Copy + Eq + std::hash::Hash, V: Clone>(
    table: fn(&mut Planning) -> &mut HashMap<K, V>,
    key: K,
    compute: impl FnOnce() -> V,
) -> V {
    let known = PLANNING.with(|p| p.borrow_mut().last_mut().and_then(|pl| table(pl).get(&key).cloned()));
    if let Some(v) = known {
        return v;
    }
    // (Computed without holding the borrow: it may call the planner, which may ERROR.)
    let v = compute();
    PLANNING.with(|p| {
        if let Some(pl) = p.borrow_mut().last_mut() {
            table(pl).insert(key, v.clone());
        }
    });
    v
}

/// Why a join cannot be a VecHashJoin, as far as the planner object at
/// `key` (its address and what is asked of it) tells, once per statement.
pub fn memo_refusal(key: (usize, u8), compute: impl FnOnce() -> Option<String>) -> Option<String> {
    memoized(|pl| &mut pl.refusals, key, compute)
}

/// A join clause's key kind (`key`: its address, and whether its left
/// argument is the outer side), once per statement.
pub fn memo_key_kind(
    key: (usize, bool),
    compute: impl FnOnce() -> Result<KeyKind, String>,
) -> Result<KeyKind, String> {
    memoized(|pl| &mut pl.key_kinds, key, compute)
}

/// cursorOptions of the statement being planned.
pub fn cursor_options() -> i32 {
    PLANNING.with(|p| p.borrow().last().map_or(0, |pl| pl.cursor_options))
}

static mut PREV_PLANNER_HOOK: pg_sys::planner_hook_type = None;

pub fn install_hook() {
    // SAFETY: runs once, in _PG_init on the backend's main thread; the previous hook is kept and
    // called.
    unsafe {
        PREV_PLANNER_HOOK = pg_sys::planner_hook;
        pg_sys::planner_hook = Some(vexec_planner);
    }
}

#[cfg(feature = "pg19")]
#[pg_guard]
unsafe extern "C-unwind" fn vexec_planner(
    parse: *mut pg_sys::Query,
    query_string: *const std::ffi::c_char,
    cursor_options: i32,
    bound_params: pg_sys::ParamListInfo,
    es: *mut pg_sys::ExplainState,
) -> *mut pg_sys::PlannedStmt {
    // SAFETY: the planner hook's arguments, passed on unchanged to the previous hook or
    // standard_planner.
    plan_with_report(cursor_options, || unsafe {
        match PREV_PLANNER_HOOK {
            Some(prev) => prev(parse, query_string, cursor_options, bound_params, es),
            None => pg_sys::standard_planner(parse, query_string, cursor_options, bound_params, es),
        }
    })
}

#[cfg(feature = "pg18")]
#[pg_guard]
unsafe extern "C-unwind" fn vexec_planner(
    parse: *mut pg_sys::Query,
    query_string: *const std::ffi::c_char,
    cursor_options: i32,
    bound_params: pg_sys::ParamListInfo,
) -> *mut pg_sys::PlannedStmt {
    // SAFETY: as above.
    plan_with_report(cursor_options, || unsafe {
        match PREV_PLANNER_HOOK {
            Some(prev) => prev(parse, query_string, cursor_options, bound_params),
            None => pg_sys::standard_planner(parse, query_string, cursor_options, bound_params),
        }
    })
}

fn plan_with_report(
    cursor_options: i32,
    plan: impl FnOnce() -> *mut pg_sys::PlannedStmt,
) -> *mut pg_sys::PlannedStmt {
    let mode = MODE.get();
    let record = mode == Mode::Explain
        || super::explain::vexec_requested()
        || (mode == Mode::Force && crate::settings::DEBUG_REQUIRE_VECTOR.get());
    let report = (mode != Mode::Off).then(|| {
        let (mode, format) = (mode.name(), BATCH_FORMAT.get().name());
        if record {
            Report::new(mode, format)
        } else {
            Report::unrecorded(mode, format)
        }
    });
    let depth = PLANNING.with(|p| {
        let mut p = p.borrow_mut();
        p.push(Planning {
            report,
            candidates: Vec::new(),
            chosen: Vec::new(),
            cursor_options,
            scan_paths: Vec::new(),
            partial_scan_paths: Vec::new(),
            join_paths: Vec::new(),
            partial_join_paths: Vec::new(),
            refusals: HashMap::new(),
            key_kinds: HashMap::new(),
        });
        p.len()
    });
    // Whatever happens inside, the stack goes back to its depth on entry.
    PgTryBuilder::new(AssertUnwindSafe(|| {
        let pstmt = plan();
        // SAFETY: pstmt is the PlannedStmt the planner just returned, finished.
        unsafe { super::tree::expose_children(pstmt) };
        let report = PLANNING.with(|p| p.borrow_mut().pop()).and_then(finish);
        // SAFETY: pstmt is the PlannedStmt the planner just returned.
        unsafe { attach(pstmt, report.as_ref()) };
        if mode == Mode::Force && crate::settings::DEBUG_REQUIRE_VECTOR.get() {
            // SAFETY: as above.
            unsafe { super::require::check(pstmt, report.as_ref()) };
        }
        pstmt
    }))
    .finally(|| PLANNING.with(|p| p.borrow_mut().truncate(depth - 1)))
    .execute()
}

/// Give candidates their verdict: chosen if their path became a plan node.
fn finish(pl: Planning) -> Option<Report> {
    let mut report = pl.report?;
    for (idx, id, lost) in pl.candidates {
        report.alternatives[idx].verdict =
            if pl.chosen.contains(&id) { Verdict::Chosen } else { Verdict::NotChosen(lost) };
    }
    Some(report)
}

#[cfg(feature = "pg19")]
const EXTENSION_STATE_NAME: &std::ffi::CStr = c"vexec";

#[cfg(feature = "pg19")]
unsafe fn attach(pstmt: *mut pg_sys::PlannedStmt, report: Option<&Report>) {
    let Some(report) = report else { return };
    // SAFETY: pstmt is a live PlannedStmt (caller's contract); the report string is copied into the
    // current context.
    unsafe {
        let encoded = std::ffi::CString::new(report.encode()).expect("a report holds no NUL byte");
        let value = pg_sys::makeString(pg_sys::pstrdup(encoded.as_ptr()));
        let def = pg_sys::makeDefElem(pg_sys::pstrdup(EXTENSION_STATE_NAME.as_ptr()), value.cast(), -1);
        (*pstmt).extension_state = pg_sys::lappend((*pstmt).extension_state, def.cast());
    }
}

/// The report attached to a plan, if it was planned with vexec on.
#[cfg(feature = "pg19")]
pub unsafe fn find(pstmt: *mut pg_sys::PlannedStmt) -> Option<Report> {
    // SAFETY: pstmt is a live PlannedStmt (caller's contract); its extension_state holds DefElems.
    unsafe {
        for def in crate::pgutil::list_ptrs::<pg_sys::DefElem>((*pstmt).extension_state) {
            if std::ffi::CStr::from_ptr((*def).defname) != EXTENSION_STATE_NAME {
                continue;
            }
            let s = std::ffi::CStr::from_ptr((*((*def).arg as *mut pg_sys::String)).sval);
            return match Report::decode(&s.to_string_lossy()) {
                Ok(r) => Some(r),
                Err(e) => error!("{e}"),
            };
        }
        None
    }
}

#[cfg(feature = "pg18")]
thread_local! {
    /// (address of a PlannedStmt, its report), newest last.
    static RECENT: RefCell<Vec<(usize, Report)>> = const { RefCell::new(Vec::new()) };
}

#[cfg(feature = "pg18")]
unsafe fn attach(pstmt: *mut pg_sys::PlannedStmt, report: Option<&Report>) {
    // Enough for nested planning; EXPLAIN prints right after planning.
    const KEEP: usize = 16;
    RECENT.with(|r| {
        let mut r = r.borrow_mut();
        // A new plan at the address of an old one must not inherit its report.
        r.retain(|(p, _)| *p != pstmt as usize);
        // (A report without alternatives is not kept: only the EXPLAIN that
        // planned the statement can find it here, and that one records them.)
        let Some(report) = report.filter(|r| r.recorded) else { return };
        if r.len() == KEEP {
            r.remove(0);
        }
        r.push((pstmt as usize, report.clone()));
    });
}

#[cfg(feature = "pg18")]
pub unsafe fn find(pstmt: *mut pg_sys::PlannedStmt) -> Option<Report> {
    RECENT.with(|r| r.borrow().iter().rev().find(|(p, _)| *p == pstmt as usize).map(|(_, rep)| rep.clone()))
}
