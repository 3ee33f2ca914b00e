//! The vector executor nodes (CustomScan executors).

pub mod agg;
pub(crate) mod collate;
pub mod fmgr_agg;
pub(crate) mod host_keys;
pub mod input;
pub mod join;
pub mod project;
pub mod scan;
pub mod sort;
pub mod spill;

use pgrx::pg_sys;

/// Check before a cast of `node` to a vexec node's own struct: it must be a
/// CustomScanState run by `methods` (the node kind's CustomExecMethods) whose
/// Rust state exists. A wrong cast is a bug; it becomes an ERROR here
/// (through the caller's `#[pg_guard]`) instead of a write through a
/// pointer of another node's memory.
///
/// # Safety
/// `node` is a valid PlanState.
pub(crate) unsafe fn check_node(
    node: *const pg_sys::CustomScanState,
    methods: *const pg_sys::CustomExecMethods,
    what: &str,
) {
    // SAFETY: every PlanState starts with its tag; `methods` is read only
    // once the tag says it is there.
    let ok = unsafe {
        (*node).ss.ps.type_ == pg_sys::NodeTag::T_CustomScanState && std::ptr::eq((*node).methods, methods)
    };
    if !ok {
        pgrx::error!("vexec internal error: a plan node taken for a {what} is not one");
    }
}
