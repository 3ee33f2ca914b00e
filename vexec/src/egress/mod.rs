//! Query results as Arrow, the server half. [`run`] executes one statement
//! that returns rows, as the current role (its privileges, column
//! privileges and row level security, as any query of theirs), with a
//! DestReceiver (`receiver.rs`) that turns the executor's rows into Arrow
//! RecordBatches as they are produced and hands each to a [`Sink`]: nothing
//! is materialized beyond one batch. Three callers:
//!
//! - `vexec.arrow_ipc(query)` (`sql.rs`): the result as an Arrow IPC stream;
//! - other extensions (vexec_flight) through the rendezvous variable
//!   `vexec/egress_v1` (`api.rs`), batches as Arrow C Data Interface arrays;
//! - [`describe`]: the Arrow schema of a query without running it.
//!
//! `reader.rs` reads each Datum into the builders of `vexec_core::arrow`,
//! which holds the type mapping (docs/arrow.md).

mod api;
mod reader;
pub mod receiver;
mod sql;

use std::ffi::CStr;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use pgrx::pg_sys;
use pgrx::prelude::*;

pub use api::install;
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

/// Run `query` (one statement that returns rows) and hand its result to
/// `sink` in batches of at most `batch_rows` rows.
pub fn run(query: &CStr, batch_rows: usize, sink: &mut dyn Sink) {
    let batch_rows = batch_rows.max(1);
    Spi::connect(|_client| {
        // SAFETY: SPI is connected for the closure's duration, on the backend's main thread; the
        // plan is freed before returning; the receiver outlives the execution it is passed to.
        unsafe {
            let plan = prepare(query);
            let mut receiver = receiver::ArrowReceiver::new(batch_rows, Box::new(SinkRef(sink)));
            let options = pg_sys::SPIExecuteOptions {
                read_only: false,
                dest: receiver.as_dest(),
                ..Default::default()
            };
            let rc = pg_sys::SPI_execute_plan_extended(plan, &options);
            if rc < 0 {
                error(
                    PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                    format!("Arrow egress: SPI_execute_plan_extended failed: {}", spi_code(rc)),
                );
            }
            receiver.finish();
            pg_sys::SPI_freeplan(plan);
        }
    })
}

/// The Arrow schema of `query`'s result, from its plan, without running it.
pub fn describe(query: &CStr) -> SchemaRef {
    Spi::connect(|_client| {
        // SAFETY: as in `run`; the plan source's result descriptor is valid while the plan is.
        unsafe {
            let plan = prepare(query);
            let sources = pg_sys::SPI_plan_get_plan_sources(plan);
            let source = crate::pgutil::list_ptrs::<pg_sys::CachedPlanSource>(sources)
                .next()
                .expect("a cursor plan has one plan source");
            let schema = receiver::describe((*source).resultDesc).0;
            pg_sys::SPI_freeplan(plan);
            schema
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
            let plan = prepare(query);
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

/// Parse, analyze and plan `query`: one statement that returns rows.
///
/// # Safety
/// SPI is connected.
unsafe fn prepare(query: &CStr) -> pg_sys::SPIPlanPtr {
    // SAFETY: this function's contract; SPI_prepare raises syntax and analysis errors itself.
    unsafe {
        let plan = pg_sys::SPI_prepare(query.as_ptr(), 0, std::ptr::null_mut());
        if plan.is_null() {
            error(
                PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                format!("Arrow egress: SPI_prepare failed: {}", spi_code(pg_sys::SPI_result)),
            );
        }
        if !pg_sys::SPI_is_cursor_plan(plan) {
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

fn spi_code(rc: i32) -> String {
    // SAFETY: SPI_result_code_string returns a static string for any code.
    unsafe { CStr::from_ptr(pg_sys::SPI_result_code_string(rc)) }.to_string_lossy().into_owned()
}
