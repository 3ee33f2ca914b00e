//! vexec_core: the part of vexec that never touches `pg_sys`.
//!
//! Batch layouts, kernels, the expression evaluator and (as they arrive) hash
//! tables, sort and numeric arithmetic live here, so that plain `cargo test`
//! and micro-benchmarks exercise them without a server. The pgrx extension
//! crate `vexec` binds them to PostgreSQL.

pub mod agg;
pub mod arrow;
pub mod batch;
pub mod cost;
pub mod expr;
pub mod flight;
pub mod join;
pub mod numeric;
pub mod packs;
pub mod plan_data;
pub mod report;
pub mod sort;
pub mod spill;
