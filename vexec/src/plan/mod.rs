//! The planner side of vexec: what is considered, what it costs, what is
//! chosen, and how EXPLAIN (VEXEC) reports it.

pub mod agg;
pub mod cost;
pub mod explain;
pub mod join;
pub mod report;
pub mod require;
pub mod scan;
pub mod sort;
