//! Small helpers over PostgreSQL's C data structures.

use pgrx::pg_sys;

/// The pointers of a `List` of pointers (NIL gives none).
///
/// # Safety
/// `list` is NIL or a valid pointer `List` whose cells point to `T`s, and it
/// is not changed while the iterator is in use.
pub unsafe fn list_ptrs<T>(list: *mut pg_sys::List) -> impl Iterator<Item = *mut T> {
    // SAFETY: this function's contract: list is NIL or a live List.
    let len = if list.is_null() { 0 } else { unsafe { (*list).length as usize } };
    // SAFETY: i is below the length read above, and the list is not changed while the iterator is
    // used (this function's contract).
    (0..len).map(move |i| unsafe { (*(*list).elements.add(i)).ptr_value as *mut T })
}

/// A list of Integer nodes (a plan's `custom_private`, see
/// `vexec_core::plan_data`), in the current memory context.
pub fn int_list(ints: &[i32]) -> *mut pg_sys::List {
    let mut list: *mut pg_sys::List = std::ptr::null_mut();
    for &v in ints {
        // SAFETY: makeInteger and lappend allocate in the current context.
        list = unsafe { pg_sys::lappend(list, pg_sys::makeInteger(v).cast()) };
    }
    list
}

/// The values of a list of Integer nodes.
///
/// # Safety
/// `list` is NIL or a list of Integer nodes.
pub unsafe fn list_ints(list: *mut pg_sys::List) -> Vec<i32> {
    // SAFETY: this function's contract: list is NIL or a list of Integer nodes.
    unsafe { list_ptrs::<pg_sys::Integer>(list).map(|i| (*i).ival).collect() }
}

/// The values of an integer `List` (T_IntList, such as a ModifyTable's
/// `resultRelations`).
///
/// # Safety
/// `list` is NIL or a valid integer List.
pub unsafe fn int_values(list: *mut pg_sys::List) -> Vec<i32> {
    // SAFETY: this function's contract: list is NIL or a live integer List.
    let len = if list.is_null() { 0 } else { unsafe { (*list).length as usize } };
    // SAFETY: i is below the list's length.
    (0..len).map(|i| unsafe { (*(*list).elements.add(i)).int_value }).collect()
}

/// The attribute numbers of relation `varno` that the expressions read
/// (system attributes negative, 0 for a whole-row reference), ascending.
///
/// # Safety
/// `nodes` are expression trees (or lists of them), or null.
pub unsafe fn attnums(nodes: &[*mut pg_sys::Node], varno: u32) -> Vec<i32> {
    let mut set: *mut pg_sys::Bitmapset = std::ptr::null_mut();
    for &n in nodes {
        // SAFETY: this function's contract: n is an expression tree, a list of them, or null.
        unsafe { pg_sys::pull_varattnos(n, varno, &mut set) };
    }
    let mut out = Vec::new();
    let mut m = -1;
    loop {
        // SAFETY: set is the Bitmapset pull_varattnos built (or null, which bms_next_member
        // accepts).
        m = unsafe { pg_sys::bms_next_member(set, m) };
        if m < 0 {
            return out;
        }
        out.push(m + pg_sys::FirstLowInvalidHeapAttributeNumber);
    }
}

/// A static PostgreSQL method table (raw pointers inside) shared by the
/// single-threaded backend.
pub struct SyncPtr<T>(pub T);
// SAFETY: only the backend's main thread reads these tables (vexec starts no
// thread that touches PostgreSQL state).
unsafe impl<T> Sync for SyncPtr<T> {}

/// Call `func(arg)` when memory context `cxt` is reset or deleted (an ERROR
/// or a cancel ends the query): how executor nodes free their Rust state.
///
/// # Safety
/// `arg` stays valid as long as `cxt`.
pub unsafe fn on_context_reset(
    cxt: pg_sys::MemoryContext,
    func: unsafe extern "C-unwind" fn(*mut std::ffi::c_void),
    arg: *mut std::ffi::c_void,
) {
    // SAFETY: this function's contract: arg stays valid as long as cxt; the callback struct lives
    // in cxt itself.
    unsafe {
        let cb = pg_sys::palloc0(std::mem::size_of::<pg_sys::MemoryContextCallback>())
            as *mut pg_sys::MemoryContextCallback;
        (*cb).func = Some(func);
        (*cb).arg = arg;
        pg_sys::MemoryContextRegisterResetCallback(cxt, cb);
    }
}

/// An EXPLAIN text property.
///
/// # Safety
/// `es` is the ExplainState of a running EXPLAIN.
pub unsafe fn explain_text(es: *mut pg_sys::ExplainState, label: &std::ffi::CStr, value: &str) {
    let v = std::ffi::CString::new(value).unwrap_or_default();
    // SAFETY: es is the running EXPLAIN (caller's contract); the value is copied into the current
    // context.
    unsafe { pg_sys::ExplainPropertyText(label.as_ptr(), pg_sys::pstrdup(v.as_ptr()), es) };
}

/// A varlena copy of `payload` (a 4-byte header, then the bytes) in the
/// current memory context, as a Datum.
///
/// # Safety
/// In a memory context PostgreSQL may palloc in (the backend's main thread).
pub unsafe fn palloc_varlena(payload: &[u8]) -> usize {
    // SAFETY: this function's contract.
    unsafe { palloc_copy(pg_sys::CurrentMemoryContext, &vexec_core::batch::varlena::make_4b(payload)) }
}

/// A copy of `bytes` allocated in `cxt`, as a Datum (a varlena's bytes,
/// header included).
///
/// # Safety
/// `cxt` is a live memory context; on the backend's main thread.
pub unsafe fn palloc_copy(cxt: pg_sys::MemoryContext, bytes: &[u8]) -> usize {
    // SAFETY: this function's contract; the copy is bytes.len() bytes.
    unsafe {
        let p = pg_sys::MemoryContextAlloc(cxt, bytes.len()) as *mut u8;
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len());
        p as usize
    }
}
