//! The PostgreSQL side of kernel evaluation (vexec_core's `Host`), shared
//! by every node that runs kernels.

use vexec_core::batch::{Bitmap, RowIdx};
use vexec_core::expr::Host;

use crate::shim;

/// Detoasting in the current (the batch's) memory context.
pub(crate) struct PgHost;

impl Host for PgHost {
    fn detoast(&mut self, values: &mut [usize], validity: &Bitmap, rows: &[RowIdx]) {
        let (v, b) = (values.as_mut_ptr(), validity.as_bytes().as_ptr());
        // SAFETY: `values` holds a varlena pointer for every valid row of `rows`.
        unsafe { shim::vx_detoast(v, b, rows.len() as i32, rows.as_ptr()) };
    }
}
