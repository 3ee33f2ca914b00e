//! SQL over the batch sink: `vexec.arrow_insert(table, stream)` inserts an
//! Arrow IPC stream (as `vexec.arrow_ipc` writes one, or pyarrow's
//! `RecordBatchStreamWriter`) into a table, and `vexec.ingest_rows`, the
//! function the sink's INSERT reads its rows from (`rows.rs`).

use arrow_ipc::reader::StreamReader;
use pgrx::prelude::*;

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
    let reader = StreamReader::try_new(std::io::Cursor::new(stream.to_vec()), None).unwrap_or_else(|e| {
        super::fail(
            PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
            format!("not an Arrow IPC stream: {e}"),
        )
    });
    let schema = reader.schema();
    let batches = Batches { schema, batches: Box::new(reader.map(|b| b.map_err(|e| e.to_string()))) };
    let oid = target.oid();
    drop(target);
    super::insert(oid, batches) as i64
}
