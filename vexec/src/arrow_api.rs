//! vexec's Arrow egress and ingest for other extensions (vexec_flight, or
//! any third party), through the rendezvous variable `vexec/arrow_v1`: a
//! pointer to an [`ArrowApiV1`] (declared in `vexec_core::arrow::abi`)
//! whose functions run a query and hand its batches to the caller's
//! callbacks, or insert the caller's batches into a table, as Arrow C Data
//! Interface structs. A C ABI, so the caller needs neither Rust
//! nor the same arrow-rs version; a versioned name, so a later API can sit
//! next to this one. docs/arrow.md shows the C declarations.
//!
//! Everything runs on the backend's main thread, in the caller's
//! transaction, as the current role. The callbacks may raise an ERROR
//! (which aborts the query, as any ERROR); `run` and `describe` raise the
//! query's errors as any PostgreSQL function does.

use std::ffi::{c_char, CStr};

use std::sync::Arc;

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};
use pgrx::pg_sys;
use pgrx::prelude::*;
pub use vexec_core::arrow::abi::{ArrowApiV1, EgressConsumerV1, IngestSourceV1, RENDEZVOUS};
use vexec_core::arrow::stream::{batch_from_c, batch_to_c, schema_to_c};

use crate::egress::reader::{error, internal};
use crate::egress::{self, Sink, DEFAULT_BATCH_ROWS};
use crate::ingest;

static API_V1: ArrowApiV1 = ArrowApiV1 {
    version: 1,
    size: std::mem::size_of::<ArrowApiV1>() as u32,
    run: run_v1,
    describe: describe_v1,
    insert: insert_v1,
};

/// Publish the API (from _PG_init; the variable lives for the process, so
/// a consumer loaded before or after vexec finds it).
pub fn install() {
    // SAFETY: find_rendezvous_variable returns the process's slot for this name, created on first
    // use; the static it is set to lives as long as the library.
    unsafe {
        *pg_sys::find_rendezvous_variable(RENDEZVOUS.as_ptr()) = (&raw const API_V1).cast_mut().cast();
    }
}

/// # Safety
/// `query` is a NUL-terminated string and `consumer` a live consumer, both
/// valid for the call; `params`, if not NULL, a struct array of
/// `params_schema` (moved in).
#[pg_guard]
unsafe extern "C-unwind" fn run_v1(
    query: *const c_char,
    params: *mut FFI_ArrowArray,
    params_schema: *const FFI_ArrowSchema,
    batch_rows: u32,
    consumer: *const EgressConsumerV1,
) -> u64 {
    // SAFETY: this function's contract.
    let (query, consumer) = unsafe { arguments(query, consumer) };
    // SAFETY: as above; the array is moved out of the caller's struct.
    let params = (!params.is_null()).then(|| unsafe {
        let array = std::ptr::replace(params, FFI_ArrowArray::empty());
        if params_schema.is_null() {
            error(
                PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED,
                "vexec/arrow_v1: parameters without a schema".into(),
            )
        }
        batch_from_c(array, &*params_schema).unwrap_or_else(|e| {
            error(
                PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
                format!("vexec/arrow_v1: parameters: {e}"),
            )
        })
    });
    let rows = if batch_rows == 0 { DEFAULT_BATCH_ROWS } else { batch_rows as usize };
    let params = params.as_ref().map(|batch| egress::Params { batch });
    egress::run(query, params, true, rows, &mut CSink(consumer))
}

/// # Safety
/// As [`run_v1`]; `parameters`, if not NULL, points to writable room for a
/// schema (the caller releases what is written there).
#[pg_guard]
unsafe extern "C-unwind" fn describe_v1(
    query: *const c_char,
    params_schema: *const FFI_ArrowSchema,
    consumer: *const EgressConsumerV1,
    parameters: *mut FFI_ArrowSchema,
) {
    // SAFETY: this function's contract.
    let (query, consumer) = unsafe { arguments(query, consumer) };
    let given = (!params_schema.is_null()).then(|| {
        // SAFETY: not NULL, and valid for the call (this function's contract).
        Schema::try_from(unsafe { &*params_schema }).unwrap_or_else(|e| {
            error(PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE, format!("vexec/arrow_v1: {e}"))
        })
    });
    let (result, parameter_types) = egress::describe(query, given.as_ref(), true);
    if !parameters.is_null() {
        let c = schema_to_c(&parameter_types).unwrap_or_else(|e| internal(e));
        // SAFETY: writable room for a schema (this function's contract); the caller owns it now.
        unsafe { std::ptr::write(parameters, c) };
    }
    CSink(consumer).schema(&result);
}

