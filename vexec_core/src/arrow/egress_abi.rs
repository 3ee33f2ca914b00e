//! The C ABI of vexec's Arrow egress for other extensions: the rendezvous
//! variable `vexec/egress_v1` points to an [`EgressApiV1`]. Declared here,
//! in the crate both sides build on, so vexec (the producer) and
//! vexec_flight (a consumer) share one definition; docs/arrow.md gives the
//! C declarations for consumers in other languages.

use std::ffi::{c_char, c_void, CStr};

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};

/// The rendezvous variable's name.
pub const RENDEZVOUS: &CStr = c"vexec/egress_v1";

/// What the rendezvous variable points to.
#[repr(C)]
pub struct EgressApiV1 {
    /// 1.
    pub version: u32,
    /// `sizeof` this struct, so a later version can grow it.
    pub size: u32,
    /// Run `query` (one statement that returns rows; NUL-terminated, in the
    /// database's encoding) and call `consumer`'s `on_schema` once, then
    /// `on_batch` per batch of at most `batch_rows` rows (0: 8,192).
    pub run:
        unsafe extern "C-unwind" fn(query: *const c_char, batch_rows: u32, consumer: *const EgressConsumerV1),
    /// Call `consumer`'s `on_schema` with the schema of `query`'s result,
    /// from its plan, without running it (`on_batch` is not called).
    pub describe: unsafe extern "C-unwind" fn(query: *const c_char, consumer: *const EgressConsumerV1),
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
