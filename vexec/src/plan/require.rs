//! `vexec.debug_require_vector`: in force mode, planning fails when the
//! plan keeps a row node of a kind vexec has a vector node for (Seq Scan,
//! Hash Join, Aggregate, Sort), so a test notices a scan, join, aggregate
//! or sort that stopped being vectorized. The error lists the nodes and
//! the reasons the planner recorded (what EXPLAIN (VEXEC) shows).

use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::report::{Report, Verdict};

use crate::pgutil::list_ptrs;

/// The row nodes of `plan` (and below) that vexec could replace.
unsafe fn row_nodes(pstmt: *mut pg_sys::PlannedStmt, plan: *mut pg_sys::Plan, out: &mut Vec<String>) {
    // SAFETY: pstmt is a finished plan and plan one of its nodes (or null).
    unsafe {
        if plan.is_null() {
            return;
        }
        use pg_sys::NodeTag::*;
        match (*plan).type_ {
            T_SeqScan => {
                let relid = (*(plan as *mut pg_sys::Scan)).scanrelid;
                let rte = pg_sys::list_nth((*pstmt).rtable, relid as i32 - 1) as *mut pg_sys::RangeTblEntry;
                let name = if rte.is_null() || (*rte).eref.is_null() {
                    "?".into()
                } else {
                    std::ffi::CStr::from_ptr((*(*rte).eref).aliasname).to_string_lossy().into_owned()
                };
                out.push(format!("Seq Scan on {name}"));
            }
            T_HashJoin => out.push("Hash Join".into()),
            T_Agg => out.push("Aggregate".into()),
            T_Sort => out.push("Sort".into()),
            T_IncrementalSort => out.push("Incremental Sort".into()),
            _ => {}
        }
        for c in super::tree::children(plan) {
            row_nodes(pstmt, c, out);
        }
    }
}

/// Raise an error if the finished plan keeps row nodes vexec could replace.
///
/// # Safety
/// `pstmt` is a finished plan.
pub unsafe fn check(pstmt: *mut pg_sys::PlannedStmt, report: Option<&Report>) {
    // SAFETY: this function's contract: pstmt is a finished plan.
    unsafe {
        if (*pstmt).commandType == pg_sys::CmdType::CMD_UTILITY {
            return;
        }
        let mut nodes = Vec::new();
        row_nodes(pstmt, (*pstmt).planTree, &mut nodes);
        for sub in list_ptrs::<pg_sys::Plan>((*pstmt).subplans) {
            row_nodes(pstmt, sub, &mut nodes);
        }
        if nodes.is_empty() {
            return;
        }
        let reasons: Vec<String> = report
            .map(|r| {
                r.alternatives
                    .iter()
                    .filter_map(|a| match &a.verdict {
                        Verdict::NotPossible(why) => Some(format!("{} {}: {why}", a.node, a.target)),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        ereport!(
            PgLogLevel::ERROR,
            PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            format!("vexec.debug_require_vector: not vectorized: {}", nodes.join(", ")),
            if reasons.is_empty() {
                "no vector alternative was refused".to_string()
            } else {
                reasons.join("; ")
            }
        );
    }
}
