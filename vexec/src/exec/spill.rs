//! Temporary files for operators that outgrow `hash_mem` (VecAgg, VecHashJoin).
//!
//! A spill file is a PostgreSQL BufFile (so `temp_tablespaces`,
//! `temp_file_limit` and `log_temp_files` apply) holding frames: a frame is
//! the row count, the byte length and the rows as `vexec_core::spill`
//! encodes them. Rows are appended in input order and read back in the same
//! order, which keeps every group's rows in the order PostgreSQL would feed
//! them.
//!
//! Cleanup: a file is closed by [`SpillFile::close`] when the node ends
//! normally. When the query fails, the transaction's resource owner has
//! already closed the file before the node's Rust state is dropped, so
//! dropping a `SpillFile` never touches the file.

use pgrx::pg_sys;
use vexec_core::batch::{Column, PhysType, RowIdx};
use vexec_core::spill::{decode_rows, encode_rows, SpilledBatch};

pub struct SpillFile {
    file: *mut pg_sys::BufFile,
    /// Rows written (for EXPLAIN ANALYZE and to skip empty partitions).
    pub rows: u64,
    pub bytes: u64,
}

impl SpillFile {
    /// A new temporary file, allocated in the current memory context (the
    /// caller's query context).
    pub unsafe fn create() -> SpillFile {
        SpillFile { file: unsafe { pg_sys::BufFileCreateTemp(false) }, rows: 0, bytes: 0 }
    }

    /// Append rows `rows` of `cols` as one frame (`fixed`: the lengths of
    /// fixed-length by-reference columns, see [`fixed_lengths`]).
    ///
    /// # Safety
    /// As `vexec_core::spill::encode_rows`.
    pub unsafe fn write(
        &mut self,
        cols: &[&Column],
        fixed: &[Option<usize>],
        rows: &[RowIdx],
        scratch: &mut Vec<u8>,
    ) {
        if rows.is_empty() {
            return;
        }
        scratch.clear();
        scratch.extend_from_slice(&(rows.len() as u32).to_le_bytes());
        scratch.extend_from_slice(&[0; 4]);
        unsafe { encode_rows(cols, fixed, rows, scratch) };
        let body = (scratch.len() - 8) as u32;
        scratch[4..8].copy_from_slice(&body.to_le_bytes());
        unsafe { pg_sys::BufFileWrite(self.file, scratch.as_ptr().cast(), scratch.len()) };
        self.rows += rows.len() as u64;
        self.bytes += scratch.len() as u64;
    }

    /// Position at the first frame, for reading.
    pub unsafe fn rewind(&mut self) {
        if unsafe { pg_sys::BufFileSeek(self.file, 0, 0, libc_seek_set()) } != 0 {
            pgrx::error!("could not rewind a vexec temporary file");
        }
    }

    /// The next frame's rows (None at the end), as columns of `types`.
    pub unsafe fn read(
        &mut self,
        types: &[PhysType],
        fixed: &[Option<usize>],
        buf: &mut Vec<u8>,
    ) -> Option<SpilledBatch> {
        let mut head = [0u8; 8];
        let n = unsafe { pg_sys::BufFileReadMaybeEOF(self.file, head.as_mut_ptr().cast(), 8, true) };
        if n == 0 {
            return None;
        }
        if n != 8 {
            corrupt();
        }
        let rows = u32::from_le_bytes(head[0..4].try_into().unwrap()) as usize;
        let len = u32::from_le_bytes(head[4..8].try_into().unwrap()) as usize;
        buf.clear();
        buf.resize(len, 0);
        unsafe { pg_sys::BufFileReadExact(self.file, buf.as_mut_ptr().cast(), len) };
        let mut pos = 0;
        match decode_rows(types, fixed, buf, &mut pos, rows) {
            Ok(b) if b.len == rows && pos == len => Some(b),
            _ => corrupt(),
        }
    }

    pub unsafe fn close(self) {
        unsafe { pg_sys::BufFileClose(self.file) };
    }
}

/// The spill format's fixed lengths of columns whose typlens are `by_ref`
/// (`ChildInput::by_ref`: None for by-value, -1 for varlenas).
pub fn fixed_lengths(by_ref: &[Option<i16>]) -> Vec<Option<usize>> {
    by_ref.iter().map(|t| t.filter(|&len| len > 0).map(|len| len as usize)).collect()
}

fn corrupt() -> ! {
    pgrx::ereport!(ERROR, pgrx::PgSqlErrorCode::ERRCODE_DATA_CORRUPTED, "a vexec temporary file is damaged");
    #[allow(unreachable_code)]
    loop {}
}

const fn libc_seek_set() -> i32 {
    0 // SEEK_SET
}
