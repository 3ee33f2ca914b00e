//! VecHashJoin paths: `set_join_pathlist_hook` offers a hash join on
//! batches for every join PostgreSQL could hash-join (equality clauses with
//! a hash operator), next to its own join paths, costed like a HashJoin with
//! hashing and probing at vector price.
//!
//! Join types: inner, left, full, right, semi and anti (the other forms
//! PostgreSQL tries, unique-ified and right semi/anti joins, are its own).
//! Hash keys are columns of the two inputs (a key that is an expression is
//! refused) of types the group table compares exactly (integers, dates,
//! timestamps, floats, text under deterministic collations, bytea, bpchar);
//! integer keys of different widths compare by value. The remaining clauses
//! are the join filter (they decide what matches) and, for outer joins, the
//! filter applied after the join, both evaluated by PostgreSQL on the joined
//! row.
//!
//! The inputs are the inputs' cheapest paths, a VecScan where the input is a
//! base relation that has one (its batches are read directly). Modes as for
//! the other nodes: explain records, auto competes on cost, force counts
//! PostgreSQL's hash joins as disabled (nested loops and merge joins still
//! compete, as index scans do with VecScan).

use std::borrow::Cow;
use std::ffi::CStr;

use crate::pgutil::{list_ptrs, SyncPtr};
use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::agg::KeyKind;
use vexec_core::report::{Alternative, Verdict};

use super::cost;
use super::report;
use super::{enabled, scan, vector_node};
use crate::catalog::{key_kind, type_name};
use crate::settings::{self, Mode};
use vexec_core::plan_data::{JoinKeySpec, JoinPlanData};

static PATH_METHODS: SyncPtr<pg_sys::CustomPathMethods> = SyncPtr(pg_sys::CustomPathMethods {
    CustomName: crate::nodes::HASH_JOIN.as_ptr(),
    PlanCustomPath: Some(plan_custom_path),
    ReparameterizeCustomPathByChild: None,
});

/// set_join_pathlist_hook's part for VecHashJoin (see `plan::hooks`).
pub(super) unsafe fn join_pathlist(
    root: *mut pg_sys::PlannerInfo,
    joinrel: *mut pg_sys::RelOptInfo,
    outerrel: *mut pg_sys::RelOptInfo,
    innerrel: *mut pg_sys::RelOptInfo,
    jointype: pg_sys::JoinType::Type,
    extra: *mut pg_sys::JoinPathExtraData,
) {
    // SAFETY: called from set_join_pathlist_hook (plan/hooks.rs) on the backend's main thread with
    // the planner's live root, rels and extra data.
    unsafe {
        let mode = settings::MODE.get();
        if mode != Mode::Off {
            consider(root, joinrel, outerrel, innerrel, jointype, extra, mode);
        }
    }
}

pub fn jointype_name(jt: pg_sys::JoinType::Type) -> &'static str {
    use pg_sys::JoinType::*;
    match jt {
        JOIN_INNER => "Inner",
        JOIN_LEFT => "Left",
        JOIN_FULL => "Full",
        JOIN_RIGHT => "Right",
        JOIN_SEMI => "Semi",
        JOIN_ANTI => "Anti",
        _ => "Other",
    }
}

/// PostgreSQL's IS_OUTER_JOIN for the join types offered here.
pub fn is_outer_join(jt: pg_sys::JoinType::Type) -> bool {
    use pg_sys::JoinType::*;
    matches!(jt, JOIN_LEFT | JOIN_FULL | JOIN_RIGHT | JOIN_ANTI)
}

/// RINFO_IS_PUSHED_DOWN: a clause that filters the join's result rather
/// than deciding what matches.
unsafe fn pushed_down(rinfo: *mut pg_sys::RestrictInfo, joinrelids: *mut pg_sys::Bitmapset) -> bool {
    // SAFETY: rinfo is a live RestrictInfo of the join being planned (caller's contract).
    unsafe { (*rinfo).is_pushed_down || !pg_sys::bms_is_subset((*rinfo).required_relids, joinrelids) }
}

/// The Var under binary-compatible relabelings, if the expression is one.
unsafe fn plain_var(e: *mut pg_sys::Node) -> Option<*mut pg_sys::Var> {
    // SAFETY: e is a live expression node; RelabelType's arg is a node too.
    unsafe {
        let mut e = e;
        while (*e).type_ == pg_sys::NodeTag::T_RelabelType {
            e = (*(e as *mut pg_sys::RelabelType)).arg.cast();
        }
        ((*e).type_ == pg_sys::NodeTag::T_Var).then_some(e as *mut pg_sys::Var)
    }
}

/// One hash clause: the key on each side and how the table compares it.
struct HashKey {
    rinfo: *mut pg_sys::RestrictInfo,
    outer: *mut pg_sys::Var,
    inner: *mut pg_sys::Var,
    kind: KeyKind,
}

/// The hash clauses of the join, or why one of its hashable clauses
/// cannot be a vector key. Ok(empty): nothing to hash on.
unsafe fn hash_keys(
    joinrel: *mut pg_sys::RelOptInfo,
    outerrel: *mut pg_sys::RelOptInfo,
    innerrel: *mut pg_sys::RelOptInfo,
    jointype: pg_sys::JoinType::Type,
    restrictlist: *mut pg_sys::List,
) -> Result<Vec<HashKey>, String> {
    // SAFETY: restrictlist and the rels are the live planner data of the join being planned
    // (caller's contract); catalog lookups may ERROR on the main thread.
    unsafe {
        let mut keys = Vec::new();
        let mut refused: Option<String> = None;
        for rinfo in list_ptrs::<pg_sys::RestrictInfo>(restrictlist) {
            if is_outer_join(jointype) && pushed_down(rinfo, (*joinrel).relids) {
                continue;
            }
            if !(*rinfo).can_join || (*rinfo).hashjoinoperator == pg_sys::InvalidOid {
                continue;
            }
            let (o_rels, i_rels) = ((*outerrel).relids, (*innerrel).relids);
            let outer_is_left = if pg_sys::bms_is_subset((*rinfo).left_relids, o_rels)
                && pg_sys::bms_is_subset((*rinfo).right_relids, i_rels)
            {
                true
            } else if pg_sys::bms_is_subset((*rinfo).left_relids, i_rels)
                && pg_sys::bms_is_subset((*rinfo).right_relids, o_rels)
            {
                false
            } else {
                continue;
            };
            let op = (*rinfo).clause as *mut pg_sys::OpExpr;
            if (*op).xpr.type_ != pg_sys::NodeTag::T_OpExpr || (*(*op).args).length != 2 {
                continue;
            }
            let args: Vec<*mut pg_sys::Node> = list_ptrs::<pg_sys::Node>((*op).args).collect();
            let (o, i) = if outer_is_left { (args[0], args[1]) } else { (args[1], args[0]) };
            let (Some(ov), Some(iv)) = (plain_var(o), plain_var(i)) else {
                refused.get_or_insert("a hash join key is an expression".into());
                continue;
            };
            // (Asked again for every pair of inputs: memoized per clause and side.)
            let kind =
                match report::memo_key_kind((rinfo as usize, outer_is_left), || hash_key_kind(op, o, i)) {
                    Ok(k) => k,
                    Err(why) => {
                        refused.get_or_insert(why);
                        continue;
                    }
                };
            keys.push(HashKey { rinfo, outer: ov, inner: iv, kind });
        }
        match (keys.is_empty(), refused) {
            (true, Some(why)) => Err(why),
            _ => Ok(keys),
        }
    }
}

