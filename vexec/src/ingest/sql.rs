//! SQL over the batch sink: `vexec.arrow_insert(table, stream)` inserts an
//! Arrow IPC stream (as `vexec.arrow_ipc` writes one, or pyarrow's
//! `RecordBatchStreamWriter`) into a table, and `vexec.ingest_rows`, the
//! function the sink's INSERT reads its rows from (`rows.rs`).

use pgrx::prelude::*;
use vexec_core::arrow::stream::IpcReader;

use super::Batches;

extension_sql!(
    r#"
CREATE FUNCTION vexec.ingest_rows(handle bigint) RETURNS SETOF record
    LANGUAGE c VOLATILE PARALLEL UNSAFE ROWS 1000
    AS 'MODULE_PATHNAME', 'vexec_ingest_rows';
"#,
    name = "ingest_rows"
);

/// Insert the rows of the Arrow IPC stream `stream` into `target`, as the
/// current role (its fields name the columns); returns how many.
#[pg_extern(volatile, parallel_unsafe)]
fn arrow_insert(target: pgrx::PgRelation, stream: &[u8]) -> i64 {
    let reader = IpcReader::open(stream.to_vec())
        .unwrap_or_else(|e| super::fail(PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION, e));
    let batches = Batches { schema: reader.schema(), batches: Box::new(reader) };
    let oid = target.oid();
    drop(target);
    super::insert(oid, batches) as i64
}
