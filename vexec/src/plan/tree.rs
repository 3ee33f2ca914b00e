//! Walking finished plans, and showing vexec's children to other
//! extensions' plan walkers.
//!
//! A CustomScan keeps its children in `custom_plans`, which PostgreSQL's
//! executor and EXPLAIN use. Other extensions often find nodes by walking
//! `lefttree`/`righttree` only: Citus does, to find its own scan below a
//! node of the plan it built (which workers need an intermediate result, and
//! whether a plan is distributed at all). So once a plan is finished, each
//! vexec node also points `lefttree` (and `righttree`, for a join's second
//! child) at its children: the same nodes, not copies. It cannot be done
//! earlier: set_plan_references would then visit each child twice.

use pgrx::pg_sys;

use crate::pgutil::list_ptrs;

/// The children of a plan node, each once: a CustomScan's `custom_plans`
/// (a vexec node's `lefttree`/`righttree` repeat them), the plan lists of
/// Append, MergeAppend and BitmapAnd/Or, a SubqueryScan's subplan, and
/// `lefttree`/`righttree` otherwise.
///
/// # Safety
/// `plan` is a live plan node.
pub unsafe fn children(plan: *mut pg_sys::Plan) -> Vec<*mut pg_sys::Plan> {
    use pg_sys::NodeTag::*;
    // SAFETY: this function's contract; each cast follows the node's tag.
    unsafe {
        let mut out: Vec<*mut pg_sys::Plan> = match (*plan).type_ {
            T_CustomScan => return list_ptrs((*(plan as *mut pg_sys::CustomScan)).custom_plans).collect(),
            T_Append => list_ptrs((*(plan as *mut pg_sys::Append)).appendplans).collect(),
            T_MergeAppend => list_ptrs((*(plan as *mut pg_sys::MergeAppend)).mergeplans).collect(),
            T_SubqueryScan => vec![(*(plan as *mut pg_sys::SubqueryScan)).subplan],
            T_BitmapAnd => list_ptrs((*(plan as *mut pg_sys::BitmapAnd)).bitmapplans).collect(),
            T_BitmapOr => list_ptrs((*(plan as *mut pg_sys::BitmapOr)).bitmapplans).collect(),
            _ => vec![],
        };
        out.extend([(*plan).lefttree, (*plan).righttree].into_iter().filter(|p| !p.is_null()));
        out
    }
}

/// Every node of a finished plan (its tree and its subplans), parents first.
///
/// # Safety
/// `pstmt` is a finished plan.
pub unsafe fn nodes(pstmt: *mut pg_sys::PlannedStmt) -> Vec<*mut pg_sys::Plan> {
    // SAFETY: this function's contract.
    unsafe {
        let mut todo: Vec<*mut pg_sys::Plan> = list_ptrs::<pg_sys::Plan>((*pstmt).subplans).collect();
        todo.push((*pstmt).planTree);
        let mut out = Vec::new();
        while let Some(p) = todo.pop() {
            if p.is_null() {
                continue;
            }
            out.push(p);
            todo.extend(children(p));
        }
        out
    }
}

/// Point each vexec node's `lefttree`/`righttree` at its `custom_plans`.
///
/// # Safety
/// `pstmt` is a finished plan (set_plan_references has run).
pub unsafe fn expose_children(pstmt: *mut pg_sys::PlannedStmt) {
    // SAFETY: this function's contract; a vexec CustomScan's methods name it.
    unsafe {
        if pstmt.is_null() || (*pstmt).commandType == pg_sys::CmdType::CMD_UTILITY {
            return;
        }
        for p in nodes(pstmt) {
            if (*p).type_ != pg_sys::NodeTag::T_CustomScan {
                continue;
            }
            let cscan = p as *mut pg_sys::CustomScan;
            let name = std::ffi::CStr::from_ptr((*(*cscan).methods).CustomName);
            if crate::nodes::display_name(name).is_none() {
                continue;
            }
            let kids: Vec<*mut pg_sys::Plan> = list_ptrs((*cscan).custom_plans).collect();
            (*p).lefttree = kids.first().copied().unwrap_or(std::ptr::null_mut());
            (*p).righttree = kids.get(1).copied().unwrap_or(std::ptr::null_mut());
        }
    }
}
