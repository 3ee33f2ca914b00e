//! The gRPC side, on the listener's helper thread: tonic serves Flight SQL
//! (arrow-flight's `FlightSqlService`); whatever needs PostgreSQL becomes a
//! [`Job`] for the listener's main thread, answered through a oneshot
//! channel. Nothing here calls PostgreSQL.

use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddr;
use std::os::unix::net::UnixStream;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};

use arrow_array::cast::AsArray;
use arrow_array::StringArray;
use arrow_flight::encode::FlightDataEncoderBuilder;
use arrow_flight::flight_service_server::FlightServiceServer;
use arrow_flight::sql::metadata::{SqlInfoData, SqlInfoDataBuilder, XdbcTypeInfoData};
use arrow_flight::sql::server::{FlightSqlService, PeekableFlightDataStream};
use arrow_flight::sql::{
    ActionBeginTransactionRequest, ActionBeginTransactionResult, ActionClosePreparedStatementRequest,
    ActionCreatePreparedStatementRequest, ActionCreatePreparedStatementResult, ActionEndTransactionRequest,
    CommandGetCatalogs, CommandGetCrossReference, CommandGetDbSchemas, CommandGetExportedKeys,
    CommandGetImportedKeys, CommandGetPrimaryKeys, CommandGetSqlInfo, CommandGetTableTypes, CommandGetTables,
    CommandGetXdbcTypeInfo, CommandPreparedStatementQuery, CommandPreparedStatementUpdate,
    CommandStatementIngest, CommandStatementQuery, CommandStatementUpdate, DoPutPreparedStatementResult,
    EndTransaction, ProstMessageExt, SqlInfo, SqlSupportedTransaction, TicketStatementQuery,
};
use arrow_flight::utils::flight_data_to_arrow_batch;
use arrow_flight::{
    Action, CancelFlightInfoRequest, CancelFlightInfoResult, CancelStatus, FlightData, FlightDescriptor,
    FlightEndpoint, FlightInfo, HandshakeRequest, HandshakeResponse, IpcMessage, SchemaAsIpc, Ticket,
};
use arrow_ipc::writer::IpcWriteOptions;
use arrow_schema::Schema;
use futures::{Stream, StreamExt};
use prost::Message;
use tokio::sync::mpsc as mpsc_async;
use tokio::sync::oneshot;
use tonic::metadata::MetadataValue;
use tonic::{Code, Request, Response, Status, Streaming};
use vexec_core::flight::login::{basic_credentials, bearer_token};
use vexec_core::flight::{catalog, wire};

use crate::metadata;

/// Work for the listener's main thread.
pub enum Job {
    Login {
        login: LoginRequest,
        reply: oneshot::Sender<Result<String, Status>>,
    },
    /// Cancel the session's running statement if it is `request` (a
    /// query's encoded request); whether it was running.
    Cancel {
        token: String,
        request: Vec<u8>,
        reply: oneshot::Sender<bool>,
    },
    /// End the session of `token` (if it still exists).
    Close {
        token: String,
        reply: oneshot::Sender<()>,
    },
    /// A request for the session of `token`; its answer comes on `answer`.
    /// An ingest's upload follows on `upload`.
    Run {
        token: String,
        request: wire::Request,
        answer: mpsc_async::Sender<wire::Response>,
        upload: Option<mpsc_async::Receiver<wire::Request>>,
    },
}

/// Messages of an answer in flight between the main thread and a handler:
/// with the session worker's queue, what bounds a result's memory.
const ANSWER_CHANNEL: usize = 4;
/// Pieces of an upload in flight from a handler to the main thread (with
/// the worker's queue, what bounds an ingest's memory).
const UPLOAD_CHANNEL: usize = 4;

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
        self.wake();
        Ok(())
    }

    /// Wake the main thread (a job, or room in an answer's channel).
    fn wake(&self) {
        // Non-blocking: when the socket is full, the main thread has wake-ups pending anyway.
        if let Ok(mut w) = self.wake.lock() {
            let _ = w.write(&[1]);
        }
    }
}

/// An answer being received: each message taken makes room, which the main
/// thread is told of (it stops reading the worker's queue when the channel
/// is full).
struct Answer {
    messages: mpsc_async::Receiver<wire::Response>,
    main: Arc<MainThread>,
}

impl Answer {
    async fn next(&mut self) -> Option<wire::Response> {
        let m = self.messages.recv().await;
        self.main.wake();
        m
    }
}

/// A handler that stops listening (the client went away) tells the main
/// thread, which cancels the statement and drops the rest of the answer.
impl Drop for Answer {
    fn drop(&mut self) {
        self.messages.close();
        self.main.wake();
    }
}

/// The session token of a call's `authorization: Bearer` header.
fn token_of(metadata: &tonic::metadata::MetadataMap) -> Result<String, Status> {
    metadata
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token)
        .map(str::to_string)
        .ok_or_else(|| Status::unauthenticated("no session token: log in with a handshake first"))
}

