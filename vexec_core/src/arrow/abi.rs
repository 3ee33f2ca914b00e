//! The C ABI of vexec's Arrow egress and ingest for other extensions: the
//! rendezvous variable `vexec/arrow_v1` points to an [`ArrowApiV1`]. Declared here,
//! in the crate both sides build on, so vexec (the producer) and
//! vexec_flight (a consumer) share one definition; docs/arrow.md gives the
//! C declarations for consumers in other languages.

use std::ffi::{c_char, c_void, CStr};

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};

/// The rendezvous variable's name.
pub const RENDEZVOUS: &CStr = c"vexec/arrow_v1";

/// What the rendezvous variable points to.
#[repr(C)]
pub struct ArrowApiV1 {
    /// 1.
    pub version: u32,
    /// `sizeof` this struct, so a later version can grow it.
    pub size: u32,
    /// Run `query` (NUL-terminated, in the database's encoding) and call
    /// `consumer`'s `on_schema` once, then `on_batch` per batch of at most
    /// `batch_rows` rows (0: 8,192); the rows returned. A statement that
    /// returns no rows (or several statements) runs too: an empty schema,
    /// the rows it processed. With `params` (a struct array of the
    /// `params_schema`, moved in; NULL: none), once per row of values, the
    /// parameters `$1`.. of each execution (a typed column fixes its
    /// parameter's type, a string column's is inferred from the statement).
    pub run: unsafe extern "C-unwind" fn(
        query: *const c_char,
        params: *mut FFI_ArrowArray,
        params_schema: *const FFI_ArrowSchema,
        batch_rows: u32,
        consumer: *const EgressConsumerV1,
    ) -> u64,
    /// Call `consumer`'s `on_schema` with the schema of `query`'s result,
    /// from its plan, without running it (`on_batch` is not called); and,
    /// unless `parameters` is NULL, write there the parameters' schema
    /// (fields `$1`..), their types as `run` would take values of
    /// `params_schema` (NULL: every type inferred).
    pub describe: unsafe extern "C-unwind" fn(
        query: *const c_char,
        params_schema: *const FFI_ArrowSchema,
        consumer: *const EgressConsumerV1,
        parameters: *mut FFI_ArrowSchema,
    ),
    /// Insert the batches of `source` into the table `table` (an OID), as
    /// the current role, through vexec's batch sink (the fields of
    /// `schema`, a struct, name the columns; the others get their
    /// defaults); the number of rows inserted. An ERROR (a bad value, a
    /// constraint, the source's own) aborts it and leaves nothing.
    pub insert: unsafe extern "C-unwind" fn(
        table: u32,
        schema: *const FFI_ArrowSchema,
        source: *const IngestSourceV1,
    ) -> u64,
}

/// Where `insert`'s batches come from: `next` fills `array` (a struct
/// array of the schema given to `insert`, which `insert` then owns) and
/// returns true, or returns false at the end. It may raise an ERROR.
#[repr(C)]
pub struct IngestSourceV1 {
    pub ctx: *mut c_void,
    pub next: unsafe extern "C-unwind" fn(ctx: *mut c_void, array: *mut FFI_ArrowArray) -> bool,
}

/// The caller's side. The structs passed to the callbacks belong to the
/// callee for the call's duration: a callback that keeps one moves it out
/// (copies it and sets the original's `release` to NULL, the C Data
/// Interface's rule) and releases it later; what is left is released when
/// the callback returns.
#[repr(C)]
pub struct EgressConsumerV1 {
    pub ctx: *mut c_void,
    /// The result's schema: a struct whose children are the columns.
    pub on_schema: unsafe extern "C-unwind" fn(ctx: *mut c_void, schema: *mut FFI_ArrowSchema),
    /// One batch: a struct array whose children are the columns, and its schema.
    pub on_batch: unsafe extern "C-unwind" fn(
        ctx: *mut c_void,
        array: *mut FFI_ArrowArray,
        schema: *mut FFI_ArrowSchema,
    ),
}