/// How a hash join clause's key is compared, or why it cannot be a key of
/// a VecHashJoin: `o` and `i` are its outer and inner arguments.
unsafe fn hash_key_kind(
    op: *mut pg_sys::OpExpr,
    o: *mut pg_sys::Node,
    i: *mut pg_sys::Node,
) -> Result<KeyKind, String> {
    // SAFETY: op and its arguments are a live join clause (caller's contract); catalog lookups
    // may ERROR on the main thread.
    unsafe {
        let (to, ti) = (pg_sys::exprType(o), pg_sys::exprType(i));
        let ints = [pg_sys::INT2OID, pg_sys::INT4OID, pg_sys::INT8OID];
        if ints.contains(&to) && ints.contains(&ti) {
            // Integer equality across widths is equality of the values.
            if !pg_sys::op_in_opfamily((*op).opno, pg_sys::Oid::from(pg_sys::INTEGER_BTREE_FAM_OID)) {
                return Err("a hash join operator other than integer equality".into());
            }
            Ok(KeyKind::Int)
        } else if to == ti {
            let eq = (*pg_sys::lookup_type_cache(to, pg_sys::TYPECACHE_EQ_OPR as i32)).eq_opr;
            if eq != (*op).opno {
                return Err(format!("a hash join operator other than {}'s equality", type_name(to)));
            }
            key_kind(to, (*op).inputcollid).map_err(|why| why.replace("group key", "hash join key"))
        } else {
            Err(format!("hash join keys of types {} and {}", type_name(to), type_name(ti)))
        }
    }
}

/// What `report::memo_refusal` is asked of a relation: a join relation's
/// own refusal, or an input relation's (a relation can be both).
const MEMO_JOINREL: u8 = 0;
const MEMO_INPUT: u8 = 1;

/// The path an input is read through: its VecScan when it is a base
/// relation that has one, else its cheapest path.
unsafe fn input_path(rel: *mut pg_sys::RelOptInfo) -> Option<*mut pg_sys::Path> {
    // SAFETY: rel is a live RelOptInfo of the planner (caller's contract).
    unsafe {
        if (*rel).reloptkind == pg_sys::RelOptKind::RELOPT_BASEREL {
            if let Some(p) = scan::vector_scan_of(rel, false) {
                if (*p).path.param_info.is_null() {
                    return Some(p.cast());
                }
            }
        }
        let p = (*rel).cheapest_total_path;
        (!p.is_null() && (*p).param_info.is_null()).then_some(p)
    }
}

/// Names of the relations of `relids`, for the report.
unsafe fn rel_names(root: *mut pg_sys::PlannerInfo, relids: *mut pg_sys::Bitmapset) -> String {
    // SAFETY: root and relids are the live planner data (caller's contract); simple_rte_array has
    // an entry for every relid.
    unsafe {
        let mut names = Vec::new();
        let mut i = -1;
        loop {
            i = pg_sys::bms_next_member(relids, i);
            if i < 0 {
                break;
            }
            if i as usize >= (*root).simple_rel_array_size as usize {
                continue;
            }
            let rte = *(*root).simple_rte_array.add(i as usize);
            if rte.is_null() || (*rte).rtekind == pg_sys::RTEKind::RTE_JOIN || (*rte).eref.is_null() {
                continue;
            }
            names.push(CStr::from_ptr((*(*rte).eref).aliasname).to_string_lossy().into_owned());
        }
        names.join(" ")
    }
}

fn alternative(
    target: String,
    verdict: Verdict,
    row_cost: Option<f64>,
    vector_cost: Option<f64>,
    details: Vec<String>,
) -> Alternative {
    Alternative { node: "VecHashJoin".into(), target, verdict, row_cost, vector_cost, details }
}

/// Whether an expression tree holds a PlaceHolderVar.
unsafe fn has_placeholders(node: *mut pg_sys::Node) -> bool {
    // SAFETY: node is a live expression tree (caller's contract); pull_var_clause only reads it.
    unsafe {
        let flags = (pg_sys::PVC_INCLUDE_PLACEHOLDERS
            | pg_sys::PVC_RECURSE_AGGREGATES
            | pg_sys::PVC_RECURSE_WINDOWFUNCS) as i32;
        list_ptrs::<pg_sys::Node>(pg_sys::pull_var_clause(node, flags))
            .any(|n| (*n).type_ == pg_sys::NodeTag::T_PlaceHolderVar)
    }
}

