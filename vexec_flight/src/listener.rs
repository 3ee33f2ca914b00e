//! The listener: a background worker that binds vexec_flight's port, runs
//! the gRPC server on a helper thread (`server`) and does, on its main
//! thread, what needs PostgreSQL: logins judged by pg_hba.conf and checked
//! against the roles' secrets and the catalogs, as pgwire checks them.

use std::collections::{HashMap, VecDeque};
use std::ffi::{c_char, CStr, CString};
use std::io::Read;
use std::net::{IpAddr, SocketAddr, TcpListener, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::panic::AssertUnwindSafe;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use pgrx::bgworkers::{BackgroundWorker, SignalWakeFlags};
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::spi::Spi;
use tokio::sync::mpsc::error::TryRecvError;
use tokio::sync::oneshot;
use tonic::Status;
use vexec_core::flight::hba::{self, Facts, Rule, Verdict};
use vexec_core::flight::login;
use vexec_core::flight::wire::{Request, Response};

use crate::server::{self, Job, LoginRequest, MainThread, Service};
use crate::session::{Received, Worker};
use crate::settings;

/// How often (ms) the main thread checks that the gRPC thread still runs.
const HELPER_CHECK_MS: std::ffi::c_long = 1000;

/// A login that holds a token, and the worker that runs its statements.
struct Session {
    role: pg_sys::Oid,
    database: pg_sys::Oid,
    worker: Worker,
    last_used: Instant,
    /// The request being answered, then those waiting (one at a time, in
    /// order, as on a pgwire connection).
    active: Option<Active>,
    queued: VecDeque<(Request, AnswerTx, Option<Upload>)>,
}

type AnswerTx = tokio::sync::mpsc::Sender<Response>;

struct Active {
    /// The request, encoded (what CancelFlightInfo names).
    request: Vec<u8>,
    answer: AnswerTx,
    /// The request's bytes until the worker's queue took them.
    unsent: Option<Vec<u8>>,
    /// The client went away: the statement was cancelled, the rest of the
    /// answer is read and dropped.
    abandoned: bool,
    /// An ingest's upload still coming from the handler (pieces, ended by
    /// `PieceEnd` or `PieceAbort`), forwarded as the worker's queue takes it.
    upload: Option<Upload>,
}

type Upload = tokio::sync::mpsc::Receiver<Request>;

struct Listener {
    /// pg_hba.conf as last loaded without errors.
    rules: Vec<Rule>,
    sessions: HashMap<String, Session>,
    max_sessions: usize,
}

/// The background worker's entry point (`bgw_function_name`).
#[pg_guard]
#[no_mangle]
pub extern "C-unwind" fn vexec_flight_listener_main(_arg: pg_sys::Datum) {
    BackgroundWorker::attach_signal_handlers(SignalWakeFlags::SIGHUP | SignalWakeFlags::SIGTERM);
    BackgroundWorker::connect_worker_to_spi(Some(&settings::string(&settings::LISTENER_DATABASE)), None);

    let port = settings::PORT.get() as u16;
    let listeners = bind(&settings::string(&settings::LISTEN_ADDRESSES), port);
    let (jobs, job_queue) = mpsc::channel();
    let (wake_read, wake_write) =
        UnixStream::pair().unwrap_or_else(|e| error!("vexec_flight: socketpair: {e}"));
    for s in [&wake_read, &wake_write] {
        s.set_nonblocking(true).unwrap_or_else(|e| error!("vexec_flight: socketpair: {e}"));
    }
    // SAFETY: reads a GUC's value on the main thread.
    let version =
        unsafe { CStr::from_ptr(pg_sys::GetConfigOption(c"server_version".as_ptr(), false, false)) };
    let tls = tls_files();
    let service =
        Service::new(Arc::new(MainThread::new(jobs, wake_write)), tls.is_some(), &version.to_string_lossy())
            .unwrap_or_else(|e| error!("vexec_flight: {e}"));
    let max_message = settings::MAX_MESSAGE_SIZE.get() as usize * 1024;
    let (stop, stopped) = oneshot::channel();
    let grpc = std::thread::Builder::new()
        .name("vexec_flight grpc".into())
        .spawn(move || server::run(listeners, tls, service, max_message, stopped))
        .unwrap_or_else(|e| error!("vexec_flight: could not start the gRPC thread: {e}"));

    let mut listener = Listener {
        // Without rules every login is refused (no line matches), until a reload.
        rules: load_rules().unwrap_or_else(|e| {
            log!("vexec_flight: could not load pg_hba.conf, every login is refused: {e}");
            Vec::new()
        }),
        sessions: HashMap::new(),
        max_sessions: settings::MAX_SESSIONS.get() as usize,
    };
    log!(
        "vexec_flight: Arrow Flight SQL listening on port {port}{}",
        if settings::string(&settings::SSL_CERT_FILE).is_empty() { "" } else { " (TLS)" }
    );
    let mut buf = [0u8; 256];
    loop {
        // SAFETY: the worker's own latch, on its main thread; the socket is ours and open.
        unsafe {
            pg_sys::WaitLatchOrSocket(
                pg_sys::MyLatch,
                (pg_sys::WL_LATCH_SET
                    | pg_sys::WL_SOCKET_READABLE
                    | pg_sys::WL_TIMEOUT
                    | pg_sys::WL_EXIT_ON_PM_DEATH) as i32,
                wake_read.as_raw_fd(),
                HELPER_CHECK_MS,
                pg_sys::PG_WAIT_EXTENSION,
            );
            pg_sys::ResetLatch(pg_sys::MyLatch);
        }
        // A helper thread that stopped cannot wake us: look for it now and
        // then, and restart the worker (bgw_restart_time) rather than serve nothing.
        if grpc.is_finished() {
            error!("vexec_flight: the gRPC server thread stopped");
        }
        while matches!((&wake_read).read(&mut buf), Ok(n) if n > 0) {}
        check_for_interrupts!();
        if BackgroundWorker::sigterm_received() {
            break;
        }
        if BackgroundWorker::sighup_received() {
            // SAFETY: reloading the configuration on the main thread, as any process does on SIGHUP.
            unsafe { pg_sys::ProcessConfigFile(pg_sys::GucContext::PGC_SIGHUP) };
            match load_rules() {
                Ok(rules) => listener.rules = rules,
                Err(e) => log!("vexec_flight: pg_hba.conf was not reloaded: {e}"),
            }
        }
        listener.expire();
        while let Ok(job) = job_queue.try_recv() {
            match job {
                Job::Login { login, reply } => {
                    let _ = reply.send(listener.login(&login));
                }
                Job::Run { token, request, answer, upload } => {
                    listener.enqueue(&token, request, answer, upload)
                }
                Job::Cancel { token, request, reply } => {
                    let running = listener.sessions.get(&token).and_then(|s| {
                        s.active
                            .as_ref()
                            .filter(|a| a.request == request && a.unsent.is_none())
                            .map(|_| &s.worker)
                    });
                    if let Some(worker) = running {
                        worker.cancel();
                    }
                    let _ = reply.send(running.is_some());
                }
                Job::Close { token, reply } => {
                    listener.sessions.remove(&token);
                    let _ = reply.send(());
                }
            }
        }
        listener.pump();
    }
    // Logins still queued get "shutting down" (their reply senders drop), so
    // the server's graceful stop does not wait on them.
    drop(job_queue);
    let _ = stop.send(());
    if let Ok(Err(e)) = grpc.join() {
        log!("vexec_flight: the gRPC server stopped: {e}");
    }
}

/// The TLS certificate and key, when `ssl_cert_file` is set (a file that
/// cannot be read stops the listener, as a bad ssl_cert_file stops the
/// postmaster).
fn tls_files() -> Option<server::Tls> {
    let cert = settings::string(&settings::SSL_CERT_FILE);
    if cert.is_empty() {
        return None;
    }
    let key = settings::string(&settings::SSL_KEY_FILE);
    let read = |what: &str, path: &str| {
        std::fs::read(path).unwrap_or_else(|e| error!("vexec_flight: could not read {what} \"{path}\": {e}"))
    };
    Some(server::Tls { cert: read("ssl_cert_file", &cert), key: read("ssl_key_file", &key) })
}

/// Listening sockets for `addresses` (as `listen_addresses`: `*` for every
/// address, names resolved) at `port`.
fn bind(addresses: &str, port: u16) -> Vec<TcpListener> {
    let mut out = Vec::new();
    for a in addresses.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        let targets: Vec<SocketAddr> = if a == "*" {
            vec![SocketAddr::from(([0u8; 16], port)), SocketAddr::from(([0u8; 4], port))]
        } else {
            match (a, port).to_socket_addrs() {
                Ok(t) => t.collect(),
                Err(e) => {
                    log!("vexec_flight: could not resolve \"{a}\": {e}");
                    continue;
                }
            }
        };
        for t in targets {
            match TcpListener::bind(t) {
                Ok(l) => out.push(l),
                // With "*", an IPv6 socket may already take IPv4 too.
                Err(e) if a == "*" && e.kind() == std::io::ErrorKind::AddrInUse && !out.is_empty() => {}
                Err(e) => log!("vexec_flight: could not listen on {t}: {e}"),
            }
        }
    }
    if out.is_empty() {
        error!("vexec_flight: could not listen on any of \"{addresses}\" at port {port}");
    }
    out
}

