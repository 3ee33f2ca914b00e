//! VecAgg paths: `create_upper_paths_hook` (UPPERREL_GROUP_AGG) offers an
//! aggregation over a VecScan of the input relation, or over a
//! VecHashJoin when the input is a join (the join computes the keys and
//! arguments on its batches), and one over the input's cheapest row path
//! (a nested loop, an index scan: read a batch of slots at a time), next
//! to PostgreSQL's Agg paths, costed by `plan::cost`.
//!
//! Plain aggregation (no GROUP BY) and hashed aggregation (GROUP BY keys of
//! hashable types with PostgreSQL's default equality) with vectorized
//! transitions; every other case is refused with its reason, which
//! EXPLAIN (VEXEC) shows. Modes behave as for VecScan: explain records,
//! auto competes on cost, force disables PostgreSQL's Agg paths.
//!
//! The plan: a CustomScan with no relation of its own (scanrelid 0) whose
//! `custom_scan_tlist` lists the aggregates (Aggref nodes). PostgreSQL's
//! set_references then turns the target list and the HAVING qual into
//! expressions over that "scan tuple", which the executor fills with the
//! aggregates' results, so HAVING and expressions over aggregates
//! (`sum(a) + 1`) are evaluated by PostgreSQL. For a hashed aggregate the
//! group keys come first in `custom_scan_tlist`, so output expressions over
//! the keys (`k + 1`, `upper(k)`) are PostgreSQL's too. The child is a
//! VecScan, a VecHashJoin or a row plan whose target list is the keys,
//! then the aggregates' arguments.

use std::ffi::CStr;

use crate::pgutil::SyncPtr;
use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::agg::{KeyKind, MomentsFinal, Transition};
use vexec_core::plan_data::{AggPlanData, AggSpec};
use vexec_core::report::{Alternative, Verdict};

use super::cost;
use super::report;
use super::{projected, vector_node};
use crate::catalog::{
    aggregate_functions, distinct_arg_kind, key_kind, row_encoding, type_name, AggregateFunctions,
    MAX_FMGR_ARGS,
};
pub use crate::nodes::AggSplit;
use crate::pgutil::list_ptrs;
use crate::settings::{self, Mode};

mod transition;

pub use transition::transition_of;
use transition::*;

static PATH_METHODS: SyncPtr<pg_sys::CustomPathMethods> = SyncPtr(pg_sys::CustomPathMethods {
    CustomName: crate::nodes::AGG.as_ptr(),
    PlanCustomPath: Some(plan_custom_path),
    ReparameterizeCustomPathByChild: None,
});

/// create_upper_paths_hook's part for VecAgg (see `plan::hooks`).
pub(crate) unsafe fn create_upper_paths(
    root: *mut pg_sys::PlannerInfo,
    stage: pg_sys::UpperRelationKind::Type,
    input_rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    extra: *mut std::ffi::c_void,
) {
    // SAFETY: called from create_upper_paths_hook (plan/hooks.rs) on the backend's main thread with
    // the planner's live root and rels; extra is a GroupPathExtraData at UPPERREL_GROUP_AGG.
    unsafe {
        let mode = settings::MODE.get();
        if mode != Mode::Off && stage == pg_sys::UpperRelationKind::UPPERREL_GROUP_AGG && !extra.is_null() {
            consider(root, input_rel, output_rel, extra as *mut pg_sys::GroupPathExtraData, mode);
        }
    }
}

/// custom_private of a VecAgg path: its report id, HAVING, group keys,
/// their kinds, and which part of the aggregation it does.
unsafe fn agg_private(
    id: u32,
    having: *mut pg_sys::Node,
    key_list: *mut pg_sys::List,
    kind_list: *mut pg_sys::List,
    split: AggSplit,
) -> *mut pg_sys::List {
    // SAFETY: builds a List in the planner's memory context from live nodes (caller's contract).
    unsafe {
        let mut l = pg_sys::lappend(std::ptr::null_mut(), pg_sys::makeInteger(id as i32).cast());
        l = pg_sys::lappend(l, having.cast());
        l = pg_sys::lappend(l, key_list.cast());
        l = pg_sys::lappend(l, kind_list.cast());
        pg_sys::lappend(l, pg_sys::makeInteger(split as i32).cast())
    }
}

