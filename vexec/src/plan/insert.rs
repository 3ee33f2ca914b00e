//! VecInsert paths: `create_upper_paths_hook` (UPPERREL_FINAL) offers, for
//! each INSERT path PostgreSQL made (a ModifyTablePath), the same
//! ModifyTable over a VecInsert that writes the rows through the table
//! access method's multi_insert (exec/insert.rs).
//!
//! ModifyTable stays on top: it opens the target, checks privileges, fires
//! statement triggers and sets the row count. VecInsert is not offered
//! where the statement needs a row at a time (`refusal`): row-level
//! triggers (foreign keys' checks and deferrable unique constraints are
//! such triggers), transition tables, ON CONFLICT, RETURNING, WITH CHECK
//! options (row level security, views' CHECK OPTION), partitioned or
//! foreign targets, table access methods without multi_insert, and volatile
//! functions other than nextval (they may read the table being written, and
//! would see fewer rows than row by row; COPY FROM has the same rule).
//!
//! Cost: PostgreSQL does not cost the writing of rows, so the row plan's
//! cost is the cost of producing them. VecInsert's is that less what
//! multi_insert saves per row, plus its setup (`cost::insert`).

use crate::pgutil::{int_values, list_ints, list_ptrs, SyncPtr};
use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::plan_data::InsertPlanData;
use vexec_core::report::{Alternative, Verdict};

use super::cost;
use super::report;
use crate::settings::{self, Mode};

static PATH_METHODS: SyncPtr<pg_sys::CustomPathMethods> = SyncPtr(pg_sys::CustomPathMethods {
    CustomName: crate::nodes::INSERT.as_ptr(),
    PlanCustomPath: Some(plan_custom_path),
    ReparameterizeCustomPathByChild: None,
});

/// create_upper_paths_hook's part for VecInsert (see `plan::hooks`).
pub(crate) unsafe fn create_upper_paths(
    root: *mut pg_sys::PlannerInfo,
    stage: pg_sys::UpperRelationKind::Type,
    output_rel: *mut pg_sys::RelOptInfo,
) {
    // SAFETY: called from create_upper_paths_hook (plan/hooks.rs) on the backend's main thread with
    // the planner's live root and rels.
    unsafe {
        let mode = settings::MODE.get();
        if mode != Mode::Off
            && stage == pg_sys::UpperRelationKind::UPPERREL_FINAL
            && (*(*root).parse).commandType == pg_sys::CmdType::CMD_INSERT
        {
            consider(root, output_rel, mode);
        }
    }
}

fn alternative(target: &str, verdict: Verdict, row: Option<f64>, vector: Option<f64>) -> Alternative {
    Alternative {
        node: "VecInsert".into(),
        target: target.into(),
        verdict,
        row_cost: row,
        vector_cost: vector,
        details: vec![],
    }
}

/// Whether `node` (a query or expression) calls a volatile function other
/// than nextval and vexec.ingest_rows (which reads no table: the batch
/// sink's INSERT reads its rows from it).
unsafe fn volatile(node: *mut pg_sys::Node) -> bool {
    // SAFETY: node is a live query or expression tree (caller's contract); the walker is
    // PostgreSQL's contain_volatile_functions_not_nextval with one more exception.
    unsafe {
        !node.is_null()
            && crate::shim::vx_insert_reads_volatile(
                node,
                crate::ingest::ingest_rows_oid().unwrap_or(pg_sys::InvalidOid),
            )
    }
}

