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

/// Which part of an aggregation a VecAgg node does. PostgreSQL's parallel
/// aggregation is Finalize Agg over Gather over Partial Agg; VecAgg's is
/// the same shape with its own partial states (`Accumulator::serialize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggSplit {
    /// The whole aggregation over a VecScan.
    Serial = 0,
    /// One participant's share: group keys and a bytea state per aggregate.
    Partial = 1,
    /// Combines the partial states read from a row child (Gather).
    Finalize = 2,
}

impl AggSplit {
    pub fn from_code(code: i32) -> AggSplit {
        match code {
            1 => AggSplit::Partial,
            2 => AggSplit::Finalize,
            _ => AggSplit::Serial,
        }
    }
}