/// Why the join cannot be a VecHashJoin beyond its keys, if it cannot.
#[allow(clippy::too_many_arguments)]
unsafe fn refusal(
    root: *mut pg_sys::PlannerInfo,
    joinrel: *mut pg_sys::RelOptInfo,
    outerrel: *mut pg_sys::RelOptInfo,
    innerrel: *mut pg_sys::RelOptInfo,
    outer: *mut pg_sys::Path,
    inner: *mut pg_sys::Path,
    restrictlist: *mut pg_sys::List,
) -> Option<String> {
    // SAFETY: the paths, rels and restrictlist are the live planner data of the join being planned
    // (caller's contract).
    unsafe {
        if !settings::ENABLE_HASHJOIN.get() {
            return Some("vexec.enable_hashjoin is off".into());
        }
        // MERGE's join refers to its target's columns with other nullingrels
        // than the join's output gives them (PostgreSQL's own join nodes are
        // matched more loosely by set_references).
        if (*(*root).parse).commandType == pg_sys::CmdType::CMD_MERGE {
            return Some("the join of a MERGE".into());
        }
        // EvalPlanQual re-runs the joins below a ModifyTable or LockRows
        // with one row per relation: PostgreSQL's own nodes, as VecScan
        // leaves the rows to lock or update to them.
        if matches!((*(*root).parse).commandType, pg_sys::CmdType::CMD_UPDATE | pg_sys::CmdType::CMD_DELETE) {
            return Some("the join of an UPDATE or DELETE".into());
        }
        if !(*root).rowMarks.is_null() {
            return Some("FOR UPDATE/SHARE".into());
        }
        // PlaceHolderVars exist only in a query that made some.
        if (*(*root).glob).lastPHId > 0
            && (has_placeholders((*(*joinrel).reltarget).exprs.cast())
                || list_ptrs::<pg_sys::RestrictInfo>(restrictlist)
                    .any(|r| has_placeholders((*r).clause.cast())))
        {
            return Some("placeholder expressions in the join".into());
        }
        // (Asked again for every pair of inputs and join type: memoized per join relation.)
        if let Some(why) =
            report::memo_refusal((joinrel as usize, MEMO_JOINREL), || output_nulled_both_ways(joinrel))
        {
            return Some(why);
        }
        // An input read with its relation's own target list (nearly always)
        // is memoized per relation too.
        let input = |rel: *mut pg_sys::RelOptInfo, path: *mut pg_sys::Path| {
            if !std::ptr::eq((*path).pathtarget, (*rel).reltarget) {
                return cstring_column((*path).pathtarget);
            }
            report::memo_refusal((rel as usize, MEMO_INPUT), || cstring_column((*rel).reltarget))
        };
        input(outerrel, outer).or_else(|| input(innerrel, inner))
    }
}

/// Whether a column is output both nulled and not by outer joins: the scan
/// tuple holds one copy of each column, matched to the output by
/// set_references with its nullingrels (MERGE's source rows).
unsafe fn output_nulled_both_ways(joinrel: *mut pg_sys::RelOptInfo) -> Option<String> {
    // SAFETY: joinrel is a live RelOptInfo of the planner (caller's contract).
    unsafe {
        let flags = (pg_sys::PVC_RECURSE_AGGREGATES
            | pg_sys::PVC_RECURSE_WINDOWFUNCS
            | pg_sys::PVC_RECURSE_PLACEHOLDERS) as i32;
        let vars: Vec<*mut pg_sys::Var> =
            list_ptrs::<pg_sys::Node>(pg_sys::pull_var_clause((*(*joinrel).reltarget).exprs.cast(), flags))
                .filter(|&n| (*n).type_ == pg_sys::NodeTag::T_Var)
                .map(|n| n as *mut pg_sys::Var)
                .collect();
        for (i, &a) in vars.iter().enumerate() {
            if vars[..i].iter().any(|&b| {
                var_id(a) == var_id(b) && !pg_sys::bms_equal((*a).varnullingrels, (*b).varnullingrels)
            }) {
                return Some("a column is output both nulled and not by outer joins".into());
            }
        }
        None
    }
}

/// An input column of a type spilled rows cannot hold: they are written as
/// values, by value, fixed-length or varlenas (not C strings).
unsafe fn cstring_column(target: *mut pg_sys::PathTarget) -> Option<String> {
    // SAFETY: target is a live PathTarget of the planner (caller's contract); catalog lookups may
    // ERROR on the main thread.
    unsafe {
        for e in list_ptrs::<pg_sys::Node>((*target).exprs) {
            let t = pg_sys::exprType(e);
            // (The type cache: no catalog cache lookup per column and pair.)
            if (*pg_sys::lookup_type_cache(t, 0)).typlen < -1 {
                return Some(format!("an input column of type {} (a C string)", type_name(t)));
            }
        }
        None
    }
}

/// The rows that pass the hash join proper (each charged a tuple and the
/// join filter), counted as final_cost_hashjoin counts them, so that both
/// joins are costed on the same estimate: for a semi or anti join, or an
/// inner side the planner proved unique, the outer rows with a match
/// (without one, anti) by the planner's semi-join factors; else the join's
/// rows.
///
/// # Safety
/// `extra` is the planner's JoinPathExtraData for this join.
unsafe fn passing_rows(
    jointype: pg_sys::JoinType::Type,
    extra: *mut pg_sys::JoinPathExtraData,
    orows: f64,
    rows: f64,
) -> f64 {
    use pg_sys::JoinType::*;
    // SAFETY: extra is the planner's JoinPathExtraData for this join (caller's contract).
    unsafe {
        if matches!(jointype, JOIN_SEMI | JOIN_ANTI) || (*extra).inner_unique {
            let matched = (orows * (*extra).semifactors.outer_match_frac).round();
            if jointype == JOIN_ANTI {
                orows - matched
            } else {
                matched
            }
        } else {
            rows
        }
    }
}

