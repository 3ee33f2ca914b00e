//! The PostgreSQL side of kernel evaluation (vexec_core's `Host`), shared
//! by every node that runs kernels.

use pgrx::pg_sys;
use vexec_core::batch::{Bitmap, RowIdx};
use vexec_core::expr::{FuncRef, Host, KernelError};

use crate::shim;

/// The fmgr lookups of the pack functions a node calls (`VExpr::Call`),
/// made on first use in the memory context the cache was created in (the
/// query's), where the functions' own caches (`fn_extra`) live too.
pub(crate) struct FmgrCache {
    mcxt: pg_sys::MemoryContext,
    /// Boxed: a function may keep pointers to its FmgrInfo in `fn_extra`.
    /// With each, whether its result is by value (then each call runs in
    /// `per_row`, reset after it).
    infos: Vec<(FuncRef, Box<pg_sys::FmgrInfo>, bool)>,
    /// A child of `mcxt`, made on first use.
    per_row: pg_sys::MemoryContext,
}

impl FmgrCache {
    /// A cache whose lookups live in the current memory context.
    pub(crate) fn new() -> FmgrCache {
        FmgrCache {
            // SAFETY: reads the backend's current memory context on its main thread.
            mcxt: unsafe { pg_sys::CurrentMemoryContext },
            infos: Vec::new(),
            per_row: std::ptr::null_mut(),
        }
    }

    /// The function's FmgrInfo, and the context to run each call in (null:
    /// the current one, for results by reference, which must outlive it).
    fn get(&mut self, func: FuncRef) -> (*mut pg_sys::FmgrInfo, pg_sys::MemoryContext) {
        let i = match self.infos.iter().position(|(f, _, _)| f.oid == func.oid) {
            Some(i) => i,
            None => {
                // SAFETY: FmgrInfo is plain C data, filled by fmgr_info_cxt below.
                let mut info: Box<pg_sys::FmgrInfo> = Box::new(unsafe { std::mem::zeroed() });
                // SAFETY: catalog lookups of a bound pack function (a C function of an installed
                // extension) on the main thread; mcxt is the query's context, which outlives the
                // node and its child.
                let by_value = unsafe {
                    pg_sys::fmgr_info_cxt(func.oid.into(), &mut *info, self.mcxt);
                    if self.per_row.is_null() {
                        self.per_row = pg_sys::AllocSetContextCreateInternal(
                            self.mcxt,
                            c"vexec pack calls".as_ptr(),
                            pg_sys::ALLOCSET_DEFAULT_MINSIZE as usize,
                            pg_sys::ALLOCSET_DEFAULT_INITSIZE as usize,
                            pg_sys::ALLOCSET_DEFAULT_MAXSIZE as usize,
                        );
                    }
                    pg_sys::get_typbyval(pg_sys::get_func_rettype(func.oid.into()))
                };
                self.infos.push((func, info, by_value));
                self.infos.len() - 1
            }
        };
        let (_, info, by_value) = &mut self.infos[i];
        (&mut **info, if *by_value { self.per_row } else { std::ptr::null_mut() })
    }
}

/// Detoasting in the current (the batch's) memory context, pack functions
/// through the node's fmgr lookups.
pub(crate) struct PgHost<'a> {
    pub(crate) fmgr: &'a mut FmgrCache,
}

impl Host for PgHost<'_> {
    fn alloc_varlena(&mut self, bytes: &[u8]) -> usize {
        // SAFETY: the current (the batch's) memory context, on the backend's main thread.
        unsafe { crate::pgutil::palloc_copy(pg_sys::CurrentMemoryContext, bytes) }
    }

    fn detoast(&mut self, values: &mut [usize], validity: &Bitmap, rows: &[RowIdx]) {
        let (v, b) = (values.as_mut_ptr(), validity.as_bytes().as_ptr());
        // SAFETY: `values` holds a varlena pointer for every valid row of `rows`.
        unsafe { shim::vx_detoast(v, b, rows.len() as i32, rows.as_ptr()) };
    }

    fn call(
        &mut self,
        func: FuncRef,
        args: &[Vec<usize>],
        rows: &[RowIdx],
        out: &mut [Option<usize>],
    ) -> Result<(), KernelError> {
        assert!(
            args.len() <= shim::CALL_MAX_ARGS,
            "pack calls take at most {} arguments",
            shim::CALL_MAX_ARGS
        );
        let (flinfo, per_row) = self.fmgr.get(func);
        let ptrs: Vec<*const usize> = args.iter().map(|a| a.as_ptr()).collect();
        let n = out.len();
        let (mut values, mut nulls) = (vec![0usize; n], vec![false; n]);
        // SAFETY: every argument vector holds a Datum of the function's argument type for each row
        // of `rows` (the compiler checked the types; the evaluator passes only rows whose arguments
        // are non-NULL), values/nulls have a slot per row of the batch.
        let failed = unsafe {
            shim::vx_call_rows(
                flinfo,
                func.collation.into(),
                args.len() as i32,
                ptrs.as_ptr(),
                rows.len() as i32,
                rows.as_ptr(),
                values.as_mut_ptr(),
                nulls.as_mut_ptr(),
                per_row,
            )
        };
        if failed >= 0 {
            return Err(KernelError { row: rows[failed as usize] });
        }
        for &r in rows {
            out[r as usize] = (!nulls[r as usize]).then_some(values[r as usize]);
        }
        Ok(())
    }
}