/// A VecAgg CustomPath over `child`; `workers`: a partial path run by that
/// many parallel workers (and the leader) under a Gather.
unsafe fn agg_path(
    parent: *mut pg_sys::RelOptInfo,
    target: *mut pg_sys::PathTarget,
    c: &cost::Cost,
    disabled_nodes: i32,
    child: *mut pg_sys::Path,
    private: *mut pg_sys::List,
    workers: Option<i32>,
) -> *mut pg_sys::CustomPath {
    // SAFETY: the CustomPath is palloc'd in the planner's context; rel, target and subpath are live
    // planner data (caller's contract).
    unsafe {
        let cp = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
        let p = &mut (*cp).path;
        p.type_ = pg_sys::NodeTag::T_CustomPath;
        p.pathtype = pg_sys::NodeTag::T_CustomScan;
        p.parent = parent;
        p.pathtarget = target;
        p.parallel_safe = workers.is_some();
        p.parallel_workers = workers.unwrap_or(0);
        p.rows = c.rows;
        p.disabled_nodes = disabled_nodes;
        p.startup_cost = c.startup;
        p.total_cost = c.total;
        (*cp).custom_paths = pg_sys::lappend(std::ptr::null_mut(), child.cast());
        (*cp).custom_private = private;
        (*cp).methods = &PATH_METHODS.0;
        cp
    }
}

/// Whether `sgc` compares values of `typid` with the type's default
/// equality, the one the group table implements.
unsafe fn default_equality(typid: pg_sys::Oid, sgc: *const pg_sys::SortGroupClause) -> bool {
    // SAFETY: typid is a type the planner resolved and sgc a live SortGroupClause; the type cache
    // lookup may ERROR on the main thread.
    unsafe { (*pg_sys::lookup_type_cache(typid, pg_sys::TYPECACHE_EQ_OPR as i32)).eq_opr == (*sgc).eqop }
}

/// The GROUP BY keys (expressions and kinds; none for a plain aggregate),
/// or why the group table cannot take them.
/// `written`: the GROUP BY as written, instead of PostgreSQL's processed
/// list (which leaves out columns a primary key determines).
unsafe fn group_keys(
    root: *mut pg_sys::PlannerInfo,
    written: bool,
) -> Result<Vec<(*mut pg_sys::Node, KeyKind)>, String> {
    // SAFETY: root is the live PlannerInfo of the query being planned (caller's contract).
    unsafe {
        if (*(*root).parse).groupClause.is_null() {
            return Ok(vec![]);
        }
        let clauses = if written { (*(*root).parse).groupClause } else { (*root).processed_groupClause };
        if clauses.is_null() {
            // GROUP BY of constants only: one group, or none for no rows.
            return Err("GROUP BY without a column key".into());
        }
        let mut keys = Vec::new();
        for sgc in list_ptrs::<pg_sys::SortGroupClause>(clauses) {
            let expr = pg_sys::get_sortgroupclause_expr(sgc, (*root).processed_tlist);
            let typid = pg_sys::exprType(expr);
            if !(*sgc).hashable {
                return Err(format!("group key of type {} is not hashable", type_name(typid)));
            }
            let kind = key_kind(typid, pg_sys::exprCollation(expr))?;
            if !default_equality(typid, sgc) {
                return Err(format!("group key of type {} with a non-default equality", type_name(typid)));
            }
            if pg_sys::contain_subplans(expr) {
                return Err("a subquery in a group key".into());
            }
            keys.push((expr, kind));
        }
        Ok(keys)
    }
}

/// What [`collect_ungrouped`] walks with: the keys, and the Vars found
/// outside them and outside aggregates.
struct Ungrouped {
    keys: Vec<*mut pg_sys::Node>,
    found: Vec<*mut pg_sys::Node>,
    /// A placeholder or GROUPING() outside the keys (not a plain column).
    other: bool,
}

/// Collect into `ctx` (an [`Ungrouped`]) the columns `node` reads outside
/// group keys and aggregates.
#[pg_guard]
unsafe extern "C-unwind" fn collect_ungrouped(node: *mut pg_sys::Node, ctx: *mut std::ffi::c_void) -> bool {
    // SAFETY: called by expression_tree_walker with live nodes; ctx is the Ungrouped that
    // ungrouped() passes.
    unsafe {
        if node.is_null() {
            return false;
        }
        let u = &mut *(ctx as *mut Ungrouped);
        if u.keys.iter().any(|&k| pg_sys::equal(node.cast(), k.cast())) {
            return false;
        }
        match (*node).type_ {
            pg_sys::NodeTag::T_Aggref => false,
            pg_sys::NodeTag::T_Var => {
                if !u.found.iter().any(|&f| pg_sys::equal(f.cast(), node.cast())) {
                    u.found.push(node);
                }
                false
            }
            pg_sys::NodeTag::T_PlaceHolderVar | pg_sys::NodeTag::T_GroupingFunc => {
                u.other = true;
                false
            }
            _ => pg_sys::expression_tree_walker_impl(node, Some(collect_ungrouped), ctx),
        }
    }
}

/// What the target and HAVING read outside `keys` and aggregates.
unsafe fn ungrouped(
    keys: &[(*mut pg_sys::Node, KeyKind)],
    target: *mut pg_sys::List,
    having: *mut pg_sys::Node,
) -> Ungrouped {
    // SAFETY: keys, target and having are live expression trees; u outlives the walks.
    unsafe {
        let mut u = Ungrouped { keys: keys.iter().map(|k| k.0).collect(), found: Vec::new(), other: false };
        let ctx = &mut u as *mut Ungrouped as *mut std::ffi::c_void;
        collect_ungrouped(target.cast(), ctx);
        collect_ungrouped(having, ctx);
        u
    }
}