/// Why VecInsert cannot write the rows of `mtp`, if it cannot.
unsafe fn refusal(root: *mut pg_sys::PlannerInfo, mtp: *mut pg_sys::ModifyTablePath) -> Option<String> {
    // SAFETY: root and mtp are the planner's live data (caller's contract); the result relation
    // is locked by the parser and opened here without a lock of our own.
    unsafe {
        if !settings::ENABLE_INSERT.get() {
            return Some("vexec.enable_insert is off".into());
        }
        if !(*mtp).returningLists.is_null() {
            return Some("RETURNING needs the rows one at a time".into());
        }
        if !(*mtp).onconflict.is_null() {
            return Some("ON CONFLICT needs the rows one at a time".into());
        }
        if !(*mtp).withCheckOptionLists.is_null() {
            return Some("WITH CHECK options (row level security, CHECK OPTION views) are not built".into());
        }
        let rtis = int_values((*mtp).resultRelations);
        let [rti] = rtis[..] else {
            return Some("more than one result relation".into());
        };
        let rte = *(*root).simple_rte_array.add(rti as usize);
        match (*rte).relkind as u8 {
            pg_sys::RELKIND_RELATION => {}
            pg_sys::RELKIND_PARTITIONED_TABLE => {
                return Some("routing rows to partitions is not built".into());
            }
            pg_sys::RELKIND_FOREIGN_TABLE => return Some("the target is a foreign table".into()),
            _ => return Some("the target is not a table".into()),
        }
        // The child's row must be the new row, column for column.
        let tlist: Vec<*mut pg_sys::TargetEntry> = list_ptrs((*root).processed_tlist).collect();
        if tlist.iter().any(|&te| (*te).resjunk) {
            return Some("the new rows carry extra columns".into());
        }
        let rel = pg_sys::relation_open((*rte).relid, pg_sys::NoLock as i32);
        let why = (|| {
            if tlist.len() != (*(*rel).rd_att).natts as usize {
                return Some("the new rows do not have the table's columns".into());
            }
            let td = (*rel).trigdesc;
            if !td.is_null() {
                if (*td).trig_insert_before_row
                    || (*td).trig_insert_after_row
                    || (*td).trig_insert_instead_row
                {
                    return Some(
                        "the table has row-level INSERT triggers (foreign keys and deferrable constraints use them)"
                            .into(),
                    );
                }
                if (*td).trig_insert_new_table {
                    return Some("a statement trigger reads the inserted rows as a transition table".into());
                }
            }
            if (*(*rel).rd_tableam).multi_insert.is_none() {
                return Some("the table's access method has no multi_insert".into());
            }
            None
        })();
        pg_sys::relation_close(rel, pg_sys::NoLock as i32);
        if why.is_some() {
            return why;
        }
        let glob = (*root).glob;
        let sub_volatile = list_ptrs::<pg_sys::PlannerInfo>((*glob).subroots)
            .any(|sub| !sub.is_null() && volatile((*sub).parse.cast()));
        if volatile((*root).parse.cast()) || sub_volatile {
            return Some(
                "a volatile function (other than nextval) could read the table while it is written".into(),
            );
        }
        None
    }
}

unsafe fn consider(root: *mut pg_sys::PlannerInfo, output_rel: *mut pg_sys::RelOptInfo, mode: Mode) {
    // SAFETY: the planner's live data at UPPERREL_FINAL (caller's contract); paths are made in the
    // planner's context.
    unsafe {
        let paths: Vec<*mut pg_sys::ModifyTablePath> = list_ptrs::<pg_sys::Path>((*output_rel).pathlist)
            .filter(|&p| {
                (*p).type_ == pg_sys::NodeTag::T_ModifyTablePath
                    && (*(p as *mut pg_sys::ModifyTablePath)).operation == pg_sys::CmdType::CMD_INSERT
            })
            .map(|p| p as *mut pg_sys::ModifyTablePath)
            .collect();
        let Some(&first) = paths.first() else { return };
        let rti = int_values((*first).resultRelations).first().copied().unwrap_or(0);
        let target = if rti > 0 {
            let rte = *(*root).simple_rte_array.add(rti as usize);
            let name = pg_sys::get_rel_name((*rte).relid);
            let name =
                if name.is_null() { "?".into() } else { std::ffi::CStr::from_ptr(name).to_string_lossy() };
            format!("into {name}")
        } else {
            "INSERT".into()
        };
        if let Some(why) = refusal(root, first) {
            report::record(move || alternative(&target, Verdict::NotPossible(why), None, None));
            return;
        }
        let mut built = Vec::new();
        for &mtp in &paths {
            let sub = (*mtp).subpath;
            let batch_columns = super::vector_node(sub)
                .map(|_| list_ptrs::<pg_sys::Node>((*(*sub).pathtarget).exprs).count());
            let mut inputs = vec![(sub, batch_columns)];
            if let Some(scan) = whole_tuple_source(root, rti, sub) {
                inputs.push((scan, None));
            }
            for (input, batch_columns) in inputs {
                let (path, cost, id) = vec_insert_path(mtp, input, batch_columns, rti);
                let row_cost = (*mtp).path.total_cost;
                let mut alt = alternative(&target, Verdict::Chosen, Some(row_cost), Some(cost));
                alt.details.push(match (batch_columns, input == sub) {
                    (Some(n), _) => format!("input: batches of {n} columns"),
                    (None, false) => "input: Seq Scan's heap tuples, copied whole".into(),
                    (None, true) => "input: rows".into(),
                });
                built.push((mtp, path, alt, id));
            }
        }
        match mode {
            Mode::Off => {}
            Mode::Explain => {
                for (_, _, mut alt, _) in built {
                    alt.verdict = Verdict::NotChosen("explain mode".into());
                    report::record(move || alt);
                }
            }
            Mode::Auto | Mode::Force => {
                if mode == Mode::Force {
                    for &row in &paths {
                        (*row).path.disabled_nodes += 1;
                    }
                }
                for (_, ours, alt, id) in built {
                    pg_sys::add_path(output_rel, ours.cast());
                    report::record_candidate(id, "another path was cheaper", move || alt);
                }
            }
        }
    }
}

