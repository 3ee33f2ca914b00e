//! VecSort paths: `create_upper_paths_hook` (UPPERREL_ORDERED) offers a
//! VecSort over each vector path of the input (a VecScan, a VecAgg or a
//! VecHashJoin, possibly under a projection), next to PostgreSQL's Sort paths, costed
//! as `cost_sort` costs a Sort with the comparisons at vector price.
//!
//! The keys are the query's ORDER BY clauses, found in the input's target
//! by their sortgroupref; a top-N bound is taken from `root->limit_tuples`
//! when LIMIT/OFFSET are known at plan time (PostgreSQL passes custom scans
//! no bound at run time). Modes as for the other nodes: explain records,
//! auto competes on cost, force counts PostgreSQL's Sort paths as disabled.
//!
//! The plan: a CustomScan with no relation (scanrelid 0) whose
//! `custom_scan_tlist` is the child's target list, so PostgreSQL's
//! set_references turns our target list into references to the child's
//! columns, which the executor returns in order.

use crate::pgutil::{list_ptrs, SyncPtr};
use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::plan_data::{SortKeySpec, SortPlanData};
use vexec_core::report::{Alternative, Verdict};

use super::cost;
use super::report;
use super::vector_node;
use crate::settings::{self, Mode};

static PATH_METHODS: SyncPtr<pg_sys::CustomPathMethods> = SyncPtr(pg_sys::CustomPathMethods {
    CustomName: crate::nodes::SORT.as_ptr(),
    PlanCustomPath: Some(plan_custom_path),
    ReparameterizeCustomPathByChild: None,
});

/// create_upper_paths_hook's part for VecSort (see `plan::hooks`).
pub(crate) unsafe fn create_upper_paths(
    root: *mut pg_sys::PlannerInfo,
    stage: pg_sys::UpperRelationKind::Type,
    input_rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    _extra: *mut std::ffi::c_void,
) {
    // SAFETY: called from create_upper_paths_hook (plan/hooks.rs) on the backend's main thread with
    // the planner's live root and rels.
    unsafe {
        let mode = settings::MODE.get();
        if mode != Mode::Off && stage == pg_sys::UpperRelationKind::UPPERREL_ORDERED {
            consider(root, input_rel, output_rel, mode);
        }
    }
}

/// Whether a path of the ordered relation sorts (PostgreSQL's Sort,
/// Incremental Sort, or Gather Merge over sorts).
unsafe fn sorts(path: *mut pg_sys::Path) -> bool {
    // SAFETY: path is a live Path; each subpath read is one of its children.
    unsafe {
        let mut p = path;
        loop {
            p = match (*p).type_ {
                pg_sys::NodeTag::T_ProjectionPath => (*(p as *mut pg_sys::ProjectionPath)).subpath,
                pg_sys::NodeTag::T_GatherMergePath => (*(p as *mut pg_sys::GatherMergePath)).subpath,
                pg_sys::NodeTag::T_SortPath | pg_sys::NodeTag::T_IncrementalSortPath => return true,
                _ => return false,
            }
        }
    }
}

/// The child column of each ORDER BY clause, with its operator, collation
/// and NULLS FIRST, or why one is missing.
unsafe fn sort_keys(
    root: *mut pg_sys::PlannerInfo,
    input: *mut pg_sys::Path,
) -> Result<Vec<(usize, pg_sys::Oid, pg_sys::Oid, bool)>, String> {
    // SAFETY: root and input are live planner data (caller's contract).
    unsafe {
        let target = (*input).pathtarget;
        let exprs: Vec<*mut pg_sys::Node> = list_ptrs::<pg_sys::Node>((*target).exprs).collect();
        let refs = (*target).sortgrouprefs;
        let mut keys = Vec::new();
        for sgc in list_ptrs::<pg_sys::SortGroupClause>((*(*root).parse).sortClause) {
            let r = (*sgc).tleSortGroupRef;
            let col = (0..exprs.len()).find(|&i| !refs.is_null() && *refs.add(i) == r);
            let Some(col) = col else {
                return Err("a sort key is not an output column of the input".into());
            };
            let collation = pg_sys::exprCollation(exprs[col]);
            keys.push((col, (*sgc).sortop, collation, (*sgc).nulls_first));
        }
        if keys.is_empty() {
            return Err("no ORDER BY clause".into());
        }
        Ok(keys)
    }
}