/// Run `f` in a transaction; an ERROR it raises is caught (the transaction
/// aborted) and returned as its message, so one bad request never takes the
/// listener down.
fn in_transaction<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    let f = AssertUnwindSafe(f);
    PgTryBuilder::new(move || {
        // SAFETY: the listener's main thread, outside any transaction.
        unsafe {
            pg_sys::StartTransactionCommand();
            pg_sys::PushActiveSnapshot(pg_sys::GetTransactionSnapshot());
        }
        let r = f();
        // SAFETY: the transaction and snapshot started above.
        unsafe {
            pg_sys::PopActiveSnapshot();
            pg_sys::CommitTransactionCommand();
        }
        Ok(r)
    })
    .catch_others(|e| {
        // SAFETY: the ERROR left the transaction started above in an aborted state.
        unsafe { pg_sys::AbortCurrentTransaction() };
        Err(match e {
            pg_sys::panic::CaughtError::PostgresError(r)
            | pg_sys::panic::CaughtError::ErrorReport(r)
            | pg_sys::panic::CaughtError::RustPanic { ereport: r, .. } => r.message().to_string(),
        })
    })
    .execute()
}

/// pg_hba.conf's rules from `pg_hba_file_rules` (the file as the server
/// parses it). A file with errors is refused, as the postmaster refuses to
/// reload one.
fn load_rules() -> Result<Vec<Rule>, String> {
    in_transaction(|| {
        Spi::connect(|client| {
            let rows = client.select(
                "SELECT line_number, type, database, user_name, address, netmask, auth_method, error \
                 FROM pg_hba_file_rules ORDER BY rule_number NULLS LAST, line_number",
                None,
                &[],
            )?;
            let mut rules = Vec::new();
            for row in rows {
                if let Some(err) = row.get::<String>(8)? {
                    // hba.c keeps such a line (with a warning); any other error
                    // makes the postmaster refuse the whole file.
                    let keeps = err.starts_with("hostssl record cannot match")
                        || err.starts_with("hostgssenc record cannot match");
                    if !keeps {
                        let line = row.get::<i32>(1)?.unwrap_or(0);
                        return Ok(Err(format!("line {line}: {err}")));
                    }
                }
                rules.push(Rule {
                    line: row.get::<i32>(1)?.unwrap_or(0),
                    conn_type: row.get::<String>(2)?.unwrap_or_default(),
                    databases: row.get::<Vec<String>>(3)?.unwrap_or_default(),
                    roles: row.get::<Vec<String>>(4)?.unwrap_or_default(),
                    address: row.get::<String>(5)?,
                    netmask: row.get::<String>(6)?,
                    method: row.get::<String>(7)?.unwrap_or_default(),
                });
            }
            Ok::<_, pgrx::spi::Error>(Ok(rules))
        })
        .unwrap_or_else(|e| Err(e.to_string()))
    })?
}

