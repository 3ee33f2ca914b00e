//! Session workers: one dynamic background worker per Flight SQL session,
//! connected to the session's database as its role, so statements run with
//! the role's privileges, column privileges and row level security exactly
//! as a pgwire backend's would, and show in `pg_stat_activity` (backend type
//! `vexec_flight session`, application name `vexec_flight <client>`).
//!
//! The listener and the worker talk through two shm_mq queues in one DSM
//! segment (`vexec_core::flight::wire` messages). The worker runs a query
//! through vexec's egress (`vexec/egress_v1`) and sends each batch as it
//! comes, blocking when the queue is full: a slow client stalls the
//! executor instead of growing memory. Signals are a backend's: SIGINT
//! cancels the running statement (pg_cancel_backend, statement_timeout),
//! SIGTERM ends the session (pg_terminate_backend).

use std::ffi::{c_void, CStr, CString};
use std::panic::AssertUnwindSafe;

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow_flight::{FlightData, SchemaAsIpc};
use arrow_ipc::writer::{CompressionContext, DictionaryTracker, IpcDataGenerator, IpcWriteOptions};
use arrow_schema::Schema;
use pgrx::pg_sys;
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use vexec_core::arrow::egress_abi::{EgressApiV1, EgressConsumerV1, RENDEZVOUS};
use vexec_core::arrow::stream::batch_from_c;
use vexec_core::flight::wire::{self, sqlstate_text, Request, Response};

/// Bytes of the listener-to-worker queue (requests are small).
const REQUEST_QUEUE: usize = 64 * 1024;
/// Bytes of the worker-to-listener queue: a few batches in flight.
const RESPONSE_QUEUE: usize = 4 * 1024 * 1024;

/// The head of the DSM segment, written by the listener before the worker
/// starts.
#[repr(C)]
struct Header {
    database: pg_sys::Oid,
    role: pg_sys::Oid,
    /// The client's address, NUL-terminated (for application_name).
    peer: [u8; 64],
}

fn header_size() -> usize {
    std::mem::size_of::<Header>().next_multiple_of(pg_sys::MAXIMUM_ALIGNOF as usize)
}

/// The listener's side of one session worker.
pub struct Worker {
    handle: *mut pg_sys::BackgroundWorkerHandle,
    seg: *mut pg_sys::dsm_segment,
    to_worker: *mut pg_sys::shm_mq_handle,
    from_worker: *mut pg_sys::shm_mq_handle,
}

/// What a receive found.
pub enum Received {
    Message(Response),
    Nothing,
    /// The worker is gone (it exited, was terminated, or failed to start).
    Gone,
}

