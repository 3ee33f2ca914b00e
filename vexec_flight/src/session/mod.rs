//! Session workers: one dynamic background worker per Flight SQL session,
//! connected to the session's database as its role, so statements run with
//! the role's privileges, column privileges and row level security exactly
//! as a pgwire backend's would, and show in `pg_stat_activity` (backend type
//! `vexec_flight session`, the client's address, application name
//! `vexec_flight <client>`).
//!
//! The listener and the worker talk through two shm_mq queues in one DSM
//! segment (`vexec_core::flight::wire` messages). The worker runs a query
//! through vexec's Arrow API (`vexec/arrow_v1`) and sends each batch as it
//! comes, blocking when the queue is full: a slow client stalls the
//! executor instead of growing memory (`query`). An ingest's upload comes
//! the other way, piece by piece, into vexec's batch sink (`ingest`). This
//! file holds the process: its start, its queues, the transaction around
//! each request, its Port. Signals are a backend's: SIGINT
//! cancels the running statement (pg_cancel_backend, statement_timeout),
//! SIGTERM ends the session (pg_terminate_backend).

mod ingest;
mod query;

use std::ffi::{c_void, CStr, CString};
use std::panic::AssertUnwindSafe;

use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::arrow::abi::{ArrowApiV1, RENDEZVOUS};
use vexec_core::flight::wire::{self, sqlstate_text, Request, Response};

use ingest::{ingest, Upload};
use query::run;

/// Bytes of the listener-to-worker queue (requests, and the pieces of an
/// ingest's upload).
const REQUEST_QUEUE: usize = 1024 * 1024;
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

        let peer = CStr::from_bytes_until_nul(&header.peer).map(|c| c.to_string_lossy()).unwrap_or_default();
        client_port(&peer);
        pg_sys::BackgroundWorkerInitializeConnectionByOid(header.database, header.role, 0);
        let app = CString::new(format!("vexec_flight {peer}")).unwrap_or_default();
        pg_sys::SetConfigOption(
            c"application_name".as_ptr(),
            app.as_ptr(),
            pg_sys::GucContext::PGC_USERSET,
            pg_sys::GucSource::PGC_S_SESSION,
        );
        let (inbox, out) = (Inbox(inbox), Outbox(outbox));
        // The id of the open Flight SQL transaction, if any.
        let mut open: Option<Vec<u8>> = None;
        if !out.send(&Response::Done { rows: 0 }) {
            return;
        }
        loop {
            pg_sys::pgstat_report_activity(pg_sys::BackendState::STATE_IDLE, std::ptr::null());
            let Some(request) = inbox.receive(true) else {
                return; // the listener ended the session
            };
            let answer = match request {
                Ok(req) => answer(&req, &inbox, &out, &mut open),
                Err(_) => error_response("08P01", "vexec_flight: a malformed request".into()),
            };
            if !out.send(&answer) {
                return;
            }
        }
    }
}

/// Give the worker a `Port` with the Flight client's address (and no
/// socket: a background worker talks to no client), as a pgwire backend
/// has one: pg_stat_activity's client_addr and client_port,
/// `inet_client_addr()` and log_line_prefix's `%h`/`%r` then show the
/// client. Before the connection is initialized, which reports it.
///
/// # Safety
/// The worker's main thread, before `BackgroundWorkerInitializeConnection*`.
unsafe fn client_port(peer: &str) {
    let Ok(addr) = peer.parse::<std::net::SocketAddr>() else { return };
    // SAFETY: this function's contract; the Port lives in TopMemoryContext for the process's
    // life, zeroed (no SSL, no GSS, no options), its address written as the socket API lays it
    // out in a sockaddr_storage.
    unsafe {
        let port = pg_sys::MemoryContextAllocZero(pg_sys::TopMemoryContext, PORT_BYTES).cast::<PortHead>();
        (*port).sock = -1; // PGINVALID_SOCKET
        let storage = (&raw mut (*port).raddr.addr).cast::<u8>();
        match addr {
            std::net::SocketAddr::V4(a) => {
                let sin = storage.cast::<libc::sockaddr_in>();
                (*sin).sin_family = libc::AF_INET as libc::sa_family_t;
                (*sin).sin_port = a.port().to_be();
                (*sin).sin_addr.s_addr = u32::from_ne_bytes(a.ip().octets());
                (*port).raddr.salen = std::mem::size_of::<libc::sockaddr_in>() as _;
            }
            std::net::SocketAddr::V6(a) => {
                let sin6 = storage.cast::<libc::sockaddr_in6>();
                (*sin6).sin6_family = libc::AF_INET6 as libc::sa_family_t;
                (*sin6).sin6_port = a.port().to_be();
                (*sin6).sin6_addr.s6_addr = a.ip().octets();
                (*sin6).sin6_flowinfo = a.flowinfo();
                (*sin6).sin6_scope_id = a.scope_id();
                (*port).raddr.salen = std::mem::size_of::<libc::sockaddr_in6>() as _;
            }
        }
        let text = |s: String| {
            let c = CString::new(s).unwrap_or_default();
            pg_sys::MemoryContextStrdup(pg_sys::TopMemoryContext, c.as_ptr())
        };
        (*port).remote_host = text(addr.ip().to_string());
        (*port).remote_port = text(addr.port().to_string());
        pg_sys::MyProcPort = port.cast();
    }
}

