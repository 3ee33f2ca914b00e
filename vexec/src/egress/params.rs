//! Statement parameters (`$1`..`$n`) from Arrow, as PostgreSQL's extended
//! protocol takes them from a pgwire client. A typed Arrow column gives its
//! parameter's type (int64 is `bigint`, as the batch sink reads it); a
//! string column is an untyped text parameter: its type is inferred from
//! the statement (PostgreSQL's variable-parameter parse), `text` when
//! nothing decides it, and its value read by that type's input function.
//! One Arrow row is one execution's values.

use std::ffi::{c_void, CStr};

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Schema};
use pgrx::pg_sys;
use pgrx::prelude::*;
use vexec_core::arrow::ingest::{self, Source};

use crate::ingest::{param_column, param_datum, Column};

/// How a parameter arrives.
enum Kind {
    /// A typed value: the batch sink's conversion.
    Typed(Source),
    /// A string whose type the statement decides.
    Untyped,
}

fn kind(field: &arrow_schema::Field) -> Kind {
    match field.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            if field.metadata().get("pg.type").is_none() =>
        {
            Kind::Untyped
        }
        // A column of NULLs only (pyarrow's type for `None`): untyped too.
        DataType::Null => Kind::Untyped,
        _ => Kind::Typed(ingest::source_of(field).unwrap_or_else(|e| crate::ingest::raise(&e))),
    }
}

/// The parameter types of `query` given the Arrow fields of its values
/// (`None`: no values yet, every type inferred): typed fields fix theirs,
/// the others are inferred, `text` when the statement leaves them open.
///
/// # Safety
/// SPI is connected.
pub unsafe fn types(query: &CStr, schema: Option<&Schema>) -> Vec<pg_sys::Oid> {
    let seeds: Vec<pg_sys::Oid> = match schema {
        None => Vec::new(),
        Some(s) => s
            .fields()
            .iter()
            .map(|f| match kind(f) {
                Kind::Typed(source) => type_oid(&source),
                Kind::Untyped => pg_sys::InvalidOid,
            })
            .collect(),
    };
    if schema.is_some() && !seeds.contains(&pg_sys::InvalidOid) {
        return seeds; // every type given: nothing to infer
    }
    // SAFETY: SPI is connected (this function's contract); the arrays live in the current memory
    // context through the parse, which may repalloc them.
    unsafe {
        let mut state = VarParams {
            types: pg_sys::palloc0(seeds.len().max(1) * std::mem::size_of::<pg_sys::Oid>()).cast(),
            count: seeds.len() as i32,
        };
        for (i, t) in seeds.iter().enumerate() {
            *state.types.add(i) = *t;
        }
        let plan = pg_sys::SPI_prepare_params(query.as_ptr(), Some(var_params), (&raw mut state).cast(), 0);
        if plan.is_null() {
            super::spi_failure("SPI_prepare_params", pg_sys::SPI_result);
        }
        pg_sys::SPI_freeplan(plan);
        (0..state.count as usize)
            .map(|i| match *state.types.add(i) {
                t if t == pg_sys::InvalidOid || t == pg_sys::UNKNOWNOID => pg_sys::TEXTOID,
                t => t,
            })
            .collect()
    }
}

struct VarParams {
    types: *mut pg_sys::Oid,
    count: i32,
}

/// The parser setup of PostgreSQL's variable-parameter parse (as
/// `parse_analyze_varparams` does for a pgwire Parse message).
#[pg_guard]
unsafe extern "C-unwind" fn var_params(pstate: *mut pg_sys::ParseState, arg: *mut c_void) {
    // SAFETY: arg is the VarParams `types` passed, live through the parse.
    unsafe {
        let state = &mut *arg.cast::<VarParams>();
        pg_sys::setup_parse_variable_parameters(pstate, &mut state.types, &mut state.count);
    }
}

/// The OID of a source's type.
fn type_oid(source: &Source) -> pg_sys::Oid {
    let name = std::ffi::CString::new(source.sql_name()).expect("type names have no zero byte");
    let (mut oid, mut typmod) = (pg_sys::InvalidOid, -1);
    // SAFETY: parses a type name (raising an error for an unknown one).
    unsafe { pg_sys::parseTypeString(name.as_ptr(), &mut oid, &mut typmod, std::ptr::null_mut()) };
    oid
}

/// How each parameter's values become Datums, for values of `schema` as
/// parameters of `types` (from [`types`]): once per statement, not per row.
/// An untyped string is read by its inferred type's input function.
pub fn readers(types: &[pg_sys::Oid], schema: &Schema) -> Vec<Column> {
    if schema.fields().len() != types.len() {
        // pgwire's Bind says the same (08P01).
        ereport!(
            ERROR,
            PgSqlErrorCode::ERRCODE_PROTOCOL_VIOLATION,
            format!(
                "bind message supplies {} parameters, but prepared statement \"\" requires {}",
                schema.fields().len(),
                types.len()
            )
        );
    }
    schema
        .fields()
        .iter()
        .zip(types)
        .map(|(field, &ptype)| {
            let source = match kind(field) {
                Kind::Typed(source) => source,
                Kind::Untyped => Source::Typed(String::new()),
            };
            param_column(source, ptype)
        })
        .collect()
}

/// The values of row `row` of `batch` as the parameters of types `types`,
/// read by `readers` (from [`readers`] for the batch's schema): a
/// ParamListInfo in the current memory context.
///
/// # Safety
/// In a transaction; `row` is below the batch's length.
pub unsafe fn values(
    types: &[pg_sys::Oid],
    readers: &[Column],
    batch: &RecordBatch,
    row: usize,
) -> pg_sys::ParamListInfo {
    // SAFETY: this function's contract; the list and the Datums are palloc'd.
    unsafe {
        let list = pg_sys::makeParamList(types.len() as i32);
        let params = (*list).params.as_mut_slice(types.len());
        for (i, (&ptype, reader)) in types.iter().zip(readers).enumerate() {
            let column = batch.column(i);
            let p = &mut params[i];
            p.ptype = ptype;
            p.pflags = pg_sys::PARAM_FLAG_CONST as u16;
            // Logical: a Null-typed column (pyarrow's for `None`) has no validity buffer.
            p.isnull = column.logical_nulls().is_some_and(|n| n.is_null(row));
            if !p.isnull {
                p.value = param_datum(reader, column, row);
            }
        }
        list
    }
}
