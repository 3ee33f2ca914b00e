//! The vector executor nodes (CustomScan executors).

pub mod scan;
