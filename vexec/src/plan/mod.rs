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
