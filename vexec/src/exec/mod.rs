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