/// # Safety
/// `schema` is a struct schema and `source` a live source, both valid for
/// the call.
#[pg_guard]
unsafe extern "C-unwind" fn insert_v1(
    table: u32,
    schema: *const FFI_ArrowSchema,
    source: *const IngestSourceV1,
) -> u64 {
    if schema.is_null() || source.is_null() {
        error(
            PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED,
            "vexec/arrow_v1: a NULL schema or source".into(),
        )
    }
    // SAFETY: non-NULL and valid for the call (this function's contract).
    let (schema, source) = unsafe { (&*schema, &*source) };
    let schema = Arc::new(Schema::try_from(schema).unwrap_or_else(|e| {
        error(PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE, format!("vexec/arrow_v1: {e}"))
    }));
    let c_schema = schema_to_c(&schema).unwrap_or_else(|e| internal(e));
    let batches = CSource { source, schema: c_schema };
    ingest::insert(pg_sys::Oid::from(table), ingest::Batches { schema, batches: Box::new(batches) })
}

/// The batches of a C source, read as the sink asks for them.
struct CSource {
    source: *const IngestSourceV1,
    schema: FFI_ArrowSchema,
}

impl Iterator for CSource {
    type Item = Result<RecordBatch, String>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut array = FFI_ArrowArray::empty();
        // SAFETY: the source is valid for insert_v1's call, which this iterator does not outlive;
        // an ERROR the callback raises is caught at the boundary and rethrown as a Rust panic, so
        // the sink's frames unwind and free their state.
        let more = unsafe {
            let s = &*self.source;
            pg_sys::ffi::pg_guard_ffi_boundary(|| (s.next)(s.ctx, &mut array))
        };
        if !more {
            return None;
        }
        // SAFETY: the callback filled `array` with a struct array of the schema (its contract).
        Some(unsafe { batch_from_c(array, &self.schema) }.map_err(|e| e.to_string()))
    }
}

/// # Safety
/// As [`run_v1`].
unsafe fn arguments<'a>(
    query: *const c_char,
    consumer: *const EgressConsumerV1,
) -> (&'a CStr, &'a EgressConsumerV1) {
    if query.is_null() || consumer.is_null() {
        error(
            PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED,
            "vexec/arrow_v1: a NULL query or consumer".into(),
        )
    }
    // SAFETY: non-NULL, and valid for the call (this function's contract).
    unsafe { (CStr::from_ptr(query), &*consumer) }
}

/// A sink that hands batches to C callbacks.
struct CSink<'a>(&'a EgressConsumerV1);

impl Sink for CSink<'_> {
    fn schema(&mut self, schema: &SchemaRef) {
        let mut c = schema_to_c(schema).unwrap_or_else(|e| internal(e));
        // SAFETY: the callback's contract (EgressConsumerV1); an ERROR it raises is caught at the
        // boundary and rethrown as a Rust panic, so vexec's frames unwind and free their state.
        unsafe { pg_sys::ffi::pg_guard_ffi_boundary(|| (self.0.on_schema)(self.0.ctx, &mut c)) }
    }

    fn batch(&mut self, batch: RecordBatch) {
        let (mut array, mut schema) = batch_to_c(&batch).unwrap_or_else(|e| internal(e));
        // SAFETY: as in `schema`.
        unsafe {
            pg_sys::ffi::pg_guard_ffi_boundary(|| (self.0.on_batch)(self.0.ctx, &mut array, &mut schema))
        }
    }
}