/// PostgreSQL's error as a gRPC status: the code by SQLSTATE class, the
/// message as is, the SQLSTATE, detail and hint in trailers.
pub fn status_of(sqlstate: &str, message: &str, detail: &str, hint: &str) -> Status {
    let code = match sqlstate {
        "42501" => Code::PermissionDenied,
        "42P07" => Code::AlreadyExists,
        // Not CANCELLED: that code means the client cancelled (pyarrow turns it into a
        // KeyboardInterrupt); here the server cancelled (statement_timeout, pg_cancel_backend).
        "57014" => Code::Aborted,
        s if s.starts_with("28") => Code::Unauthenticated,
        s if ["42", "22", "0A", "23", "3D", "3F"].iter().any(|c| s.starts_with(c)) => Code::InvalidArgument,
        s if s.starts_with("55") => Code::FailedPrecondition,
        s if s.starts_with("53") || s.starts_with("54") => Code::ResourceExhausted,
        s if s.starts_with("40") => Code::Aborted,
        s if s.starts_with("57") || s.starts_with("08") => Code::Unavailable,
        _ => Code::Internal,
    };
    let mut status = Status::new(code, message);
    for (key, value) in
        [("x-postgresql-sqlstate", sqlstate), ("x-postgresql-detail", detail), ("x-postgresql-hint", hint)]
    {
        if let (false, Ok(v)) = (value.is_empty(), MetadataValue::try_from(value)) {
            status.metadata_mut().insert(key, v);
        }
    }
    status
}

pub struct Service {
    main: Arc<MainThread>,
    /// Whether connections are TLS (all are, or none).
    tls: bool,
    /// GetSqlInfo's answer.
    sql_info: SqlInfoData,
    /// GetXdbcTypeInfo's.
    xdbc_types: XdbcTypeInfoData,
}

/// Transaction ids: unique in the listener's life (a session checks that a
/// command names its own open transaction).
static NEXT_TRANSACTION: AtomicU64 = AtomicU64::new(1);

impl Service {
    /// `server_version`: PostgreSQL's, for GetSqlInfo.
    pub fn new(main: Arc<MainThread>, tls: bool, server_version: &str) -> Result<Service, String> {
        let mut info = SqlInfoDataBuilder::new();
        info.append(SqlInfo::FlightSqlServerName, "PostgreSQL (vexec_flight)");
        info.append(SqlInfo::FlightSqlServerVersion, server_version);
        info.append(SqlInfo::FlightSqlServerArrowVersion, "1.5");
        info.append(SqlInfo::FlightSqlServerReadOnly, false);
        info.append(SqlInfo::FlightSqlServerSql, true);
        info.append(SqlInfo::FlightSqlServerSubstrait, false);
        info.append(SqlInfo::FlightSqlServerTransaction, SqlSupportedTransaction::Transaction as i32);
        info.append(SqlInfo::FlightSqlServerCancel, false);
        info.append(SqlInfo::SqlIdentifierQuoteChar, "\"");
        let sql_info = info.build().map_err(|e| e.to_string())?;
        let xdbc_types = metadata::xdbc_types().map_err(|e| e.to_string())?;
        Ok(Service { main, tls, sql_info, xdbc_types })
    }

    /// The rows of a catalog query run in the session, every column text.
    async fn catalog_rows(
        &self,
        metadata: &tonic::metadata::MetadataMap,
        sql: &str,
    ) -> Result<Vec<Vec<String>>, Status> {
        let mut answer = self.run(metadata, wire::Request::Catalog { sql: sql.into(), describe: false })?;
        let mut schema = None;
        let mut rows = Vec::new();
        while let Some(m) = answer.next().await {
            match m {
                wire::Response::Data { header, body } => {
                    let data = FlightData {
                        data_header: header.into(),
                        data_body: body.into(),
                        ..Default::default()
                    };
                    let Some(s) = &schema else {
                        schema = Some(Arc::new(Schema::try_from(&data).map_err(internal)?));
                        continue;
                    };
                    let batch = flight_data_to_arrow_batch(&data, Arc::clone(s), &HashMap::new())
                        .map_err(internal)?;
                    let columns: Vec<&StringArray> = batch
                        .columns()
                        .iter()
                        .map(|c| {
                            c.as_string_opt::<i32>().ok_or_else(|| internal("a catalog column is not text"))
                        })
                        .collect::<Result<_, _>>()?;
                    for r in 0..batch.num_rows() {
                        rows.push(columns.iter().map(|c| c.value(r).to_string()).collect());
                    }
                }
                wire::Response::Done { .. } => return Ok(rows),
                wire::Response::Error { sqlstate, message, detail, hint } => {
                    return Err(status_of(&sqlstate, &message, &detail, &hint));
                }
            }
        }
        Err(Status::unavailable("the session ended"))
    }

