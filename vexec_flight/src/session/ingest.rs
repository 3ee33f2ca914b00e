//! Flight SQL's bulk ingest in the session: the target table found,
//! created or replaced, then the upload, read from the listener piece by
//! piece, inserted through vexec's batch sink, all as one statement.

use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use arrow_array::ffi::FFI_ArrowArray;
use arrow_array::RecordBatch;
use arrow_buffer::Buffer;
use arrow_flight::FlightData;
use arrow_schema::{ArrowError, Schema, SchemaRef};
use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::arrow::abi::IngestSourceV1;
use vexec_core::arrow::stream::{batch_to_c, schema_to_c};
use vexec_core::flight::ingest as ingest_sql;
use vexec_core::flight::wire::{self, IfExists, IngestTarget, Request, Response};

use super::{arrow_api, error_response, statement, Inbox};

/// Flight SQL's bulk ingest: find (or create, or replace) the target table,
/// then insert the upload through vexec's batch sink, all as one statement
/// (an error leaves nothing, a table created by it included).
pub(super) fn ingest(target: &IngestTarget, upload: &mut Upload) -> Response {
    let name = match ingest_sql::target_name(target) {
        Ok(name) => name,
        Err((sqlstate, message)) => return error_response(sqlstate, message),
    };
    let activity = CString::new(format!("-- vexec_flight ingest\nINSERT INTO {name}")).unwrap_or_default();
    let upload_ptr: *mut Upload = upload;
    // SAFETY: inside the statement's transaction, on the main thread; upload outlives the call.
    let r = statement(&activity, || unsafe {
        let upload = &mut *upload_ptr;
        let schema = upload.schema();
        let lookup = || {
            Spi::get_one_with_args::<pg_sys::Oid>("SELECT to_regclass($1)::oid", &[name.as_str().into()])
                .unwrap_or_else(|e| error!("vexec_flight: {e}"))
        };
        let create = || {
            let sql = ingest_sql::create_table(&name, &schema)
                .unwrap_or_else(|e| raise(PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED, e.to_string()));
            Spi::run(&sql).unwrap_or_else(|e| error!("vexec_flight: {e}"));
        };
        match (lookup(), target.if_exists) {
            (Some(_), IfExists::Fail) => {
                raise(PgSqlErrorCode::ERRCODE_DUPLICATE_TABLE, format!("relation {name} already exists"))
            }
            (Some(_), IfExists::Replace) => {
                Spi::run(&format!("DROP TABLE {name}")).unwrap_or_else(|e| error!("vexec_flight: {e}"));
                create();
            }
            (Some(_), IfExists::Append) => {}
            (None, _) if target.create => create(),
            (None, _) => {
                raise(PgSqlErrorCode::ERRCODE_UNDEFINED_TABLE, format!("relation {name} does not exist"))
            }
        }
        let Some(table) = lookup() else { error!("vexec_flight: the table {name} is gone") };
        let c_schema = schema_to_c(&schema).unwrap_or_else(|e| error!("vexec_flight: {e}"));
        let source = IngestSourceV1 { ctx: upload_ptr.cast(), next: upload_next };
        let api = arrow_api();
        // As in `run`: vexec's ERROR becomes a panic here.
        pg_sys::ffi::pg_guard_ffi_boundary(|| (api.insert)(table.to_u32(), &c_schema, &source))
    });
    r.map_or_else(|e| e, |rows| Response::Done { rows })
}

/// An ingest's upload, read from the listener piece by piece: the schema,
/// then the batches, to `PieceEnd` (or `PieceAbort`).
pub(super) struct Upload<'a> {
    inbox: &'a Inbox,
    schema: Option<SchemaRef>,
    ended: bool,
    /// The last batch's body buffer, reused for the next when the insert
    /// has let go of that batch (fresh pages for every batch cost page faults).
    spare: Option<Buffer>,
}