#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {
    use std::ffi::c_void;

    use arrow_array::cast::AsArray;
    use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
    use arrow_array::types::Int32Type;
    use arrow_array::RecordBatch;
    use arrow_schema::Schema;
    use pgrx::pg_sys;
    use pgrx::prelude::*;
    use vexec_core::arrow::stream::batch_from_c;

    use super::{ArrowApiV1, EgressConsumerV1, RENDEZVOUS};

    #[derive(Default)]
    struct Collected {
        schema: Option<Schema>,
        batches: Vec<RecordBatch>,
    }

    unsafe extern "C-unwind" fn on_schema(ctx: *mut c_void, schema: *mut FFI_ArrowSchema) {
        // SAFETY: ctx is the test's Collected; schema is live for the call.
        unsafe { (*ctx.cast::<Collected>()).schema = Some(Schema::try_from(&*schema).unwrap()) }
    }

    unsafe extern "C-unwind" fn on_batch(
        ctx: *mut c_void,
        array: *mut FFI_ArrowArray,
        schema: *mut FFI_ArrowSchema,
    ) {
        // SAFETY: as on_schema; the array is moved out (its original's release left NULL).
        unsafe {
            let array = std::ptr::replace(array, FFI_ArrowArray::empty());
            (*ctx.cast::<Collected>()).batches.push(batch_from_c(array, &*schema).unwrap());
        }
    }

    #[pg_guard]
    unsafe extern "C-unwind" fn on_batch_error(
        _ctx: *mut c_void,
        _a: *mut FFI_ArrowArray,
        _s: *mut FFI_ArrowSchema,
    ) {
        error!("the consumer gave up");
    }

    fn api() -> &'static ArrowApiV1 {
        // SAFETY: vexec set the variable in _PG_init to its static API.
        unsafe {
            let p = *pg_sys::find_rendezvous_variable(RENDEZVOUS.as_ptr());
            assert!(!p.is_null(), "vexec/arrow_v1 is published");
            &*p.cast::<ArrowApiV1>()
        }
    }

    #[pg_test]
    fn egress_v1_streams_batches_through_the_c_data_interface() {
        let api = api();
        assert_eq!((api.version, api.size as usize), (1, std::mem::size_of::<ArrowApiV1>()));
        let mut got = Collected::default();
        let consumer = EgressConsumerV1 { ctx: (&raw mut got).cast(), on_schema, on_batch };
        // SAFETY: a NUL-terminated query and a live consumer.
        unsafe {
            (api.run)(
                c"SELECT g AS n, g::text AS s FROM generate_series(1, 2500) g".as_ptr(),
                std::ptr::null_mut(),
                std::ptr::null(),
                1000,
                &consumer,
            )
        };
        assert_eq!(got.schema.unwrap().field(1).metadata()["pg.type"], "text");
        assert_eq!(got.batches.iter().map(RecordBatch::num_rows).collect::<Vec<_>>(), vec![1000, 1000, 500]);
        let last = &got.batches[2];
        assert_eq!(last.column(0).as_primitive::<Int32Type>().value(499), 2500);
        assert_eq!(last.column(1).as_string::<i32>().value(0), "2001");

        let mut described = Collected::default();
        let consumer = EgressConsumerV1 { ctx: (&raw mut described).cast(), on_schema, on_batch };
        Spi::run("CREATE TABLE egress_untouched (x int)").unwrap();
        // SAFETY: as above.
        unsafe {
            (api.describe)(
                c"INSERT INTO egress_untouched VALUES (1) RETURNING x".as_ptr(),
                std::ptr::null(),
                &consumer,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(described.schema.unwrap().field(0).name(), "x");
        assert!(described.batches.is_empty());
        assert_eq!(
            Spi::get_one::<i64>("SELECT count(*) FROM egress_untouched").unwrap(),
            Some(0),
            "describe runs nothing"
        );
    }

    #[pg_test(error = "the consumer gave up")]
    fn egress_v1_consumer_errors_abort_the_query() {
        let mut got = Collected::default();
        let consumer = EgressConsumerV1 { ctx: (&raw mut got).cast(), on_schema, on_batch: on_batch_error };
        // SAFETY: a NUL-terminated query and a live consumer.
        unsafe { (api().run)(c"SELECT 1".as_ptr(), std::ptr::null_mut(), std::ptr::null(), 0, &consumer) };
    }

    #[pg_test]
    fn arrow_v1_runs_statements_with_parameters() {
        use std::sync::Arc;

        use arrow_array::types::{Date32Type, Int64Type};
        use arrow_array::{ArrayRef, Int64Array, StringArray};
        use arrow_schema::DataType;
        use vexec_core::arrow::stream::batch_to_c;

        let api = api();
        let params = RecordBatch::try_from_iter([
            ("a", Arc::new(Int64Array::from(vec![Some(41), None])) as ArrayRef),
            ("b", Arc::new(StringArray::from(vec!["2024-01-02", "2024-02-29"])) as ArrayRef),
        ])
        .unwrap();
        // A typed parameter keeps its type; a string's is inferred (date, from the cast).
        let mut got = Collected::default();
        let consumer = EgressConsumerV1 { ctx: (&raw mut got).cast(), on_schema, on_batch };
        let (mut array, schema) = batch_to_c(&params).unwrap();
        // SAFETY: a NUL-terminated query, a struct array and its schema, a live consumer.
        let rows = unsafe {
            (api.run)(c"SELECT $1 + 1 AS a, $2::date + 1 AS d".as_ptr(), &mut array, &schema, 0, &consumer)
        };
        assert_eq!(rows, 2, "one execution per row of values");
        let schema = got.schema.unwrap();
        assert_eq!(
            (schema.field(0).data_type(), schema.field(1).data_type()),
            (&DataType::Int64, &DataType::Date32)
        );
        let a: Vec<Option<i64>> = got
            .batches
            .iter()
            .map(|b| b.column(0).as_primitive::<Int64Type>().iter().next().unwrap())
            .collect();
        assert_eq!(a, vec![Some(42), None]);
        let d: Vec<i32> =
            got.batches.iter().map(|b| b.column(1).as_primitive::<Date32Type>().value(0)).collect();
        assert_eq!(d, vec![19725, 19783], "2024-01-03 and 2024-03-01");

        // Statements without rows run once per row too; their count comes back.
        Spi::run("CREATE TABLE arrow_params (x int, s text)").unwrap();
        let mut none = Collected::default();
        let consumer = EgressConsumerV1 { ctx: (&raw mut none).cast(), on_schema, on_batch };
        let (mut array, schema) = batch_to_c(&params).unwrap();
        // SAFETY: as above.
        let rows = unsafe {
            (api.run)(c"INSERT INTO arrow_params VALUES ($1, $2)".as_ptr(), &mut array, &schema, 0, &consumer)
        };
        assert_eq!(rows, 2);
        assert_eq!(none.schema.unwrap().fields().len(), 0);
        assert_eq!(Spi::get_one::<i64>("SELECT count(x) FROM arrow_params").unwrap(), Some(1));

        // Parameter types from the statement alone.
        let mut described = Collected::default();
        let consumer = EgressConsumerV1 { ctx: (&raw mut described).cast(), on_schema, on_batch };
        let mut parameters = FFI_ArrowSchema::empty();
        // SAFETY: as above; `parameters` is room for a schema.
        unsafe {
            (api.describe)(
                c"SELECT s FROM arrow_params WHERE x = $1 AND s = $2".as_ptr(),
                std::ptr::null(),
                &consumer,
                &mut parameters,
            )
        };
        let parameters = Schema::try_from(&parameters).unwrap();
        let types: Vec<(&str, &DataType)> =
            parameters.fields().iter().map(|f| (f.name().as_str(), f.data_type())).collect();
        assert_eq!(types, vec![("$1", &DataType::Int32), ("$2", &DataType::Utf8)]);
        assert_eq!(described.schema.unwrap().field(0).name(), "s");
    }
}