impl Ungrouped {
    /// Whether anything is read outside the keys and aggregates.
    fn any(&self) -> bool {
        self.other || !self.found.is_empty()
    }
}

/// The columns the output reads outside `keys` and aggregates, when all
/// are plain columns of key types. PostgreSQL accepts such a column only
/// when a primary key among the GROUP BY determines it, so every row of a
/// group has the same value: grouping by it too gives the same groups.
unsafe fn dependent_columns(
    keys: &[(*mut pg_sys::Node, KeyKind)],
    target: *mut pg_sys::List,
    having: *mut pg_sys::Node,
) -> Option<Vec<(*mut pg_sys::Node, KeyKind)>> {
    // SAFETY: as ungrouped().
    unsafe {
        let u = ungrouped(keys, target, having);
        if u.other || u.found.is_empty() {
            return None;
        }
        u.found
            .iter()
            .map(|&v| {
                let var = v as *mut pg_sys::Var;
                ((*var).varlevelsup == 0).then_some(())?;
                key_kind((*var).vartype, (*var).varcollid).ok().map(|k| (v, k))
            })
            .collect()
    }
}

/// The aggregates of the output target and HAVING, each once, in order.
unsafe fn aggregates_of(
    target: *mut pg_sys::List,
    having: *mut pg_sys::Node,
) -> (Vec<*mut pg_sys::Aggref>, bool) {
    // SAFETY: target and having are live expression trees (caller's contract).
    unsafe {
        let mut aggs: Vec<*mut pg_sys::Aggref> = Vec::new();
        let mut bare_vars = false;
        // Placeholders (grouping sets wrap keys in them) and window functions
        // are looked into; a Var found in them counts as outside aggregates.
        let flags = (pg_sys::PVC_INCLUDE_AGGREGATES
            | pg_sys::PVC_RECURSE_WINDOWFUNCS
            | pg_sys::PVC_RECURSE_PLACEHOLDERS) as i32;
        let mut nodes =
            list_ptrs::<pg_sys::Node>(pg_sys::pull_var_clause(target.cast(), flags)).collect::<Vec<_>>();
        nodes.extend(list_ptrs::<pg_sys::Node>(pg_sys::pull_var_clause(having, flags)));
        for n in nodes {
            if (*n).type_ == pg_sys::NodeTag::T_Aggref {
                let a = n as *mut pg_sys::Aggref;
                if !aggs.iter().any(|&b| pg_sys::equal(a.cast(), b.cast())) {
                    aggs.push(a);
                }
            } else {
                bare_vars = true;
            }
        }
        (aggs, bare_vars)
    }
}

/// Every expression an aggregate reads.
unsafe fn agg_args(a: *mut pg_sys::Aggref) -> Vec<*mut pg_sys::Node> {
    // SAFETY: a is a live Aggref (caller's contract).
    unsafe { list_ptrs::<pg_sys::TargetEntry>((*a).args).map(|te| (*te).expr as *mut pg_sys::Node).collect() }
}

unsafe fn refusal(
    root: *mut pg_sys::PlannerInfo,
    input_rel: *mut pg_sys::RelOptInfo,
    extra: *mut pg_sys::GroupPathExtraData,
    target: *mut pg_sys::List,
    aggs: &[*mut pg_sys::Aggref],
    keys: &Result<Vec<(*mut pg_sys::Node, KeyKind)>, String>,
) -> Option<String> {
    // SAFETY: root, rels and aggregates are the live planner data of the query (caller's contract).
    unsafe {
        let parse = (*root).parse;
        if !settings::ENABLE_AGG.get() {
            return Some("vexec.enable_agg is off".into());
        }
        if !(*parse).groupingSets.is_null() {
            return Some("grouping sets".into());
        }
        if (*parse).hasTargetSRFs {
            return Some("set-returning functions in the target list".into());
        }
        let keys = match keys {
            Ok(k) => k,
            Err(why) => return Some(why.clone()),
        };
        if ungrouped(keys, target, (*extra).havingQual).any() {
            return Some("columns outside aggregates and group keys".into());
        }
        let mut raising = false;
        for &a in aggs {
            let t = match transition_of(a) {
                Ok(t) => t,
                Err(why) => return Some(why),
            };
            raising |= t.can_raise();
            // PostgreSQL evaluates an aggregate's argument only for the rows
            // its FILTER lets through (`sum(1 / x) FILTER (WHERE x <> 0)`);
            // the VecScan below computes arguments for every row, so only
            // arguments that cannot fail go with a FILTER.
            let filter = (*a).aggfilter as *mut pg_sys::Node;
            if !filter.is_null() {
                if agg_args(a)
                    .iter()
                    .any(|&e| !matches!((*e).type_, pg_sys::NodeTag::T_Var | pg_sys::NodeTag::T_Const))
                {
                    return Some("FILTER on an aggregate of a computed argument".into());
                }
                if pg_sys::contain_subplans(filter) {
                    return Some("a subquery in a FILTER".into());
                }
            }
        }
        // A float transition can raise an overflow; PostgreSQL raises it before
        // an error of a later row's qual or argument, which a batch evaluated
        // ahead cannot promise. Such aggregates need inputs that cannot fail.
        if raising {
            let plain_args = aggs.iter().all(|&a| {
                agg_args(a)
                    .iter()
                    .all(|&e| matches!((*e).type_, pg_sys::NodeTag::T_Var | pg_sys::NodeTag::T_Const))
            });
            let filtered = aggs.iter().any(|&a| !(*a).aggfilter.is_null());
            let base = (*input_rel).reloptkind == pg_sys::RelOptKind::RELOPT_BASEREL;
            if !plain_args || filtered || !base || !(*input_rel).baserestrictinfo.is_null() {
                return Some("an aggregate that can raise an error (float sum/avg/variance, a function through fmgr) over a filtered, joined or computed input".into());
            }
        }
        None
    }
}

