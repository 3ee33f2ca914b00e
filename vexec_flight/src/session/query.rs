//! A session's statements through vexec's Arrow API: their results (or
//! their schemas) to the listener as Flight's IPC pieces, one batch at a
//! time, waiting while the queue is full.

use std::ffi::{c_void, CString};

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::RecordBatch;
use arrow_flight::{FlightData, SchemaAsIpc};
use arrow_ipc::writer::{CompressionContext, DictionaryTracker, IpcDataGenerator, IpcWriteOptions};
use arrow_schema::{Schema, SchemaRef};
use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::arrow::abi::EgressConsumerV1;
use vexec_core::arrow::stream::{batch_from_c, batch_to_c, schema_to_c};
use vexec_core::flight::wire::{self, Response};

use super::{arrow_api, error_response, statement, Kind, Outbox};

/// Run one statement request through vexec's Arrow API: a statement that
/// returns rows streams its batches; any other (DDL, DML without
/// RETURNING, several statements, run as the simple query protocol runs
/// them) answers an empty schema and the rows it processed. `params` (an
/// Arrow IPC stream) holds one execution's values per row. An update's
/// rows (RETURNING) are counted, not sent.
pub(super) fn run(sql: &str, params: &[u8], kind: Kind, out: &Outbox) -> Response {
    let Ok(query) = CString::new(sql) else {
        return error_response("22021", "the statement contains a NUL byte".into());
    };
    let params = match read_params(params) {
        Ok(p) => p,
        Err(e) => return error_response("22P03", format!("malformed Arrow parameters: {e}")),
    };
    let mut sink = Sink {
        out,
        rows: 0,
        dictionaries: DictionaryTracker::new(false),
        schema_sent: false,
        discard: kind == Kind::Update,
    };
    let sink_ptr: *mut Sink = &mut sink;
    // SAFETY: inside the statement's transaction, on the main thread; sink outlives the call.
    let r = statement(&query, || unsafe {
        let api = arrow_api();
        let consumer = EgressConsumerV1 { ctx: sink_ptr.cast(), on_schema, on_batch };
        let param_schema = params
            .as_ref()
            .map(|(schema, _)| schema_to_c(schema).unwrap_or_else(|e| error!("vexec_flight: {e}")));
        // vexec's functions report an ERROR by longjmp: turn it into a
        // panic here, so this frame's state unwinds and the catch runs.
        pg_sys::ffi::pg_guard_ffi_boundary(|| {
            let schema_ptr = param_schema.as_ref().map_or(std::ptr::null(), |s| s as *const FFI_ArrowSchema);
            match (&params, kind) {
                (_, Kind::Describe) => {
                    let mut parameters = FFI_ArrowSchema::empty();
                    (api.describe)(query.as_ptr(), schema_ptr, &consumer, &mut parameters);
                    let parameters =
                        Schema::try_from(&parameters).unwrap_or_else(|e| error!("vexec_flight: {e}"));
                    (*sink_ptr).schema_sent = false;
                    (*sink_ptr).send_schema(&parameters);
                }
                (None, _) => {
                    (*sink_ptr).rows =
                        (api.run)(query.as_ptr(), std::ptr::null_mut(), std::ptr::null(), 0, &consumer);
                }
                (Some((_, batches)), _) => {
                    for batch in batches {
                        let (mut array, _) =
                            batch_to_c(batch).unwrap_or_else(|e| error!("vexec_flight: {e}"));
                        (*sink_ptr).rows += (api.run)(query.as_ptr(), &mut array, schema_ptr, 0, &consumer);
                    }
                }
            }
        });
    });
    r.map_or_else(|e| e, |_| Response::Done { rows: sink.rows })
}

/// The parameter values of a request (an Arrow IPC stream): its schema and
/// batches, None when there are none.
fn read_params(ipc: &[u8]) -> Result<Option<(SchemaRef, Vec<RecordBatch>)>, String> {
    if ipc.is_empty() {
        return Ok(None);
    }
    // The handle came back from the client: untrusted bytes.
    let reader = vexec_core::arrow::stream::IpcReader::open(ipc.to_vec())?;
    let schema = reader.schema();
    let batches = reader.collect::<Result<Vec<_>, _>>()?;
    Ok(Some((schema, batches)))
}

/// A query's result on its way to the listener as Flight IPC pieces.
struct Sink<'a> {
    out: &'a Outbox,
    rows: u64,
    dictionaries: DictionaryTracker,
    /// The schema went out (executions after the first send only batches).
    schema_sent: bool,
    /// An update's: nothing is sent (its RETURNING rows are only counted).
    discard: bool,
}

impl Sink<'_> {
    /// One IPC message (Flight's header and body), into the queue: the
    /// body is copied once, as the second piece of the message.
    fn send(&mut self, header: &[u8], body: &[u8]) {
        let prefix = wire::data_prefix(header, body.len());
        let mut pieces = [
            pg_sys::shm_mq_iovec { data: prefix.as_ptr().cast(), len: prefix.len() },
            pg_sys::shm_mq_iovec { data: body.as_ptr().cast(), len: body.len() },
        ];
        // SAFETY: the worker's attached queue; the pieces point into live buffers for the call.
        // Waits on the worker's latch while the queue is full, checking interrupts.
        let sent = unsafe { pg_sys::shm_mq_sendv(self.out.0, pieces.as_mut_ptr(), 2, false, false) };
        if sent != pg_sys::shm_mq_result::SHM_MQ_SUCCESS {
            error!("vexec_flight: the session ended");
        }
    }

    fn send_schema(&mut self, schema: &Schema) {
        if self.discard || std::mem::replace(&mut self.schema_sent, true) {
            return;
        }
        let data: FlightData = SchemaAsIpc::new(schema, &IpcWriteOptions::default()).into();
        self.send(&data.data_header, &data.data_body);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn on_schema(ctx: *mut c_void, schema: *mut FFI_ArrowSchema) {
    // SAFETY: ctx is the Sink `run` passed; schema is live for the call (abi's contract).
    let (sink, schema) = unsafe { (&mut *ctx.cast::<Sink>(), &*schema) };
    let schema = Schema::try_from(schema).unwrap_or_else(|e| error!("vexec_flight: {e}"));
    sink.send_schema(&schema);
}

#[pg_guard]
unsafe extern "C-unwind" fn on_batch(
    ctx: *mut c_void,
    array: *mut FFI_ArrowArray,
    schema: *mut FFI_ArrowSchema,
) {
    // SAFETY: as on_schema; the array is moved out (its original's release left NULL).
    let (sink, batch) = unsafe {
        let array = std::ptr::replace(array, FFI_ArrowArray::empty());
        (
            &mut *ctx.cast::<Sink>(),
            batch_from_c(array, &*schema).unwrap_or_else(|e| error!("vexec_flight: {e}")),
        )
    };
    if sink.discard {
        return;
    }
    let (dictionaries, data) = IpcDataGenerator::default()
        .encode(
            &batch,
            &mut sink.dictionaries,
            &IpcWriteOptions::default(),
            &mut CompressionContext::default(),
        )
        .unwrap_or_else(|e| error!("vexec_flight: {e}"));
    for d in dictionaries {
        sink.send(&d.ipc_message, &d.arrow_data);
    }
    sink.send(&data.ipc_message, &data.arrow_data);
}