/// The head of libpq-be.h's `Port` (the same in PostgreSQL 18 and 19),
/// which pgrx leaves opaque: the fields [`client_port`] sets.
#[repr(C)]
struct PortHead {
    sock: std::ffi::c_int,
    noblock: bool,
    proto: u32,
    laddr: pg_sys::SockAddr,
    raddr: pg_sys::SockAddr,
    remote_host: *mut std::ffi::c_char,
    remote_hostname: *mut std::ffi::c_char,
    remote_hostname_resolv: std::ffi::c_int,
    remote_hostname_errcode: std::ffi::c_int,
    remote_port: *mut std::ffi::c_char,
}

/// Bytes allocated (zeroed) for the whole `Port`, whose size pgrx does not
/// know: well above its real size (under 1 kB in 18 and 19), so every field
/// after the head is NULL, false or 0 (no SSL, no GSS, no options).
const PORT_BYTES: usize = 4096;

/// The worker's queue from the listener.
struct Inbox(*mut pg_sys::shm_mq_handle);

impl Inbox {
    /// The next request, waiting for it; None when the listener has
    /// detached. `idle`: between statements (see [`idle_wait`]); otherwise
    /// inside one (an upload's next piece), which a cancel interrupts.
    fn receive(&self, idle: bool) -> Option<Result<Request, wire::Malformed>> {
        self.read(idle, |msg| msg.map(Request::decode))
    }

    /// `read` the next message in place (None when the listener has
    /// detached); as [`Inbox::receive`] waits for it.
    fn read<R>(&self, idle: bool, read: impl FnOnce(Option<&[u8]>) -> R) -> R {
        let (mut len, mut data) = (0usize, std::ptr::null_mut::<c_void>());
        // SAFETY: our attached queue handle; the message stays in the queue's buffer until the
        // next receive, and `read` cannot keep it.
        unsafe {
            let r = loop {
                match pg_sys::shm_mq_receive(self.0, &mut len, &mut data, idle) {
                    pg_sys::shm_mq_result::SHM_MQ_WOULD_BLOCK => idle_wait(),
                    r => break r,
                }
            };
            read(
                (r == pg_sys::shm_mq_result::SHM_MQ_SUCCESS)
                    .then(|| std::slice::from_raw_parts(data.cast::<u8>(), len)),
            )
        }
    }
}

/// Wait on the latch between statements. A cancel that arrives now (the
/// listener cancels when a client goes away, and the statement may just
/// have ended) has nothing to cancel: it is dropped, as a backend drops one
/// that arrives while it reads the next command; termination and
/// postmaster death are handled.
///
/// # Safety
/// The worker's main thread, outside any statement.
unsafe fn idle_wait() {
    // SAFETY: this function's contract.
    unsafe {
        pg_sys::WaitLatch(
            pg_sys::MyLatch,
            (pg_sys::WL_LATCH_SET | pg_sys::WL_EXIT_ON_PM_DEATH) as i32,
            0,
            pg_sys::PG_WAIT_EXTENSION,
        );
        pg_sys::ResetLatch(pg_sys::MyLatch);
        pg_sys::QueryCancelPending = 0;
        pg_sys::check_for_interrupts!();
    }
}

/// The worker's queue to the listener.
struct Outbox(*mut pg_sys::shm_mq_handle);

impl Outbox {
    /// Send an answer's last message (between statements: see
    /// [`idle_wait`]), waiting while the queue is full; false when the
    /// listener has detached.
    fn send(&self, r: &Response) -> bool {
        let msg = r.encode();
        // SAFETY: our attached queue handle; msg is valid for the calls (a send that would block
        // is repeated with the same bytes, as shm_mq requires).
        unsafe {
            loop {
                match pg_sys::shm_mq_send(self.0, msg.len(), msg.as_ptr().cast(), true, true) {
                    pg_sys::shm_mq_result::SHM_MQ_WOULD_BLOCK => idle_wait(),
                    r => return r == pg_sys::shm_mq_result::SHM_MQ_SUCCESS,
                }
            }
        }
    }
}