/// Role membership as hba.c's `is_member` asks it (superusers are not
/// members of everything; a missing role is a member of nothing).
struct Catalog;

impl Facts for Catalog {
    fn is_member(&mut self, role: &str, group: &str) -> bool {
        let (Ok(role), Ok(group)) = (CString::new(role), CString::new(group)) else { return false };
        // SAFETY: syscache lookups inside the login's transaction.
        unsafe {
            let r = pg_sys::get_role_oid(role.as_ptr(), true);
            let g = pg_sys::get_role_oid(group.as_ptr(), true);
            r != pg_sys::InvalidOid && g != pg_sys::InvalidOid && pg_sys::is_member_of_role_nosuper(r, g)
        }
    }
}

/// Why a login was refused: what the client is told, its SQLSTATE, and a
/// detail for the server log only.
struct Refusal {
    message: String,
    sqlstate: &'static str,
    detail: Option<String>,
}

impl Refusal {
    fn auth(message: String) -> Refusal {
        Refusal { message, sqlstate: "28000", detail: None }
    }

    fn status(&self) -> Status {
        // Every refused login is a failed authentication to a Flight client
        // (pgwire ends each with FATAL); the SQLSTATE says which.
        let mut s = match self.sqlstate {
            "42501" => Status::permission_denied(&self.message),
            "53300" => Status::resource_exhausted(&self.message),
            "XX000" => Status::internal(&self.message),
            _ => Status::unauthenticated(&self.message),
        };
        if let Ok(v) = self.sqlstate.parse() {
            s.metadata_mut().insert("x-postgresql-sqlstate", v);
        }
        s
    }
}

