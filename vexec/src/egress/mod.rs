//! Query results as Arrow, the server half. [`run`] executes one statement
//! that returns rows, as the current role (its privileges, column
//! privileges and row level security, as any query of theirs), with a
//! DestReceiver (`receiver.rs`) that turns the executor's rows into Arrow
//! RecordBatches as they are produced and hands each to a [`Sink`]: nothing
//! is materialized beyond one batch. Three callers:
//!
//! - `vexec.arrow_ipc(query)` (`sql.rs`): the result as an Arrow IPC stream;
//! - other extensions (vexec_flight) through the rendezvous variable
//!   `vexec/arrow_v1` (`api.rs`), batches as Arrow C Data Interface arrays;
//! - [`describe`]: the Arrow schema of a query without running it.
//!
//! `reader.rs` reads each Datum into the builders of `vexec_core::arrow`,
//! which holds the type mapping (docs/arrow.md). When the plan's top node
//! is a vexec node that gives batches, `batches.rs` feeds the receiver its
//! batches, appended column by column, instead of a slot per row.

pub(crate) mod batches;
mod params;
pub(crate) mod reader;
pub mod receiver;
mod sql;

use std::ffi::CStr;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use pgrx::pg_sys;
use pgrx::prelude::*;

use reader::error;

/// Rows per RecordBatch when the caller does not say.
pub const DEFAULT_BATCH_ROWS: usize = 8192;

/// Where the batches of a result go. Called on the backend's main thread,
/// inside the query's execution: a sink may raise an ERROR (which aborts
/// the query as any ERROR does).
pub trait Sink {
    /// The result's schema, once, before any batch (also for an empty result).
    fn schema(&mut self, schema: &SchemaRef);
    /// One batch of at most the requested rows (never an empty one).
    fn batch(&mut self, batch: RecordBatch);
}

/// A borrowed sink, for a receiver that owns its sink.
struct SinkRef<'a>(&'a mut dyn Sink);

impl Sink for SinkRef<'_> {
    fn schema(&mut self, schema: &SchemaRef) {
        self.0.schema(schema)
    }
    fn batch(&mut self, batch: RecordBatch) {
        self.0.batch(batch)
    }
}

/// The executions of one statement (one per row of parameters) as one
/// result: one schema, every batch, the rows counted.
struct Executions<'a> {
    sink: &'a mut dyn Sink,
    schema_sent: bool,
    rows: u64,
}

impl Sink for Executions<'_> {
    fn schema(&mut self, schema: &SchemaRef) {
        if !std::mem::replace(&mut self.schema_sent, true) {
            self.sink.schema(schema)
        }
    }
    fn batch(&mut self, batch: RecordBatch) {
        self.rows += batch.num_rows() as u64;
        self.sink.batch(batch)
    }
}

/// Values for a statement's parameters: one execution per row (see
/// `params.rs` for how their types are decided).
pub struct Params<'a> {
    pub batch: &'a RecordBatch,
}