    /// The foreign key rows `wanted` keeps, as a DoGet answer.
    async fn foreign_keys(
        &self,
        metadata: &tonic::metadata::MetadataMap,
        wanted: impl Fn(&Vec<String>) -> bool,
    ) -> Result<Response<DoGetStream>, Status> {
        let rows = self.catalog_rows(metadata, catalog::FOREIGN_KEYS_SQL).await?;
        let rows: Vec<&Vec<String>> = rows.iter().filter(|r| wanted(r)).collect();
        batch_stream(metadata::foreign_keys_schema(), metadata::foreign_keys(&rows))
    }

    /// The result and parameter schemas a describing request answers (its
    /// query planned in the session).
    async fn schemas_of(
        &self,
        metadata: &tonic::metadata::MetadataMap,
        request: wire::Request,
    ) -> Result<(Schema, Schema), Status> {
        let mut answer = self.run(metadata, request)?;
        let mut schemas = Vec::new();
        while let Some(m) = answer.next().await {
            match m {
                wire::Response::Data { header, .. } => {
                    let data = FlightData { data_header: header.into(), ..Default::default() };
                    schemas.push(Schema::try_from(&data).map_err(internal)?);
                }
                wire::Response::Done { .. } => {
                    let mut s = schemas.into_iter();
                    return match (s.next(), s.next()) {
                        (Some(result), Some(parameters)) => Ok((result, parameters)),
                        _ => Err(internal("a description without its schemas")),
                    };
                }
                wire::Response::Error { sqlstate, message, detail, hint } => {
                    return Err(status_of(&sqlstate, &message, &detail, &hint));
                }
            }
        }
        Err(Status::unavailable("the session ended"))
    }

    /// The result schema of a describing request.
    async fn schema_of(
        &self,
        metadata: &tonic::metadata::MetadataMap,
        request: wire::Request,
    ) -> Result<Schema, Status> {
        Ok(self.schemas_of(metadata, request).await?.0)
    }

    /// The rows count of a request answered by `Done` alone.
    async fn outcome(
        &self,
        metadata: &tonic::metadata::MetadataMap,
        request: wire::Request,
    ) -> Result<u64, Status> {
        rows_of(self.run(metadata, request)?).await
    }

    /// Hand `request` to the session of the call's token.
    fn run(&self, metadata: &tonic::metadata::MetadataMap, request: wire::Request) -> Result<Answer, Status> {
        self.run_with(metadata, request, None)
    }

    fn run_with(
        &self,
        metadata: &tonic::metadata::MetadataMap,
        request: wire::Request,
        upload: Option<mpsc_async::Receiver<wire::Request>>,
    ) -> Result<Answer, Status> {
        let token = token_of(metadata)?;
        let (answer, messages) = mpsc_async::channel(ANSWER_CHANNEL);
        self.main.send(Job::Run { token, request, answer, upload })?;
        Ok(Answer { messages, main: self.main.clone() })
    }
}

/// The rows count of an answer that is `Done` alone.
async fn rows_of(mut answer: Answer) -> Result<u64, Status> {
    while let Some(m) = answer.next().await {
        match m {
            wire::Response::Data { .. } => {}
            wire::Response::Done { rows } => return Ok(rows),
            wire::Response::Error { sqlstate, message, detail, hint } => {
                return Err(status_of(&sqlstate, &message, &detail, &hint));
            }
        }
    }
    Err(Status::unavailable("the session ended"))
}