impl Worker {
    /// Start a worker for `role` on `database` and wait until it reports
    /// ready (connected); Err with the reason otherwise.
    pub fn start(role: pg_sys::Oid, database: pg_sys::Oid, peer: &str) -> Result<Worker, String> {
        // SAFETY: the listener's main thread. The segment outlives every pointer into it: it is
        // detached only in Drop, after the queues.
        unsafe {
            let size = header_size() + REQUEST_QUEUE + RESPONSE_QUEUE;
            let seg = pg_sys::dsm_create(size, 0);
            // Session-lifetime, not tied to a resource owner.
            pg_sys::dsm_pin_mapping(seg);
            let base = pg_sys::dsm_segment_address(seg).cast::<u8>();
            let header = base.cast::<Header>();
            (*header).database = database;
            (*header).role = role;
            (*header).peer = [0; 64];
            let p = peer.as_bytes();
            let n = p.len().min(63);
            (&mut (*header).peer)[..n].copy_from_slice(&p[..n]);
            let requests = pg_sys::shm_mq_create(base.add(header_size()).cast(), REQUEST_QUEUE);
            pg_sys::shm_mq_set_sender(requests, pg_sys::MyProc);
            let responses =
                pg_sys::shm_mq_create(base.add(header_size() + REQUEST_QUEUE).cast(), RESPONSE_QUEUE);
            pg_sys::shm_mq_set_receiver(responses, pg_sys::MyProc);

            let mut bgw: pg_sys::BackgroundWorker = std::mem::zeroed();
            copy_name(&mut bgw.bgw_name, "vexec_flight session");
            copy_name(&mut bgw.bgw_type, "vexec_flight session");
            copy_name(&mut bgw.bgw_library_name, "vexec_flight");
            copy_name(&mut bgw.bgw_function_name, "vexec_flight_session_main");
            bgw.bgw_flags =
                (pg_sys::BGWORKER_SHMEM_ACCESS | pg_sys::BGWORKER_BACKEND_DATABASE_CONNECTION) as i32;
            bgw.bgw_start_time = pg_sys::BgWorkerStartTime::BgWorkerStart_RecoveryFinished;
            bgw.bgw_restart_time = pg_sys::BGW_NEVER_RESTART as i32;
            bgw.bgw_main_arg = pg_sys::Datum::from(pg_sys::dsm_segment_handle(seg));
            bgw.bgw_notify_pid = pg_sys::MyProcPid;
            let mut handle = std::ptr::null_mut();
            if !pg_sys::RegisterDynamicBackgroundWorker(&mut bgw, &mut handle) {
                pg_sys::dsm_detach(seg);
                return Err("no background worker slot is free for the session (max_worker_processes)".into());
            }
            let worker = Worker {
                handle,
                seg,
                to_worker: pg_sys::shm_mq_attach(requests, seg, handle),
                from_worker: pg_sys::shm_mq_attach(responses, seg, handle),
            };
            let mut pid = 0;
            if pg_sys::WaitForBackgroundWorkerStartup(handle, &mut pid)
                != pg_sys::BgwHandleStatus::BGWH_STARTED
            {
                return Err("the session's background worker did not start".into());
            }
            // The worker says Done once connected; a FATAL while connecting (a connection limit,
            // say) detaches it instead.
            loop {
                match worker.receive(false) {
                    Received::Message(Response::Done { .. }) => return Ok(worker),
                    Received::Message(Response::Error { message, .. }) => return Err(message),
                    Received::Message(_) | Received::Gone => {
                        return Err("the session could not start (the server log says why)".into());
                    }
                    Received::Nothing => {}
                }
            }
        }
    }

    /// Send `msg`; false when the queue is full (send the same bytes again
    /// later, as shm_mq requires), Err when the worker is gone.
    pub fn send(&self, msg: &[u8]) -> Result<bool, ()> {
        // SAFETY: our attached queue handle; msg is valid for the call.
        let r = unsafe { pg_sys::shm_mq_send(self.to_worker, msg.len(), msg.as_ptr().cast(), true, true) };
        match r {
            pg_sys::shm_mq_result::SHM_MQ_SUCCESS => Ok(true),
            pg_sys::shm_mq_result::SHM_MQ_WOULD_BLOCK => Ok(false),
            _ => Err(()),
        }
    }

    /// The next message, waiting for one unless `nowait`.
    pub fn receive(&self, nowait: bool) -> Received {
        let (mut len, mut data) = (0usize, std::ptr::null_mut::<c_void>());
        // SAFETY: our attached queue handle; the message is copied before the next receive.
        unsafe {
            match pg_sys::shm_mq_receive(self.from_worker, &mut len, &mut data, nowait) {
                pg_sys::shm_mq_result::SHM_MQ_SUCCESS => {
                    let bytes = std::slice::from_raw_parts(data.cast::<u8>(), len);
                    match Response::decode(bytes) {
                        Ok(r) => Received::Message(r),
                        Err(_) => Received::Gone,
                    }
                }
                pg_sys::shm_mq_result::SHM_MQ_WOULD_BLOCK => Received::Nothing,
                _ => Received::Gone,
            }
        }
    }

