//! Arrow record batches into a table: the batch sink other parts of vexec
//! (the Flight SQL ingest) and `vexec.arrow_insert(table, stream)` use.
//!
//! The rows go in through an ordinary statement, run as the current role:
//!
//! ```sql
//! INSERT INTO t (c1, c2, ...)
//! SELECT * FROM vexec.ingest_rows($1) AS x(c1 <arrow type's PostgreSQL type>, ...)
//! ```
//!
//! so privileges, column privileges, row level security, triggers,
//! defaults and constraints are PostgreSQL's, the target's column types
//! convert the values with PostgreSQL's assignment casts (an overflow is
//! 22003, a type with no such cast is 42804 before any row is read), and
//! the rows are written by VecInsert wherever the planner may use it
//! (`plan/insert.rs`), by ModifyTable otherwise. A failed statement leaves
//! nothing (it is the caller's transaction's work). `vexec.ingest_rows`
//! (`rows.rs`) reads the batches this backend registered under the
//! statement's handle.

mod rows;
mod sql;

pub(crate) use rows::{param_column, param_datum};

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::CString;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::arrow::ingest::{self, IngestError, Source};

/// Batches on their way into a table, and the schema they share.
pub struct Batches {
    pub schema: SchemaRef,
    pub batches: Box<dyn Iterator<Item = Result<RecordBatch, String>>>,
}

thread_local! {
    /// Batches registered for a statement, by handle (this backend only).
    static PENDING: RefCell<HashMap<i64, Batches>> = RefCell::new(HashMap::new());
    static NEXT_HANDLE: std::cell::Cell<i64> = const { std::cell::Cell::new(1) };
}

/// Raise an ERROR with `code` (an expression: the caller's value never comes).
pub(crate) fn fail(code: PgSqlErrorCode, message: impl Into<String>) -> ! {
    ereport!(ERROR, code, message.into());
}

/// Raise the error of a value or type that cannot be ingested.
pub(crate) fn raise(e: &IngestError) -> ! {
    let code = match e {
        IngestError::Unsupported(_) => PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
        IngestError::OutOfRange(_) | IngestError::Resolution(_) => {
            PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW
        }
        IngestError::Invalid(_) => PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
    };
    fail(code, e.to_string())
}

fn quote(ident: &str) -> String {
    let c = CString::new(ident).unwrap_or_else(|_| {
        fail(PgSqlErrorCode::ERRCODE_INVALID_NAME, "an Arrow field name contains a zero byte")
    });
    // SAFETY: quote_identifier reads a C string and returns it or a palloc'd copy.
    unsafe { std::ffi::CStr::from_ptr(pg_sys::quote_identifier(c.as_ptr())).to_string_lossy().into_owned() }
}

/// Insert `batches` into `table` as the current role; the Arrow fields name
/// the target columns (any others get their defaults). Returns the number
/// of rows inserted.
pub fn insert(table: pg_sys::Oid, batches: Batches) -> u64 {
    // SAFETY: a catalog lookup by name.
    if unsafe { pg_sys::get_extension_oid(c"vexec".as_ptr(), true) } == pg_sys::InvalidOid {
        pgrx::pg_sys::panic::ErrorReport::new(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            "vexec's batch sink needs the vexec extension in this database",
            "vexec::ingest",
        )
        .set_hint("Run CREATE EXTENSION vexec in it.")
        .report(PgLogLevel::ERROR);
    }
    let fields = batches.schema.fields().clone();
    if fields.is_empty() {
        ereport!(ERROR, PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE, "an Arrow stream without columns");
    }
    let sources: Vec<Source> =
        fields.iter().map(|f| ingest::source_of(f).unwrap_or_else(|e| raise(&e))).collect();
    // SAFETY: catalog lookups by OID; the names are palloc'd C strings or null.
    let target = unsafe {
        let name = pg_sys::get_rel_name(table);
        let schema = pg_sys::get_namespace_name(pg_sys::get_rel_namespace(table));
        if name.is_null() || schema.is_null() {
            ereport!(
                ERROR,
                PgSqlErrorCode::ERRCODE_UNDEFINED_TABLE,
                format!("no relation with OID {table:?}")
            );
        }
        let q = pg_sys::quote_qualified_identifier(schema, name);
        std::ffi::CStr::from_ptr(q).to_string_lossy().into_owned()
    };
    let columns: Vec<String> = fields.iter().map(|f| quote(f.name())).collect();
    let definitions: Vec<String> =
        columns.iter().zip(&sources).map(|(c, s)| format!("{c} {}", s.sql_name())).collect();
    let statement = format!(
        "INSERT INTO {target} ({}) SELECT * FROM vexec.ingest_rows($1) AS x({})",
        columns.join(", "),
        definitions.join(", ")
    );
    let handle = NEXT_HANDLE.with(|n| {
        let h = n.get();
        n.set(h + 1);
        h
    });
    PENDING.with(|p| p.borrow_mut().insert(handle, batches));
    // The batches are dropped whatever happens to the statement.
    struct Unregister(i64);
    impl Drop for Unregister {
        fn drop(&mut self) {
            PENDING.with(|p| p.borrow_mut().remove(&self.0));
        }
    }
    let _unregister = Unregister(handle);
    Spi::connect_mut(|client| {
        client
            .update(&statement, None, &[handle.into()])
            .map(|t| t.len() as u64)
            .unwrap_or_else(|e| fail(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, e.to_string()))
    })
}

/// The batches registered under `handle` (taken: a statement reads them once).
pub(crate) fn take(handle: i64) -> Option<Batches> {
    PENDING.with(|p| p.borrow_mut().remove(&handle))
}