type DoGetStream = Pin<Box<dyn Stream<Item = Result<FlightData, Status>> + Send>>;
type DoActionStream = Pin<Box<dyn Stream<Item = Result<arrow_flight::Result, Status>> + Send>>;

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
        let login = LoginRequest { peer, tls: self.tls, user, password, database };
        self.main.send(Job::Login { login, reply })?;
        let token = answer.await.map_err(|_| Status::unavailable("the server is shutting down"))??;
        let bearer = MetadataValue::try_from(format!("Bearer {token}"))
            .map_err(|e| Status::internal(e.to_string()))?;
        let body = HandshakeResponse { protocol_version: 0, payload: token.into_bytes().into() };
        let mut response = Response::new(Box::pin(futures::stream::iter([Ok(body)])) as HandshakeStream);
        response.metadata_mut().insert("authorization", bearer);
        Ok(response)
    }

    /// A query's FlightInfo: its schema, from the plan (the session worker
    /// plans it without running it), and a ticket that carries the query.
    async fn get_flight_info_statement(
        &self,
        query: CommandStatementQuery,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let transaction = query.transaction_id.clone().unwrap_or_default().to_vec();
        let describe = wire::Request::Describe {
            sql: query.query.clone(),
            transaction: transaction.clone(),
            params: vec![],
        };
        let schema = self.schema_of(request.metadata(), describe).await?;
        // The ticket carries the query and its transaction, as the session's request.
        let handle = wire::Request::Query { sql: query.query, transaction, params: vec![] }.encode();
        let ticket = TicketStatementQuery { statement_handle: handle.into() };
        flight_info(request, ticket.as_any(), &schema)
    }

    /// Run the ticket's query, streaming its batches as the executor makes them.
    async fn do_get_statement(
        &self,
        ticket: TicketStatementQuery,
        request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let query = match wire::Request::decode(&ticket.statement_handle) {
            Ok(q @ wire::Request::Query { .. }) => q,
            _ => return Err(Status::invalid_argument("the ticket is not a query of this server")),
        };
        let answer = self.run(request.metadata(), query)?;
        Ok(Response::new(answer_stream(answer)))
    }

    /// A prepared statement: its handle is the session's request itself
    /// (query, transaction, bound values), so the server keeps no state for
    /// it; its result schema and parameter types come from planning it in
    /// the session (the types inferred, as for a pgwire Parse without types).
    async fn do_action_create_prepared_statement(
        &self,
        query: ActionCreatePreparedStatementRequest,
        request: Request<Action>,
    ) -> Result<ActionCreatePreparedStatementResult, Status> {
        let transaction = query.transaction_id.unwrap_or_default().to_vec();
        let describe = wire::Request::Describe {
            sql: query.query.clone(),
            transaction: transaction.clone(),
            params: vec![],
        };
        let (schema, parameters) = self.schemas_of(request.metadata(), describe).await?;
        let handle = wire::Request::Query { sql: query.query, transaction, params: vec![] }.encode();
        Ok(ActionCreatePreparedStatementResult {
            prepared_statement_handle: handle.into(),
            dataset_schema: ipc_schema(&schema)?,
            parameter_schema: if parameters.fields().is_empty() {
                Default::default()
            } else {
                ipc_schema(&parameters)?
            },
        })
    }

    async fn do_action_close_prepared_statement(
        &self,
        _query: ActionClosePreparedStatementRequest,
        request: Request<Action>,
    ) -> Result<(), Status> {
        token_of(request.metadata())?;
        Ok(())
    }

    /// Binding parameters: the values (an Arrow stream, a row per
    /// execution) go into the handle the client gets back and executes.
    async fn do_put_prepared_statement_query(
        &self,
        query: CommandPreparedStatementQuery,
        request: Request<PeekableFlightDataStream>,
    ) -> Result<DoPutPreparedStatementResult, Status> {
        token_of(request.metadata())?;
        let (sql, transaction, _) = prepared(&query.prepared_statement_handle)?;
        let params = read_params(request.into_inner()).await?;
        let handle = wire::Request::Query { sql, transaction, params }.encode();
        Ok(DoPutPreparedStatementResult { prepared_statement_handle: Some(handle.into()) })
    }

    async fn get_flight_info_prepared_statement(
        &self,
        query: CommandPreparedStatementQuery,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let (sql, transaction, params) = prepared(&query.prepared_statement_handle)?;
        let describe = wire::Request::Describe { sql, transaction, params };
        let schema = self.schema_of(request.metadata(), describe).await?;
        flight_info(request, query.as_any(), &schema)
    }

    async fn do_get_prepared_statement(
        &self,
        query: CommandPreparedStatementQuery,
        request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let (sql, transaction, params) = prepared(&query.prepared_statement_handle)?;
        let answer = self.run(request.metadata(), wire::Request::Query { sql, transaction, params })?;
        Ok(Response::new(answer_stream(answer)))
    }

    /// A prepared update, run once per row of the values sent with it.
    async fn do_put_prepared_statement_update(
        &self,
        query: CommandPreparedStatementUpdate,
        request: Request<PeekableFlightDataStream>,
    ) -> Result<i64, Status> {
        let (sql, transaction, _) = prepared(&query.prepared_statement_handle)?;
        let metadata = request.metadata().clone();
        let params = read_params(request.into_inner()).await?;
        Ok(self.outcome(&metadata, wire::Request::Update { sql, transaction, params }).await? as i64)
    }

    /// Statements run for their effect (DDL, DML); the rows processed.
    async fn do_put_statement_update(
        &self,
        command: CommandStatementUpdate,
        request: Request<PeekableFlightDataStream>,
    ) -> Result<i64, Status> {
        let transaction = command.transaction_id.unwrap_or_default().to_vec();
        let update = wire::Request::Update { sql: command.query, transaction, params: vec![] };
        let rows = self.outcome(request.metadata(), update).await?;
        Ok(rows as i64)
    }

    /// Bulk ingest: the upload (its schema, then its batches) goes to the
    /// session piece by piece as it arrives, into vexec's batch sink; the
    /// rows inserted. Any error (the table, a value, a broken or malformed
    /// upload, a message over `vexec_flight.max_message_size`) leaves
    /// nothing behind.
    async fn do_put_statement_ingest(
        &self,
        command: CommandStatementIngest,
        request: Request<PeekableFlightDataStream>,
    ) -> Result<i64, Status> {
        use arrow_flight::sql::{TableExistsOption, TableNotExistOption};
        let options = command.table_definition_options.unwrap_or_default();
        let create = match TableNotExistOption::try_from(options.if_not_exist) {
            Ok(TableNotExistOption::Create) => true,
            Ok(TableNotExistOption::Fail) => false,
            _ => return Err(Status::invalid_argument("the ingest's if_not_exist option is not set")),
        };
        let if_exists = match TableExistsOption::try_from(options.if_exists) {
            Ok(TableExistsOption::Fail) => wire::IfExists::Fail,
            Ok(TableExistsOption::Append) => wire::IfExists::Append,
            Ok(TableExistsOption::Replace) => wire::IfExists::Replace,
            _ => return Err(Status::invalid_argument("the ingest's if_exists option is not set")),
        };
        let target = wire::IngestTarget {
            table: command.table,
            schema: command.schema.unwrap_or_default(),
            catalog: command.catalog.unwrap_or_default(),
            temporary: command.temporary,
            create,
            if_exists,
        };
        let transaction = command.transaction_id.unwrap_or_default().to_vec();
        let (pieces, upload) = mpsc_async::channel(UPLOAD_CHANNEL);
        let metadata = request.metadata().clone();
        let answer = self.run_with(&metadata, wire::Request::Ingest { target, transaction }, Some(upload))?;
        let mut stream = request.into_inner();
        loop {
            let piece = match stream.next().await {
                Some(Ok(data)) if data.data_header.is_empty() => continue, // metadata only
                Some(Ok(data)) => {
                    wire::Request::Piece { header: data.data_header.to_vec(), body: data.data_body.to_vec() }
                }
                Some(Err(status)) => {
                    // tonic refuses a message over the size limit with OUT_OF_RANGE.
                    let sqlstate = match status.code() {
                        Code::OutOfRange | Code::ResourceExhausted => "54000",
                        _ => "08006",
                    };
                    let message = format!("the upload broke off: {}", status.message());
                    wire::Request::PieceAbort { sqlstate: sqlstate.into(), message }
                }
                None => wire::Request::PieceEnd,
            };
            let last = !matches!(piece, wire::Request::Piece { .. });
            // A session that stopped reading (it ended) answers with the reason.
            if pieces.send(piece).await.is_err() {
                break;
            }
            self.main.wake();
            if last {
                break;
            }
        }
        Ok(rows_of(answer).await? as i64)
    }

    /// Open a transaction: the session's later commands that name its id
    /// run in it (a PostgreSQL transaction block); commands without an id
    /// are refused while it is open, as one session runs one transaction.
    async fn do_action_begin_transaction(
        &self,
        _query: ActionBeginTransactionRequest,
        request: Request<Action>,
    ) -> Result<ActionBeginTransactionResult, Status> {
        let id = NEXT_TRANSACTION.fetch_add(1, Ordering::Relaxed).to_be_bytes().to_vec();
        self.outcome(request.metadata(), wire::Request::Begin { transaction: id.clone() }).await?;
        Ok(ActionBeginTransactionResult { transaction_id: id.into() })
    }

    async fn do_action_end_transaction(
        &self,
        query: ActionEndTransactionRequest,
        request: Request<Action>,
    ) -> Result<(), Status> {
        let commit = match EndTransaction::try_from(query.action) {
            Ok(EndTransaction::Commit) => true,
            Ok(EndTransaction::Rollback) => false,
            _ => return Err(Status::invalid_argument("EndTransaction needs COMMIT or ROLLBACK")),
        };
        let end = wire::Request::End { transaction: query.transaction_id.to_vec(), commit };
        self.outcome(request.metadata(), end).await?;
        Ok(())
    }

    async fn get_flight_info_sql_info(
        &self,
        query: CommandGetSqlInfo,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.clone().into_builder(&self.sql_info).schema();
        flight_info(request, query.as_any(), &schema)
    }

    async fn do_get_sql_info(
        &self,
        query: CommandGetSqlInfo,
        request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        token_of(request.metadata())?;
        let builder = query.into_builder(&self.sql_info);
        let schema = builder.schema();
        let batch = builder.build().map_err(|e| Status::internal(e.to_string()))?;
        let stream = FlightDataEncoderBuilder::new()
            .with_schema(schema)
            .build(futures::stream::once(async { Ok(batch) }))
            .map(|r| r.map_err(|e| Status::internal(e.to_string())));
        Ok(Response::new(Box::pin(stream) as DoGetStream))
    }

    async fn get_flight_info_catalogs(
        &self,
        query: CommandGetCatalogs,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.clone().into_builder().schema();
        flight_info(request, query.as_any(), &schema)
    }

    async fn do_get_catalogs(
        &self,
        query: CommandGetCatalogs,
        request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let rows = self.catalog_rows(request.metadata(), catalog::CATALOGS_SQL).await?;
        let mut builder = query.into_builder();
        rows.iter().for_each(|r| builder.append(&r[0]));
        let schema = builder.schema();
        batch_stream(schema, builder.build())
    }

    async fn get_flight_info_schemas(
        &self,
        query: CommandGetDbSchemas,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.clone().into_builder().schema();
        flight_info(request, query.as_any(), &schema)
    }

    async fn do_get_schemas(
        &self,
        query: CommandGetDbSchemas,
        request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let rows = self.catalog_rows(request.metadata(), catalog::SCHEMAS_SQL).await?;
        let mut builder = query.into_builder();
        rows.iter().for_each(|r| builder.append(&r[0], &r[1]));
        let schema = builder.schema();
        batch_stream(schema, builder.build())
    }

    async fn get_flight_info_tables(
        &self,
        query: CommandGetTables,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.clone().into_builder().schema();
        flight_info(request, query.as_any(), &schema)
    }

    /// Tables (with their Arrow schemas when asked: each table's `SELECT *`
    /// planned in the session), filtered by the command's patterns.
    async fn do_get_tables(
        &self,
        query: CommandGetTables,
        request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let rows = self.catalog_rows(request.metadata(), catalog::TABLES_SQL).await?;
        let wanted = |r: &Vec<String>| {
            query.catalog.as_ref().is_none_or(|c| *c == r[0])
                && query.db_schema_filter_pattern.as_ref().is_none_or(|p| catalog::like(p, &r[1]))
                && query.table_name_filter_pattern.as_ref().is_none_or(|p| catalog::like(p, &r[2]))
                && (query.table_types.is_empty() || query.table_types.contains(&r[3]))
        };
        let include_schema = query.include_schema;
        let metadata = request.metadata().clone();
        let wanted: Vec<&Vec<String>> = rows.iter().filter(|r| wanted(r)).collect();
        let mut builder = query.into_builder();
        for r in wanted {
            let table_schema = if include_schema {
                let sql = catalog::select_all(&r[1], &r[2]);
                self.schemas_of(&metadata, wire::Request::Catalog { sql, describe: true }).await?.0
            } else {
                Schema::empty()
            };
            builder.append(&r[0], &r[1], &r[2], &r[3], &table_schema).map_err(internal)?;
        }
        let schema = builder.schema();
        batch_stream(schema, builder.build())
    }

    async fn get_flight_info_table_types(
        &self,
        query: CommandGetTableTypes,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.clone().into_builder().schema();
        flight_info(request, query.as_any(), &schema)
    }

    async fn do_get_table_types(
        &self,
        query: CommandGetTableTypes,
        request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        token_of(request.metadata())?;
        let mut builder = query.into_builder();
        catalog::TABLE_TYPES.iter().for_each(|t| builder.append(t));
        let schema = builder.schema();
        batch_stream(schema, builder.build())
    }

    async fn get_flight_info_primary_keys(
        &self,
        query: CommandGetPrimaryKeys,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        flight_info(request, query.as_any(), &metadata::primary_keys_schema())
    }

    /// A table's primary key columns, from pg_constraint (as the role sees
    /// the catalogs).
    async fn do_get_primary_keys(
        &self,
        query: CommandGetPrimaryKeys,
        request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let rows = self.catalog_rows(request.metadata(), catalog::PRIMARY_KEYS_SQL).await?;
        let (c, s) = (query.catalog.as_deref(), query.db_schema.as_deref());
        let wanted: Vec<&Vec<String>> =
            rows.iter().filter(|r| catalog::names(c, s, &query.table, [&r[0], &r[1], &r[2]])).collect();
        batch_stream(metadata::primary_keys_schema(), metadata::primary_keys(&wanted))
    }

    async fn get_flight_info_imported_keys(
        &self,
        query: CommandGetImportedKeys,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        flight_info(request, query.as_any(), &metadata::foreign_keys_schema())
    }

    /// The foreign keys of a table (the keys it imports).
    async fn do_get_imported_keys(
        &self,
        query: CommandGetImportedKeys,
        request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let (c, s, t) = (query.catalog.as_deref(), query.db_schema.as_deref(), query.table.as_str());
        self.foreign_keys(request.metadata(), |r| catalog::names(c, s, t, [&r[4], &r[5], &r[6]])).await
    }

    async fn get_flight_info_exported_keys(
        &self,
        query: CommandGetExportedKeys,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        flight_info(request, query.as_any(), &metadata::foreign_keys_schema())
    }

    /// The foreign keys that reference a table (the keys it exports).
    async fn do_get_exported_keys(
        &self,
        query: CommandGetExportedKeys,
        request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let (c, s, t) = (query.catalog.as_deref(), query.db_schema.as_deref(), query.table.as_str());
        self.foreign_keys(request.metadata(), |r| catalog::names(c, s, t, [&r[0], &r[1], &r[2]])).await
    }

    async fn get_flight_info_cross_reference(
        &self,
        query: CommandGetCrossReference,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        flight_info(request, query.as_any(), &metadata::foreign_keys_schema())
    }

    /// The foreign keys of one table that reference another.
    async fn do_get_cross_reference(
        &self,
        query: CommandGetCrossReference,
        request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        let pk = (query.pk_catalog.as_deref(), query.pk_db_schema.as_deref(), query.pk_table.as_str());
        let fk = (query.fk_catalog.as_deref(), query.fk_db_schema.as_deref(), query.fk_table.as_str());
        self.foreign_keys(request.metadata(), |r| {
            catalog::names(pk.0, pk.1, pk.2, [&r[0], &r[1], &r[2]])
                && catalog::names(fk.0, fk.1, fk.2, [&r[4], &r[5], &r[6]])
        })
        .await
    }

    async fn get_flight_info_xdbc_type_info(
        &self,
        query: CommandGetXdbcTypeInfo,
        request: Request<FlightDescriptor>,
    ) -> Result<Response<FlightInfo>, Status> {
        let schema = query.clone().into_builder(&self.xdbc_types).schema();
        flight_info(request, query.as_any(), &schema)
    }

    /// The types PostgreSQL's columns come as (all, or those of one XDBC type).
    async fn do_get_xdbc_type_info(
        &self,
        query: CommandGetXdbcTypeInfo,
        request: Request<Ticket>,
    ) -> Result<Response<DoGetStream>, Status> {
        token_of(request.metadata())?;
        let builder = query.into_builder(&self.xdbc_types);
        batch_stream(builder.schema(), builder.build())
    }

    /// Flight's `CloseSession` (clients call it when they close): the
    /// session ends now, its server process with it, rather than at the
    /// idle timeout.
    ///
    /// Flight's `CancelFlightInfo`: cancel the statement of the FlightInfo
    /// if the session is running it (as pg_cancel_backend would).
    async fn do_action_fallback(&self, request: Request<Action>) -> Result<Response<DoActionStream>, Status> {
        let token = token_of(request.metadata())?;
        if request.get_ref().r#type == "CancelFlightInfo" {
            let cancel = CancelFlightInfoRequest::decode(request.get_ref().body.as_ref())
                .map_err(|e| Status::invalid_argument(e.to_string()))?;
            let ticket = cancel
                .info
                .and_then(|info| info.endpoint.into_iter().next())
                .and_then(|endpoint| endpoint.ticket)
                .ok_or_else(|| Status::invalid_argument("the FlightInfo has no ticket"))?;
            let handle = arrow_flight::sql::Any::decode(ticket.ticket.as_ref())
                .ok()
                .and_then(|any| any.unpack::<TicketStatementQuery>().ok().flatten())
                .ok_or_else(|| Status::invalid_argument("the ticket is not a query of this server"))?;
            let (reply, answer) = oneshot::channel();
            self.main.send(Job::Cancel { token, request: handle.statement_handle.to_vec(), reply })?;
            let cancelled = answer.await.map_err(|_| Status::unavailable("the server is shutting down"))?;
            let status = if cancelled { CancelStatus::Cancelled } else { CancelStatus::NotCancellable };
            let result = CancelFlightInfoResult::new(status);
            let body = arrow_flight::Result { body: result.encode_to_vec().into() };
            return Ok(Response::new(Box::pin(futures::stream::iter([Ok(body)])) as DoActionStream));
        }
        if request.get_ref().r#type != "CloseSession" {
            return Err(Status::invalid_argument(format!("unknown action {:?}", request.get_ref().r#type)));
        }
        let (reply, answer) = oneshot::channel();
        self.main.send(Job::Close { token, reply })?;
        answer.await.map_err(|_| Status::unavailable("the server is shutting down"))?;
        // CloseSessionResult { status: CLOSED (1) }, field 1 as a varint.
        let body = arrow_flight::Result { body: vec![0x08, 0x01].into() };
        Ok(Response::new(Box::pin(futures::stream::iter([Ok(body)])) as DoActionStream))
    }

    async fn register_sql_info(&self, _id: i32, _result: &SqlInfo) {}
}