unsafe fn consider(
    root: *mut pg_sys::PlannerInfo,
    joinrel: *mut pg_sys::RelOptInfo,
    outerrel: *mut pg_sys::RelOptInfo,
    innerrel: *mut pg_sys::RelOptInfo,
    jointype: pg_sys::JoinType::Type,
    extra: *mut pg_sys::JoinPathExtraData,
    mode: Mode,
) {
    use pg_sys::JoinType::*;
    // SAFETY: the planner's live data of the join being considered (caller's contract); paths are
    // made in the planner's memory context.
    unsafe {
        match jointype {
            JOIN_INNER | JOIN_LEFT | JOIN_FULL | JOIN_RIGHT | JOIN_SEMI | JOIN_ANTI => {}
            // PostgreSQL's other form of a semi join, an inner join with its
            // inner side made unique, comes after our semi join and may have
            // pushed it out on cost: force offers the semi join again (the
            // unique-ified side is the semi join's inner side).
            JOIN_UNIQUE_INNER if mode == Mode::Force => {
                return consider(root, joinrel, outerrel, innerrel, JOIN_SEMI, extra, mode);
            }
            JOIN_UNIQUE_OUTER if mode == Mode::Force => {
                return consider(root, joinrel, innerrel, outerrel, JOIN_SEMI, extra, mode);
            }
            // PostgreSQL's right semi/anti hash joins (the same join with the
            // sides swapped) come after ours: in force mode they count as
            // disabled too once a VecHashJoin of the relation exists.
            JOIN_RIGHT_SEMI | JOIN_RIGHT_ANTI if mode == Mode::Force => {
                if report::join_path_of(joinrel, false).is_some_and(|p| (*p).path.disabled_nodes == 0) {
                    disable_others(joinrel);
                }
                return;
            }
            _ => return,
        }
        let restrictlist = (*extra).restrictlist;
        // (Described only if the report records alternatives.)
        let what = || {
            format!(
                "{} join of {} and {}",
                jointype_name(jointype).to_lowercase(),
                rel_names(root, (*outerrel).relids),
                rel_names(root, (*innerrel).relids)
            )
        };
        let keys = match hash_keys(joinrel, outerrel, innerrel, jointype, restrictlist) {
            Ok(k) if k.is_empty() => return, // nothing PostgreSQL could hash either
            Ok(k) => k,
            Err(why) => {
                report::record(|| alternative(what(), Verdict::NotPossible(why), None, None, vec![]));
                return;
            }
        };
        let (Some(outer), Some(inner)) = (input_path(outerrel), input_path(innerrel)) else {
            report::record(|| {
                let why = "an input has only parameterized paths".into();
                alternative(what(), Verdict::NotPossible(why), None, None, vec![])
            });
            return;
        };
        // As for scans: outside force mode, small joins stay PostgreSQL's
        // (setting up batches and a table costs more than it saves).
        let min_rows = settings::MIN_ROWS.get() as f64;
        if mode != Mode::Force && (*outer).rows + (*inner).rows < min_rows {
            report::record(|| {
                let why = format!("fewer than vexec.min_rows ({min_rows:.0}) input rows");
                alternative(what(), Verdict::NotPossible(why), None, None, vec![])
            });
            return;
        }
        if let Some(why) = refusal(root, joinrel, outerrel, innerrel, outer, inner, restrictlist) {
            report::record(|| alternative(what(), Verdict::NotPossible(why), None, None, vec![]));
            return;
        }

        // Cost: HashJoin's shape (build the inner side, probe with the
        // outer), hashing and probing at vector price.
        let op = pg_sys::cpu_operator_cost;
        let nkeys = keys.len() as f64;
        let (orows, irows) = ((*outer).rows, (*inner).rows);
        let rows = (*joinrel).rows;
        let mut quals: pg_sys::QualCost = std::mem::zeroed();
        // (Pseudoconstant clauses are not ours: see plan_custom_path.)
        let other: Vec<*mut pg_sys::RestrictInfo> = list_ptrs::<pg_sys::RestrictInfo>(restrictlist)
            .filter(|&r| !(*r).pseudoconstant && !keys.iter().any(|k| k.rinfo == r))
            .collect();
        let mut other_list: *mut pg_sys::List = std::ptr::null_mut();
        for &r in &other {
            other_list = pg_sys::lappend(other_list, r.cast());
        }
        pg_sys::cost_qual_eval(&mut quals, other_list, root);
        let f = cost::factors();
        let build = (op * nkeys * f.hash_key + pg_sys::cpu_tuple_cost * f.tuple) * irows;
        let (outer_vector, inner_vector) = (vector_node(outer).is_some(), vector_node(inner).is_some());
        let probe = op * nkeys * f.hash_key * orows;
        let passing = passing_rows(jointype, extra, orows, rows);
        let (startup, total) = cost::hash_join(
            cost::join_input_cost(&*inner, inner_vector),
            build
                + cost::SETUP_OPERATORS * op
                + partition_cost(irows, (*(*inner).pathtarget).width, orows, (*(*outer).pathtarget).width),
            &*outer,
            outer_vector,
            probe + (quals.per_tuple + pg_sys::cpu_tuple_cost) * passing,
        );
        let row_cost =
            list_ptrs::<pg_sys::Path>((*joinrel).pathlist).map(|p| (*p).total_cost).reduce(f64::min);
        // Auto mode on estimates PostgreSQL cannot trust: keep its shape.
        let untrusted =
            if mode == Mode::Auto { untrusted_estimates(root, joinrel, outer, inner) } else { None };
        let mut lost: Cow<'static, str> = "another path was cheaper".into();
        let mut shape_note = None;
        let mut total = total;
        // (The key clauses' list is also the path's; nothing changes it.)
        let mut hashclauses: *mut pg_sys::List = std::ptr::null_mut();
        for k in &keys {
            hashclauses = pg_sys::lappend(hashclauses, k.rinfo.cast());
        }
        if let Some(why) = &untrusted {
            let row = row_hash_join_cost(root, joinrel, jointype, extra, outer, inner, hashclauses, false);
            if let Some((cost, note, lost_why)) = keep_shape(why, total, row) {
                total = cost;
                shape_note = Some(note);
                lost = lost_why.into();
            }
        }

        let disabled_nodes = (*outer).disabled_nodes
            + (*inner).disabled_nodes
            + enabled::hash_join_disabled(extra, false) as i32;
        // In auto mode a path add_path would certainly reject is not built
        // (PostgreSQL prechecks its own join paths the same way), unless the
        // report lists it, a parallel path would be made from it, or it is
        // the final join's (VecAgg reads that one whether it won or not).
        if mode == Mode::Auto
            && !report::recording()
            && !(*joinrel).consider_parallel
            && !pg_sys::bms_equal((*joinrel).relids, (*root).all_query_rels)
            && !pg_sys::add_path_precheck(
                joinrel,
                disabled_nodes,
                startup,
                total,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        {
            return;
        }

        let id = report::next_id();
        let mut private: *mut pg_sys::List = std::ptr::null_mut();
        private = pg_sys::lappend(private, pg_sys::makeInteger(id as i32).cast());
        private = pg_sys::lappend(private, pg_sys::makeInteger(jointype as i32).cast());
        let (mut okeys, mut ikeys, mut kinds) =
            (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
        for k in &keys {
            okeys = pg_sys::lappend(okeys, k.outer.cast());
            ikeys = pg_sys::lappend(ikeys, k.inner.cast());
            kinds = pg_sys::lappend(kinds, pg_sys::makeInteger(k.kind.code()).cast());
        }
        for l in [okeys, ikeys, kinds, hashclauses, restrictlist] {
            private = pg_sys::lappend(private, l.cast());
        }
        let cp = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
        let p = &mut (*cp).path;
        p.type_ = pg_sys::NodeTag::T_CustomPath;
        p.pathtype = pg_sys::NodeTag::T_CustomScan;
        p.parent = joinrel;
        p.pathtarget = (*joinrel).reltarget;
        // Parallel safe (it may run whole inside a worker, as the inner side
        // of a parallel join) when its inputs are; not parallel aware.
        p.parallel_safe = (*joinrel).consider_parallel && (*outer).parallel_safe && (*inner).parallel_safe;
        p.rows = rows;
        p.disabled_nodes = disabled_nodes;
        if enabled::hash_join_disabled(extra, false) {
            lost = "hash joins are disabled for this join (enable_hashjoin or a planner hint)".into();
        }
        p.startup_cost = startup;
        p.total_cost = total;
        (*cp).custom_paths =
            pg_sys::lappend(pg_sys::lappend(std::ptr::null_mut(), outer.cast()), inner.cast());
        (*cp).custom_private = private;
        // The join's clauses, for create_scan_plan: their pseudoconstant ones
        // (no Vars, no volatility: `WHERE current_setting(...) = 'on'`) become
        // a gating Result's one-time filter above the join, as over
        // PostgreSQL's own joins, instead of a filter run per joined row.
        (*cp).custom_restrictinfo = restrictlist;
        (*cp).methods = &PATH_METHODS.0;
        // The join computes its output expressions itself (PostgreSQL's
        // projection on rows, `exec::project` on batches).
        (*cp).flags = pg_sys::CUSTOMPATH_SUPPORT_PROJECTION;

        let vector_inputs = outer_vector as usize + inner_vector as usize;
        let alt = |verdict| {
            let mut details = vec![format!(
                "hash keys: {}; rows: outer {orows:.0}, inner {irows:.0}; vector inputs: {vector_inputs} of 2",
                keys.len()
            )];
            details.extend(shape_note.clone());
            alternative(what(), verdict, row_cost, Some(total), details)
        };
        match mode {
            Mode::Off => {}
            Mode::Explain => report::record(|| alt(Verdict::NotChosen("explain mode".into()))),
            Mode::Auto | Mode::Force => {
                // Force: the join's other paths count as disabled (before
                // add_path compares them with ours).
                if mode == Mode::Force && p.disabled_nodes == 0 {
                    disable_others(joinrel);
                }
                // (add_path may free the path it rejects.)
                let copy =
                    pg_sys::palloc(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
                std::ptr::copy_nonoverlapping(cp, copy, 1);
                report::stash_join_path(joinrel, copy, false);
                pg_sys::add_path(joinrel, cp.cast());
                report::record_candidate(id, lost, || alt(Verdict::Chosen));
                for shared in [false, true] {
                    let what =
                        || format!("{} (parallel{})", what(), if shared { ", shared build" } else { "" });
                    match partial_path(
                        joinrel,
                        outerrel,
                        innerrel,
                        inner,
                        jointype,
                        copy,
                        nkeys,
                        quals.per_tuple,
                        extra,
                        shared,
                    ) {
                        Ok(None) => {}
                        Ok(Some((pp, id, mut details))) => {
                            let mut lost: Cow<'static, str> = "another path was cheaper".into();
                            if let Some(why) = &untrusted {
                                let total = (*pp).path.total_cost;
                                let mut inputs = list_ptrs::<pg_sys::Path>((*pp).custom_paths);
                                let (po, pi) = (inputs.next().unwrap(), inputs.next().unwrap());
                                let row = row_hash_join_cost(
                                    root,
                                    joinrel,
                                    jointype,
                                    extra,
                                    po,
                                    pi,
                                    hashclauses,
                                    shared,
                                );
                                if let Some((cost, note, lost_why)) = keep_shape(why, total, row) {
                                    (*pp).path.total_cost = cost;
                                    details.push(note);
                                    lost = lost_why.into();
                                }
                            }
                            let copy = pg_sys::palloc(std::mem::size_of::<pg_sys::CustomPath>())
                                as *mut pg_sys::CustomPath;
                            std::ptr::copy_nonoverlapping(pp, copy, 1);
                            report::stash_join_path(joinrel, copy, true);
                            let total = (*pp).path.total_cost;
                            pg_sys::add_partial_path(joinrel, pp.cast());
                            report::record_candidate(id, lost, || {
                                alternative(what(), Verdict::Chosen, None, Some(total), details)
                            });
                        }
                        Err(why) => report::record(|| {
                            alternative(what(), Verdict::NotPossible(why), None, None, vec![])
                        }),
                    }
                }
            }
        }
    }
}

/// How far under PostgreSQL's own hash join of the same inputs a vector
/// join is costed on untrusted estimates: enough to break a tie, too little
/// to move the plan onto another join order or method.
const SHAPE_MARGIN: f64 = 0.01;

/// Why PostgreSQL's row estimates for `joinrel` cannot be trusted, if they
/// cannot: it clamped the estimate to one row, or one of the joined
/// relations is a CTE scan or the output of a subquery, a function or a
/// VALUES list, whose columns have no statistics (join selectivities are
/// then defaults). A row plan on such estimates survives by the luck of its
/// shape; a vector join's lower cost can move the plan onto a shape that
/// does not (TPC-DS q57: a self-join of a CTE estimated at one row that
/// meets every row of a group with every other).
unsafe fn untrusted_estimates(
    root: *mut pg_sys::PlannerInfo,
    joinrel: *mut pg_sys::RelOptInfo,
    outer: *mut pg_sys::Path,
    inner: *mut pg_sys::Path,
) -> Option<String> {
    use pg_sys::RTEKind::*;
    // SAFETY: live planner data (caller's contract); simple_rte_array has an
    // entry for every relid of the query.
    unsafe {
        if (*joinrel).rows <= 1.0 && ((*outer).rows > 1.0 || (*inner).rows > 1.0) {
            return Some("the join's row estimate is clamped to 1".into());
        }
        let mut i = -1;
        loop {
            i = pg_sys::bms_next_member((*joinrel).relids, i);
            if i < 0 {
                return None;
            }
            let rte = *(*root).simple_rte_array.add(i as usize);
            if rte.is_null() {
                continue;
            }
            let kind = match (*rte).rtekind {
                RTE_CTE => "a CTE scan",
                RTE_SUBQUERY => "a subquery's output",
                RTE_FUNCTION | RTE_TABLEFUNC => "a function's output",
                RTE_VALUES => "a VALUES list",
                _ => continue,
            };
            return Some(format!(
                "{} is {kind} without statistics",
                rel_names(root, pg_sys::bms_make_singleton(i))
            ));
        }
    }
}

/// What PostgreSQL's own hash join of `outer` and `inner` on `hashclauses`
/// costs (its total cost), as its planner computes it.
#[allow(clippy::too_many_arguments)]
unsafe fn row_hash_join_cost(
    root: *mut pg_sys::PlannerInfo,
    joinrel: *mut pg_sys::RelOptInfo,
    jointype: pg_sys::JoinType::Type,
    extra: *mut pg_sys::JoinPathExtraData,
    outer: *mut pg_sys::Path,
    inner: *mut pg_sys::Path,
    hashclauses: *mut pg_sys::List,
    parallel_hash: bool,
) -> f64 {
    // SAFETY: live planner data of the join being considered (caller's
    // contract); the HashPath is made in the planner's context and dropped.
    unsafe {
        let mut ws: pg_sys::JoinCostWorkspace = std::mem::zeroed();
        pg_sys::initial_cost_hashjoin(
            root,
            &mut ws,
            jointype,
            hashclauses,
            outer,
            inner,
            extra,
            parallel_hash,
        );
        let hp = pg_sys::create_hashjoin_path(
            root,
            joinrel,
            jointype,
            &mut ws,
            extra,
            outer,
            inner,
            parallel_hash,
            (*extra).restrictlist,
            std::ptr::null_mut(),
            hashclauses,
        );
        (*hp).jpath.path.total_cost
    }
}

/// For a vector join of total cost `total` on untrusted estimates (`why`),
/// where PostgreSQL's own hash join of the same inputs costs `row`: the
/// vector join is costed no lower than `row` less [`SHAPE_MARGIN`], so it
/// replaces a hash join PostgreSQL would choose and nothing else. Returns
/// the new cost, the report's note and why the path lost if it does; None
/// when its own cost is already that high.
fn keep_shape(why: &str, total: f64, row: f64) -> Option<(f64, String, String)> {
    let floor = row * (1.0 - SHAPE_MARGIN);
    if total >= floor {
        return None;
    }
    let note = format!(
        "estimates not trusted ({why}): costed as PostgreSQL's hash join of the same inputs ({row:.2}) less 1%, not {total:.2}"
    );
    Some((floor, note, format!("estimates not trusted ({why}): no cheaper than PostgreSQL's joins")))
}

/// Pages of `rows` rows of `width` bytes in a temporary file.
fn file_pages(rows: f64, width: i32) -> f64 {
    (rows * width.max(8) as f64 / pg_sys::BLCKSZ as f64).ceil()
}

/// The cost of partitioning: when the inner rows outgrow hash_mem, both
/// sides are written to and read back from temporary files once.
unsafe fn partition_cost(irows: f64, iwidth: i32, orows: f64, owidth: i32) -> f64 {
    // SAFETY: reads planner settings (hash_mem, seq_page_cost) on the backend's main thread.
    unsafe {
        if irows * (iwidth.max(8) as f64 + 24.0) > pg_sys::get_hash_memory_limit() as f64 {
            2.0 * (file_pages(irows, iwidth) + file_pages(orows, owidth)) * pg_sys::seq_page_cost
        } else {
            0.0
        }
    }
}

/// One participant's share of a parallel VecHashJoin: it probes its share
/// of the outer side (a partial path) against a table of the whole inner
/// side. Without `shared`, each participant computes the whole inner side
/// itself, as PostgreSQL's parallel hash join over a non-shared Hash does;
/// with it (a parallel-aware join), each computes its share of a partial
/// inner side and the shares are exchanged through temporary files
/// (`exec::join::SharedBuild`), so each still hashes every inner row. Only
/// for joins that return no unmatched inner rows (each participant would
/// return its own): inner, left, semi, anti.
/// Ok(None): nothing to build it from (no partial outer or inner path).
#[allow(clippy::too_many_arguments)]
unsafe fn partial_path(
    joinrel: *mut pg_sys::RelOptInfo,
    outerrel: *mut pg_sys::RelOptInfo,
    innerrel: *mut pg_sys::RelOptInfo,
    inner: *mut pg_sys::Path,
    jointype: pg_sys::JoinType::Type,
    serial: *mut pg_sys::CustomPath,
    nkeys: f64,
    qual_per_tuple: f64,
    extra: *mut pg_sys::JoinPathExtraData,
    shared: bool,
) -> Result<Option<(*mut pg_sys::CustomPath, u32, Vec<String>)>, String> {
    use pg_sys::JoinType::*;
    // SAFETY: the planner's live data of the join being considered (caller's contract).
    unsafe {
        if !(*joinrel).consider_parallel {
            return Ok(None);
        }
        let Some(outer) = partial_input_path(outerrel) else { return Ok(None) };
        if !matches!(jointype, JOIN_INNER | JOIN_LEFT | JOIN_SEMI | JOIN_ANTI) {
            return Err(
                "right and full joins return unmatched inner rows, which needs one shared table".into()
            );
        }
        let workers = (*outer).parallel_workers;
        let op = pg_sys::cpu_operator_cost;
        let orows = (*outer).rows;
        let irows = (*inner).rows;
        let rows = ((*joinrel).rows / cost::parallel_divisor(workers)).max(1.0);
        let f = cost::factors();
        let build = (op * nkeys * f.hash_key + pg_sys::cpu_tuple_cost * f.tuple) * irows;
        let width = (*(*inner).pathtarget).width;
        // The inner side as it is computed: whole, or this participant's
        // share of it written out and every share read back.
        let (build_input, inner_cost) = if shared {
            // (PostgreSQL's switch for its own shared hash tables.)
            if !pg_sys::enable_parallel_hash {
                return Err("enable_parallel_hash is off".into());
            }
            let Some(part) = partial_input_path(innerrel) else { return Ok(None) };
            let exchange =
                (file_pages((*part).rows, width) + file_pages(irows, width)) * pg_sys::seq_page_cost;
            (part, cost::join_input_cost(&*part, vector_node(part).is_some()) + exchange)
        } else {
            // (The shared build reads a partial path of the inner relation
            // instead, which is parallel safe whatever `inner` is: often a
            // Gather.)
            if !(*inner).parallel_safe {
                return Err("the inner side is not parallel safe".into());
            }
            (inner, cost::join_input_cost(&*inner, vector_node(inner).is_some()))
        };
        let passing = passing_rows(jointype, extra, orows, rows);
        let (startup, total) = cost::hash_join(
            inner_cost,
            build
                + cost::SETUP_OPERATORS * op
                + partition_cost(irows, width, orows, (*(*outer).pathtarget).width),
            &*outer,
            vector_node(outer).is_some(),
            op * nkeys * f.hash_key * orows + (qual_per_tuple + pg_sys::cpu_tuple_cost) * passing,
        );

        let id = report::next_id();
        let mut private: *mut pg_sys::List =
            pg_sys::lappend(std::ptr::null_mut(), pg_sys::makeInteger(id as i32).cast());
        for n in list_ptrs::<pg_sys::Node>((*serial).custom_private).skip(1) {
            private = pg_sys::lappend(private, n.cast());
        }
        let cp = pg_sys::palloc(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
        std::ptr::copy_nonoverlapping(serial, cp, 1);
        let p = &mut (*cp).path;
        // (Parallel aware: PostgreSQL then sets up its shared state.)
        p.parallel_aware = shared;
        p.parallel_safe = true;
        p.parallel_workers = workers;
        p.rows = rows;
        p.startup_cost = startup;
        p.total_cost = total;
        p.disabled_nodes = (*outer).disabled_nodes
            + (*build_input).disabled_nodes
            + enabled::hash_join_disabled(extra, true) as i32;
        (*cp).custom_paths =
            pg_sys::lappend(pg_sys::lappend(std::ptr::null_mut(), outer.cast()), build_input.cast());
        (*cp).custom_private = private;
        let details = vec![if shared {
            format!(
                "{workers} workers planned; each computes its share of the inner side ({:.0} rows) and builds the whole table ({irows:.0} rows); outer rows per participant: {orows:.0}",
                (*build_input).rows
            )
        } else {
            format!(
                "{workers} workers planned; each builds the inner table ({irows:.0} rows); outer rows per participant: {orows:.0}"
            )
        }];
        Ok(Some((cp, id, details)))
    }
}

/// The partial path an input is read through in a parallel join: its
/// parallel VecScan when it is a base relation that has one, else its
/// cheapest partial path; None if it has none without parameters.
unsafe fn partial_input_path(rel: *mut pg_sys::RelOptInfo) -> Option<*mut pg_sys::Path> {
    // SAFETY: rel is a live RelOptInfo of the planner (caller's contract).
    unsafe {
        let scan = match (*rel).reloptkind {
            pg_sys::RelOptKind::RELOPT_BASEREL => scan::vector_scan_of(rel, true).map(|p| p.cast()),
            _ => None,
        };
        let p = scan.or_else(|| list_ptrs::<pg_sys::Path>((*rel).partial_pathlist).next())?;
        (*p).param_info.is_null().then_some(p)
    }
}

/// Force: PostgreSQL's hash joins of the join count as disabled. Nested
/// loops and merge joins keep competing on cost, as index scans compete
/// with VecScan: a nested loop over a parameterized index scan can be
/// orders of magnitude cheaper (TPC-H Q2's correlated subquery).
unsafe fn disable_others(joinrel: *mut pg_sys::RelOptInfo) {
    // SAFETY: joinrel is a live RelOptInfo; its path lists hold live Paths.
    unsafe {
        for list in [(*joinrel).pathlist, (*joinrel).partial_pathlist] {
            for path in list_ptrs::<pg_sys::Path>(list) {
                if (*path).pathtype == pg_sys::NodeTag::T_HashJoin && (*path).disabled_nodes == 0 {
                    (*path).disabled_nodes = 1;
                }
            }
        }
    }
}

/// The (varno, varattno) of a Var, the identity its copies share whatever
/// outer joins null them.
unsafe fn var_id(v: *mut pg_sys::Var) -> (i32, i16) {
    // SAFETY: v is a live Var (caller's contract).
    unsafe { ((*v).varno, (*v).varattno) }
}

/// Per custom_scan_tlist Var: its identity and nullingrels.
type NullingMap = Vec<((i32, i16), *mut pg_sys::Bitmapset)>;

/// A copy of `node` whose Vars carry the nullingrels of the same Var in
/// `map` (the scan tuple's), so that set_references matches them exactly.
/// The join reads every Var from the scan tuple, where a value is the same
/// whichever outer joins may null it above or below.
unsafe fn align_nullingrels(node: *mut pg_sys::Node, map: &NullingMap) -> *mut pg_sys::Node {
    #[pg_guard]
    unsafe extern "C-unwind" fn mutator(
        node: *mut pg_sys::Node,
        ctx: *mut std::ffi::c_void,
    ) -> *mut pg_sys::Node {
        // SAFETY: called by expression_tree_mutator with live nodes; ctx is the NullingMap passed
        // in below.
        unsafe {
            if node.is_null() {
                return node;
            }
            let map = &*(ctx as *const NullingMap);
            if (*node).type_ == pg_sys::NodeTag::T_Var {
                let v = pg_sys::copyObjectImpl(node.cast()) as *mut pg_sys::Var;
                if let Some((_, n)) = map.iter().find(|(id, _)| *id == var_id(v)) {
                    (*v).varnullingrels = pg_sys::bms_copy(*n);
                }
                return v.cast();
            }
            pg_sys::expression_tree_mutator_impl(node, Some(mutator), ctx)
        }
    }
    // SAFETY: node is a live expression tree and map outlives the walk (caller's contract).
    unsafe { mutator(node, map as *const NullingMap as *mut std::ffi::c_void) }
}

#[pg_guard]
unsafe extern "C-unwind" fn plan_custom_path(
    _root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    best_path: *mut pg_sys::CustomPath,
    tlist: *mut pg_sys::List,
    _clauses: *mut pg_sys::List,
    custom_plans: *mut pg_sys::List,
) -> *mut pg_sys::Plan {
    // SAFETY: called by create_plan with our CustomPath (custom_private written by consider()) and
    // its children's plans.
    unsafe {
        let private: Vec<*mut pg_sys::Node> =
            list_ptrs::<pg_sys::Node>((*best_path).custom_private).collect();
        let id = (*(private[0] as *mut pg_sys::Integer)).ival;
        let jointype = (*(private[1] as *mut pg_sys::Integer)).ival as pg_sys::JoinType::Type;
        let okeys: Vec<*mut pg_sys::Var> = list_ptrs(private[2].cast()).collect();
        let ikeys: Vec<*mut pg_sys::Var> = list_ptrs(private[3].cast()).collect();
        let kinds: Vec<i32> = list_ptrs::<pg_sys::Integer>(private[4].cast()).map(|i| (*i).ival).collect();
        let hash_rinfos: Vec<*mut pg_sys::RestrictInfo> = list_ptrs(private[5].cast()).collect();
        let restrictlist = private[6] as *mut pg_sys::List;
        report::mark_chosen(id as u32);

        let plans: Vec<*mut pg_sys::Plan> = list_ptrs(custom_plans).collect();
        let (outer_plan, inner_plan) = (plans[0], plans[1]);
        // The scan tuple: the outer input's row, then the inner input's,
        // Vars carrying the nullingrels the join's output gives them.
        // (Every Var of the output, also those inside expressions: a MERGE
        // join outputs row expressions of its target.)
        let flags = (pg_sys::PVC_RECURSE_AGGREGATES
            | pg_sys::PVC_RECURSE_WINDOWFUNCS
            | pg_sys::PVC_RECURSE_PLACEHOLDERS) as i32;
        // (A projection above asks for no target list, CP_IGNORE_TLIST, and
        // puts its own in place: then the path's target gives the Vars.)
        let output: *mut pg_sys::Node =
            if tlist.is_null() { (*(*best_path).path.pathtarget).exprs.cast() } else { tlist.cast() };
        let tlist_vars: Vec<*mut pg_sys::Var> =
            list_ptrs::<pg_sys::Node>(pg_sys::pull_var_clause(output, flags))
                .filter(|&n| (*n).type_ == pg_sys::NodeTag::T_Var)
                .map(|n| n as *mut pg_sys::Var)
                .collect();
        let mut map: NullingMap = Vec::new();
        let mut scan_tlist: *mut pg_sys::List = std::ptr::null_mut();
        let mut resno = 1;
        for plan in [outer_plan, inner_plan] {
            for te in list_ptrs::<pg_sys::TargetEntry>((*plan).targetlist) {
                let expr = pg_sys::copyObjectImpl((*te).expr.cast()) as *mut pg_sys::Expr;
                if (*expr).type_ == pg_sys::NodeTag::T_Var {
                    let v = expr as *mut pg_sys::Var;
                    if let Some(&out) = tlist_vars.iter().find(|&&o| var_id(o) == var_id(v)) {
                        (*v).varnullingrels = pg_sys::bms_copy((*out).varnullingrels);
                    }
                    map.push((var_id(v), (*v).varnullingrels));
                }
                let nte = pg_sys::makeTargetEntry(expr, resno, std::ptr::null_mut(), false);
                scan_tlist = pg_sys::lappend(scan_tlist, nte.cast());
                resno += 1;
            }
        }
        let column_of = |plan: *mut pg_sys::Plan, v: *mut pg_sys::Var| -> usize {
            list_ptrs::<pg_sys::TargetEntry>((*plan).targetlist)
                .position(|te| plain_var((*te).expr.cast()).is_some_and(|x| var_id(x) == var_id(v)))
                .expect("a hash key is an output column of its input")
        };
        // The join filter (what matches) and, for outer joins, the filter
        // after the join.
        let (mut joinquals, mut otherquals): (*mut pg_sys::List, *mut pg_sys::List) =
            (std::ptr::null_mut(), std::ptr::null_mut());
        for rinfo in list_ptrs::<pg_sys::RestrictInfo>(restrictlist) {
            // Pseudoconstant clauses gate the join from a Result above it
            // (custom_restrictinfo); hash clauses are the keys.
            if (*rinfo).pseudoconstant || hash_rinfos.contains(&rinfo) {
                continue;
            }
            let clause = align_nullingrels((*rinfo).clause.cast(), &map);
            if is_outer_join(jointype) && pushed_down(rinfo, (*rel).relids) {
                otherquals = pg_sys::lappend(otherquals, clause.cast());
            } else {
                joinquals = pg_sys::lappend(joinquals, clause.cast());
            }
        }
        let data = JoinPlanData {
            report_id: id,
            jointype: jointype as i32,
            nouter: (*(*outer_plan).targetlist).length as usize,
            keys: okeys
                .iter()
                .zip(&ikeys)
                .zip(&kinds)
                .zip(&hash_rinfos)
                .map(|(((&o, &i), &k), &rinfo)| JoinKeySpec {
                    outer_col: column_of(outer_plan, o),
                    inner_col: column_of(inner_plan, i),
                    kind: KeyKind::from_code(k).expect("a VecHashJoin path's key kind"),
                    // The clause's collation (a Collated key's sort keys follow it).
                    collation: u32::from((*((*rinfo).clause as *mut pg_sys::OpExpr)).inputcollid),
                })
                .collect(),
        };
        let spec = crate::pgutil::int_list(&data.encode());
        let cscan = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomScan>()) as *mut pg_sys::CustomScan;
        (*cscan).scan.plan.type_ = pg_sys::NodeTag::T_CustomScan;
        // The output keeps its own Vars: the parent matches them.
        (*cscan).scan.plan.targetlist = tlist;
        (*cscan).scan.plan.qual = otherquals;
        (*cscan).scan.scanrelid = 0;
        (*cscan).custom_scan_tlist = scan_tlist;
        (*cscan).custom_plans = custom_plans;
        (*cscan).custom_exprs = joinquals;
        (*cscan).custom_private = spec;
        (*cscan).flags = (*best_path).flags;
        (*cscan).methods = crate::exec::join::scan_methods();
        cscan as *mut pg_sys::Plan
    }
}