/// ModifyTable `mtp` over a VecInsert that writes the rows of `input`;
/// its total cost and report id.
unsafe fn vec_insert_path(
    mtp: *mut pg_sys::ModifyTablePath,
    input: *mut pg_sys::Path,
    batch_columns: Option<usize>,
    rti: i32,
) -> (*mut pg_sys::ModifyTablePath, f64, u32) {
    // SAFETY: the planner's live paths (caller's contract); made in the planner's context.
    unsafe {
        let c = cost::insert(&*input, batch_columns);
        let id = report::next_id();
        let data = InsertPlanData { report_id: id as i32, sets_tag: (*mtp).canSetTag };
        let cp = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
        let p = &mut (*cp).path;
        p.type_ = pg_sys::NodeTag::T_CustomPath;
        p.pathtype = pg_sys::NodeTag::T_CustomScan;
        p.parent = (*input).parent;
        p.pathtarget = (*input).pathtarget;
        p.rows = (*input).rows;
        p.disabled_nodes = (*input).disabled_nodes;
        p.startup_cost = c.startup;
        p.total_cost = c.total;
        (*cp).custom_paths = pg_sys::lappend(std::ptr::null_mut(), input.cast());
        // The plan's data, then the result relation, which the plan keeps
        // as its scan relation (plan_custom_path).
        let mut private = data.encode();
        private.push(rti);
        (*cp).custom_private = crate::pgutil::int_list(&private);
        (*cp).methods = &PATH_METHODS.0;

        // The same ModifyTable, over VecInsert.
        let copy =
            pg_sys::palloc(std::mem::size_of::<pg_sys::ModifyTablePath>()) as *mut pg_sys::ModifyTablePath;
        std::ptr::copy_nonoverlapping(mtp, copy, 1);
        (*copy).subpath = cp.cast();
        (*copy).path.startup_cost = c.startup;
        (*copy).path.total_cost = c.total;
        (copy, c.total, id)
    }
}