/// A PEM certificate chain and private key.
pub struct Tls {
    pub cert: Vec<u8>,
    pub key: Vec<u8>,
}

/// Serve `listeners` (over TLS with `tls`; clients' messages up to
/// `max_message` bytes) until `stop` fires (the helper thread's body).
pub fn run(
    listeners: Vec<std::net::TcpListener>,
    tls: Option<Tls>,
    service: Service,
    max_message: usize,
    stop: oneshot::Receiver<()>,
) -> Result<(), String> {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let mut incoming = Vec::new();
        for l in listeners {
            l.set_nonblocking(true).map_err(|e| e.to_string())?;
            let l = tokio::net::TcpListener::from_std(l).map_err(|e| e.to_string())?;
            // No Nagle: a small answer (a schema, a row count) waiting for the client's delayed
            // ACK costs 40 ms a call.
            let accepted = tokio_stream::wrappers::TcpListenerStream::new(l)
                .map(|s| s.and_then(|s| s.set_nodelay(true).map(|()| s)));
            incoming.push(accepted);
        }
        let mut builder = tonic::transport::Server::builder();
        if let Some(t) = tls {
            let identity = tonic::transport::Identity::from_pem(t.cert, t.key);
            builder = builder
                .tls_config(tonic::transport::ServerTlsConfig::new().identity(identity))
                .map_err(|e| e.to_string())?;
        }
        builder
            .add_service(FlightServiceServer::new(service).max_decoding_message_size(max_message))
            .serve_with_incoming_shutdown(futures::stream::select_all(incoming), async {
                let _ = stop.await;
            })
            .await
            .map_err(|e| e.to_string())
    })
}