/// Answer one request; the answer's last message. `open` is the session's
/// open transaction block (Flight SQL's transaction id), if any.
fn answer(req: &Request, inbox: &Inbox, out: &Outbox, open: &mut Option<Vec<u8>>) -> Response {
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
            run(sql, &[], if *describe { Kind::Describe } else { Kind::Query }, out)
        }
        Request::Describe { sql, transaction, params }
        | Request::Query { sql, transaction, params }
        | Request::Update { sql, transaction, params } => {
            if let Some(refused) = outside(open, transaction) {
                return refused;
            }
            let kind = match req {
                Request::Describe { .. } => Kind::Describe,
                Request::Query { .. } => Kind::Query,
                _ => Kind::Update,
            };
            run(sql, params, kind, out)
        }
        Request::Ingest { target, transaction } => {
            let mut upload = Upload::new(inbox);
            // ADBC's driver names no transaction for an ingest, even inside one: an ingest
            // without an id joins the session's open block (the connection's transaction).
            let transaction = match &*open {
                Some(id) if transaction.is_empty() => id.clone(),
                _ => transaction.clone(),
            };
            let answer = match outside(open, &transaction) {
                Some(refused) => refused,
                None => ingest(target, &mut upload),
            };
            upload.drain();
            answer
        }
        Request::Piece { .. } | Request::PieceEnd | Request::PieceAbort { .. } => {
            error_response("08P01", "vexec_flight: an upload's piece outside an ingest".into())
        }
    }
}

/// The refusal of a statement naming `transaction` when the session's open
/// transaction block is `open` (None: it may run).
fn outside(open: &Option<Vec<u8>>, transaction: &[u8]) -> Option<Response> {
    match open {
        None if !transaction.is_empty() => {
            Some(error_response("25P01", "there is no such transaction in progress in this session".into()))
        }
        Some(id) if id != transaction => Some(error_response(
            "25001",
            "a transaction is in progress in this session: its statements must name it".into(),
        )),
        // SAFETY: reads the transaction state, on the main thread.
        Some(_) if unsafe { pg_sys::IsAbortedTransactionBlockState() } => Some(error_response(
            "25P02",
            "current transaction is aborted, commands ignored until end of transaction block".into(),
        )),
        _ => None,
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

/// Run `f` as one statement's transaction command, as a backend runs a
/// statement: its start time, statement_timeout armed, a snapshot,
/// `activity` in pg_stat_activity; in an open block, one command of it.
fn statement<R>(activity: &CStr, f: impl FnOnce() -> R) -> Result<R, Response> {
    // SAFETY: the worker's main thread, between commands (guarded aborts the command on ERROR).
    guarded(|| unsafe {
        pg_sys::SetCurrentStatementStartTimestamp();
        pg_sys::StartTransactionCommand();
        if pg_sys::StatementTimeout > 0 {
            backend::enable_timeout_after(backend::STATEMENT_TIMEOUT, pg_sys::StatementTimeout);
        }
        pg_sys::PushActiveSnapshot(pg_sys::GetTransactionSnapshot());
        pg_sys::pgstat_report_activity(pg_sys::BackendState::STATE_RUNNING, activity.as_ptr());
        let r = f();
        pg_sys::PopActiveSnapshot();
        backend::disable_timeout(backend::STATEMENT_TIMEOUT, false);
        pg_sys::CommitTransactionCommand();
        r
    })
}

fn error_response(sqlstate: &str, message: String) -> Response {
    Response::Error { sqlstate: sqlstate.into(), message, detail: String::new(), hint: String::new() }
}

/// vexec's Arrow API, published by vexec's _PG_init in the postmaster.
fn arrow_api() -> &'static ArrowApiV1 {
    // SAFETY: the rendezvous slot is the process's; vexec stores a pointer to its static API.
    unsafe {
        let p = *pg_sys::find_rendezvous_variable(RENDEZVOUS.as_ptr());
        if p.is_null() {
            error!("vexec_flight needs vexec in shared_preload_libraries");
        }
        let api = &*p.cast::<ArrowApiV1>();
        if api.version != 1 || (api.size as usize) < std::mem::size_of::<ArrowApiV1>() {
            error!("vexec_flight: vexec's Arrow API is not the version it was built with");
        }
        api
    }
}
