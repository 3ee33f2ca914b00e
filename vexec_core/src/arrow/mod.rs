//! Arrow egress, the pure half: PostgreSQL's types mapped to Arrow's
//! (`types`), values converted exactly (`convert`: epochs shifted, numerics
//! as Decimal128), rows gathered into RecordBatches and written as an Arrow
//! IPC stream (`stream`). The server half (`vexec/src/egress.rs`) reads a
//! query's rows and hands each value here; the mapping is documented in
//! docs/arrow.md.

pub mod convert;
pub mod stream;
pub mod types;

pub use convert::Unrepresentable;
pub use stream::{BatchBuilder, IpcStream, Value};
pub use types::{ColumnType, PgColumn};