fn internal(e: impl std::fmt::Display) -> Status {
    Status::internal(e.to_string())
}

/// A FlightInfo: the result's schema, and one endpoint whose ticket is
/// `command` (what DoGet will be asked to run).
fn flight_info(
    request: Request<FlightDescriptor>,
    command: arrow_flight::sql::Any,
    schema: &Schema,
) -> Result<Response<FlightInfo>, Status> {
    token_of(request.metadata())?;
    let endpoint = FlightEndpoint::new().with_ticket(Ticket::new(command.encode_to_vec()));
    let info = FlightInfo::new()
        .try_with_schema(schema)
        .map_err(internal)?
        .with_endpoint(endpoint)
        .with_descriptor(request.into_inner());
    Ok(Response::new(info))
}

/// One batch as a DoGet stream.
fn batch_stream(
    schema: arrow_schema::SchemaRef,
    batch: Result<arrow_array::RecordBatch, impl std::fmt::Display>,
) -> Result<Response<DoGetStream>, Status> {
    let batch = batch.map_err(internal)?;
    let stream = FlightDataEncoderBuilder::new()
        .with_schema(schema)
        .build(futures::stream::once(async { Ok(batch) }))
        .map(|r| r.map_err(internal));
    Ok(Response::new(Box::pin(stream) as DoGetStream))
}

