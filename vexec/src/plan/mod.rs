//! The planner side of vexec: what is considered, what it costs, what is
//! chosen, and how EXPLAIN (VEXEC) reports it.

pub mod agg;
pub mod cost;
pub mod enabled;
pub mod explain;
pub mod hooks;
pub mod insert;
pub mod join;
pub mod report;
pub mod require;
pub mod scan;
pub mod sort;
pub mod tree;

use std::ffi::CStr;

use crate::pgutil::list_ptrs;
use pgrx::pg_sys;

/// The path a projection path projects (through any number of them).
///
/// # Safety
/// `path` is a valid path.
pub unsafe fn projected(mut path: *mut pg_sys::Path) -> *mut pg_sys::Path {
    // SAFETY: this function's contract: path is a valid path; a ProjectionPath's subpath is one
    // too.
    unsafe {
        while (*path).type_ == pg_sys::NodeTag::T_ProjectionPath {
            path = (*(path as *mut pg_sys::ProjectionPath)).subpath;
        }
        path
    }
}

/// The name of a vexec node a path is (under projections), if any.
///
/// # Safety
/// `path` is a valid path.
pub unsafe fn vector_node(path: *mut pg_sys::Path) -> Option<&'static str> {
    // SAFETY: this function's contract: path is a valid path.
    unsafe {
        let p = projected(path);
        if (*p).type_ != pg_sys::NodeTag::T_CustomPath {
            return None;
        }
        let name = CStr::from_ptr((*(*(p as *mut pg_sys::CustomPath)).methods).CustomName);
        [
            (crate::nodes::SCAN, "VecScan"),
            (crate::nodes::AGG, "VecAgg"),
            (crate::nodes::HASH_JOIN, "VecHashJoin"),
        ]
        .into_iter()
        .find(|n| n.0 == name)
        .map(|n| n.1)
    }
}

/// A scan target list that is `child`'s row, column by column (for a node
/// whose scan tuple is its child's output).
///
/// # Safety
/// `child` is a valid plan; called in the planner's memory context.
pub unsafe fn child_row_tlist(child: *mut pg_sys::Plan) -> *mut pg_sys::List {
    // SAFETY: this function's contract: child and its target list are live.
    unsafe {
        let mut tlist: *mut pg_sys::List = std::ptr::null_mut();
        for (i, te) in list_ptrs::<pg_sys::TargetEntry>((*child).targetlist).enumerate() {
            let expr = pg_sys::copyObjectImpl((*te).expr.cast()) as *mut pg_sys::Expr;
            let nte = pg_sys::makeTargetEntry(expr, (i + 1) as i16, std::ptr::null_mut(), (*te).resjunk);
            tlist = pg_sys::lappend(tlist, nte.cast());
        }
        tlist
    }
}