impl<'a> Upload<'a> {
    pub(super) fn new(inbox: &'a Inbox) -> Upload<'a> {
        Upload { inbox, schema: None, ended: false, spare: None }
    }

    /// `read` the next piece of the upload, its IPC header and body in
    /// place (None at its end); an ERROR for a broken upload.
    fn piece<R>(&mut self, read: impl FnOnce(&[u8], &[u8]) -> R) -> Option<R> {
        if self.ended {
            return None;
        }
        let protocol = |m: &str| -> ! { raise(PgSqlErrorCode::ERRCODE_PROTOCOL_VIOLATION, m.to_string()) };
        let ended = &mut self.ended;
        self.inbox.read(false, |msg| {
            let Some(msg) = msg else {
                *ended = true;
                protocol("vexec_flight: the session ended during an upload")
            };
            if let Some(piece) = wire::piece_of(msg) {
                let Ok((header, body)) = piece else {
                    *ended = true;
                    protocol("vexec_flight: a malformed upload")
                };
                return Some(read(header, body));
            }
            *ended = true;
            match Request::decode(msg) {
                Ok(Request::PieceEnd) => None,
                Ok(Request::PieceAbort { sqlstate, message }) => {
                    let code = wire::sqlstate_code(&sqlstate).unwrap_or(0);
                    raise(PgSqlErrorCode::from(code), message)
                }
                _ => protocol("vexec_flight: a malformed upload"),
            }
        })
    }

    /// The upload's schema (its first piece).
    fn schema(&mut self) -> SchemaRef {
        let decoded = self.piece(|header, _| {
            let data = FlightData { data_header: header.to_vec().into(), ..Default::default() };
            std::panic::catch_unwind(AssertUnwindSafe(|| Schema::try_from(&data)))
        });
        let schema = match decoded {
            None => raise(
                PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
                "an upload without a schema".into(),
            ),
            Some(Ok(Ok(schema))) => Arc::new(schema),
            Some(Ok(Err(e))) => raise(
                PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
                format!("the upload does not start with an Arrow schema: {e}"),
            ),
            Some(Err(_)) => raise(
                PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
                "the upload does not start with an Arrow schema".into(),
            ),
        };
        self.schema = Some(Arc::clone(&schema));
        schema
    }

    /// The next non-empty batch; None at the end.
    fn batch(&mut self) -> Option<RecordBatch> {
        let schema = self.schema.clone().expect("the schema is read first");
        loop {
            // arrow-rs panics on some malformed buffers rather than erring: both are the
            // client's malformed upload.
            let mut spare = self.spare.take();
            let decoded = self.piece(|header, body| {
                let body = match spare.take().map(Buffer::into_mutable) {
                    Some(Ok(mut reused)) => {
                        reused.clear();
                        reused.extend_from_slice(body);
                        Buffer::from(reused)
                    }
                    _ => Buffer::from(body),
                };
                spare = Some(body.clone());
                std::panic::catch_unwind(AssertUnwindSafe(|| {
                    record_batch(header, &body, Arc::clone(&schema))
                }))
            })?;
            self.spare = spare;
            let batch = match decoded {
                Ok(Ok(batch)) => batch,
                Ok(Err(e)) => raise(
                    PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
                    format!("a malformed Arrow batch in the upload: {e}"),
                ),
                Err(_) => raise(
                    PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
                    "a malformed Arrow batch in the upload: its buffers do not fit its body".into(),
                ),
            };
            if batch.num_rows() > 0 {
                return Some(batch);
            }
        }
    }

    /// Read what is left of the upload (after an error), so the next
    /// request starts where the listener's next one does.
    pub(super) fn drain(&mut self) {
        while !self.ended {
            match self.inbox.receive(true) {
                Some(Ok(Request::Piece { .. })) => {}
                _ => self.ended = true,
            }
        }
    }
}

/// A record batch message (`header`, `body`) of `schema`, as arrow-flight's
/// `flight_data_to_arrow_batch` reads it, but from a body already in an
/// (aligned) Arrow buffer: copied once from the session's queue.
fn record_batch(header: &[u8], body: &Buffer, schema: SchemaRef) -> Result<RecordBatch, ArrowError> {
    let message = arrow_ipc::root_as_message(header)
        .map_err(|e| ArrowError::ParseError(format!("Unable to get root as message: {e:?}")))?;
    let batch = message.header_as_record_batch().ok_or_else(|| {
        ArrowError::ParseError("Unable to convert flight data header to a record batch".into())
    })?;
    arrow_ipc::reader::read_record_batch(body, batch, schema, &HashMap::new(), None, &message.version())
}

/// An ERROR with `code`.
fn raise(code: PgSqlErrorCode, message: String) -> ! {
    ereport!(ERROR, code, message);
}

/// `IngestSourceV1::next` over an [`Upload`].
#[pg_guard]
unsafe extern "C-unwind" fn upload_next(ctx: *mut c_void, array: *mut FFI_ArrowArray) -> bool {
    // SAFETY: ctx is the Upload `ingest` passed, live for the insert.
    let upload = unsafe { &mut *ctx.cast::<Upload>() };
    let Some(batch) = upload.batch() else { return false };
    let (c_array, _schema) = batch_to_c(&batch).unwrap_or_else(|e| error!("vexec_flight: {e}"));
    // SAFETY: `array` is the caller's empty struct, which takes ownership (ArrowApiV1::insert).
    unsafe { std::ptr::write(array, c_array) };
    true
}
