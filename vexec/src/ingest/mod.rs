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
//! (`plan/insert.rs`), by ModifyTable otherwise. A long stream goes in by
//! chunks, one execution of the INSERT each (see `insert`). A failure
//! leaves nothing (it is the caller's transaction's work). `vexec.ingest_rows`
//! (`rows.rs`) reads the batches this backend registered under the
//! statement's handle.

mod rows;
mod sql;
mod tuples;

pub(crate) use rows::{param_column, param_datum, Column, SinkReader};
pub(crate) use tuples::TableLayout;

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::CString;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::{PgBuiltInOids, PgOid};
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

/// A typed column's `pg.type` as PostgreSQL names the type it parses to
/// (quoted where needed): the name goes into the INSERT's column definition
/// list, so it must name a type, never be SQL text. A name that is not a
/// type raises PostgreSQL's error (42601, 42704).
fn canonical(source: Source) -> Source {
    let Source::Typed(name) = &source else { return source };
    let c = CString::new(name.as_str()).unwrap_or_else(|_| {
        fail(PgSqlErrorCode::ERRCODE_INVALID_NAME, "a pg.type name contains a zero byte")
    });
    let (mut typid, mut typmod) = (pg_sys::InvalidOid, -1i32);
    // SAFETY: parseTypeString reads a C string (raising on a bad name); format_type_with_typemod
    // returns a palloc'd C string.
    let formatted = unsafe {
        pg_sys::parseTypeString(c.as_ptr(), &mut typid, &mut typmod, std::ptr::null_mut());
        std::ffi::CStr::from_ptr(pg_sys::format_type_with_typemod(typid, typmod))
            .to_string_lossy()
            .into_owned()
    };
    Source::Typed(formatted)
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
        fields.iter().map(|f| canonical(ingest::source_of(f).unwrap_or_else(|e| raise(&e)))).collect();
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
    // A table without triggers or rules may take the batches in chunks, one
    // execution of the INSERT each (in this transaction, so the whole stays
    // atomic): each execution's function scan then holds one chunk, in
    // memory, instead of the whole stream in a tuplestore spilled to disk.
    // Triggers and rules would see the chunks (a statement trigger firing per
    // chunk, a row trigger's query seeing earlier chunks): one execution.
    let chunked = !has_triggers_or_rules(table);
    let limit = chunk_bytes();
    let schema = batches.schema;
    let mut source = batches.batches.peekable();
    Spi::connect_mut(|client| {
        let plan = client
            .prepare_mut(statement.as_str(), &[PgOid::BuiltIn(PgBuiltInOids::INT8OID)])
            .unwrap_or_else(|e| fail(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, e.to_string()));
        let mut rows = 0u64;
        loop {
            let chunk: Box<dyn Iterator<Item = Result<RecordBatch, String>>> = if chunked {
                Box::new(take_chunk(&mut source, limit).into_iter())
            } else {
                Box::new(std::mem::replace(&mut source, empty().peekable()))
            };
            let handle = NEXT_HANDLE.with(|n| {
                let h = n.get();
                n.set(h + 1);
                h
            });
            PENDING
                .with(|p| p.borrow_mut().insert(handle, Batches { schema: schema.clone(), batches: chunk }));
            // The batches are dropped whatever happens to the statement.
            let _unregister = Unregister(handle);
            rows += client
                .update(&plan, None, &[handle.into()])
                .map(|t| t.len() as u64)
                .unwrap_or_else(|e| fail(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, e.to_string()));
            if source.peek().is_none() {
                return rows;
            }
        }
    })
}

struct Unregister(i64);

impl Drop for Unregister {
    fn drop(&mut self) {
        PENDING.with(|p| p.borrow_mut().remove(&self.0));
    }
}

fn empty() -> Box<dyn Iterator<Item = Result<RecordBatch, String>>> {
    Box::new(std::iter::empty())
}

/// Arrow bytes of one chunk: half of work_mem, so an execution's tuplestore
/// of them stays in memory (at least 1 MB).
fn chunk_bytes() -> usize {
    // SAFETY: reads a GUC variable on the main thread.
    let work_mem_kb = unsafe { pg_sys::work_mem } as usize;
    (work_mem_kb * 1024 / 2).max(1 << 20)
}

/// The next batches of `source` up to `limit` bytes (at least one; an
/// error ends the chunk, and the execution reading it raises it).
fn take_chunk(
    source: &mut std::iter::Peekable<Box<dyn Iterator<Item = Result<RecordBatch, String>>>>,
    limit: usize,
) -> Vec<Result<RecordBatch, String>> {
    let mut chunk = Vec::new();
    let mut bytes = 0;
    while bytes < limit {
        match source.next() {
            Some(Ok(batch)) => {
                bytes += batch.get_array_memory_size();
                chunk.push(Ok(batch));
            }
            Some(Err(e)) => {
                chunk.push(Err(e));
                break;
            }
            None => break,
        }
    }
    chunk
}