/// For `INSERT INTO t SELECT * FROM s` (a filter allowed) where s's rows are
/// t's rows as they lie on disk, a Seq Scan of s whose heap tuples the
/// writer copies whole: the same column count, types and order, no dropped
/// columns and no column added with a default that old tuples lack (in
/// either table: a short tuple reads as the table's missing values). Not
/// offered when `sub` is already such a Seq Scan.
unsafe fn whole_tuple_source(
    root: *mut pg_sys::PlannerInfo,
    target_rti: i32,
    sub: *mut pg_sys::Path,
) -> Option<*mut pg_sys::Path> {
    // SAFETY: the planner's live data (caller's contract); both relations are locked by the parser.
    unsafe {
        let rel = (*sub).parent;
        if (*sub).pathtype == pg_sys::NodeTag::T_SeqScan
            || rel.is_null()
            || (*rel).reloptkind != pg_sys::RelOptKind::RELOPT_BASEREL
            || (*rel).rtekind != pg_sys::RTEKind::RTE_RELATION
            || !(*rel).lateral_relids.is_null()
        {
            return None;
        }
        let src_rti = (*rel).relid;
        let rte = *(*root).simple_rte_array.add(src_rti as usize);
        if (*rte).inh || !(*rte).tablesample.is_null() || (*rte).relkind as u8 != pg_sys::RELKIND_RELATION {
            return None;
        }
        // The new row and the scan's row are both s's columns 1..n, in order.
        let plain = |exprs: Vec<*mut pg_sys::Node>| {
            exprs.iter().enumerate().all(|(i, &e)| {
                let v = e as *mut pg_sys::Var;
                (*e).type_ == pg_sys::NodeTag::T_Var
                    && (*v).varno == src_rti as i32
                    && (*v).varlevelsup == 0
                    && (*v).varattno as usize == i + 1
            })
        };
        let tlist: Vec<*mut pg_sys::Node> =
            list_ptrs::<pg_sys::TargetEntry>((*root).processed_tlist).map(|te| (*te).expr.cast()).collect();
        let scan: Vec<*mut pg_sys::Node> = list_ptrs((*(*rel).reltarget).exprs).collect();
        if !plain(tlist.clone()) || !plain(scan.clone()) || tlist.len() != scan.len() {
            return None;
        }
        let target = *(*root).simple_rte_array.add(target_rti as usize);
        let src = pg_sys::relation_open((*rte).relid, pg_sys::NoLock as i32);
        let dst = pg_sys::relation_open((*target).relid, pg_sys::NoLock as i32);
        let (sd, dd) = ((*src).rd_att, (*dst).rd_att);
        let same = (*sd).natts as usize == tlist.len()
            && (*dd).natts as usize == tlist.len()
            && (0..(*sd).natts).all(|i| {
                let (s, d) = (pg_sys::TupleDescAttr(sd, i), pg_sys::TupleDescAttr(dd, i));
                !(*s).attisdropped
                    && !(*d).attisdropped
                    && !(*s).atthasmissing
                    && !(*d).atthasmissing
                    && (*s).atttypid == (*d).atttypid
                    && (*s).attlen == (*d).attlen
                    && (*s).attalign == (*d).attalign
            });
        pg_sys::relation_close(dst, pg_sys::NoLock as i32);
        pg_sys::relation_close(src, pg_sys::NoLock as i32);
        same.then(|| pg_sys::create_seqscan_path(root, rel, std::ptr::null_mut(), 0))
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
        let child = list_ptrs::<pg_sys::Plan>(custom_plans).next().expect("VecInsert has a child plan");
        // The scan tuple is the child's row (the new row, column by column).
        let scan_tlist = super::child_row_tlist(child);
        let cscan = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomScan>()) as *mut pg_sys::CustomScan;
        (*cscan).scan.plan.type_ = pg_sys::NodeTag::T_CustomScan;
        (*cscan).scan.plan.targetlist = tlist;
        (*cscan).custom_scan_tlist = scan_tlist;
        (*cscan).custom_plans = custom_plans;
        // The result relation is the scan relation: set_plan_refs renumbers
        // it when it flattens the range tables (a WITH's INSERT is planned
        // on its own), and EXPLAIN names it. The scan tuple stays the
        // child's row (custom_scan_tlist).
        let mut private = list_ints((*best_path).custom_private);
        let rti = private.pop().expect("VecInsert's path names its result relation");
        (*cscan).custom_private = crate::pgutil::int_list(&private);
        (*cscan).scan.scanrelid = rti as pg_sys::Index;
        (*cscan).flags = (*best_path).flags;
        (*cscan).methods = crate::exec::insert::scan_methods();
        cscan as *mut pg_sys::Plan
    }
}
