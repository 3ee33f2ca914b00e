//! The C shim (csrc/vexec_shim.c): declarations matching vexec_shim.h.
//!
//! The declarations are `#[pg_guard]`: every call into the shim runs inside
//! a guard that turns a PostgreSQL ERROR's longjmp into a Rust panic, which
//! unwinds to the nearest #[pg_guard] entry point (and from there back into
//! an ERROR), running destructors on the way. No shim call can be made
//! unguarded. Shim calls are made once per batch, never per row. Other
//! closures that call into PostgreSQL go through [`guarded`].
//!
//! The structs' layout is a contract with vexec_shim.h: both sides assert
//! the same sizes and offsets at compile time.

use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::c_int;

pub const KIND_U8: i32 = 0;
pub const KIND_I16: i32 = 1;
pub const KIND_W4: i32 = 2;
pub const KIND_W8: i32 = 3;
pub const KIND_DATUM: i32 = 4;
pub const KIND_CHAR: i32 = 5;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct VxColumn {
    pub attnum: i32,
    pub kind: i32,
    pub values: *mut u8,
    pub validity: *mut u8,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct VxInput {
    pub attnum: i32,
    pub values: *const usize,
    pub validity: *const u8,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct VxQualItem {
    pub state: *mut pg_sys::ExprState,
    pub kernel_result: *const u8,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct VxTargetItem {
    pub state: *mut pg_sys::ExprState,
    pub values: *mut usize,
    pub isnull: *mut bool,
    /// typlen of a by-reference result to copy per row (0: none); see the C header.
    pub copy_typlen: i16,
}

/// What binding a kernel pack's declaration needs of a function
/// (`vx_proc_info`; strings palloc'd in the current memory context).
#[repr(C)]
pub struct VxProcInfo {
    pub name: *const std::ffi::c_char,
    pub args: *const std::ffi::c_char,
    pub prosrc: *const std::ffi::c_char,
    pub probin: *const std::ffi::c_char,
    pub c_strict_scalar: bool,
    pub rettype: pg_sys::Oid,
}

/// Arguments a pack function may take (`VX_CALL_MAX_ARGS`).
pub const CALL_MAX_ARGS: usize = 8;

// The layout contract (the same numbers are asserted in vexec_shim.h).
const _: () = {
    assert!(std::mem::size_of::<VxProcInfo>() == 40 && std::mem::offset_of!(VxProcInfo, probin) == 24);
    assert!(std::mem::offset_of!(VxProcInfo, c_strict_scalar) == 32);
    assert!(std::mem::offset_of!(VxProcInfo, rettype) == 36);
    use std::mem::{offset_of, size_of};
    assert!(size_of::<VxColumn>() == 24 && offset_of!(VxColumn, kind) == 4);
    assert!(offset_of!(VxColumn, values) == 8 && offset_of!(VxColumn, validity) == 16);
    assert!(
        size_of::<VxInput>() == 24 && offset_of!(VxInput, values) == 8 && offset_of!(VxInput, validity) == 16
    );
    assert!(size_of::<VxQualItem>() == 16 && offset_of!(VxQualItem, kernel_result) == 8);
    assert!(size_of::<VxTargetItem>() == 32 && offset_of!(VxTargetItem, values) == 8);
    assert!(offset_of!(VxTargetItem, isnull) == 16 && offset_of!(VxTargetItem, copy_typlen) == 24);
    assert!(
        KIND_U8 == 0 && KIND_I16 == 1 && KIND_W4 == 2 && KIND_W8 == 3 && KIND_DATUM == 4 && KIND_CHAR == 5
    );
};

#[repr(C)]
pub struct VxHeapReader {
    _private: [u8; 0],
}

/// VecInsert's writer (csrc/vexec_insert.c), opaque to Rust.
#[repr(C)]
pub struct VxInsert {
    _private: [u8; 0],
}

#[pg_guard]
unsafe extern "C-unwind" {
    pub fn vx_begin_scan(rel: pg_sys::Relation, snapshot: pg_sys::Snapshot) -> pg_sys::TableScanDesc;
    pub fn vx_begin_parallel_scan(
        rel: pg_sys::Relation,
        pscan: pg_sys::ParallelTableScanDesc,
    ) -> pg_sys::TableScanDesc;
    pub fn vx_scan_is_pagemode(scan: pg_sys::TableScanDesc) -> bool;

    pub fn vx_heap_begin(
        scan: pg_sys::TableScanDesc,
        nearly: c_int,
        early: *mut VxColumn,
        nlate: c_int,
        late: *mut VxColumn,
        capacity: c_int,
        keep_pins: bool,
        max_pins: c_int,
    ) -> *mut VxHeapReader;
    pub fn vx_heap_deform_late(r: *mut VxHeapReader, nrows: c_int, rows: *const u16);
    pub fn vx_heap_set_columns(
        r: *mut VxHeapReader,
        nearly: c_int,
        early: *mut VxColumn,
        nlate: c_int,
        late: *mut VxColumn,
    );
    pub fn vx_heap_set_tids(r: *mut VxHeapReader, tids: *mut pg_sys::ItemPointerData);
    pub fn vx_heap_next(r: *mut VxHeapReader, capacity: c_int) -> c_int;
    pub fn vx_heap_release(r: *mut VxHeapReader);
    pub fn vx_heap_restart(r: *mut VxHeapReader);
    pub fn vx_heap_stats(r: *mut VxHeapReader, pages: *mut u64, tuples: *mut u64);
    pub fn vx_heap_direct_pins(r: *mut VxHeapReader) -> u64;

    pub fn vx_slot_next(
        scan: pg_sys::TableScanDesc,
        slot: *mut pg_sys::TupleTableSlot,
        ncols: c_int,
        cols: *mut VxColumn,
        tids: *mut pg_sys::ItemPointerData,
        capacity: c_int,
    ) -> c_int;

    pub fn vx_eval_rows(
        econtext: *mut pg_sys::ExprContext,
        slot: *mut pg_sys::TupleTableSlot,
        ninputs: c_int,
        inputs: *const VxInput,
        tids: *const pg_sys::ItemPointerData,
        nrows: c_int,
        rows: *const u16,
        nquals: c_int,
        quals: *const VxQualItem,
        ntargets: c_int,
        targets: *const VxTargetItem,
        passing: *mut u16,
    ) -> c_int;
    pub fn vx_eval_scalar(
        state: *mut pg_sys::ExprState,
        econtext: *mut pg_sys::ExprContext,
        isnull: *mut bool,
    ) -> usize;
    pub fn vx_param_exec_ready(econtext: *mut pg_sys::ExprContext, paramid: c_int) -> bool;
    pub fn vx_detoast(values: *mut usize, validity: *const u8, nrows: c_int, rows: *const u16);
    pub fn vx_extension_lookup(
        name: *const std::ffi::c_char,
        version: *mut *mut std::ffi::c_char,
        xmin: *mut pg_sys::TransactionId,
    ) -> pg_sys::Oid;
    pub fn vx_extension_functions(ext: pg_sys::Oid, out: *mut pg_sys::Oid, max: c_int) -> c_int;
    pub fn vx_proc_info(func: pg_sys::Oid, info: *mut VxProcInfo) -> bool;
    pub fn vx_call_rows(
        flinfo: *mut pg_sys::FmgrInfo,
        collation: pg_sys::Oid,
        nargs: c_int,
        args: *const *const usize,
        nrows: c_int,
        rows: *const u16,
        out: *mut usize,
        isnull: *mut bool,
        per_row: pg_sys::MemoryContext,
    ) -> c_int;
    pub fn vx_copy_datums(
        values: *mut usize,
        validity: *const u8,
        nrows: c_int,
        rows: *const u16,
        typlen: i16,
        detoast: bool,
    );
    pub fn vx_topn_filter(
        nkeys: c_int,
        ssups: *mut pg_sys::SortSupportData,
        cols: *const *const usize,
        nulls: *const *const bool,
        bvals: *const usize,
        bnulls: *const bool,
        nrows: c_int,
        rows: *const u16,
        out: *mut u16,
    ) -> c_int;
    pub fn vx_prepare_sort_support(
        ssup: *mut pg_sys::SortSupportData,
        sortop: pg_sys::Oid,
        collation: pg_sys::Oid,
        nulls_first: bool,
    );
    pub fn vx_insert_begin(
        estate: *mut pg_sys::EState,
        rti: pg_sys::Index,
        count: bool,
        ncols: c_int,
    ) -> *mut VxInsert;
    pub fn vx_insert_rows(
        ins: *mut VxInsert,
        ncols: c_int,
        cols: *const VxColumn,
        nrows: c_int,
        rows: *const u16,
    );
    pub fn vx_insert_tuples(ins: *mut VxInsert, nrows: c_int, block: *const u8, ends: *const usize);
    pub fn vx_insert_desc(ins: *mut VxInsert) -> pg_sys::TupleDesc;
    pub fn vx_insert_from_child(ins: *mut VxInsert, child: *mut pg_sys::PlanState, max: c_int) -> c_int;
    pub fn vx_insert_finish(ins: *mut VxInsert);
    pub fn vx_insert_stats(ins: *mut VxInsert, rows: *mut u64, groups: *mut u64);
    pub fn vx_insert_reads_volatile(node: *mut pg_sys::Node, ingest_rows: pg_sys::Oid) -> bool;

    pub fn vx_sort_ranks(
        sortop: pg_sys::Oid,
        collation: pg_sys::Oid,
        values: *const usize,
        isnull: *const bool,
        n: c_int,
        ranks: *mut u32,
    );
}

/// Run `f` (a call into C that may raise an ERROR) so that the ERROR becomes
/// a panic that unwinds through Rust.
#[inline]
pub fn guarded<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: pg_guard_ffi_boundary turns a PostgreSQL ERROR raised inside f into a Rust panic that
    // pgrx's guards rethrow as the ERROR; it must run on the backend's main thread, where every
    // vexec executor callback runs.
    unsafe { pg_sys::ffi::pg_guard_ffi_boundary(f) }
}