/// Run `query` (one statement that returns rows; with `any_statement`, any
/// statements, whose result is then an empty schema) and hand its result
/// to `sink` in batches of at most `batch_rows` rows; with `params`, once
/// per row of values. The rows returned or processed.
pub fn run(
    query: &CStr,
    params: Option<Params>,
    any_statement: bool,
    batch_rows: usize,
    sink: &mut dyn Sink,
) -> u64 {
    let batch_rows = batch_rows.max(1);
    Spi::connect(|_client| {
        // SAFETY: SPI is connected for the closure's duration, on the backend's main thread; the
        // plan is freed before returning; the receiver outlives the executions it is passed to.
        unsafe {
            if any_statement && statements(query) > 1 {
                if params.is_some() {
                    // pgwire's Parse says the same.
                    error(
                        PgSqlErrorCode::ERRCODE_SYNTAX_ERROR,
                        "cannot insert multiple commands into a prepared statement".into(),
                    );
                }
                // As the simple query protocol runs them: each analyzed when its turn comes.
                sink.schema(&Arc::new(arrow_schema::Schema::empty()));
                let rc = pg_sys::SPI_execute(query.as_ptr(), false, 0);
                if rc < 0 {
                    spi_failure("SPI_execute", rc);
                }
                return pg_sys::SPI_processed;
            }
            let types = match &params {
                Some(p) => params::types(query, Some(&p.batch.schema())),
                None => Vec::new(),
            };
            // Run to completion, so a parallel plan may serve it (as SPI_execute allows).
            let plan = prepare(query, &types, any_statement, pg_sys::CURSOR_OPT_PARALLEL_OK as i32);
            let executions = params.as_ref().map_or(1, |p| p.batch.num_rows());
            let readers =
                params.as_ref().map(|p| params::readers(&types, &p.batch.schema())).unwrap_or_default();
            if !pg_sys::SPI_is_cursor_plan(plan) {
                sink.schema(&Arc::new(arrow_schema::Schema::empty()));
                let mut processed = 0;
                for row in 0..executions {
                    let list = params
                        .as_ref()
                        .map_or(std::ptr::null_mut(), |p| params::values(&types, &readers, p.batch, row));
                    let options =
                        pg_sys::SPIExecuteOptions { read_only: false, params: list, ..Default::default() };
                    let rc = pg_sys::SPI_execute_plan_extended(plan, &options);
                    if rc < 0 {
                        spi_failure("SPI_execute_plan_extended", rc);
                    }
                    processed += pg_sys::SPI_processed;
                }
                pg_sys::SPI_freeplan(plan);
                return processed;
            }
            // A receiver per execution (its state lives in the execution's memory); the sink
            // sees one schema.
            let mut sink = Executions { sink, schema_sent: false, rows: 0 };
            if executions == 0 {
                sink.schema(&result_schema(plan));
            }
            for row in 0..executions {
                let list = params
                    .as_ref()
                    .map_or(std::ptr::null_mut(), |p| params::values(&types, &readers, p.batch, row));
                let mut receiver = receiver::ArrowReceiver::new(batch_rows, Box::new(SinkRef(&mut sink)));
                let options = pg_sys::SPIExecuteOptions {
                    read_only: false,
                    params: list,
                    dest: receiver.as_dest(),
                    ..Default::default()
                };
                let rc = pg_sys::SPI_execute_plan_extended(plan, &options);
                if rc < 0 {
                    spi_failure("SPI_execute_plan_extended", rc);
                }
                receiver.finish();
            }
            pg_sys::SPI_freeplan(plan);
            sink.rows
        }
    })
}

/// The Arrow schema of `query`'s result, from its plan, without running it
/// (an empty schema for statements that return no rows, with
/// `any_statement`), and the types of its parameters given the Arrow
/// fields of their values (`None`: inferred) as an Arrow schema (`$1`..).
pub fn describe(
    query: &CStr,
    params: Option<&arrow_schema::Schema>,
    any_statement: bool,
) -> (SchemaRef, SchemaRef) {
    Spi::connect(|_client| {
        // SAFETY: as in `run`; the plan source's result descriptor is valid while the plan is.
        unsafe {
            let empty = || Arc::new(arrow_schema::Schema::empty());
            if any_statement && statements(query) > 1 {
                return (empty(), empty()); // analyzed only when they run
            }
            let types = params::types(query, params);
            let plan = prepare(query, &types, any_statement, 0);
            let result = if pg_sys::SPI_is_cursor_plan(plan) { result_schema(plan) } else { empty() };
            pg_sys::SPI_freeplan(plan);
            let desc = pg_sys::CreateTemplateTupleDesc(types.len() as i32);
            for (i, t) in types.iter().enumerate() {
                let name = std::ffi::CString::new(format!("${}", i + 1)).expect("no zero byte");
                pg_sys::TupleDescInitEntry(desc, (i + 1) as i16, name.as_ptr(), *t, -1, 0);
            }
            (result, receiver::describe(desc).0)
        }
    })
}