unsafe fn consider(
    root: *mut pg_sys::PlannerInfo,
    input_rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    extra: *mut pg_sys::GroupPathExtraData,
    mode: Mode,
) {
    // SAFETY: the planner's live data at UPPERREL_GROUP_AGG (caller's contract); paths are made in
    // the planner's context.
    unsafe {
        let target = (*output_rel).reltarget;
        let having = (*extra).havingQual;
        let (aggs, _) = aggregates_of((*target).exprs, having);
        let mut keys = group_keys(root, false);
        // Columns PostgreSQL left out of the keys because a primary key in
        // them determines them (TPC-H Q10, Q18) are still output: group by
        // the keys as written then (the same groups).
        if let Ok(k) = &keys {
            if !k.is_empty() && ungrouped(k, (*target).exprs, having).any() {
                if let Ok(all) = group_keys(root, true) {
                    keys = Ok(all);
                }
            }
        }
        // Columns a primary key in the GROUP BY determines but the GROUP BY
        // does not name: grouped on as well (the same groups).
        if let Ok(k) = &mut keys {
            if !k.is_empty() {
                if let Some(dependent) = dependent_columns(k, (*target).exprs, having) {
                    k.extend(dependent);
                }
            }
        }
        let kind = if (*(*root).parse).groupClause.is_null() { "plain" } else { "hashed" };
        if let Some(why) = refusal(root, input_rel, extra, (*target).exprs, &aggs, &keys) {
            report::record(move || alternative(kind, Verdict::NotPossible(why), None, None, vec![]));
            return;
        }
        let keys = keys.unwrap_or_default();

        // What the child outputs: the keys, then the aggregates' arguments
        // and FILTERs (each once).
        let args = pg_sys::create_empty_pathtarget();
        let mut key_list: *mut pg_sys::List = std::ptr::null_mut();
        let mut kind_list: *mut pg_sys::List = std::ptr::null_mut();
        let mut columns: Vec<*mut pg_sys::Node> = Vec::new();
        for &(e, k) in &keys {
            columns.push(e);
            pg_sys::add_column_to_pathtarget(args, e.cast(), 0);
            key_list = pg_sys::lappend(key_list, e.cast());
            kind_list = pg_sys::lappend(kind_list, pg_sys::makeInteger(k.code()).cast());
        }
        let filters = aggs.iter().map(|&a| (*a).aggfilter as *mut pg_sys::Node).filter(|f| !f.is_null());
        for e in aggs.iter().flat_map(|&a| agg_args(a)).chain(filters) {
            if !columns.iter().any(|&x| pg_sys::equal(x.cast(), e.cast())) {
                columns.push(e);
                pg_sys::add_column_to_pathtarget(args, e.cast(), 0);
            }
        }
        pg_sys::set_pathtarget_cost_width(root, args);
        let row_cost =
            list_ptrs::<pg_sys::Path>((*output_rel).pathlist).map(|p| (*p).total_cost).reduce(f64::min);
        // PostgreSQL's estimate of the groups, as its own paths carry it.
        let groups = if keys.is_empty() {
            1.0
        } else {
            list_ptrs::<pg_sys::Path>((*output_rel).pathlist)
                .map(|p| (*p).rows)
                .next()
                .unwrap_or(((*input_rel).rows / 10.0).max(1.0))
        };

        // The children: a copy of the VecScan (or VecHashJoin) path that
        // outputs `args`, and the input's cheapest row path projecting them
        // (read a batch of slots at a time), unless that is the vector path:
        // aggregating by kernels pays over a nested loop or an index scan
        // too, where the vector inputs lost (TPC-H Q11 over its index
        // nested loop).
        let mut children: Vec<(*mut pg_sys::Path, bool)> = Vec::new();
        if let Some(scan) = input_path(input_rel) {
            let child = pg_sys::palloc(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
            std::ptr::copy_nonoverlapping(scan, child, 1);
            (*child).path.pathtarget = args;
            children.push((child.cast(), true));
        }
        match row_input_path(input_rel, mode) {
            Ok(Some(row)) => {
                children.push((pg_sys::create_projection_path(root, input_rel, row, args).cast(), false))
            }
            Ok(None) if children.is_empty() => {
                let why = "the input is not a vector scan or join, and its cheapest path is a vector node, a Gather or parameterized";
                report::record(move || {
                    alternative(kind, Verdict::NotPossible(why.into()), None, None, vec![])
                });
                return;
            }
            Err(why) if children.is_empty() => {
                let why = format!("the input is not a vector scan or join, and has {why}");
                report::record(move || alternative(kind, Verdict::NotPossible(why), None, None, vec![]));
                return;
            }
            _ => {}
        }

        for (child, vector_child) in children {
            let child_rows = (*child).rows;
            let c = if keys.is_empty() {
                cost::plain_agg(&*child, aggs.len(), vector_child)
            } else {
                cost::hashed_agg(&*child, aggs.len(), keys.len(), groups, (*target).width, vector_child)
            };

            let id = report::next_id();
            // A hashed VecAgg is a hash aggregate: enable_hashagg = off disables it
            // as it disables HashAggregate (counted, not refused).
            let disabled = (*child).disabled_nodes + (!keys.is_empty() && !pg_sys::enable_hashagg) as i32;
            let private = agg_private(id, having, key_list, kind_list, AggSplit::Serial);
            let cp = agg_path(output_rel, target, &c, disabled, child, private, None);
            let p = &mut (*cp).path;

            // (Described only if the report records alternatives.)
            let alt = |verdict| {
                let nfmgr =
                    aggs.iter().filter(|&&a| matches!(transition_of(a), Ok(Transition::Fmgr { .. }))).count();
                let mut details = vec![format!(
                    "aggregates: {} vector, {nfmgr} fmgr; input rows: {child_rows:.0}",
                    aggs.len() - nfmgr
                )];
                if !keys.is_empty() {
                    details.push(format!("group keys: {}; estimated groups: {:.0}", keys.len(), c.rows));
                }
                let what = if vector_child { kind.to_string() } else { format!("{kind} over a row input") };
                if !vector_child {
                    details.push(format!("input: {}", node_name(child)));
                }
                alternative(&what, verdict, row_cost, Some(c.total), details)
            };
            match mode {
                Mode::Off => {}
                Mode::Explain => report::record(|| alt(Verdict::NotChosen("explain mode".into()))),
                Mode::Auto | Mode::Force => {
                    // Force: PostgreSQL's Agg paths count as disabled, unless the
                    // vector path is disabled itself (enable_seqscan = off disables
                    // its scan), when the two compete on cost as usual.
                    if mode == Mode::Force && p.disabled_nodes == 0 {
                        for path in list_ptrs::<pg_sys::Path>((*output_rel).pathlist) {
                            if reads_a_scan(path) {
                                (*path).disabled_nodes += 1;
                            }
                        }
                    }
                    pg_sys::add_path(output_rel, cp.cast());
                    report::record_candidate(id, "another path was cheaper", || alt(Verdict::Chosen));
                    if !vector_child {
                        continue;
                    }
                    let parallel =
                        Parallel { keys: &keys, aggs: &aggs, columns: &columns, groups, key_list, kind_list };
                    match consider_parallel(root, input_rel, output_rel, extra, &parallel, args) {
                        Ok(None) => {}
                        Ok(Some(alt)) => {
                            report::record_candidate(alt.1, "another path was cheaper", move || alt.0)
                        }
                        Err(why) => report::record(move || {
                            alternative(
                                &format!("{kind} (parallel)"),
                                Verdict::NotPossible(why),
                                None,
                                None,
                                vec![],
                            )
                        }),
                    }
                }
            }
        }
    }
}

/// The input's cheapest row path for a VecAgg over a row input: its
/// cheapest total path, unless it has parameters, is a vector node (the
/// vector child covers it) or a Gather (parallel plans aggregate below it,
/// with a Partial VecAgg). Outside force mode, small
/// inputs stay PostgreSQL's, as small scans do (`vexec.min_rows`).
unsafe fn row_input_path(
    rel: *mut pg_sys::RelOptInfo,
    mode: Mode,
) -> Result<Option<*mut pg_sys::Path>, String> {
    // SAFETY: rel is a live RelOptInfo (caller's contract).
    unsafe {
        use pg_sys::NodeTag::*;
        let p = (*rel).cheapest_total_path;
        if p.is_null()
            || !(*p).param_info.is_null()
            || vector_node(p).is_some()
            || matches!((*projected(p)).pathtype, T_Gather | T_GatherMerge)
        {
            return Ok(None);
        }
        let min_rows = settings::MIN_ROWS.get() as f64;
        if mode != Mode::Force && (*p).rows < min_rows {
            return Err(format!("fewer than vexec.min_rows ({min_rows:.0}) rows"));
        }
        Ok(Some(p))
    }
}

/// A path's node, as EXPLAIN names it (the common ones).
unsafe fn node_name(path: *mut pg_sys::Path) -> &'static str {
    // SAFETY: path is a live Path (caller's contract).
    unsafe {
        let p = projected(path);
        use pg_sys::NodeTag::*;
        match (*p).pathtype {
            T_SeqScan => "Seq Scan",
            T_SampleScan => "Sample Scan",
            T_IndexScan => "Index Scan",
            T_IndexOnlyScan => "Index Only Scan",
            T_BitmapHeapScan => "Bitmap Heap Scan",
            T_NestLoop => "Nested Loop",
            T_MergeJoin => "Merge Join",
            T_HashJoin => "Hash Join",
            T_SubqueryScan => "Subquery Scan",
            T_FunctionScan => "Function Scan",
            T_ValuesScan => "Values Scan",
            T_CteScan => "CTE Scan",
            T_TidScan => "Tid Scan",
            T_TidRangeScan => "Tid Range Scan",
            T_ForeignScan => "Foreign Scan",
            T_Material => "Materialize",
            T_Memoize => "Memoize",
            T_Sort => "Sort",
            T_IncrementalSort => "Incremental Sort",
            T_Unique => "Unique",
            T_Agg => "Aggregate",
            T_WindowAgg => "WindowAgg",
            T_SetOp => "SetOp",
            T_Limit => "Limit",
            T_Append => "Append",
            T_MergeAppend => "Merge Append",
            T_Result => "Result",
            _ => "another row node",
        }
    }
}

