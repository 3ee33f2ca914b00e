//! Aggregation on batches: the group table of a hashed aggregate and the
//! vectorized transitions. The executor node (VecAgg) binds them to
//! PostgreSQL's aggregates by OID; everything here is pure computation.

pub mod accum;
pub mod collated;
pub mod distinct_rows;
pub mod encoded;
pub mod groups;
mod int_index;
pub mod state_bytes;

pub use accum::{Accumulator, AggError, AggResult, MomentsFinal, TextOrder, Transition};
pub use groups::{interval_span, table_layout, GroupTable, KeyKind, NO_GROUP};