    /// Cancel the worker's running statement, as pg_cancel_backend does.
    pub fn cancel(&self) {
        let mut pid = 0;
        // SAFETY: our worker's handle; kill with a pid the postmaster gave for it.
        unsafe {
            if pg_sys::GetBackgroundWorkerPid(self.handle, &mut pid) == pg_sys::BgwHandleStatus::BGWH_STARTED
            {
                libc::kill(pid, libc::SIGINT);
            }
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // SAFETY: handles made in start, detached once; the worker sees the detach and exits.
        unsafe {
            pg_sys::shm_mq_detach(self.to_worker);
            pg_sys::shm_mq_detach(self.from_worker);
            pg_sys::TerminateBackgroundWorker(self.handle);
            pg_sys::dsm_detach(self.seg);
            pg_sys::pfree(self.handle.cast());
        }
    }
}

fn copy_name(dst: &mut [std::ffi::c_char], s: &str) {
    let room = dst.len() - 1; // the NUL the zeroed struct already has
    for (d, &b) in dst.iter_mut().zip(s.as_bytes().iter().take(room)) {
        *d = b as std::ffi::c_char;
    }
}

/// What pgrx does not bind: a backend's signal handlers (as C function
/// pointers for pqsignal) and timeout.h.
mod backend {
    use std::ffi::c_int;

    use pgrx::pg_sys::pg_signal_info;

    /// timeout.h's `STATEMENT_TIMEOUT` (fourth of `TimeoutId`, the same in
    /// PostgreSQL 18 and 19).
    pub const STATEMENT_TIMEOUT: c_int = 3;

    #[pgrx::pg_guard]
    unsafe extern "C-unwind" {
        pub fn enable_timeout_after(id: c_int, delay_ms: c_int);
        pub fn disable_timeout(id: c_int, keep_indicator: bool);
    }

