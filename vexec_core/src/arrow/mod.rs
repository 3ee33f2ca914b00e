//! Arrow egress, the pure half: PostgreSQL's types mapped to Arrow's
//! (`types`), values converted exactly (`convert`: epochs shifted, numerics
//! as Decimal128), values gathered into RecordBatches (`builder`, nested
//! types included) and handed out as an Arrow IPC stream or through the
//! Arrow C Data Interface (`stream`). The server half (`vexec/src/egress/`)
//! receives a query's rows from the executor and hands each value here; the
//! mapping is documented in docs/arrow.md. `ingest` is the other direction:
//! Arrow columns into PostgreSQL types, and `heap_rows` into heap tuples.

pub mod abi;
pub mod builder;
pub mod convert;
pub mod heap_rows;
pub mod ingest;
pub mod stream;
pub mod types;

pub use builder::{BatchBuilder, ColumnBuilder, DatumForm, Value};
pub use convert::Unrepresentable;
pub use stream::IpcStream;
pub use types::{ColumnType, Nested, PgColumn};