/// A cursor over `query`'s result that [`fetch`] reads batch by batch: it
/// stays open (a portal of the transaction) after SPI is left.
pub fn open_cursor(query: &CStr) -> pg_sys::Portal {
    Spi::connect(|_client| {
        // SAFETY: SPI is connected for the closure's duration; the portal belongs to the
        // transaction, not to this SPI connection, so it outlives it.
        unsafe {
            let plan = prepare(query, &[], false, 0);
            let portal = pg_sys::SPI_cursor_open(
                std::ptr::null(),
                plan,
                std::ptr::null_mut(),
                std::ptr::null(),
                false,
            );
            pg_sys::SPI_freeplan(plan);
            portal
        }
    })
}

/// Fetch up to `rows` rows of an open cursor into `receiver` (whose sink
/// gets them as one batch, none at the end).
///
/// # Safety
/// `portal` is an open cursor of the current transaction.
pub unsafe fn fetch(portal: pg_sys::Portal, rows: usize, receiver: &mut receiver::ArrowReceiver<'_>) {
    // SAFETY: this function's contract; PortalRunFetch sets up the portal's snapshot, resource
    // owner and memory context itself, as SPI_cursor_fetch relies on.
    unsafe {
        pg_sys::PortalRunFetch(portal, pg_sys::FetchDirection::FETCH_FORWARD, rows as _, receiver.as_dest());
    }
}

/// The result schema of a cursor plan.
///
/// # Safety
/// `plan` is a live cursor plan (one plan source with a result).
unsafe fn result_schema(plan: pg_sys::SPIPlanPtr) -> SchemaRef {
    // SAFETY: this function's contract; the descriptor is valid while the plan is.
    unsafe {
        let sources = pg_sys::SPI_plan_get_plan_sources(plan);
        let source = crate::pgutil::list_ptrs::<pg_sys::CachedPlanSource>(sources)
            .next()
            .expect("a cursor plan has one plan source");
        receiver::describe((*source).resultDesc).0
    }
}

/// Parse, analyze and plan `query` with parameters of `types` and
/// `cursor_options` (CURSOR_OPT_*): one statement that returns rows, or
/// (`any_statement`) any statements.
///
/// # Safety
/// SPI is connected.
unsafe fn prepare(
    query: &CStr,
    types: &[pg_sys::Oid],
    any_statement: bool,
    cursor_options: i32,
) -> pg_sys::SPIPlanPtr {
    // SAFETY: this function's contract; SPI_prepare raises syntax and analysis errors itself.
    unsafe {
        let mut types = types.to_vec();
        let plan = pg_sys::SPI_prepare_cursor(
            query.as_ptr(),
            types.len() as i32,
            types.as_mut_ptr(),
            cursor_options,
        );
        if plan.is_null() {
            spi_failure("SPI_prepare", pg_sys::SPI_result);
        }
        if !any_statement && !pg_sys::SPI_is_cursor_plan(plan) {
            error(
                PgSqlErrorCode::ERRCODE_INVALID_CURSOR_DEFINITION,
                "Arrow egress needs one statement that returns rows (a SELECT, VALUES, TABLE, or a \
                 statement with RETURNING)"
                    .into(),
            );
        }
        plan
    }
}

/// The number of statements in `query` (parsed, not analyzed).
///
/// # Safety
/// In a transaction.
unsafe fn statements(query: &CStr) -> usize {
    // SAFETY: the raw parser reads a C string (raising syntax errors itself).
    unsafe {
        let list = pg_sys::pg_parse_query(query.as_ptr());
        if list.is_null() {
            0
        } else {
            (*list).length as usize
        }
    }
}

/// SPI's refusal `rc` of `what` as an ERROR (transaction control, which
/// SPI cannot run, said plainly).
fn spi_failure(what: &str, rc: i32) -> ! {
    if rc == pg_sys::SPI_ERROR_TRANSACTION {
        error(
            PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            "transaction control statements are not supported by vexec's Arrow egress".into(),
        );
    }
    error(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("Arrow egress: {what} failed: {}", spi_code(rc)))
}

fn spi_code(rc: i32) -> String {
    // SAFETY: SPI_result_code_string returns a static string for any code.
    unsafe { CStr::from_ptr(pg_sys::SPI_result_code_string(rc)) }.to_string_lossy().into_owned()
}