    unsafe extern "C-unwind" {
        pub fn die(signal: c_int, info: *const pg_signal_info);
        pub fn StatementCancelHandler(signal: c_int, info: *const pg_signal_info);
        pub fn SignalHandlerForConfigReload(signal: c_int, info: *const pg_signal_info);
    }
}

/// The session worker's entry point (`bgw_function_name`); the argument is
/// the DSM segment's handle.
#[pg_guard]
#[no_mangle]
pub extern "C-unwind" fn vexec_flight_session_main(arg: pg_sys::Datum) {
    // SAFETY: a background worker's start, on its main thread: a backend's signal handlers, then
    // the segment the listener made (it stays while the listener holds it).
    unsafe {
        pg_sys::pqsignal_be(libc::SIGTERM, Some(backend::die));
        pg_sys::pqsignal_be(libc::SIGINT, Some(backend::StatementCancelHandler));
        pg_sys::pqsignal_be(libc::SIGHUP, Some(backend::SignalHandlerForConfigReload));
        pg_sys::BackgroundWorkerUnblockSignals();
        let seg = pg_sys::dsm_attach(arg.value() as pg_sys::dsm_handle);
        if seg.is_null() {
            error!("vexec_flight: the session's shared memory is gone");
        }
        let base = pg_sys::dsm_segment_address(seg).cast::<u8>();
        let header = &*base.cast::<Header>();
        let requests = base.add(header_size()).cast::<pg_sys::shm_mq>();
        let responses = base.add(header_size() + REQUEST_QUEUE).cast::<pg_sys::shm_mq>();
        pg_sys::shm_mq_set_receiver(requests, pg_sys::MyProc);
        pg_sys::shm_mq_set_sender(responses, pg_sys::MyProc);
        let inbox = pg_sys::shm_mq_attach(requests, seg, std::ptr::null_mut());
        let outbox = pg_sys::shm_mq_attach(responses, seg, std::ptr::null_mut());

        pg_sys::BackgroundWorkerInitializeConnectionByOid(header.database, header.role, 0);
        let peer = CStr::from_bytes_until_nul(&header.peer).map(|c| c.to_string_lossy()).unwrap_or_default();
        let app = CString::new(format!("vexec_flight {peer}")).unwrap_or_default();
        pg_sys::SetConfigOption(
            c"application_name".as_ptr(),
            app.as_ptr(),
            pg_sys::GucContext::PGC_USERSET,
            pg_sys::GucSource::PGC_S_SESSION,
        );
        let out = Outbox(outbox);
        // The id of the open Flight SQL transaction, if any.
        let mut open: Option<Vec<u8>> = None;
        if !out.send(&Response::Done { rows: 0 }) {
            return;
        }
        loop {
            pg_sys::pgstat_report_activity(pg_sys::BackendState::STATE_IDLE, std::ptr::null());
            let (mut len, mut data) = (0usize, std::ptr::null_mut::<c_void>());
            if pg_sys::shm_mq_receive(inbox, &mut len, &mut data, false)
                != pg_sys::shm_mq_result::SHM_MQ_SUCCESS
            {
                return; // the listener ended the session
            }
            let answer = match Request::decode(std::slice::from_raw_parts(data.cast::<u8>(), len)) {
                Ok(req) => answer(&req, &out, &mut open),
                Err(_) => Response::Error {
                    sqlstate: "08P01".into(),
                    message: "vexec_flight: a malformed request".into(),
                    detail: String::new(),
                    hint: String::new(),
                },
            };
            if !out.send(&answer) {
                return;
            }
        }
    }
}

/// The worker's queue to the listener.
struct Outbox(*mut pg_sys::shm_mq_handle);

impl Outbox {
    /// Send, waiting while the queue is full (the executor stalls with it);
    /// false when the listener has detached.
    fn send(&self, r: &Response) -> bool {
        let msg = r.encode();
        // SAFETY: our attached queue handle; msg is valid for the call. Waits on our latch,
        // checking interrupts.
        unsafe {
            pg_sys::shm_mq_send(self.0, msg.len(), msg.as_ptr().cast(), false, r.is_last())
                == pg_sys::shm_mq_result::SHM_MQ_SUCCESS
        }
    }
}

/// Answer one request; the answer's last message. `open` is the session's
/// open transaction block (Flight SQL's transaction id), if any.
fn answer(req: &Request, out: &Outbox, open: &mut Option<Vec<u8>>) -> Response {
    let done = Response::Done { rows: 0 };
    match req {
        Request::Begin { transaction } => {
            if open.is_some() {
                return error_response(
                    "25001",
                    "there is already a transaction in progress in this session".into(),
                );
            }
            // As BEGIN does: the block stays open across the commands that follow.
            // SAFETY: the worker's main thread, no transaction open.
            let r = guarded(|| unsafe {
                pg_sys::StartTransactionCommand();
                pg_sys::BeginTransactionBlock();
                pg_sys::CommitTransactionCommand();
            });
            r.map(|_| *open = Some(transaction.clone())).map_or_else(|e| e, |_| done)
        }
        Request::End { transaction, commit } => {
            if open.as_ref() != Some(transaction) {
                return error_response(
                    "25P01",
                    "there is no such transaction in progress in this session".into(),
                );
            }
            *open = None;
            // SAFETY: the worker's main thread, inside the open block.
            let r = guarded(|| unsafe {
                pg_sys::StartTransactionCommand();
                let committed = if *commit {
                    pg_sys::EndTransactionBlock(false)
                } else {
                    pg_sys::UserAbortTransactionBlock(false);
                    true
                };
                pg_sys::CommitTransactionCommand();
                committed
            });
            match r {
                Err(e) => e,
                // COMMIT of a failed block rolls it back (its command tag says ROLLBACK); a
                // Flight client has no tag to read, so it is told.
                Ok(false) => error_response(
                    "40000",
                    "the transaction was rolled back, as an error had aborted it: nothing was committed"
                        .into(),
                ),
                Ok(true) => done,
            }
        }
        Request::Catalog { sql, describe } => {
            // SAFETY: reads the transaction state, on the main thread.
            if open.is_some() && unsafe { pg_sys::IsAbortedTransactionBlockState() } {
                return error_response(
                    "25P02",
                    "current transaction is aborted, commands ignored until end of transaction block".into(),
                );
            }
            run(sql, if *describe { Kind::Describe } else { Kind::Query }, out)
        }
        Request::Describe { sql, transaction }
        | Request::Query { sql, transaction }
        | Request::Update { sql, transaction } => {
            match open {
                None if !transaction.is_empty() => {
                    return error_response(
                        "25P01",
                        "there is no such transaction in progress in this session".into(),
                    );
                }
                Some(id) if id != transaction => {
                    return error_response(
                        "25001",
                        "a transaction is in progress in this session: its statements must name it".into(),
                    );
                }
                // SAFETY: reads the transaction state, on the main thread.
                Some(_) if unsafe { pg_sys::IsAbortedTransactionBlockState() } => {
                    return error_response(
                        "25P02",
                        "current transaction is aborted, commands ignored until end of transaction block"
                            .into(),
                    );
                }
                _ => {}
            }
            let kind = match req {
                Request::Describe { .. } => Kind::Describe,
                Request::Query { .. } => Kind::Query,
                _ => Kind::Update,
            };
            run(sql, kind, out)
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Describe,
    Query,
    Update,
}

/// Run `f` (which starts and ends its transaction command); an ERROR it
/// raises aborts the transaction (a block goes to its failed state, as
/// PostgreSQL's does) and comes back as the Error response.
fn guarded<R>(f: impl FnOnce() -> R) -> Result<R, Response> {
    let f = AssertUnwindSafe(f);
    PgTryBuilder::new(move || Ok(f()))
        .catch_others(|e| {
            // SAFETY: the ERROR left the current transaction command aborted; its statement
            // timeout goes with it.
            unsafe {
                backend::disable_timeout(backend::STATEMENT_TIMEOUT, false);
                pg_sys::AbortCurrentTransaction();
            }
            let r = match &e {
                pg_sys::panic::CaughtError::PostgresError(r)
                | pg_sys::panic::CaughtError::ErrorReport(r)
                | pg_sys::panic::CaughtError::RustPanic { ereport: r, .. } => r,
            };
            Err(Response::Error {
                sqlstate: sqlstate_text(r.sql_error_code() as i32),
                message: r.message().to_string(),
                detail: r.detail().unwrap_or_default().to_string(),
                hint: r.hint().unwrap_or_default().to_string(),
            })
        })
        .execute()
}

/// Run one statement request as a transaction command (statement_timeout
/// armed as a backend arms it; in an open block, one command of it). A
/// statement that returns rows goes through vexec's egress; any other (DDL,
/// DML without RETURNING, several statements) through SPI, as PostgreSQL's
/// simple query protocol would run it, its result an empty schema.
fn run(sql: &str, kind: Kind, out: &Outbox) -> Response {
    let Ok(query) = CString::new(sql) else {
        return error_response("22021", "the statement contains a NUL byte".into());
    };
    let mut sink = Sink { out, rows: 0, dictionaries: DictionaryTracker::new(false) };
    let sink_ptr: *mut Sink = &mut sink;
    // SAFETY: the worker's main thread, between commands; sink outlives the call.
    let r = guarded(|| unsafe {
        pg_sys::SetCurrentStatementStartTimestamp();
        pg_sys::StartTransactionCommand();
        if pg_sys::StatementTimeout > 0 {
            backend::enable_timeout_after(backend::STATEMENT_TIMEOUT, pg_sys::StatementTimeout);
        }
        pg_sys::PushActiveSnapshot(pg_sys::GetTransactionSnapshot());
        pg_sys::pgstat_report_activity(pg_sys::BackendState::STATE_RUNNING, query.as_ptr());
        let sink = &mut *sink_ptr;
        if kind != Kind::Update && returns_rows(&query) {
            let api = egress_api();
            let consumer = EgressConsumerV1 { ctx: sink_ptr.cast(), on_schema, on_batch };
            // vexec's functions report an ERROR by longjmp: turn it into a
            // panic here, so this frame's state unwinds and the catch runs.
            pg_sys::ffi::pg_guard_ffi_boundary(|| {
                if kind == Kind::Describe {
                    (api.describe)(query.as_ptr(), &consumer);
                } else {
                    (api.run)(query.as_ptr(), 0, &consumer);
                }
            });
        } else {
            if kind != Kind::Update {
                sink.send_schema(&Schema::empty());
            }
            if kind != Kind::Describe {
                sink.rows = execute(&query);
            }
        }
        pg_sys::PopActiveSnapshot();
        backend::disable_timeout(backend::STATEMENT_TIMEOUT, false);
        pg_sys::CommitTransactionCommand();
    });
    r.map_or_else(|e| e, |_| Response::Done { rows: sink.rows })
}

/// Whether `query` is one statement that returns rows (a SELECT, or DML
/// with RETURNING), from its plan.
///
/// # Safety
/// Inside a transaction with an active snapshot.
unsafe fn returns_rows(query: &CStr) -> bool {
    // SAFETY: this function's contract; SPI is connected and finished here (an ERROR in
    // between is cleaned up by the transaction's abort).
    unsafe {
        pg_sys::SPI_connect();
        let plan = pg_sys::SPI_prepare(query.as_ptr(), 0, std::ptr::null_mut());
        if plan.is_null() {
            spi_error(pg_sys::SPI_result);
        }
        let rows = pg_sys::SPI_is_cursor_plan(plan);
        pg_sys::SPI_finish();
        rows
    }
}

/// Run `query` (one or more statements) for its effect; the rows the last
/// statement processed.
///
/// # Safety
/// As [`returns_rows`].
unsafe fn execute(query: &CStr) -> u64 {
    // SAFETY: as returns_rows.
    unsafe {
        pg_sys::SPI_connect();
        let rc = pg_sys::SPI_execute(query.as_ptr(), false, 0);
        if rc < 0 {
            spi_error(rc);
        }
        let rows = pg_sys::SPI_processed;
        pg_sys::SPI_finish();
        rows
    }
}

/// SPI's refusals (transaction control, say) as PostgreSQL's error.
fn spi_error(code: i32) -> ! {
    // SAFETY: SPI_result_code_string returns a static string for any code.
    let what = unsafe { CStr::from_ptr(pg_sys::SPI_result_code_string(code)) }.to_string_lossy();
    let message = if code == pg_sys::SPI_ERROR_TRANSACTION {
        "transaction control statements are not supported over Flight SQL's statements (use its transaction actions)"
            .to_string()
    } else {
        format!("the statement could not run: {what}")
    };
    ErrorReport::new(PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED, message, "vexec_flight")
        .report(PgLogLevel::ERROR);
    unreachable!()
}

fn error_response(sqlstate: &str, message: String) -> Response {
    Response::Error { sqlstate: sqlstate.into(), message, detail: String::new(), hint: String::new() }
}

/// vexec's egress, published by vexec's _PG_init in the postmaster.
fn egress_api() -> &'static EgressApiV1 {
    // SAFETY: the rendezvous slot is the process's; vexec stores a pointer to its static API.
    unsafe {
        let p = *pg_sys::find_rendezvous_variable(RENDEZVOUS.as_ptr());
        if p.is_null() {
            error!("vexec_flight needs vexec in shared_preload_libraries");
        }
        let api = &*p.cast::<EgressApiV1>();
        if api.version != 1 || (api.size as usize) < std::mem::size_of::<EgressApiV1>() {
            error!("vexec_flight: vexec's egress API is not version 1");
        }
        api
    }
}

/// A query's result on its way to the listener as Flight IPC pieces.
struct Sink<'a> {
    out: &'a Outbox,
    rows: u64,
    dictionaries: DictionaryTracker,
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
        let data: FlightData = SchemaAsIpc::new(schema, &IpcWriteOptions::default()).into();
        self.send(&data.data_header, &data.data_body);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn on_schema(ctx: *mut c_void, schema: *mut FFI_ArrowSchema) {
    // SAFETY: ctx is the Sink `run` passed; schema is live for the call (egress_abi's contract).
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
    sink.rows += batch.num_rows() as u64;
}
