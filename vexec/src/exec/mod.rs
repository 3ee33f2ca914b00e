//! The vector executor nodes (CustomScan executors).

pub mod agg;
pub(crate) mod collate;
pub mod fmgr_agg;
pub(crate) mod host_keys;
pub mod input;
pub mod join;
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
    let (agg_plans, agg) = agg::methods();
    let mut plans = vec![scan_plan, join_plan, sort_plan];
    plans.extend(agg_plans);
    node::register(&plans, vec![scan, join, sort, agg]);
}
