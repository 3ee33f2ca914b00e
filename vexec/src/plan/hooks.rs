//! The planner hooks vexec chains into, in one place: each calls the hook
//! installed before vexec's first, then vexec's part for each node kind
//! (set_rel_pathlist the other way round; see there).
//! (The planner_hook that keeps EXPLAIN (VEXEC)'s report is in `report`;
//! EXPLAIN's option and per-plan hooks are in `explain`.)

use pgrx::pg_sys;
use pgrx::prelude::*;

use super::{agg, insert, join, scan, sort};

static mut PREV_REL_PATHLIST: pg_sys::set_rel_pathlist_hook_type = None;
static mut PREV_JOIN_PATHLIST: pg_sys::set_join_pathlist_hook_type = None;
static mut PREV_UPPER_PATHS: pg_sys::create_upper_paths_hook_type = None;

/// Install the hooks (at load time, once).
pub fn install() {
    // SAFETY: _PG_init runs once per process, on its main thread, before any
    // planning; the previous hooks are kept and called first.
    unsafe {
        PREV_REL_PATHLIST = pg_sys::set_rel_pathlist_hook;
        pg_sys::set_rel_pathlist_hook = Some(set_rel_pathlist);
        PREV_JOIN_PATHLIST = pg_sys::set_join_pathlist_hook;
        pg_sys::set_join_pathlist_hook = Some(set_join_pathlist);
        PREV_UPPER_PATHS = pg_sys::create_upper_paths_hook;
        pg_sys::create_upper_paths_hook = Some(create_upper_paths);
    }
}

/// Base relations: VecScan.
#[pg_guard]
unsafe extern "C-unwind" fn set_rel_pathlist(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    rti: pg_sys::Index,
    rte: *mut pg_sys::RangeTblEntry,
) {
    // SAFETY: PostgreSQL's arguments, passed on.
    unsafe {
        // Here vexec's part comes first: an extension that rebuilds the
        // relation's paths after (pg_hint_plan on PostgreSQL 18, whichever
        // order the libraries load in) then has the last word, and
        // `scan::vector_scan_of` notices it.
        scan::set_rel_pathlist(root, rel, rti, rte);
        if let Some(prev) = PREV_REL_PATHLIST {
            prev(root, rel, rti, rte);
        }
    }
}

/// Join relations: VecHashJoin.
#[pg_guard]
unsafe extern "C-unwind" fn set_join_pathlist(
    root: *mut pg_sys::PlannerInfo,
    joinrel: *mut pg_sys::RelOptInfo,
    outerrel: *mut pg_sys::RelOptInfo,
    innerrel: *mut pg_sys::RelOptInfo,
    jointype: pg_sys::JoinType::Type,
    extra: *mut pg_sys::JoinPathExtraData,
) {
    // SAFETY: PostgreSQL's arguments, passed on.
    unsafe {
        if let Some(prev) = PREV_JOIN_PATHLIST {
            prev(root, joinrel, outerrel, innerrel, jointype, extra);
        }
        join::join_pathlist(root, joinrel, outerrel, innerrel, jointype, extra);
    }
}

/// Upper relations: VecAgg (grouping), VecSort (ordering), VecInsert (the
/// final relation of an INSERT); each looks at its own stage.
#[pg_guard]
unsafe extern "C-unwind" fn create_upper_paths(
    root: *mut pg_sys::PlannerInfo,
    stage: pg_sys::UpperRelationKind::Type,
    input_rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    extra: *mut std::ffi::c_void,
) {
    // SAFETY: PostgreSQL's arguments, passed on.
    unsafe {
        if let Some(prev) = PREV_UPPER_PATHS {
            prev(root, stage, input_rel, output_rel, extra);
        }
        agg::create_upper_paths(root, stage, input_rel, output_rel, extra);
        sort::create_upper_paths(root, stage, input_rel, output_rel, extra);
        insert::create_upper_paths(root, stage, output_rel);
    }
}