impl Listener {
    fn login(&mut self, req: &LoginRequest) -> Result<String, Status> {
        self.expire();
        let outcome = in_transaction(|| self.judge(req)).unwrap_or_else(|e| {
            Err(Refusal { message: format!("login failed: {e}"), sqlstate: "XX000", detail: None })
        });
        let outcome = outcome.and_then(|(role, database)| {
            in_transaction(|| self.check_limits(req, role, database))
                .unwrap_or_else(|e| {
                    Err(Refusal { message: format!("login failed: {e}"), sqlstate: "XX000", detail: None })
                })
                .map(|_| (role, database))
        });
        let (role, database) = match outcome {
            Ok(ids) => ids,
            Err(r) => {
                // The server log gets what pgwire's gets (the message, and a detail the
                // client never sees).
                let detail = r.detail.as_deref().map(|d| format!("\nDETAIL:  {d}")).unwrap_or_default();
                log!("vexec_flight: login from {} refused: {}{detail}", req.peer.ip(), r.message);
                return Err(r.status());
            }
        };
        if self.sessions.len() >= self.max_sessions {
            return Err(Refusal {
                message: format!(
                    "too many Flight SQL sessions (vexec_flight.max_sessions = {})",
                    self.max_sessions
                ),
                sqlstate: "53300",
                detail: None,
            }
            .status());
        }
        let worker = Worker::start(role, database, &req.peer.to_string()).map_err(|e| {
            log!("vexec_flight: session for role \"{}\" could not start: {e}", req.user);
            Status::unavailable(format!("the session could not start: {e}"))
        })?;
        let mut random = [0u8; 32];
        // SAFETY: a buffer of the length given.
        if !unsafe { pg_sys::pg_strong_random(random.as_mut_ptr().cast(), random.len()) } {
            return Err(Status::internal("could not generate a session token"));
        }
        let token = login::token_from(&random);
        let session = Session {
            role,
            database,
            worker,
            last_used: Instant::now(),
            active: None,
            queued: VecDeque::new(),
        };
        self.sessions.insert(token.clone(), session);
        // Successful logins are not logged by default, as pgwire's (log_connections).
        debug1!(
            "vexec_flight: session for role \"{}\" on database \"{}\" from {}",
            req.user,
            req.database,
            req.peer.ip()
        );
        Ok(token)
    }

    /// The role's and the database's connection limits, counting pgwire
    /// backends and this endpoint's sessions (PostgreSQL counts only
    /// regular backends against them, so a session's background worker would
    /// not be checked). Superusers are exempt, as in PostgreSQL.
    fn check_limits(
        &self,
        req: &LoginRequest,
        role: pg_sys::Oid,
        database: pg_sys::Oid,
    ) -> Result<(), Refusal> {
        let limits = Spi::connect(|client| {
            let row = client
                .select(
                    "SELECT r.rolsuper, r.rolconnlimit, d.datconnlimit, \
                       (SELECT count(*) FROM pg_stat_activity a \
                         WHERE a.usesysid = r.oid AND a.backend_type = 'client backend'), \
                       (SELECT count(*) FROM pg_stat_activity a \
                         WHERE a.datid = d.oid AND a.backend_type = 'client backend') \
                     FROM pg_authid r, pg_database d WHERE r.oid = $1 AND d.oid = $2",
                    None,
                    &[role.into(), database.into()],
                )?
                .first();
            Ok::<_, pgrx::spi::Error>((
                row.get::<bool>(1)?.unwrap_or(false),
                row.get::<i32>(2)?.unwrap_or(-1),
                row.get::<i32>(3)?.unwrap_or(-1),
                row.get::<i64>(4)?.unwrap_or(0),
                row.get::<i64>(5)?.unwrap_or(0),
            ))
        });
        let Ok((superuser, role_limit, db_limit, role_backends, db_backends)) = limits else {
            return Ok(()); // role or database dropped meanwhile: the worker's connection says so
        };
        if superuser {
            return Ok(());
        }
        let ours = |f: &dyn Fn(&Session) -> bool| self.sessions.values().filter(|s| f(s)).count() as i64;
        if role_limit >= 0 && role_backends + ours(&|s| s.role == role) >= role_limit as i64 {
            return Err(Refusal {
                message: format!("too many connections for role \"{}\"", req.user),
                sqlstate: "53300",
                detail: None,
            });
        }
        if db_limit >= 0 && db_backends + ours(&|s| s.database == database) >= db_limit as i64 {
            return Err(Refusal {
                message: format!("too many connections for database \"{}\"", req.database),
                sqlstate: "53300",
                detail: None,
            });
        }
        Ok(())
    }

