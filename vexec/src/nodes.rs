//! What the planner and the executor share about vexec's nodes: their
//! names (the CustomScan names EXPLAIN shows and parallel workers look up)
//! and VecAgg's splits. The planner builds plans with these; the executor
//! never reads the planner's modules.

use std::ffi::CStr;

pub const SCAN: &CStr = c"VecScan";
pub const AGG: &CStr = c"VecAgg";
/// VecAgg's partial and final plans have names of their own, so EXPLAIN
/// calls them "Partial Vec Aggregate" and "Finalize Vec Aggregate" as it
/// calls PostgreSQL's nodes.
pub const AGG_PARTIAL: &CStr = c"VecAggPartial";
pub const AGG_FINALIZE: &CStr = c"VecAggFinalize";
pub const HASH_JOIN: &CStr = c"VecHashJoin";
pub const SORT: &CStr = c"VecSort";
pub const INSERT: &CStr = c"VecInsert";

/// The name text EXPLAIN gives each node in place of PostgreSQL's
/// "Custom Scan (VecScan)", so plans read like PostgreSQL's own ("Vec Seq
/// Scan on t", "Parallel Vec Seq Scan on t"). Structured formats keep the
/// "Custom Scan" node type with "Custom Plan Provider": "VecScan".
pub fn display_name(custom_name: &CStr) -> Option<&'static str> {
    [
        (SCAN, "Vec Seq Scan"),
        (AGG, "Vec Aggregate"),
        (AGG_PARTIAL, "Partial Vec Aggregate"),
        (AGG_FINALIZE, "Finalize Vec Aggregate"),
        (SORT, "Vec Sort"),
        (HASH_JOIN, "Vec Hash Join"),
        (INSERT, "Vec Insert"),
    ]
    .into_iter()
    .find(|(name, _)| *name == custom_name)
    .map(|(_, display)| display)
}

pub use vexec_core::plan_data::AggSplit;
