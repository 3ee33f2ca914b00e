//! The gRPC side, on the listener's helper thread: tonic serves Flight SQL
//! (arrow-flight's `FlightSqlService`); whatever needs PostgreSQL becomes a
//! [`Job`] for the listener's main thread, answered through a oneshot
//! channel. Nothing here calls PostgreSQL.

use std::io::Write;
use std::net::SocketAddr;
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::sync::{mpsc, Arc, Mutex};

use arrow_flight::flight_service_server::FlightServiceServer;
use arrow_flight::sql::server::FlightSqlService;
use arrow_flight::sql::SqlInfo;
use arrow_flight::{HandshakeRequest, HandshakeResponse};
use futures::Stream;
use tokio::sync::oneshot;
use tonic::metadata::MetadataValue;
use tonic::{Request, Response, Status, Streaming};
use vexec_core::flight::login::basic_credentials;

/// Work for the listener's main thread.
pub enum Job {
    Login { login: LoginRequest, reply: oneshot::Sender<Result<String, Status>> },
}

pub struct LoginRequest {
    pub peer: SocketAddr,
    pub tls: bool,
    pub user: String,
    pub password: String,
    pub database: String,
}

/// The way to the main thread: a channel, and a socket whose readability
/// wakes the main thread's wait (WaitLatchOrSocket).
pub struct MainThread {
    jobs: Mutex<mpsc::Sender<Job>>,
    wake: Mutex<UnixStream>,
}

impl MainThread {
    pub fn new(jobs: mpsc::Sender<Job>, wake: UnixStream) -> MainThread {
        MainThread { jobs: Mutex::new(jobs), wake: Mutex::new(wake) }
    }

    fn send(&self, job: Job) -> Result<(), Status> {
        let gone = || Status::unavailable("the server is shutting down");
        self.jobs.lock().map_err(|_| gone())?.send(job).map_err(|_| gone())?;
        // Non-blocking: when the socket is full, the main thread has wake-ups pending anyway.
        let _ = self.wake.lock().map_err(|_| gone())?.write(&[1]);
        Ok(())
    }
}

pub struct Service {
    main: Arc<MainThread>,
}

impl Service {
    pub fn new(main: Arc<MainThread>) -> Service {
        Service { main }
    }
}

type HandshakeStream = Pin<Box<dyn Stream<Item = Result<HandshakeResponse, Status>> + Send>>;

#[tonic::async_trait]
impl FlightSqlService for Service {
    type FlightService = Service;

    /// Basic authentication (`authorization: Basic ...`), the database in
    /// header `database` (default: the user's name, as libpq's). The token
    /// comes back as `authorization: Bearer <token>` and as the payload.
    async fn do_handshake(
        &self,
        request: Request<Streaming<HandshakeRequest>>,
    ) -> Result<Response<HandshakeStream>, Status> {
        let peer =
            request.remote_addr().ok_or_else(|| Status::internal("the client's address is unknown"))?;
        let metadata = request.metadata().clone();
        let (user, password) = metadata
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(basic_credentials)
            .ok_or_else(|| {
                Status::unauthenticated("a user name and password are required (Basic authorization)")
            })?;
        let database = match metadata.get("database").map(|v| v.to_str()) {
            Some(Ok(d)) => d.to_string(),
            Some(Err(_)) => return Err(Status::invalid_argument("the database header is not ASCII")),
            None => user.clone(),
        };
        // Read the client's messages to their end (clients write one and
        // fail when the call ends before they have finished writing).
        let mut messages = request.into_inner();
        while messages.message().await?.is_some() {}
        let (reply, answer) = oneshot::channel();
        let login = LoginRequest { peer, tls: false, user, password, database };
        self.main.send(Job::Login { login, reply })?;
        let token = answer.await.map_err(|_| Status::unavailable("the server is shutting down"))??;
        let bearer = MetadataValue::try_from(format!("Bearer {token}"))
            .map_err(|e| Status::internal(e.to_string()))?;
        let body = HandshakeResponse { protocol_version: 0, payload: token.into_bytes().into() };
        let mut response = Response::new(Box::pin(futures::stream::iter([Ok(body)])) as HandshakeStream);
        response.metadata_mut().insert("authorization", bearer);
        Ok(response)
    }

    async fn register_sql_info(&self, _id: i32, _result: &SqlInfo) {}
}

/// Serve `listeners` until `stop` fires (the helper thread's body).
pub fn run(
    listeners: Vec<std::net::TcpListener>,
    service: Service,
    stop: oneshot::Receiver<()>,
) -> Result<(), String> {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let mut incoming = Vec::new();
        for l in listeners {
            l.set_nonblocking(true).map_err(|e| e.to_string())?;
            let l = tokio::net::TcpListener::from_std(l).map_err(|e| e.to_string())?;
            incoming.push(tokio_stream::wrappers::TcpListenerStream::new(l));
        }
        tonic::transport::Server::builder()
            .add_service(FlightServiceServer::new(service))
            .serve_with_incoming_shutdown(futures::stream::select_all(incoming), async {
                let _ = stop.await;
            })
            .await
            .map_err(|e| e.to_string())
    })
}