    /// End the sessions idle longer than the timeout (their workers exit).
    fn expire(&mut self) {
        let idle = Duration::from_secs(settings::SESSION_IDLE_TIMEOUT.get() as u64);
        self.sessions
            .retain(|_, s| s.active.is_some() || !s.queued.is_empty() || s.last_used.elapsed() < idle);
    }

    /// Queue `request` on the session of `token`.
    fn enqueue(&mut self, token: &str, request: Request, answer: AnswerTx, upload: Option<Upload>) {
        let Some(s) = self.sessions.get_mut(token) else {
            let _ = answer.try_send(Response::Error {
                sqlstate: "28000".into(),
                message: "invalid or expired session token: log in again".into(),
                detail: String::new(),
                hint: String::new(),
            });
            return;
        };
        s.last_used = Instant::now();
        s.queued.push_back((request, answer, upload));
    }

    /// Move requests to the workers and answers to the handlers as far as
    /// the queues and channels allow; end the sessions whose worker is gone.
    fn pump(&mut self) {
        let mut gone = Vec::new();
        for (token, s) in self.sessions.iter_mut() {
            if !s.pump() {
                if let Some(a) = s.active.take() {
                    let _ = a.answer.try_send(Response::Error {
                        sqlstate: "57P01".into(),
                        message: "the session ended (its server process exited)".into(),
                        detail: String::new(),
                        hint: String::new(),
                    });
                }
                gone.push(token.clone());
            }
        }
        for t in gone {
            self.sessions.remove(&t);
        }
    }

    /// pg_hba.conf, the password, then what InitPostgres checks of the role
    /// and the database, in that order and with its messages.
    fn judge(&self, req: &LoginRequest) -> Result<(pg_sys::Oid, pg_sys::Oid), Refusal> {
        let addr: IpAddr = req.peer.ip();
        let who = hba::Login { addr, tls: req.tls, database: &req.database, role: &req.user };
        match hba::judge(&self.rules, &who, &mut Catalog) {
            Verdict::NoEntry => {
                return Err(Refusal::auth(login::no_entry(addr, &req.user, &req.database, req.tls)))
            }
            Verdict::Unsupported { line, why } => {
                return Err(Refusal::auth(format!("pg_hba.conf line {line}: {why}")));
            }
            Verdict::Method { line, method } => match method.as_str() {
                "trust" => {}
                "reject" => {
                    return Err(Refusal::auth(login::rejected(addr, &req.user, &req.database, req.tls)))
                }
                "password" | "md5" | "scram-sha-256" => {
                    if let Err(detail) = verify_password(&req.user, &req.password) {
                        return Err(Refusal {
                            message: login::password_failed(&req.user),
                            sqlstate: "28P01",
                            detail: Some(format!(
                                "{detail} Connection matched pg_hba.conf line {line}: \"{method}\""
                            )),
                        });
                    }
                }
                other => {
                    return Err(Refusal::auth(format!(
                        "authentication method \"{other}\" (pg_hba.conf line {line}) is not supported by vexec_flight"
                    )));
                }
            },
        }
        let role = Spi::get_two_with_args::<pg_sys::Oid, bool>(
            "SELECT oid, rolcanlogin FROM pg_authid WHERE rolname = $1",
            &[req.user.as_str().into()],
        );
        let role_oid = match role {
            Ok((Some(oid), Some(true))) => oid,
            Ok((Some(_), _)) => {
                return Err(Refusal::auth(format!("role \"{}\" is not permitted to log in", req.user)));
            }
            _ => return Err(Refusal::auth(format!("role \"{}\" does not exist", req.user))),
        };
        let db = Spi::get_three_with_args::<pg_sys::Oid, bool, bool>(
            "SELECT oid, datallowconn, has_database_privilege($2, oid, 'CONNECT') FROM pg_database WHERE datname = $1",
            &[req.database.as_str().into(), role_oid.into()],
        );
        match db {
            Ok((Some(db), Some(true), Some(true))) => Ok((role_oid, db)),
            Ok((Some(_), Some(false), _)) => Err(Refusal {
                message: format!("database \"{}\" is not currently accepting connections", req.database),
                sqlstate: "55000",
                detail: None,
            }),
            Ok((Some(_), _, _)) => Err(Refusal {
                message: format!("permission denied for database \"{}\"", req.database),
                sqlstate: "42501",
                detail: Some("User does not have CONNECT privilege.".into()),
            }),
            _ => Err(Refusal {
                message: format!("database \"{}\" does not exist", req.database),
                sqlstate: "3D000",
                detail: None,
            }),
        }
    }
}

