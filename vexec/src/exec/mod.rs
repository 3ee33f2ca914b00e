//! The vector executor nodes (CustomScan executors).
//!
//! Operators, each in its own module, never importing one another or the
//! planner: `scan` (VecScan), `agg/` (VecAgg), `join/` (VecHashJoin),
//! `sort` (VecSort), `insert` (VecInsert). What they share: `node` (the node framework and the
//! batch pipe), `input` (a child read as batches or slots), `project`
//! (target lists over batches), `spill` (temporary files), `host` (kernel
//! evaluation's PostgreSQL side), `host_keys` and `collate` (keys PostgreSQL
//! compares). Names and splits the planner shares are in `crate::nodes`;
//! catalog lookups in `crate::catalog`.

pub mod agg;
pub(crate) mod collate;
pub(crate) mod host;
pub(crate) mod host_keys;
pub mod input;
pub mod insert;
pub mod join;
pub mod layout;
pub mod node;
pub mod project;
pub mod scan;
pub mod sort;
pub mod spill;

/// Register every node kind (at load time): their plan methods by name and
/// their executor methods for the batch pipe (`node::batch_source`).
pub fn register() {
    let (scan_plan, scan) = scan::methods();
    let (join_plan, join) = join::methods();
    let (sort_plan, sort) = sort::methods();
    let (insert_plan, insert) = insert::methods();
    let (agg_plans, agg) = agg::methods();
    let mut plans = vec![scan_plan, join_plan, sort_plan, insert_plan];
    plans.extend(agg_plans);
    node::register(&plans, vec![scan, join, sort, insert, agg]);
}