/// The vector path VecAgg reads: the VecScan of a base relation, the
/// cheapest VecHashJoin of a join relation.
unsafe fn input_path(rel: *mut pg_sys::RelOptInfo) -> Option<*mut pg_sys::CustomPath> {
    // SAFETY: rel is a live RelOptInfo (caller's contract).
    unsafe {
        match (*rel).reloptkind {
            pg_sys::RelOptKind::RELOPT_BASEREL => super::scan::vector_scan_of(rel, false),
            pg_sys::RelOptKind::RELOPT_JOINREL => report::join_path_of(rel, false),
            _ => None,
        }
    }
}

/// What the serial VecAgg path was built from, for its parallel twin.
struct Parallel<'a> {
    keys: &'a [(*mut pg_sys::Node, KeyKind)],
    aggs: &'a [*mut pg_sys::Aggref],
    /// The child's output: the keys, then the aggregates' arguments and FILTERs.
    columns: &'a [*mut pg_sys::Node],
    groups: f64,
    key_list: *mut pg_sys::List,
    kind_list: *mut pg_sys::List,
}

/// Parallel aggregation: a Finalize VecAgg over a Gather over a Partial
/// VecAgg over a parallel VecScan. PostgreSQL calls no hook for partial
/// aggregation, so the three paths are built here: each worker (and the
/// leader) aggregates its share of the pages into partial states (bytea
/// columns, one per aggregate, exprs of the partial target are the
/// aggregates marked AGGSPLIT_INITIAL_SERIAL as PostgreSQL marks its own),
/// and the Finalize VecAgg combines them by group. Returns the alternative
/// to record with its id, None when the input has no parallel scan (so no
/// parallel plan to compare with), or why there is none.
unsafe fn consider_parallel(
    root: *mut pg_sys::PlannerInfo,
    input_rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    extra: *mut pg_sys::GroupPathExtraData,
    p: &Parallel<'_>,
    child_target: *mut pg_sys::PathTarget,
) -> Result<Option<(Alternative, u32)>, String> {
    // SAFETY: the planner's live data (caller's contract).
    unsafe {
        let partial_input = match (*input_rel).reloptkind {
            pg_sys::RelOptKind::RELOPT_BASEREL => super::scan::vector_scan_of(input_rel, true),
            pg_sys::RelOptKind::RELOPT_JOINREL => report::join_path_of(input_rel, true),
            _ => None,
        };
        let Some(pscan) = partial_input else { return Ok(None) };
        if !(*output_rel).consider_parallel {
            return Err("the query is not parallel safe".into());
        }
        if let Some(why) = p.aggs.iter().find_map(|&a| partial_state_of(a).err()) {
            return Err(why);
        }
        if p.columns.iter().any(|&e| !pg_sys::is_parallel_safe(root, e)) {
            return Err("a group key or argument is not parallel safe".into());
        }
        let workers = (*pscan).path.parallel_workers;

        // Partial VecAgg over a copy of the parallel VecScan.
        let child = pg_sys::palloc(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
        std::ptr::copy_nonoverlapping(pscan, child, 1);
        (*child).path.pathtarget = child_target;
        let ptarget = pg_sys::create_empty_pathtarget();
        for &(e, _) in p.keys {
            pg_sys::add_column_to_pathtarget(ptarget, e.cast(), 0);
        }
        for &a in p.aggs {
            let pa = pg_sys::copyObjectImpl(a.cast()) as *mut pg_sys::Aggref;
            (*pa).aggsplit = pg_sys::AggSplit::AGGSPLIT_INITIAL_SERIAL;
            (*pa).aggtype = pg_sys::BYTEAOID;
            pg_sys::add_column_to_pathtarget(ptarget, pa.cast(), 0);
        }
        pg_sys::set_pathtarget_cost_width(root, ptarget);
        let naggs = p.aggs.len();
        let child_rows = (*child).path.rows;
        let pc = if p.keys.is_empty() {
            cost::plain_agg(&(*child).path, naggs, true)
        } else {
            let groups = p.groups.min(child_rows).max(1.0);
            cost::hashed_agg(&(*child).path, naggs, p.keys.len(), groups, (*ptarget).width, true)
        };
        let id = report::next_id();
        let disabled = (*child).path.disabled_nodes + (!p.keys.is_empty() && !pg_sys::enable_hashagg) as i32;
        let private = agg_private(id, std::ptr::null_mut(), p.key_list, p.kind_list, AggSplit::Partial);
        let partial = agg_path(output_rel, ptarget, &pc, disabled, child.cast(), private, Some(workers));

        // Gather the partial groups of every participant.
        let mut gathered = pc.rows * cost::parallel_divisor(workers);
        let gather = pg_sys::create_gather_path(
            root,
            output_rel,
            partial.cast(),
            ptarget,
            std::ptr::null_mut(),
            &mut gathered,
        );

        // Finalize VecAgg: combine the partial states, one per participant and group.
        let target = (*output_rel).reltarget;
        let op = pg_sys::cpu_operator_cost;
        let startup = (*gather).path.total_cost
            + gathered * (p.keys.len() as f64 * op * cost::factors().group_key + naggs as f64 * op);
        let groups = if p.keys.is_empty() { 1.0 } else { p.groups };
        let fc = cost::Cost { startup, total: startup + groups * pg_sys::cpu_tuple_cost, rows: groups };
        let private = agg_private(id, (*extra).havingQual, p.key_list, p.kind_list, AggSplit::Finalize);
        let fin =
            agg_path(output_rel, target, &fc, (*gather).path.disabled_nodes, gather.cast(), private, None);
        let total = fc.total;
        pg_sys::add_path(output_rel, fin.cast());

        let kind = if p.keys.is_empty() { "plain (parallel)" } else { "hashed (parallel)" };
        let nfmgr =
            p.aggs.iter().filter(|&&a| matches!(transition_of(a), Ok(Transition::Fmgr { .. }))).count();
        let nvector = naggs - nfmgr;
        let details = vec![format!(
            "aggregates: {nvector} vector, {nfmgr} fmgr; {workers} workers planned; partial groups gathered: {gathered:.0}"
        )];
        Ok(Some((alternative(kind, Verdict::Chosen, None, Some(total), details), id)))
    }
}

/// Whether an Agg path reads a sequential or vector scan or a hash join
/// (one a VecAgg replaces in force mode; an Agg over an index scan, a
/// nested loop or a merge join keeps competing, as they do against
/// VecScan and VecHashJoin).
unsafe fn reads_a_scan(path: *mut pg_sys::Path) -> bool {
    // SAFETY: path is a live Path; each subpath read is one of its children.
    unsafe {
        let mut sub = match (*path).type_ {
            pg_sys::NodeTag::T_AggPath => (*(path as *mut pg_sys::AggPath)).subpath,
            pg_sys::NodeTag::T_GroupPath => (*(path as *mut pg_sys::GroupPath)).subpath,
            _ => return false,
        };
        // Down through the single-input nodes PostgreSQL puts between an
        // Agg and its scan (a sort for GroupAggregate, Gather and a partial
        // Agg for parallel aggregation).
        loop {
            sub = match (*sub).type_ {
                pg_sys::NodeTag::T_ProjectionPath => (*(sub as *mut pg_sys::ProjectionPath)).subpath,
                pg_sys::NodeTag::T_SortPath | pg_sys::NodeTag::T_IncrementalSortPath => {
                    (*(sub as *mut pg_sys::SortPath)).subpath
                }
                pg_sys::NodeTag::T_GatherPath => (*(sub as *mut pg_sys::GatherPath)).subpath,
                pg_sys::NodeTag::T_GatherMergePath => (*(sub as *mut pg_sys::GatherMergePath)).subpath,
                pg_sys::NodeTag::T_AggPath => (*(sub as *mut pg_sys::AggPath)).subpath,
                _ => break,
            };
        }
        // (Hash joins: the joins a VecHashJoin replaces in force mode.)
        matches!(
            (*sub).pathtype,
            pg_sys::NodeTag::T_SeqScan | pg_sys::NodeTag::T_CustomScan | pg_sys::NodeTag::T_HashJoin
        )
    }
}

fn alternative(
    kind: &str,
    verdict: Verdict,
    row_cost: Option<f64>,
    vector_cost: Option<f64>,
    details: Vec<String>,
) -> Alternative {
    Alternative { node: "VecAgg".into(), target: kind.into(), verdict, row_cost, vector_cost, details }
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
    // SAFETY: called by create_plan with our CustomPath (custom_private written by agg_path) and
    // its children's plans.
    unsafe {
        let mut private = list_ptrs::<pg_sys::Node>((*best_path).custom_private);
        let id = private.next().map_or(0, |n| (*(n as *mut pg_sys::Integer)).ival);
        let having = private.next().unwrap_or(std::ptr::null_mut());
        let keys: Vec<*mut pg_sys::Node> =
            private.next().map_or(vec![], |l| list_ptrs::<pg_sys::Node>(l.cast()).collect());
        let kinds: Vec<i32> = private
            .next()
            .map_or(vec![], |l| list_ptrs::<pg_sys::Integer>(l.cast()).map(|i| (*i).ival).collect());
        let split = private.next().map_or(0, |n| (*(n as *mut pg_sys::Integer)).ival);
        let split = AggSplit::from_code(split).expect("a VecAgg path's split");
        report::mark_chosen(id as u32);
        let child = list_ptrs::<pg_sys::Plan>(custom_plans).next().expect("VecAgg has a child plan");
        let child_exprs: Vec<*mut pg_sys::Node> =
            list_ptrs::<pg_sys::TargetEntry>((*child).targetlist).map(|te| (*te).expr.cast()).collect();

        let (aggs, _) = aggregates_of(tlist, having);
        // custom_scan_tlist: the keys (child columns 0..), then the
        // aggregates; custom_private: AggPlanData.
        let mut scan_tlist: *mut pg_sys::List = std::ptr::null_mut();
        let mut data = AggPlanData {
            report_id: id,
            split,
            key_kinds: kinds
                .iter()
                .map(|&c| KeyKind::from_code(c).expect("a VecAgg path's key kind"))
                .collect(),
            aggs: Vec::new(),
        };
        for (i, &k) in keys.iter().enumerate() {
            let te = pg_sys::makeTargetEntry(k.cast(), (i + 1) as i16, std::ptr::null_mut(), false);
            scan_tlist = pg_sys::lappend(scan_tlist, te.cast());
        }
        for (i, &a) in aggs.iter().enumerate() {
            let te =
                pg_sys::makeTargetEntry(a.cast(), (keys.len() + i + 1) as i16, std::ptr::null_mut(), false);
            scan_tlist = pg_sys::lappend(scan_tlist, te.cast());
            let transition =
                transition_of(a).unwrap_or_else(|why| panic!("VecAgg planned without a transition: {why}"));
            let column_of = |e: *mut pg_sys::Node| {
                child_exprs.iter().position(|&x| pg_sys::equal(x.cast(), e.cast())).expect("input in child")
            };
            // A Finalize VecAgg reads the partial state of aggregate i in
            // the Gather's column nkeys + i; the FILTER was applied below.
            let (args, filter) = if split == AggSplit::Finalize {
                (vec![keys.len() + i], None)
            } else {
                let args = agg_args(a).into_iter().map(column_of).collect();
                let filter =
                    Some((*a).aggfilter as *mut pg_sys::Node).filter(|f| !f.is_null()).map(column_of);
                (args, filter)
            };
            data.aggs.push(AggSpec { transition, filter, args });
        }
        let spec = crate::pgutil::int_list(&data.encode());
        let cscan = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomScan>()) as *mut pg_sys::CustomScan;
        (*cscan).scan.plan.type_ = pg_sys::NodeTag::T_CustomScan;
        (*cscan).scan.plan.targetlist = tlist;
        (*cscan).scan.plan.qual = having as *mut pg_sys::List;
        (*cscan).scan.scanrelid = 0;
        (*cscan).custom_scan_tlist = scan_tlist;
        (*cscan).custom_plans = custom_plans;
        (*cscan).custom_private = spec;
        (*cscan).flags = (*best_path).flags;
        (*cscan).methods = crate::exec::agg::scan_methods(split);
        cscan as *mut pg_sys::Plan
    }
}