/// The top-N bound known at plan time, if any.
unsafe fn plan_bound(root: *mut pg_sys::PlannerInfo) -> Option<usize> {
    // SAFETY: root is the live PlannerInfo (caller's contract).
    unsafe {
        let limit = (*root).limit_tuples;
        // Set-returning functions projected after the sort change how many
        // sorted rows the LIMIT needs (PostgreSQL bounds no sort then).
        if (*(*root).parse).hasTargetSRFs || !(limit > 0.0) || limit > i32::MAX as f64 {
            return None;
        }
        Some(limit.ceil() as usize)
    }
}

fn alternative(
    target: &str,
    verdict: Verdict,
    row_cost: Option<f64>,
    vector_cost: Option<f64>,
    details: Vec<String>,
) -> Alternative {
    Alternative { node: "VecSort".into(), target: target.into(), verdict, row_cost, vector_cost, details }
}

unsafe fn consider(
    root: *mut pg_sys::PlannerInfo,
    input_rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    mode: Mode,
) {
    // SAFETY: the planner's live data at UPPERREL_ORDERED (caller's contract); paths are made in
    // the planner's context.
    unsafe {
        let pathkeys = (*root).sort_pathkeys;
        if pathkeys.is_null() {
            return;
        }
        let inputs: Vec<*mut pg_sys::Path> = list_ptrs::<pg_sys::Path>((*input_rel).pathlist)
            .filter(|&p| vector_node(p).is_some() && !pg_sys::pathkeys_contained_in(pathkeys, (*p).pathkeys))
            .collect();
        let refused = |why: &str| {
            report::record(|| alternative("ORDER BY", Verdict::NotPossible(why.into()), None, None, vec![]))
        };
        if inputs.is_empty() {
            return refused("the input has no vector path");
        }
        if !settings::ENABLE_SORT.get() {
            return refused("vexec.enable_sort is off");
        }
        let row_cost =
            list_ptrs::<pg_sys::Path>((*output_rel).pathlist).map(|p| (*p).total_cost).reduce(f64::min);
        let bound = plan_bound(root);
        let mut built: Vec<(*mut pg_sys::Path, Alternative, u32)> = Vec::new();
        for input in inputs {
            let what = format!("ORDER BY over {}", vector_node(input).unwrap_or("?"));
            let keys = match sort_keys(root, input) {
                Ok(k) => k,
                Err(why) => {
                    report::record(move || alternative(&what, Verdict::NotPossible(why), None, None, vec![]));
                    continue;
                }
            };
            // PostgreSQL's cost of sorting this input, then the sorting
            // part at vector price. (cost_sort counts enable_sort = off as
            // a disabled node, as for a Sort.)
            let mut sp: pg_sys::Path = std::mem::zeroed();
            let width = (*(*input).pathtarget).width;
            let limit = bound.map_or(-1.0, |b| b as f64);
            pg_sys::cost_sort(
                &mut sp,
                root,
                pathkeys,
                (*input).disabled_nodes,
                (*input).total_cost,
                (*input).rows,
                width,
                0.0,
                pg_sys::work_mem,
                limit,
            );
            let sorting = (sp.startup_cost - (*input).total_cost).max(0.0);
            let startup = (*input).total_cost + sorting * cost::factors().sort;
            let run = (sp.total_cost - sp.startup_cost) * cost::factors().sort;
            let c = cost::Cost { startup, total: startup + run, rows: (*input).rows };

            let id = report::next_id();
            let data = SortPlanData {
                report_id: id as i32,
                bound,
                keys: keys
                    .iter()
                    .map(|&(col, op, coll, nulls_first)| SortKeySpec {
                        col,
                        sortop: u32::from(op),
                        collation: u32::from(coll),
                        nulls_first,
                    })
                    .collect(),
            };
            let private = crate::pgutil::int_list(&data.encode());
            let cp = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
            let p = &mut (*cp).path;
            p.type_ = pg_sys::NodeTag::T_CustomPath;
            p.pathtype = pg_sys::NodeTag::T_CustomScan;
            p.parent = output_rel;
            p.pathtarget = (*input).pathtarget;
            p.parallel_safe = (*input).parallel_safe;
            p.rows = c.rows;
            p.disabled_nodes = sp.disabled_nodes;
            p.startup_cost = c.startup;
            p.total_cost = c.total;
            p.pathkeys = pathkeys;
            (*cp).custom_paths = pg_sys::lappend(std::ptr::null_mut(), input.cast());
            (*cp).custom_private = private;
            (*cp).methods = &PATH_METHODS.0;
            // VecSort projects the final target itself (the executor's
            // projection over its scan tuple, the child's row).
            (*cp).flags = pg_sys::CUSTOMPATH_SUPPORT_PROJECTION;

            // The final target, as create_ordered_paths projects (the
            // ordered relation's own reltarget is not set).
            let mut path = cp as *mut pg_sys::Path;
            let target = (*root).upper_targets[pg_sys::UpperRelationKind::UPPERREL_ORDERED as usize];
            if !target.is_null() && (*path).pathtarget != target {
                path = pg_sys::apply_projection_to_path(root, output_rel, path, target);
            }
            let mut details = vec![format!("keys: {}; input rows: {:.0}", keys.len(), (*input).rows)];
            if let Some(b) = bound {
                details.push(format!("top-N bound: {b}"));
            }
            let alt = alternative(&what, Verdict::Chosen, row_cost, Some((*path).total_cost), details);
            built.push((path, alt, id));
        }
        if built.is_empty() {
            return;
        }
        match mode {
            Mode::Off => {}
            Mode::Explain => {
                for (_, mut alt, _) in built {
                    alt.verdict = Verdict::NotChosen("explain mode".into());
                    report::record(move || alt);
                }
            }
            Mode::Auto | Mode::Force => {
                // Force: PostgreSQL's sorts count as disabled, unless ours
                // are disabled themselves (enable_sort = off).
                if mode == Mode::Force && built.iter().any(|(p, _, _)| (**p).disabled_nodes == 0) {
                    for path in list_ptrs::<pg_sys::Path>((*output_rel).pathlist) {
                        if sorts(path) {
                            (*path).disabled_nodes += 1;
                        }
                    }
                }
                for (path, alt, id) in built {
                    pg_sys::add_path(output_rel, path);
                    report::record_candidate(id, "another path was cheaper", move || alt);
                }
            }
        }
        if !(*input_rel).partial_pathlist.is_null() && (*output_rel).consider_parallel {
            report::record(move || {
                alternative(
                    "ORDER BY (parallel)",
                    Verdict::NotPossible("Gather Merge over vector sorts is not built".into()),
                    None,
                    None,
                    vec![],
                )
            });
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn plan_custom_path(
    _root: *mut pg_sys::PlannerInfo,
    _rel: *mut pg_sys::RelOptInfo,
    best_path: *mut pg_sys::CustomPath,
    tlist: *mut pg_sys::List,
    _clauses: *mut pg_sys::List,
    custom_plans: *mut pg_sys::List,
) -> *mut pg_sys::Plan {
    // SAFETY: called by create_plan with our CustomPath and its child's plan.
    unsafe {
        if let Some(id) = list_ptrs::<pg_sys::Integer>((*best_path).custom_private).next() {
            report::mark_chosen((*id).ival as u32);
        }
        let child = list_ptrs::<pg_sys::Plan>(custom_plans).next().expect("VecSort has a child plan");
        // The scan tuple is the child's row.
        let scan_tlist = super::child_row_tlist(child);
        let cscan = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomScan>()) as *mut pg_sys::CustomScan;
        (*cscan).scan.plan.type_ = pg_sys::NodeTag::T_CustomScan;
        (*cscan).scan.plan.targetlist = tlist;
        (*cscan).scan.scanrelid = 0;
        (*cscan).custom_scan_tlist = scan_tlist;
        (*cscan).custom_plans = custom_plans;
        (*cscan).custom_private = (*best_path).custom_private;
        (*cscan).flags = (*best_path).flags;
        (*cscan).methods = crate::exec::sort::scan_methods();
        cscan as *mut pg_sys::Plan
    }
}
