//! The Arrow egress for other extensions (vexec_flight, or any third
//! party), through the rendezvous variable `vexec/egress_v1`: a pointer to
//! an [`EgressApiV1`] (declared in `vexec_core::arrow::egress_abi`) whose
//! functions run a query and hand its batches to the caller's callbacks as
//! Arrow C Data Interface structs. A C ABI, so the caller needs neither Rust
//! nor the same arrow-rs version; a versioned name, so a later API can sit
//! next to this one. docs/arrow.md shows the C declarations.
//!
//! Everything runs on the backend's main thread, in the caller's
//! transaction, as the current role. The callbacks may raise an ERROR
//! (which aborts the query, as any ERROR); `run` and `describe` raise the
//! query's errors as any PostgreSQL function does.

use std::ffi::{c_char, CStr};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use pgrx::pg_sys;
use pgrx::prelude::*;
pub use vexec_core::arrow::egress_abi::{EgressApiV1, EgressConsumerV1, RENDEZVOUS};
use vexec_core::arrow::stream::{batch_to_c, schema_to_c};

use super::reader::{error, internal};
use super::{Sink, DEFAULT_BATCH_ROWS};

static API_V1: EgressApiV1 = EgressApiV1 {
    version: 1,
    size: std::mem::size_of::<EgressApiV1>() as u32,
    run: run_v1,
    describe: describe_v1,
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
/// valid for the call.
#[pg_guard]
unsafe extern "C-unwind" fn run_v1(query: *const c_char, batch_rows: u32, consumer: *const EgressConsumerV1) {
    // SAFETY: this function's contract.
    let (query, consumer) = unsafe { arguments(query, consumer) };
    let rows = if batch_rows == 0 { DEFAULT_BATCH_ROWS } else { batch_rows as usize };
    super::run(query, rows, &mut CSink(consumer));
}

/// # Safety
/// As [`run_v1`].
#[pg_guard]
unsafe extern "C-unwind" fn describe_v1(query: *const c_char, consumer: *const EgressConsumerV1) {
    // SAFETY: this function's contract.
    let (query, consumer) = unsafe { arguments(query, consumer) };
    CSink(consumer).schema(&super::describe(query));
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
            "vexec/egress_v1: a NULL query or consumer".into(),
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

    use super::{EgressApiV1, EgressConsumerV1, RENDEZVOUS};

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

    fn api() -> &'static EgressApiV1 {
        // SAFETY: vexec set the variable in _PG_init to its static API.
        unsafe {
            let p = *pg_sys::find_rendezvous_variable(RENDEZVOUS.as_ptr());
            assert!(!p.is_null(), "vexec/egress_v1 is published");
            &*p.cast::<EgressApiV1>()
        }
    }

    #[pg_test]
    fn egress_v1_streams_batches_through_the_c_data_interface() {
        let api = api();
        assert_eq!((api.version, api.size as usize), (1, std::mem::size_of::<EgressApiV1>()));
        let mut got = Collected::default();
        let consumer = EgressConsumerV1 { ctx: (&raw mut got).cast(), on_schema, on_batch };
        // SAFETY: a NUL-terminated query and a live consumer.
        unsafe {
            (api.run)(
                c"SELECT g AS n, g::text AS s FROM generate_series(1, 2500) g".as_ptr(),
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
        unsafe { (api.describe)(c"INSERT INTO egress_untouched VALUES (1) RETURNING x".as_ptr(), &consumer) };
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
        unsafe { (api().run)(c"SELECT 1".as_ptr(), 0, &consumer) };
    }
}