impl Session {
    /// One step of `Listener::pump` for this session; false when its worker is gone.
    fn pump(&mut self) -> bool {
        loop {
            if self.active.is_none() {
                let Some((request, answer, upload)) = self.queued.pop_front() else { return true };
                let request = request.encode();
                self.active =
                    Some(Active { answer, unsent: Some(request.clone()), request, abandoned: false, upload });
            }
            let a = self.active.as_mut().expect("an active request");
            // The request, then its upload's pieces, as far as the worker's queue takes them.
            loop {
                if let Some(bytes) = &a.unsent {
                    match self.worker.send(bytes) {
                        Ok(true) => a.unsent = None,
                        Ok(false) => return true,
                        Err(()) => return false,
                    }
                }
                let Some(upload) = &mut a.upload else { break };
                let piece = match upload.try_recv() {
                    Ok(piece) => piece,
                    Err(TryRecvError::Empty) => return true, // the handler wakes us with the next
                    Err(TryRecvError::Disconnected) => Request::PieceAbort {
                        sqlstate: "08006".into(),
                        message: "the client's upload broke off".into(),
                    },
                };
                if matches!(piece, Request::PieceEnd | Request::PieceAbort { .. }) {
                    a.upload = None;
                }
                a.unsent = Some(piece.encode());
            }
            loop {
                if !a.abandoned && a.answer.is_closed() {
                    self.worker.cancel();
                    a.abandoned = true;
                }
                let permit = if a.abandoned {
                    None
                } else {
                    match a.answer.try_reserve() {
                        Ok(p) => Some(p),
                        Err(_) => return true, // full: the handler's next receive wakes us
                    }
                };
                match self.worker.receive(true) {
                    Received::Nothing => return true,
                    Received::Gone => return false,
                    Received::Message(m) => {
                        let last = m.is_last();
                        if let Some(p) = permit {
                            p.send(m);
                        }
                        if last {
                            break;
                        }
                    }
                }
            }
            self.active = None; // answered: the next queued request may go
        }
    }
}

/// The password against the role's stored secret (SCRAM or MD5; an expired
/// or missing one fails), with the reason for the server log.
fn verify_password(user: &str, password: &str) -> Result<(), String> {
    if password.is_empty() {
        return Err("Empty password.".into());
    }
    let (Ok(user), Ok(password)) = (CString::new(user), CString::new(password)) else {
        return Err("A NUL byte in the user name or password.".into());
    };
    let mut detail: *const c_char = std::ptr::null();
    // SAFETY: NUL-terminated strings; inside the login's transaction (catalog access).
    unsafe {
        let secret = pg_sys::get_role_password(user.as_ptr(), &mut detail);
        if !secret.is_null()
            && pg_sys::plain_crypt_verify(user.as_ptr(), secret, password.as_ptr(), &mut detail)
                == pg_sys::STATUS_OK as i32
        {
            return Ok(());
        }
        Err(if detail.is_null() {
            String::new()
        } else {
            CStr::from_ptr(detail).to_string_lossy().into_owned()
        })
    }
}