/// The query, transaction and bound values of a prepared statement's handle.
fn prepared(handle: &[u8]) -> Result<(String, Vec<u8>, Vec<u8>), Status> {
    match wire::Request::decode(handle) {
        Ok(wire::Request::Query { sql, transaction, params }) => Ok((sql, transaction, params)),
        _ => Err(Status::invalid_argument("not a prepared statement of this server")),
    }
}

/// A schema as Flight SQL's prepared-statement results carry it (an IPC
/// schema message).
fn ipc_schema(schema: &Schema) -> Result<prost::bytes::Bytes, Status> {
    let IpcMessage(bytes) =
        SchemaAsIpc::new(schema, &IpcWriteOptions::default()).try_into().map_err(internal)?;
    Ok(bytes)
}

/// A DoPut's parameter values as one Arrow IPC stream (empty when none were
/// sent): checked here, so a malformed binding is refused when it is made.
async fn read_params(stream: PeekableFlightDataStream) -> Result<Vec<u8>, Status> {
    let malformed =
        |e: &dyn std::fmt::Display| status_of("22P03", &format!("malformed Arrow parameters: {e}"), "", "");
    let stream = stream.map(|r| r.map_err(|e| arrow_flight::error::FlightError::Tonic(Box::new(e))));
    let mut batches = arrow_flight::decode::FlightRecordBatchStream::new_from_flight_data(stream);
    let mut writer: Option<arrow_ipc::writer::StreamWriter<Vec<u8>>> = None;
    while let Some(batch) = batches.next().await {
        let batch = batch.map_err(|e| malformed(&e))?;
        let w = match &mut writer {
            Some(w) => w,
            None => writer.insert(
                arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &batch.schema()).map_err(internal)?,
            ),
        };
        w.write(&batch).map_err(internal)?;
    }
    match writer {
        None => Ok(Vec::new()),
        Some(w) => w.into_inner().map_err(internal),
    }
}

/// An answer as a DoGet stream: its Data pieces as FlightData, ended by
/// Done, or by Error as the stream's error.
fn answer_stream(answer: Answer) -> DoGetStream {
    let stream = futures::stream::unfold(Some(answer), |answer| async move {
        let mut answer = answer?;
        match answer.next().await? {
            wire::Response::Data { header, body } => {
                let data =
                    FlightData { data_header: header.into(), data_body: body.into(), ..Default::default() };
                Some((Ok(data), Some(answer)))
            }
            wire::Response::Done { .. } => None,
            wire::Response::Error { sqlstate, message, detail, hint } => {
                Some((Err(status_of(&sqlstate, &message, &detail, &hint)), None))
            }
        }
    });
    Box::pin(stream)
}
