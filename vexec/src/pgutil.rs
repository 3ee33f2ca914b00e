//! Small helpers over PostgreSQL's C data structures.

use pgrx::pg_sys;

/// The pointers of a `List` of pointers (NIL gives none).
///
/// # Safety
/// `list` is NIL or a valid pointer `List` whose cells point to `T`s, and it
/// is not changed while the iterator is in use.
pub unsafe fn list_ptrs<T>(list: *mut pg_sys::List) -> impl Iterator<Item = *mut T> {
    let len = if list.is_null() { 0 } else { unsafe { (*list).length as usize } };
    (0..len).map(move |i| unsafe { (*(*list).elements.add(i)).ptr_value as *mut T })
}
