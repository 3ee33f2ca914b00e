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

pub use vexec_core::plan_data::AggSplit;