/// Whether `table` has triggers or rules (pg_class's flags).
fn has_triggers_or_rules(table: pg_sys::Oid) -> bool {
    // SAFETY: a syscache lookup by OID; the tuple is released before returning.
    unsafe {
        let tuple =
            pg_sys::SearchSysCache1(pg_sys::SysCacheIdentifier::RELOID as i32, pg_sys::Datum::from(table));
        if tuple.is_null() {
            return true; // judged by the INSERT, which raises the error
        }
        let class = pg_sys::GETSTRUCT(tuple).cast::<pg_sys::FormData_pg_class>();
        let r = (*class).relhastriggers || (*class).relhasrules;
        pg_sys::ReleaseSysCache(tuple);
        r
    }
}

/// The batches registered under `handle` (taken: a statement reads them once).
pub(crate) fn take(handle: i64) -> Option<Batches> {
    PENDING.with(|p| p.borrow_mut().remove(&handle))
}

/// What VecInsert reads directly, in place of the rows of its child, when
/// the child is the sink's Function Scan of `vexec.ingest_rows(handle)`
/// and its every output column is one of the function's (no cast, no
/// default, no filter): the batches, without their rows being collected in
/// a tuplestore first.
pub(crate) struct SinkScan {
    /// The handle argument.
    pub handle: *mut pg_sys::Expr,
    /// The column definition list.
    pub desc: pg_sys::TupleDesc,
    /// Per output column, the function column (0-based) it is.
    pub columns: Vec<usize>,
}

/// `plan` as a [`SinkScan`], if it is one.
///
/// # Safety
/// `plan` is a live, finished plan tree node.
pub(crate) unsafe fn sink_scan(plan: *mut pg_sys::Plan) -> Option<SinkScan> {
    // SAFETY: plan is a live plan node (caller's contract); the lookups are the catalog's.
    unsafe {
        if (*plan).type_ != pg_sys::NodeTag::T_FunctionScan || !(*plan).qual.is_null() {
            return None;
        }
        let scan = plan as *mut pg_sys::FunctionScan;
        let functions: Vec<*mut pg_sys::RangeTblFunction> =
            crate::pgutil::list_ptrs((*scan).functions).collect();
        let [f] = functions[..] else { return None };
        if (*scan).funcordinality || (*(*f).funcexpr).type_ != pg_sys::NodeTag::T_FuncExpr {
            return None;
        }
        let call = (*f).funcexpr as *mut pg_sys::FuncExpr;
        if (*call).funcid != ingest_rows_oid()? {
            return None;
        }
        let handle = crate::pgutil::list_ptrs::<pg_sys::Expr>((*call).args).next()?;
        let ncols = (*f).funccolcount as usize;
        let scanrelid = (*scan).scan.scanrelid as i32;
        let columns = crate::pgutil::list_ptrs::<pg_sys::TargetEntry>((*plan).targetlist)
            .map(|te| {
                let v = (*te).expr as *mut pg_sys::Var;
                let plain = !v.is_null()
                    && (*v).xpr.type_ == pg_sys::NodeTag::T_Var
                    && (*v).varno == scanrelid
                    && (*v).varlevelsup == 0
                    && (1..=ncols as i16).contains(&(*v).varattno);
                plain.then(|| (*v).varattno as usize - 1)
            })
            .collect::<Option<Vec<usize>>>()?;
        let desc = pg_sys::BuildDescFromLists(
            (*f).funccolnames,
            (*f).funccoltypes,
            (*f).funccoltypmods,
            (*f).funccolcollations,
        );
        Some(SinkScan { handle, desc, columns })
    }
}

/// The OID of `vexec.ingest_rows(bigint)`, if the extension has it.
pub(crate) fn ingest_rows_oid() -> Option<pg_sys::Oid> {
    // SAFETY: a catalog lookup by name (missing_ok); the name list is palloc'd.
    let oid = unsafe {
        let name = pg_sys::list_make2_impl(
            pg_sys::NodeTag::T_List,
            pg_sys::ListCell { ptr_value: pg_sys::makeString(pg_sys::pstrdup(c"vexec".as_ptr())).cast() },
            pg_sys::ListCell {
                ptr_value: pg_sys::makeString(pg_sys::pstrdup(c"ingest_rows".as_ptr())).cast(),
            },
        );
        let args = [pg_sys::INT8OID];
        pg_sys::LookupFuncName(name, 1, args.as_ptr(), true)
    };
    (oid != pg_sys::InvalidOid).then_some(oid)
}
